"""Counts from memoised line pieces equal the exact counts of the whole text."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.core.token_memo import (
    ADDITIVE_ENCODINGS,
    LineMemoCounter,
    line_pieces,
)
from langchain_result_layer.core.tokens import (
    ApproximateTokenCounter,
    TiktokenCounter,
    load_offline_encoding,
)
from tests.property.strategies import pretoken_texts

ENCODINGS = sorted(name for name in ADDITIVE_ENCODINGS if load_offline_encoding(name))
_TEXTS = pretoken_texts(max_size=400)


def _exact(name: str, text: str) -> int:
    return TiktokenCounter(encoding=name).count(text)


@pytest.mark.skipif(not ENCODINGS, reason="no additive encoding available offline")
@settings(max_examples=400, deadline=None)
@given(text=_TEXTS)
def test_pieces_add_up_to_the_exact_count(text: str) -> None:
    assert "".join(line_pieces(text)) == text
    for name in ENCODINGS:
        assert sum(_exact(name, p) for p in line_pieces(text)) == _exact(name, text), name


@pytest.mark.skipif(not ENCODINGS, reason="no additive encoding available offline")
@settings(max_examples=60, deadline=None)
@given(lines=st.lists(_TEXTS, min_size=1, max_size=40), picks=st.lists(st.integers(0, 39)))
def test_the_memo_counts_every_probe_exactly(lines: list[str], picks: list[int]) -> None:
    """Long texts made of the same lines in different selections, as a view's probes are."""
    for name in ENCODINGS:
        inner = TiktokenCounter(encoding=name)
        memo = LineMemoCounter(inner)
        for k in [len(lines), *picks]:
            chosen = [ln for i, ln in enumerate(lines) if i <= k or i % (k + 1) == 0]
            text = ("\n".join(chosen) + "\n") * 40  # long enough to be counted in pieces
            assert memo.count(text) == inner.count(text)
            assert memo.count(text) == inner.count(text)  # remembered whole


def test_real_log_views_count_the_same(tmp_path: Path) -> None:
    corpus = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus"
    logs = sorted((corpus / "logchunks" / "logs").rglob("*.log"))[:20] if corpus.is_dir() else []
    text = "".join(p.read_text("utf-8", "replace") for p in logs) or "line\n  indented\n" * 9_000
    inner = TiktokenCounter()
    memo = LineMemoCounter(inner)
    for cut in (len(text), len(text) // 2, len(text) // 3, len(text) // 2 + 17):
        assert memo.count(text[:cut]) == inner.count(text[:cut])


@pytest.mark.skipif(not ENCODINGS, reason="no additive encoding available offline")
@settings(max_examples=100, deadline=None)
@given(texts=st.lists(st.one_of(_TEXTS, st.text(max_size=40)), max_size=12))
def test_counting_many_texts_at_once_counts_each_exactly(texts: list[str]) -> None:
    """`count_each` counts each text as tiktoken's own encoder does, in both encodings."""
    for name in ENCODINGS:
        counter = TiktokenCounter(encoding=name)
        enc = load_offline_encoding(name)
        assert enc is not None
        assert counter.count_each(texts) == [counter.count(text) for text in texts]
        assert counter.count_each(texts) == [len(enc.encode_ordinary(text)) for text in texts]
        assert counter.count_each([*texts, "lone \ud800 surrogate"])[-1] == counter.count(
            "lone \ufffd surrogate"
        )


def test_other_counters_are_used_text_by_text() -> None:
    approx = ApproximateTokenCounter()
    memo = LineMemoCounter(approx)
    text = "a line of text\n" * 2_000
    assert memo.count(text) == approx.count(text)
    assert (memo.name, memo.exact) == (approx.name, approx.exact)
    assert LineMemoCounter(memo).inner is approx  # never wrapped twice


def test_pieces_cut_only_before_a_non_blank_start() -> None:
    assert line_pieces("") == [""]
    assert line_pieces("a\n") == ["a\n"]
    assert line_pieces("a\nb") == ["a\n", "b"]
    # An indented line starts a piece; blanks up to a line break, or a blank line, do not.
    assert line_pieces("a\n b\n\tc\n\nd\n/e\nf") == ["a\n", " b\n", "\tc\n\n", "d\n", "/e\n", "f"]
    assert line_pieces("a\n  \nb\n \r\nc") == ["a\n  \n", "b\n \r\n", "c"]
    # `/` starts a piece after an ASCII letter or digit only (o200k's punctuation runs take it).
    assert line_pieces("a:\n/e\n9\n/f\né\n/g") == ["a:\n/e\n", "9\n", "/f\n", "é\n/g"]


@pytest.mark.skipif(not ENCODINGS, reason="no additive encoding available offline")
@settings(max_examples=300, deadline=None)
@given(lines=st.lists(_TEXTS.map(lambda t: t.replace("\n", "")), min_size=1, max_size=30))
def test_the_counts_of_lines_are_those_of_their_pieces(lines: list[str]) -> None:
    """`count_lines` counts each line with its newline and remembers it for later counts."""
    for name in ENCODINGS:
        inner = TiktokenCounter(encoding=name)
        memo = LineMemoCounter(inner)
        assert memo.count_lines(lines) == [inner.count(line + "\n") for line in lines]
        text = ("\n".join(lines) + "\n") * 40
        assert memo.count(text) == inner.count(text)
        assert memo.count_lines(lines[::-1]) == [inner.count(ln + "\n") for ln in lines[::-1]]
    assert LineMemoCounter(ApproximateTokenCounter()).count_lines(lines) is None
