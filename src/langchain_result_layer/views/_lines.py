"""Showing chosen lines of a long text: windows, clipping, omitted ranges, references.

Shared by the command and log views. A selection is the top-`k` lines of an `Analysis`
(plus one-line gaps filled when that is cheaper than an omission marker); it becomes
windows of consecutive lines, each rendered under a fence marker that names its line range,
so the model always knows where it is and what is missing. A line too long for its limit
keeps its start and its end, or the window around its failure word, with each cut marked.

Also here: `sample_lines` and `spread`, which take evenly spread windows of consecutive lines
from a long text without splitting all of it (log facts and templates of huge logs).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from langchain_result_layer.core.evidence import SALIENCE_ITEM
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.render import Fence, plural
from langchain_result_layer.core.view import OmittedRange
from langchain_result_layer.views._layout import ELLIPSIS, Section
from langchain_result_layer.views._salience import Analysis, windows_of

__all__ = [
    "LineLimits",
    "LineSample",
    "error_reference",
    "omitted_line_ranges",
    "range_phrase",
    "sample_lines",
    "select_lines",
    "spread",
    "window_items",
    "window_sections",
]

T = TypeVar("T")

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


# Words that make a part of a long line worth keeping (where the report is).
_INFORMATIVE_RE = re.compile(
    r"error|exception|fail|fatal|panic|assert|denied|not found|cannot|could not|unable"
    r"|invalid|missing|expected|rejected|conflict|timeout|timed out",
    re.IGNORECASE,
)
_HEAD_SHARE = 0.6


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


def _clip_line(text: str, limit: int) -> tuple[str, list[tuple[int, int]]]:
    """Cut a long line to about `limit` characters around its informative part.

    The start of a line says what it is; its end often says what happened (`... but these
    are rejected by your constraint.`), and a failure word deep inside it is where the
    report is. So a long line keeps its start and either its end or the window around the
    first failure word past the start; each cut is marked with `…`.

    Returns:
        The shown text and its cuts: `(position in the shown text just after the `…`,
        characters cut there)`.
    """
    if len(text) <= limit:
        return text, []
    room = max(2, limit)
    head_len = _safe_end(text, max(1, int(room * _HEAD_SHARE) - 1))
    rest = room - head_len - 1
    word = _INFORMATIVE_RE.search(text, head_len)
    if rest >= 40 and word is not None and word.start() < len(text) - rest:
        # Keep the window around the failure word; the end of the line is cut.
        start = _safe_start(text, max(head_len, word.start() - rest // 4))
        end = _safe_end(text, min(len(text), start + rest - 1))
        shown = text[:head_len] + ELLIPSIS + text[start:end] + ELLIPSIS
        cuts = [(head_len + 1, start - head_len)]
        if len(text) > end:
            cuts.append((len(shown), len(text) - end))
        return shown, [(at, n) for at, n in cuts if n > 0]
    if rest >= 40:
        tail_start = _safe_start(text, len(text) - rest)
        shown = text[:head_len] + ELLIPSIS + text[tail_start:]
        return shown, [(head_len + 1, tail_start - head_len)]
    keep = _safe_end(text, max(1, room - 1))
    return text[:keep] + ELLIPSIS, [(keep + 1, len(text) - keep)]


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
        (line -> characters cut), `cuts` (line -> `[position in the shown line, characters
        cut]` for every cut, each marked `…` in the text) and raw `start_char`/`end_char`.
    """
    anchors = set(ranked_top[: limits.anchors])
    items: list[dict[str, object]] = []
    for first, last in windows_of(lines):
        texts: list[str] = []
        clipped: dict[str, int] = {}
        cuts: dict[str, list[list[int]]] = {}
        roles = set()
        for ln in range(first, last + 1):
            text = analysis.text(ln) or ""
            if ln in anchors:
                limit = limits.anchor
            elif analysis.own.get(ln, 0.0) >= SALIENCE_ITEM:
                limit = limits.error
            else:
                limit = limits.normal
            shown, line_cuts = _clip_line(text, limit)
            if line_cuts:
                clipped[str(ln)] = sum(n for _, n in line_cuts)
                cuts[str(ln)] = [[at, n] for at, n in line_cuts]
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
                "cuts": cuts,
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
        cuts: dict[str, list[list[int]]] = dict(item.get("cuts") or {})  # type: ignore[call-overload]
        out: list[str] = []
        for offset, text in enumerate(lines):
            line_cuts = cuts.get(str(first + offset))
            shown = str(text)
            if line_cuts:
                # Markers go in from the last cut backwards so positions stay valid.
                for at, n in sorted(line_cuts, reverse=True):
                    note = fence.marker("+" + plural(int(n), "char") + " clipped")
                    shown = shown[:at] + note + shown[at:]
            out.append(shown)
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


@dataclass(frozen=True, slots=True)
class LineSample:
    r"""Lines of a text: all of them, or windows of consecutive lines spread over it.

    Attributes:
        total_lines: Lines of the whole text (split on `\n`).
        numbered: `(line number, line)` pairs in line order (without line endings).
        sampled: Whether `numbered` is a sample rather than every line.

    Example:
        ```python
        sample = sample_lines("a\nb\nc\n", max_lines=10)
        assert sample.numbered == [(1, "a"), (2, "b"), (3, "c")] and not sample.sampled
        ```
    """

    total_lines: int
    numbered: list[tuple[int, str]]
    sampled: bool


def _strip_cr(line: str) -> str:
    return line[:-1] if line.endswith("\r") else line


def sample_lines(
    text: str, *, max_lines: int, windows: int = 40, total_lines: int | None = None
) -> LineSample:
    r"""Every line of `text`, or `max_lines` lines in `windows` evenly spread windows.

    A long text is never split as a whole: windows start at evenly spaced character
    offsets (the first at the start, the last ending at the end), and line numbers are
    counted with `str.count` (C speed), so the cost depends on `max_lines`, not on the
    size of the text.

    Args:
        text: The text.
        max_lines: How many lines at most.
        windows: How many windows of consecutive lines a sample has.
        total_lines: The number of lines of `text`, when the caller knows it already.

    Returns:
        The lines with their numbers.

    Example:
        ```python
        text = "".join(f"line {i}\n" for i in range(1, 10_001))
        sample = sample_lines(text, max_lines=100, windows=4)
        assert sample.sampled and len(sample.numbered) == 100
        assert sample.numbered[0] == (1, "line 1") and sample.numbered[-1] == (10_000, "line 10000")
        ```
    """
    if total_lines is None:
        total = text.count("\n") + (0 if not text or text.endswith("\n") else 1)
    else:
        total = total_lines
    if total <= max_lines:
        lines = text.split("\n")
        if lines and lines[-1] == "" and text.endswith("\n"):
            lines.pop()
        if not text:
            lines = []
        return LineSample(
            total_lines=total,
            numbered=[(i + 1, _strip_cr(ln)) for i, ln in enumerate(lines)],
            sampled=False,
        )
    windows = max(2, min(windows, max_lines)) if max_lines >= 2 else 1
    per = max(1, max_lines // windows)
    n = len(text)
    out: list[tuple[int, str]] = []
    pos = 0  # first offset not yet sampled (a line start)
    line_at_pos = 1
    for k in range(windows):
        if k == windows - 1 and windows > 1:
            # The last window ends at the end of the text: find its first line backwards.
            cut = n - 1 if text.endswith("\n") else n
            start = -1
            for _ in range(per):
                prev = text.rfind("\n", pos, cut)
                if prev < 0:
                    start = pos
                    break
                cut = prev
            if start < 0:
                start = cut + 1
        elif k == 0:
            start = 0
        else:
            target = (n * k) // windows
            if target <= pos:
                start = pos
            else:
                nl = text.find("\n", target - 1)
                start = n if nl < 0 else nl + 1
        if start >= n:
            break
        line_no = line_at_pos + text.count("\n", pos, start)
        end = start
        for _ in range(per):
            nl = text.find("\n", end)
            if nl < 0:
                end = n
                break
            end = nl + 1
        chunk = text[start:end].split("\n")
        if chunk and chunk[-1] == "":
            chunk.pop()
        out.extend((line_no + i, _strip_cr(ln)) for i, ln in enumerate(chunk))
        line_at_pos = line_no + text.count("\n", start, end)
        pos = end
        if pos >= n:
            break
    return LineSample(total_lines=total, numbered=out, sampled=True)


def spread(items: Sequence[T], limit: int, *, windows: int = 40) -> list[T]:
    """At most `limit` items: all of them, or `windows` evenly spread runs of consecutive ones.

    The first run starts at the first item and the last run ends at the last one.

    Args:
        items: Items in order.
        limit: How many at most.
        windows: How many runs.

    Returns:
        The chosen items, in order.

    Example:
        ```python
        assert spread(list(range(10)), 4, windows=2) == [0, 1, 8, 9]
        ```
    """
    n = len(items)
    if n <= limit:
        return list(items)
    windows = max(1, min(windows, limit))
    per = max(1, limit // windows)
    out: list[T] = []
    taken = 0
    for k in range(windows):
        start = 0 if windows == 1 else ((n - per) * k) // (windows - 1)
        start = max(start, taken)
        stop = min(n, start + per)
        out.extend(items[start:stop])
        taken = stop
    return out
