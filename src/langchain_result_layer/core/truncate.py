"""The text truncation engine: head + salient middle + tail, within an exact budget.

Given raw text that is too large, the engine keeps

- a **head** (where search results and the command that ran are),
- **error windows** in the middle: a few lines around the first and the last distinct error
  lines (the initialization error a tail-only view loses), deduplicated by pattern,
- a **tail** (where a command's failure and exit status are),

and renders them inside an untrusted-data fence with exact omission markers and a notice.

Shares of the budget follow the reference design (search output 70/30 head/tail, command
output 40/60) and become error-aware when the result is an error or holds error evidence: the
tail and the error windows get more room, never less.

The engine never tokenizes the whole input: it estimates the characters per token on
samples, cuts, then counts exactly only what it keeps, shrinking until the rendered view fits
both the token and the character budget.

Example:
    ```python
    from langchain_result_layer.core.budget import Budget
    from langchain_result_layer.core.tokens import ApproximateTokenCounter
    from langchain_result_layer.core.truncate import truncate_text

    text = "".join(f"line {i}\\n" for i in range(10_000))
    cut = truncate_text(text, budget=Budget(tokens=500, chars=4_000), counter=ApproximateTokenCounter())
    assert cut.tokens <= 500 and cut.segments[0].start == 0
    ```
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import zip_longest
from dataclasses import dataclass, field

from langchain_result_layer.core.budget import Budget
from langchain_result_layer.core.evidence import ErrorLine, find_error_lines, has_error_evidence
from langchain_result_layer.core.normalize import clean_for_display, count_lines, safe_cut
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.render import (
    DEFAULT_FETCH_TOOL_NAME,
    Fence,
    fetch_call,
    format_line_ranges,
    plural,
)
from langchain_result_layer.core.tokens import TokenCounter
from langchain_result_layer.core.view import OmittedRange

__all__ = [
    "HEAD_FRACTIONS",
    "LineIndex",
    "Segment",
    "TextTruncation",
    "omitted_between",
    "truncate_text",
]

HEAD_FRACTIONS: dict[str, float] = {
    "text": 0.5,
    "search": 0.7,
    "command": 0.4,
    "log": 0.3,
    "file": 0.6,
    "json": 0.7,
}
"""Share of the body budget given to the head, per profile (the rest goes to the tail)."""

ERROR_HEAD_CAP = 0.25
"""In error mode the head gets at most this share; the tail and windows get the rest."""

ERROR_WINDOW_SHARE = 0.3
"""Share of the body budget for middle error windows, when there are any."""

_WINDOW_MIN_CHARS = 240
_WINDOW_TARGET_CHARS = 700
_MAX_WINDOWS = 8
_SAMPLE_CHARS = 8_000
_MAX_FIT_ATTEMPTS = 8


class LineIndex:
    """Fast 1-based line numbers for offsets of a large text.

    Newline counts are precomputed every `stride` characters (one pass over the text), so
    each lookup scans at most `stride` characters.

    Args:
        text: The text.
        stride: Checkpoint spacing.

    Example:
        ```python
        idx = LineIndex("a\\nb\\nc")
        assert idx.line_of(0) == 1 and idx.line_of(4) == 3
        ```
    """

    def __init__(self, text: str, stride: int = 1 << 20) -> None:
        self._text = text
        self._stride = stride
        counts = [0]
        total = 0
        for start in range(0, len(text), stride):
            total += text.count("\n", start, start + stride)
            counts.append(total)
        self._counts = counts

    def newlines_before(self, pos: int) -> int:
        """Number of `\\n` in `text[:pos]`."""
        pos = max(0, min(pos, len(self._text)))
        block = pos // self._stride
        base = self._counts[block]
        return base + self._text.count("\n", block * self._stride, pos)

    def line_of(self, pos: int) -> int:
        """1-based line number of the character at `pos`."""
        return self.newlines_before(pos) + 1

    @property
    def total_newlines(self) -> int:
        """Number of `\\n` in the whole text."""
        return self._counts[-1]


@dataclass(slots=True)
class Segment:
    """A kept stretch of the raw text.

    Attributes:
        start: Raw offset of the first kept character.
        end: Raw offset one past the last kept character.
        role: `head`, `error` or `tail` (`all` when nothing is cut).
        start_line: Line of `start` (1-based).
        end_line: Line of the last kept character.
        text: What the model sees: `clean_for_display(raw[start:end])`.

    Example:
        ```python
        seg = Segment(start=0, end=2, role="head", start_line=1, end_line=1, text="ab")
        ```
    """

    start: int
    end: int
    role: str
    start_line: int
    end_line: int
    text: str

    def to_item(self) -> dict[str, object]:
        """JSON-ready form for `ResultView.items`."""
        return {
            "type": "segment",
            "role": self.role,
            "start_char": self.start,
            "end_char": self.end,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "text": self.text,
        }


@dataclass(slots=True)
class TextTruncation:
    """What the engine produced.

    Attributes:
        text: The rendered view (header, fence, kept segments, markers, notice).
        segments: Kept segments, in text order.
        omitted: Omitted ranges, in text order (raw character offsets).
        total_chars: Characters of the raw text.
        total_lines: Lines of the raw text.
        tokens: Tokens of `text` under the counter.
        truncated: Whether anything was omitted.
        normalised: Whether any kept segment's display differs from its raw form.
        error_lines: Error lines found in the middle (shown in windows or not).
        error_mode: Whether the error-aware split was used.
        fence_nonce: The fence's nonce.

    Example:
        ```python
        cut.omitted_chars  # doctest: +SKIP
        ```
    """

    text: str
    segments: list[Segment]
    omitted: list[OmittedRange]
    total_chars: int
    total_lines: int
    tokens: int
    truncated: bool
    normalised: bool
    error_lines: list[ErrorLine] = field(default_factory=list)
    error_mode: bool = False
    fence_nonce: str = ""

    @property
    def omitted_chars(self) -> int:
        """Characters left out."""
        return sum(r.chars for r in self.omitted)

    @property
    def kept_chars(self) -> int:
        """Raw characters kept."""
        return sum(s.end - s.start for s in self.segments)


def omitted_between(
    raw: str, index: LineIndex, start: int, end: int
) -> OmittedRange:
    """Describe the raw range `[start, end)` as an `OmittedRange`.

    Args:
        raw: The raw text.
        index: Its line index.
        start: First omitted offset.
        end: One past the last omitted offset (> `start`).

    Returns:
        The range with exact line numbers and whole-line count.

    Example:
        ```python
        text = "a\\nb\\nc\\n"
        r = omitted_between(text, LineIndex(text), 2, 4)
        assert (r.start_line, r.end_line, r.lines) == (2, 2, 1)
        ```
    """
    start_line = index.line_of(start)
    end_line = index.line_of(end - 1)
    partial_start = start > 0 and raw[start - 1] != "\n"
    partial_end = end < len(raw) and raw[end - 1] != "\n"
    whole = end_line - start_line + 1 - int(partial_start) - int(partial_end)
    if start_line == end_line and (partial_start or partial_end):
        whole = 0
    return OmittedRange(
        start_line=start_line,
        end_line=end_line,
        start_char=start,
        end_char=end,
        lines=max(0, whole),
        partial_start=partial_start,
        partial_end=partial_end,
    )


# --------------------------------------------------------------------------- cut planning


def _snap_head_end(raw: str, pos: int) -> int:
    """Cut the head at a line boundary near `pos`, else at a safe character boundary."""
    if pos >= len(raw):
        return len(raw)
    if pos <= 0:
        return 0
    slack = max(160, pos // 5)
    nl = raw.rfind("\n", max(0, pos - slack), pos)
    if nl >= 0:
        return nl + 1
    return safe_cut(raw, pos, backward=True)


def _snap_tail_start(raw: str, pos: int) -> int:
    """Start the tail at a line boundary near `pos`, else at a safe character boundary."""
    n = len(raw)
    if pos <= 0:
        return 0
    if pos >= n:
        return n
    if raw[pos - 1] == "\n":
        return pos
    slack = max(160, (n - pos) // 5)
    nl = raw.find("\n", pos, min(n, pos + slack))
    if 0 <= nl < n - 1:
        return nl + 1
    return safe_cut(raw, pos, backward=False)


def _window_around(raw: str, hit: ErrorLine, max_chars: int, lo: int, hi: int) -> tuple[int, int]:
    """A window of whole lines around an error line, at most `max_chars` long."""
    start, end = hit.start, hit.end
    if end - start > max_chars:
        cut = safe_cut(raw, start + max_chars, backward=True)
        return start, max(cut, start + 1)
    before = 0
    # Up to two lines of context before, then as many after as fit.
    while before < 2 and start > lo:
        prev = raw.rfind("\n", lo, start - 1) + 1
        prev = max(prev, lo)
        if end - prev > max_chars * 0.4 + (hit.end - hit.start):
            break
        start = prev
        before += 1
    while end < hi:
        nl = raw.find("\n", end, hi)
        nxt = hi if nl < 0 else nl + 1
        if nxt - start > max_chars:
            break
        end = nxt
    return start, end


def _merge(spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    spans = sorted((s for s in spans if s[1] > s[0]), key=lambda s: (s[0], s[1]))
    merged: list[tuple[int, int, str]] = []
    for start, end, role in spans:
        if merged and start <= merged[-1][1]:
            pstart, pend, prole = merged[-1]
            keep_role = prole if prole in ("head", "tail") else role
            merged[-1] = (pstart, max(pend, end), keep_role)
        else:
            merged.append((start, end, role))
    return merged


@dataclass(slots=True)
class _Plan:
    head_share: float
    window_share: float
    tail_share: float
    windows: list[ErrorLine]
    error_mode: bool


def _plan_shares(
    *,
    head_fraction: float,
    error_mode: bool,
    has_windows: bool,
) -> tuple[float, float, float]:
    if error_mode:
        head = min(head_fraction, ERROR_HEAD_CAP)
        window = ERROR_WINDOW_SHARE if has_windows else 0.0
        return head * (1 - window), window, (1 - head) * (1 - window)
    return head_fraction, 0.0, 1 - head_fraction


def _chars_per_token(raw: str, counter: TokenCounter) -> float:
    """Raw characters per displayed token, measured on samples (conservative)."""
    n = len(raw)
    samples = [raw[: _SAMPLE_CHARS]]
    if n > 2 * _SAMPLE_CHARS:
        samples.append(raw[n - _SAMPLE_CHARS :])
        mid = n // 2
        samples.append(raw[mid : mid + _SAMPLE_CHARS])
    ratios = []
    for sample in samples:
        shown = clean_for_display(sample)
        tokens = counter.count(shown)
        if tokens:
            ratios.append(len(sample) / tokens)
    if not ratios:
        return 4.0
    return max(0.25, min(ratios) * 0.97)


def _build_segments(
    raw: str,
    index: LineIndex,
    *,
    head_chars: int,
    tail_chars: int,
    windows: Sequence[ErrorLine],
    window_chars: int,
) -> list[Segment]:
    n = len(raw)
    head_end = _snap_head_end(raw, head_chars) if head_chars > 0 else 0
    tail_start = _snap_tail_start(raw, n - tail_chars) if tail_chars > 0 else n
    if tail_start <= head_end:
        head_end, tail_start = n, n
    spans: list[tuple[int, int, str]] = []
    if head_end > 0:
        spans.append((0, head_end, "head"))
    if windows and window_chars > 0 and tail_start > head_end:
        per = max(_WINDOW_MIN_CHARS, window_chars // len(windows))
        used = 0
        for hit in windows:
            if used + min(per, hit.end - hit.start) > window_chars:
                break
            if hit.end <= head_end or hit.start >= tail_start:
                continue
            ws, we = _window_around(raw, hit, per, head_end, tail_start)
            ws, we = max(ws, head_end), min(we, tail_start)
            if we > ws:
                spans.append((ws, we, "error"))
                used += we - ws
    if tail_start < n:
        spans.append((tail_start, n, "tail"))
    segments = []
    for start, end, role in _merge(spans):
        segments.append(
            Segment(
                start=start,
                end=end,
                role=role,
                start_line=index.line_of(start),
                end_line=index.line_of(end - 1),
                text=clean_for_display(raw[start:end]),
            )
        )
    return segments


def _omitted(raw: str, index: LineIndex, segments: Sequence[Segment]) -> list[OmittedRange]:
    ranges = []
    pos = 0
    for seg in segments:
        if seg.start > pos:
            ranges.append(omitted_between(raw, index, pos, seg.start))
        pos = seg.end
    if pos < len(raw):
        ranges.append(omitted_between(raw, index, pos, len(raw)))
    return ranges


# --------------------------------------------------------------------------- rendering


@dataclass(frozen=True, slots=True)
class _RenderContext:
    fence: Fence
    total_chars: int
    total_lines: int
    tool_name: str | None
    status: str
    kind: str
    reference: Reference | None
    store_note: str | None
    fetch_tool_name: str
    suggest_lines: int


def _marker_text(r: OmittedRange) -> str:
    if r.start_line == r.end_line and (r.partial_start or r.partial_end):
        return f"{plural(r.chars, 'char')} of line {r.start_line:,} omitted"
    return f"{format_line_ranges([r])} omitted ({plural(r.chars, 'char')})"


def _parts_label(segments: Sequence[Segment]) -> str:
    roles = [s.role for s in segments]
    parts = []
    if "head" in roles:
        parts.append("the head")
    n_err = roles.count("error")
    if n_err:
        parts.append(plural(n_err, "error window"))
    if "tail" in roles:
        parts.append("the tail")
    if not parts:
        return "nothing"
    return ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]


def _next_reference(
    omitted: Sequence[OmittedRange], ref: Reference, suggest_lines: int
) -> Reference | None:
    if not omitted:
        return None
    first = omitted[0]
    if first.start_line == first.end_line and (first.partial_start or first.partial_end):
        return ref.with_chars(first.start_char, min(first.chars, max(1_000, suggest_lines * 80)))
    start = first.start_line + (1 if first.partial_start else 0)
    end = min(first.end_line, start + max(1, suggest_lines) - 1)
    return ref.with_lines(start, max(start, end))


def _render(
    ctx: _RenderContext, segments: Sequence[Segment], omitted: Sequence[OmittedRange]
) -> str:
    fence = ctx.fence
    name = f" `{ctx.tool_name}`" if ctx.tool_name else ""
    status = " (status: error)" if ctx.status == "error" else ""
    header = (
        f"[Tool result{name}{status}: {plural(ctx.total_chars, 'char')}, "
        f"{plural(ctx.total_lines, 'line')}. Too large to show in full; showing "
        f"{_parts_label(segments)}.]"
    )
    body_parts: list[str] = []
    pos = 0
    omit_iter = iter(omitted)
    for seg in segments:
        if seg.start > pos:
            body_parts.append(fence.marker(_marker_text(next(omit_iter))) + "\n")
        text = seg.text
        if text and not text.endswith("\n"):
            text += "\n"
        body_parts.append(text)
        pos = seg.end
    if pos < ctx.total_chars:
        body_parts.append(fence.marker(_marker_text(next(omit_iter))) + "\n")
    body = "".join(body_parts)
    omitted_chars = sum(r.chars for r in omitted)
    notice = (
        f"[Omitted {plural(omitted_chars, 'char')} of {ctx.total_chars:,}"
        f" ({format_line_ranges(omitted)})."
    )
    if ctx.reference is not None:
        nxt = _next_reference(omitted, ctx.reference, ctx.suggest_lines)
        notice += f" Full result: {ctx.reference}."
        if nxt is not None:
            notice += f" Read more: {fetch_call(nxt, tool_name=ctx.fetch_tool_name)}."
    elif ctx.store_note:
        notice += f" {ctx.store_note}"
    else:
        notice += " The full result was not saved."
    notice += "]"
    return f"{header}\n{fence.wrap(body)}\n{notice}"


def _minimal(ctx: _RenderContext, budget: Budget, counter: TokenCounter) -> str:
    """Last resort: a notice without content, cut to the budget if it must be."""
    ref = f" Full result: {ctx.reference}." if ctx.reference is not None else ""
    text = f"[Tool result omitted: {plural(ctx.total_chars, 'char')}, " + (
        f"{plural(ctx.total_lines, 'line')}; too large for this budget.{ref}]"
    )
    if len(text) > budget.chars:
        text = text[: budget.chars]
    while text and counter.count(text) > budget.tokens:
        text = text[: max(0, len(text) - max(1, len(text) // 8))]
    return text


# --------------------------------------------------------------------------- entry point


def truncate_text(
    raw: str,
    *,
    budget: Budget,
    counter: TokenCounter,
    profile: str = "text",
    head_fraction: float | None = None,
    is_error: bool = False,
    reference: Reference | None = None,
    store_note: str | None = None,
    tool_name: str | None = None,
    fetch_tool_name: str = DEFAULT_FETCH_TOOL_NAME,
    fence: Fence | None = None,
    error_windows: bool = True,
) -> TextTruncation:
    """Render `raw` as head + error windows + tail within `budget`.

    Args:
        raw: The raw text (not yet cleaned).
        budget: Token and character bounds for the whole rendered view.
        counter: The token counter the budget is measured with.
        profile: `text`, `search`, `command`, `log`, `file` or `json`: picks the
            head/tail split and whether error windows apply (not for `search`).
        head_fraction: Overrides the profile's head share (0-1).
        is_error: The tool reported an error (`status="error"`): use the error-aware split.
        reference: Reference to the stored raw result, quoted in the notice.
        store_note: What to say when there is no reference (for example why saving failed).
        tool_name: Tool name for the header.
        fetch_tool_name: Name of the fetch tool in the "read more" call.
        fence: The fence to use (a fresh random one by default).
        error_windows: Whether to look for error windows in the middle.

    Returns:
        The rendered view and an exact account of what was kept and omitted.

    Example:
        ```python
        cut = truncate_text("x\\n" * 100_000, budget=Budget(tokens=300, chars=2_000),
                            counter=ApproximateTokenCounter())
        assert cut.truncated and cut.omitted[0].start_line > 1
        ```
    """
    n = len(raw)
    index = LineIndex(raw)
    total_lines = count_lines(raw)
    fence = fence or Fence.for_content(raw[:1_000_000], raw[-1_000_000:])
    fraction = head_fraction if head_fraction is not None else HEAD_FRACTIONS.get(profile, 0.5)
    fraction = min(1.0, max(0.0, fraction))
    ctx = _RenderContext(
        fence=fence,
        total_chars=n,
        total_lines=total_lines,
        tool_name=tool_name,
        status="error" if is_error else "success",
        kind=profile,
        reference=reference,
        store_note=store_note,
        fetch_tool_name=fetch_tool_name,
        suggest_lines=100,
    )

    # Overhead: the view with nothing shown, plus room for numbers that grow.
    empty_render = _render(ctx, [], [omitted_between(raw, index, 0, n)] if n else [])
    overhead_tokens = counter.count(empty_render) + 24
    overhead_chars = len(empty_render) + 96
    body_tokens = budget.tokens - overhead_tokens
    body_chars = budget.chars - overhead_chars

    search_like = profile == "search"
    tail_evidence = (
        not search_like and n > 0 and has_error_evidence(raw, max_chars=min(n, 16_000))
    )
    error_mode = is_error or tail_evidence

    # Character targets for the whole body, from a measured chars/token ratio.
    ratio = _chars_per_token(raw, counter)
    target = int(min(body_tokens * ratio, body_chars)) if body_tokens > 0 and body_chars > 0 else 0

    # Find error windows in the middle region (once; the scan is the expensive part).
    windows: list[ErrorLine] = []
    if error_windows and not search_like and target > 0:
        h0, w0, t0 = _plan_shares(head_fraction=fraction, error_mode=True, has_windows=True)
        mid_lo = min(n, int(target * h0))
        mid_hi = max(mid_lo, n - int(target * t0))
        if mid_hi > mid_lo:
            forward = find_error_lines(raw, start=mid_lo, end=mid_hi, limit=6)
            back_lo = forward[-1].end if len(forward) >= 6 else mid_lo
            backward = find_error_lines(raw, start=back_lo, end=mid_hi, limit=6, reverse=True)
            seen: set[str] = set()
            order: list[ErrorLine] = []
            for pair in zip_longest(forward, backward):
                for hit in pair:
                    if hit is not None and hit.key not in seen:
                        seen.add(hit.key)
                        order.append(hit)
            windows = order
            if windows:
                error_mode = True

    head_share, window_share, tail_share = _plan_shares(
        head_fraction=fraction, error_mode=error_mode, has_windows=bool(windows)
    )

    best: tuple[str, list[Segment], list[OmittedRange], int] | None = None
    scale = 1.0
    grown = False
    for _attempt in range(_MAX_FIT_ATTEMPTS):
        if target <= 0:
            break
        size = max(1, int(target * scale))
        window_chars = int(size * window_share)
        n_windows = min(len(windows), _MAX_WINDOWS, max(1, window_chars // _WINDOW_TARGET_CHARS))
        chosen = sorted(windows[:n_windows], key=lambda h: h.start) if window_chars else []
        if not chosen:
            # Give the windows' share back to head and tail.
            hs, ts = head_share / (head_share + tail_share), tail_share / (head_share + tail_share)
            head_chars, tail_chars, window_chars = int(size * hs), int(size * ts), 0
        else:
            head_chars, tail_chars = int(size * head_share), int(size * tail_share)
        segments = _build_segments(
            raw,
            index,
            head_chars=head_chars,
            tail_chars=tail_chars,
            windows=chosen,
            window_chars=window_chars,
        )
        if any(ctx.fence.nonce in seg.text for seg in segments):
            ctx = _RenderContext(
                **{**_ctx_fields(ctx), "fence": Fence.for_content(*(s.text for s in segments))}
            )
        omitted = _omitted(raw, index, segments)
        avg_line = max(1.0, sum(r.chars for r in omitted) / max(1, sum(r.lines for r in omitted)))
        suggest = max(1, min(500, int(body_chars * 0.8 / avg_line))) if body_chars > 0 else 1
        ctx_now = _RenderContext(**{**_ctx_fields(ctx), "suggest_lines": suggest})
        text = _render(ctx_now, segments, omitted)
        tokens = counter.count(text)
        if tokens <= budget.tokens and len(text) <= budget.chars:
            if best is None or len(text) > len(best[0]):
                best = (text, segments, omitted, tokens)
            fill = max(tokens / budget.tokens, len(text) / budget.chars)
            if fill >= 0.9 or grown or not omitted:
                break
            grown = True
            scale *= min(1.6, 0.97 / max(fill, 1e-6))
        else:
            over = max(tokens / budget.tokens, len(text) / budget.chars)
            scale *= 0.95 / over
            if best is not None and grown:
                break

    if best is None:
        text = _minimal(ctx, budget, counter)
        omitted_all = [omitted_between(raw, index, 0, n)] if n else []
        return TextTruncation(
            text=text,
            segments=[],
            omitted=omitted_all,
            total_chars=n,
            total_lines=total_lines,
            tokens=counter.count(text),
            truncated=bool(n),
            normalised=False,
            error_lines=windows,
            error_mode=error_mode,
            fence_nonce=ctx.fence.nonce,
        )
    text, segments, omitted, tokens = best
    return TextTruncation(
        text=text,
        segments=segments,
        omitted=omitted,
        total_chars=n,
        total_lines=total_lines,
        tokens=tokens,
        truncated=bool(omitted),
        normalised=any(s.text != raw[s.start : s.end] for s in segments),
        error_lines=windows,
        error_mode=error_mode,
        fence_nonce=ctx.fence.nonce,
    )


def _ctx_fields(ctx: _RenderContext) -> dict[str, object]:
    return {name: getattr(ctx, name) for name in ctx.__slots__}  # type: ignore[attr-defined]


def estimate_fit_chars(budget: Budget, ratio: float) -> int:
    """Characters that roughly fit `budget` at `ratio` characters per token.

    Args:
        budget: The budget.
        ratio: Characters per token.

    Returns:
        An estimate (the smaller of the two bounds).

    Example:
        ```python
        assert estimate_fit_chars(Budget(tokens=100, chars=10_000), 4.0) == 400
        ```
    """
    return min(budget.chars, math.floor(budget.tokens * ratio))
