"""The shown forms, costs, windows and sections of a fit, against the code they replaced.

`LineTexts.shown` skips the limit of a line no longer than every limit (and not cut
shorter before); `_OrderCosts.reach` reads each line's cost inline; `windows` finds a
window's roles with one `map`; a window's line texts and cut lines are listed once, for its
record and its sections. On any analysis, any limits (the normal one longer than the
others too), any shortenings and any order, the shown forms, the costs per level, the
windows, their records and their sections are those of the replaced code, kept here as the
reference.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.core.evidence import SALIENCE_ITEM
from langchain_result_layer.core.render import Fence
from langchain_result_layer.views import _lines
from langchain_result_layer.views._layout import Section
from langchain_result_layer.views._lines import (
    LineLimits,
    LineTexts,
    ShownLine,
    Window,
    clip_line,
    cut_marker,
    window_sections,
    windows,
)
from langchain_result_layer.views._ranking import windows_of
from langchain_result_layer.views._salience import Analysis
from tests.property.strategies import log_analyses

_ROLE_ORDER = ("exit", "error", "detail", "context", "tail", "fill")


def _reference_shown(texts: LineTexts, shortened: dict[int, int], line_no: int) -> ShownLine:
    analysis, limits = texts.analysis, texts.limits
    text = analysis.text(line_no) or ""
    if line_no in shortened:
        limit = shortened[line_no]
    elif line_no in texts.anchors:
        limit = limits.anchor
    elif line_no in texts.near or analysis.own.get(line_no, 0.0) >= SALIENCE_ITEM:
        limit = limits.error
    else:
        limit = limits.normal
    if len(text) <= limit:
        return ShownLine(text=text)
    span = analysis.span(line_no)
    raw = analysis.raw_line(line_no) or text
    return clip_line(raw, text, limit, span[0] if span else None)


def _reference_costs(order: list[int], texts: LineTexts, upto: int) -> tuple[list[int], list[int]]:
    chars, count, taken = [0], [0], set()
    for ln in order[:upto]:
        joins = (ln - 1 in taken) + (ln + 1 in taken)
        taken.add(ln)
        chars.append(chars[-1] + texts.cost(ln))
        count.append(count[-1] + 1 - joins)
    return chars, count


def _reference_roles(analysis: Analysis, lines: list[int]) -> list[str]:
    roles = []
    for first, last in windows_of(lines):
        seen = {analysis.roles.get(ln, "context") for ln in range(first, last + 1)}
        role = next((r for r in _ROLE_ORDER if r in seen), "context")
        if role in ("context", "detail", "fill") and last == analysis.total_lines:
            role = "tail"
        if role in ("detail", "fill"):
            role = "error" if role == "detail" else "context"
        roles.append(role)
    return roles


def _reference_item(window: Window) -> dict[str, object]:
    """The record as the replaced code made it, every line read for its cuts."""
    numbered = [(str(window.start_line + i), line) for i, line in enumerate(window.lines)]
    texts = [line.text for _, line in numbered]
    return {
        "type": "window",
        "role": window.role,
        "start_line": window.start_line,
        "end_line": window.end_line,
        "start_char": window.start_char,
        "end_char": window.end_char,
        "lines": texts,
        "text": "\n".join(texts),
        "clipped": {key: sum(c.chars for c in line.cuts) for key, line in numbered if line.cuts},
        "cuts": {
            key: [[c.at, c.start, c.end] for c in line.cuts] for key, line in numbered if line.cuts
        },
    }


def _reference_sections(items: list[Window], fence: Fence) -> list[Section]:
    sections: list[Section] = []
    for item in items:
        out: list[str] = []
        for line in item.lines:
            shown = line.text
            if line.cuts:
                for cut in sorted(line.cuts, key=lambda c: c.at, reverse=True):
                    shown = shown[: cut.at] + fence.marker(cut_marker(cut)) + shown[cut.at :]
            out.append(shown)
        first, last = item.start_line, item.end_line
        title = f"line {first}" if first == last else f"lines {first}-{last}"
        sections.append(Section(title=title, lines=out))
    return sections


@settings(max_examples=300, deadline=None)
@given(
    analysis=log_analyses(900),
    sizes=st.lists(st.integers(120, 1_000), min_size=3, max_size=3),
    data=st.data(),
)
def test_shown_forms_costs_and_windows_are_those_of_the_replaced_code(
    analysis: Analysis, sizes: list[int], data: st.DataObject
) -> None:
    numbers = list(range(1, analysis.total_lines + 1))
    limits = LineLimits(normal=sizes[0], error=sizes[1], anchor=sizes[2], anchors=2)
    near = data.draw(st.lists(st.sampled_from(numbers), max_size=5))
    texts = LineTexts(analysis, limits, numbers[:2], near)
    shortened: dict[int, int] = {}
    for line in data.draw(st.lists(st.sampled_from(numbers), max_size=4)):
        if texts.shorten(line):
            shortened[line] = texts._limit[line]
    order = data.draw(st.permutations(numbers))
    for line in numbers:
        assert texts.shown(line) == _reference_shown(texts, shortened, line)
    costs = _lines._OrderCosts(order, texts, room=data.draw(st.integers(0, 20_000)))
    costs.reach(data.draw(st.integers(0, 20_000)))
    chars, count = _reference_costs(order, texts, costs.top)
    assert (costs.chars, costs.count) == (chars, count)
    picked = sorted(data.draw(st.sets(st.sampled_from(numbers))))
    made: list[Window] = windows(analysis, picked, texts)
    assert [w.role for w in made] == _reference_roles(analysis, picked)
    assert [w.lines for w in made] == [
        [texts.shown(ln) for ln in range(w.start_line, w.end_line + 1)] for w in made
    ]
    fence = Fence(nonce="abcdefgh")
    for _ in range(2):  # made once, then read again
        assert [w.as_item() for w in made] == [_reference_item(w) for w in made]
        assert window_sections(made, fence) == _reference_sections(made, fence)
