r"""The text truncation engine: head + salient middle + tail, within an exact budget.

Given raw text that is too large, the engine keeps

- a **head** (where search results and the command that ran are),
- **error windows** in the middle: a few lines around the first and the last distinct error
  lines (the initialization error a tail-only view loses), deduplicated by pattern,
- a **tail** (where a command's failure and exit status are),

and renders them inside an untrusted-data fence with exact omission markers and a notice.

Each view passes its `TruncationProfile`: the head's share of the budget (the reference design
gives search output 70/30 head/tail, command output 40/60) and whether error lines are
evidence. The shares become error-aware when the result is an error or holds error evidence:
the head gets at most a quarter, the tail and the error windows the rest.

The engine never tokenizes the whole input. It measures only the regions it may keep, in
line-aligned blocks whose counts are cached, finds each cut by bisection inside one block,
and then counts the rendered view exactly; a short secant search on one scale factor grows
or shrinks every part until the view fills the budget (tokens *and* characters) as closely
as it can without passing it.

Example:
    ```python
    from langchain_result_layer.core.budget import Budget
    from langchain_result_layer.core.tokens import ApproximateTokenCounter
    from langchain_result_layer.core.truncate import truncate_text

    text = "".join(f"line {i}\n" for i in range(10_000))
    budget = Budget(tokens=500, chars=4_000)
    cut = truncate_text(text, budget=budget, counter=ApproximateTokenCounter())
    assert cut.tokens <= 500 and cut.segments[0].start == 0
    ```
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import zip_longest

from langchain_result_layer.core.budget import Budget
from langchain_result_layer.core.evidence import ErrorLine, find_error_lines, has_error_evidence
from langchain_result_layer.core.normalize import clean_for_display, safe_cut
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.render import (
    Fence,
    NoticeFacts,
    equal_cost_fence,
    fetch_call,
    format_line_ranges,
    plural,
    range_text,
)
from langchain_result_layer.core.tokens import TokenCounter
from langchain_result_layer.core.view import OmittedRange, OmittedTotals

__all__ = [
    "ERROR_HEAD_CAP",
    "ERROR_WINDOW_SHARE",
    "PLAIN_TEXT_PROFILE",
    "LineIndex",
    "Segment",
    "TextTruncation",
    "TruncationProfile",
    "omitted_between",
    "truncate_text",
]


@dataclass(frozen=True, slots=True)
class TruncationProfile:
    """How a view wants its text cut; each view declares its own and passes it.

    Example:
        ```python
        search_like = TruncationProfile(head_fraction=0.7, error_evidence=False)
        assert search_like.head_fraction == 0.7 and PLAIN_TEXT_PROFILE.error_evidence
        ```
    """

    head_fraction: float = 0.5
    """Share of the body budget given to the head (the rest goes to the tail)."""

    error_evidence: bool = True
    """Whether error lines in the text are evidence: they switch on the error-aware split and
    get windows in the middle. Off for text that quotes errors without being one (search hits)."""


PLAIN_TEXT_PROFILE = TruncationProfile()
"""The profile of plain text: half head, half tail, error-aware."""

ERROR_HEAD_CAP = 0.25
"""In error mode the head gets at most this share; the tail and windows get the rest."""

ERROR_WINDOW_SHARE = 0.3
"""Share of the body budget for middle error windows, when there are any."""

FILL_TARGET = 0.97
"""The search stops once the view uses this share of its binding bound."""

_MAX_WINDOWS = 8
_WINDOW_MIN_TOKENS = 48
_WINDOW_MAX_CHARS = 1_600
_WINDOW_LINES_BEFORE = 2
_MAX_FIT_ATTEMPTS = 7
_ERROR_SCAN_TAIL = 16_000
_TOOL_NAME_MAX = 80


class LineIndex:
    r"""Fast 1-based line numbers for offsets of a large text.

    Newline counts are precomputed every `stride` characters (one pass over the text), so
    each lookup scans at most `stride` characters.

    Args:
        text: The text.
        stride: Checkpoint spacing.

    Example:
        ```python
        idx = LineIndex("a\nb\nc")
        assert idx.line_of(0) == 1 and idx.line_of(4) == 3
        ```
    """

    def __init__(self, text: str, stride: int = 1 << 18) -> None:
        self._text = text
        self._stride = stride
        counts = [0]
        total = 0
        for start in range(0, len(text), stride):
            total += text.count("\n", start, start + stride)
            counts.append(total)
        self._counts = counts

    def newlines_before(self, pos: int) -> int:
        r"""Number of `\n` in `text[:pos]`."""
        pos = max(0, min(pos, len(self._text)))
        block = pos // self._stride
        base = self._counts[block]
        return base + self._text.count("\n", block * self._stride, pos)

    def line_of(self, pos: int) -> int:
        """1-based line number of the character at `pos`."""
        return self.newlines_before(pos) + 1

    @property
    def total_newlines(self) -> int:
        r"""Number of `\n` in the whole text."""
        return self._counts[-1]

    @property
    def total_lines(self) -> int:
        r"""Lines of the text, split on `\n` (a trailing newline ends the last line)."""
        text = self._text
        if not text:
            return 0
        return self.total_newlines + (0 if text.endswith("\n") else 1)


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
class TextTruncation(OmittedTotals):
    r"""What the engine produced.

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
        next_reference: The "read more" reference the notice offers (the first omitted
            lines, sized to about this budget), when the result is stored.

    Example:
        ```python
        from langchain_result_layer.core.tokens import ApproximateTokenCounter

        raw = "line\n" * 10_000
        cut = truncate_text(raw, budget=Budget(tokens=200, chars=2_000),
                            counter=ApproximateTokenCounter())
        assert cut.omitted_chars + cut.kept_chars == len(raw)
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
    next_reference: Reference | None = None

    @property
    def kept_chars(self) -> int:
        """Raw characters kept."""
        return sum(s.end - s.start for s in self.segments)


def omitted_between(raw: str, index: LineIndex, start: int, end: int) -> OmittedRange:
    r"""Describe the raw range `[start, end)` as an `OmittedRange`.

    Args:
        raw: The raw text.
        index: Its line index.
        start: First omitted offset.
        end: One past the last omitted offset (> `start`).

    Returns:
        The range with exact line numbers and whole-line count.

    Example:
        ```python
        text = "a\nb\nc\n"
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


# --------------------------------------------------------------------------- measuring


class _Meter:
    """Token and display-length measurements of raw ranges, cached by range.

    Regions that may be kept are measured in line-aligned blocks (sums of block counts
    guide the cuts; the rendered view is always counted exactly at the end).
    """

    def __init__(self, raw: str, counter: TokenCounter, block: int) -> None:
        self.raw = raw
        self.counter = counter
        self.block = block
        self._cost: dict[tuple[int, int], tuple[int, int]] = {}
        self._fwd: dict[int, int] = {}
        self._back: dict[int, int] = {}

    def cost(self, start: int, end: int) -> tuple[int, int]:
        """Tokens and characters the model sees for `raw[start:end]` (plus a line break)."""
        key = (start, end)
        found = self._cost.get(key)
        if found is None:
            shown = clean_for_display(self.raw[start:end])
            nl = 0 if not shown or shown.endswith("\n") else 1
            found = (self.counter.count(shown) + nl, len(shown) + nl)
            self._cost[key] = found
        return found

    def _next_block_end(self, start: int, hi: int) -> int:
        end = self._fwd.get(start)
        if end is None:
            raw = self.raw
            target = min(hi, start + self.block)
            if target >= hi:
                end = hi
            else:
                nl = raw.find("\n", target, min(hi, target + self.block))
                end = nl + 1 if nl >= 0 else safe_cut(raw, target, backward=False)
                end = max(end, start + 1)
            self._fwd[start] = end
        return min(end, hi)

    def _prev_block_start(self, end: int, lo: int) -> int:
        start = self._back.get(end)
        if start is None:
            raw = self.raw
            target = max(lo, end - self.block)
            if target <= lo:
                start = lo
            else:
                nl = raw.rfind("\n", max(lo, target - self.block), target)
                start = nl + 1 if nl >= 0 else safe_cut(raw, target, backward=True)
                start = min(start, end - 1)
            self._back[end] = start
        return max(start, lo)

    def fit_forward(self, lo: int, hi: int, tokens: int, chars: int) -> int:
        """The largest `end` in `[lo, hi]` whose range `[lo, end)` fits; on a line end if near."""
        return self._grow(lo, hi, tokens, chars, forward=True)

    def fit_backward(self, lo: int, hi: int, tokens: int, chars: int) -> int:
        """The smallest `start` in `[lo, hi]` whose range `[start, hi)` fits."""
        return self._grow(lo, hi, tokens, chars, forward=False)

    # One fit for both directions: the range grows from its fixed end (`lo` forward, `hi`
    # backward) by whole blocks while they fit, then by whole lines of the block that does
    # not, then by characters of a long line. A forward range grows with the position, a
    # backward one as the position falls; each search below probes the same positions
    # either way.

    def _span(self, fixed: int, cut: int, forward: bool) -> tuple[int, int]:
        """The cost of the range between a fixed end and a cut."""
        return self.cost(fixed, cut) if forward else self.cost(cut, fixed)

    def _grow(self, lo: int, hi: int, tokens: int, chars: int, *, forward: bool) -> int:
        fixed, far = (lo, hi) if forward else (hi, lo)
        if tokens <= 0 or chars <= 0 or hi <= lo:
            return fixed
        pos = fixed
        used_t = used_c = 0
        while pos != far:
            cut = self._next_block_end(pos, hi) if forward else self._prev_block_start(pos, lo)
            t, c = self._span(pos, cut, forward)
            if used_t + t > tokens or used_c + c > chars:
                return self._fit_lines(fixed, pos, cut, tokens - used_t, chars - used_c, forward)
            used_t += t
            used_c += c
            pos = cut
        return far

    def _fit_lines(  # noqa: PLR0917 - one search, both directions
        self, fixed: int, near: int, far: int, tokens: int, chars: int, forward: bool
    ) -> int:
        """The cut in the block from `near` (kept so far) to `far` that fits what is left.

        Its last whole line that fits, or a cut inside the next line when that line is long.
        """
        raw = self.raw
        # Line boundaries in the block (after each newline; backward, not the block's end).
        lo, hi = (near, far) if forward else (far, near - 1)
        bounds: list[int] = []
        p = raw.find("\n", lo, hi)
        while p >= 0:
            bounds.append(p + 1)
            p = raw.find("\n", p + 1, hi)
        best = near
        i, j = 0, len(bounds) - 1
        while i <= j:
            mid = (i + j) // 2
            t, c = self._span(near, bounds[mid], forward)
            fits = t <= tokens and c <= chars
            if fits:
                best = bounds[mid]
            if fits == forward:  # the cut to try next lies at a higher position
                i = mid + 1
            else:
                j = mid - 1
        # The next line does not fit whole: where it ends (forward) or starts (backward).
        nl = raw.find("\n", best, far) if forward else raw.rfind("\n", far, max(far, best - 1))
        edge = nl + 1 if nl >= 0 else far
        # Keep the line boundary unless it leaves the segment empty or the cut line is long.
        if best != fixed and abs(edge - best) <= max(256, abs(best - fixed) // 10):
            return best
        return self._fit_chars(near, best, edge, tokens, chars, forward)

    def _fit_chars(  # noqa: PLR0917 - one search, both directions
        self, fixed: int, inner: int, outer: int, tokens: int, chars: int, forward: bool
    ) -> int:
        """The safe cut strictly between `inner` and `outer`, farthest from `inner`, that fits.

        The range runs from `fixed` to the cut (`inner` when no cut fits); probes round, and
        safe cuts move first, toward `inner`.
        """
        best = inner
        a, b = (inner + 1, outer - 1) if forward else (outer + 1, inner - 1)
        while a <= b:
            mid = (a + b) // 2 if forward else (a + b + 1) // 2
            cut = safe_cut(self.raw, mid, backward=forward)
            if not a <= cut <= b:
                cut = safe_cut(self.raw, mid, backward=not forward)
                if not a <= cut <= b:
                    break  # no safe cut left in [a, b]
            t, c = self._span(fixed, cut, forward)
            fits = t <= tokens and c <= chars
            if fits:
                best = cut
            if fits == forward:
                a = cut + 1
            else:
                b = cut - 1
        return best


# --------------------------------------------------------------------------- cut planning


@dataclass(frozen=True, slots=True)
class _Shares:
    head: float
    window: float
    tail: float


def _shares(*, head_fraction: float, error_mode: bool, has_windows: bool) -> _Shares:
    if error_mode:
        head = min(head_fraction, ERROR_HEAD_CAP)
        window = ERROR_WINDOW_SHARE if has_windows else 0.0
        return _Shares(head * (1 - window), window, (1 - head) * (1 - window))
    return _Shares(head_fraction, 0.0, 1 - head_fraction)


def _error_candidates(raw: str, lo: int, hi: int) -> list[ErrorLine]:
    """First and last distinct error lines of `raw[lo:hi]`, interleaved (first, last, ...)."""
    if hi <= lo:
        return []
    forward = find_error_lines(raw, start=lo, end=hi, limit=_MAX_WINDOWS // 2 + 2)
    back_lo = forward[-1].end if forward else lo
    backward = find_error_lines(
        raw, start=back_lo, end=hi, limit=_MAX_WINDOWS // 2 + 2, reverse=True
    )
    seen: set[str] = set()
    order: list[ErrorLine] = []
    for pair in zip_longest(forward, backward):
        for hit in pair:
            if hit is not None and hit.key not in seen:
                seen.add(hit.key)
                order.append(hit)
    return order


def _window_span(
    raw: str, meter: _Meter, hit: ErrorLine, *, lo: int, hi: int, tokens: int, chars: int
) -> tuple[int, int]:
    """Whole lines around an error line: up to two before, then as many after as fit."""
    start = max(lo, hit.start)
    for _ in range(_WINDOW_LINES_BEFORE):
        if start <= lo:
            break
        prev = max(lo, raw.rfind("\n", lo, start - 1) + 1)
        if start - prev > chars // 4:
            break
        start = prev
    end = meter.fit_forward(start, min(hi, start + chars), tokens, chars)
    if end < min(hi, hit.end):
        # Context did not leave room for the error line itself: start at it.
        start = max(lo, hit.start)
        end = meter.fit_forward(start, min(hi, start + chars), tokens, chars)
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


def _segments(raw: str, index: LineIndex, spans: list[tuple[int, int, str]]) -> list[Segment]:
    n = len(raw)
    merged = _merge(spans)
    if len(merged) == 1 and merged[0][0] == 0 and merged[0][1] == n:
        merged = [(0, n, "all")]
    segments = [
        Segment(
            start=start,
            end=end,
            role=role,
            start_line=index.line_of(start),
            end_line=index.line_of(end - 1),
            text=clean_for_display(raw[start:end]),
        )
        for start, end, role in merged
    ]
    # A stretch that shows nothing (only escape codes or redraws) is not worth keeping.
    return [seg for seg in segments if seg.text]


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
    facts: NoticeFacts
    suggest_lines: int


def _marker_text(r: OmittedRange) -> str:
    return f"{range_text(r)} omitted ({plural(r.chars, 'char')})"


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
        # Part of one (long) line: read it by characters.
        return ref.with_chars(first.start_char, min(first.chars, max(2_000, suggest_lines * 80)))
    # Whole lines from the first partly or wholly omitted line (the fetch returns whole lines).
    start = first.start_line
    end = min(first.end_line, start + max(1, suggest_lines) - 1)
    return ref.with_lines(start, end)


def _header(ctx: _RenderContext, segments: Sequence[Segment], truncated: bool) -> str:
    name = f" `{ctx.facts.tool_name}`" if ctx.facts.tool_name else ""
    status = " (status: error)" if ctx.facts.is_error else ""
    size = f"{plural(ctx.total_chars, 'char')}, {plural(ctx.total_lines, 'line')}"
    if not truncated:
        return f"[Tool result{name}{status}: {size}; shown in full.]"
    return (
        f"[Tool result{name}{status}: {size}. Too large to show in full; showing "
        f"{_parts_label(segments)}.]"
    )


def _notice(ctx: _RenderContext, omitted: Sequence[OmittedRange], *, normalised: bool) -> str:
    notes = []
    if normalised:
        notes.append(
            " Terminal escape codes, progress redraws and control characters were cleaned "
            "from the display; sizes and offsets refer to the raw result."
        )
    if not omitted:
        return "[" + "".join(notes).strip() + "]" if notes else ""
    omitted_chars = sum(r.chars for r in omitted)
    whole = sum(r.lines for r in omitted)
    text = (
        f"[Omitted {omitted_chars:,} of {plural(ctx.total_chars, 'char')} "
        f"({plural(whole, 'whole line')}): {format_line_ranges(omitted)}."
    )
    text += "".join(notes)
    facts = ctx.facts
    if facts.reference is not None:
        text += f" Full result: {facts.reference}."
        nxt = _next_reference(omitted, facts.reference, ctx.suggest_lines)
        if nxt is not None:
            text += f" Read more: {fetch_call(nxt, tool_name=facts.fetch_tool_name)}."
    elif facts.store_note:
        text += f" {facts.store_note.strip()}"
    else:
        text += " The full result was not saved, so the omitted part cannot be fetched."
    return text + "]"


def _render(
    ctx: _RenderContext,
    segments: Sequence[Segment],
    omitted: Sequence[OmittedRange],
    *,
    normalised: bool = False,
) -> str:
    fence = ctx.fence
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
    header = _header(ctx, segments, truncated=bool(omitted))
    notice = _notice(ctx, omitted, normalised=normalised)
    out = f"{header}\n{fence.wrap(''.join(body_parts))}"
    return f"{out}\n{notice}" if notice else out


def _minimal(ctx: _RenderContext, budget: Budget, counter: TokenCounter) -> str:
    """Last resort: a notice without content, as complete as the budget allows."""
    ref = ctx.facts.reference
    size = f"{plural(ctx.total_chars, 'char')}, {plural(ctx.total_lines, 'line')}"
    name = f" `{ctx.facts.tool_name}`" if ctx.facts.tool_name else ""
    candidates = []
    if ref is not None:
        candidates.append(
            f"[Tool result{name} omitted: {size}; too large for this budget. Full result: "
            f"{ref}. Read it with {fetch_call(ref, tool_name=ctx.facts.fetch_tool_name)}.]"
        )
        candidates.append(f"[Tool result omitted ({size}). Full result: {ref}.]")
    else:
        candidates.append(
            f"[Tool result{name} omitted: {size}; too large for this budget, not saved.]"
        )
    candidates += [f"[Tool result omitted: {size}.]", "[Tool result omitted.]", "[omitted]"]
    for text in candidates:
        if len(text) <= budget.chars and counter.count(text) <= budget.tokens:
            return text
    text = candidates[-1][: budget.chars]
    while text and counter.count(text) > budget.tokens:
        text = text[:-1]
    return text


# --------------------------------------------------------------------------- entry point


def _clean_tool_name(name: str | None) -> str | None:
    if not name:
        return None
    name = " ".join(name.split()).replace("`", "'")
    return name[:_TOOL_NAME_MAX] or None


def truncate_text(
    raw: str,
    *,
    budget: Budget,
    counter: TokenCounter,
    profile: TruncationProfile = PLAIN_TEXT_PROFILE,
    head_fraction: float | None = None,
    facts: NoticeFacts | None = None,
    fence: Fence | None = None,
    error_windows: bool = True,
) -> TextTruncation:
    r"""Render `raw` as head + error windows + tail within `budget`.

    The result always fits `budget` (tokens under `counter` and characters). Every kept
    segment is an exact slice of `raw` shown through `clean_for_display`; the omitted ranges
    are exactly the gaps between them, and the markers and the notice state them exactly.
    The passes: the frame's cost (`_frame`), the error mode and the error lines of the
    middle (`_error_lines`), then a secant search on one scale of every part (`_fit`).

    Args:
        raw: The raw text (not yet cleaned).
        budget: Token and character bounds for the whole rendered view.
        counter: The token counter the budget is measured with.
        profile: The view's head/tail split and whether error lines are evidence.
        head_fraction: Overrides the profile's head share (0-1).
        facts: What the header and notice say about the result: its tool, whether it is an
            error (`is_error` also selects the error-aware split), its reference or why it
            was not stored, and the fetch tool of the "read more" call (none by default).
        fence: The fence to use (by default a fresh random one that costs what
            `CANONICAL_FENCE` costs, so the view does not depend on the nonce; replaced by
            another such fence if the kept text contains its nonce).
        error_windows: Whether to look for error windows in the middle.

    Returns:
        The rendered view and an exact account of what was kept and omitted.

    Example:
        ```python
        from langchain_result_layer.core.tokens import ApproximateTokenCounter

        cut = truncate_text("x\n" * 100_000, budget=Budget(tokens=300, chars=2_000),
                            counter=ApproximateTokenCounter())
        assert cut.truncated and cut.omitted[0].start_line > 1
        ```
    """
    n = len(raw)
    index = LineIndex(raw)
    facts = facts or NoticeFacts()
    ctx = _RenderContext(
        fence=fence or equal_cost_fence(counter),
        total_chars=n,
        total_lines=index.total_lines,
        facts=replace(facts, tool_name=_clean_tool_name(facts.tool_name)),
        suggest_lines=100,
    )
    if n == 0:
        return _empty(ctx, budget, counter)
    frame = _frame(raw, index, ctx, budget, counter)
    evidence = profile.error_evidence
    error_mode = facts.is_error or (
        evidence and has_error_evidence(raw, max_chars=min(n, _ERROR_SCAN_TAIL))
    )
    candidates: list[ErrorLine] = []
    if error_windows and evidence and frame.body_tokens > 0 and frame.body_chars > 0:
        candidates = _error_lines(raw, frame)
        error_mode = error_mode or bool(candidates)
    fraction = head_fraction if head_fraction is not None else profile.head_fraction
    shares = _shares(
        head_fraction=min(1.0, max(0.0, fraction)),
        error_mode=error_mode,
        has_windows=bool(candidates),
    )
    plan = _Plan(raw=raw, index=index, meter=frame.meter, shares=shares, candidates=candidates)
    best = _fit(plan, frame, ctx, budget, counter)
    follow = facts.reference
    if best is None:  # not even a line fits: the notice alone, with no "read more" offer
        text = _minimal(ctx, budget, counter)
        best = _Fitted(text, [], [omitted_between(raw, index, 0, n)], counter.count(text), ctx)
        follow = None
    return TextTruncation(
        text=best.text,
        segments=best.segments,
        omitted=best.omitted,
        total_chars=n,
        total_lines=ctx.total_lines,
        tokens=best.tokens,
        truncated=bool(best.omitted),
        normalised=any(s.text != raw[s.start : s.end] for s in best.segments),
        error_lines=candidates,
        error_mode=error_mode,
        fence_nonce=best.ctx.fence.nonce,
        next_reference=(
            _next_reference(best.omitted, follow, best.ctx.suggest_lines) if follow else None
        ),
    )


def _empty(ctx: _RenderContext, budget: Budget, counter: TokenCounter) -> TextTruncation:
    name = ctx.facts.tool_name
    text = f"[Tool result{f' `{name}`' if name else ''}: empty.]"
    if len(text) > budget.chars or counter.count(text) > budget.tokens:
        text = _minimal(ctx, budget, counter)
    return TextTruncation(
        text=text,
        segments=[],
        omitted=[],
        total_chars=0,
        total_lines=0,
        tokens=counter.count(text),
        truncated=False,
        normalised=False,
        fence_nonce=ctx.fence.nonce,
    )


@dataclass(frozen=True, slots=True)
class _Frame:
    """The view with nothing shown: its cost, and what is left for the body."""

    text: str
    tokens: int
    body_tokens: int
    body_chars: int
    meter: _Meter


def _frame(
    raw: str, index: LineIndex, ctx: _RenderContext, budget: Budget, counter: TokenCounter
) -> _Frame:
    text = _render(ctx, [], [omitted_between(raw, index, 0, len(raw))])
    tokens = counter.count(text)
    block = int(min(32_768, max(512, min(budget.chars, budget.tokens * 4) / 24)))
    return _Frame(
        text=text,
        tokens=tokens,
        body_tokens=budget.tokens - tokens,
        body_chars=budget.chars - len(text),
        meter=_Meter(raw, counter, block),
    )


def _error_lines(raw: str, frame: _Frame) -> list[ErrorLine]:
    """Error lines of the region a head and a tail at full budget would not cover."""
    n = len(raw)
    reach = min(frame.body_chars, frame.body_tokens * 8)
    mid_lo = min(n, int(reach * ERROR_HEAD_CAP * 0.5))
    mid_hi = max(mid_lo, n - int(reach * 0.35))
    return _error_candidates(raw, mid_lo, mid_hi)


@dataclass(frozen=True, slots=True)
class _Plan:
    """What the search scales: the text, its measurements, the shares and the error lines."""

    raw: str
    index: LineIndex
    meter: _Meter
    shares: _Shares
    candidates: list[ErrorLine]

    def spans(self, tokens: int, chars: int) -> tuple[list[Segment], list[OmittedRange]]:
        """Head, error windows and tail for a body of `tokens` and `chars`."""
        raw, meter, shares, n = self.raw, self.meter, self.shares, len(self.raw)
        head_end = meter.fit_forward(0, n, int(tokens * shares.head), int(chars * shares.head))
        tail_start = meter.fit_backward(
            head_end, n, int(tokens * shares.tail), int(chars * shares.tail)
        )
        spans: list[tuple[int, int, str]] = []
        if head_end > 0:
            spans.append((0, head_end, "head"))
        if tail_start < n:
            spans.append((tail_start, n, "tail"))
        middle = [h for h in self.candidates if head_end <= h.start and h.end <= tail_start]
        if middle and shares.window > 0 and tail_start > head_end:
            win_t = int(tokens * shares.window)
            win_c = int(chars * shares.window)
            count = min(len(middle), _MAX_WINDOWS, max(0, win_t // _WINDOW_MIN_TOKENS))
            if count:
                per_t = win_t // count
                per_c = min(_WINDOW_MAX_CHARS, win_c // count)
                for hit in sorted(middle[:count], key=lambda h: h.start):
                    ws, we = _window_span(
                        raw, meter, hit, lo=head_end, hi=tail_start, tokens=per_t, chars=per_c
                    )
                    if we > ws:
                        spans.append((ws, we, "error"))
        segments = _segments(raw, self.index, spans)
        return segments, _omitted(raw, self.index, segments)


@dataclass(frozen=True, slots=True)
class _Fitted:
    """The best view found so far."""

    text: str
    segments: list[Segment]
    omitted: list[OmittedRange]
    tokens: int
    ctx: _RenderContext


def _fit(
    plan: _Plan, frame: _Frame, ctx: _RenderContext, budget: Budget, counter: TokenCounter
) -> _Fitted | None:
    """Scale every part until the view fills the budget as closely as it can (secant steps)."""
    # Room for markers and a longer notice once ranges exist: refined by the search below.
    extra = 2 + min(len(plan.candidates), _MAX_WINDOWS)
    allowance_t = frame.body_tokens - 16 * extra
    allowance_c = frame.body_chars - 64 * extra
    best: _Fitted | None = None
    lo_scale, hi_scale = 0.0, math.inf
    scale = 1.0
    last: tuple[float, int, int] | None = None  # (scale, tokens, chars) of the last render
    for _attempt in range(_MAX_FIT_ATTEMPTS):
        if allowance_t <= 0 or allowance_c <= 0:
            break
        segments, omitted = plan.spans(
            max(0, int(allowance_t * scale)), max(0, int(allowance_c * scale))
        )
        if not segments:
            if hi_scale <= scale:
                break
            lo_scale = scale
            scale *= 2
            continue
        ctx = _with_fence_and_suggestion(ctx, segments, omitted, frame, counter)
        normalised = any(s.text != plan.raw[s.start : s.end] for s in segments)
        text = _render(ctx, segments, omitted, normalised=normalised)
        tokens = counter.count(text)
        fill = max(tokens / budget.tokens, len(text) / budget.chars)
        if tokens <= budget.tokens and len(text) <= budget.chars:
            if best is None or fill > max(
                best.tokens / budget.tokens, len(best.text) / budget.chars
            ):
                best = _Fitted(text, segments, omitted, tokens, ctx)
            lo_scale = max(lo_scale, scale)
            if fill >= FILL_TARGET or not omitted:
                break
        else:
            hi_scale = min(hi_scale, scale)
        nxt = _next_scale(
            scale,
            tokens=tokens,
            chars=len(text),
            frame_tokens=frame.tokens,
            frame_chars=len(frame.text),
            budget=budget,
            last=last,
        )
        last = (scale, tokens, len(text))
        if not lo_scale < nxt < hi_scale:
            nxt = (lo_scale + hi_scale) / 2 if math.isfinite(hi_scale) else max(nxt, scale * 1.5)
        if abs(nxt - scale) < 1e-3 * scale:
            break
        scale = nxt
    return best


def _with_fence_and_suggestion(
    ctx: _RenderContext,
    segments: list[Segment],
    omitted: list[OmittedRange],
    frame: _Frame,
    counter: TokenCounter,
) -> _RenderContext:
    """A fence no kept segment contains, and a read-more range sized to this budget."""
    if any(ctx.fence.nonce in seg.text for seg in segments):
        ctx = replace(ctx, fence=equal_cost_fence(counter, [s.text for s in segments]))
    avg_line = max(1.0, sum(r.chars for r in omitted) / max(1, sum(r.lines for r in omitted)))
    room = max(1, min(frame.body_chars, frame.body_tokens * 3))
    suggest = max(1, min(2_000, int(room * 0.8 / avg_line)))
    return replace(ctx, suggest_lines=suggest)


def _next_scale(
    scale: float,
    *,
    tokens: int,
    chars: int,
    frame_tokens: int,
    frame_chars: int,
    budget: Budget,
    last: tuple[float, int, int] | None,
) -> float:
    """The scale at which the view should just fill the budget (linear model of the body)."""
    targets = []
    for used, frame, bound, idx in (
        (tokens, frame_tokens, budget.tokens, 1),
        (chars, frame_chars, budget.chars, 2),
    ):
        goal = bound * (FILL_TARGET + 1) / 2
        if last is not None and last[0] != scale and last[idx] != used:
            slope = (used - last[idx]) / (scale - last[0])
            if slope > 0:
                targets.append(scale + (goal - used) / slope)
                continue
        body = used - frame
        if body > 0:
            targets.append(scale * (goal - frame) / body)
    return min(targets) if targets else scale * 2


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
