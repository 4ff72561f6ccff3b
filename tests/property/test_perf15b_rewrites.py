"""Session 15 (perf15b): byte-identical rewrites of the fit's costing against the replaced code.

The costing loop (`_OrderCosts._reach_chars`) makes the shown form of a short line not made
yet itself (the common case of `LineTexts.shown`, inlined); the showing order checks each side
of a taken line on its own (no loop over the two directions, no range of the line itself);
`windows_of` finds the runs of lines with C-level maps and looks the
lines' shown forms up in one map. On any analysed text, with lines shortened before or between
the steps, each gives what the replaced code gives.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.views import _lines
from langchain_result_layer.views._lines import LineLimits, LineTexts, ShownLine, windows
from langchain_result_layer.views._ranking import windows_of
from langchain_result_layer.views._salience import Analysis
from tests.property.strategies import log_analyses


def _old_extend(order: _lines._ShowingOrder, n: float) -> bool:
    """`_ShowingOrder.extend` as it was: both directions in a loop."""
    lines, taken = order.lines, order._taken
    texts, total, reach = order._texts, order._total, order._reach
    for ln in order._ranked:
        if ln in taken:
            continue
        taken.add(ln)
        lines.append(ln)
        for step in (-1, 1):
            near = ln + step
            if near in taken or taken.isdisjoint(range(near, ln + step * reach, step)):
                continue
            gap = _lines._short_gap(ln, step, taken, texts, total)
            taken.update(gap)
            lines.extend(gap)
        if len(lines) >= n:
            return True
    return len(lines) >= n


def _limits(sizes: list[int]) -> LineLimits:
    return LineLimits(normal=sizes[0], error=sizes[1], anchor=sizes[2], anchors=2)


@settings(max_examples=300, deadline=None)
@given(analysis=log_analyses(300), data=st.data())
def test_the_showing_order_is_the_looped_one(analysis: Analysis, data: st.DataObject) -> None:
    numbers = list(range(1, analysis.total_lines + 1))
    ranked = data.draw(st.permutations(numbers).map(lambda p: p[: len(p) * 2 // 3 + 1]))
    limits = LineLimits(normal=120, error=200, anchor=300, anchors=2)
    steps = data.draw(st.lists(st.integers(1, 60), min_size=1, max_size=8))
    new = _lines._ShowingOrder(analysis, ranked, LineTexts(analysis, limits, ranked[:2]))
    old = _lines._ShowingOrder(analysis, ranked, LineTexts(analysis, limits, ranked[:2]))
    for step in [*steps, 10**9]:
        assert new.extend(len(new.lines) + step) == _old_extend(old, len(old.lines) + step)
        assert new.lines == old.lines


@settings(max_examples=300, deadline=None)
@given(
    analysis=log_analyses(600),
    sizes=st.lists(st.integers(120, 1_000), min_size=3, max_size=3),
    data=st.data(),
)
def test_costing_unmade_lines_makes_what_shown_makes(
    analysis: Analysis, sizes: list[int], data: st.DataObject
) -> None:
    """Costed on fresh shown forms (most made by the loop), then against forms `shown` made."""
    numbers = list(range(1, analysis.total_lines + 1))
    near = data.draw(st.lists(st.sampled_from(numbers), max_size=5))
    fresh = LineTexts(analysis, _limits(sizes), numbers[:2], near)
    made = LineTexts(analysis, _limits(sizes), numbers[:2], near)
    for line in data.draw(st.lists(st.sampled_from(numbers), max_size=4)):
        assert fresh.shorten(line) == made.shorten(line)
    order = data.draw(st.permutations(numbers))
    room = data.draw(st.integers(0, 30_000))
    for line in numbers:
        made.shown(line)
    costs = _lines._OrderCosts(order, fresh, room=room)
    reference = _lines._OrderCosts(order, made, room=room)
    size = data.draw(st.integers(0, 30_000))
    costs.reach(size)
    reference.reach(size)
    assert (costs.chars, costs.count, costs.singles) == (
        reference.chars,
        reference.count,
        reference.singles,
    )
    assert all(fresh._shown[ln] == made.shown(ln) for ln in order[: costs.top])
    if costs.top and data.draw(st.booleans()):  # a line shortened after it was costed
        line = order[data.draw(st.integers(0, costs.top - 1))]
        if fresh.shorten(line):
            assert made.shorten(line)
            at = order.index(line)
            costs.reset(at)
            reference.reset(at)
            costs.reach(size * 2)
            reference.reach(size * 2)
            assert (costs.chars, costs.count) == (reference.chars, reference.count)
            assert fresh.shown(line) == made.shown(line)


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.integers(1, 400), max_size=120), sort=st.booleans())
def test_runs_are_the_windows_of(lines: list[int], sort: bool) -> None:
    picked = sorted(set(lines)) if sort else lines
    assert windows_of(picked) == _old_windows_of(picked)
    assert windows_of(iter(picked)) == _old_windows_of(picked)


def _old_windows_of(lines: list[int]) -> list[tuple[int, int]]:
    """`windows_of` as it was before session 15 (a loop per line)."""
    out: list[tuple[int, int]] = []
    for ln in sorted(set(lines)):
        if out and ln == out[-1][1] + 1:
            out[-1] = (out[-1][0], ln)
        else:
            out.append((ln, ln))
    return out


@settings(max_examples=200, deadline=None)
@given(analysis=log_analyses(300), data=st.data())
def test_window_lines_are_each_lines_shown_form(analysis: Analysis, data: st.DataObject) -> None:
    numbers = list(range(1, analysis.total_lines + 1))
    texts = LineTexts(analysis, LineLimits(normal=150), numbers[:1])
    for line in data.draw(st.lists(st.sampled_from(numbers), max_size=40)):
        texts.shown(line)  # some made before, the others made by `windows`
    picked = sorted(data.draw(st.sets(st.sampled_from(numbers))))
    made = windows(analysis, picked, texts)
    assert [(w.start_line, w.end_line) for w in made] == windows_of(picked)
    expected: list[list[ShownLine]] = [
        [texts.shown(ln) for ln in range(w.start_line, w.end_line + 1)] for w in made
    ]
    assert [w.lines for w in made] == expected
