"""Read-only database sessions for the SQL tool: the database parses, refuses and bounds.

**PostgreSQL** (psycopg 3). Each call:

1. starts a `READ ONLY` transaction with `statement_timeout`, `lock_timeout` and
   `idle_in_transaction_session_timeout` set for it alone (`SET LOCAL`);
2. runs the model's text as `DECLARE <cursor> CURSOR FOR <text>` through the extended
   protocol: the server parses it, refuses more than one statement ("cannot insert multiple
   commands into a prepared statement"), and its grammar accepts only a query after `FOR`
   (`SELECT`, `WITH`, `VALUES`, `TABLE`): no `COMMIT`, `SET`, `DO`, `CALL`, `COPY`, no
   data-modifying `WITH`, no `SELECT ... INTO`; a write anywhere is refused by the read-only
   transaction;
3. fetches at most `limit + 1` rows from that cursor (the server keeps the rest);
4. rolls back and resets the session (`DISCARD ALL`: settings, role, prepared statements,
   cursors, temporary tables, `LISTEN`s, and every advisory lock) before the connection goes
   back to the pool; a connection that cannot be reset is discarded instead.

**SQLite**. The file is opened `mode=ro` (by URL) and every connection runs
`PRAGMA query_only = ON`; Python's driver refuses more than one statement; while the query
is prepared, an authorizer (SQLite's own parser reports each action to it) refuses every
statement that is not a `SELECT` (`PRAGMA`, `ATTACH`, `VACUUM INTO`, transactions,
writes) and the functions in `SQLITE_REFUSED_FUNCTIONS`; a progress handler stops a query
that runs past its deadline.

Example:
    ```python
    from langchain_result_layer.tools._sql_sessions import SessionLimits

    limits = SessionLimits(statement_timeout_ms=5_000, lock_timeout_ms=1_000)
    ```
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Connection

from langchain_result_layer.errors import QueryTimeoutError, ReadOnlyViolationError
from langchain_result_layer.tools._sql_policy import SQLITE_REFUSED_FUNCTIONS

__all__ = [
    "CURSOR_NAME",
    "Fetched",
    "SessionLimits",
    "fetch_postgres",
    "fetch_sqlite",
    "reset_postgres",
    "start_postgres",
    "start_sqlite",
    "translate_postgres_error",
]

CURSOR_NAME = "lrl_read_only_query"
"""Name of the server-side cursor that holds the model's query on PostgreSQL."""

_SQLITE_ACTIONS = {
    1: "CREATE INDEX",
    2: "CREATE TABLE",
    3: "CREATE TEMP INDEX",
    4: "CREATE TEMP TABLE",
    5: "CREATE TEMP TRIGGER",
    6: "CREATE TEMP VIEW",
    7: "CREATE TRIGGER",
    8: "CREATE VIEW",
    9: "DELETE",
    10: "DROP INDEX",
    11: "DROP TABLE",
    12: "DROP TEMP INDEX",
    13: "DROP TEMP TABLE",
    14: "DROP TEMP TRIGGER",
    15: "DROP TEMP VIEW",
    16: "DROP TRIGGER",
    17: "DROP VIEW",
    18: "INSERT",
    19: "PRAGMA",
    20: "READ",
    21: "SELECT",
    22: "TRANSACTION",
    23: "UPDATE",
    24: "ATTACH",
    25: "DETACH",
    26: "ALTER TABLE",
    27: "REINDEX",
    28: "ANALYZE",
    29: "CREATE VIRTUAL TABLE",
    30: "DROP VIRTUAL TABLE",
    31: "FUNCTION",
    32: "SAVEPOINT",
    33: "RECURSIVE",
}
_SQLITE_SELECT = 21
# Actions allowed inside a SELECT: reading columns, calling functions, recursive CTEs, and
# table-valued PRAGMA functions (SQLite offers only side-effect-free pragmas as functions).
_SQLITE_INSIDE_SELECT = frozenset({20, 21, 31, 33, 19})
_SQLITE_FUNCTION = 31
# SQLite reports UPDATEs of the schema table while it sets up a table-valued function for a
# SELECT (no SELECT can write: SQLite has no data-modifying subqueries).
_SQLITE_UPDATE = 23
_SQLITE_SCHEMA_TABLES = frozenset(
    {"sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema"}
)


@dataclass(frozen=True, slots=True)
class SessionLimits:
    """Time limits of one query.

    Example:
        ```python
        limits = SessionLimits(statement_timeout_ms=30_000, lock_timeout_ms=5_000)
        ```
    """

    statement_timeout_ms: int | None = 30_000
    """Longest a query (or one fetch of its rows) may run."""
    lock_timeout_ms: int | None = 5_000
    """Longest a query may wait for a lock (PostgreSQL `lock_timeout`, SQLite busy timeout)."""


@dataclass(frozen=True, slots=True)
class Fetched:
    """Columns and raw rows of one query.

    Example:
        ```python
        fetched = Fetched(columns=["a"], rows=[(1,)])
        ```
    """

    columns: list[str]
    """Column names (empty when the statement returns no rows)."""
    rows: list[tuple[Any, ...]]
    """Up to `limit + 1` rows, as the driver returns them."""


# --------------------------------------------------------------------------- PostgreSQL


def start_postgres(conn: Connection, limits: SessionLimits) -> None:
    """Start a read-only transaction with the limits set for it alone.

    An engine in `AUTOCOMMIT` mode gets a transaction for this connection anyway (the
    server-side cursor and the `READ ONLY`/`SET LOCAL` settings live in one); the pool
    restores the engine's own mode when the connection goes back.

    Args:
        conn: A SQLAlchemy connection on psycopg 3 (no transaction yet).
        limits: The time limits.
    """
    if conn.connection.driver_connection.autocommit:  # type: ignore[union-attr]
        conn.execution_options(isolation_level="READ COMMITTED")
    statements = ["SET TRANSACTION READ ONLY"]
    statements += _postgres_limits(limits)
    for statement in statements:
        conn.exec_driver_sql(statement)


def _postgres_limits(limits: SessionLimits) -> list[str]:
    out = []
    if limits.statement_timeout_ms is not None:
        out.append(f"SET LOCAL statement_timeout = {int(limits.statement_timeout_ms)}")
        idle = max(1_000, 2 * int(limits.statement_timeout_ms))
        out.append(f"SET LOCAL idle_in_transaction_session_timeout = {idle}")
    if limits.lock_timeout_ms is not None:
        out.append(f"SET LOCAL lock_timeout = {int(limits.lock_timeout_ms)}")
    return out


def fetch_postgres(conn: Connection, statement: str, limit: int) -> Fetched:
    """Declare the model's query as a server-side cursor and fetch `limit + 1` rows.

    Args:
        conn: A connection inside `start_postgres`'s transaction.
        statement: The model's query.
        limit: Rows wanted (one more is fetched to tell whether rows were cut).

    Returns:
        Columns and rows.
    """
    driver: Any = conn.connection.driver_connection
    # A named (server-side) cursor: psycopg sends `DECLARE ... CURSOR FOR <statement>` with
    # the extended protocol, so the server refuses a second statement and accepts only a
    # query after FOR.
    cursor = driver.cursor(name=CURSOR_NAME, scrollable=False, withhold=False)
    try:
        cursor.execute(statement)
        columns = [str(col.name) for col in cursor.description or []]
        rows = [tuple(row) for row in cursor.fetchmany(limit + 1)]
    finally:
        cursor.close()
    return Fetched(columns, rows)


def reset_postgres(conn: Connection) -> None:
    """Roll back, then reset the session before the pool hands the connection out again.

    `DISCARD ALL` releases advisory locks, drops temporary tables, closes cursors,
    deallocates prepared statements, resets every setting and the role. A connection that
    cannot be reset is invalidated (closed, never reused).

    Args:
        conn: The connection.
    """
    try:
        conn.rollback()
        driver: Any = conn.connection.driver_connection
        previous = driver.autocommit
        driver.autocommit = True  # DISCARD ALL cannot run inside a transaction block
        try:
            driver.execute("DISCARD ALL")
        finally:
            driver.autocommit = previous
    except Exception:
        conn.invalidate()


def translate_postgres_error(exc: Exception, statement: str, limits: SessionLimits) -> Exception:
    """A clear error for what PostgreSQL refused (the original for anything else).

    Args:
        exc: What psycopg raised.
        statement: The model's query (to tell "not a query" from a typo inside one).
        limits: The limits in force (named in timeout messages).

    Returns:
        `ReadOnlyViolationError`, `QueryTimeoutError`, or `exc` itself.
    """
    import psycopg.errors as pg_errors  # noqa: PLC0415 - psycopg is optional (postgres extra)

    message = str(exc).split("\n", 1)[0]
    if isinstance(exc, pg_errors.ReadOnlySqlTransaction):
        return ReadOnlyViolationError(f"the database refused a write ({message})")
    if isinstance(exc, pg_errors.QueryCanceled):
        return QueryTimeoutError(
            f"the query ran longer than {limits.statement_timeout_ms:,} ms and was stopped"
        )
    if isinstance(exc, pg_errors.LockNotAvailable):
        return QueryTimeoutError(
            f"the query waited longer than {limits.lock_timeout_ms:,} ms for a lock and was stopped"
        )
    if "cannot insert multiple commands" in message:
        return ReadOnlyViolationError("only one statement per query is allowed")
    if "must not contain data-modifying statements" in message:
        return ReadOnlyViolationError(
            "data-modifying statements (INSERT, UPDATE, DELETE, MERGE in WITH) are not allowed"
        )
    if "SELECT ... INTO is not allowed" in message:
        return ReadOnlyViolationError("SELECT ... INTO is not allowed (it creates a table)")
    if isinstance(exc, pg_errors.SyntaxError) and _at_first_word(exc, statement):
        return ReadOnlyViolationError(
            "only one query (SELECT, WITH, VALUES, TABLE) is allowed; "
            f"PostgreSQL reports: {message}"
        )
    return exc


def _at_first_word(exc: Exception, statement: str) -> bool:
    """Whether a syntax error points at the first word of the model's query."""
    position = getattr(getattr(exc, "diag", None), "statement_position", None)
    if not position or not str(position).isdigit():
        return False
    # The error position counts characters of `DECLARE "<name>" NO SCROLL CURSOR FOR <query>`.
    offset = int(position) - 1 - len(f'DECLARE "{CURSOR_NAME}" NO SCROLL CURSOR FOR ')
    return 0 <= offset <= len(statement) and not statement[:offset].strip()


# --------------------------------------------------------------------------- SQLite


def start_sqlite(conn: Connection, limits: SessionLimits) -> None:
    """Make the connection query-only and set its busy timeout.

    Args:
        conn: A SQLAlchemy connection on the standard `sqlite3` driver.
        limits: The limits (`lock_timeout_ms` becomes the busy timeout).
    """
    conn.exec_driver_sql("PRAGMA query_only = ON")
    if limits.lock_timeout_ms is not None:
        conn.exec_driver_sql(f"PRAGMA busy_timeout = {int(limits.lock_timeout_ms)}")


@dataclass(slots=True)
class _SQLiteGuard:
    """The authorizer and progress handler of one query (state lives for that query only)."""

    deadline: float | None
    first: int | None = None
    refused: str | None = None
    timed_out: bool = False

    def authorize(
        self, action: int, arg1: str | None, arg2: str | None, _db: str | None, _t: str | None
    ) -> int:
        if self.first is None:
            self.first = action
        if self.first != _SQLITE_SELECT:
            self._refuse(action, arg1, arg2)
            return sqlite3.SQLITE_DENY
        if action == _SQLITE_FUNCTION and (arg2 or "").lower() in SQLITE_REFUSED_FUNCTIONS:
            self.refused = self.refused or f"the function {arg2}"
            return sqlite3.SQLITE_DENY
        internal = action == _SQLITE_UPDATE and (arg1 or "").lower() in _SQLITE_SCHEMA_TABLES
        if action not in _SQLITE_INSIDE_SELECT and not internal:
            self._refuse(action, arg1, arg2)
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    def _refuse(self, action: int, arg1: str | None, arg2: str | None) -> None:
        if self.refused is not None:
            return
        name = _SQLITE_ACTIONS.get(action, f"action {action}")
        target = arg1 if action in (19, 22, 24, 32) else arg1 or arg2
        self.refused = f"{name} {target}" if target else name

    def progress(self) -> int:
        if self.deadline is not None and time.monotonic() > self.deadline:
            self.timed_out = True
            return 1
        return 0


def fetch_sqlite(conn: Connection, statement: str, limit: int, limits: SessionLimits) -> Fetched:
    """Run the model's query under the authorizer and the deadline; fetch `limit + 1` rows.

    Args:
        conn: A connection after `start_sqlite`.
        statement: The model's query.
        limit: Rows wanted.
        limits: The time limits.

    Returns:
        Columns and rows.

    Raises:
        ReadOnlyViolationError: When SQLite reported an action that is not a query's.
        QueryTimeoutError: When the query ran past its deadline.
    """
    driver: sqlite3.Connection = conn.connection.driver_connection  # type: ignore[assignment]
    # Installing the authorizer expires every prepared statement of the connection, so the
    # query is prepared (and reported to the authorizer) again even if the driver cached it.
    timeout = limits.statement_timeout_ms
    guard = _SQLiteGuard(None if timeout is None else time.monotonic() + timeout / 1000)
    driver.set_authorizer(guard.authorize)
    driver.set_progress_handler(guard.progress, 1_000)
    cursor = driver.cursor()
    try:
        cursor.execute(statement)
        columns = [str(col[0]) for col in cursor.description or []]
        rows = [tuple(row) for row in cursor.fetchmany(limit + 1)] if columns else []
    except (sqlite3.Error, sqlite3.Warning) as exc:
        raise _translate_sqlite_error(exc, guard, limits) from exc
    finally:
        cursor.close()
        driver.set_authorizer(None)
        driver.set_progress_handler(None, 0)
    return Fetched(columns, rows)


def _translate_sqlite_error(
    exc: sqlite3.Error | sqlite3.Warning, guard: _SQLiteGuard, limits: SessionLimits
) -> Exception:
    if guard.timed_out:
        return QueryTimeoutError(
            f"the query ran longer than {limits.statement_timeout_ms:,} ms and was stopped"
        )
    if guard.refused is not None:
        return ReadOnlyViolationError(
            "only one read-only query (SELECT, WITH, VALUES, EXPLAIN) is allowed; "
            f"got {guard.refused}"
        )
    if "one statement at a time" in str(exc):
        return ReadOnlyViolationError("only one statement per query is allowed")
    return exc
