"""`showing_order` takes the same short gaps as the line-by-line gap walk it replaced.

The gap check looks for the nearest taken line first (one set check of the lines near
enough, then set lookups) and reads the shown lengths of the gap's lines only when one is
near enough; the reference below is the walk that read every neighbour's length as it went,
for every line and direction. On any text and any order of lines (with
lines short and long, taken and not), both give the same order.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.views._lines import (
    LineLimits,
    LineTexts,
    _ShowingOrder,
    showing_order,
)
from langchain_result_layer.views._salience import Analysis
from tests.property.strategies import log_analyses


def _reference_gap(ln: int, step: int, taken: set[int], texts: LineTexts, total: int) -> list[int]:
    settings = texts.analysis.settings
    gap: list[int] = []
    chars = 0
    other = ln + step
    while 1 <= other <= total:
        if other in taken:
            return gap
        chars += len(texts.shown(other).text)
        if len(gap) == settings.gap_fill_lines or chars > settings.gap_fill_chars:
            return []
        gap.append(other)
        other += step
    return []


def _reference_order(analysis: Analysis, ranked: list[int], texts: LineTexts) -> list[int]:
    """Every line taken in turn, both of its gaps walked line by line (no look-ahead)."""
    taken: set[int] = set()
    order: list[int] = []
    for ln in ranked:
        if ln not in taken:
            taken.add(ln)
            order.append(ln)
            for step in (-1, 1):
                gap = _reference_gap(ln, step, taken, texts, analysis.total_lines)
                taken.update(gap)
                order += gap
    return order


@settings(max_examples=300, deadline=None)
@given(analysis=log_analyses(260), data=st.data())
def test_showing_order_is_the_line_by_line_walks(analysis: Analysis, data: st.DataObject) -> None:
    numbers = list(range(1, analysis.total_lines + 1))
    ranked = data.draw(st.permutations(numbers).map(lambda p: p[: len(p) // 2 + 1]))
    limits = LineLimits(normal=120, error=200, anchor=300, anchors=2)
    new = showing_order(analysis, ranked, LineTexts(analysis, limits, ranked[:2]))
    old = _reference_order(analysis, ranked, LineTexts(analysis, limits, ranked[:2]))
    assert new == old


@settings(max_examples=300, deadline=None)
@given(analysis=log_analyses(260), data=st.data())
def test_the_order_made_as_far_as_it_is_read_is_the_whole_order(
    analysis: Analysis, data: st.DataObject
) -> None:
    """Made in steps (as a fit reads it), with taken lines shortened or dropped between the
    steps (as a stuck fit does), the order is the whole order with the same lines dropped."""
    numbers = list(range(1, analysis.total_lines + 1))
    ranked = data.draw(st.permutations(numbers).map(lambda p: p[: len(p) // 2 + 1]))
    limits = LineLimits(normal=120, error=200, anchor=300, anchors=2)
    texts = LineTexts(analysis, limits, ranked[:2])
    lazy = _ShowingOrder(analysis, ranked, texts)
    whole = showing_order(analysis, ranked, LineTexts(analysis, limits, ranked[:2]))
    dropped: list[int] = []
    while lazy.extend(len(lazy.lines) + data.draw(st.integers(1, 40))):
        if lazy.lines and data.draw(st.booleans()):
            at = data.draw(st.integers(0, len(lazy.lines) - 1))
            if not texts.shorten(lazy.lines[at]):
                dropped.append(lazy.lines.pop(at))
    assert lazy.lines == [ln for ln in whole if ln not in dropped]
