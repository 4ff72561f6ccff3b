"""Store backends for parametrised tests: memory, SQLite (file and in-memory), PostgreSQL,
LangGraph `BaseStore` (InMemoryStore, SqliteStore).

PostgreSQL comes from `LRL_POSTGRES_URL`. Locally the PostgreSQL cases skip when it is unset
or unreachable; with `CI=true` that is a failure, not a skip.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from langchain_result_layer.stores import (
    InMemoryResultStore,
    LangGraphResultStore,
    SQLResultStore,
)

IN_CI = os.environ.get("CI", "").lower() == "true"
PG_URL = os.environ.get("LRL_POSTGRES_URL")

BACKENDS = [
    "memory",
    "sqlite_file",
    "sqlite_memory",
    "postgres",
    "langgraph_memory",
    "langgraph_sqlite",
    "langgraph_postgres",
]
SQL_BACKENDS = ["sqlite_file", "postgres"]
POSTGRES_BACKENDS = {"postgres", "langgraph_postgres"}


def backend_params(names: list[str]) -> list[Any]:
    """`pytest.param`s, PostgreSQL ones marked `postgres`."""
    return [
        pytest.param(n, marks=pytest.mark.postgres) if n in POSTGRES_BACKENDS else n for n in names
    ]


def require_module(name: str, package: str) -> None:
    """Import `name` or skip (fail in CI, where the test extras are installed)."""
    try:
        __import__(name)
    except ImportError:
        msg = f"{package} is not installed"
        if IN_CI:
            pytest.fail(msg)
        pytest.skip(msg)


_pg_checked: dict[str, str | None] = {}


def require_postgres() -> str:
    """The PostgreSQL URL, or skip (fail in CI) when none is usable."""
    if not PG_URL:
        msg = "LRL_POSTGRES_URL is not set"
        if IN_CI:
            pytest.fail(f"{msg}: PostgreSQL is required in CI")
        pytest.skip(msg)
    if PG_URL not in _pg_checked:
        import sqlalchemy as sa

        try:
            engine = sa.create_engine(PG_URL, connect_args={"connect_timeout": 5})
            with engine.connect() as conn:
                conn.execute(sa.text("select 1"))
            engine.dispose()
            _pg_checked[PG_URL] = None
        except Exception as exc:
            _pg_checked[PG_URL] = f"{type(exc).__name__}: {exc}"
    problem = _pg_checked[PG_URL]
    if problem is not None:
        msg = f"PostgreSQL at LRL_POSTGRES_URL is unreachable: {problem[:300]}"
        if IN_CI:
            pytest.fail(msg)
        pytest.skip(msg)
    return PG_URL


def _drop_prefix(store: SQLResultStore) -> None:
    store.tables.metadata.drop_all(store.engine)


def make_store(name: str, tmp_path: Path, **options: Any) -> tuple[Any, Callable[[], None]]:
    """A fresh store of backend `name` and its cleanup."""
    if name == "memory":
        return InMemoryResultStore(**options), lambda: None
    if name == "sqlite_file":
        store = SQLResultStore(f"sqlite:///{tmp_path / 'results.db'}", **options)
        return store, store.close
    if name == "sqlite_memory":
        store = SQLResultStore("sqlite://", **options)
        return store, store.close
    if name == "postgres":
        url = require_postgres()
        prefix = f"t{secrets.token_hex(4)}_"
        store = SQLResultStore(url, table_prefix=prefix, **options)

        def cleanup() -> None:
            try:
                _drop_prefix(store)
            finally:
                store.close()

        return store, cleanup
    if name == "langgraph_memory":
        from langgraph.store.memory import InMemoryStore

        return LangGraphResultStore(InMemoryStore(), **options), lambda: None
    if name == "langgraph_sqlite":
        import sqlite3

        require_module("langgraph.store.sqlite", "langgraph-checkpoint-sqlite")

        from langgraph.store.sqlite import SqliteStore

        conn = sqlite3.connect(tmp_path / "lg.db", check_same_thread=False, isolation_level=None)
        lg = SqliteStore(conn)
        lg.setup()
        return LangGraphResultStore(lg, **options), conn.close
    if name == "langgraph_postgres":
        url = require_postgres()
        require_module("langgraph.store.postgres", "langgraph-checkpoint-postgres")
        from langgraph.store.postgres import PostgresStore
        from psycopg import Connection
        from psycopg.rows import dict_row

        plain = url.replace("postgresql+psycopg://", "postgresql://", 1)
        pg_conn = Connection.connect(
            plain, autocommit=True, prepare_threshold=0, row_factory=dict_row
        )
        pg_store = PostgresStore(pg_conn)
        pg_store.setup()
        label = f"lrl_test_{secrets.token_hex(4)}"

        def cleanup_pg() -> None:
            try:
                pg_conn.execute("DELETE FROM store WHERE prefix LIKE %s", (label + "%",))
            finally:
                pg_conn.close()

        return LangGraphResultStore(pg_store, namespace=(label,), **options), cleanup_pg
    raise ValueError(name)
