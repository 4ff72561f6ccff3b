r"""In-memory result store: process-local, thread-safe, with the same semantics as the others.

Useful for tests, notebooks and single-process agents whose conversations do not outlive the
process. Use the SQLite store for anything that must survive a restart. Records are kept in
the same chunked layout as the database stores (no per-line index in memory), so a 100 MB
result costs about 100 MB, and a range read copies only what it returns.

Example:
    ```python
    from langchain_result_layer.stores.memory import InMemoryResultStore
    from langchain_result_layer.stores.base import Principal

    store = InMemoryResultStore()
    meta = store.put("hello\nworld\n", principal=Principal())
    assert store.read(meta.record_id, principal=Principal(), start_line=2).data == "world\n"
    ```
"""

from __future__ import annotations

import bisect
import threading
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING

from langchain_result_layer.errors import RecordNotAccessibleError
from langchain_result_layer.stores._chunked import ChunkedResultStore, put_label
from langchain_result_layer.stores._chunks import (
    Chunk,
    ListChunkSource,
    count_newlines,
    iter_chunks,
)
from langchain_result_layer.stores._core import ASYNC_INLINE_LIMIT, PutPlan, permitted
from langchain_result_layer.stores.base import AuditEntry, Principal, ReadResult, RecordMeta

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from langchain_result_layer.stores._chunked import ReadRequest, StoreOptions

__all__ = ["InMemoryResultStore"]


@dataclass(slots=True)
class _Record:
    """A stored result: its data, cut into chunks when it is first read.

    A record that is written and never read (most of a layer's: the model reads few of
    them) costs no copy of its data and no count of its chunks' newlines. A capped record
    is cut at once (it keeps only its chunks, not the data left out).
    """

    meta: RecordMeta
    data: str | bytes
    gap: tuple[int, int] | None
    """The range left out of a capped record (`None`: all of it is kept)."""
    chunk_size: int
    _chunks: list[Chunk] | None = None
    _starts: list[int] | None = None
    _nl_before: list[int] | None = None

    def layout(self) -> tuple[list[Chunk], list[int], list[int]]:
        """The chunks, their starts and the newlines before each (made once)."""
        if self._chunks is None or self._starts is None or self._nl_before is None:
            chunks = list(iter_chunks(self.data, chunk_size=self.chunk_size, gap=self.gap))
            self._starts = [c.start for c in chunks]
            self._nl_before = [c.nl_before for c in chunks]
            self._chunks = chunks
            self.data = self.data[:0]  # the chunks hold it now
        return self._chunks, self._starts, self._nl_before


class InMemoryResultStore(ChunkedResultStore):
    """A `ResultStore` kept in a dict.

    Args:
        max_audit_entries: Audit entries kept (oldest dropped first).
        **options: The settings every store takes (`StoreOptions`: lifetime, access, size
            cap, quota, chunk size, clock).

    Example:
        ```python
        store = InMemoryResultStore(default_ttl_seconds=3600)
        ```
    """

    def __init__(
        self,
        *,
        max_audit_entries: int = 100_000,
        **options: Unpack[StoreOptions],
    ) -> None:
        super().__init__(**options)
        self._records: dict[str, _Record] = {}
        self._audit: deque[AuditEntry] = deque(maxlen=max_audit_entries)
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ helpers

    def _audit_add(  # noqa: PLR0917
        self, now: float, principal: Principal, record_id: str, action: str, rng: str, ok: bool
    ) -> None:
        self._audit.append(
            AuditEntry(
                at=now,
                principal=principal,
                record_id=record_id,
                action=action,
                range=rng,
                granted=ok,
            )
        )

    def _get(self, record_id: str, principal: Principal, action: str, rng: str) -> _Record:
        with self._lock:
            now = self._clock()
            record = self._records.get(record_id) if isinstance(record_id, str) else None
            ok = permitted(record.meta if record else None, principal, self.access, now)
            self._audit_add(now, principal, str(record_id), action, rng, ok)
            if not ok or record is None:
                raise RecordNotAccessibleError(str(record_id))
            return record

    def _usage(self, tenant: str | None, now: float) -> int:
        return sum(
            r.meta.size
            for r in self._records.values()
            if r.meta.principal.tenant == tenant and not r.meta.is_expired(now)
        )

    # ------------------------------------------------------------------ port

    def _save(self, plan: PutPlan, principal: Principal) -> RecordMeta:
        with self._lock:
            if plan.record_id in self._records:
                msg = f"record id {plan.record_id!r} is already taken"
                raise ValueError(msg)
            tenant, now = plan.principal.tenant, plan.created_at
            used = self._usage(tenant, now) if self.tenant_quota is not None else None
            meta, gap = self._capped(plan, used)
            record = _Record(meta=meta, data=plan.data, gap=gap, chunk_size=self.chunk_size)
            if gap is not None:
                record.layout()  # a capped record keeps only its chunks, not all of the data
            self._records[meta.record_id] = record
            self._audit_add(
                plan.created_at, principal, meta.record_id, "put", put_label(meta), True
            )
        return meta

    def _runs_inline(self, size: int | None) -> bool:
        """Small work runs inline: in-process, it is cheaper than a thread hop."""
        return size is not None and size <= ASYNC_INLINE_LIMIT

    def info(self, record_id: str, *, principal: Principal) -> RecordMeta:
        """Metadata of a record."""
        return self._get(record_id, principal, "info", "").meta

    def _read(self, record_id: str, principal: Principal, request: ReadRequest) -> ReadResult:
        record = self._get(record_id, principal, "read", request.label)
        with self._lock:  # the chunks are made by the first read
            chunks, starts, nl_before = record.layout()

        def load(i: int) -> Chunk:
            return chunks[i]

        source = ListChunkSource(starts, nl_before, load)
        result = request.serve(record.meta, source)
        self.stats.add(len(source.loaded))
        return result

    def delete(self, record_id: str, *, principal: Principal) -> bool:
        """Delete a record the principal owns."""
        try:
            self._get(record_id, principal, "delete", "")
        except RecordNotAccessibleError:
            return False
        with self._lock:
            return self._records.pop(record_id, None) is not None

    async def adelete(self, record_id: str, *, principal: Principal) -> bool:
        """Async twin of `delete`."""
        return self.delete(record_id, principal=principal)

    def purge_expired(self, *, now: float | None = None) -> int:
        """Delete expired records."""
        now = self._clock() if now is None else now
        with self._lock:
            dead = [k for k, r in self._records.items() if r.meta.is_expired(now)]
            for k in dead:
                del self._records[k]
        return len(dead)

    async def apurge_expired(self, *, now: float | None = None) -> int:
        """Async twin of `purge_expired`."""
        return self.purge_expired(now=now)

    def usage(self, tenant: str | None) -> int:
        """Characters (bytes) a tenant keeps in unexpired records.

        Args:
            tenant: The tenant.

        Returns:
            The total the quota is measured against.
        """
        with self._lock:
            return self._usage(tenant, self._clock())

    def audit_log(self, *, record_id: str | None = None, limit: int = 100) -> list[AuditEntry]:
        """Most recent audit entries first."""
        with self._lock:
            entries = [
                e for e in reversed(self._audit) if record_id is None or e.record_id == record_id
            ]
        return entries[:limit]

    def close(self) -> None:
        """Nothing to release."""

    def line_of_offset(self, record_id: str, offset: int) -> int:
        """1-based line of a character offset (test helper; no access check).

        Args:
            record_id: The record.
            offset: A character offset.

        Returns:
            The line number.
        """
        chunks, starts, _ = self._records[record_id].layout()
        i = max(0, bisect.bisect_right(starts, offset) - 1)
        chunk = chunks[i]
        return chunk.nl_before + count_newlines(chunk.data[: max(0, offset - chunk.start)]) + 1

    def __repr__(self) -> str:
        return f"InMemoryResultStore(records={len(self._records)}, access={self.access!r})"
