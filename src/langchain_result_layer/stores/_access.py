"""Access policy and lifecycle rules shared by every store backend.

Every read re-checks the caller against the record's owner; a missing, an expired and another
principal's record are indistinguishable to the caller (`RecordNotAccessibleError`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from langchain_result_layer.stores.base import Principal

__all__ = [
    "DEFAULT_MAX_RECORD_SIZE",
    "MIN_CAPPED_SIZE",
    "AccessPolicy",
    "CapDecision",
    "decide_cap",
    "expiry",
    "range_label",
]

DEFAULT_MAX_RECORD_SIZE = 256 * 1024 * 1024
"""Default size cap of one record: 256 Mi characters (bytes for binary records)."""

MIN_CAPPED_SIZE = 8_192
"""Smallest head + tail a capped record keeps; below it the write is refused."""


@dataclass(frozen=True, slots=True)
class AccessPolicy:
    """Who may read a record.

    The tenant must always match. By default the user and the thread must match too.

    Attributes:
        match_user: Require the caller's user to equal the owner's.
        match_thread: Require the caller's thread to equal the owner's (turn off to let a
            user fetch results across their own conversations).
        allow: Extra rule `allow(owner, caller) -> bool`, checked after the built-in ones
            (for example to let an auditor read everything of a tenant: return `True` for
            them even when the user differs).
        require_principal: Refuse to save a result whose principal has no tenant, no user
            and no thread. Without it such a record is readable by every caller that has no
            principal either: set it when one layer serves several principals.

    Example:
        ```python
        policy = AccessPolicy(match_thread=False)
        assert policy.permits(Principal(user="a", thread="1"), Principal(user="a", thread="2"))
        ```
    """

    match_user: bool = True
    """Require the same user."""

    match_thread: bool = True
    """Require the same thread."""

    allow: Callable[[Principal, Principal], bool] | None = None
    """Optional extra rule; when set it decides for records the built-in rules refuse."""

    require_principal: bool = False
    """Refuse saves with an empty principal (no tenant, user or thread)."""

    def permits(self, owner: Principal, caller: Principal) -> bool:
        """Whether `caller` may read a record owned by `owner`.

        Args:
            owner: The record's principal.
            caller: Who asks.

        Returns:
            The decision.
        """
        if owner.tenant != caller.tenant:
            return False
        ok = (not self.match_user or owner.user == caller.user) and (
            not self.match_thread or owner.thread == caller.thread
        )
        if ok:
            return True
        if self.allow is not None:
            try:
                return bool(self.allow(owner, caller))
            except Exception:
                return False
        return False


def expiry(now: float, ttl_seconds: float | None, default: float | None) -> float | None:
    """Expiry time for a record written at `now` (`None`: never).

    Args:
        now: Write time.
        ttl_seconds: The record's TTL (`None`: the store's default; `inf`: never).
        default: The store's default TTL (`None`: never).

    Returns:
        Unix time or `None`.

    Raises:
        ValueError: For a TTL that is not positive.
    """
    ttl = default if ttl_seconds is None else ttl_seconds
    if ttl is None or math.isinf(ttl):
        return None
    if not ttl > 0:
        msg = f"ttl_seconds must be > 0, got {ttl!r}"
        raise ValueError(msg)
    return now + ttl


def range_label(
    *,
    start_line: int | None = None,
    end_line: int | None = None,
    offset: int | None = None,
    limit: int | None = None,
) -> str:
    """The audit log's text for a requested range (`lines=10-20`, `offset=0+100`, `all`)."""
    if offset is not None or limit is not None:
        return f"offset={offset or 0}+{'' if limit is None else limit}"
    if start_line is not None or end_line is not None:
        return f"lines={start_line or 1}-{'' if end_line is None else end_line}"
    return "all"


@dataclass(frozen=True, slots=True)
class CapDecision:
    """How much of a result a store keeps.

    Attributes:
        keep: Characters (bytes) to keep (`size` when nothing is cut).
        reason: Why it is cut (`size cap` / `tenant quota`), or `None`.
    """

    keep: int
    reason: str | None


def decide_cap(
    size: int,
    *,
    max_record_size: int | None,
    quota_left: int | None,
    min_capped_size: int = MIN_CAPPED_SIZE,
) -> CapDecision | None:
    """Apply the size cap and the quota; `None` means the write must be refused.

    Policy: a record larger than `max_record_size` keeps a head and a tail of
    `max_record_size` in total. When the tenant's quota has less room left, the record keeps
    a head and a tail that fit the room left, as long as that is at least `min_capped_size`
    (or the whole record when smaller); otherwise the write is refused.

    Args:
        size: The result's size.
        max_record_size: Per-record cap (`None`: none).
        quota_left: Room left in the tenant's quota (`None`: no quota).
        min_capped_size: Smallest useful capped record.

    Returns:
        The decision, or `None` when even a capped record does not fit.
    """
    keep, reason = size, None
    if max_record_size is not None and keep > max_record_size:
        keep, reason = max_record_size, "size cap"
    if quota_left is not None and keep > quota_left:
        room = max(0, quota_left)
        if room < min(min_capped_size, keep):
            return None
        keep, reason = room, "tenant quota"
    return CapDecision(keep=keep, reason=reason)
