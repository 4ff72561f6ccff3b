"""A read-only SQL tool on SQLAlchemy whose results flow through the rows view.

The tool runs one query and returns `(content, artifact)`:

- `content`: the rows as a JSON array of objects, one row per line (types kept: numbers,
  `null`, strings; dates as ISO text). Within the per-result budget the model sees it as it
  is; beyond it the result layer recognises rows, stores the text as it is and shows the rows
  view (count, column summaries, first page, next-page reference);
- `artifact`: `{"columns", "row_count", "truncated", "query", "elapsed_ms"}`.

Writes are refused twice:

1. **the connection is read-only**: SQLite files are opened with `mode=ro` (and every SQLite
   connection runs `PRAGMA query_only = ON`); PostgreSQL transactions are started
   `READ ONLY`;
2. **the statement is checked** before it runs: one statement, starting with `SELECT`,
   `WITH`, `VALUES`, `EXPLAIN`, `SHOW` or `TABLE`, with no data- or schema-changing keyword
   outside string literals and comments.

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
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import BaseModel, Field
from sqlalchemy import create_engine, event, text
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.engine import Connection, Engine, make_url

from langchain_result_layer.core.jsonable import to_jsonable
from langchain_result_layer.errors import ResultLayerError

__all__ = [
    "ReadOnlySQLDatabase",
    "ReadOnlyViolationError",
    "SQLQueryResult",
    "check_read_only",
    "create_sql_query_tool",
]

DEFAULT_MAX_ROWS = 10_000
"""Rows fetched at most per query (the artifact says when a result was cut)."""

_ALLOWED_FIRST = {"SELECT", "WITH", "VALUES", "EXPLAIN", "SHOW", "TABLE"}
_FORBIDDEN = {
    "INSERT",
    "UPDATE",
    "DELETE",
    "MERGE",
    "UPSERT",
    "REPLACE",
    "CREATE",
    "DROP",
    "ALTER",
    "TRUNCATE",
    "GRANT",
    "REVOKE",
    "ATTACH",
    "DETACH",
    "VACUUM",
    "REINDEX",
    "ANALYZE",
    "COPY",
    "CALL",
    "DO",
    "EXECUTE",
    "EXEC",
    "LOCK",
    "COMMENT",
    "SET",
    "RESET",
    "PRAGMA",
    "INTO",
    "REFRESH",
    "CLUSTER",
    "DISCARD",
    "LISTEN",
    "NOTIFY",
    "LOAD",
    "SECURITY",
    "PREPARE",
    "DEALLOCATE",
    "BEGIN",
    "COMMIT",
    "ROLLBACK",
    "SAVEPOINT",
    "RELEASE",
    "IMPORT",
}
_WORD_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")
_STRIP_RE = re.compile(
    r"""
    --[^\n]*                      # line comment
    | /\*.*?\*/                   # block comment
    | '(?:[^']|'')*'              # string literal
    | "(?:[^"]|"")*"              # quoted identifier
    | `[^`]*`                     # MySQL/SQLite quoted identifier
    | \[[^\]]*\]                  # SQLite/SQL Server quoted identifier
    | \$(\w*)\$.*?\$\1\$          # PostgreSQL dollar quoting
    """,
    re.VERBOSE | re.DOTALL,
)


class ReadOnlyViolationError(ResultLayerError, ValueError):
    """A query would change data or schema, or holds more than one statement.

    Example:
        ```python
        try:
            check_read_only("DELETE FROM t")
        except ReadOnlyViolationError as exc:
            print(exc)
        ```
    """


def check_read_only(query: str) -> str:
    """Check that `query` is one read-only statement; return it without a final `;`.

    Args:
        query: The SQL.

    Returns:
        The statement, stripped.

    Raises:
        ReadOnlyViolationError: With a message that says what was refused.

    Example:
        ```python
        assert check_read_only("SELECT 1;") == "SELECT 1"
        ```
    """
    if not isinstance(query, str) or not query.strip():
        msg = "the query is empty"
        raise ReadOnlyViolationError(msg)
    statement = query.strip()
    while statement.endswith(";"):
        statement = statement[:-1].rstrip()
    bare = _STRIP_RE.sub(" ", statement)
    if "'" in bare or "/*" in bare:
        msg = "the query has an unterminated string literal or comment"
        raise ReadOnlyViolationError(msg)
    if ";" in bare:
        msg = "only one statement per query is allowed"
        raise ReadOnlyViolationError(msg)
    words = [w.upper() for w in _WORD_RE.findall(bare)]
    if not words or words[0] not in _ALLOWED_FIRST:
        first = words[0] if words else "?"
        msg = (
            f"only read-only queries are allowed (SELECT, WITH, VALUES, EXPLAIN, SHOW); got {first}"
        )
        raise ReadOnlyViolationError(msg)
    bad = sorted({w for w in words if w in _FORBIDDEN})
    if words[0] == "EXPLAIN" and "ANALYZE" in bad:
        # EXPLAIN ANALYZE runs the statement: allowed only for a read-only one.
        bad.remove("ANALYZE")
    if bad:
        msg = f"the query uses {', '.join(bad)}, which is not allowed in a read-only query"
        raise ReadOnlyViolationError(msg)
    return statement


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


def _read_only_url(url: str) -> tuple[str, dict[str, Any]]:
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return url, {}
    database = parsed.database or ""
    if database in ("", ":memory:") or database.startswith("file:"):
        return url, {}
    path = Path(database).expanduser().resolve()
    ro = f"sqlite:///file:{path.as_posix()}?mode=ro&uri=true"
    return ro, {}


class ReadOnlySQLDatabase:
    """Runs read-only queries on a SQLAlchemy engine.

    Args:
        db: A database URL (`sqlite:///path.db`, `postgresql+psycopg://...`) or an `Engine`.
            SQLite files given by URL are opened with `mode=ro`.
        max_rows: Most rows fetched per query.
        statement_timeout_ms: PostgreSQL `statement_timeout` for each query (`None`: none).

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
    ) -> None:
        if max_rows < 1:
            msg = f"max_rows must be positive, got {max_rows}"
            raise ValueError(msg)
        if isinstance(db, Engine):
            self.engine = db
        else:
            url, kwargs = _read_only_url(db)
            self.engine = create_engine(url, **kwargs)
        self.max_rows = max_rows
        self.statement_timeout_ms = statement_timeout_ms
        self.dialect = self.engine.dialect.name
        if self.dialect == "sqlite":
            event.listen(self.engine, "connect", _sqlite_query_only)

    @contextmanager
    def _connection(self) -> Iterator[Connection]:
        with self.engine.connect() as conn:
            if self.dialect == "postgresql":
                conn.exec_driver_sql("SET TRANSACTION READ ONLY")
                if self.statement_timeout_ms is not None:
                    conn.exec_driver_sql(
                        f"SET LOCAL statement_timeout = {int(self.statement_timeout_ms)}"
                    )
            elif self.dialect == "sqlite":
                conn.exec_driver_sql("PRAGMA query_only = ON")
            try:
                yield conn
            finally:
                conn.rollback()

    def run(self, query: str) -> SQLQueryResult:
        """Run one read-only query.

        Args:
            query: The SQL (one read-only statement).

        Returns:
            Columns and up to `max_rows` rows.

        Raises:
            ReadOnlyViolationError: When the statement is not read-only.
            sqlalchemy.exc.SQLAlchemyError: When the database refuses the query.
        """
        statement = check_read_only(query)
        start = time.perf_counter()
        with self._connection() as conn:
            result = conn.execute(text(statement))
            if not result.returns_rows:
                return SQLQueryResult([], [], False, (time.perf_counter() - start) * 1000)
            columns = [str(c) for c in result.keys()]  # noqa: SIM118 - a Result, not a dict
            fetched = result.fetchmany(self.max_rows + 1)
            truncated = len(fetched) > self.max_rows
            rows = [
                {col: to_jsonable(value) for col, value in zip(columns, row, strict=False)}
                for row in fetched[: self.max_rows]
            ]
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
    query: str = Field(description="One read-only SQL statement (SELECT/WITH/VALUES/EXPLAIN).")


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
        description = (
            f"Run one read-only SQL query ({database.dialect}) and get the rows as JSON. "
            "Only SELECT/WITH/VALUES/EXPLAIN are allowed."
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
    detail = str(exc).split("\n", 1)[0][:500]
    return ToolException(f"Query failed: {type(exc).__name__}: {detail}")
