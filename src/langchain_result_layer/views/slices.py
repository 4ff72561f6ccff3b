r"""Rendering of a fetched slice: the default `render_slice` of every view.

A fetch shows one part of a stored raw result, exactly: the characters of the original, fenced
as untrusted data. Only characters that cannot travel to a model API are shown as symbols, one
for one (control characters as `␀`, `␛`..., broken surrogates as `�`), so every offset the
notice states still counts characters of the original. Binary records are shown as a hex dump.

The slice is cut to the budget on a line boundary (on a character boundary when a single line
is larger than the budget) and the notice states exactly what is shown and gives the `next`
reference and the exact call that reads on.

Example:
    ```python
    from langchain_result_layer.core.budget import Budget
    from langchain_result_layer.core.reference import Reference
    from langchain_result_layer.core.tokens import ApproximateTokenCounter
    from langchain_result_layer.views.base import ViewContext
    from langchain_result_layer.views.slices import render_text_slice

    ref = Reference(record_id="AbCdEfGhIjKlMnOpQrStUv", kind="text", start_line=1, end_line=2)
    ctx = ViewContext(budget=Budget(tokens=500, chars=4_000), counter=ApproximateTokenCounter(),
                      reference=ref.base())
    out = render_text_slice("a\nb\n", kind="text", reference=ref, slice_start_line=1,
                            slice_offset=0, record_size=6, record_lines=3, ctx=ctx)
    assert "lines 1-2 of 3" in out.content and "start_line=3" in out.content
    ```
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypedDict

from langchain_result_layer.core.budget import Budget
from langchain_result_layer.core.normalize import safe_cut
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.render import Fence, fetch_call, plural
from langchain_result_layer.core.view import OmittedRange, ResultView
from langchain_result_layer.views._layout import equal_cost_fence
from langchain_result_layer.views._long_lines import Cut, cut_marker, keep_spans
from langchain_result_layer.views.base import Rendered, SliceRequest, ViewContext
from langchain_result_layer.views.registry import get_view

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["SliceAt", "display_safe", "hex_dump", "render_text_slice", "requested_range"]

_UNSAFE_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")
_HEX_WIDTH = 16
_MAX_PROBES = 12


def _picture(match: re.Match[str]) -> str:
    ch = match.group()
    code = ord(ch)
    if code == 0x7F:
        return "\u2421"
    if code < 0x20:
        return chr(0x2400 + code)
    return "\ufffd"


def display_safe(text: str) -> tuple[str, int]:
    r"""Replace characters a model API cannot take, one for one.

    C0 control characters other than tab, newline and carriage return, and DEL, become
    Unicode control pictures; lone surrogates become U+FFFD. The length never changes.

    Args:
        text: Raw text.

    Returns:
        The display text and how many characters were replaced.

    Example:
        ```python
        assert display_safe("a\x1b[0m\x00") == ("a\u241b[0m\u2400", 2)
        ```
    """
    count = 0

    def repl(match: re.Match[str]) -> str:
        nonlocal count
        count += 1
        return _picture(match)

    if not _UNSAFE_RE.search(text):
        return text, 0
    return _UNSAFE_RE.sub(repl, text), count


def hex_dump(data: bytes, *, offset: int = 0) -> str:
    """Classic hex dump, 16 bytes per line, with absolute offsets.

    Args:
        data: The bytes.
        offset: Offset of `data[0]` in the record.

    Returns:
        One line per 16 bytes, each ending with a newline.

    Example:
        ```python
        assert hex_dump(b"AB", offset=16).startswith("00000010  41 42")
        ```
    """
    out = []
    for i in range(0, len(data), _HEX_WIDTH):
        row = data[i : i + _HEX_WIDTH]
        hexes = " ".join(f"{b:02x}" for b in row)
        text = "".join(chr(b) if 0x20 <= b < 0x7F else "." for b in row)
        out.append(f"{offset + i:08x}  {hexes:<{_HEX_WIDTH * 3 - 1}}  |{text}|\n")
    return "".join(out)


def requested_range(
    reference: Reference, *, kind: str, record_lines: int, record_size: int
) -> SliceRequest:
    """What a reference asks for, in store coordinates, clipped to the record.

    Args:
        reference: The reference (with its range).
        kind: The record's kind (its view decides what a page is).
        record_lines: Lines of the record.
        record_size: Characters (bytes) of the record.

    Returns:
        A line range or an offset range.

    Example:
        ```python
        ref = Reference(record_id="AbCdEfGhIjKlMnOpQrStUv", page=2, page_size=10)
        assert requested_range(ref, kind="text", record_lines=100,
                               record_size=1_000).start_line == 11
        ```
    """
    if reference.offset is not None or reference.limit is not None:
        lo = min(record_size, reference.offset or 0)
        hi = record_size if reference.limit is None else min(record_size, lo + reference.limit)
        return SliceRequest(offset=lo, limit=hi - lo)
    view = get_view(kind) or get_view("text")
    if view is None:  # pragma: no cover - the text view is always registered
        start = reference.start_line or 1
        return SliceRequest(start_line=start, end_line=reference.end_line or record_lines)
    request = view.slice_for(reference, record_lines)
    if request.offset is not None or request.limit is not None:
        return request
    start = request.start_line or 1
    end = record_lines if request.end_line is None else request.end_line
    return SliceRequest(start_line=start, end_line=min(end, max(record_lines, 0)))


@dataclass(slots=True)
class _Frame:
    """Everything the notice needs except the shown part."""

    ctx: ViewContext
    reference: Reference
    base: Reference
    kind: str
    record_size: int
    record_lines: int
    unit: str
    binary: bool

    @classmethod
    def of(cls, at: SliceAt, *, kind: str, ctx: ViewContext, binary: bool) -> _Frame:
        """The frame of a slice that lies `at` in a record of `kind` (references of that kind)."""
        reference = replace(at["reference"], kind=kind)
        base = ctx.reference if ctx.reference is not None else reference.base()
        by_chars = reference.offset is not None or reference.limit is not None
        return cls(
            ctx=ctx,
            reference=reference,
            base=Reference(record_id=base.record_id, kind=kind),
            kind=kind,
            record_size=at["record_size"],
            record_lines=at["record_lines"],
            unit="bytes" if binary else ("chars" if by_chars else "lines"),
            binary=binary,
        )


def _fits(text: str, budget: Budget, ctx: ViewContext) -> bool:
    return len(text) <= budget.chars and ctx.counter.count(text) <= budget.tokens


def _largest_fitting(
    n: int,
    render: Callable[[int], str],
    budget: Budget,
    ctx: ViewContext,
    chars_of: Callable[[int], int],
) -> tuple[int, str | None]:
    """The largest `k` in `[1, n]` whose rendering fits, found with few token counts.

    Returns `(0, None)` when not even `k = 1` fits.
    """
    if n <= 0:
        return 0, None
    lo, hi = 0, n
    while lo < hi:  # cheap upper bound by characters
        mid = (lo + hi + 1) // 2
        if chars_of(mid) <= budget.chars:
            lo = mid
        else:
            hi = mid - 1
    upper = max(1, lo)
    text = render(upper)
    if _fits(text, budget, ctx):
        return upper, text
    tokens = max(1, ctx.counter.count(text))
    good, good_text, bad = 0, None, upper
    probe = min(upper - 1, max(1, int(upper * budget.tokens / tokens * 0.97)))
    for _ in range(_MAX_PROBES):
        if probe <= good or probe >= bad:
            break
        candidate = render(probe)
        if _fits(candidate, budget, ctx):
            good, good_text = probe, candidate
        else:
            bad = probe
        if bad - good <= 1:
            break
        probe = (good + bad) // 2
    return good, good_text


def _range_phrase(
    frame: _Frame,
    lo: int,
    hi: int,
    first_line: int | None,
    last_line: int | None,
    *,
    lines_partial: bool,
) -> str:
    unit = "bytes" if frame.binary else "chars"
    chars = f"{unit} {lo:,}-{hi:,} of {frame.record_size:,} (end-exclusive)"
    if first_line is None or last_line is None or last_line < first_line:
        return chars
    if frame.binary:
        return chars
    if first_line == last_line:
        lines = f"line {first_line:,}"
    else:
        lines = f"lines {first_line:,}-{last_line:,}"
    partial = " (partly)" if lines_partial else ""
    return f"{lines}{partial} of {frame.record_lines:,}; {chars}"


def _compose(  # noqa: PLR0917
    frame: _Frame,
    fence: Fence,
    body: str,
    shown: str,
    remark: str,
    nxt: Reference | None,
    *,
    compact: bool = False,
    at_end: bool = True,
) -> str:
    """Header, fenced body and footer of a slice.

    The footer offers the next call when there is one, says "This is the end of the result."
    when there is none and the slice reached the end (`at_end`), and otherwise says only the
    remark: an empty range inside a record whose store lost that part is not its end (the
    fetch tool's store note then says where the saved text resumes).
    """
    call = fetch_call(nxt, tool_name=frame.ctx.fetch_tool_name) if nxt is not None else None
    if compact:
        tail = f"[Next: {call}]" if call else ("[End of result.]" if at_end else "[Empty.]")
        return f"{fence.wrap(body)}\n{tail}"
    header = f"[Fetched {frame.reference}: {shown}.]"
    if call:
        footer = f"[{remark} Next: {call}]"
    elif at_end:
        footer = f"[{remark} This is the end of the result.]"
    else:
        footer = f"[{remark}]"
    return f"{header}\n{fence.wrap(body)}\n{footer}"


def _next_after(
    frame: _Frame, request: SliceRequest, shown_end_line: int, *, span: int | None = None
) -> Reference | None:
    """The reference that continues after a fully shown line request.

    `span` (lines) overrides the default, a range as long as the one just shown.
    """
    if shown_end_line >= frame.record_lines:
        return None
    ref = frame.reference
    if ref.page is not None or ref.page_size is not None:
        return frame.base.with_page((ref.page or 1) + 1, ref.page_size)
    if span is None:
        span = max(1, (request.end_line or shown_end_line) - (request.start_line or 1) + 1)
    start = shown_end_line + 1
    return frame.base.with_lines(start, min(frame.record_lines, start + max(1, span) - 1))


def _span_ahead(ahead: list[str], k: int, room: float, *, at_least: int) -> int:
    """How many of the lines read after the first `k` fit in `room` characters.

    The next page is sized from lines already read (the lines after a cut, or the lines
    read ahead of a range; see `_with_lookahead`), so short lines after long ones make a
    longer page rather than a sliver of the budget. When every line read ahead fits, the
    lines beyond are taken to be as long on average, and the page asks for at least
    `at_least` lines.
    """
    n, left = 0, room
    for line in ahead[k:]:
        left -= len(line)
        if left < 0:
            return max(n, 1)
        n += 1
    if n:  # the lines beyond: as long, on average, as those read ahead
        n = int(room * n / max(1, room - left))
    return max(n, at_least, 1)


_SPAN_FILL = 0.95  # share of the budget the next page is sized for (the notice varies a little)
_SPAN_GROW_MAX = 4  # lines beyond those read ahead: at most this many times the shown range


def _minimal(frame: _Frame, nxt: Reference | None, budget: Budget) -> str:
    call = fetch_call(nxt, tool_name=frame.ctx.fetch_tool_name) if nxt else "none"
    text = f"[Slice too large for a {budget.tokens:,}-token budget. Next: {call}]"
    text = text[: budget.chars]
    while text and frame.ctx.counter.count(text) > budget.tokens:
        text = text[: max(0, len(text) - max(1, len(text) // 8))]
    return text


def _nothing_fits(
    frame: _Frame,
    retry: Reference,
    *,
    at: int,
    req: tuple[int | None, int | None],
    line: int | None,
    replaced: int,
) -> Rendered:
    """Not even a sliver of the slice fits the budget: say so and how to read less."""
    text = _minimal(frame, retry, frame.ctx.budget)
    return _fetched(
        frame,
        text,
        lo=at,
        hi=at,
        req_lo=req[0],
        req_hi=req[1],
        first_line=line,
        last_line=line,
        nxt=retry,
        truncated=True,
        replaced=replaced,
    )


def _fetched(
    frame: _Frame,
    content: str,
    *,
    lo: int,
    hi: int,
    req_lo: int | None = None,
    req_hi: int | None = None,
    shown_units: int = 0,
    first_line: int | None = None,
    last_line: int | None = None,
    nxt: Reference | None = None,
    truncated: bool = False,
    replaced: int = 0,
    cuts: Sequence[_LineCut] = (),
) -> Rendered:
    """The fetched slice `content` with its record; the defaults: nothing shown, no lines."""
    references = {"all": str(frame.base)}
    if nxt is not None:
        references["next"] = str(nxt)
    omitted: list[OmittedRange] = []
    if truncated and req_hi is not None and req_hi > hi and last_line is not None:
        omitted.append(
            OmittedRange(
                start_line=max(1, last_line),
                end_line=max(1, last_line),
                start_char=hi,
                end_char=req_hi,
                lines=0,
                partial_start=True,
            )
        )
    omitted += [
        OmittedRange(
            start_line=c.line,
            end_line=c.line,
            start_char=c.cut.start,
            end_char=c.cut.end,
            lines=0,
            partial_start=True,
            partial_end=True,
        )
        for c in cuts
    ]
    view = ResultView(
        kind=frame.kind,
        summary={
            "fetch": True,
            "reference": str(frame.reference),
            "offset": lo,
            "end_offset": hi,
            "start_line": first_line,
            "end_line": last_line,
            "requested_offset": req_lo,
            "requested_end_offset": req_hi,
            "replaced_characters": replaced,
            "headline": f"fetched {frame.reference}",
        },
        total=frame.record_lines if frame.unit == "lines" else frame.record_size,
        unit=frame.unit,
        shown=shown_units,
        references=references,
        omitted=omitted,
        truncated=truncated,
        original_chars=frame.record_size,
        original_lines=frame.record_lines,
        shown_chars=len(content),
        shown_tokens=frame.ctx.counter.count(content),
        budget_tokens=frame.ctx.budget.tokens,
        budget_chars=frame.ctx.budget.chars,
        counter=frame.ctx.counter.name,
        normalised=replaced > 0,
        record_id=frame.base.record_id,
        stored=True,
        tool_name=frame.ctx.tool_name,
    )
    return Rendered(content=content, view=view)


_LONG_LINE_SHARE = 0.25
"""A fetched line may take at most this share of the budget before it is cut within."""
_LONG_LINE_MIN = 400


@dataclass(frozen=True, slots=True)
class _LineCut:
    """A cut inside a fetched line: the line's number and the raw range left out."""

    line: int
    cut: Cut


def _line_cap(budget: Budget) -> int:
    """Characters one fetched line may show (its share of the budget, about 3 per token)."""
    return max(_LONG_LINE_MIN, int(min(budget.chars, budget.tokens * 3) * _LONG_LINE_SHARE))


def _cut_long_lines(  # noqa: PLR0917
    lines: Sequence[str],
    offset: int,
    prefix: Sequence[int],
    cap: int,
    fence: Fence,
    first_line: int,
) -> tuple[list[str], list[_LineCut]]:
    """Each line's display text, long ones cut within themselves with exact markers.

    Args:
        lines: The complete lines (each with its newline, but maybe the last).
        offset: Raw offset of the first line.
        prefix: Raw offset of each line from `offset` (`prefix[i]`), and the end.
        cap: Characters a line may show.
        fence: The fence whose nonce marks the cuts.
        first_line: Number of the first line.

    Returns:
        The display lines and the cuts.
    """
    shown: list[str] = []
    cuts: list[_LineCut] = []
    for i, line in enumerate(lines):
        body = line[:-1] if line.endswith("\n") else line
        if len(body) <= cap:
            shown.append(display_safe(line)[0])
            continue
        start = offset + prefix[i]
        parts: list[str] = []
        pos = 0
        for lo, hi in keep_spans(body, cap):
            if lo > pos:
                cut = Cut(at=0, start=start + pos, end=start + lo)
                cuts.append(_LineCut(line=first_line + i, cut=cut))
                parts.append("…" + fence.marker(cut_marker(cut)))
            parts.append(display_safe(body[lo:hi])[0])
            pos = hi
        if pos < len(body):
            cut = Cut(at=0, start=start + pos, end=start + len(body))
            cuts.append(_LineCut(line=first_line + i, cut=cut))
            parts.append("…" + fence.marker(cut_marker(cut)))
        shown.append("".join(parts) + line[len(body) :])
    return shown, cuts


def _cut_remark(frame: _Frame, cuts: Sequence[_LineCut]) -> str:
    """What the notice says of the long lines cut within themselves."""
    if not cuts:
        return ""
    chars = sum(c.cut.chars for c in cuts)
    lines = sorted({c.line for c in cuts})
    where = f"line {lines[0]:,}" if len(lines) == 1 else plural(len(lines), "long line")
    first = cuts[0].cut
    ref = frame.base.with_chars(first.start, first.chars)
    call = fetch_call(ref, tool_name=frame.ctx.fetch_tool_name)
    return (
        f" {where[0].upper() + where[1:]} cut within "
        f"({plural(chars, 'char')} in {plural(len(cuts), 'marked part')} omitted, each "
        f"marked with its raw range); read the first with {call}."
    )


def _split_lines(text: str) -> list[str]:
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


class SliceAt(TypedDict):
    r"""Where a fetched slice lies in its record: the keyword arguments of `render_slice` hooks.

    `views.base.render_slice` passes them to a view's own `render_slice` (rows, JSON) and to
    `render_text_slice`.

    Example:
        ```python
        at: SliceAt = {"reference": ref.with_lines(1, 1), "slice_start_line": 1,
                       "slice_offset": 0, "record_size": 2, "record_lines": 1}
        assert "x" in render_text_slice("x\n", kind=ref.kind, ctx=ctx, **at).content
        ```
    """

    reference: Reference
    """The reference being fetched (with its range)."""
    slice_start_line: int | None
    """Line holding the slice's first character (`None` when unknown)."""
    slice_offset: int
    """Offset of the slice's first character (byte) in the record."""
    record_size: int
    """Characters (bytes) of the record."""
    record_lines: int
    """Lines of the record."""


def render_text_slice(
    data: str | bytes, *, kind: str, ctx: ViewContext, **at: Unpack[SliceAt]
) -> Rendered:
    r"""Render one fetched slice within `ctx.budget` (tokens and characters, exactly).

    Args:
        data: What the store returned for the requested range (possibly less than asked).
        kind: The record's kind.
        ctx: Budget, counter, fetch tool name; `ctx.reference` is the record's base reference.
        **at: Where `data` lies in the record (`SliceAt`).

    Returns:
        The fenced slice with its notice, and a `ResultView` whose `references["next"]`
        continues the reading (absent at the end of the result).

    Example:
        ```python
        shown = render_text_slice("x\n", kind="text", reference=ref.with_lines(1, 1),
                                  slice_start_line=1, slice_offset=0, record_size=2,
                                  record_lines=1, ctx=ctx)
        assert "x" in shown.content and "next" not in shown.view.references  # the end
        ```
    """
    frame = _Frame.of(at, kind=kind, ctx=ctx, binary=isinstance(data, (bytes, bytearray)))
    request = requested_range(
        frame.reference, kind=kind, record_lines=frame.record_lines, record_size=frame.record_size
    )
    if isinstance(data, (bytes, bytearray)):
        return _render_binary(frame, bytes(data), at["slice_offset"], request)
    if frame.unit == "chars" or request.offset is not None:
        return _render_chars(frame, data, at["slice_offset"], at["slice_start_line"], request)
    return _render_lines(frame, data, at["slice_offset"], at["slice_start_line"], request)


def _empty(frame: _Frame, request: SliceRequest, slice_offset: int) -> Rendered:
    ctx = frame.ctx
    fence = equal_cost_fence(ctx.counter, "")
    if request.start_line is not None and request.start_line > frame.record_lines:
        what = (
            f"nothing: the result has only {plural(frame.record_lines, 'line')}"
            f" ({frame.record_size:,} chars)"
        )
    elif slice_offset >= frame.record_size:
        what = f"nothing: the result ends at offset {frame.record_size:,}"
    else:  # inside the record: a part its store did not keep
        what = "nothing in this range"
    inside = what == "nothing in this range"
    remark = "Empty slice: no saved text in this range." if inside else "Empty slice."
    text = _compose(frame, fence, "", what, remark, None, at_end=not inside)
    if not _fits(text, ctx.budget, ctx):
        text = _minimal(frame, None, ctx.budget)
    return _fetched(frame, text, lo=slice_offset, hi=slice_offset)


def _unsafe_in(text: str, total: int) -> int:
    return 0 if not total else len(_UNSAFE_RE.findall(text))


def _replaced_remark(replaced: int) -> str:
    if not replaced:
        return ""
    return (
        f" {plural(replaced, 'character')} that cannot be sent as text "
        "(controls, broken surrogates) are shown as symbols, one for one."
    )


def _render_lines(
    frame: _Frame, data: str, slice_offset: int, slice_start_line: int | None, request: SliceRequest
) -> Rendered:
    ctx, budget = frame.ctx, frame.ctx.budget
    if not data:
        return _empty(frame, request, slice_offset)
    first_line = slice_start_line or request.start_line or 1
    req_end = request.end_line if request.end_line is not None else frame.record_lines
    lines = _split_lines(data)
    data_end = slice_offset + len(data)
    ahead = [ln for ln in lines if ln.endswith("\n")]
    if len(ahead) < len(lines) and data_end >= frame.record_size:
        ahead = lines  # the record's last line has no newline
    # Lines read after the range asked for are not shown: they size the next page.
    wanted = max(0, req_end - first_line + 1)
    if len(lines) > wanted:
        data = "".join(lines[:wanted])
    complete = ahead[:wanted]
    display, replaced = display_safe(data)
    fence = equal_cost_fence(ctx.counter, display)
    prefix = [0]
    for ln in complete:
        prefix.append(prefix[-1] + len(ln))
    # A line longer than its share of the budget is cut within itself (its start, the part
    # around its failure word, its end; each cut marked with its exact raw range), so the
    # lines after it still fit and the cut part can be read by offset.
    shown_lines, cuts = _cut_long_lines(
        complete, slice_offset, prefix, _line_cap(budget), fence, first_line
    )
    if cuts:
        display = "".join(shown_lines)
    shown_prefix = [0]
    for shown_line in shown_lines:
        shown_prefix.append(shown_prefix[-1] + len(shown_line))
    next_span: list[int | None] = [None]

    def parts(k: int) -> tuple[str, str, Reference | None, bool]:
        shown_end = first_line + k - 1
        hi = slice_offset + prefix[k]
        all_shown = shown_end >= req_end
        shown = _range_phrase(frame, slice_offset, hi, first_line, shown_end, lines_partial=False)
        if all_shown:
            nxt = _next_after(frame, request, shown_end, span=next_span[0])
            remark = "Shown in full." if nxt is None else "Shown in full; the result goes on."
        else:
            # Continue with a page of about the size that just fitted (not the rest of the
            # request, which would make each following page smaller than the last).
            span = _span_ahead(ahead, k, prefix[k], at_least=k)
            nxt = frame.base.with_lines(shown_end + 1, min(frame.record_lines, shown_end + span))
            asked = plural(req_end - first_line + 1, "line")
            remark = (
                f"Shown: {plural(k, 'line')} of the {asked} asked for"
                f" (lines {first_line:,}-{req_end:,}); the rest did not fit in "
                f"{budget.tokens:,} tokens."
            )
        note = _replaced_remark(_unsafe_in(data[: prefix[k]], replaced))
        note += _cut_remark(frame, [c for c in cuts if c.line < first_line + k])
        return shown, remark + note, nxt, not all_shown

    def render(k: int) -> str:
        shown, remark, nxt, _ = parts(k)
        return _compose(frame, fence, display[: shown_prefix[k]], shown, remark, nxt)

    k, text = _largest_fitting(len(complete), render, budget, ctx, lambda k: shown_prefix[k] + 400)
    by_lines = frame.reference.page is None and frame.reference.page_size is None
    shown_all = k > 0 and k == len(complete) and first_line + k - 1 >= req_end
    if text is not None and by_lines and shown_all and parts(k)[2] is not None:
        # Shown in full: size the next line range to the budget from the lines read ahead.
        used = max(1, ctx.counter.count(text))
        room = prefix[k] * _SPAN_FILL * budget.tokens / used
        grow = min(_SPAN_GROW_MAX, max(1, int(budget.tokens / used)))
        next_span[0] = _span_ahead(ahead, k, room, at_least=k * grow)
        resized = render(k)
        if _fits(resized, budget, ctx):
            text = resized
        else:
            next_span[0] = None
    if k > 0 and text is not None:
        _, _, nxt, truncated = parts(k)
        return _fetched(
            frame,
            text,
            lo=slice_offset,
            hi=slice_offset + prefix[k],
            req_lo=slice_offset,
            shown_units=k,
            first_line=first_line,
            last_line=first_line + k - 1,
            nxt=nxt,
            truncated=truncated or any(c.line < first_line + k for c in cuts),
            replaced=replaced,
            cuts=[c for c in cuts if c.line < first_line + k],
        )
    # Not one whole line fits: show the start of the first line, by characters.
    return _render_partial_line(frame, data, display, fence, slice_offset, first_line, replaced)


_Parts = tuple[str, str, Reference | None, bool]
"""What the notice says of `m` shown units: the range phrase, the remark, `next`, truncated."""


@dataclass(frozen=True, slots=True)
class _CharRun:
    """Characters of a text slice shown from its start, cut to the budget on a safe boundary."""

    data: str
    """The slice's text."""
    display: str
    """What is shown of it (unsafe characters as symbols, one for one)."""
    fence: Fence
    """The fence around the shown text."""
    slice_offset: int
    """Offset of `data[0]` in the record."""
    avail: int
    """Characters that may be shown (from the start)."""
    req: tuple[int, int | None]
    """The range asked for (its end `None`: open)."""
    first_line: int | None
    """Line holding `data[0]` (`None` when unknown)."""
    replaced: int
    """Characters of `data` shown as symbols."""
    counted: bool
    """Whether the view counts the shown characters as shown units."""

    def cut(self, m: int) -> int:
        """`m` moved back to a boundary that splits no surrogate pair or line ending."""
        return max(1, safe_cut(self.data, m)) if m < self.avail else m


def _render_char_run(frame: _Frame, run: _CharRun, parts: Callable[[int], _Parts]) -> Rendered:
    """The largest start of `run` that fits the budget, with the notice `parts` describes."""
    ctx, budget = frame.ctx, frame.ctx.budget

    def render(m: int) -> str:
        m = run.cut(m)
        shown, remark, nxt, _ = parts(m)
        return _compose(frame, run.fence, run.display[:m], shown, remark, nxt)

    m, text = _largest_fitting(run.avail, render, budget, ctx, lambda m: m + 400)
    if m == 0 or text is None:
        retry = frame.base.with_chars(run.slice_offset, max(1, budget.chars // 4))
        return _nothing_fits(
            frame,
            retry,
            at=run.slice_offset,
            req=run.req,
            line=run.first_line,
            replaced=run.replaced,
        )
    m = run.cut(m)
    _, _, nxt, truncated = parts(m)
    return _fetched(
        frame,
        text,
        lo=run.slice_offset,
        hi=run.slice_offset + m,
        req_lo=run.req[0],
        req_hi=run.req[1],
        shown_units=m if run.counted else 0,
        first_line=run.first_line,
        last_line=_last_line(run.first_line, run.data, m),
        nxt=nxt,
        truncated=truncated,
        replaced=run.replaced,
    )


def _render_partial_line(  # noqa: PLR0917
    frame: _Frame,
    data: str,
    display: str,
    fence: Fence,
    slice_offset: int,
    first_line: int,
    replaced: int,
) -> Rendered:
    line_end = data.find("\n")
    avail = len(data) if line_end < 0 else line_end + 1
    run = _CharRun(
        data, display, fence, slice_offset, avail, (slice_offset, None), first_line, replaced, False
    )

    def parts(m: int) -> _Parts:
        shown = _range_phrase(
            frame, slice_offset, slice_offset + m, first_line, first_line, lines_partial=True
        )
        remark = (
            f"Line {first_line:,} is longer than the budget: shown its first "
            f"{plural(m, 'char')} from offset {slice_offset:,}."
        )
        nxt = frame.base.with_chars(slice_offset + m, m)
        return shown, remark + _replaced_remark(_unsafe_in(data[:m], replaced)), nxt, True

    return _render_char_run(frame, run, parts)


def _last_line(first: int | None, data: str, m: int) -> int | None:
    return None if first is None else first + data[: max(0, m - 1)].count("\n")


def _render_chars(
    frame: _Frame,
    data: str,
    slice_offset: int,
    slice_start_line: int | None,
    request: SliceRequest,
) -> Rendered:
    budget = frame.ctx.budget
    if not data:
        return _empty(frame, request, slice_offset)
    req_lo = request.offset if request.offset is not None else slice_offset
    req_hi = req_lo + (request.limit if request.limit is not None else frame.record_size - req_lo)
    req_hi = min(req_hi, frame.record_size)
    span = max(1, req_hi - req_lo)
    display, replaced = display_safe(data)
    fence = equal_cost_fence(frame.ctx.counter, display)
    run = _CharRun(
        data=data,
        display=display,
        fence=fence,
        slice_offset=slice_offset,
        avail=len(data),
        req=(req_lo, req_hi),
        first_line=slice_start_line,
        replaced=replaced,
        counted=True,
    )

    def parts(m: int) -> _Parts:
        hi = slice_offset + m
        last_line = _last_line(slice_start_line, data, m)
        shown = _range_phrase(
            frame, slice_offset, hi, slice_start_line, last_line, lines_partial=True
        )
        if hi >= req_hi:
            nxt = None if hi >= frame.record_size else frame.base.with_chars(hi, span)
            remark = "Shown in full." if nxt is None else "Shown in full; the result goes on."
            return shown, remark + _replaced_remark(_unsafe_in(data[:m], replaced)), nxt, False
        nxt = frame.base.with_chars(hi, req_hi - hi)
        asked = plural(req_hi - slice_offset, "char")
        remark = (
            f"Shown: {plural(m, 'char')} of the {asked} asked "
            f"for; the rest did not fit in {budget.tokens:,} tokens."
        )
        return shown, remark + _replaced_remark(_unsafe_in(data[:m], replaced)), nxt, True

    return _render_char_run(frame, run, parts)


def _render_binary(
    frame: _Frame, data: bytes, slice_offset: int, request: SliceRequest
) -> Rendered:
    ctx, budget = frame.ctx, frame.ctx.budget
    if not data:
        return _empty(frame, request, slice_offset)
    if request.offset is not None:
        req_hi = min(frame.record_size, request.offset + (request.limit or 0))
    else:
        req_hi = slice_offset + len(data)
    dump = hex_dump(data, offset=slice_offset)
    fence = equal_cost_fence(ctx.counter, dump)
    row_len = len(dump) // max(1, -(-len(data) // _HEX_WIDTH))
    rows = -(-len(data) // _HEX_WIDTH)

    def parts(r: int) -> tuple[str, str, Reference | None, bool]:
        n = min(len(data), r * _HEX_WIDTH)
        hi = slice_offset + n
        shown = _range_phrase(frame, slice_offset, hi, None, None, lines_partial=False)
        shown += ", as a hex dump"
        if hi >= req_hi:
            nxt = None if hi >= frame.record_size else frame.base.with_chars(hi, max(n, 1))
            remark = "Shown in full." if nxt is None else "Shown in full; the result goes on."
            return shown, remark, nxt, False
        nxt = frame.base.with_chars(hi, req_hi - hi)
        remark = (
            f"Shown: {plural(n, 'byte')} of the {plural(req_hi - slice_offset, 'byte')} "
            f"asked for; the rest did not fit in {budget.tokens:,} tokens."
        )
        return shown, remark, nxt, True

    def render(r: int) -> str:
        shown, remark, nxt, _ = parts(r)
        body = hex_dump(data[: r * _HEX_WIDTH], offset=slice_offset)
        return _compose(frame, fence, body, shown, remark, nxt)

    r, text = _largest_fitting(rows, render, budget, ctx, lambda r: r * row_len + 400)
    if r == 0 or text is None:
        retry = frame.base.with_chars(slice_offset, _HEX_WIDTH * 4)
        return _nothing_fits(
            frame, retry, at=slice_offset, req=(slice_offset, req_hi), line=None, replaced=0
        )
    _, _, nxt, truncated = parts(r)
    n = min(len(data), r * _HEX_WIDTH)
    return _fetched(
        frame,
        text,
        lo=slice_offset,
        hi=slice_offset + n,
        req_lo=slice_offset,
        req_hi=req_hi,
        shown_units=n,
        nxt=nxt,
        truncated=truncated,
    )
