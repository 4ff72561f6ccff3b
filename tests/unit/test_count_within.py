"""`count_within` is exact: the whole text's count when it fits, `None` only when it does not.

For an additive counter (`o200k_base`, `cl100k_base`) the chunks' counts are the answer (the
text is tokenized once, and only as far as the limit); for any other counter the text that
may fit is counted whole. Either way the result never undercounts and never rejects a text
that fits: checked against the exact count of the whole text, with chunks small enough that
every text is cut at many newlines (before blanks, `/`, marks, surrogates, ...).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.core import tokens
from langchain_result_layer.core.tokens import (
    ADDITIVE_ENCODINGS,
    ApproximateTokenCounter,
    TiktokenCounter,
    TokenCounter,
    count_within,
    is_additive,
    load_offline_encoding,
)
from tests.property.strategies import pretoken_texts

ENCODINGS = sorted(name for name in ADDITIVE_ENCODINGS if load_offline_encoding(name))
_TEXTS = pretoken_texts(max_size=300)


@contextmanager
def _chunk(size: int) -> Iterator[None]:
    saved = tokens._WITHIN_CHUNK
    tokens._WITHIN_CHUNK = size
    try:
        yield
    finally:
        tokens._WITHIN_CHUNK = saved


def _check(counter: TokenCounter, text: str, limit: int, chunk: int) -> None:
    exact = counter.count(text)
    with _chunk(chunk):
        got = count_within(counter, text, limit)
    if exact <= limit:
        assert got == exact  # never rejected, never undercounted
    else:
        assert got is None


@pytest.mark.parametrize("encoding", ENCODINGS)
@settings(max_examples=300, deadline=None)
@given(text=_TEXTS, limit=st.integers(0, 400), chunk=st.sampled_from([1, 2, 5, 16, 64]))
def test_additive_counts_are_exact_from_the_chunks(
    encoding: str, text: str, limit: int, chunk: int
) -> None:
    counter = TiktokenCounter(encoding=encoding)
    assert is_additive(counter)
    _check(counter, text, limit, chunk)


@settings(max_examples=150, deadline=None)
@given(text=_TEXTS, limit=st.integers(0, 400), chunk=st.sampled_from([1, 5, 64]))
def test_other_counters_are_exact_too(text: str, limit: int, chunk: int) -> None:
    counter = ApproximateTokenCounter()
    assert not is_additive(counter)
    _check(counter, text, limit, chunk)


def test_a_huge_text_is_tokenized_only_as_far_as_the_limit() -> None:
    calls: list[int] = []

    class Recording(TiktokenCounter):
        def count(self, text: str) -> int:
            calls.append(len(text))
            return super().count(text)

    text = "".join(f"line {i}: some output /path/to/file\n" for i in range(200_000))
    counter = Recording()
    assert count_within(counter, text, 5_000) is None
    assert sum(calls) < 200_000  # far less than the text's 7.6 million characters
    calls.clear()
    small = text[:300_000]
    assert count_within(counter, small, 10**9) == TiktokenCounter().count(small)
    assert sum(calls) == len(small)  # counted once, in chunks: no second whole count
