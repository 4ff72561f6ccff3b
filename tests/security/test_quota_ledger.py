"""The LangGraph-store adapter's quota check is a running total, not a scan per put (item 8)."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.store.base import SearchOp
from langgraph.store.memory import InMemoryStore

from langchain_result_layer.errors import StoreQuotaExceededError
from langchain_result_layer.stores import LangGraphResultStore, Principal


class CountingStore(InMemoryStore):
    """Counts the searches (scans) the adapter makes."""

    searches = 0

    def batch(self, ops: Any) -> Any:
        ops = list(ops)
        self.searches += sum(isinstance(op, SearchOp) for op in ops)
        return super().batch(ops)


def _scan_usage(store: LangGraphResultStore, tenant: str, now: float) -> int:
    return sum(
        int(item.value["size"])
        for item in store._scan(store._records_ns)  # the old, scanning answer
        if item.value.get("tenant") == tenant
        and (item.value.get("expires_at") is None or item.value["expires_at"] > now)
    )


def test_puts_do_not_scan_and_totals_stay_exact() -> None:
    clock = [1_000.0]
    backing = CountingStore()
    store = LangGraphResultStore(
        backing, tenant_quota=10_000_000, default_ttl_seconds=50, clock=lambda: clock[0]
    )
    acme, other = Principal(tenant="acme"), Principal(tenant="other")
    metas = [store.put("x" * (i + 1), principal=acme) for i in range(300)]
    store.put("y" * 7, principal=other)
    assert backing.searches == 1  # one scan, by the first put (the store was empty)
    for meta in metas[:50]:
        assert store.delete(meta.record_id, principal=acme)
    assert store.usage("acme") == _scan_usage(store, "acme", clock[0])
    assert store.usage("other") == 7
    clock[0] += 60  # every record expires
    before = backing.searches
    late = store.put("z" * 5, principal=acme)
    assert backing.searches == before  # the put did not scan
    assert store.usage("acme") == 5 == _scan_usage(store, "acme", clock[0])
    assert late.size == 5


def test_the_quota_still_refuses() -> None:
    store = LangGraphResultStore(InMemoryStore(), tenant_quota=20_000, min_capped_size=8_192)
    p = Principal(tenant="acme")
    store.put("a" * 15_000, principal=p)
    with pytest.raises(StoreQuotaExceededError):
        store.put("b" * 15_000, principal=p)
    assert store.usage("acme") == 15_000
