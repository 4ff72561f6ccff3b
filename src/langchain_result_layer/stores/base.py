r"""The `ResultStore` port: where raw tool results live, outside graph checkpoints.

A store keeps each raw result exactly (text or bytes), split into chunks with a line index so
that a read costs what it returns. Every record is bound to the `Principal` that wrote it and
every read re-checks the caller's principal: a reference alone grants nothing. A missing, an
expired and another principal's record all raise the same `RecordNotAccessibleError`.

Coordinates used by every backend:

- lines are 1-based and inclusive, split on `\n` (a `\r\n` line ends with `\r\n`); a
  result with no newline has one line; the empty result has zero lines;
- offsets are 0-based characters (bytes for binary records), end-exclusive.

Example:
    ```python
    from langchain_result_layer.stores import InMemoryResultStore, Principal

    store = InMemoryResultStore()
    meta = store.put("a\nb\nc\n", principal=Principal(user="u1"), kind="text")
    part = store.read(meta.record_id, principal=Principal(user="u1"), start_line=2, end_line=3)
    assert part.data == "b\nc\n"
    ```
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, runtime_checkable

from langchain_result_layer.core.render import plural

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "DEFAULT_TTL_SECONDS",
    "AuditEntry",
    "Principal",
    "PutOptions",
    "ReadRange",
    "ReadResult",
    "RecordMeta",
    "ResultStore",
]

DEFAULT_TTL_SECONDS: float = 7 * 24 * 3600.0
"""Default lifetime of a stored result: seven days."""


@dataclass(frozen=True, slots=True)
class Principal:
    """Who owns (or asks for) a stored result.

    A record is readable only by a principal whose `tenant`, `user` and `thread` equal the
    record's (the access policy of a store may relax the thread check).

    Attributes:
        tenant: Tenant or organisation id.
        user: User id.
        thread: Conversation thread id.

    Example:
        ```python
        p = Principal(tenant="acme", user="ada", thread="t-1")
        assert p.as_dict()["tenant"] == "acme"
        ```
    """

    tenant: str | None = None
    user: str | None = None
    thread: str | None = None

    def __post_init__(self) -> None:
        """Refuse values that are not strings (they are compared as the strings given)."""
        for name in ("tenant", "user", "thread"):
            value: object = getattr(self, name)
            if value is not None and not isinstance(value, str):
                msg = (
                    f"Principal.{name} must be a str or None (principals are compared as the "
                    f"strings they were given), got {type(value).__name__}"
                )
                raise TypeError(msg)

    def as_dict(self) -> dict[str, str | None]:
        """The three fields as a dict."""
        return {"tenant": self.tenant, "user": self.user, "thread": self.thread}

    def __str__(self) -> str:
        """`tenant/user/thread` with `-` for unset parts."""
        return "/".join(part or "-" for part in (self.tenant, self.user, self.thread))


@dataclass(frozen=True, slots=True)
class RecordMeta:
    """What a store knows about one record, without its data.

    Attributes:
        record_id: The record's id (22 URL-safe characters).
        kind: View kind that produced it.
        principal: Owner.
        is_binary: Whether the data is bytes.
        size: Characters (bytes when binary) actually stored.
        original_size: Characters (bytes) of the result before any size-cap policy. Offsets
            and line numbers are always those of the original result, also when capped.
        line_count: Lines of the original result.
        capped: Whether the size cap or the quota forced the store to keep only a bounded
            head and tail (then `size < original_size` and `gap_start`/`gap_end` say which
            part is missing).
        created_at: Unix time of the write.
        expires_at: Unix time after which the record is gone (`None`: never).
        tool_name: Name of the tool that produced the result.
        tool_call_id: The tool call's id.
        extra: Small JSON-ready metadata (for example the view's summary line).
        gap_start: First character (byte) the store did not keep, when capped.
        gap_end: First character (byte) kept after the gap, when capped.
        cap_reason: `size cap` or `tenant quota`, when capped.

    Example:
        ```python
        meta = store.info(ref.record_id, principal=Principal())
        assert meta.line_count == 3_000 and not meta.capped and meta.kind == "text"
        ```
    """

    record_id: str
    kind: str
    principal: Principal
    is_binary: bool
    size: int
    original_size: int
    line_count: int
    capped: bool
    created_at: float
    expires_at: float | None
    tool_name: str | None = None
    tool_call_id: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    gap_start: int | None = None
    gap_end: int | None = None
    cap_reason: str | None = None

    def is_expired(self, now: float) -> bool:
        """Whether the record has expired at `now`."""
        return self.expires_at is not None and self.expires_at <= now

    def cap_notes(self) -> tuple[str, ...]:
        """What the model must know when the store kept only a head and a tail.

        Returns:
            `()` when the record is whole; else the full note and a short one (for tight
            budgets), in that order.

        Example:
            ```python
            meta = store.info(ref.record_id, principal=Principal())
            assert meta.cap_notes() == ()  # the example log was stored whole
            ```
        """
        if not self.capped:
            return ()
        unit = "byte" if self.is_binary else "char"
        start = self.gap_start if self.gap_start is not None else self.size
        end = self.gap_end if self.gap_end is not None else self.original_size
        reason = self.cap_reason or "size cap"
        return (
            f"[Store note: because of the {reason}, the stored copy keeps only the first "
            f"{plural(start, unit)} and the last {plural(self.original_size - end, unit)}; "
            f"{unit}s {start:,}-{end:,} of the original cannot be fetched.]",
            f"[Store note: {unit}s {start:,}-{end:,} were not stored ({reason}).]",
        )


@dataclass(frozen=True, slots=True)
class ReadResult:
    """One range read from a record.

    Attributes:
        meta: The record's metadata.
        data: The slice, exactly as stored (`str`, or `bytes` for binary records).
        start_line: First line served (1-based), or `None` for offset reads.
        end_line: Last line served (inclusive), or `None` for offset reads.
        offset: Offset of the first character (byte) served.
        end_offset: One past the last character (byte) served.
        complete: Whether `data` covers the whole requested range (`False` when `max_size`
            cut it, or when the range touches the part a capped record lacks).
        gap_overlap: Whether the requested range touched the part a capped record lacks.
        first_line: Line holding the first character served (every kind of read).
        last_line: Line holding the last character served (`first_line - 1` when empty).

    Example:
        ```python
        part = store.read(ref.record_id, principal=Principal(), start_line=2_401, end_line=2_401)
        assert part.end_offset - part.offset == len(part.data) and part.complete
        assert part.data.startswith("error: module_2400.c:17")
        ```
    """

    meta: RecordMeta
    data: str | bytes
    start_line: int | None
    end_line: int | None
    offset: int
    end_offset: int
    complete: bool = True
    gap_overlap: bool = False
    first_line: int | None = None
    last_line: int | None = None

    @property
    def at_end(self) -> bool:
        """Whether the read reached the end of the record."""
        return self.end_offset >= self.meta.original_size


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One line of the audit log: every read and every denied read is recorded.

    Attributes:
        at: Unix time.
        principal: Who asked.
        record_id: Which record.
        action: `read`, `info`, `put`, `delete` or `purge`.
        range: The range asked for, as text (`lines=10-20`, `offset=0+100`).
        granted: Whether access was granted.

    Example:
        ```python
        from langchain_result_layer.errors import RecordNotAccessibleError

        try:
            store.read(ref.record_id, principal=Principal(tenant="other"))
        except RecordNotAccessibleError:
            pass
        denied = [e for e in store.audit_log() if not e.granted]
        assert denied[0].principal.tenant == "other" and denied[0].action == "read"
        ```
    """

    at: float
    principal: Principal
    record_id: str
    action: str
    range: str
    granted: bool


class PutOptions(TypedDict, total=False):
    """What `ResultStore.put` takes besides the data and its principal (every key optional).

    Example:
        ```python
        from langchain_result_layer.core.reference import PLAIN_KIND

        options: PutOptions = {"tool_name": "read_log", "ttl_seconds": 60}
        meta = store.put("one line", principal=Principal(), **options)
        assert meta.tool_name == "read_log" and meta.kind == PLAIN_KIND
        ```
    """

    kind: str
    """View kind that produced the result (`PLAIN_KIND`, the plain text view's, when not given)."""
    tool_name: str | None
    """Name of the tool that produced the result."""
    tool_call_id: str | None
    """The tool call's id."""
    ttl_seconds: float | None
    """Lifetime of this record (`None`: the store's default TTL)."""
    extra: Mapping[str, Any] | None
    """Small JSON-ready metadata kept with the record."""
    record_id: str | None
    """The id to store it under (`None`: a new random id); refused when taken or malformed."""


class ReadRange(TypedDict, total=False):
    """The range of one `ResultStore.read`: a line range or an offset range (not both).

    Example:
        ```python
        lines: ReadRange = {"start_line": 2, "end_line": 3}
        part = store.read(ref.record_id, principal=Principal(), **lines)
        assert part.start_line == 2 and part.end_line == 3
        ```
    """

    start_line: int | None
    """First line (1-based)."""
    end_line: int | None
    """Last line (inclusive)."""
    offset: int | None
    """First character (byte), 0-based."""
    limit: int | None
    """Characters (bytes) from `offset`."""
    max_size: int | None
    """Most characters (bytes) to return; the result is then marked incomplete."""


@runtime_checkable
class ResultStore(Protocol):
    """Port for raw-result storage; every method has a sync and an async twin.

    Implementations must be safe under concurrent calls from threads and coroutines, and
    async methods must never block the event loop.

    Example:
        ```python
        def save(store: ResultStore, text: str) -> str:
            return store.put(text, principal=Principal(), ).record_id
        ```
    """

    def put(
        self, data: str | bytes, *, principal: Principal, **options: Unpack[PutOptions]
    ) -> RecordMeta:
        """Store a raw result and return its metadata (a new random id unless given).

        `options` are those of `PutOptions` (the kind, the tool, the TTL, small metadata, an
        id). Raises `StoreUnavailableError` (or its subclass `StoreQuotaExceededError`) when
        the write cannot be done.
        """
        ...

    async def aput(
        self, data: str | bytes, *, principal: Principal, **options: Unpack[PutOptions]
    ) -> RecordMeta:
        """Async twin of `put`."""
        ...

    def info(self, record_id: str, *, principal: Principal) -> RecordMeta:
        """Metadata of a record; raises `RecordNotAccessibleError`."""
        ...

    async def ainfo(self, record_id: str, *, principal: Principal) -> RecordMeta:
        """Async twin of `info`."""
        ...

    def read(
        self, record_id: str, *, principal: Principal, **read_range: Unpack[ReadRange]
    ) -> ReadResult:
        """Read a line range or an offset range (or everything when neither is given).

        `read_range` holds the keys of `ReadRange`. Lines beyond the end are clipped; reading
        from past the end returns empty data. `max_size` bounds how many characters (bytes)
        are returned, so a reader that can show only so much never loads more (the result is
        then marked incomplete). Raises `RecordNotAccessibleError` or `StoreUnavailableError`.
        """
        ...

    async def aread(
        self, record_id: str, *, principal: Principal, **read_range: Unpack[ReadRange]
    ) -> ReadResult:
        """Async twin of `read`."""
        ...

    def delete(self, record_id: str, *, principal: Principal) -> bool:
        """Delete a record the principal owns; `True` when something was deleted."""
        ...

    def purge_expired(self, *, now: float | None = None) -> int:
        """Delete every expired record; returns how many were deleted."""
        ...

    def audit_log(self, *, record_id: str | None = None, limit: int = 100) -> list[AuditEntry]:
        """Most recent audit entries first, optionally for one record."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...
