"""SQL store specifics: schema version and migrations, engines, faults, the layer on top."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from langchain_core.messages import ToolMessage

from langchain_result_layer import ResultLayer
from langchain_result_layer.errors import RecordNotAccessibleError, StoreUnavailableError
from langchain_result_layer.stores import (
    InMemoryResultStore,
    LangGraphResultStore,
    Principal,
    SQLResultStore,
    _schema,
    resolve_store,
)
from tests.stores._backends import require_postgres

ADA = Principal(user="ada")
BIG = "".join(f"{i:06d} INFO something happened\n" for i in range(20_000)) + "ERROR: boom\n"


def test_tables_and_schema_version_created_on_first_use(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    store = SQLResultStore(url)
    assert not (tmp_path / "r.db").exists() or sa.inspect(store.engine).get_table_names() == []
    store.put("x", principal=ADA)
    names = set(sa.inspect(store.engine).get_table_names())
    assert {"lrl_schema_version", "lrl_records", "lrl_chunks", "lrl_audit"} <= names
    with store.engine.connect() as conn:
        assert conn.execute(sa.text("select version from lrl_schema_version")).scalar() == (
            _schema.SCHEMA_VERSION
        )
    store.close()


def test_a_second_store_on_the_same_database_reads_the_first_ones_records(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    first = SQLResultStore(url)
    meta = first.put(BIG, principal=ADA, kind="log", extra={"headline": "a log"})
    first.close()
    second = SQLResultStore(url)
    assert second.info(meta.record_id, principal=ADA) == meta
    assert second.read(meta.record_id, principal=ADA, start_line=20_001).data == "ERROR: boom\n"
    second.close()


def test_migration_runs_pending_steps_and_refuses_newer_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    store = SQLResultStore(url)
    meta = store.put("keep me\n", principal=ADA)
    store.close()
    calls: list[int] = []

    def v1_to_v2(conn: sa.Connection, tables: _schema.Tables) -> None:
        calls.append(1)
        conn.execute(sa.text("CREATE TABLE lrl_v2_marker (id INTEGER)"))

    monkeypatch.setattr(_schema, "SCHEMA_VERSION", 2)
    monkeypatch.setitem(_schema.MIGRATIONS, 1, v1_to_v2)
    upgraded = SQLResultStore(url)
    assert upgraded.read(meta.record_id, principal=ADA).data == "keep me\n"
    assert calls == [1]
    assert "lrl_v2_marker" in sa.inspect(upgraded.engine).get_table_names()
    with upgraded.engine.connect() as conn:
        assert conn.execute(sa.text("select version from lrl_schema_version")).scalar() == 2
    upgraded.close()
    monkeypatch.setattr(_schema, "SCHEMA_VERSION", 1)
    old = SQLResultStore(url)
    with pytest.raises(StoreUnavailableError, match="newer than this package"):
        old.read(meta.record_id, principal=ADA)
    old.close()


def test_engine_and_url_forms(tmp_path: Path) -> None:
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'e.db'}")
    store = resolve_store(engine)
    assert isinstance(store, SQLResultStore)
    assert store.engine is engine
    meta = store.put("via engine\n", principal=ADA)
    assert store.read(meta.record_id, principal=ADA).data == "via engine\n"
    store.close()  # does not dispose an engine it did not create
    with engine.connect() as conn:
        assert conn.execute(sa.text("select count(*) from lrl_records")).scalar() == 1
    assert isinstance(resolve_store(None), InMemoryResultStore)
    assert isinstance(resolve_store("memory"), InMemoryResultStore)
    assert resolve_store(False) is None
    from langgraph.store.memory import InMemoryStore

    assert isinstance(resolve_store(InMemoryStore()), LangGraphResultStore)
    custom = InMemoryResultStore()
    assert resolve_store(custom) is custom
    with pytest.raises(TypeError):
        resolve_store(42)
    pg = SQLResultStore("postgresql://u:secret@127.0.0.1:1/db")
    assert pg.engine.dialect.driver == "psycopg"
    assert "secret" not in repr(pg)


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _down_urls(tmp_path: Path) -> list[str]:
    ro = tmp_path / "readonly"
    ro.mkdir()
    ro.chmod(stat.S_IRUSR | stat.S_IXUSR)
    urls = [
        f"sqlite:///{tmp_path / 'missing' / 'dir' / 'r.db'}",
        f"postgresql+psycopg://postgres:postgres@127.0.0.1:{_closed_port()}/nope",
    ]
    if os.geteuid() != 0:  # root ignores directory permissions
        urls.append(f"sqlite:///{ro / 'r.db'}")
    return urls


def test_store_down_raises_store_unavailable(tmp_path: Path) -> None:
    for url in _down_urls(tmp_path):
        store = SQLResultStore(url)  # constructing never connects
        with pytest.raises(StoreUnavailableError):
            store.put("x", principal=ADA)
        with pytest.raises(StoreUnavailableError):
            store.read("AAAAAAAAAAAAAAAAAAAAAA", principal=ADA)
        store.close()


def test_read_only_database_file_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    store = SQLResultStore(f"sqlite:///{path}")
    meta = store.put("x\n", principal=ADA)
    store.close()
    ro = SQLResultStore(f"sqlite:///file:{path}?mode=ro&uri=true")
    # Reads are audited, so a read-only database cannot serve them: that is an error, never
    # an unaudited read.
    with pytest.raises(StoreUnavailableError):
        ro.read(meta.record_id, principal=ADA)
    ro.close()


@pytest.mark.parametrize("asynchronous", [False, True])
async def test_layer_truncates_and_says_plainly_when_the_store_is_down(
    tmp_path: Path, asynchronous: bool
) -> None:
    for url in _down_urls(tmp_path):
        layer = ResultLayer(
            context_window=8_000, max_result_tokens=500, store=url, token_counter="approximate"
        )
        msg = ToolMessage(content=BIG, tool_call_id="c1", name="read_log")
        out = (
            (await layer.aprocess_tool_message(msg))
            if asynchronous
            else (layer.process_tool_message(msg))
        )
        assert out.tool_call_id == "c1"
        assert out.name == "read_log"
        assert len(out.content) < len(BIG)
        assert "could not be saved" in out.content
        marker = out.response_metadata["result_layer"]
        assert marker["stored"] is False
        assert marker["ref"] is None
        assert marker["store_error"]
        # The fetch tool says so too, as an error message, not an exception.
        call = {
            "type": "tool_call",
            "id": "f1",
            "name": "fetch_tool_result",
            "args": {"ref": "ref://tool-result/AAAAAAAAAAAAAAAAAAAAAA/text"},
        }
        res = (
            (await layer.fetch_tool.ainvoke(call))
            if asynchronous
            else (layer.fetch_tool.invoke(call))
        )
        assert isinstance(res, ToolMessage)
        assert res.status == "error"
        assert "unavailable" in res.content


def test_postgres_connections_work_under_pytest_socket() -> None:
    url = require_postgres()
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        assert conn.execute(sa.text("select 1")).scalar() == 1
    engine.dispose()


def test_compressed_chunks_round_trip(sql_store_factory: Any) -> None:
    store = sql_store_factory(compress=True, chunk_size=1000)
    meta = store.put(BIG, principal=ADA)
    assert store.read(meta.record_id, principal=ADA).data == BIG
    assert store.read(meta.record_id, principal=ADA, start_line=5, end_line=6).data == (
        "000004 INFO something happened\n000005 INFO something happened\n"
    )
    with store.engine.connect() as conn:
        stored = conn.execute(
            sa.select(sa.func.sum(sa.func.length(store.tables.chunks.c.data)))
        ).scalar()
    assert stored < len(BIG) / 3


def test_purge_also_drops_old_audit_rows(sql_store_factory: Any) -> None:
    now = [1_000.0]
    store = sql_store_factory(clock=lambda: now[0], audit_ttl_seconds=50, default_ttl_seconds=10)
    meta = store.put("x", principal=ADA)
    store.read(meta.record_id, principal=ADA)
    assert len(store.audit_log()) == 2
    now[0] += 100
    assert store.purge_expired() == 1
    assert store.audit_log() == []


def test_durable_audit_still_audits_every_read(sql_store_factory: Any) -> None:
    store = sql_store_factory(durable_audit=True)
    meta = store.put("x\ny\n", principal=ADA)
    store.read(meta.record_id, principal=ADA, start_line=2, end_line=2)
    with pytest.raises(RecordNotAccessibleError):
        store.read(meta.record_id, principal=Principal(user="eve"))
    log = store.audit_log(record_id=meta.record_id)
    assert [(e.action, e.range, e.granted) for e in log] == [
        ("read", "all", False),
        ("read", "lines=2-2", True),
        ("put", "size=4", True),
    ]
