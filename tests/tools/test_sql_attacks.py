"""Attacks on the read-only SQL tool against real PostgreSQL and real SQLite.

Each attack is sent the way a model would send it (a tool call). Whatever the tool answers,
afterwards the data reads back unchanged, the other session is alive, no advisory lock is
held, no table, large object or file was created, and the pooled connection's settings are
the tool's own again. These are the statements of issue 12 item 1, plus the variants that
defeated the old keyword filter.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from langchain_core.messages import ToolMessage

from langchain_result_layer.tools import (
    QueryTimeoutError,
    ReadOnlySQLDatabase,
    ReadOnlyViolationError,
    create_sql_query_tool,
)


def _call(tool: Any, query: str) -> ToolMessage:
    out = tool.invoke({"type": "tool_call", "id": "c", "name": tool.name, "args": {"query": query}})
    assert isinstance(out, ToolMessage)
    return out


# --------------------------------------------------------------------------- PostgreSQL

# (id, query template, must the tool refuse it?)  Templates name {victim}, {pid}, {newt},
# {proc}, {seq}, {marker}, {wipe}, {lock_fn}, {settings_fn}.
PG_ATTACKS: list[tuple[str, str, bool]] = [
    (
        "cr-comment",
        "SELECT 1 AS ok --\r; COMMIT; DELETE FROM {victim} WHERE id <= 3; SELECT 1",
        True,
    ),
    ("lf-comment", "SELECT 1 AS ok --\n; COMMIT; DELETE FROM {victim}; SELECT 1", True),
    ("nested-comment-open", "SELECT 1 /* /* */ ; DELETE FROM {victim}; */ AS x", False),
    ("nested-comment-closed", "SELECT 1 /* /* */ */ ; DELETE FROM {victim}", True),
    (
        "escape-string",
        "SELECT E'\\'' AS x; COMMIT; UPDATE {victim} SET secret='pwned'; SELECT 'y' AS y -- '",
        True,
    ),
    ("dollar-quote", "SELECT $$'$$ AS x; DELETE FROM {victim}; SELECT $$'$$", True),
    ("tagged-dollar-quote", "SELECT $q$ $$ $q$ AS x; DELETE FROM {victim}", True),
    ("commit-then-delete", "COMMIT; DELETE FROM {victim}", True),
    ("end-then-delete", "END; DELETE FROM {victim}", True),
    ("rollback-then-delete", "ROLLBACK; DELETE FROM {victim}", True),
    ("commit", "COMMIT", True),
    ("abort", "ABORT", True),
    ("set-transaction", "SET TRANSACTION READ WRITE", True),
    ("set-session", "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE", True),
    ("set-default", "SET default_transaction_read_only = off", True),
    ("do-block", "DO $$ BEGIN DELETE FROM {victim}; END $$", True),
    ("call", "CALL {proc}()", True),
    ("copy-to-program", "COPY {victim} TO PROGRAM 'touch {marker}'", True),
    ("copy-query-to-program", "COPY (SELECT 1) TO PROGRAM 'touch {marker}'", True),
    ("writable-cte-delete", "WITH d AS (DELETE FROM {victim} RETURNING *) SELECT * FROM d", True),
    (
        "writable-cte-update",
        "WITH u AS (UPDATE {victim} SET secret = 'x' RETURNING 1) TABLE u",
        True,
    ),
    ("select-into", "SELECT * INTO {newt} FROM {victim}", True),
    ("terminate", "SELECT pg_terminate_backend({pid})", True),
    ("terminate-quoted", 'SELECT "pg_terminate_backend"({pid})', True),
    ("terminate-qualified", "SELECT pg_catalog.PG_TERMINATE_BACKEND({pid})", True),
    ("terminate-from", "SELECT * FROM pg_terminate_backend({pid})", True),
    ("terminate-commented", "SELECT pg_terminate_backend/**/({pid})", True),
    ("cancel", "SELECT pg_cancel_backend({pid})", True),
    ("advisory-lock", "SELECT pg_advisory_lock(4242)", True),
    ("advisory-try-lock", "SELECT pg_try_advisory_lock(4242)", True),
    ("advisory-shared", "SELECT pg_advisory_lock_shared(4242)", True),
    ("lo-import", "SELECT lo_import('/etc/hostname')", True),
    ("lo-from-bytea", "SELECT lo_from_bytea(0, 'x')", True),
    ("read-file", "SELECT pg_read_file('/etc/hostname')", True),
    ("set-config", "SELECT set_config('default_transaction_read_only', 'off', false)", True),
    (
        "query-to-xml",
        "SELECT query_to_xml('DELETE FROM {victim} RETURNING 1', true, true, '')",
        True,
    ),
    ("unicode-identifier", 'SELECT U&"pg\\005fterminate_backend"({pid})', True),
    ("for-update", "SELECT * FROM {victim} FOR UPDATE", True),
    ("nextval", "SELECT nextval('{seq}')", True),
    ("user-function-writes", "SELECT {wipe}()", True),
    ("explain-analyze-delete", "EXPLAIN ANALYZE DELETE FROM {victim}", True),
    ("prepare", "PREPARE p AS DELETE FROM {victim}", True),
    ("lock-table", "LOCK TABLE {victim} IN ACCESS EXCLUSIVE MODE", True),
    ("truncate", "TRUNCATE {victim}", True),
    ("drop", "DROP TABLE {victim}", True),
    ("delete", "DELETE FROM {victim}", True),
    ("update", "UPDATE {victim} SET secret = 'x'", True),
    ("insert", "INSERT INTO {victim} VALUES (99, 'x')", True),
    (
        "merge",
        "MERGE INTO {victim} v USING (SELECT 1 AS id) s ON v.id = s.id WHEN MATCHED THEN DELETE",
        True,
    ),
    ("create-temp", "CREATE TEMP TABLE {newt} (a int)", True),
    ("listen", "LISTEN lrl_channel", True),
    ("notify", "SELECT pg_notify('lrl_channel', 'x')", True),
    ("alter-system", "ALTER SYSTEM SET work_mem = '1GB'", True),
    ("grant", "GRANT ALL ON {victim} TO PUBLIC", True),
    ("vacuum", "VACUUM {victim}", True),
    ("declare", "DECLARE c CURSOR FOR SELECT 1", True),
    ("table-then-delete", "TABLE {victim}; DELETE FROM {victim}", True),
    ("values-then-delete", "VALUES (1); DELETE FROM {victim}", True),
    # Not refusable by name: a function the database's owner wrote takes a session-level
    # lock and changes a session setting; the session reset undoes both.
    ("user-function-locks", "SELECT {lock_fn}()", False),
    ("user-function-settings", "SELECT {settings_fn}()", False),
]


@dataclass
class _PG:
    url: str
    names: dict[str, str]
    bystander: Any  # a psycopg connection: another session the tool must not touch
    admin: sa.Engine
    marker: Path

    def victim_rows(self) -> list[tuple[Any, ...]]:
        with self.admin.connect() as conn:
            return [
                tuple(r)
                for r in conn.execute(
                    sa.text(f"SELECT id, secret FROM {self.names['victim']} ORDER BY id")
                )
            ]

    def advisory_locks(self) -> int:
        with self.admin.connect() as conn:
            return int(
                conn.execute(
                    # This database only: pg_locks lists the whole cluster, where other
                    # runs' stores take advisory locks of their own (quota checks).
                    sa.text(
                        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND "
                        "database = (SELECT oid FROM pg_database "
                        "WHERE datname = current_database())"
                    )
                ).scalar_one()
            )

    def large_objects(self) -> int:
        with self.admin.connect() as conn:
            return int(
                conn.execute(sa.text("SELECT count(*) FROM pg_largeobject_metadata")).scalar_one()
            )

    def bystander_alive(self) -> bool:
        with self.admin.connect() as conn:
            listed = conn.execute(
                sa.text("SELECT count(*) FROM pg_stat_activity WHERE pid = :p"),
                {"p": int(self.names["pid"])},
            ).scalar_one()
        try:
            self.bystander.execute("SELECT 1").fetchone()
        except Exception:
            return False
        return bool(listed)

    def exists(self, name: str) -> bool:
        with self.admin.connect() as conn:
            return conn.execute(
                sa.text("SELECT to_regclass(:n) IS NOT NULL"), {"n": name}
            ).scalar_one()

    def sequence_value(self) -> int:
        with self.admin.connect() as conn:
            return int(
                conn.execute(sa.text(f"SELECT last_value FROM {self.names['seq']}")).scalar_one()
            )


@pytest.fixture
def pg(tmp_path: Path) -> Iterator[_PG]:
    from tests.stores._backends import require_postgres

    url = require_postgres()
    import psycopg

    suffix = uuid.uuid4().hex[:8]
    names = {
        "victim": f"lrl_victim_{suffix}",
        "newt": f"lrl_new_{suffix}",
        "proc": f"lrl_wipe_proc_{suffix}",
        "seq": f"lrl_seq_{suffix}",
        "wipe": f"lrl_wipe_fn_{suffix}",
        "lock_fn": f"lrl_lock_fn_{suffix}",
        "settings_fn": f"lrl_settings_fn_{suffix}",
    }
    admin = sa.create_engine(url)
    v = names["victim"]
    with admin.begin() as conn:
        conn.execute(sa.text(f"CREATE TABLE {v} (id int PRIMARY KEY, secret text)"))
        conn.execute(
            sa.text(f"INSERT INTO {v} SELECT g, 'secret ' || g FROM generate_series(1, 5) g")
        )
        conn.execute(sa.text(f"CREATE SEQUENCE {names['seq']}"))
        conn.execute(
            sa.text(f"CREATE PROCEDURE {names['proc']}() LANGUAGE sql AS $$ DELETE FROM {v} $$")
        )
        conn.execute(
            sa.text(
                f"CREATE FUNCTION {names['wipe']}() RETURNS int LANGUAGE sql "
                f"AS $$ DELETE FROM {v} RETURNING 1 $$"
            )
        )
        conn.execute(
            sa.text(
                f"CREATE FUNCTION {names['lock_fn']}() RETURNS void LANGUAGE sql "
                "AS $$ SELECT pg_advisory_lock(4343) $$"
            )
        )
        conn.execute(
            sa.text(
                f"CREATE FUNCTION {names['settings_fn']}() RETURNS text LANGUAGE sql "
                "AS $$ SELECT set_config('statement_timeout', '0', false) || "
                "set_config('default_transaction_read_only', 'off', false) $$"
            )
        )
    bystander = psycopg.connect(url.replace("postgresql+psycopg", "postgresql"), autocommit=True)
    names["pid"] = str(bystander.info.backend_pid)
    marker = tmp_path / "pwned"
    names["marker"] = str(marker)
    try:
        yield _PG(url, names, bystander, admin, marker)
    finally:
        bystander.close()
        with admin.begin() as conn:
            for kind, key in (
                ("PROCEDURE", "proc"),
                ("FUNCTION", "wipe"),
                ("FUNCTION", "lock_fn"),
                ("FUNCTION", "settings_fn"),
            ):
                conn.execute(sa.text(f"DROP {kind} IF EXISTS {names[key]}()"))
            conn.execute(sa.text(f"DROP TABLE IF EXISTS {v}, {names['newt']}"))
            conn.execute(sa.text(f"DROP SEQUENCE IF EXISTS {names['seq']}"))
        admin.dispose()


def _pg_engine(url: str, via: str) -> str | sa.Engine:
    """The tool's database: a URL (the tool's own engine), or an engine the user made."""
    if via == "url":
        return url
    if via == "engine":  # read-write, no connect options: only the tool's own session holds
        return sa.create_engine(url)
    return sa.create_engine(url, isolation_level="AUTOCOMMIT")


@pytest.mark.postgres
@pytest.mark.parametrize("via", ["url", "engine", "autocommit-engine"])
def test_postgres_attacks_change_nothing(pg: _PG, via: str) -> None:
    rows = pg.victim_rows()
    locks, objects, sequence = pg.advisory_locks(), pg.large_objects(), pg.sequence_value()
    assert locks == 0
    db = ReadOnlySQLDatabase(_pg_engine(pg.url, via), statement_timeout_ms=10_000)
    tool = create_sql_query_tool(db, name="run_sql")
    outcomes = {}
    for attack_id, template, must_refuse in PG_ATTACKS:
        query = template.format(**pg.names)
        msg = _call(tool, query)
        outcomes[attack_id] = (msg.status, str(msg.content)[:200])
        if must_refuse:
            assert msg.status == "error", (attack_id, msg.content)
        assert pg.victim_rows() == rows, attack_id
        assert pg.bystander_alive(), attack_id
        assert pg.advisory_locks() == 0, attack_id
        assert pg.large_objects() == objects, attack_id
        assert pg.sequence_value() == sequence, attack_id
        assert not pg.exists(pg.names["newt"]), attack_id
        assert not pg.marker.exists(), attack_id
    # The pooled connections went back reset: read-only, the tool's own statement timeout.
    for _ in range(3):
        settings = db.run(
            "SELECT current_setting('transaction_read_only') AS ro, "
            "current_setting('statement_timeout') AS timeout"
        ).rows
        assert settings == [{"ro": "on", "timeout": "10s"}], outcomes
    # The refusals say why.
    assert "one statement" in outcomes["cr-comment"][1]
    assert "one statement" in outcomes["escape-string"][1]
    assert "pg_terminate_backend" in outcomes["terminate-quoted"][1]
    assert "data-modifying" in outcomes["writable-cte-delete"][1]
    assert "SELECT ... INTO" in outcomes["select-into"][1]
    assert "only one query" in outcomes["do-block"][1]
    assert "read-only" in outcomes["user-function-writes"][1]
    # A user's engine gets its connections back in its own mode (autocommit or not).
    with db.engine.connect() as conn:
        driver: Any = conn.connection.driver_connection
        assert driver.autocommit is (via == "autocommit-engine")
    db.engine.dispose()


# Built-in and contrib functions that change state a read-only transaction does not protect
# (index pages, transaction ids, statistics, the visibility map, heap tuples), and contrib
# functions that run a query given as text (so that a refused name can be spelt in pieces).
PG_ESCAPING_FUNCTIONS: list[tuple[str, str]] = [
    ("brin-summarize", "SELECT brin_summarize_new_values('{brin}')"),
    ("brin-summarize-range", "SELECT brin_summarize_range('{brin}', 0)"),
    ("brin-desummarize", "SELECT brin_desummarize_range('{brin}', 0)"),
    ("gin-clean", "SELECT gin_clean_pending_list('{gin}')"),
    ("txid-current", "SELECT txid_current()"),
    ("xact-id", "SELECT pg_current_xact_id()"),
    ("stat-statements-reset", "SELECT pg_stat_statements_reset()"),
    ("stat-reset", "SELECT pg_stat_reset()"),
    ("visibility-truncate", "SELECT pg_truncate_visibility_map('{table}')"),
    ("heap-force-kill", "SELECT heap_force_kill('{table}', ARRAY['(0,1)']::tid[])"),
    ("heap-force-freeze", "SELECT heap_force_freeze('{table}', ARRAY['(0,1)']::tid[])"),
    (
        "crosstab-spelt-in-pieces",
        "SELECT * FROM crosstab('SELECT 1::text, 1::text, pg_termi' || "
        "'nate_backend({pid})::text') AS ct(r text, c text)",
    ),
    (
        "connectby",
        "SELECT * FROM connectby('{table}', 'id', 'id', '1', 0) AS t(a int, b int, c int)",
    ),
    (
        "xpath-table",
        "SELECT * FROM xpath_table('id', 'v', '{table}', '/a', 'true') AS t(id int, a text)",
    ),
]


@pytest.mark.postgres
def test_postgres_functions_that_escape_read_only_are_refused(pg: _PG) -> None:
    """Each call is refused, and what it would have changed is found unchanged afterwards."""
    table = f"lrl_indexed_{uuid.uuid4().hex[:8]}"
    names = {
        "table": table,
        "brin": f"{table}_brin",
        "gin": f"{table}_gin",
        "pid": pg.names["pid"],
    }
    with pg.admin.begin() as conn:
        for extension in ("tablefunc", "pg_visibility", "pg_surgery", "xml2"):
            # Contrib may be missing: the refusals do not need it, only the proof of harm does.
            with contextlib.suppress(sa.exc.DBAPIError), conn.begin_nested():
                conn.execute(sa.text(f"CREATE EXTENSION IF NOT EXISTS {extension}"))
        conn.execute(sa.text(f"CREATE TABLE {table} (id int, tags int[], v text)"))
        conn.execute(sa.text(f"CREATE INDEX {names['brin']} ON {table} USING brin (id)"))
        conn.execute(
            sa.text(
                f"CREATE INDEX {names['gin']} ON {table} USING gin (tags) WITH (fastupdate = on)"
            )
        )
        # Rows inserted after the indexes: BRIN ranges not summarised, a GIN pending list.
        conn.execute(
            sa.text(
                f"INSERT INTO {table} SELECT g, ARRAY[g], '<a>' || g || '</a>' "
                "FROM generate_series(1, 20000) g"
            )
        )
    try:
        rows = pg.victim_rows()
        with pg.admin.connect() as conn:
            table_rows = conn.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar_one()
        db = ReadOnlySQLDatabase(pg.url, statement_timeout_ms=10_000)
        tool = create_sql_query_tool(db, name="run_sql", list_tables=False)
        for attack_id, template in PG_ESCAPING_FUNCTIONS:
            msg = _call(tool, template.format(**names))
            assert msg.status == "error", (attack_id, msg.content)
            assert "Refused" in str(msg.content), (attack_id, msg.content)
            assert pg.bystander_alive(), attack_id
            assert pg.victim_rows() == rows, attack_id
        db.engine.dispose()
        with pg.admin.begin() as conn:
            assert conn.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar_one() == table_rows
            # Still unsummarised ranges and a pending list: the tool changed no index page.
            summarised = conn.execute(
                sa.text(f"SELECT brin_summarize_new_values('{names['brin']}')")
            ).scalar_one()
            cleaned = conn.execute(
                sa.text(f"SELECT gin_clean_pending_list('{names['gin']}')")
            ).scalar_one()
        assert summarised > 0
        assert cleaned > 0
    finally:
        with pg.admin.begin() as conn:
            conn.execute(sa.text(f"DROP TABLE IF EXISTS {table}"))


@pytest.mark.postgres
async def test_postgres_async_attacks_change_nothing(pg: _PG) -> None:
    """The async twin (`ainvoke`), several attacks at once on one pool."""
    import asyncio

    rows = pg.victim_rows()
    db = ReadOnlySQLDatabase(pg.url, statement_timeout_ms=10_000)
    tool = create_sql_query_tool(db, name="run_sql", list_tables=False)
    chosen = [a for a in PG_ATTACKS if a[0] in _ASYNC_ATTACKS]
    assert len(chosen) == len(_ASYNC_ATTACKS)
    messages = await asyncio.gather(
        *(
            tool.ainvoke(
                {
                    "type": "tool_call",
                    "id": attack_id,
                    "name": tool.name,
                    "args": {"query": template.format(**pg.names)},
                }
            )
            for attack_id, template, _refuse in chosen
        )
    )
    assert [m.status for m in messages] == ["error"] * len(chosen), [m.content for m in messages]
    assert pg.victim_rows() == rows
    assert pg.bystander_alive()
    assert pg.advisory_locks() == 0
    db.engine.dispose()


_ASYNC_ATTACKS = frozenset(
    {"cr-comment", "escape-string", "terminate", "advisory-lock", "writable-cte-delete", "do-block"}
)


@pytest.mark.postgres
def test_postgres_refusals_raise_read_only_violations(pg: _PG) -> None:
    db = ReadOnlySQLDatabase(pg.url)
    v = pg.names["victim"]
    cases = {
        f"DELETE FROM {v}": "only one query",
        f"SELECT 1; DROP TABLE {v}": "one statement",
        f"WITH d AS (DELETE FROM {v} RETURNING *) SELECT * FROM d": "data-modifying",
        f"SELECT * INTO new_t FROM {v}": "INTO",
        "COMMIT": "only one query",
    }
    for query, message in cases.items():
        with pytest.raises(ReadOnlyViolationError, match=message):
            db.run(query)
    assert len(db.run(f"SELECT * FROM {v} WHERE secret LIKE 'secret%'").rows) == 5
    assert db.run("SELECT 'a:b %s %(x)s' AS x").rows == [{"x": "a:b %s %(x)s"}]
    db.engine.dispose()


@pytest.mark.postgres
def test_postgres_statement_timeout(pg: _PG) -> None:
    db = ReadOnlySQLDatabase(pg.url, statement_timeout_ms=200)
    with pytest.raises(QueryTimeoutError, match="200 ms"):
        db.run("SELECT pg_sleep(5)")
    msg = _call(create_sql_query_tool(db), "SELECT pg_sleep(5)")
    assert msg.status == "error"
    assert "longer than 200 ms" in str(msg.content)
    assert db.run("SELECT 1 AS one").rows == [{"one": 1}]  # the connection is usable again
    db.engine.dispose()


@pytest.mark.postgres
def test_postgres_lock_timeout(pg: _PG) -> None:
    holder = pg.admin.connect()
    holder.execute(sa.text(f"LOCK TABLE {pg.names['victim']} IN ACCESS EXCLUSIVE MODE"))
    try:
        db = ReadOnlySQLDatabase(pg.url, statement_timeout_ms=20_000, lock_timeout_ms=200)
        with pytest.raises(QueryTimeoutError, match="for a lock"):
            db.run(f"SELECT * FROM {pg.names['victim']}")
        db.engine.dispose()
    finally:
        holder.rollback()
        holder.close()


@pytest.mark.postgres
def test_postgres_unreachable_names_no_connection_detail() -> None:
    db = ReadOnlySQLDatabase("postgresql+psycopg://lrl_user:hunter2@127.0.0.1:1/lrl_secret_db")
    msg = _call(create_sql_query_tool(db, list_tables=False), "SELECT 1")
    assert msg.status == "error"
    text = str(msg.content)
    assert "could not be reached" in text
    for detail in ("127.0.0.1", "lrl_user", "hunter2", "lrl_secret_db", "5432", ":1"):
        assert detail not in text


def test_other_drivers_are_refused() -> None:
    engine = sa.create_engine("postgresql+psycopg://u@127.0.0.1/db")
    ReadOnlySQLDatabase(engine)  # psycopg 3: accepted (no connection is made here)
    with pytest.raises(ValueError, match="psycopg 3"):
        ReadOnlySQLDatabase(sa.create_engine("sqlite+aiosqlite:///x.db"))


def test_plain_postgresql_urls_run_on_psycopg() -> None:
    db = ReadOnlySQLDatabase("postgresql://u@127.0.0.1/db")
    assert db.engine.dialect.driver == "psycopg"


# --------------------------------------------------------------------------- SQLite

# (id, query, must the tool refuse it?)  SQLite ends `--` comments at `\n` only: the `\r`
# attack is one harmless SELECT there.
SQLITE_ATTACKS: list[tuple[str, str, bool]] = [
    ("cr-comment", "SELECT 1 AS ok --\r; DELETE FROM victim; SELECT 1", False),
    ("lf-comment", "SELECT 1 AS ok --\n; DELETE FROM victim", True),
    ("block-comment", "SELECT 1 /* x */ ; DELETE FROM victim", True),
    ("string", "SELECT 'a'';' AS x; DELETE FROM victim", True),
    ("commit-then-delete", "COMMIT; DELETE FROM victim", True),
    ("begin", "BEGIN IMMEDIATE", True),
    ("savepoint", "SAVEPOINT s", True),
    ("delete", "DELETE FROM victim", True),
    ("update", "UPDATE victim SET secret = 'x'", True),
    ("insert", "INSERT INTO victim VALUES (99, 'x')", True),
    ("replace", "REPLACE INTO victim VALUES (1, 'x')", True),
    ("drop", "DROP TABLE victim", True),
    ("create", "CREATE TABLE t2 (a)", True),
    ("create-temp", "CREATE TEMP TABLE t2 (a)", True),
    ("create-view", "CREATE TEMP VIEW v2 AS SELECT 1", True),
    ("pragma-query-only-off", "PRAGMA query_only = OFF", True),
    ("pragma-writable-schema", "PRAGMA writable_schema = 1", True),
    ("attach", "ATTACH DATABASE '{other}' AS x", True),
    ("vacuum-into", "VACUUM INTO '{other}'", True),
    ("vacuum", "VACUUM", True),
    ("analyze", "ANALYZE", True),
    ("reindex", "REINDEX", True),
    ("load-extension", "SELECT load_extension('/tmp/x')", True),
    ("fts3-tokenizer", "SELECT fts3_tokenizer('simple')", True),
    ("virtual-table", "CREATE VIRTUAL TABLE f USING fts5(a)", True),
    ("returning", "DELETE FROM victim RETURNING *", True),
    ("cte-delete", "WITH d AS (SELECT 1) DELETE FROM victim", True),
    ("explain-delete", "EXPLAIN DELETE FROM victim", True),
]


@pytest.fixture
def sqlite_db(tmp_path: Path) -> Path:
    path = tmp_path / "victim.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE victim (id INTEGER PRIMARY KEY, secret TEXT)")
    con.execute("CREATE INDEX victim_secret ON victim (secret)")
    con.executemany("INSERT INTO victim VALUES (?, ?)", [(i, f"secret {i}") for i in range(1, 6)])
    con.commit()
    con.close()
    return path


def _sqlite_tools(path: Path) -> list[tuple[str, ReadOnlySQLDatabase]]:
    """The tool over a URL (file opened mode=ro) and over a read-write engine (the guard alone)."""
    return [
        ("url", ReadOnlySQLDatabase(f"sqlite:///{path}")),
        ("engine", ReadOnlySQLDatabase(sa.create_engine(f"sqlite:///{path}"))),
    ]


@pytest.mark.parametrize("via", ["url", "engine"])
def test_sqlite_attacks_change_nothing(sqlite_db: Path, tmp_path: Path, via: str) -> None:
    before = sqlite_db.read_bytes()
    other = tmp_path / "other.sqlite"
    files = sorted(os.listdir(tmp_path))
    db = dict(_sqlite_tools(sqlite_db))[via]
    tool = create_sql_query_tool(db)
    for attack_id, template, must_refuse in SQLITE_ATTACKS:
        msg = _call(tool, template.format(other=other))
        if must_refuse:
            assert msg.status == "error", (attack_id, msg.content)
        assert sqlite_db.read_bytes() == before, attack_id
        assert not other.exists(), attack_id
        assert sorted(os.listdir(tmp_path)) == files, attack_id
        with sqlite3.connect(f"file:{sqlite_db}?mode=ro", uri=True) as con:
            assert con.execute("SELECT count(*) FROM victim").fetchone() == (5,), attack_id
    # Still query-only, and still answering.
    assert db.run("SELECT count(*) AS n FROM victim").rows == [{"n": 5}]
    with db.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA query_only").scalar_one() == 1
    db.engine.dispose()


def test_sqlite_refusals_say_what_was_refused(sqlite_db: Path) -> None:
    db = ReadOnlySQLDatabase(f"sqlite:///{sqlite_db}")
    with pytest.raises(ReadOnlyViolationError, match="got PRAGMA query_only"):
        db.run("PRAGMA query_only = OFF")
    with pytest.raises(ReadOnlyViolationError, match="got ATTACH"):
        db.run("VACUUM INTO '/tmp/x.db'")
    with pytest.raises(ReadOnlyViolationError, match="load_extension"):
        db.run("SELECT load_extension('x')")
    with pytest.raises(ReadOnlyViolationError, match="one statement"):
        db.run("SELECT 1 --\n; DELETE FROM victim")
    # Queries still work, table-valued pragmas and recursive CTEs included.
    assert [r["name"] for r in db.run("SELECT name FROM pragma_table_info('victim')").rows] == [
        "id",
        "secret",
    ]
    rows = db.run(
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) "
        "SELECT n FROM r"
    ).rows
    assert rows == [{"n": 1}, {"n": 2}, {"n": 3}]
    assert db.run("EXPLAIN QUERY PLAN SELECT * FROM victim").rows


def test_sqlite_statement_timeout(sqlite_db: Path) -> None:
    db = ReadOnlySQLDatabase(f"sqlite:///{sqlite_db}", statement_timeout_ms=100)
    endless = (
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"
    )
    with pytest.raises(QueryTimeoutError, match="100 ms"):
        db.run(endless)
    assert db.run("SELECT 1 AS one").rows == [{"one": 1}]


async def test_sqlite_async_refusals(sqlite_db: Path) -> None:
    tool = create_sql_query_tool(f"sqlite:///{sqlite_db}")
    before = sqlite_db.read_bytes()
    for _attack, template, _refuse in SQLITE_ATTACKS[1:9]:
        msg = await tool.ainvoke(
            {"type": "tool_call", "id": "a", "name": tool.name, "args": {"query": template}}
        )
        assert msg.status == "error"
    assert sqlite_db.read_bytes() == before


def test_sqlite_cached_statements_are_checked_again(sqlite_db: Path) -> None:
    db = ReadOnlySQLDatabase(f"sqlite:///{sqlite_db}", max_rows=10)
    query = "SELECT name FROM pragma_table_info('victim')"
    for _ in range(3):  # the driver caches the statement; each run re-prepares it
        assert len(db.run(query).rows) == 2
    for _ in range(3):
        with pytest.raises(ReadOnlyViolationError):
            db.run("DELETE FROM victim")
