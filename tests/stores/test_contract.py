"""The `ResultStore` contract, run against every backend (memory, SQLite, PostgreSQL, LangGraph)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from langchain_result_layer.errors import RecordNotAccessibleError, StoreQuotaExceededError
from langchain_result_layer.stores import Principal, ResultStore

ADA = Principal(tenant="acme", user="ada", thread="t1")


def lines_of(data: str) -> list[str]:
    parts = data.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def test_is_a_result_store(store: Any) -> None:
    assert isinstance(store, ResultStore)


def test_round_trip_text_with_every_hard_character(store: Any) -> None:
    data = "héllo\r\nwörld\n\x00nul\n\ud800lone\udfff surrogates \ud83d\ude00 pair 😀\n\n\ttab\rcr"
    meta = store.put(data, principal=ADA, kind="log", tool_name="t", tool_call_id="c1")
    assert meta.size == meta.original_size == len(data)
    assert meta.line_count == len(lines_of(data)) == 6
    assert not meta.capped
    assert not meta.is_binary
    assert meta.kind == "log"
    assert store.read(meta.record_id, principal=ADA).data == data
    assert store.info(meta.record_id, principal=ADA) == meta
    for i, line in enumerate(lines_of(data), start=1):
        part = store.read(meta.record_id, principal=ADA, start_line=i, end_line=i)
        assert part.data == line
        assert (part.start_line, part.end_line) == (i, i)
        assert data[part.offset : part.end_offset] == line


def test_round_trip_bytes(store: Any) -> None:
    data = bytes(range(256)) * 300 + b"\nlast\n"
    meta = store.put(data, principal=ADA, kind="binary")
    assert meta.is_binary
    assert meta.size == len(data)
    whole = store.read(meta.record_id, principal=ADA)
    assert whole.data == data
    assert isinstance(whole.data, bytes)
    part = store.read(meta.record_id, principal=ADA, offset=1000, limit=5000)
    assert part.data == data[1000:6000]


def test_empty_result(store: Any) -> None:
    meta = store.put("", principal=ADA)
    assert meta.line_count == 0
    assert meta.size == 0
    part = store.read(meta.record_id, principal=ADA, start_line=1, end_line=10)
    assert part.data == ""
    assert part.at_end


def test_line_and_offset_reads_match_python_slicing(store: Any) -> None:
    data = (
        "".join(
            f"line {i} " + "x" * (i % 37) + ("\r\n" if i % 5 == 0 else "\n") for i in range(1, 400)
        )
        + "no newline at the end"
    )
    meta = store.put(data, principal=ADA)
    lines = lines_of(data)
    assert meta.line_count == len(lines)
    for a, b in [(1, 1), (1, 400), (10, 20), (399, 399), (400, 400), (401, 500), (250, 10_000)]:
        part = store.read(meta.record_id, principal=ADA, start_line=a, end_line=b)
        assert part.data == "".join(lines[a - 1 : b]), (a, b)
    for o, n in [
        (0, 1),
        (0, len(data)),
        (5, 100),
        (len(data) - 3, 10),
        (len(data), 5),
        (len(data) + 10, 5),
    ]:
        part = store.read(meta.record_id, principal=ADA, offset=o, limit=n)
        assert part.data == data[o : o + n]
        assert part.offset == min(o, len(data))
    assert store.read(meta.record_id, principal=ADA, offset=17).data == data[17:]


def test_max_size_bounds_what_is_returned(store: Any) -> None:
    data = "abcdefghij\n" * 1000
    meta = store.put(data, principal=ADA)
    part = store.read(meta.record_id, principal=ADA, start_line=3, end_line=900, max_size=25)
    assert part.data == data[22:47]
    assert not part.complete
    full = store.read(meta.record_id, principal=ADA, start_line=3, end_line=4, max_size=25)
    assert full.complete
    assert full.data == data[22:44]


def test_mixing_lines_and_offsets_is_an_error(store: Any) -> None:
    meta = store.put("a\nb\n", principal=ADA)
    with pytest.raises(ValueError):
        store.read(meta.record_id, principal=ADA, start_line=1, offset=0)


def test_access_is_denied_uniformly(store: Any) -> None:
    meta = store.put("secret\n", principal=ADA)
    expired = store.put("gone\n", principal=ADA, ttl_seconds=1e-6)
    others = [
        Principal(tenant="other", user="ada", thread="t1"),
        Principal(tenant="acme", user="eve", thread="t1"),
        Principal(tenant="acme", user="ada", thread="t2"),
        Principal(),
    ]
    messages = set()
    for who in others:
        for call in (
            lambda w=who: store.read(meta.record_id, principal=w),
            lambda w=who: store.info(meta.record_id, principal=w),
        ):
            with pytest.raises(RecordNotAccessibleError) as info:
                call()
            messages.add(str(info.value).replace(meta.record_id, "<id>"))
    for rid in (expired.record_id, "AAAAAAAAAAAAAAAAAAAAAA", "not an id at all!"):
        with pytest.raises(RecordNotAccessibleError) as info:
            store.read(rid, principal=ADA)
        messages.add(str(info.value).replace(rid, "<id>"))
    assert len(messages) == 1
    assert store.delete(meta.record_id, principal=others[1]) is False
    assert store.read(meta.record_id, principal=ADA).data == "secret\n"


def test_thread_matching_can_be_turned_off(store_factory: Any) -> None:
    store = store_factory(match_thread=False)
    meta = store.put("x\n", principal=ADA)
    other_thread = Principal(tenant="acme", user="ada", thread="t9")
    assert store.read(meta.record_id, principal=other_thread).data == "x\n"
    with pytest.raises(RecordNotAccessibleError):
        store.read(meta.record_id, principal=Principal(tenant="acme", user="eve", thread="t1"))


def test_every_read_and_denied_read_is_audited(store: Any) -> None:
    meta = store.put("a\nb\nc\n", principal=ADA)
    store.read(meta.record_id, principal=ADA, start_line=2, end_line=3)
    store.read(meta.record_id, principal=ADA, offset=1, limit=2)
    eve = Principal(tenant="acme", user="eve", thread="t1")
    with pytest.raises(RecordNotAccessibleError):
        store.read(meta.record_id, principal=eve, start_line=1, end_line=1)
    store.info(meta.record_id, principal=ADA)
    log = store.audit_log(record_id=meta.record_id)
    assert [(e.action, e.range, e.granted) for e in log[:4]] == [
        ("info", "", True),
        ("read", "lines=1-1", False),
        ("read", "offset=1+2", True),
        ("read", "lines=2-3", True),
    ]
    assert log[1].principal == eve
    assert log[0].principal == ADA
    assert log[-1].action == "put"
    assert all(e.at > 0 for e in log)


def test_ttl_and_purge(store_factory: Any) -> None:
    now = [1_000_000.0]
    store = store_factory(default_ttl_seconds=100, clock=lambda: now[0])
    short = store.put("short\n", principal=ADA, ttl_seconds=10)
    default = store.put("default\n", principal=ADA)
    forever = store.put("forever\n", principal=ADA, ttl_seconds=float("inf"))
    assert short.expires_at == 1_000_010.0
    assert default.expires_at == 1_000_100.0
    assert forever.expires_at is None
    now[0] += 50
    with pytest.raises(RecordNotAccessibleError):
        store.read(short.record_id, principal=ADA)
    assert store.purge_expired() == 1
    now[0] += 100
    assert store.purge_expired() == 1
    assert store.read(forever.record_id, principal=ADA).data == "forever\n"
    assert store.purge_expired() == 0
    with pytest.raises(ValueError):
        store.put("x", principal=ADA, ttl_seconds=0)


def test_delete(store: Any) -> None:
    meta = store.put("x\n", principal=ADA)
    assert store.delete(meta.record_id, principal=ADA) is True
    with pytest.raises(RecordNotAccessibleError):
        store.read(meta.record_id, principal=ADA)
    assert store.delete(meta.record_id, principal=ADA) is False


def test_size_cap_keeps_head_and_tail_in_original_coordinates(store_factory: Any) -> None:
    store = store_factory(max_record_size=2_000, min_capped_size=100, chunk_size=128)
    data = "".join(f"line {i:05d}\n" for i in range(1, 1001))  # 11 chars a line
    meta = store.put(data, principal=ADA)
    assert meta.capped
    assert meta.cap_reason == "size cap"
    assert meta.original_size == len(data)
    assert meta.size <= 2_000
    assert meta.line_count == 1000
    assert meta.gap_start is not None
    assert meta.gap_end is not None
    assert data[meta.gap_start - 1] == "\n"
    assert data[meta.gap_end - 1] == "\n"
    head = store.read(meta.record_id, principal=ADA, start_line=1, end_line=3)
    assert head.data == data[:33]
    assert head.complete
    tail = store.read(meta.record_id, principal=ADA, start_line=999, end_line=1000)
    assert tail.data == "line 00999\nline 01000\n"
    assert (tail.start_line, tail.end_line) == (999, 1000)
    middle = store.read(meta.record_id, principal=ADA, start_line=500, end_line=510)
    assert middle.gap_overlap
    assert not middle.complete
    assert middle.offset >= meta.gap_end or middle.data == ""
    across = store.read(meta.record_id, principal=ADA, offset=meta.gap_start - 5, limit=50)
    assert across.data == data[meta.gap_start - 5 : meta.gap_start]
    assert across.gap_overlap
    whole = store.read(meta.record_id, principal=ADA)
    assert whole.data == data[: meta.gap_start]
    rest = store.read(meta.record_id, principal=ADA, offset=meta.gap_end)
    assert rest.data == data[meta.gap_end :]
    assert any("kept=" in e.range for e in store.audit_log(record_id=meta.record_id))


def test_quota_caps_then_refuses(store_factory: Any) -> None:
    store = store_factory(tenant_quota=50_000, min_capped_size=1_000, chunk_size=1024)
    first = store.put("a" * 30_000, principal=ADA)
    assert not first.capped
    second = store.put("b\n" * 20_000, principal=ADA)
    assert second.capped
    assert second.cap_reason == "tenant quota"
    assert second.size <= 20_000
    assert second.original_size == 40_000
    with pytest.raises(StoreQuotaExceededError):
        store.put("c" * 5_000, principal=ADA)
    # Other tenants have their own quota; deleting frees room.
    other = store.put("d" * 5_000, principal=Principal(tenant="beta", user="bob"))
    assert not other.capped
    assert store.delete(first.record_id, principal=ADA)
    assert not store.put("e" * 5_000, principal=ADA).capped
    assert store.usage("acme") == second.size + 5_000


def test_put_rejects_bad_input(store: Any) -> None:
    with pytest.raises(TypeError):
        store.put(123, principal=ADA)
    with pytest.raises(ValueError):
        store.put("x", principal=ADA, kind="Bad Kind")
    with pytest.raises(ValueError):
        store.put("x", principal=ADA, record_id="short")
    meta = store.put("x", principal=ADA, record_id="fixed_id_0123456789ab")
    assert meta.record_id == "fixed_id_0123456789ab"
    with pytest.raises(ValueError):
        store.put("y", principal=Principal(user="eve"), record_id="fixed_id_0123456789ab")
    assert store.read(meta.record_id, principal=ADA).data == "x"


def test_large_record_reads_touch_only_needed_chunks(store_factory: Any) -> None:
    store = store_factory(chunk_size=4_096)
    data = "".join(f"{i:07d} some log text here\n" for i in range(200_000))  # 5.8 MB
    meta = store.put(data, principal=ADA)
    store.stats.reset()
    part = store.read(meta.record_id, principal=ADA, start_line=150_000, end_line=150_100)
    assert part.data == "".join(f"{i:07d} some log text here\n" for i in range(149_999, 150_100))
    # A 101-line window is ~2.9 KB: it spans at most 2 chunks, plus at most 1 for lookups.
    assert store.stats.chunk_reads <= 3
    store.stats.reset()
    part = store.read(meta.record_id, principal=ADA, offset=3_000_000, limit=100)
    assert part.data == data[3_000_000:3_000_100]
    assert store.stats.chunk_reads <= 2
    # What the fetch tool does for a bare reference: every line, bounded by max_size.
    store.stats.reset()
    part = store.read(meta.record_id, principal=ADA, start_line=100_000, max_size=8_000)
    start = data.index("0099999 some")
    assert part.data == data[start : start + 8_000]
    assert not part.complete
    assert store.stats.chunk_reads <= 4


def test_concurrent_writers_and_readers_from_threads(store: Any) -> None:
    errors: list[BaseException] = []
    metas: dict[int, Any] = {}
    barrier = threading.Barrier(32)

    def writer(i: int) -> None:
        try:
            barrier.wait(timeout=30)
            p = Principal(tenant="acme", user=f"u{i % 4}", thread=f"t{i}")
            data = f"writer {i}\n" * (1000 + i)
            metas[i] = (store.put(data, principal=p), p, data)
            meta, p, data = metas[i]
            assert store.read(meta.record_id, principal=p).data == data
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors[:3]
    assert len({m.record_id for m, _, _ in metas.values()}) == 32
    for meta, p, data in metas.values():
        assert (
            store.read(meta.record_id, principal=p, start_line=2, end_line=3).data
            == (data.split("\n", 1)[0] + "\n") * 2
        )


async def test_concurrent_async_writers_and_readers(store: Any) -> None:
    async def one(i: int) -> None:
        p = Principal(tenant="acme", user="ada", thread=f"t{i}")
        data = "".join(f"{i}:{j}\n" for j in range(2000))
        meta = await store.aput(data, principal=p)
        assert (await store.ainfo(meta.record_id, principal=p)).size == len(data)
        part = await store.aread(meta.record_id, principal=p, start_line=100, end_line=101)
        assert part.data == f"{i}:99\n{i}:100\n"
        with pytest.raises(RecordNotAccessibleError):
            await store.aread(meta.record_id, principal=Principal(tenant="x"))

    await asyncio.gather(*(one(i) for i in range(32)))


async def test_async_twins_do_not_block_the_event_loop(store: Any) -> None:
    ticks = 0
    stop = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(ticker())
    meta = await store.aput("z" * 3_000_000, principal=ADA)
    await store.aread(meta.record_id, principal=ADA)
    stop.set()
    await task
    assert ticks > 1
