"""Cutting a long line *within* itself, with every cut an exact raw range.

A line longer than it may be shown keeps its start (what the line is), the part around its
first failure word past the start (where the report is) and its end (what happened: `...
but these are rejected by your constraint.`). Every part left out is a `Cut` with its raw
offsets in the whole result, so the marker that replaces it states exactly which
characters are missing and a fetch by offset returns them byte for byte. Used by the line
views (`_lines`) and by fetched line ranges (`slices`).

Example:
    ```python
    from langchain_result_layer.views._long_lines import keep_spans

    line = "x" * 1_000 + " ERROR: disk full " + "y" * 1_000
    spans = keep_spans(line, 300)
    assert spans[0][0] == 0 and spans[-1][1] == len(line)
    ```
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Cut", "cut_marker", "keep_spans"]


@dataclass(frozen=True, slots=True)
class Cut:
    """A part of a long line left out of the view.

    Attributes:
        at: Position in the shown line where the part is missing (just after its `…`).
        start: Raw offset of the part's first character in the whole result.
        end: Raw offset just past its last character (end-exclusive).
    """

    at: int
    start: int
    end: int

    @property
    def chars(self) -> int:
        """Characters left out."""
        return self.end - self.start


# Where the report is inside a long line: the words failures are reported with.
_INFORMATIVE = (
    *("error", "exception", "fail", "fatal", "panic", "assert", "denied", "not found"),
    *("cannot", "could not", "unable", "invalid", "missing", "expected", "rejected"),
    *("conflict", "timeout", "timed out"),
)


def _informative(raw: str, lo: int, hi: int) -> int:
    """Where the first failure word of `raw[lo:hi]` starts, or -1."""
    low = raw[lo:hi].lower()
    hits = [at for at in (low.find(word) for word in _INFORMATIVE) if at >= 0]
    return lo + min(hits) if hits else -1


_HEAD_SHARE = 0.4
_TAIL_SHARE = 0.25
_MIN_PIECE = 24


def _safe_end(text: str, end: int) -> int:
    """`end`, moved back so that no surrogate pair is split."""
    if 0 < end < len(text) and "\ud800" <= text[end - 1] <= "\udbff":
        return end - 1
    return end


def _safe_start(text: str, start: int) -> int:
    """`start`, moved forward so that no surrogate pair is split."""
    if 0 < start < len(text) and "\udc00" <= text[start] <= "\udfff":
        return start + 1
    return start


def keep_spans(raw: str, limit: int) -> list[tuple[int, int]]:
    """The `[start, end)` parts of a long raw line worth keeping within about `limit` chars.

    Its start (what the line is), the window around the first failure word past the start
    (where the report is) and its end (what happened: `... but these are rejected by your
    constraint.`); each part at least `_MIN_PIECE` characters, overlapping parts merged.
    """
    n = len(raw)
    room = max(2, limit - 2)  # each of at most two cuts shows as one `…`
    head = _safe_end(raw, max(1, int(room * _HEAD_SHARE)))
    tail = _safe_start(raw, n - max(_MIN_PIECE, int(room * _TAIL_SHARE)))
    spans = [(0, head)]
    middle = room - head - (n - tail)
    word = _informative(raw, head, tail) if middle >= _MIN_PIECE else -1
    if word >= 0:
        lo = _safe_start(raw, max(head, word - middle // 4))
        spans.append((lo, _safe_end(raw, min(tail, lo + middle))))
    elif middle > 0:
        tail = _safe_start(raw, max(head, tail - middle))  # no report inside: a longer end
    if room - head >= _MIN_PIECE:
        spans.append((tail, n))
    merged: list[tuple[int, int]] = []
    for lo, hi in spans:
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        elif hi > lo:
            merged.append((lo, hi))
    return merged


def cut_marker(cut: Cut) -> str:
    """What a cut's marker says: the exact raw range, which a fetch by offset returns.

    Args:
        cut: The cut.

    Returns:
        For example `chars 10,240-13,880 omitted`.

    Example:
        ```python
        assert cut_marker(Cut(at=5, start=10, end=20)) == "chars 10-20 omitted"
        ```
    """
    return f"chars {cut.start:,}-{cut.end:,} omitted"
