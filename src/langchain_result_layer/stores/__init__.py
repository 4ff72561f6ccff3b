"""Result stores: in-memory, SQLAlchemy (SQLite, PostgreSQL) and LangGraph `BaseStore`.

`resolve_store` turns the `store=` argument of `ResultLayer` into a `ResultStore`.

Example:
    ```python
    from langchain_result_layer.stores import resolve_store

    store = resolve_store("memory")
    ```
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langchain_result_layer.stores._access import AccessPolicy
from langchain_result_layer.stores._faults import StoreTimeouts
from langchain_result_layer.stores.base import (
    DEFAULT_TTL_SECONDS,
    AuditEntry,
    Principal,
    ReadResult,
    RecordMeta,
    ResultStore,
)
from langchain_result_layer.stores.memory import InMemoryResultStore

if TYPE_CHECKING:
    # Imported on first use (`__getattr__` below): SQLAlchemy and LangGraph load only when a
    # SQL or LangGraph store is asked for.
    from langchain_result_layer.stores.langgraph_store import LangGraphResultStore
    from langchain_result_layer.stores.sql import SQLResultStore

__all__ = [
    "DEFAULT_TTL_SECONDS",
    "AccessPolicy",
    "AuditEntry",
    "InMemoryResultStore",
    "LangGraphResultStore",
    "Principal",
    "ReadResult",
    "RecordMeta",
    "ResultStore",
    "SQLResultStore",
    "StoreTimeouts",
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
        sqlalchemy.exc.ArgumentError: For a string that is not a SQLAlchemy URL.

    Example:
        ```python
        assert resolve_store(False) is None
        ```
    """
    if spec is False:
        return None
    if spec is None or (isinstance(spec, str) and spec == "memory"):
        return InMemoryResultStore()
    if isinstance(spec, str):
        from langchain_result_layer.stores.sql import SQLResultStore  # noqa: PLC0415

        return SQLResultStore(spec)
    if isinstance(spec, ResultStore):
        return spec
    from sqlalchemy.engine import Engine  # noqa: PLC0415

    if isinstance(spec, Engine):
        from langchain_result_layer.stores.sql import SQLResultStore  # noqa: PLC0415

        return SQLResultStore(spec)
    from langgraph.store.base import BaseStore  # noqa: PLC0415

    if isinstance(spec, BaseStore):
        from langchain_result_layer.stores.langgraph_store import (  # noqa: PLC0415
            LangGraphResultStore,
        )

        return LangGraphResultStore(spec)
    msg = (
        "store must be 'memory', a SQLAlchemy URL or Engine, a LangGraph BaseStore, a "
        f"ResultStore or False; got {spec!r}"
    )
    raise TypeError(msg)


def __getattr__(name: str) -> Any:
    """Import the SQL and LangGraph stores on first use (they load SQLAlchemy and LangGraph)."""
    if name == "SQLResultStore":
        from langchain_result_layer.stores.sql import SQLResultStore  # noqa: PLC0415

        return SQLResultStore
    if name == "LangGraphResultStore":
        from langchain_result_layer.stores.langgraph_store import (  # noqa: PLC0415
            LangGraphResultStore,
        )

        return LangGraphResultStore
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)
