"""The analysis passes rewritten for speed give what the code they replaced gave.

Session 11 (perf11): `clean_for_display` returns a coloured line (escapes, no line break or
carriage return) whose escapes leave it printable once they are removed, without its other
checks; `_fold` replaces digits in the line's UTF-8 instead of with
`str.translate`; a line is read through a closure over the one region of a text analysed
whole, and a printable line is not cleaned; `_fill` offers its priorities run by run instead
of as a list of tuples; the context walk tests a line for a prompt only when it holds `$ ` or
a CI group. The replaced code is kept here as the reference; `analyse` with it swapped in
must give the same analysis on random text (line endings, form feeds, escapes, long lines,
blank runs, characters past ASCII and surrogates included).
"""

from __future__ import annotations

import heapq

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.core import normalize
from langchain_result_layer.core.normalize import clean_for_display
from langchain_result_layer.views import _salience
from langchain_result_layer.views._salience import _DIGITS_TO_ZERO, _ZEROS_RE, _fold, analyse


def _old_clean_for_display(text: str) -> str:
    """`clean_for_display` before its one-coloured-line step."""
    if text.isprintable() or not normalize.needs_cleaning(text):
        return text
    if "\x1b" in text or "\x9b" in text:
        text = normalize._ANSI_RE.sub("", text)
    if "\r" in text:
        text = normalize._collapse_bare_cr(text)
    if normalize._REST_RE.search(text) is None:
        return text
    text = normalize._CONTROL_RE.sub(normalize._control_picture, text)
    if "\x1b" in text:
        text = text.replace("\x1b", "\u241b")
    if "\x9b" in text:
        text = text.replace("\x9b", "\ufffd")
    if normalize._SURROGATE_RE.search(text):
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        text = normalize._SURROGATE_RE.sub("\ufffd", text)
    return text


def _old_fold(text: str) -> str:
    folded = text.strip()[:200].translate(_DIGITS_TO_ZERO)
    return _ZEROS_RE.sub("0", folded) if "00" in folded else folded


def _old_region_text(region: _salience._Region, i: int) -> str:
    line = region.raw_lines[i].rstrip("\r")
    return _old_clean_for_display(line).rstrip("\r") if line else line


def _old_fill(work: _salience._Work, weights: _salience._Weights, total: int) -> None:
    settings = work.settings
    strongest = heapq.nlargest(
        settings.fill_anchors, weights.anchor.items(), key=lambda item: item[1]
    )
    share, decay = settings.fill_share, settings.fill_decay
    after = [decay**d for d in range(1, settings.fill_after + 1)]
    before = [decay ** (4 * d) for d in range(1, settings.fill_after // 4 + 1)]
    offers: list[tuple[int, float]] = []
    for line_no, weight in strongest:
        base = weight * share
        offers += [(line_no + d, base * f) for d, f in enumerate(after, 1)]
        offers += [(line_no - d, base * f) for d, f in enumerate(before, 1)]
    tail_base = settings.tail_floor * share
    offers += [(total - d, tail_base * decay**d) for d in range(settings.fill_tail)]
    values, roles = work.out.value, work.out.role
    for line_no, value in offers:
        if not 1 <= line_no <= total or value <= values.get(line_no, 0.0):
            continue
        where = work.lines.locate(line_no)
        line = None if where is None else where[0].raw_lines[where[1]]
        if line is not None and line.strip():
            values[line_no] = value
            roles[line_no] = "fill"


_PIECES = [
    *("error: x", "ERROR ", "FAILED ", "Traceback (most recent call last):", "  at a.b(C.java:1)"),
    *("$ make test", "+ ls", "> q", "##[group]Run x", "travis_fold:start:x\r\x1b[0K$ make"),
    *('The command "make" exited with 2.', "exit code 1", "BUILD FAILED", "1) test_x", "  "),
    *("\t", "\r", "\r\n", "\f", "\x0b", "\x1c", "\x85", "\xa0", "\u2003", "\x1b[31m", "\x1b[0m"),
    *("\x00", "\x7f", "\ud800", "\udc00", "\ud83d\ude00", "é", "İ", "\u212a", "12", "007", "3.5"),
    *("warning: y", "[warn] z", "expected 1 but was 2", "Downloading x", "x" * 250, "é" * 210),
    *("a.c:1:2: error: y", "Process finished with exit code 1", "Caused by: E", "  - item"),
]
_LINE = st.lists(st.sampled_from(_PIECES), max_size=6).map("".join)
_TEXTS = st.one_of(
    st.lists(_LINE, max_size=60).map("\n".join),
    st.lists(st.one_of(_LINE, st.text(max_size=40)), max_size=40).map("\n".join),
)


_ESCAPED = st.lists(
    st.sampled_from(
        [
            *("\x1b[31m", "\x1b[0m", "\x1b[0K", "\x1b[33;1m", "\x1b]0;t\x07", "\x1b]8;;x", "\x1b"),
            *("\x1bP1\x1b\\", "\x1b(B", "\x9b1m", "\x9b", "\x1b[", "\x1b[1", "a", "é", " ", "\t"),
            *("\r", "\n", "\x00", "\x7f", "\ud800", "\u200b", "\xa0", "\u2028", "ok", "[1/2]"),
        ]
    ),
    max_size=16,
).map("".join)


@settings(max_examples=1500, deadline=None)
@given(text=st.one_of(_ESCAPED, _LINE, st.text(max_size=80)))
def test_cleaning_is_that_of_the_replaced_code(text: str) -> None:
    assert clean_for_display(text) == _old_clean_for_display(text)


@settings(max_examples=600, deadline=None)
@given(text=st.one_of(_LINE, st.text(max_size=300)))
def test_fold_is_that_of_str_translate(text: str) -> None:
    assert _fold(text) == _old_fold(text)


@settings(max_examples=600, deadline=None)
@given(text=_TEXTS)
def test_line_texts_are_those_of_the_replaced_code(text: str) -> None:
    region = _salience._split_region(text, 0, len(text), 1)
    lines = _salience._Lines(regions=[region], firsts=[1])
    reference = _salience._split_region(text, 0, len(text), 1)
    count = len(region.raw_lines)
    for line_no in (*range(count + 2), -1, count, count + 1):
        i = line_no - 1
        expected = _old_region_text(reference, i) if 0 <= i < count else None
        assert lines.text(line_no) == expected
        assert lines.text(line_no) == expected  # cached
        assert lines._text_of(line_no) == expected  # the search by region


def _analysis(text: str, *, is_error: bool) -> tuple[object, ...]:
    a = analyse(text, is_error=is_error)
    return (
        sorted(a.priority.items()),
        sorted(a.roles.items()),
        sorted(a.texts.items()),
        sorted(a.own.items()),
        a.error_lines,
        a.verdict_lines,
        a.patterns,
        a.ranked(),
        [a.text(ln) for ln in range(a.total_lines + 2)],
    )


@settings(max_examples=300, deadline=None)
@given(text=_TEXTS, is_error=st.booleans())
def test_analysis_is_that_of_the_replaced_passes(text: str, is_error: bool) -> None:
    new = _analysis(text, is_error=is_error)
    patch = pytest.MonkeyPatch()
    try:
        patch.setattr(_salience, "_fold", _old_fold)
        patch.setattr(_salience, "_fill", _old_fill)
        patch.setattr(_salience, "_GROUP_RUN", "")  # every line is tested for a prompt
        patch.setattr(_salience._Region, "text", _old_region_text)
        old = _analysis(text, is_error=is_error)
    finally:
        patch.undo()
    assert new == old
