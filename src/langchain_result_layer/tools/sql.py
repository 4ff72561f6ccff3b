"""A read-only SQL tool on SQLAlchemy whose results flow through the rows view.

The tool runs one query and returns `(content, artifact)`:

- `content`: the rows as a JSON array of objects, one row per line (types kept: numbers,
  `null`, strings; dates as ISO text). Within the per-result budget the model sees it as it
  is; beyond it the result layer recognises rows, stores the text as it is and shows the rows
  view (count, column summaries, first page, next-page reference);
- `artifact`: `{"columns", "row_count", "truncated", "query", "elapsed_ms"}`.

The tool is read-only by construction, not by keyword filtering: the database parses the
query and refuses anything but one read-only query (see `_sql_sessions`):

- **PostgreSQL** (psycopg 3): the query runs as a server-side cursor
  (`DECLARE ... CURSOR FOR <query>`, extended protocol: one statement, a query only) in a
  `READ ONLY` transaction with a statement timeout and a lock timeout; the session is reset
  (`DISCARD ALL`, which also releases advisory locks) before the pooled connection is reused;
  built-in functions whose effects escape the transaction (`pg_terminate_backend`, advisory
  locks, large objects, server files, `set_config`, ...) are refused by name;
- **SQLite**: files are opened `mode=ro`, connections run `PRAGMA query_only = ON`, and an
  authorizer refuses every statement but a `SELECT` (SQLite reports each action it is about
  to take while it prepares the query); a progress handler enforces the statement timeout.

Connect as a role that can only read what the model may read: functions that users and
extensions define are that role's responsibility (docs/security.md).

Example:
    ```python
    from langchain_result_layer.tools.sql import create_sql_query_tool

    tool = create_sql_query_tool("sqlite:///chinook.sqlite")
    message = tool.invoke({"type": "tool_call", "id": "1", "name": tool.name,
                           "args": {"query": "SELECT * FROM Artist"}})
    ```
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import BaseModel, Field
from sqlalchemy import create_engine, event
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.engine import Connection, Engine, make_url

from langchain_result_layer.core.jsonable import to_jsonable
from langchain_result_layer.errors import (
    DatabaseUnreachableError,
    QueryTimeoutError,
    ReadOnlyViolationError,
)
from langchain_result_layer.tools._sql_policy import check_read_only
from langchain_result_layer.tools._sql_sessions import (
    Fetched,
    SessionLimits,
    fetch_postgres,
    fetch_sqlite,
    reset_postgres,
    start_postgres,
    start_sqlite,
    translate_postgres_error,
)

__all__ = [
    "DatabaseUnreachableError",
    "QueryTimeoutError",
    "ReadOnlySQLDatabase",
    "ReadOnlyViolationError",
    "SQLQueryResult",
    "check_read_only",
    "create_sql_query_tool",
]

DEFAULT_MAX_ROWS = 10_000
"""Rows fetched at most per query (the artifact says when a result was cut)."""

_CONNECT_TIMEOUT_S = 10


@dataclass(frozen=True, slots=True)
class SQLQueryResult:
    """Rows of one query.

    Attributes:
        columns: Column names.
        rows: Rows as JSON-ready dicts (in column order).
        truncated: Whether more rows existed than were fetched.
        elapsed_ms: Time to run the query and fetch the rows.

    Example:
        ```python
        result = ReadOnlySQLDatabase("sqlite:///chinook.sqlite").run("SELECT 1 AS one")
        assert result.rows == [{"one": 1}]
        ```
    """

    columns: list[str]
    rows: list[dict[str, Any]]
    truncated: bool
    elapsed_ms: float

    def content(self) -> str:
        """The rows as a JSON array of objects, one row per line.

        Returns:
            JSON text (`[]` when there are no rows).
        """
        if not self.rows:
            return "[]"
        body = ",\n".join(json.dumps(row, ensure_ascii=False) for row in self.rows)
        return f"[\n{body}\n]"

    def artifact(self, query: str) -> dict[str, Any]:
        """The tool's artifact.

        Args:
            query: The statement that ran.

        Returns:
            Columns, row count, whether rows were cut, the query and the time it took.
        """
        return {
            "columns": list(self.columns),
            "row_count": len(self.rows),
            "truncated": self.truncated,
            "query": query,
            "elapsed_ms": round(self.elapsed_ms, 3),
        }


def _engine_for(url: str, limits: SessionLimits) -> Engine:
    """An engine for `url`: SQLite files opened `mode=ro`; PostgreSQL on psycopg 3."""
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend == "postgresql":
        options = "-c default_transaction_read_only=on"
        if limits.statement_timeout_ms is not None:
            options += f" -c statement_timeout={int(limits.statement_timeout_ms)}"
        return create_engine(
            parsed.set(drivername="postgresql+psycopg"),
            connect_args={"connect_timeout": _CONNECT_TIMEOUT_S, "options": options},
            pool_pre_ping=True,
        )
    if backend != "sqlite":
        return create_engine(parsed)
    database = parsed.database or ""
    if database in ("", ":memory:") or database.startswith("file:"):
        return create_engine(parsed)
    path = Path(database).expanduser().resolve()
    return create_engine(f"sqlite:///file:{path.as_posix()}?mode=ro&uri=true")


class ReadOnlySQLDatabase:
    """Runs read-only queries on a SQLAlchemy engine (PostgreSQL on psycopg 3, or SQLite).

    Args:
        db: A database URL (`sqlite:///path.db`, `postgresql+psycopg://...`; a plain
            `postgresql://` URL is run on psycopg 3) or an `Engine`. SQLite files given by URL
            are opened with `mode=ro`; PostgreSQL engines made here connect with
            `default_transaction_read_only=on` and a 10 s connect timeout.
        max_rows: Most rows fetched per query.
        statement_timeout_ms: Longest a query may run (PostgreSQL `statement_timeout`;
            SQLite: a progress handler). `None`: no limit.
        lock_timeout_ms: Longest a query may wait for a lock (PostgreSQL `lock_timeout`,
            SQLite busy timeout). `None`: no limit.

    Raises:
        ValueError: For a database other than PostgreSQL on psycopg 3 or SQLite (their
            drivers are what refuses a second statement).

    Example:
        ```python
        db = ReadOnlySQLDatabase("sqlite:///chinook.sqlite")
        result = db.run("SELECT Name FROM Artist LIMIT 3")
        ```
    """

    def __init__(
        self,
        db: str | Engine,
        *,
        max_rows: int = DEFAULT_MAX_ROWS,
        statement_timeout_ms: int | None = 30_000,
        lock_timeout_ms: int | None = 5_000,
    ) -> None:
        if max_rows < 1:
            msg = f"max_rows must be positive, got {max_rows}"
            raise ValueError(msg)
        self.limits = SessionLimits(
            statement_timeout_ms=statement_timeout_ms, lock_timeout_ms=lock_timeout_ms
        )
        self.engine = db if isinstance(db, Engine) else _engine_for(db, self.limits)
        self.max_rows = max_rows
        self.dialect = self.engine.dialect.name
        driver = self.engine.dialect.driver
        if (self.dialect, driver) not in (("postgresql", "psycopg"), ("sqlite", "pysqlite")):
            msg = (
                "the read-only SQL tool runs on PostgreSQL with psycopg 3 "
                "(postgresql+psycopg://) or on SQLite; got "
                f"{self.dialect}+{driver}"
            )
            raise ValueError(msg)
        if self.dialect == "sqlite":
            event.listen(self.engine, "connect", _sqlite_query_only)

    @property
    def statement_timeout_ms(self) -> int | None:
        """The statement timeout in milliseconds (`None`: none)."""
        return self.limits.statement_timeout_ms

    @contextmanager
    def _connection(self) -> Iterator[Connection]:
        """A connection in a read-only session; reset (PostgreSQL) when it goes back."""
        try:
            conn = self.engine.connect()
        except Exception as exc:
            msg = "the database could not be reached (no connection was made)"
            raise DatabaseUnreachableError(msg) from exc
        with conn:
            if self.dialect == "postgresql":
                try:
                    start_postgres(conn, self.limits)
                    yield conn
                finally:
                    reset_postgres(conn)
            else:
                start_sqlite(conn, self.limits)
                try:
                    yield conn
                finally:
                    conn.rollback()

    def _fetch(self, statement: str) -> Fetched:
        with self._connection() as conn:
            if self.dialect == "sqlite":
                return fetch_sqlite(conn, statement, self.max_rows, self.limits)
            try:
                return fetch_postgres(conn, statement, self.max_rows)
            except Exception as exc:
                translated = translate_postgres_error(exc, statement, self.limits)
                if translated is exc:
                    raise
                raise translated from exc

    def run(self, query: str) -> SQLQueryResult:
        """Run one read-only query.

        Args:
            query: The SQL (one read-only query).

        Returns:
            Columns and up to `max_rows` rows.

        Raises:
            ReadOnlyViolationError: When the database (or `check_read_only`) refuses the query
                as not one read-only query.
            QueryTimeoutError: When the query ran past its statement or lock timeout.
            DatabaseUnreachableError: When no connection could be made.
            Exception: What the driver raises for any other database error.
        """
        statement = check_read_only(query)
        start = time.perf_counter()
        fetched = self._fetch(statement)
        columns = fetched.columns
        rows = [
            {col: to_jsonable(value) for col, value in zip(columns, row, strict=False)}
            for row in fetched.rows[: self.max_rows]
        ]
        truncated = len(fetched.rows) > self.max_rows
        return SQLQueryResult(columns, rows, truncated, (time.perf_counter() - start) * 1000)

    async def arun(self, query: str) -> SQLQueryResult:
        """Async twin of `run` (the query runs in a worker thread).

        Args:
            query: The SQL.

        Returns:
            Columns and rows.
        """
        check_read_only(query)
        return await asyncio.to_thread(self.run, query)

    def table_names(self) -> list[str]:
        """Tables of the database (for the tool description).

        Returns:
            Table names.
        """
        return sorted(sa_inspect(self.engine).get_table_names())


def _sqlite_query_only(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA query_only = ON")
    finally:
        cursor.close()


class _QueryArgs(BaseModel):
    query: str = Field(description="One read-only SQL query (SELECT, WITH, VALUES).")


def create_sql_query_tool(
    db: str | Engine | ReadOnlySQLDatabase,
    *,
    name: str = "sql_query",
    description: str | None = None,
    max_rows: int = DEFAULT_MAX_ROWS,
    list_tables: bool = True,
) -> BaseTool:
    """A LangChain tool that runs read-only SQL and returns rows with an artifact.

    Errors (a refused statement, a database error) become a `ToolMessage` with
    `status="error"` whose text says what went wrong, so the model can fix its query.

    Args:
        db: A database URL, an `Engine`, or a `ReadOnlySQLDatabase`.
        name: The tool's name.
        description: The tool's description (a default lists the tables).
        max_rows: Most rows fetched per query.
        list_tables: Name the tables in the default description.

    Returns:
        A `StructuredTool` with `response_format="content_and_artifact"`.

    Example:
        ```python
        tool = create_sql_query_tool("sqlite:///chinook.sqlite", name="run_sql")
        tools = layer.wrap_tools([tool]) + [layer.fetch_tool]
        ```
    """
    database = (
        db if isinstance(db, ReadOnlySQLDatabase) else ReadOnlySQLDatabase(db, max_rows=max_rows)
    )
    if description is None:
        allowed = (
            "SELECT, WITH, VALUES, TABLE"
            if database.dialect == "postgresql"
            else "SELECT, WITH, VALUES, EXPLAIN"
        )
        description = (
            f"Run one read-only SQL query ({database.dialect}) and get the rows as JSON. "
            f"Only one query per call: {allowed}."
        )
        if list_tables:
            try:
                tables = database.table_names()
            except Exception:
                tables = []
            if tables:
                description += " Tables: " + ", ".join(tables[:100]) + "."

    def run(query: str) -> tuple[str, dict[str, Any]]:
        try:
            result = database.run(query)
        except Exception as exc:
            raise _tool_error(exc) from exc
        return result.content(), result.artifact(query)

    async def arun(query: str) -> tuple[str, dict[str, Any]]:
        try:
            result = await database.arun(query)
        except Exception as exc:
            raise _tool_error(exc) from exc
        return result.content(), result.artifact(query)

    return StructuredTool.from_function(
        func=run,
        coroutine=arun,
        name=name,
        description=description,
        args_schema=_QueryArgs,
        response_format="content_and_artifact",
        handle_tool_error=True,
    )


def _tool_error(exc: Exception) -> ToolException:
    if isinstance(exc, ReadOnlyViolationError):
        return ToolException(f"Refused: {exc}.")
    if isinstance(exc, (QueryTimeoutError, DatabaseUnreachableError)):
        return ToolException(f"Query failed: {exc}.")
    detail = str(exc).split("\n", 1)[0][:500]
    return ToolException(f"Query failed: {type(exc).__name__}: {detail}")
