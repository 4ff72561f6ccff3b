"""Carriage-return collapsing is one linear pass (it was a quadratic regex: 310 s on 1 MB)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from langchain_result_layer.core.normalize import clean_for_display

_OLD_BARE_CR_LINE_RE = re.compile(r"[^\n]*\r(?!\n)[^\n]*")


def _old_collapse(match: re.Match[str]) -> str:
    line = match.group()
    trailing = line.endswith("\r")
    body = line[:-1] if trailing else line
    if "\r" in body:
        body = next((p for p in reversed(body.split("\r")) if p), "")
    return body + ("\r" if trailing else "")


@given(st.text(alphabet="ab\r\n", max_size=40))
def test_same_result_as_the_old_regex(text: str) -> None:
    expected = _OLD_BARE_CR_LINE_RE.sub(_old_collapse, text)
    assert clean_for_display(text) == expected
    assert clean_for_display(text).count("\n") == text.count("\n")


def test_one_megabyte_line_ending_in_a_control_and_crlf() -> None:
    # 310 s with the old regex; linear now (no timing assertion: a quadratic pass would
    # take minutes and the test would time out rather than pass).
    text = "x" * 1_000_000 + "\x01\r\n"
    assert clean_for_display(text) == "x" * 1_000_000 + "\u2401\r\n"
    progress = "".join(f"{i}%\r" for i in range(100_000)) + "done\n"
    assert clean_for_display(progress) == "done\n"
