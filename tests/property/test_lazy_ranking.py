"""`Analysis.ranking`, made as far as it is read, is the whole greedy ranking it replaced.

The reference below is the greedy loop that made the whole order at once (a list). On any
text, for a result reported as an error or not, and however the ranking is read (its head,
capped views, readers interleaved and stopping anywhere), every reader sees a prefix of the
reference, and a reader that reads to the end sees all of it.
"""

from __future__ import annotations

import heapq
from itertools import islice

from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.core.evidence import SALIENCE_ITEM
from langchain_result_layer.views import _ranking
from langchain_result_layer.views._ranking import _best_last, _grouped
from langchain_result_layer.views._salience import Analysis
from tests.property.strategies import log_analyses


def _reference(analysis: Analysis) -> list[int]:
    """The greedy order made whole, as `_greedy` made it before it was lazy."""
    settings = analysis.settings
    effective = dict(analysis.priority)
    texts, roles, own = analysis.texts, analysis.roles, analysis.own
    by_group, solo = _grouped(effective, texts, roles)
    heap: list[tuple[float, int, int, str, int]] = []
    for key, members in by_group.items():
        _best_last(members, effective)
        heap.append((-effective[members[-1]], -members[-1], 0, key, 0))
    heap.extend((-effective[ln], -ln, -1, "", 0) for ln in solo)
    heapq.heapify(heap)
    copies: dict[str, int] = {}
    order: list[int] = []
    while heap:
        neg_value, neg_ln, taken, key, applied = heapq.heappop(heap)
        line = -neg_ln
        exact = texts.get(line, "").strip()
        seen = copies.get(exact, 0) if exact else 0
        if seen > applied:
            factor = settings.exact_repeat ** (seen - applied)
            heapq.heappush(heap, (neg_value * factor, neg_ln, taken, key, seen))
            continue
        order.append(line)
        if exact:
            copies[exact] = seen + 1
        if taken < 0:
            continue
        members = by_group[key]
        members.pop()
        if not members:
            continue
        if (
            taken == 0
            and 0.0 < own.get(line, 0.0) < SALIENCE_ITEM
            and all(m in own for m in members)
        ):
            members.sort(reverse=True)
        taken += 1
        nxt = members[-1]
        if own.get(nxt, 0.0) >= SALIENCE_ITEM:
            line_factor = settings.item_repeat ** max(0, taken - 5)
        else:
            line_factor = settings.other_repeat ** max(0, taken - 2)
        heapq.heappush(heap, (-effective[nxt] * line_factor, -nxt, taken, key, 0))
    return order


_READS = st.lists(
    st.tuples(st.sampled_from(["head", "capped", "iter"]), st.integers(0, 90), st.integers(0, 90)),
    max_size=8,
)


@settings(max_examples=300, deadline=None)
@given(
    analysis=log_analyses(260),
    is_error=st.booleans(),
    reads=_READS,
    chunk=st.sampled_from([1, 2, 3, 7, _ranking._CHUNK]),
)
def test_lazy_ranking_is_the_whole_greedy_order(
    analysis: Analysis, is_error: bool, reads: list[tuple[str, int, int]], chunk: int
) -> None:
    """Small chunks too, so that reads cross the ends of chunks on short texts."""
    made_at_once = _ranking._CHUNK
    _ranking._CHUNK = chunk
    try:
        _check_reads(analysis.for_status(is_error=is_error), reads)
    finally:
        _ranking._CHUNK = made_at_once


def _check_reads(analysis: Analysis, reads: list[tuple[str, int, int]]) -> None:
    expected = _reference(analysis)
    ranking = analysis.ranking()
    open_readers = []
    for how, n, stop in reads:
        if how == "head":
            assert ranking.head(n) == expected[:n]
        else:
            reader = ranking.capped(n) if how == "capped" else ranking
            got = iter(reader)
            seen = list(islice(got, stop))
            assert seen == expected[: min(stop, n if how == "capped" else stop)]
            open_readers.append((got, len(seen), n if how == "capped" else len(expected)))
    for got, start, end in open_readers:  # readers left half-way go on where they stopped
        assert list(got) == expected[start:end]
    assert bool(ranking) == bool(expected)
    assert list(ranking) == expected
    assert analysis.ranked() == expected
