"""Session 14 (perf14): byte-identical rewrites against the code they replaced.

The weights pass keeps the `_group_key` of each error text it keys (`_lower_repeats`), and the
ranking's `_grouped` reads those keys instead of making them again: every key is the one
`_group_key` makes, so the groups are the same. The rows sniff reads the first
`_SNIFF_LINES` non-blank lines of its prefix and stops, instead of cleaning every line of the
prefix and keeping the first `_SNIFF_LINES`. A line view asks each window whether it has
cuts, for its cuts and for its line texts (from the texts and cut rows the window makes once)
instead of reading every shown line again on every render.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.views import _tabular
from langchain_result_layer.views._lines import LineLimits, LineTexts, windows
from langchain_result_layer.views._ranking import _group_key, _grouped
from langchain_result_layer.views._salience import Analysis, analyse
from tests.property.strategies import log_analyses

_LINES = st.lists(
    st.sampled_from(
        [
            "error: boom 12",
            "error: boom 7",
            "  at a.b(C.java:1)",
            "FAILED test_x - AssertionError",
            "2024-01-01 12:00:00 ERROR disk 3 full",
            "warning: deprecated /usr/lib/x",
            "ok",
            "",
            "$ make test",
            'The command "make" exited with 2.',
        ]
    ),
    min_size=1,
    max_size=80,
)


def _check_keys(analysis: Analysis) -> None:
    keys = analysis._group_keys
    assert all(key == _group_key(text) for text, key in keys.items())
    fresh = _grouped(analysis.priority, analysis.texts, analysis.roles)
    shared = _grouped(analysis.priority, analysis.texts, analysis.roles, dict(keys))
    assert shared == fresh


@settings(max_examples=200, deadline=None)
@given(lines=_LINES)
def test_shared_group_keys_group_as_fresh_ones(lines: list[str]) -> None:
    _check_keys(analyse("\n".join(lines) + "\n"))


@settings(max_examples=100, deadline=None)
@given(analysis=log_analyses(300))
def test_shared_group_keys_on_selection_logs(analysis: Analysis) -> None:
    _check_keys(analysis)


def _old_sniff_lines(prefix: str, *, whole: bool) -> list[str]:
    lines = prefix.split("\n")
    if not whole:
        lines = lines[:-1]
    return [_tabular._strip_cr(ln) for ln in lines if ln.strip()][: _tabular._SNIFF_LINES]


_SNIFF_TEXTS = st.lists(
    st.sampled_from(["a,b", "1,2", "", " ", "\t", "\r", "x|y", "\u2028", "\x1c", "é"]),
    max_size=500,
).map("\n".join)


@settings(max_examples=300, deadline=None)
@given(prefix=_SNIFF_TEXTS, whole=st.booleans())
def test_sniff_lines_stop_at_the_sample(prefix: str, whole: bool) -> None:
    assert _tabular._sniff_lines(prefix, whole=whole) == _old_sniff_lines(prefix, whole=whole)


@settings(max_examples=100, deadline=None)
@given(analysis=log_analyses(3_000))
def test_window_cut_and_text_helpers_match_the_line_loops(analysis: Analysis) -> None:
    texts = LineTexts(analysis, LineLimits(normal=120, error=200, anchor=300), [])
    shown = windows(analysis, sorted(analysis.priority), texts)
    assert any(w.has_cuts() for w in shown) == any(line.cuts for w in shown for line in w.lines)
    assert [c for w in shown for c in w.all_cuts()] == [
        c for w in shown for line in w.lines for c in line.cuts
    ]
    assert [t for w in shown for t in w.line_texts()] == [
        line.text for w in shown for line in w.lines
    ]
