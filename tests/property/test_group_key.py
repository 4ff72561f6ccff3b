"""`_group_key` (words without digits taken as they are) folds every line as it did."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.views import _ranking, _salience
from langchain_result_layer.views._ranking import _group_key


def _reference(text: str) -> str:
    words: list[str] = []
    for token in text.split(None, 12):
        if not words and _ranking._STAMP_TOKEN_RE.match(token):
            continue
        if "/" in token or "\\" in token:
            words.append("*")
        else:
            folded = token.translate(_salience._DIGITS_TO_ZERO)
            words.append(_salience._ZEROS_RE.sub("0", folded) if "00" in folded else folded)
        if len(words) == 3:
            break
    return " ".join(words)


_TEXTS = st.lists(
    st.sampled_from([" ", "\t", "a", "Z", "é", "中", "0", "00", "7", "1001", "/", "\\", ":", "-"]),
    max_size=40,
).map("".join)


@settings(max_examples=500, deadline=None)
@given(text=_TEXTS)
def test_group_key_is_unchanged(text: str) -> None:
    assert _group_key(text) == _reference(text)
