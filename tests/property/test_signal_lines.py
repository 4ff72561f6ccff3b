"""The one-pass word search finds exactly the lines the per-word `str.find` search finds.

`Signals.word_lines` (an Aho-Corasick pass over UTF-8 blocks) replaces a `str.find` per word
in the evidence engine's candidate search; the candidate lines, and so every view, must not
change. The reference is `Signals.positions` (the per-word search) mapped to lines, on any
text, any line-aligned region, non-ASCII and lone surrogates included, with blocks small
enough that lines are split between blocks and lines longer than a block are read in chunks.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from contextlib import contextmanager

from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.core import evidence
from langchain_result_layer.core.evidence import ALL_SIGNALS, CORE_SIGNALS, Signals
from langchain_result_layer.views import _salience

_PIECES = [
    *CORE_SIGNALS.words,
    *ALL_SIGNALS.words,
    "err",
    "rro",
    "FAI",
    "x",
    "e",
    "r",
    " ",
    "\n",
    "\n",
    "\r\n",
    ":12:3: ",
    "1) ",
    *(word.upper() for word in ALL_SIGNALS.words),
    *(word.title() for word in ALL_SIGNALS.words),
    "##[GROUP]RUN ",
    "É",
    "Σ",
    "é",
    "İ",
    "K",
    "😀",
    "\ud800",
]
_TEXTS = st.lists(st.sampled_from(_PIECES), max_size=400).map("".join)
_BLOCKS = st.sampled_from([1, 3, 8, 24, 64, 160, 1 << 18])


@contextmanager
def _block(size: int, *, automaton: bool = True) -> Iterator[None]:
    """Blocks of `size` characters (and the automaton, or the per-word fallback)."""
    saved = evidence._WORD_BLOCK, evidence._AUTOMATON
    evidence._WORD_BLOCK = size
    evidence._AUTOMATON = automaton and saved[1]
    try:
        yield
    finally:
        evidence._WORD_BLOCK, evidence._AUTOMATON = saved


def _line_starts(text: str, lo: int, hi: int) -> list[int]:
    return [lo, *(m.end() for m in re.finditer("\n", text[lo:hi]))]


def _lines_of(offsets: set[int], starts: list[int], lo: int) -> set[int]:
    return {bisect.bisect_right(starts, lo + at) - 1 for at in offsets} if offsets else set()


def _word_lines_reference(signals: Signals, text: str, lo: int, hi: int) -> set[int]:
    lines = text[lo:hi].split("\n")
    return {i for i, line in enumerate(lines) if any(word in line for word in signals.words)}


def test_the_automaton_is_installed() -> None:
    assert evidence._AUTOMATON  # a dependency: the fast path is the one tested below


@settings(max_examples=400, deadline=None)
@given(
    text=_TEXTS,
    cut=st.integers(0, 200),
    tail=st.integers(0, 200),
    block=_BLOCKS,
    automaton=st.booleans(),
)
def test_word_lines_are_the_lines_of_the_per_word_search(
    text: str, cut: int, tail: int, block: int, automaton: bool
) -> None:
    newlines = [m.end() for m in re.finditer("\n", text)]
    lo = ([0, *newlines])[cut % (len(newlines) + 1)]
    hi = max(lo, len(text) - tail)
    for signals in (CORE_SIGNALS, ALL_SIGNALS):
        with _block(block, automaton=automaton):
            found = signals.word_lines(text, lo, hi)
        assert found == sorted(set(found))
        assert set(found) == _word_lines_reference(signals, text, lo, hi)
        # With the patterns, the same lines as the per-word search's offsets.
        starts = [at - lo for at in _line_starts(text, lo, hi)]
        both = set(found) | _lines_of(
            {at - lo for at in signals.pattern_positions(text, lo, hi)}, starts, 0
        )
        assert both == _lines_of({at - lo for at in signals.positions(text, lo, hi)}, starts, 0)


def _reference_candidates(region: _salience._Region, raw: str, full_scan_chars: int) -> list[int]:
    """`_candidate_lines` as it was: every signal's offsets by the per-word search."""
    start, end = region.text_offset, region.starts[-1]
    if end <= start:
        return []
    tail_at = max(start, end - full_scan_chars)
    if tail_at > start:
        tail_at = raw.rfind("\n", start, tail_at) + 1
    positions = CORE_SIGNALS.positions(raw, start, end)
    tail = raw[tail_at:end].lower()
    positions.update(tail_at + at for at in ALL_SIGNALS.positions(tail))
    found = {bisect.bisect_right(region.starts, at) - 1 for at in positions}
    return sorted(i for i in found if 0 <= i < len(region.raw_lines))


@settings(max_examples=300, deadline=None)
@given(
    text=_TEXTS,
    head=st.integers(0, 40),
    full=st.integers(0, 300),
    block=_BLOCKS,
)
def test_candidate_lines_are_unchanged(text: str, head: int, full: int, block: int) -> None:
    newlines = [m.end() for m in re.finditer("\n", text)]
    start = ([0, *newlines])[head % (len(newlines) + 1)]
    raw = text
    region = _salience._split_region(raw, start, len(raw), raw.count("\n", 0, start) + 1)
    with _block(block):
        found = _salience._candidate_lines(region, raw, None, full_scan_chars=full)
    assert found == _reference_candidates(region, raw, full)


def test_only_two_characters_past_ascii_lower_to_ascii() -> None:
    """What `lowers_like_ascii` relies on, for every code point of this Python's Unicode."""
    found = [chr(c) for c in range(0x80, 0x110000) if any(ord(x) < 0x80 for x in chr(c).lower())]
    assert found == list(evidence._LOWERS_TO_ASCII)
    assert all(len(chr(c).lower()) == 1 for c in range(0x80, 0x110000) if chr(c) != "\u0130")


@settings(max_examples=300, deadline=None)
@given(text=_TEXTS, block=_BLOCKS, automaton=st.booleans())
def test_lowered_word_lines_are_those_of_the_lower_cased_text(
    text: str, block: int, automaton: bool
) -> None:
    if not evidence.lowers_like_ascii(text):
        text = text.replace("\u0130", "I").replace("\u212a", "K")
    with _block(block, automaton=automaton):
        lowered = ALL_SIGNALS.word_lines(text, 0, len(text), lowered=True)
        assert lowered == ALL_SIGNALS.word_lines(text.lower(), 0, len(text))
    assert ALL_SIGNALS.pattern_positions(text) == ALL_SIGNALS.pattern_positions(text.lower())


def test_a_line_longer_than_a_block_is_read_to_its_end() -> None:
    line = "x" * 1_000 + "error" + "y" * 1_000
    text = f"ok\n{line}\nok\n" + "z" * 3_000 + "fail"
    with _block(64):
        assert CORE_SIGNALS.word_lines(text, 0, len(text)) == [1, 3]
        assert CORE_SIGNALS.word_lines(text, 0, len(text) - 1) == [1]  # `fail` cut at `hi`


_KEYWORD_TEXTS = st.lists(
    st.sampled_from(
        [
            *evidence._KEYWORD_LITERALS,
            *("fail", "fail_", "failé", "failed", "x", " "),
            *("\n",) * 12,
            *("é", "😀", "\ud800", "_", "1"),
        ]
    ),
    max_size=200,
).map("".join)


@contextmanager
def _scan_window(size: int) -> Iterator[None]:
    saved = evidence._SCAN_WINDOW, evidence._AUTOMATON_WINDOW
    evidence._SCAN_WINDOW = evidence._AUTOMATON_WINDOW = size
    try:
        yield
    finally:
        evidence._SCAN_WINDOW, evidence._AUTOMATON_WINDOW = saved


@settings(max_examples=400, deadline=None)
@given(
    text=_KEYWORD_TEXTS,
    cut=st.tuples(st.integers(0, 600), st.integers(0, 600)),
    window=st.sampled_from([1, 4, 9, 30, 1 << 20]),
)
def test_the_automaton_finds_the_lines_of_the_literal_scan(
    text: str, cut: tuple[int, int], window: int
) -> None:
    lo, hi = sorted((min(cut[0], len(text)), min(cut[1], len(text))))
    with _scan_window(window):
        fast = list(evidence._automaton_spans(text, lo, hi))
        slow = list(evidence._literal_spans(text, lo, hi))
    reference: list[tuple[int, int]] = []
    for match in evidence._KEYWORD_RE.finditer(text, lo, hi):
        if not reference or match.start() >= reference[-1][1]:
            reference.append(evidence._line_span(text, match.start(), lo, hi))
    assert fast == slow == reference
