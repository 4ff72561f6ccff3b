"""Showing chosen lines of a long text: windows, clipping, omitted ranges, references.

Shared by the command and log views. A selection is the top-`k` lines of an `Analysis`
(plus one-line gaps filled when that is cheaper than an omission marker); it becomes
windows of consecutive lines, each rendered under a fence marker that names its line range,
so the model always knows where it is and what is missing.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from langchain_result_layer.core.evidence import SALIENCE_ITEM
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.render import Fence, plural
from langchain_result_layer.core.view import OmittedRange
from langchain_result_layer.views._layout import ELLIPSIS, Section
from langchain_result_layer.views._salience import Analysis, windows_of

__all__ = [
    "LineLimits",
    "error_reference",
    "omitted_line_ranges",
    "range_phrase",
    "select_lines",
    "window_items",
    "window_sections",
]

_ROLE_ORDER = ("exit", "error", "detail", "context", "tail", "head")
_GAP_FILL_MAX_CHARS = 100


@dataclass(frozen=True, slots=True)
class LineLimits:
    """How long a shown line may be.

    Attributes:
        normal: Limit for most lines.
        error: Limit for error lines.
        anchor: Limit for the highest-priority lines (the error itself).
        anchors: How many of the top lines get the anchor limit.
    """

    normal: int = 500
    error: int = 1_500
    anchor: int = 3_000
    anchors: int = 3


def select_lines(analysis: Analysis, ranked: Sequence[int], k: int) -> list[int]:
    """The top-`k` lines, plus single-line gaps between them when the gap line is short.

    Args:
        analysis: The analysis.
        ranked: Lines by priority.
        k: How many to take.

    Returns:
        Sorted line numbers.
    """
    chosen = set(ranked[:k])
    windows = windows_of(chosen)
    for (_, prev_last), (next_first, _) in itertools.pairwise(windows):
        if next_first - prev_last == 2:
            text = analysis.text(prev_last + 1)
            if text is not None and len(text) <= _GAP_FILL_MAX_CHARS:
                chosen.add(prev_last + 1)
    return sorted(chosen)


def _clip_line(text: str, limit: int) -> tuple[str, int]:
    if len(text) <= limit:
        return text, 0
    keep = max(1, limit - 1)
    if "\ud800" <= text[keep - 1] <= "\udbff":
        keep -= 1
    cut = len(text) - keep
    return text[:keep] + ELLIPSIS, cut


def window_items(
    analysis: Analysis,
    lines: Sequence[int],
    ranked_top: Sequence[int],
    limits: LineLimits,
) -> list[dict[str, object]]:
    """`ResultView.items` for the selected lines: one `window` item per run of lines.

    Args:
        analysis: The analysis.
        lines: Selected line numbers (sorted).
        ranked_top: The highest-priority lines (they get the anchor length limit).
        limits: Line length limits.

    Returns:
        JSON-ready items with `role`, `start_line`, `end_line`, `lines`, `text`, `clipped`
        (line -> characters cut) and raw `start_char`/`end_char`.
    """
    anchors = set(ranked_top[: limits.anchors])
    items: list[dict[str, object]] = []
    for first, last in windows_of(lines):
        texts: list[str] = []
        clipped: dict[str, int] = {}
        roles = set()
        for ln in range(first, last + 1):
            text = analysis.text(ln) or ""
            if ln in anchors:
                limit = limits.anchor
            elif analysis.own.get(ln, 0.0) >= SALIENCE_ITEM:
                limit = limits.error
            else:
                limit = limits.normal
            shown, cut = _clip_line(text, limit)
            if cut:
                clipped[str(ln)] = cut
            texts.append(shown)
            roles.add(analysis.roles.get(ln, "context"))
        role = next((r for r in _ROLE_ORDER if r in roles), "context")
        if role in ("context", "detail") and last == analysis.total_lines:
            role = "tail"
        if role == "detail":
            role = "error"
        span_first = analysis.span(first)
        span_last = analysis.span(last)
        items.append(
            {
                "type": "window",
                "role": role,
                "start_line": first,
                "end_line": last,
                "start_char": span_first[0] if span_first else None,
                "end_char": span_last[1] if span_last else None,
                "lines": texts,
                "text": "\n".join(texts),
                "clipped": clipped,
            }
        )
    return items


def window_sections(items: Sequence[dict[str, object]], fence: Fence) -> list[Section]:
    """Fenced sections for `window` items (rendered from the items only).

    Args:
        items: Items made by `window_items`.
        fence: The fence (its nonce marks clipped lines).

    Returns:
        One section per window.
    """
    sections: list[Section] = []
    for item in items:
        if item.get("type") != "window":
            continue
        first = int(item["start_line"])  # type: ignore[call-overload]
        last = int(item["end_line"])  # type: ignore[call-overload]
        lines = list(item["lines"])  # type: ignore[call-overload]
        clipped: dict[str, int] = dict(item.get("clipped") or {})  # type: ignore[call-overload]
        out: list[str] = []
        for offset, text in enumerate(lines):
            cut = clipped.get(str(first + offset))
            if cut:
                note = "+" + plural(cut, "char") + " clipped"
                out.append(f"{text}{fence.marker(note)}")
            else:
                out.append(str(text))
        title = f"line {first}" if first == last else f"lines {first}-{last}"
        sections.append(Section(title=title, lines=out))
    return sections


def range_phrase(first: int, last: int) -> str:
    """`line 7` or `lines 7-9`.

    Args:
        first: First line.
        last: Last line.

    Returns:
        The phrase.
    """
    return f"line {first:,}" if first == last else f"lines {first:,}-{last:,}"


def omitted_line_ranges(
    analysis: Analysis, items: Sequence[dict[str, object]]
) -> list[OmittedRange]:
    """The whole lines between and around the shown windows, with raw character offsets.

    Args:
        analysis: The analysis.
        items: The shown windows.

    Returns:
        Omitted ranges in text order.
    """
    ranges: list[OmittedRange] = []
    prev_line = 0
    prev_char = 0
    windows = [i for i in items if i.get("type") == "window"]
    for item in windows:
        first = int(item["start_line"])  # type: ignore[call-overload]
        start_char = item.get("start_char")
        if first > prev_line + 1:
            end_char = int(start_char) if start_char is not None else prev_char  # type: ignore[call-overload]
            ranges.append(
                OmittedRange(
                    start_line=prev_line + 1,
                    end_line=first - 1,
                    start_char=prev_char,
                    end_char=max(prev_char, end_char),
                    lines=first - 1 - prev_line,
                )
            )
        prev_line = int(item["end_line"])  # type: ignore[call-overload]
        end = item.get("end_char")
        prev_char = int(end) if end is not None else prev_char  # type: ignore[call-overload]
    if prev_line < analysis.total_lines:
        ranges.append(
            OmittedRange(
                start_line=prev_line + 1,
                end_line=analysis.total_lines,
                start_char=prev_char,
                end_char=max(prev_char, analysis.raw_chars),
                lines=analysis.total_lines - prev_line,
            )
        )
    return ranges


def error_reference(base: Reference, line_no: int, total: int) -> Reference:
    """A reference to the lines around an error (5 before, 40 after).

    Args:
        base: The record's reference.
        line_no: The error line.
        total: Lines of the record.

    Returns:
        The reference.
    """
    start = max(1, line_no - 5)
    end = max(start, min(total, line_no + 40))
    return base.with_lines(start, end)
