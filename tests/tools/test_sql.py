"""The read-only SQL tool on real databases: Chinook (SQLite), in-memory SQLite, PostgreSQL."""

from __future__ import annotations

import json
import shutil
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from langchain_core.messages import ToolMessage

from langchain_result_layer import ResultLayer
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.tokens import resolve_token_counter
from langchain_result_layer.core.view import ResultView
from langchain_result_layer.tools import (
    ReadOnlySQLDatabase,
    ReadOnlyViolationError,
    check_read_only,
    create_sql_query_tool,
)

COUNTER = resolve_token_counter("auto")


def _call(tool: object, query: str, call_id: str = "c1") -> ToolMessage:
    out = tool.invoke(  # type: ignore[attr-defined]
        {"type": "tool_call", "id": call_id, "name": tool.name, "args": {"query": query}}  # type: ignore[attr-defined]
    )
    assert isinstance(out, ToolMessage)
    return out


@pytest.fixture
def chinook(tmp_path: Path, corpus: Path) -> Path:
    """A private copy of the Chinook database (the corpus is never modified)."""
    target = tmp_path / "chinook.sqlite"
    shutil.copy(corpus / "sql" / "Chinook_Sqlite.sqlite", target)
    return target


@pytest.fixture
def small_db(tmp_path: Path) -> Path:
    """A database built here, for when the corpus is absent."""
    path = tmp_path / "small.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE job (id INTEGER PRIMARY KEY, status TEXT, took REAL, note TEXT)")
    con.executemany(
        "INSERT INTO job VALUES (?, ?, ?, ?)",
        [
            (i, ["ok", "ok", "failed"][i % 3], i / 10, None if i % 2 else f"n{i}")
            for i in range(1, 2_001)
        ],
    )
    con.commit()
    con.close()
    return path


# --------------------------------------------------------------------------- statement check


@pytest.mark.parametrize(
    "query",
    [
        "SELECT 1",
        "select * from t where name = 'DELETE FROM t'",
        "WITH x AS (SELECT 1) SELECT * FROM x;",
        "-- comment; DROP TABLE t\nSELECT 1",
        "EXPLAIN SELECT 1",
        "VALUES (1), (2)",
    ],
)
def test_read_only_statements_pass(query: str) -> None:
    assert check_read_only(query)


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("   ", "empty"),
        (";;", "empty"),
        ("SELECT pg_terminate_backend(1)", "pg_terminate_backend"),
        ('SELECT "PG_ADVISORY_LOCK"(1)', "pg_advisory_"),
        ("SELECT pg_catalog.lo_import('/etc/passwd')", "lo_import"),
        ("SELECT set_config('role', 'postgres', true)", "set_config"),
        ("SELECT query_to_xml('DELETE FROM t', true, true, '')", "query_to_xml"),
        ('SELECT U&"pg\\005fsleep"(1)', "Unicode-escaped"),
        ("SELECT 1\x00", "NUL"),
        ("SELECT " + "1" * 100_001, "characters"),
    ],
)
def test_check_read_only_refuses_what_the_database_cannot_judge(query: str, message: str) -> None:
    with pytest.raises(ReadOnlyViolationError, match=message):
        check_read_only(query)


@pytest.mark.parametrize(
    "query", ["SELECT total_amount, hello_world FROM t", "SELECT 'set_configuration' AS x"]
)
def test_refused_names_are_matched_as_whole_identifiers(query: str) -> None:
    assert check_read_only(query) == query


# The statements the regex check used to refuse are now refused by the database itself
# (PostgreSQL and SQLite cases in tests/tools/test_sql_attacks.py); the same messages.
@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("DELETE FROM t", "got DELETE"),
        ("SELECT 1; DROP TABLE t", "one statement"),
        ("PRAGMA writable_schema = 1", "got PRAGMA"),
        ("ATTACH DATABASE 'x.db' AS x", "got ATTACH"),
    ],
)
def test_writes_and_tricks_are_refused_by_sqlite(small_db: Path, query: str, message: str) -> None:
    before = small_db.read_bytes()
    with pytest.raises(ReadOnlyViolationError, match=message):
        ReadOnlySQLDatabase(f"sqlite:///{small_db}").run(query.replace(" t", " job"))
    assert small_db.read_bytes() == before


def test_unterminated_literals_are_database_errors(small_db: Path) -> None:
    with pytest.raises(sqlite3.OperationalError, match="unrecognized token"):
        ReadOnlySQLDatabase(f"sqlite:///{small_db}").run("SELECT 'unterminated")


# --------------------------------------------------------------------------- SQLite


def test_chinook_rows_and_artifact(chinook: Path) -> None:
    tool = create_sql_query_tool(f"sqlite:///{chinook}", name="run_sql")
    assert tool.name == "run_sql"
    assert "Track" in tool.description
    msg = _call(tool, "SELECT ArtistId, Name FROM Artist ORDER BY ArtistId LIMIT 3")
    assert msg.status == "success"
    assert json.loads(str(msg.content)) == [
        {"ArtistId": 1, "Name": "AC/DC"},
        {"ArtistId": 2, "Name": "Accept"},
        {"ArtistId": 3, "Name": "Aerosmith"},
    ]
    assert msg.artifact["columns"] == ["ArtistId", "Name"]
    assert msg.artifact["row_count"] == 3
    assert msg.artifact["truncated"] is False


def test_refused_write_is_an_error_message_and_the_database_is_untouched(chinook: Path) -> None:
    before = chinook.read_bytes()
    tool = create_sql_query_tool(f"sqlite:///{chinook}")
    msg = _call(tool, "DELETE FROM Track")
    assert msg.status == "error"
    assert "Refused" in str(msg.content)
    assert chinook.read_bytes() == before


def test_the_connection_itself_is_read_only(chinook: Path) -> None:
    db = ReadOnlySQLDatabase(f"sqlite:///{chinook}")
    with db.engine.connect() as conn:
        with pytest.raises(sa.exc.OperationalError, match=r"readonly|read-only|query_only"):
            conn.execute(sa.text("DELETE FROM Track"))
        conn.rollback()


def test_database_errors_come_back_to_the_model(chinook: Path) -> None:
    msg = _call(create_sql_query_tool(f"sqlite:///{chinook}"), "SELECT nope FROM Track")
    assert msg.status == "error"
    assert "OperationalError" in str(msg.content)
    assert "nope" in str(msg.content)


def test_max_rows_cuts_and_says_so(small_db: Path) -> None:
    tool = create_sql_query_tool(f"sqlite:///{small_db}", max_rows=100)
    msg = _call(tool, "SELECT * FROM job")
    assert len(json.loads(str(msg.content))) == 100
    assert msg.artifact["truncated"] is True


def test_in_memory_database_is_query_only() -> None:
    engine = sa.create_engine(
        "sqlite:///file:mem_" + uuid.uuid4().hex + "?mode=memory&cache=shared&uri=true",
        poolclass=sa.pool.SingletonThreadPool,
    )
    with engine.begin() as conn:  # keeps the shared in-memory database alive below
        conn.execute(sa.text("CREATE TABLE t (a INTEGER)"))
        conn.execute(sa.text("INSERT INTO t VALUES (1), (2), (3)"))
    keeper = engine.connect()
    try:
        db = ReadOnlySQLDatabase(engine)
        assert [r["a"] for r in db.run("SELECT a FROM t ORDER BY a").rows] == [1, 2, 3]
        with pytest.raises(sa.exc.OperationalError), db._connection() as conn:
            conn.execute(sa.text("INSERT INTO t VALUES (4)"))
    finally:
        keeper.close()


async def test_async_twin(small_db: Path) -> None:
    tool = create_sql_query_tool(f"sqlite:///{small_db}")
    msg = await tool.ainvoke(
        {
            "type": "tool_call",
            "id": "a1",
            "name": tool.name,
            "args": {"query": "SELECT count(*) AS n FROM job"},
        }
    )
    assert json.loads(str(msg.content)) == [{"n": 2_000}]
    bad = await tool.ainvoke(
        {"type": "tool_call", "id": "a2", "name": tool.name, "args": {"query": "DROP TABLE job"}}
    )
    assert bad.status == "error"


# --------------------------------------------------------------------------- through the layer


def _layer(tokens: int = 1_500) -> ResultLayer:
    return ResultLayer(
        context_window=100_000, max_result_tokens=tokens, store="memory", token_counter=COUNTER
    )


def test_large_results_become_the_rows_view_and_pages_fetch(chinook: Path) -> None:
    tool = create_sql_query_tool(f"sqlite:///{chinook}", name="run_sql")
    layer = _layer()
    raw = _call(
        tool, "SELECT InvoiceLineId, InvoiceId, TrackId, UnitPrice, Quantity FROM InvoiceLine"
    )
    out = layer.process_tool_message(raw)
    content = str(out.content)
    assert COUNTER.count(content) <= 1_500
    view = ResultView.from_artifact(out.artifact)
    assert view is not None
    assert view.kind == "rows"
    assert view.total == 2_240
    assert view.original_artifact["row_count"] == 2_240  # the tool's own artifact is kept
    assert '"UnitPrice": float' in content or '"UnitPrice":' in content
    page = Reference.parse(view.references["next"])
    fetched = layer.fetch_tool.invoke(
        {"type": "tool_call", "id": "f", "name": layer.fetch_tool.name, "args": {"ref": str(page)}}
    )
    first = view.shown + 1
    with sqlite3.connect(f"file:{chinook}?mode=ro", uri=True) as con:
        row = con.execute(
            "SELECT InvoiceLineId, InvoiceId, TrackId, UnitPrice, Quantity FROM InvoiceLine "
            "ORDER BY rowid LIMIT 1 OFFSET ?",
            (first - 1,),
        ).fetchone()
    assert json.dumps(list(row)) in str(fetched.content)


def test_works_without_the_corpus(small_db: Path) -> None:
    tool = create_sql_query_tool(f"sqlite:///{small_db}")
    out = _layer(800).process_tool_message(_call(tool, "SELECT * FROM job"))
    view = ResultView.from_artifact(out.artifact)
    assert view is not None
    assert view.kind == "rows"
    assert view.total == 2_000
    assert view.summary["column_summaries"]["status"]["top"] == [["ok", 1_333], ["failed", 667]]


# --------------------------------------------------------------------------- PostgreSQL


@pytest.fixture
def pg_url() -> Iterator[str]:
    from tests.stores._backends import require_postgres

    url = require_postgres()
    table = "lrl_sql_tool_" + uuid.uuid4().hex[:8]
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text(f"CREATE TABLE {table} (id int, status text)"))
        conn.execute(sa.text(f"INSERT INTO {table} SELECT g, 'ok' FROM generate_series(1, 50) g"))
    try:
        yield f"{url}#{table}"
    finally:
        with engine.begin() as conn:
            conn.execute(sa.text(f"DROP TABLE IF EXISTS {table}"))
        engine.dispose()


@pytest.mark.postgres
def test_postgres_is_read_only(pg_url: str) -> None:
    url, table = pg_url.split("#")
    db = ReadOnlySQLDatabase(url)
    assert len(db.run(f"SELECT * FROM {table}").rows) == 50
    with pytest.raises(ReadOnlyViolationError):
        db.run(f"UPDATE {table} SET status = 'x'")
    with pytest.raises(sa.exc.DBAPIError, match="read-only"), db._connection() as conn:
        conn.execute(sa.text(f"UPDATE {table} SET status = 'x'"))
    msg = _call(create_sql_query_tool(db), f"SELECT count(*) AS n FROM {table}")
    assert json.loads(str(msg.content)) == [{"n": 50}]
    db.engine.dispose()
