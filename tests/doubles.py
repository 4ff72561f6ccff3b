"""Test doubles shared by the tests (one definition each)."""

from __future__ import annotations

from typing import Any

from langchain_result_layer.errors import StoreUnavailableError
from langchain_result_layer.stores import InMemoryResultStore
from langchain_result_layer.stores.base import RecordMeta


class DownStore(InMemoryResultStore):
    """An in-memory store whose writes fail while it is down (fault injection for an outage).

    `DownStore()` starts up; set `down = True` to make every `put`/`aput` raise
    `StoreUnavailableError("connection refused")`. `DownStore(error)` is down from the start
    and raises `error` (a quota error, say). Reads always work: what was stored stays readable.
    """

    def __init__(self, error: Exception | None = None) -> None:
        super().__init__()
        self.error = error
        self.down = error is not None

    def _fail(self) -> None:
        if self.down:
            raise self.error or StoreUnavailableError("connection refused")

    def put(self, data: str | bytes, **kwargs: Any) -> RecordMeta:
        self._fail()
        return super().put(data, **kwargs)

    async def aput(self, data: str | bytes, **kwargs: Any) -> RecordMeta:
        self._fail()
        return await super().aput(data, **kwargs)
