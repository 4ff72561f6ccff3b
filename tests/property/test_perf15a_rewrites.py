"""Session 15 (perf15a): byte-identical rewrites against the code they replaced.

The line-start patterns of the candidate search (`_ITEM_START`, `_ANY_START`) are possessive:
they match exactly where their backtracking forms do. `Signals.word_lines` reads a whole text
of up to `_WHOLE_TEXT_BLOCK` characters as one block: the lines are those the block-by-block
search finds.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.core import evidence
from langchain_result_layer.core.evidence import ALL_SIGNALS, CORE_SIGNALS, Signals

_OLD_ANSI_PREFIX = r"(?:\x1b\[[0-?]{0,20}[ -/]{0,4}[@-~]|\r){0,8}[ \t]{0,40}"
_OLD_ITEM_START = re.compile("^" + _OLD_ANSI_PREFIX + r"\d{1,5}\) ")
_OLD_ANY_START = re.compile(
    "^" + _OLD_ANSI_PREFIX + r"(?:\d{1,5}[.)] |_{3,} |={3,} |\$ |> |\+ |##\[group\]run )",
    re.IGNORECASE,
)

# The pieces the patterns are made of, and their neighbours (an escape's classes, blanks,
# digits, the branch starts, letters and case variants, line breaks).
_PIECES = st.sampled_from(
    [
        "\x1b[",
        "\x1b[0m",
        "\x1b[1;31m",
        "\x1b[38:5:1m",
        "\x1b[ m",
        "\x1b",
        "\r",
        " ",
        "\t",
        "  ",
        "1",
        "12",
        "123456",
        ")",
        ".",
        ") ",
        ". ",
        "_",
        "___",
        "=",
        "===",
        "$",
        "$ ",
        "> ",
        "+ ",
        "##[group]Run ",
        "##[GROUP]run ",
        "a",
        "K",
        "\u212a",
        "\u0130",
        "x",
        ":",
        "\n",
        "é",
        "✗",
    ]
)
_TEXTS = st.lists(_PIECES, max_size=40).map("".join)


@settings(max_examples=1500, deadline=None)
@given(text=_TEXTS, start=st.integers(0, 6))
def test_possessive_line_starts_match_as_backtracking_ones(text: str, start: int) -> None:
    pairs = ((evidence._ITEM_START, _OLD_ITEM_START), (evidence._ANY_START, _OLD_ANY_START))
    for new, old in pairs:
        got, want = new.match(text, start), old.match(text, start)
        assert (got and got.span()) == (want and want.span())
        at_new, at_old = evidence._at_line_start(new), evidence._at_line_start(old)
        assert [m.span() for m in at_new.finditer(text)] == [
            m.span() for m in at_old.finditer(text)
        ]


_WORD_PIECES = st.sampled_from(
    [
        "error",
        "ERROR",
        "fail",
        "$ ",
        "rc=",
        "ok",
        " ",
        "\n",
        "\n\n",
        "é",
        "✗",
        "\ud800",
        "x" * 9,
        "\u212a",
        "Traceback",
    ]
)


@pytest.mark.parametrize("signals", [CORE_SIGNALS, ALL_SIGNALS])
@settings(max_examples=300, deadline=None)
@given(parts=st.lists(_WORD_PIECES, max_size=60), block=st.integers(4, 40))
def test_whole_text_block_finds_the_lines_of_small_blocks(
    signals: Signals, parts: list[str], block: int
) -> None:
    text = "".join(parts)
    lowered = signals is ALL_SIGNALS and evidence.lowers_like_ascii(text)
    whole = signals.word_lines(text, 0, len(text), lowered=lowered)
    saved = evidence._WORD_BLOCK, evidence._WHOLE_TEXT_BLOCK
    evidence._WORD_BLOCK, evidence._WHOLE_TEXT_BLOCK = block, 0  # the block-by-block search
    try:
        blocks = signals.word_lines(text, 0, len(text), lowered=lowered)
    finally:
        evidence._WORD_BLOCK, evidence._WHOLE_TEXT_BLOCK = saved
    assert whole == blocks
