"""Result stores: in-memory, SQLAlchemy (SQLite, PostgreSQL) and LangGraph `BaseStore`.

`resolve_store` turns the `store=` argument of `ResultLayer` into a `ResultStore`.

Example:
    ```python
    from langchain_result_layer.stores import resolve_store

    store = resolve_store("memory")
    ```
"""

from __future__ import annotations

from typing import Any

from langchain_result_layer.stores.base import (
    DEFAULT_TTL_SECONDS,
    AuditEntry,
    Principal,
    ReadResult,
    RecordMeta,
    ResultStore,
)
from langchain_result_layer.stores.memory import InMemoryResultStore

__all__ = [
    "DEFAULT_TTL_SECONDS",
    "AuditEntry",
    "InMemoryResultStore",
    "Principal",
    "ReadResult",
    "RecordMeta",
    "ResultStore",
    "resolve_store",
]


def resolve_store(spec: Any) -> ResultStore | None:
    """Turn a `store=` argument into a store.

    Args:
        spec: `None` or `"memory"` (in-memory), `False` (no storage), a SQLAlchemy URL string
            or `Engine` (SQL store), a LangGraph `BaseStore`, or a `ResultStore`.

    Returns:
        The store, or `None` for `False`.

    Raises:
        TypeError: For anything else.

    Example:
        ```python
        assert resolve_store(False) is None
        ```
    """
    if spec is False:
        return None
    if spec is None or spec == "memory":
        return InMemoryResultStore()
    if isinstance(spec, str):
        from langchain_result_layer.stores.sql import SQLResultStore  # noqa: PLC0415

        return SQLResultStore(spec)
    try:
        from sqlalchemy.engine import Engine  # noqa: PLC0415
    except ImportError:  # pragma: no cover - hard dependency
        Engine = None  # type: ignore[assignment,misc]  # noqa: N806
    if Engine is not None and isinstance(spec, Engine):
        from langchain_result_layer.stores.sql import SQLResultStore  # noqa: PLC0415

        return SQLResultStore(spec)
    try:
        from langgraph.store.base import BaseStore  # noqa: PLC0415
    except ImportError:  # pragma: no cover - hard dependency
        BaseStore = None  # type: ignore[assignment,misc]  # noqa: N806
    if BaseStore is not None and isinstance(spec, BaseStore):
        from langchain_result_layer.stores.langgraph_store import LangGraphResultStore  # noqa: PLC0415

        return LangGraphResultStore(spec)
    if isinstance(spec, ResultStore):
        return spec
    msg = f"store must be 'memory', a SQLAlchemy URL or Engine, a BaseStore or a ResultStore; got {spec!r}"
    raise TypeError(msg)
