"""Store faults are bounded and say nothing about the connection (issue 12 items 7 and 9).

Timeouts (connect, statement, lock) end in a clear "not saved" / "not readable" answer; a
host that does not answer costs one connect timeout, then calls fail at once; a deleted
SQLite file is reopened instead of reporting saves nobody can read; store errors name no
URL, host, port, user or database; denials are audited whatever the principal's characters;
a store can refuse saves with no principal; principals compare as text.
"""

from __future__ import annotations

import os
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from langchain_core.messages import ToolMessage
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langchain_result_layer import ResultLayer
from langchain_result_layer.errors import RecordNotAccessibleError, StoreUnavailableError
from langchain_result_layer.principal import PrincipalResolver
from langchain_result_layer.stores import (
    AccessPolicy,
    InMemoryResultStore,
    LangGraphResultStore,
    Principal,
    SQLResultStore,
)
from langchain_result_layer.stores._faults import StoreTimeouts, describe_fault, safe_audit_text
from tests.stores._backends import require_postgres

SECRETS = ("lrl_user", "hunter2", "lrl_secret_db", "10.9.8.7", "127.0.0.1", "5432", ":1/")
ADA = Principal(tenant="acme", user="ada", thread="t1")
BIG = "line of a big result\n" * 20_000


def _no_connection_detail(text: str) -> None:
    for detail in SECRETS:
        assert detail not in text, (detail, text)


# --------------------------------------------------------------------------- unreachable


def test_an_unreachable_database_is_one_timeout_then_fails_fast() -> None:
    store = SQLResultStore(
        "postgresql+psycopg://lrl_user:hunter2@127.0.0.1:1/lrl_secret_db",
        timeouts=StoreTimeouts(connect_seconds=1, retry_after_seconds=60),
    )
    with pytest.raises(StoreUnavailableError) as first:
        store.put("x", principal=ADA)
    assert "could not be reached" in str(first.value)
    _no_connection_detail(str(first.value))
    assert "127.0.0.1" in str(first.value.__cause__)  # operators keep the details
    with pytest.raises(StoreUnavailableError, match="a moment ago") as second:
        store.read("AbCdEfGhIjKlMnOpQrStUv", principal=ADA)
    _no_connection_detail(str(second.value))


def test_the_model_sees_no_connection_detail_in_views_or_fetches() -> None:
    store = SQLResultStore(
        "postgresql+psycopg://lrl_user:hunter2@127.0.0.1:1/lrl_secret_db",
        timeouts=StoreTimeouts(connect_seconds=1),
    )
    layer = ResultLayer(context_window=16_000, store=store, token_counter="approximate")
    out = layer.process_tool_message(ToolMessage(content=BIG, tool_call_id="c1", name="t"))
    text = str(out.content)
    assert "could not be saved" in text
    _no_connection_detail(text)
    fetched = layer.fetch_tool.invoke(
        {
            "type": "tool_call",
            "id": "f1",
            "name": layer.fetch_tool.name,
            "args": {"ref": "ref://tool-result/AbCdEfGhIjKlMnOpQrStUv/text"},
        }
    )
    assert fetched.status == "error"
    _no_connection_detail(str(fetched.content))


def test_langgraph_store_errors_name_no_connection_detail() -> None:
    class Broken(InMemoryStore):
        def batch(self, ops: Any) -> Any:
            msg = (
                'connection to server at "10.9.8.7", port 5432 failed: FATAL: password '
                'authentication failed for user "lrl_user" (database "lrl_secret_db")'
            )
            raise OSError(msg)

    store = LangGraphResultStore(Broken())
    assert isinstance(store.store, BaseStore)
    with pytest.raises(StoreUnavailableError) as info:
        store.put("x", principal=ADA)
    assert "could not be reached" in str(info.value)
    _no_connection_detail(str(info.value))


@pytest.mark.parametrize(
    ("driver_text", "expected"),
    [
        ("canceling statement due to lock timeout", "did not answer in time"),
        ("database is locked", "did not answer in time"),
        ("attempt to write a readonly database", "refused the save"),
        ("could not connect to server: Connection refused", "could not be reached"),
        ('relation "x" has no column "y" at 10.9.8.7', "failed during the save"),
    ],
)
def test_fault_descriptions(driver_text: str, expected: str) -> None:
    message, _down = describe_fault(RuntimeError(driver_text), operation="save")
    assert expected in message
    _no_connection_detail(message)


# --------------------------------------------------------------------------- locks


@pytest.mark.postgres
@pytest.mark.timeout(120)
@pytest.mark.parametrize("engine_given", [False, True])
def test_a_locked_postgres_table_is_a_bounded_not_saved(engine_given: bool) -> None:
    url = require_postgres()
    prefix = f"t{uuid.uuid4().hex[:8]}_"
    timeouts = StoreTimeouts(lock_seconds=0.3, statement_seconds=20)
    target: Any = sa.create_engine(url) if engine_given else url
    store = SQLResultStore(target, table_prefix=prefix, timeouts=timeouts)
    try:
        meta = store.put("kept\n", principal=ADA)
        holder = sa.create_engine(url).connect()
        holder.execute(sa.text(f"LOCK TABLE {prefix}records IN ACCESS EXCLUSIVE MODE"))
        try:
            with pytest.raises(StoreUnavailableError, match="did not answer in time"):
                store.put("y", principal=ADA)
            with pytest.raises(StoreUnavailableError, match="did not answer in time"):
                store.read(meta.record_id, principal=ADA)
        finally:
            holder.rollback()
            holder.close()
        assert store.read(meta.record_id, principal=ADA).data == "kept\n"
    finally:
        store.tables.metadata.drop_all(store.engine)
        store.close()


@pytest.mark.timeout(120)
def test_a_locked_sqlite_file_is_a_bounded_not_saved(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    store = SQLResultStore(f"sqlite:///{path}", timeouts=StoreTimeouts(lock_seconds=0.2))
    store.put("first\n", principal=ADA)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreUnavailableError, match="did not answer in time"):
            store.put("second\n", principal=ADA)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert store.put("third\n", principal=ADA).size == 6
    store.close()


# --------------------------------------------------------------------------- deleted file


def test_a_deleted_sqlite_file_is_reopened_not_written_blindly(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    store = SQLResultStore(f"sqlite:///{path}")
    before = store.put("before\n", principal=ADA)
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{path}{suffix}").exists():
            os.remove(f"{path}{suffix}")
    after = store.put("after\n", principal=ADA)
    assert path.exists()
    # The new record is in the real file: another store (another process) reads it.
    other = SQLResultStore(f"sqlite:///{path}")
    assert other.read(after.record_id, principal=ADA).data == "after\n"
    with pytest.raises(RecordNotAccessibleError):  # gone with the deleted file, honestly
        other.read(before.record_id, principal=ADA)
    other.close()
    store.close()


# --------------------------------------------------------------------------- principals


def test_denials_are_audited_whatever_the_principals_characters(store: Any) -> None:
    meta = store.put("secret\n", principal=ADA)
    odd = [
        Principal(tenant="acme\x00", user="ada", thread="t1"),
        Principal(tenant="acme", user="ada\ud800", thread="t1"),
        Principal(tenant="acme", user="ada", thread="t1\n"),
    ]
    for caller in odd:
        with pytest.raises(RecordNotAccessibleError):
            store.read(meta.record_id, principal=caller)
    denied = [e for e in store.audit_log(record_id=meta.record_id) if not e.granted]
    assert len(denied) == len(odd)
    tenants = {e.principal.tenant for e in denied}
    assert "acme\x00" in tenants or "acme\\x00" in tenants
    with pytest.raises(ValueError, match="NUL characters or lone surrogates"):
        store.put("x", principal=odd[0])


def test_safe_audit_text() -> None:
    assert safe_audit_text("plain") == "plain"
    assert safe_audit_text("a\x00b") == "a\\x00b"
    assert safe_audit_text("a\ud800") == "a\\ud800"
    assert safe_audit_text(None) is None


def test_a_store_can_refuse_saves_without_a_principal(tmp_path: Path) -> None:
    policy = AccessPolicy(require_principal=True)
    for store in (
        InMemoryResultStore(access=policy),
        SQLResultStore(f"sqlite:///{tmp_path / 'r.db'}", access=policy),
        LangGraphResultStore(InMemoryStore(), access=policy),
    ):
        with pytest.raises(ValueError, match="no principal"):
            store.put("x", principal=Principal())
        assert store.put("x", principal=Principal(thread="t1")).size == 1
    layer = ResultLayer(
        context_window=16_000,
        store=InMemoryResultStore(access=policy),
        token_counter="approximate",
    )
    out = layer.process_tool_message(ToolMessage(content=BIG, tool_call_id="c1", name="t"))
    assert "could not be saved" in str(out.content)
    assert "no principal" in str(out.content)


def test_without_the_setting_anonymous_records_are_shared_by_anonymous_callers() -> None:
    # What the README states: with no principal, every caller without one can read.
    store = InMemoryResultStore()
    meta = store.put("x", principal=Principal())
    assert store.read(meta.record_id, principal=Principal()).data == "x"
    with pytest.raises(RecordNotAccessibleError):
        store.read(meta.record_id, principal=Principal(user="ada"))


def test_principal_values_compare_as_text() -> None:
    resolve = PrincipalResolver()
    # An int tenant is refused: 1 and "1" are never one principal (issue 12 item 9).
    with pytest.raises(TypeError, match="compared as the strings they were given"):
        resolve({"configurable": {"tenant_id": 1, "user_id": "ada"}})
    as_str = resolve({"configurable": {"tenant_id": "1", "user_id": "ada"}})
    assert as_str == Principal(tenant="1", user="ada")
    thread = uuid.UUID(int=7)
    assert resolve({"configurable": {"thread_id": thread}}).thread == str(thread)
    for bad in (True, 1.0, {"id": 1}, object()):
        with pytest.raises(TypeError, match="compared as the strings they were given"):
            resolve({"configurable": {"tenant_id": bad}})
