"""`showing_order` takes the same short gaps as the line-by-line gap walk it replaced.

The gap check looks for the nearest taken line first (set lookups) and reads the shown
lengths of the gap's lines only when one is near enough; the reference below is the walk
that read every neighbour's length as it went. On any text and any order of lines (with
lines short and long, taken and not), both give the same order.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.views import _lines
from langchain_result_layer.views._lines import LineLimits, LineTexts, showing_order
from langchain_result_layer.views._salience import analyse


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


_LINES = st.lists(
    st.one_of(
        st.sampled_from(["ok", "", "error: boom", "FAILED test_x", "  at a.b(C.java:1)"]),
        st.integers(0, 260).map(lambda n: "x" * n),
    ),
    min_size=1,
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(lines=_LINES, data=st.data())
def test_showing_order_is_the_line_by_line_walks(lines: list[str], data: st.DataObject) -> None:
    raw = "\n".join(lines) + "\n"
    analysis = analyse(raw)
    numbers = list(range(1, analysis.total_lines + 1))
    ranked = data.draw(st.permutations(numbers).map(lambda p: p[: len(p) // 2 + 1]))
    limits = LineLimits(normal=120, error=200, anchor=300, anchors=2)
    new = showing_order(analysis, ranked, LineTexts(analysis, limits, ranked[:2]))
    saved = _lines._short_gap
    _lines._short_gap = _reference_gap  # the same order, gap by gap the old way
    try:
        old = showing_order(analysis, ranked, LineTexts(analysis, limits, ranked[:2]))
    finally:
        _lines._short_gap = saved
    assert new == old
