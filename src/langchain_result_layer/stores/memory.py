"""In-memory result store: process-local, thread-safe, with the same semantics as the others.

Useful for tests, notebooks and single-process agents whose conversations do not outlive the
process. Use the SQLite store for anything that must survive a restart.

Example:
    ```python
    from langchain_result_layer.stores.memory import InMemoryResultStore
    from langchain_result_layer.stores.base import Principal

    store = InMemoryResultStore()
    meta = store.put("hello\\nworld\\n", principal=Principal())
    assert store.read(meta.record_id, principal=Principal(), start_line=2).data == "world\\n"
    ```
"""

from __future__ import annotations

import asyncio
import bisect
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langchain_result_layer.core.reference import new_record_id
from langchain_result_layer.errors import RecordNotAccessibleError
from langchain_result_layer.stores.base import (
    DEFAULT_TTL_SECONDS,
    AuditEntry,
    Principal,
    ReadResult,
    RecordMeta,
)

__all__ = ["InMemoryResultStore"]


@dataclass(slots=True)
class _Record:
    meta: RecordMeta
    data: str | bytes
    line_starts: list[int]


def _line_starts(data: str | bytes) -> list[int]:
    nl: Any = "\n" if isinstance(data, str) else b"\n"
    starts = [0]
    find = data.find
    pos = find(nl)
    while pos >= 0:
        starts.append(pos + 1)
        pos = find(nl, pos + 1)
    if starts[-1] == len(data) and len(starts) > 1:
        starts.pop()
    if not data:
        return []
    return starts


class InMemoryResultStore:
    """A `ResultStore` kept in a dict.

    Args:
        default_ttl_seconds: Lifetime of records (`None`: forever).
        match_thread: Whether reads must come from the record's thread too.
        clock: Time source (for tests).

    Example:
        ```python
        store = InMemoryResultStore(default_ttl_seconds=3600)
        ```
    """

    def __init__(
        self,
        *,
        default_ttl_seconds: float | None = DEFAULT_TTL_SECONDS,
        match_thread: bool = True,
        clock: Any = time.time,
    ) -> None:
        self.default_ttl_seconds = default_ttl_seconds
        self.match_thread = match_thread
        self._clock = clock
        self._records: dict[str, _Record] = {}
        self._audit: list[AuditEntry] = []
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ helpers

    def _allowed(self, meta: RecordMeta, principal: Principal) -> bool:
        owner = meta.principal
        if owner.tenant != principal.tenant or owner.user != principal.user:
            return False
        return not (self.match_thread and owner.thread != principal.thread)

    def _get(self, record_id: str, principal: Principal, action: str, rng: str) -> _Record:
        with self._lock:
            record = self._records.get(record_id)
            now = self._clock()
            ok = (
                record is not None
                and (record.meta.expires_at is None or record.meta.expires_at > now)
                and self._allowed(record.meta, principal)
            )
            self._audit.append(
                AuditEntry(at=now, principal=principal, record_id=record_id, action=action,
                           range=rng, granted=ok)
            )
            if not ok or record is None:
                raise RecordNotAccessibleError(record_id)
            return record

    # ------------------------------------------------------------------ port

    def put(
        self,
        data: str | bytes,
        *,
        principal: Principal,
        kind: str = "text",
        tool_name: str | None = None,
        tool_call_id: str | None = None,
        ttl_seconds: float | None = None,
        extra: Mapping[str, Any] | None = None,
        record_id: str | None = None,
    ) -> RecordMeta:
        """Store `data` (see `ResultStore.put`)."""
        if not isinstance(data, (str, bytes)):
            msg = f"data must be str or bytes, got {type(data).__name__}"
            raise TypeError(msg)
        now = self._clock()
        ttl = ttl_seconds if ttl_seconds is not None else self.default_ttl_seconds
        starts = _line_starts(data)
        meta = RecordMeta(
            record_id=record_id or new_record_id(),
            kind=kind,
            principal=principal,
            is_binary=isinstance(data, bytes),
            size=len(data),
            original_size=len(data),
            line_count=len(starts),
            capped=False,
            created_at=now,
            expires_at=None if ttl is None else now + ttl,
            tool_name=tool_name,
            tool_call_id=tool_call_id,
            extra=dict(extra or {}),
        )
        with self._lock:
            self._records[meta.record_id] = _Record(meta=meta, data=data, line_starts=starts)
            self._audit.append(
                AuditEntry(at=now, principal=principal, record_id=meta.record_id, action="put",
                           range=f"size={len(data)}", granted=True)
            )
        return meta

    async def aput(self, data: str | bytes, **kwargs: Any) -> RecordMeta:
        """Async twin of `put`."""
        return self.put(data, **kwargs)

    def info(self, record_id: str, *, principal: Principal) -> RecordMeta:
        """Metadata of a record."""
        return self._get(record_id, principal, "info", "").meta

    async def ainfo(self, record_id: str, *, principal: Principal) -> RecordMeta:
        """Async twin of `info`."""
        return self.info(record_id, principal=principal)

    def read(
        self,
        record_id: str,
        *,
        principal: Principal,
        start_line: int | None = None,
        end_line: int | None = None,
        offset: int | None = None,
        limit: int | None = None,
    ) -> ReadResult:
        """Read a range (see `ResultStore.read`)."""
        if (start_line is not None or end_line is not None) and (
            offset is not None or limit is not None
        ):
            msg = "give a line range or an offset range, not both"
            raise ValueError(msg)
        if offset is not None or limit is not None:
            rng = f"offset={offset or 0}+{limit}"
        elif start_line is not None or end_line is not None:
            rng = f"lines={start_line or 1}-{end_line or ''}"
        else:
            rng = "all"
        record = self._get(record_id, principal, "read", rng)
        data = record.data
        n = len(data)
        starts = record.line_starts
        if offset is not None or limit is not None:
            lo = max(0, offset or 0)
            hi = n if limit is None else min(n, lo + max(0, limit))
            lo = min(lo, n)
            return ReadResult(meta=record.meta, data=data[lo:hi], start_line=None, end_line=None,
                              offset=lo, end_offset=hi)
        total = len(starts)
        first = max(1, start_line or 1)
        last = total if end_line is None else min(total, end_line)
        if first > total or last < first:
            return ReadResult(meta=record.meta, data=data[n:n], start_line=first, end_line=first - 1,
                              offset=n, end_offset=n)
        lo = starts[first - 1]
        hi = starts[last] if last < total else n
        return ReadResult(meta=record.meta, data=data[lo:hi], start_line=first, end_line=last,
                          offset=lo, end_offset=hi)

    async def aread(self, record_id: str, **kwargs: Any) -> ReadResult:
        """Async twin of `read`."""
        return self.read(record_id, **kwargs)

    def delete(self, record_id: str, *, principal: Principal) -> bool:
        """Delete a record the principal owns."""
        try:
            self._get(record_id, principal, "delete", "")
        except RecordNotAccessibleError:
            return False
        with self._lock:
            return self._records.pop(record_id, None) is not None

    def purge_expired(self, *, now: float | None = None) -> int:
        """Delete expired records."""
        now = self._clock() if now is None else now
        with self._lock:
            dead = [k for k, r in self._records.items()
                    if r.meta.expires_at is not None and r.meta.expires_at <= now]
            for k in dead:
                del self._records[k]
        return len(dead)

    def audit_log(self, *, record_id: str | None = None, limit: int = 100) -> list[AuditEntry]:
        """Most recent audit entries first."""
        with self._lock:
            entries = [e for e in reversed(self._audit) if record_id is None or e.record_id == record_id]
        return entries[:limit]

    def close(self) -> None:
        """Nothing to release."""

    def line_of_offset(self, record_id: str, offset: int) -> int:
        """1-based line of a character offset (test helper)."""
        record = self._records[record_id]
        return bisect.bisect_right(record.line_starts, offset)


async def _to_thread(fn: Any, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover - unused
    return await asyncio.to_thread(fn, *args, **kwargs)
