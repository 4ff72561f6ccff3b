r"""Exact counts of the texts one rendering counts again and again, from memoised line pieces.

A view is fitted by rendering and counting it several times (each probe shows more or fewer
lines), then rendered once more with the real nonce and record id and counted again: up to
five exact counts of a 100-150 kB text that differs between probes only in the lines added
or removed. `LineMemoCounter` wraps the layer's counter for one rendering: a long text is
counted as the sum of its *pieces*, each piece counted once and remembered.

Exactness: a piece ends after a newline whose next line starts with a character that is
neither whitespace nor `/`, or with blanks (no line break) and then a non-blank character,
or with `/` when the newline follows an ASCII letter or digit. The pre-tokenizer of
`o200k_base` and `cl100k_base` never joins text across such a point: no pattern of theirs
looks behind; a run of punctuation takes the line breaks (and, for `o200k_base`, the `/`)
right after it, but a letter or a digit ends no such run; a run of whitespace ending in
line breaks takes the blanks before a further line break, but reads no further than a
newline that blanks and then a non-blank character follow; a newline starts no other
pattern.
Byte-pair merges happen within pre-tokens only, so the pieces' counts add up to the count
of the whole text (`tests/unit/test_token_memo.py` checks it with hypothesis). Most pieces
of a view are then single lines, so the counts of a view's lines (`count_lines`, which the
fit predicts its probes from) are the counts of most pieces of its text. Any other counter
is used as it is, text by text.

The memo lives as long as the wrapper, which the pipeline makes for one rendering: nothing
is remembered across results.

Example:
    ```python
    from langchain_result_layer.core.token_memo import LineMemoCounter
    from langchain_result_layer.core.tokens import TiktokenCounter

    inner = TiktokenCounter()
    counter = LineMemoCounter(inner)
    text = "".join(f"line {i}: value\n" for i in range(2_000))
    assert counter.count(text) == inner.count(text)
    assert counter.count(text + "one more\n") == inner.count(text + "one more\n")
    ```
"""

from __future__ import annotations

import re
from itertools import compress, repeat
from operator import add, is_
from typing import cast

from langchain_result_layer.core.tokens import (
    ADDITIVE_ENCODINGS,
    TiktokenCounter,
    TokenCounter,
    is_additive,
)

__all__ = ["ADDITIVE_ENCODINGS", "LineMemoCounter", "line_pieces"]

_MIN_CHARS = 8_192
"""Shorter texts are counted whole (and remembered whole)."""
_WHOLE_TEXTS = 8
"""Whole texts remembered (a view's text is counted by the fit, the check and the record)."""
_CUT_RE = re.compile(r"\n(?:(?=[^\s/]|[^\S\r\n]+\S)|(?<=[A-Za-z0-9]\n)(?=/))")
"""Where pieces end: the newline ends the piece before (blank means `str.isspace`)."""
_MAX_PIECE_CHARS = 4_000_000
"""The pieces remembered take at most this many characters (then the memo starts afresh)."""


def line_pieces(text: str) -> list[str]:
    r"""`text` cut after each newline whose next line starts with a non-blank that is not `/`.

    Blanks before that character are allowed (an indented line starts a piece), a line break
    among them is not; a line that starts with `/` starts a piece when the line before ends
    with an ASCII letter or digit.

    Args:
        text: Any text.

    Returns:
        The pieces, in order; they join to `text`.

    Example:
        ```python
        assert line_pieces("a\nb\n  c\n/d\n\ne") == ["a\n", "b\n", "  c\n", "/d\n\n", "e"]
        assert line_pieces("a:\n/d") == ["a:\n/d"]
        ```
    """
    parts = _CUT_RE.split(text)
    return [*(part + "\n" for part in parts[:-1]), parts[-1]]


class LineMemoCounter:
    r"""A counter for one rendering: long texts counted as sums of remembered line pieces.

    Counts are exactly those of the wrapped counter (see the module docstring); only the
    work differs.

    Example:
        ```python
        from langchain_result_layer.core.tokens import TiktokenCounter

        inner = TiktokenCounter()
        counter = LineMemoCounter(inner)
        assert counter.count("hello\nworld\n" * 2_000) == inner.count("hello\nworld\n" * 2_000)
        ```
    """

    __slots__ = ("_by_piece", "_piece_chars", "_pieces", "_whole", "exact", "inner", "name")

    def __init__(self, inner: TokenCounter) -> None:
        """Wrap `inner` (a `LineMemoCounter` is unwrapped first).

        Args:
            inner: The layer's counter.
        """
        if isinstance(inner, LineMemoCounter):
            inner = inner.inner
        self.inner: TokenCounter = inner
        self.name: str = inner.name
        """The wrapped counter's name."""
        self.exact: bool = inner.exact
        """Whether the wrapped counter is exact."""
        self._by_piece: TiktokenCounter | None = (
            inner if isinstance(inner, TiktokenCounter) and is_additive(inner) else None
        )
        """The counter whose counts add up over pieces, or `None` (counted text by text)."""
        self._pieces: dict[str, int] = {}
        self._piece_chars = 0
        self._whole: dict[str, int] = {}

    def count(self, text: str) -> int:
        """The wrapped counter's count of `text`.

        Args:
            text: The text.

        Returns:
            Its tokens.
        """
        known = self._whole.get(text)
        if known is not None:
            return known
        by_piece = self._by_piece
        if by_piece is not None and len(text) >= _MIN_CHARS:
            if self._piece_chars > _MAX_PIECE_CHARS:
                self._pieces, self._piece_chars = {}, 0
            memo = self._pieces
            parts = _CUT_RE.split(text)  # each is a piece without the newline that ends it
            last = parts.pop()
            tokens = self.inner.count(last) if last else 0
            counts = list(map(memo.get, parts))  # the probes of a fit share most pieces
            if None in counts:
                # The pieces new to this memo, each once and in order, counted in one call.
                new = list(dict.fromkeys(compress(parts, map(is_, counts, repeat(None)))))
                found = by_piece.count_each(list(map(add, new, repeat("\n"))))
                memo.update(zip(new, found, strict=True))
                self._piece_chars += sum(map(len, new))
                counts = list(map(memo.__getitem__, parts))
            tokens += sum(cast("list[int]", counts))  # every piece is known now
        else:
            tokens = self.inner.count(text)
        whole = self._whole
        if len(whole) >= _WHOLE_TEXTS:
            whole.pop(next(iter(whole)))
        whole[text] = tokens
        return tokens

    def count_lines(self, lines: list[str]) -> list[int] | None:
        r"""Each line's count as a piece of a longer text (`line + "\n"`), remembered.

        A later count of a text made of these lines finds each line that is a piece of it
        (most lines of a view: see the module docstring) in the memo. The counts are exact
        for the line with its newline; a line is a piece of a text when the text's next line
        starts a piece, so the sum over a text's lines is a close estimate of its count
        (and exact when every line is a piece).

        Args:
            lines: Lines without their line endings.

        Returns:
            Their counts, or `None` when the wrapped counter's counts do not add up over
            pieces (then only whole texts are counted).

        Example:
            ```python
            from langchain_result_layer.core.tokens import TiktokenCounter

            counter = LineMemoCounter(TiktokenCounter())
            assert counter.count_lines(["error: disk full", "  at main"]) == [5, 4]
            ```
        """
        by_piece = self._by_piece
        if by_piece is None:
            return None
        memo = self._pieces
        counts = list(map(memo.get, lines))
        if None in counts:
            new = list(dict.fromkeys(compress(lines, map(is_, counts, repeat(None)))))
            found = by_piece.count_each(list(map(add, new, repeat("\n"))))
            memo.update(zip(new, found, strict=True))
            self._piece_chars += sum(map(len, new))
            counts = list(map(memo.__getitem__, lines))
        return cast("list[int]", counts)

    def __repr__(self) -> str:
        return f"LineMemoCounter({self.inner!r})"
