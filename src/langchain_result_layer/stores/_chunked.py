"""What every chunked backend shares: its settings, the port's arguments, the async twins.

A backend (`InMemoryResultStore`, `SQLResultStore`, `LangGraphResultStore`) subclasses
`ChunkedResultStore` and writes only what is its own: `_save` (write a checked `PutPlan`),
`_read` (serve a checked `ReadRequest`), `info`, `delete`, `purge_expired`, `usage`,
`audit_log`. The arguments of `put` and `read` are checked here, once, so every backend
refuses the same bad calls with the same errors; the async twins run the sync methods in a
worker thread (an in-process backend may run small ones inline instead).

Example:
    ```python
    from langchain_result_layer.stores._chunked import ReadRequest

    request = ReadRequest.of(start_line=2, end_line=3)
    assert request.line_mode and request.label == "lines=2-3"
    try:
        ReadRequest.of(start_line=2, offset=0)
    except ValueError as exc:
        assert "not both" in str(exc)
    ```
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

from langchain_result_layer.core.slice_request import SliceRequest
from langchain_result_layer.stores._access import (
    DEFAULT_MAX_RECORD_SIZE,
    MIN_CAPPED_SIZE,
    AccessPolicy,
    range_label,
)
from langchain_result_layer.stores._chunks import (
    DEFAULT_CHUNK_SIZE,
    Chunk,
    ChunkSource,
    iter_chunks,
    read_slice,
)
from langchain_result_layer.stores._core import (
    PutPlan,
    StoreStats,
    is_line_mode,
    layout_of,
    plan_put,
    read_result,
)
from langchain_result_layer.stores.base import (
    DEFAULT_TTL_SECONDS,
    Principal,
    PutOptions,
    ReadRange,
    ReadResult,
    RecordMeta,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["ChunkedResultStore", "ReadRequest", "StoreOptions", "put_label"]

_T = TypeVar("_T")


class StoreOptions(TypedDict, total=False):
    """The settings every chunked store takes (`ChunkedResultStore` documents each one).

    Example:
        ```python
        from langchain_result_layer.stores.memory import InMemoryResultStore

        options: StoreOptions = {"default_ttl_seconds": 3600, "tenant_quota": 10_000_000}
        assert InMemoryResultStore(**options).tenant_quota == 10_000_000
        ```
    """

    default_ttl_seconds: float | None
    match_thread: bool
    access: AccessPolicy | None
    max_record_size: int | None
    tenant_quota: int | None
    min_capped_size: int
    chunk_size: int
    clock: Callable[[], float]


@dataclass(frozen=True, slots=True)
class ReadRequest(SliceRequest):
    """The checked arguments of one `read`: a line range, an offset range, or everything.

    The fields are `SliceRequest`'s (the same record a view's fetch steps yield); this adds
    the check and the serving.

    Example:
        ```python
        assert ReadRequest.of(offset=10, limit=5).label == "offset=10+5"
        ```
    """

    @classmethod
    def of(cls, **read_range: Unpack[ReadRange]) -> ReadRequest:
        """Check the arguments of `ResultStore.read` (the one check every backend uses).

        Args:
            **read_range: The range (`ReadRange`: `start_line`, `end_line`, `offset`,
                `limit`, `max_size`).

        Returns:
            The request.

        Raises:
            ValueError: When both a line range and an offset range are given, or a value is
                negative.
            TypeError: When a value is not an integer, or a key is not one of `ReadRange`.
        """
        request = cls(**read_range)
        if (request.start_line is not None or request.end_line is not None) and (
            request.offset is not None or request.limit is not None
        ):
            msg = "give a line range or an offset range, not both"
            raise ValueError(msg)
        for name in (f.name for f in fields(request)):
            value = getattr(request, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                msg = f"{name} must be an integer"
                raise TypeError(msg)
            if value is not None and value < 0:
                msg = f"{name} must be >= 0"
                raise ValueError(msg)
        return request

    @property
    def line_mode(self) -> bool:
        """Whether this is a line read (also when no range is given: everything)."""
        return is_line_mode(self.start_line, self.end_line, self.offset, self.limit)

    @property
    def label(self) -> str:
        """The audit log's text for the range."""
        return range_label(
            start_line=self.start_line, end_line=self.end_line, offset=self.offset, limit=self.limit
        )

    def serve(self, meta: RecordMeta, source: ChunkSource) -> ReadResult:
        """Read the range from a record's chunks.

        Args:
            meta: The record.
            source: Its chunks (loaded on demand).

        Returns:
            The result.
        """
        part = read_slice(layout_of(meta), source, self)
        return read_result(meta, part, line_mode=self.line_mode)


def put_label(meta: RecordMeta) -> str:
    """The audit log's text for a write (`size=N`, and `kept=M` when capped).

    Args:
        meta: The stored record.

    Returns:
        The text.
    """
    return f"size={meta.original_size}" + (f" kept={meta.size}" if meta.capped else "")


class ChunkedResultStore(ABC):
    """The shared part of the chunked `ResultStore` backends (subclass it; see the module).

    Args:
        default_ttl_seconds: Lifetime of records (`None`: forever).
        match_thread: Whether reads must come from the record's thread too (ignored when
            `access` is given).
        access: The full access policy.
        max_record_size: Size cap of one record in characters (bytes); larger results keep a
            bounded head and tail (`None`: no cap).
        tenant_quota: Characters (bytes) one tenant may keep in unexpired records (`None`: no
            quota). A result that does not fit keeps a head and tail that do; when not even
            `min_capped_size` fits, `put` raises `StoreQuotaExceededError`.
        min_capped_size: Smallest head + tail worth keeping under quota pressure.
        chunk_size: Characters (bytes) per chunk.
        clock: Time source (for tests).

    Example:
        ```python
        from langchain_result_layer.stores.memory import InMemoryResultStore

        assert isinstance(InMemoryResultStore(), ChunkedResultStore)
        ```
    """

    def __init__(
        self,
        *,
        default_ttl_seconds: float | None = DEFAULT_TTL_SECONDS,
        match_thread: bool = True,
        access: AccessPolicy | None = None,
        max_record_size: int | None = DEFAULT_MAX_RECORD_SIZE,
        tenant_quota: int | None = None,
        min_capped_size: int = MIN_CAPPED_SIZE,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if chunk_size < 1:
            msg = "chunk_size must be >= 1"
            raise ValueError(msg)
        self.default_ttl_seconds = default_ttl_seconds
        self.access = access if access is not None else AccessPolicy(match_thread=match_thread)
        self.max_record_size = max_record_size
        self.tenant_quota = tenant_quota
        self.min_capped_size = min_capped_size
        self.chunk_size = chunk_size
        self.stats = StoreStats()
        self._clock = clock

    @property
    def match_thread(self) -> bool:
        """Whether reads must come from the record's thread."""
        return self.access.match_thread

    # ------------------------------------------------------------------ what backends write

    @abstractmethod
    def _save(self, plan: PutPlan, principal: Principal) -> RecordMeta:
        """Write a checked record (under the backend's lock or transaction)."""

    @abstractmethod
    def _read(self, record_id: str, principal: Principal, request: ReadRequest) -> ReadResult:
        """Serve a checked read (access checked and audited by the backend)."""

    def _sized(self, plan: PutPlan, used: int | None) -> tuple[RecordMeta, Iterator[Chunk]]:
        """The record under the size cap and the quota, and its chunks.

        `used` is the tenant's usage, when a quota is set (`None` otherwise).

        Raises:
            StoreQuotaExceededError: When even a capped record does not fit the quota.
        """
        meta, gap = self._capped(plan, used)
        return meta, iter_chunks(plan.data, chunk_size=self.chunk_size, gap=gap)

    def _capped(self, plan: PutPlan, used: int | None) -> tuple[RecordMeta, tuple[int, int] | None]:
        """The record under the size cap and the quota, and the range it leaves out (if any).

        Raises:
            StoreQuotaExceededError: When even a capped record does not fit the quota.
        """
        left = None if self.tenant_quota is None or used is None else self.tenant_quota - used
        return plan.finish(
            max_record_size=self.max_record_size,
            quota_left=left,
            min_capped_size=self.min_capped_size,
        )

    # ------------------------------------------------------------------ port

    def put(
        self, data: str | bytes, *, principal: Principal, **options: Unpack[PutOptions]
    ) -> RecordMeta:
        """Store a raw result (see `ResultStore.put`).

        Raises:
            StoreUnavailableError: The backend is unreachable or failed.
            StoreQuotaExceededError: The tenant's quota has no room even for a capped record.
            ValueError: `record_id` is taken or malformed, or an argument is invalid.
        """
        plan = plan_put(
            data,
            principal=principal,
            options=options,
            default_ttl_seconds=self.default_ttl_seconds,
            now=self._clock(),
            require_principal=self.access.require_principal,
        )
        return self._save(plan, principal)

    def read(
        self, record_id: str, *, principal: Principal, **read_range: Unpack[ReadRange]
    ) -> ReadResult:
        """Read a range (see `ResultStore.read`); loads only the chunks the range needs."""
        return self._read(record_id, principal, ReadRequest.of(**read_range))

    @abstractmethod
    def info(self, record_id: str, *, principal: Principal) -> RecordMeta:
        """Metadata of a record (audited; raises `RecordNotAccessibleError`)."""

    @abstractmethod
    def delete(self, record_id: str, *, principal: Principal) -> bool:
        """Delete a record the principal may read; `False` when it is not accessible."""

    @abstractmethod
    def purge_expired(self, *, now: float | None = None) -> int:
        """Delete expired records; returns how many."""

    def _runs_inline(self, size: int | None) -> bool:
        """Whether an async twin runs its sync method inline for work of this size.

        `size` is the characters (bytes) a call writes or reads at most (`None`: not known,
        a whole record); `ainfo` asks with 0. Backends that do I/O never run inline (the
        default); an in-process backend may run small work inline.
        """
        del size
        return False

    async def _twin(self, size: int | None, call: Callable[[], _T]) -> _T:
        """Run `call` inline when `_runs_inline(size)`, else in a worker thread."""
        if self._runs_inline(size):
            return call()
        import asyncio  # noqa: PLC0415 - already loaded where an event loop runs

        return await asyncio.to_thread(call)

    async def aput(self, data: str | bytes, **kwargs: Any) -> RecordMeta:
        """Async twin of `put`."""
        return await self._twin(len(data), lambda: self.put(data, **kwargs))

    async def ainfo(self, record_id: str, *, principal: Principal) -> RecordMeta:
        """Async twin of `info`."""
        return await self._twin(0, lambda: self.info(record_id, principal=principal))

    async def aread(self, record_id: str, **kwargs: Any) -> ReadResult:
        """Async twin of `read` (a read bounded by `max_size` or `limit` may run inline)."""
        size = kwargs.get("max_size") or kwargs.get("limit")
        return await self._twin(size, lambda: self.read(record_id, **kwargs))

    async def adelete(self, record_id: str, *, principal: Principal) -> bool:
        """Async twin of `delete` (runs in a worker thread)."""
        return await self._twin(None, lambda: self.delete(record_id, principal=principal))

    async def apurge_expired(self, *, now: float | None = None) -> int:
        """Async twin of `purge_expired` (runs in a worker thread)."""
        return await self._twin(None, lambda: self.purge_expired(now=now))
