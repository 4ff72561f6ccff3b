"""`needs_cleaning` (one search, the next only after a `\\r\\n`) is the match-by-match scan it
replaced, and whatever it passes over `clean_for_display` leaves as it is."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.core.normalize import clean_for_display, needs_cleaning

_NEEDS_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x9b\ud800-\udfff]")


def _reference(text: str) -> bool:
    for match in _NEEDS_RE.finditer(text):
        if match.group() == "\r" and text.startswith("\r\n", match.start()):
            continue
        return True
    return False


_TEXTS = st.lists(
    st.sampled_from(
        ["a", "é", " ", "\n", "\r\n", "\r", "\x1b[31m", "\x00", "\x7f", "\x9b", "\ud800"]
    ),
    max_size=40,
).map("".join)


@settings(max_examples=500, deadline=None)
@given(text=_TEXTS)
def test_needs_cleaning_is_the_match_by_match_scan(text: str) -> None:
    assert needs_cleaning(text) == _reference(text)
    if not needs_cleaning(text):
        assert clean_for_display(text) == text


def _all_steps(text: str) -> str:
    """`clean_for_display` as it was: every step runs once escapes and redraws are done."""
    from langchain_result_layer.core import normalize

    if not needs_cleaning(text):
        return text
    if "\x1b" in text or "\x9b" in text:
        text = normalize._ANSI_RE.sub("", text)
    if "\r" in text:
        text = normalize._collapse_bare_cr(text)
    text = normalize._CONTROL_RE.sub(normalize._control_picture, text)
    text = text.replace("\x1b", "\u241b").replace("\x9b", "\ufffd")
    if normalize._SURROGATE_RE.search(text):
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        text = normalize._SURROGATE_RE.sub("\ufffd", text)
    return text


_DIRTY = st.lists(
    st.sampled_from(
        [
            *("a", "é", " ", "\t", "\n", "\r\n", "\r", "\x1b[31m", "\x1b]0;t\x07", "\x1b"),
            *("\x00", "\x01", "\x0b", "\x1f", "\x7f", "\x9b", "\x9b1m", "\ud800", "\udc00"),
            *("\ud83d\ude00", "10%\r", "x\x1b[0m"),
        ]
    ),
    max_size=40,
).map("".join)


@settings(max_examples=1_000, deadline=None)
@given(text=_DIRTY)
def test_clean_for_display_stops_when_nothing_is_left_to_clean(text: str) -> None:
    assert clean_for_display(text) == _all_steps(text)
