r"""The record of a view that shows some lines of a text (file outlines, search hits).

A view that shows chosen lines of a text states the same facts about it whatever it shows:
the text's size (characters, lines, UTF-8 bytes), the stretches between the shown lines as
exact omitted ranges, and the references `all` and `next` (the first omitted stretch, at most
`NEXT_LINES` lines). `LineText` measures the text once, when the view prepares it, and
builds the `ResultView` of each rendering from what that rendering shows.

Example:
    ```python
    from langchain_result_layer.views._line_record import LineText

    text = LineText.of("a\nb\nc\n", lines=3)
    view = text.view("file", summary={}, items=[], total=3, unit="lines", shown=1,
                     shown_lines=[1], base=None)
    assert [(r.start_line, r.end_line, r.start_char) for r in view.omitted] == [(2, 3, 2)]
    assert (view.original_chars, view.original_lines, view.original_bytes) == (6, 3, 6)
    ```
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.view import OmittedRange, ResultView
from langchain_result_layer.views.text import utf8_length

__all__ = ["NEXT_LINES", "LineText", "line_ends"]

NEXT_LINES = 200
"""How many lines the `next` reference of a line view reads."""


def line_ends(text: str) -> list[int]:
    r"""Offset one past each line of `text` (a last line without a newline ends the text).

    Args:
        text: Any text.

    Returns:
        One offset per line, split on `\n`.

    Example:
        ```python
        assert line_ends("a\nbc\nd") == [2, 5, 6]
        assert line_ends("a\n") == [2]
        ```
    """
    ends: list[int] = []
    pos = text.find("\n")
    while pos >= 0:
        ends.append(pos + 1)
        pos = text.find("\n", pos + 1)
    if text and not text.endswith("\n"):
        ends.append(len(text))
    return ends


@dataclass(frozen=True, slots=True)
class LineText:
    r"""A text a line view shows lines of, measured once.

    Example:
        ```python
        text = LineText.of("x\ny\n", lines=2)
        assert (text.chars, text.bytes, list(text.ends)) == (4, 4, [2, 4])
        ```
    """

    raw: str
    """The raw text."""
    ends: Sequence[int]
    """Where each line ends (`line_ends`); an end past the text counts as its end."""
    lines: int
    """How many lines the view counts in the text."""
    bytes: int
    """UTF-8 bytes of the text."""

    @classmethod
    def of(cls, raw: str, *, lines: int, ends: Sequence[int] | None = None) -> LineText:
        r"""Measure `raw`.

        Args:
            raw: The raw text.
            lines: How many lines the view counts in it.
            ends: Where its lines end, when the view knows already (`line_ends(raw)` by
                default).

        Returns:
            The measured text.

        Example:
            ```python
            assert LineText.of("é\n", lines=1).bytes == 3
            ```
        """
        return cls(
            raw=raw,
            ends=line_ends(raw) if ends is None else ends,
            lines=lines,
            bytes=utf8_length(raw),
        )

    @classmethod
    def of_lines(cls, raw: str, lines: Sequence[str]) -> LineText:
        r"""Measure `raw`, split by the view into `lines` (on `\n`, a last empty line dropped).

        Args:
            raw: The raw text.
            lines: Its lines, without their newlines.

        Returns:
            The measured text.

        Example:
            ```python
            assert LineText.of_lines("a\nb", ["a", "b"]).ends == (2, 4)
            ```
        """
        ends = tuple(accumulate(len(line) + 1 for line in lines))
        return cls(raw=raw, ends=ends, lines=len(lines), bytes=utf8_length(raw))

    @property
    def chars(self) -> int:
        """Characters of the text."""
        return len(self.raw)

    def omitted(self, shown_lines: Iterable[int]) -> list[OmittedRange]:
        r"""The stretches of lines between `shown_lines` (1-based), with their exact offsets.

        Args:
            shown_lines: The lines the view shows.

        Returns:
            One range per stretch of lines not shown, in order.

        Example:
            ```python
            text = LineText.of("a\nb\nc\nd\n", lines=4)
            assert [(r.start_line, r.end_line) for r in text.omitted([2])] == [(1, 1), (3, 4)]
            ```
        """
        ends, size = self.ends, len(self.raw)
        omitted: list[OmittedRange] = []
        prev = 0
        for ln in [*sorted(shown_lines), self.lines + 1]:
            if ln - prev > 1:
                start, end = prev + 1, ln - 1
                start_char = ends[start - 2] if start >= 2 else 0
                end_char = ends[end - 1] if end - 1 < len(ends) else size
                omitted.append(
                    OmittedRange(
                        start_line=start,
                        end_line=end,
                        start_char=min(start_char, size),
                        end_char=min(end_char, size),
                        lines=end - start + 1,
                    )
                )
            prev = ln
        return omitted

    def view(
        self,
        kind: str,
        *,
        summary: dict[str, Any],
        items: list[dict[str, Any]],
        total: int,
        unit: str,
        shown: int,
        shown_lines: Iterable[int],
        base: Reference | None,
        truncated: bool | None = None,
    ) -> ResultView:
        r"""The record of a rendering that shows `shown_lines` of this text.

        Args:
            kind: The view's kind.
            summary: The view's facts.
            items: The evidence shown.
            total: How many units the result has.
            unit: What `total` and `shown` count.
            shown: How many units are shown.
            shown_lines: The lines of the text shown.
            base: The record's reference (`None`: not stored).
            truncated: Whether the view leaves something out (by default: whether a line is
                not shown).

        Returns:
            The view record, with `all` and `next` references when stored.

        Example:
            ```python
            from langchain_result_layer.core.reference import Reference

            base = Reference(record_id="AbCdEfGhIjKlMnOpQrStUv", kind="search")
            text = LineText.of("a\n" * 500, lines=500)
            view = text.view("search", summary={}, items=[], total=500, unit="lines",
                             shown=1, shown_lines=[1], base=base)
            assert view.references["next"].endswith("start_line=2&end_line=201")
            ```
        """
        omitted = self.omitted(shown_lines)
        references: dict[str, str] = {}
        if base is not None:
            references["all"] = str(base)
            if omitted:
                first = omitted[0]
                end = min(first.end_line, first.start_line + NEXT_LINES - 1)
                references["next"] = str(base.with_lines(first.start_line, end))
        return ResultView(
            kind=kind,
            summary=summary,
            items=items,
            total=total,
            unit=unit,
            shown=shown,
            references=references,
            omitted=omitted,
            truncated=bool(omitted) if truncated is None else truncated,
            original_chars=len(self.raw),
            original_lines=self.lines,
            original_bytes=self.bytes,
        )
