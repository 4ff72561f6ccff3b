"""Lines printed again are scored and grouped once: the same as line by line.

The scan scores each distinct head (first 600 characters) of a candidate line once, and the
ranking makes each distinct text's group key once. On texts full of repeated lines (and
lines equal only in their first 600 characters), both equal their per-line definitions.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.core.evidence import line_salience, salience_of
from langchain_result_layer.views._ranking import _best_last, _group_key, _grouped
from langchain_result_layer.views._salience import _NOISE_RE, analyse

_LINES = st.sampled_from(
    [
        *("error: disk full", "FAILED test_x", "  at a.b(C.java:1)", "ok", "", "Warning: x"),
        *("make: *** [all] Error 2", "1) test fails", "exit code 1", "travis_time:end:1"),
        *("x" * 600 + " error: late", "x" * 600 + " fine"),
        *("x" * 300 + " error: mid", "x" * 300 + " fine"),
    ]
)
_TEXTS = st.lists(_LINES, min_size=1, max_size=80).map(lambda ls: "\n".join(ls) + "\n")


@settings(max_examples=300, deadline=None)
@given(raw=_TEXTS)
def test_every_scored_line_has_the_salience_of_its_own_head(raw: str) -> None:
    analysis = analyse(raw)
    for line_no, score in analysis.own.items():
        text = analysis.text(line_no) or ""
        assert not _NOISE_RE.match(text)
        head = text[:600]
        assert score == salience_of(head, head.lower())
    for line_no in range(1, analysis.total_lines + 1):
        text = analysis.text(line_no) or ""
        if line_no not in analysis.own and not _NOISE_RE.match(text):
            assert line_salience(text) == 0.0


_ROLES = st.sampled_from(["context", "error", "detail", "tail", "head", "exit", "fill"])


@settings(max_examples=300, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.sampled_from(["a 1", "a 2", "b /x/y", "", "c d e f", "12:00 a"]), _ROLES),
        max_size=40,
    )
)
def test_grouped_is_the_group_key_of_every_line(rows: list[tuple[str, str]]) -> None:
    texts = {ln: text for ln, (text, _) in enumerate(rows, 1) if text}
    roles = {ln: role for ln, (_, role) in enumerate(rows, 1) if role != "context"}
    lines = list(range(1, len(rows) + 1))
    solo = [ln for ln in lines if roles.get(ln, "context") in ("tail", "exit", "fill")]
    expected: dict[str, list[int]] = {}
    for ln in lines:
        if ln not in solo:
            expected.setdefault(_group_key(texts.get(ln, "")), []).append(ln)
    assert _grouped(lines, texts, roles) == (expected, solo)


@given(
    values=st.dictionaries(
        st.integers(1, 500), st.sampled_from([0.0, 0.5, 1.0, 2.5, 1e-9, 3.0]), max_size=60
    )
)
def test_best_last_sorts_by_value_then_line(values: dict[int, float]) -> None:
    members = list(values)
    _best_last(members, values)
    assert members == sorted(values, key=lambda ln: (values[ln], ln))
