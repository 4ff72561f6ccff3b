"""Property-based tests: every range of any text or bytes reads back exactly."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langchain_result_layer.errors import RecordNotAccessibleError
from langchain_result_layer.stores import InMemoryResultStore, Principal, SQLResultStore
from langchain_result_layer.stores._chunks import iter_chunks, plan_cap

OWNER = Principal(tenant="t", user="u", thread="th")

# Text with newlines, CRLF, NUL, lone surrogates and astral characters.
texts = st.lists(
    st.one_of(
        st.sampled_from(["\n", "\r\n", "\r", "\x00", "\ud800", "\udfff", "😀", "é", "a", " "]),
        st.characters(),
    ),
    max_size=200,
).map("".join)
blobs = st.binary(max_size=300)

_SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _lines(data: Any) -> list[Any]:
    nl = "\n" if isinstance(data, str) else b"\n"
    parts = data.split(nl)
    out = [p + nl for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


@pytest.fixture(scope="module", params=["memory", "sqlite"])
def prop_store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    if request.param == "memory":
        yield InMemoryResultStore(chunk_size=7)
        return
    path = tmp_path_factory.mktemp("prop") / "p.db"
    store = SQLResultStore(f"sqlite:///{path}", chunk_size=7)
    yield store
    store.close()


@_SETTINGS
@given(
    data=st.one_of(texts, blobs),
    ranges=st.lists(st.tuples(st.integers(0, 320), st.integers(0, 320)), min_size=1, max_size=8),
)
def test_every_offset_range_round_trips(prop_store: Any, data: Any, ranges: list[Any]) -> None:
    meta = prop_store.put(data, principal=OWNER)
    assert prop_store.read(meta.record_id, principal=OWNER).data == data
    for offset, limit in ranges:
        part = prop_store.read(meta.record_id, principal=OWNER, offset=offset, limit=limit)
        assert part.data == data[offset : offset + limit]
        assert part.end_offset - part.offset == len(part.data)


@_SETTINGS
@given(
    data=st.one_of(texts, blobs),
    ranges=st.lists(st.tuples(st.integers(1, 60), st.integers(0, 60)), min_size=1, max_size=8),
)
def test_every_line_range_matches_python_splitting(
    prop_store: Any, data: Any, ranges: list[Any]
) -> None:
    meta = prop_store.put(data, principal=OWNER)
    lines = _lines(data)
    assert meta.line_count == len(lines)
    for a, b in ranges:
        part = prop_store.read(meta.record_id, principal=OWNER, start_line=a, end_line=b)
        expected = lines[a - 1 : b]
        assert part.data == data[:0].join(expected)
        if expected:
            assert data[part.offset : part.end_offset] == part.data
    # Reading every line one by one rebuilds the original exactly.
    rebuilt = [
        prop_store.read(meta.record_id, principal=OWNER, start_line=i, end_line=i).data
        for i in range(1, len(lines) + 1)
    ]
    assert data[:0].join(rebuilt) == data


@_SETTINGS
@given(
    data=texts,
    stranger=st.builds(
        Principal,
        tenant=st.sampled_from(["t", "x", None]),
        user=st.sampled_from(["u", "v", None]),
        thread=st.sampled_from(["th", "other", None]),
    ),
)
def test_access_is_uniform_and_audited(prop_store: Any, data: str, stranger: Principal) -> None:
    meta = prop_store.put(data, principal=OWNER)
    before = len(prop_store.audit_log(record_id=meta.record_id, limit=1000))
    if stranger == OWNER:
        assert prop_store.read(meta.record_id, principal=stranger).data == data
        granted = True
    else:
        with pytest.raises(RecordNotAccessibleError) as info:
            prop_store.read(meta.record_id, principal=stranger, start_line=1, end_line=2)
        assert str(info.value) == f"Tool result {meta.record_id!r} not found or not accessible."
        granted = False
    log = prop_store.audit_log(record_id=meta.record_id, limit=1000)
    assert len(log) == before + 1
    assert log[0].granted is granted
    assert log[0].principal == stranger
    assert log[0].action == "read"


@settings(max_examples=200, deadline=None)
@given(data=st.one_of(texts, blobs), size=st.integers(1, 50), keep=st.integers(0, 400))
def test_chunks_and_cap_plan_cover_exactly(data: Any, size: int, keep: int) -> None:
    gap = plan_cap(data, keep)
    chunks = list(iter_chunks(data, chunk_size=size, gap=gap))
    rebuilt = data[:0].join(c.data for c in chunks)
    if gap is None:
        assert rebuilt == data
    else:
        gs, ge = gap
        assert 0 <= gs <= ge <= len(data)
        assert rebuilt == data[:gs] + data[ge:]
        assert len(data) - (ge - gs) <= keep
    nl = "\n" if isinstance(data, str) else b"\n"
    for c in chunks:
        assert data[c.start : c.end] == c.data
        assert c.nl_before == data[: c.start].count(nl)
