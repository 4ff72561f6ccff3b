"""A running total of each tenant's stored bytes, so a quota check costs O(log n), not a scan.

The LangGraph `BaseStore` adapter cannot ask its store for a sum: without this it scanned
every record on each put (0.9 ms at 100 records, 78 ms at 4,000). The ledger is filled by one
scan on first use, then kept up to date by the store's own puts and deletes; expiries are
applied from a heap as time passes. Writes made by other processes are picked up by a fresh
scan every `refresh_seconds` (the quota is a per-process bound between refreshes, as the
adapter's quota lock already is).

Example:
    ```python
    from langchain_result_layer.stores._ledger import UsageLedger

    ledger = UsageLedger(lambda: [], refresh_seconds=300)
    assert ledger.used("acme", now=0.0) == 0  # the first use scans
    ledger.add("AbCdEfGhIjKl", "acme", 10, None, now=0.0)
    assert ledger.used("acme", now=1.0) == 10
    ```
"""

from __future__ import annotations

import heapq
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["UsageLedger"]


class UsageLedger:
    """Per-tenant bytes in unexpired records (see the module docstring).

    Args:
        scan: Returns every record's stored value (`record_id`, `tenant`, `size`,
            `expires_at`); called on first use and on each refresh.
        refresh_seconds: Rescan after this long (`None`: never).
    """

    def __init__(
        self, scan: Callable[[], Iterable[Mapping[str, Any]]], *, refresh_seconds: float | None
    ) -> None:
        self._scan = scan
        self.refresh_seconds = refresh_seconds
        self._lock = threading.Lock()
        self._loaded_at: float | None = None
        self._totals: dict[str | None, int] = {}
        self._records: dict[str, tuple[str | None, int, float | None]] = {}
        self._expiries: list[tuple[float, str]] = []

    def _load(self) -> None:
        self._totals, self._records, self._expiries = {}, {}, []
        for value in self._scan():
            record_id = str(value.get("record_id", ""))
            expires = value.get("expires_at")
            self._add(record_id, value.get("tenant"), int(value.get("size", 0)), expires)
        self._loaded_at = time.monotonic()

    def _ensure(self, now: float) -> None:
        stale = self._loaded_at is None or (
            self.refresh_seconds is not None
            and time.monotonic() - self._loaded_at > self.refresh_seconds
        )
        if stale:
            self._load()
        while self._expiries and self._expiries[0][0] <= now:
            _at, record_id = heapq.heappop(self._expiries)
            self._remove(record_id)

    def _add(self, record_id: str, tenant: str | None, size: int, expires: float | None) -> None:
        self._remove(record_id)
        self._records[record_id] = (tenant, size, expires)
        self._totals[tenant] = self._totals.get(tenant, 0) + size
        if expires is not None:
            heapq.heappush(self._expiries, (float(expires), record_id))

    def _remove(self, record_id: str) -> None:
        known = self._records.pop(record_id, None)
        if known is not None:
            tenant, size, _expires = known
            self._totals[tenant] = self._totals.get(tenant, 0) - size

    def used(self, tenant: str | None, *, now: float) -> int:
        """Bytes (characters) the tenant keeps in records unexpired at `now`."""
        with self._lock:
            self._ensure(now)
            return self._totals.get(tenant, 0)

    def add(
        self, record_id: str, tenant: str | None, size: int, expires: float | None, *, now: float
    ) -> None:
        """Count a record just stored (nothing to do before the first scan: it counts it)."""
        with self._lock:
            if self._loaded_at is None:
                return
            self._ensure(now)
            if expires is None or expires > now:
                self._add(record_id, tenant, size, expires)

    def remove(self, record_id: str) -> None:
        """Forget a record just deleted."""
        with self._lock:
            self._remove(record_id)
