"""Steps every backend shares: planning a write, checking a read, building results."""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_result_layer.core.reference import (
    PLAIN_KIND,
    is_kind_name,
    is_record_id,
    new_record_id,
)
from langchain_result_layer.errors import StoreQuotaExceededError
from langchain_result_layer.stores._access import AccessPolicy, decide_cap, expiry
from langchain_result_layer.stores._chunks import (
    Layout,
    Slice,
    count_newlines,
    line_count_of,
    plan_cap,
)
from langchain_result_layer.stores._faults import safe_audit_text
from langchain_result_layer.stores.base import Principal, PutOptions, ReadResult, RecordMeta

__all__ = [
    "ASYNC_INLINE_LIMIT",
    "MetaColumns",
    "PutPlan",
    "StoreStats",
    "check_principal",
    "layout_of",
    "plan_put",
    "read_result",
    "validate_record_id",
]

logger = logging.getLogger("langchain_result_layer.stores")

ASYNC_INLINE_LIMIT = 262_144
"""Below this size, in-process stores do async work inline instead of in a thread."""


def validate_record_id(record_id: object) -> bool:
    """Whether `record_id` has the shape of a record id (matched whole)."""
    return is_record_id(record_id)


@dataclass(slots=True)
class StoreStats:
    """Counters of what reads cost (for tests and benchmarks).

    Attributes:
        chunk_reads: Chunks loaded by reads since the store was created (or last reset).
    """

    chunk_reads: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, chunks: int) -> None:
        """Count chunks loaded."""
        with self._lock:
            self.chunk_reads += chunks

    def reset(self) -> None:
        """Zero the counters."""
        with self._lock:
            self.chunk_reads = 0


@dataclass(frozen=True, slots=True)
class PutPlan:
    """A checked write: the metadata before any cap, and the data."""

    data: str | bytes
    record_id: str
    kind: str
    principal: Principal
    size: int
    newlines: int
    line_count: int
    created_at: float
    expires_at: float | None
    tool_name: str | None
    tool_call_id: str | None
    extra: dict[str, Any]
    given_id: bool = False
    """Whether the caller chose `record_id` (a random one is never taken)."""

    def finish(
        self,
        *,
        max_record_size: int | None,
        quota_left: int | None,
        min_capped_size: int,
    ) -> tuple[RecordMeta, tuple[int, int] | None]:
        """Apply the size cap and the quota.

        Returns:
            The record's metadata and the gap to leave out (`None`: keep everything).

        Raises:
            StoreQuotaExceededError: When even a capped record does not fit the quota.
        """
        decision = decide_cap(
            self.size,
            max_record_size=max_record_size,
            quota_left=quota_left,
            min_capped_size=min_capped_size,
        )
        if decision is None:
            tenant = self.principal.tenant or "(no tenant)"
            msg = (
                f"tenant {tenant!r} has {max(0, quota_left or 0):,} units of quota left; "
                f"a {self.size:,}-unit result does not fit even when capped"
            )
            raise StoreQuotaExceededError(msg)
        gap = plan_cap(self.data, decision.keep) if decision.keep < self.size else None
        kept = self.size - (gap[1] - gap[0]) if gap else self.size
        if gap is not None:
            logger.warning(
                "result %s of %r capped by the %s: kept %d of %d units (head and tail)",
                self.record_id,
                self.tool_name,
                decision.reason,
                kept,
                self.size,
            )
        meta = RecordMeta(
            record_id=self.record_id,
            kind=self.kind,
            principal=self.principal,
            is_binary=isinstance(self.data, bytes),
            size=kept,
            original_size=self.size,
            line_count=self.line_count,
            capped=gap is not None,
            created_at=self.created_at,
            expires_at=self.expires_at,
            tool_name=self.tool_name,
            tool_call_id=self.tool_call_id,
            extra=self.extra,
            gap_start=gap[0] if gap else None,
            gap_end=gap[1] if gap else None,
            cap_reason=decision.reason if gap else None,
        )
        return meta, gap


def plan_put(
    data: object,
    *,
    principal: object,
    options: PutOptions,
    default_ttl_seconds: float | None,
    now: float,
    require_principal: bool = False,
) -> PutPlan:
    """Validate the arguments of `put` and measure the data.

    Args:
        data: The result.
        principal: Its owner.
        options: The rest of `put`'s arguments (`PutOptions`).
        default_ttl_seconds: The store's TTL for records that name none.
        now: The time of the write.
        require_principal: Whether an empty principal is refused.

    Returns:
        The checked write.

    Raises:
        TypeError: Bad argument types.
        ValueError: Bad id, kind or TTL; a principal with NUL characters or lone surrogates
            (no database stores them the same); an empty principal when
            `require_principal`.
    """
    kind = options.get("kind", PLAIN_KIND)
    record_id = options.get("record_id")
    if isinstance(data, (bytearray, memoryview)):
        data = bytes(data)
    if not isinstance(data, (str, bytes)):
        msg = f"data must be str or bytes, got {type(data).__name__}"
        raise TypeError(msg)
    if not isinstance(principal, Principal):
        msg = f"principal must be a Principal, got {type(principal).__name__}"
        raise TypeError(msg)
    check_principal(principal, require=require_principal)
    if not is_kind_name(kind):
        msg = f"kind must match [a-z][a-z0-9_]{{0,31}}, got {kind!r}"
        raise ValueError(msg)
    if record_id is not None and not validate_record_id(record_id):
        msg = f"record_id must be 8-64 characters of [A-Za-z0-9_-], got {record_id!r}"
        raise ValueError(msg)
    size = len(data)
    newlines = count_newlines(data)
    ends = size > 0 and data[-1:] in ("\n", b"\n")
    return PutPlan(
        data=data,
        record_id=record_id or new_record_id(),
        kind=kind,
        principal=principal,
        size=size,
        newlines=newlines,
        line_count=line_count_of(size, newlines, ends),
        created_at=now,
        expires_at=expiry(now, options.get("ttl_seconds"), default_ttl_seconds),
        tool_name=options.get("tool_name"),
        tool_call_id=options.get("tool_call_id"),
        extra=dict(options.get("extra") or {}),
        given_id=record_id is not None,
    )


def check_principal(principal: Principal, *, require: bool) -> None:
    """Refuse a principal a store cannot keep exactly, or an empty one when `require`.

    Raises:
        ValueError: With what to fix.
    """
    for name, value in principal.as_dict().items():
        if value is not None and safe_audit_text(value) != value:
            msg = (
                f"the principal's {name} contains NUL characters or lone surrogates; a result "
                "saved under it could not be kept the same by every store"
            )
            raise ValueError(msg)
    if require and not any(principal.as_dict().values()):  # None and "" name nobody
        msg = (
            "this store refuses results saved with no principal (no tenant, user or thread, "
            "or only empty ones: "
            "AccessPolicy(require_principal=True)); pass tenant_id, user_id or thread_id in "
            "the run's config"
        )
        raise ValueError(msg)


def layout_of(meta: RecordMeta) -> Layout:
    """The read coordinates of a record."""
    return Layout(
        size=meta.original_size,
        line_count=meta.line_count,
        is_binary=meta.is_binary,
        gap_start=meta.gap_start,
        gap_end=meta.gap_end,
    )


_META_FIELDS = (
    "record_id",
    "kind",
    "is_binary",
    "size",
    "original_size",
    "line_count",
    "capped",
    "created_at",
    "expires_at",
    "tool_name",
    "tool_call_id",
    "gap_start",
    "gap_end",
    "cap_reason",
)
"""The fields of `RecordMeta` a backend keeps as they are (besides the principal and extra)."""


@dataclass(frozen=True, slots=True)
class MetaColumns:
    """How a backend names the principal's parts among a record's flat fields.

    Example:
        ```python
        columns = MetaColumns(user="user_id", thread="thread_id")
        meta = store.info(ref.record_id, principal=Principal())
        flat = columns.flatten(meta)
        assert flat["user_id"] is None and columns.meta(flat, extra={}) == meta
        ```
    """

    user: str = "user"
    """The field of `Principal.user`."""
    thread: str = "thread"
    """The field of `Principal.thread`."""

    def flatten(self, meta: RecordMeta) -> dict[str, Any]:
        """The record's metadata as flat fields, without `extra` (each backend encodes it)."""
        fields = {name: getattr(meta, name) for name in _META_FIELDS}
        fields["tenant"] = meta.principal.tenant
        fields[self.user] = meta.principal.user
        fields[self.thread] = meta.principal.thread
        return fields

    def meta(self, fields: Mapping[str, Any], *, extra: Mapping[str, Any]) -> RecordMeta:
        """The metadata back from flat fields (optional ones may be missing) and its `extra`."""

        def number(name: str, cast: type[int] | type[float]) -> Any:
            value = fields.get(name)
            return None if value is None else cast(value)

        return RecordMeta(
            record_id=fields["record_id"],
            kind=fields["kind"],
            principal=Principal(
                tenant=fields.get("tenant"),
                user=fields.get(self.user),
                thread=fields.get(self.thread),
            ),
            is_binary=bool(fields["is_binary"]),
            size=int(fields["size"]),
            original_size=int(fields["original_size"]),
            line_count=int(fields["line_count"]),
            capped=bool(fields["capped"]),
            created_at=float(fields["created_at"]),
            expires_at=number("expires_at", float),
            tool_name=fields.get("tool_name"),
            tool_call_id=fields.get("tool_call_id"),
            extra=dict(extra),
            gap_start=number("gap_start", int),
            gap_end=number("gap_end", int),
            cap_reason=fields.get("cap_reason"),
        )


def permitted(
    meta: RecordMeta | None, principal: Principal, access: AccessPolicy, now: float
) -> bool:
    """The access decision: exists, not expired, and the policy permits the caller."""
    if meta is None or meta.is_expired(now):
        return False
    return access.permits(meta.principal, principal)


def read_result(meta: RecordMeta, part: Slice, *, line_mode: bool) -> ReadResult:
    """Turn a `Slice` into the port's `ReadResult`."""
    return ReadResult(
        meta=meta,
        data=part.data,
        start_line=part.start_line if line_mode else None,
        end_line=part.end_line if line_mode else None,
        offset=part.offset,
        end_offset=part.end_offset,
        complete=part.complete,
        gap_overlap=part.gap_overlap,
        first_line=part.start_line,
        last_line=part.end_line,
    )


def is_line_mode(
    start_line: int | None, end_line: int | None, offset: int | None, limit: int | None
) -> bool:
    """Whether a read is by lines (also a whole-record read)."""
    return start_line is not None or end_line is not None or (offset is None and limit is None)
