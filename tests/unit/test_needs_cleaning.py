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
