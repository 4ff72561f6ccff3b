"""What the read-only SQL tool refuses before the database sees a query, and why.

The database decides what a query *is* (one statement, a query and not a command, no writes):
see `_sql_sessions`. This module holds the few checks the database cannot make for us:

- built-in and contrib PostgreSQL functions whose effects escape the read-only transaction
  (signalling other sessions, session-level advisory locks, large objects, server files,
  replication, settings, index and heap maintenance that writes pages a read-only
  transaction does not protect, transaction ids, and functions that run a query given as
  text, so that a refused name spelt in pieces (`'pg_termi' || 'nate_backend(1)'`) never
  reaches the server as SQL). They are refused by **name
  anywhere in the text**, case-insensitively, so quoting (`"pg_terminate_backend"`), schema
  qualification and comments cannot hide them; Unicode-escaped identifiers (`U&"..."`), the
  one PostgreSQL spelling that can write a name without its letters, are refused too;
- SQLite functions refused through the connection's authorizer (the database names each
  function it is about to call);
- empty queries, NUL characters and queries over `MAX_QUERY_CHARS`.

Functions that users or extensions define are the database role's responsibility: connect as
a role that can only read what the model may read (see docs/security.md).

Example:
    ```python
    from langchain_result_layer.tools._sql_policy import refused_function

    assert refused_function("SELECT PG_Terminate_Backend(42)") == "pg_terminate_backend"
    assert refused_function("SELECT 1") is None
    ```
"""

from __future__ import annotations

from langchain_result_layer.errors import ReadOnlyViolationError

__all__ = [
    "MAX_QUERY_CHARS",
    "POSTGRES_REFUSED_FUNCTIONS",
    "POSTGRES_REFUSED_PREFIXES",
    "SQLITE_REFUSED_FUNCTIONS",
    "check_read_only",
    "refused_function",
]

MAX_QUERY_CHARS = 100_000
"""Longest query the tool accepts (a model that writes more is not writing a query)."""

POSTGRES_REFUSED_PREFIXES: tuple[str, ...] = (
    "pg_advisory_",  # session-level advisory locks survive ROLLBACK
    "pg_try_advisory_",
    "pg_read_",  # pg_read_file, pg_read_binary_file: server files
    "pg_ls_",  # server directories
    "pg_file_",  # adminpack: writes server files
    "dblink",  # runs SQL on another, writable connection
    "query_to_xml",  # query_to_xml* run a query given as text
    "cursor_to_xml",
    "pg_stat_reset",
    "pg_create_",  # restore points, replication slots
    "pg_drop_replication",
    "pg_replication_",
    "pg_logical_",
    "pg_copy_",
    "pg_wal_replay_",
    "pg_backup_",
    "brin_summarize",  # BRIN maintenance writes index pages, read-only transaction or not
    "brin_desummarize",
    "heap_force_",  # pg_surgery: kills or freezes heap tuples in place
    "crosstab",  # tablefunc: runs a query given as text
    "binary_upgrade_",
)
"""PostgreSQL function-name prefixes refused anywhere in a query."""

POSTGRES_REFUSED_FUNCTIONS: tuple[str, ...] = (
    "pg_terminate_backend",
    "pg_cancel_backend",
    "pg_reload_conf",
    "pg_rotate_logfile",
    "pg_promote",
    "pg_log_backend_memory_contexts",
    "pg_switch_wal",
    "pg_start_backup",
    "pg_stop_backup",
    "pg_notify",
    "pg_import_system_collations",
    "pg_prewarm",
    "pg_stat_file",
    "set_config",  # can switch the role or the transaction mode mid-statement
    "ts_stat",  # runs a query given as text
    "ts_rewrite",  # runs a query given as text
    "connectby",  # tablefunc: builds and runs a query from text arguments
    "xpath_table",  # xml2: builds and runs a query from text arguments
    "gin_clean_pending_list",  # writes index pages
    "pg_truncate_visibility_map",  # pg_visibility: writes the visibility map
    "pg_stat_statements_reset",
    "txid_current",  # assigns a transaction id (a commit record) in a read-only transaction
    "pg_current_xact_id",
    "pg_nextoid",  # consumes an OID
    # large objects: lo_import reads server files, lo_export writes them
    "lo_close",
    "lo_creat",
    "lo_create",
    "lo_export",
    "lo_from_bytea",
    "lo_get",
    "lo_import",
    "lo_lseek",
    "lo_lseek64",
    "lo_open",
    "lo_put",
    "lo_tell",
    "lo_tell64",
    "lo_truncate",
    "lo_truncate64",
    "lo_unlink",
    "loread",
    "lowrite",
)
"""PostgreSQL function names refused anywhere in a query."""

SQLITE_REFUSED_FUNCTIONS: frozenset[str] = frozenset(
    {"load_extension", "fts3_tokenizer", "readfile", "writefile", "edit"}
)
"""SQLite functions the authorizer refuses (lower case)."""


def refused_function(query: str) -> str | None:
    """The first refused PostgreSQL function name that `query` contains, if any.

    The search is over the whole text, case-insensitively, for the name at the start of an
    identifier: a refused name inside a string literal or a quoted identifier is refused too
    (a false refusal is safe; a missed call is not).

    Args:
        query: The SQL.

    Returns:
        The refused name (or prefix followed by `*`), or `None`.

    Example:
        ```python
        assert refused_function('SELECT "pg_advisory_lock"(1)') == "pg_advisory_*"
        ```
    """
    lowered = query.lower()
    for name in POSTGRES_REFUSED_FUNCTIONS:
        if _names(lowered, name, whole=True):
            return name
    for prefix in POSTGRES_REFUSED_PREFIXES:
        if _names(lowered, prefix, whole=False):
            return prefix + "*"
    return None


def _identifier_char(char: str) -> bool:
    # PostgreSQL identifiers: letters (any non-ASCII character too), digits, `_` and `$`.
    return char.isalnum() or char in "_$" or ord(char) >= 0x80


def _names(lowered: str, name: str, *, whole: bool) -> bool:
    """Whether `name` occurs in `lowered` as the start of an identifier (or as a whole one)."""
    start = lowered.find(name)
    while start >= 0:
        before = lowered[start - 1] if start else " "
        end = start + len(name)
        after = lowered[end] if end < len(lowered) else " "
        if not _identifier_char(before) and not (whole and _identifier_char(after)):
            return True
        start = lowered.find(name, start + 1)
    return False


def check_read_only(query: str) -> str:
    """Refuse what the database cannot judge; return the query stripped of a final `;`.

    This is not the read-only guarantee: the database parses the query and refuses more than
    one statement, anything that is not a query and any write (see `ReadOnlySQLDatabase`).
    This check refuses empty and oversized queries, NUL characters, Unicode-escaped
    identifiers and the functions in `POSTGRES_REFUSED_FUNCTIONS` /
    `POSTGRES_REFUSED_PREFIXES`.

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
    if len(query) > MAX_QUERY_CHARS:
        msg = f"the query has {len(query):,} characters; at most {MAX_QUERY_CHARS:,} are allowed"
        raise ReadOnlyViolationError(msg)
    if "\x00" in query:
        msg = "the query contains a NUL character"
        raise ReadOnlyViolationError(msg)
    lowered = query.lower()
    if 'u&"' in lowered:
        msg = 'Unicode-escaped identifiers (U&"...") are not allowed'
        raise ReadOnlyViolationError(msg)
    name = refused_function(query)
    if name is not None:
        msg = (
            f"the query names {name}, a function whose effects escape a read-only "
            "transaction (sessions, locks, files, settings or queries given as text)"
        )
        raise ReadOnlyViolationError(msg)
    statement = query.strip()
    while statement.endswith(";"):
        statement = statement[:-1].rstrip()
    if not statement:
        msg = "the query is empty"
        raise ReadOnlyViolationError(msg)
    return statement
