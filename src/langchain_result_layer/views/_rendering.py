r"""Rendering a result within its budget, whatever the view does.

The rule, stated once:

1. the chosen view renders; what it returns is measured exactly (tokens under the
   configured counter, characters) and kept when it fits;
2. a view that fails or overshoots gives way to the binary notice (bytes) or the text
   view, and that to the shortest honest notice that fits (`bare_notice`);
3. a model-written summary goes above the view and the store's note on what it could not
   keep below it, each only when the view keeps a useful budget next to them (the summary
   is dropped first); views that place the store's notes themselves get the whole budget.

Example:
    ```python
    from langchain_result_layer.views._rendering import render_or_fall_back
    from langchain_result_layer.views.text import TextView

    shown, tokens = render_or_fall_back(TextView(), TextView().prepare("x\n" * 50_000), ctx)
    assert tokens <= ctx.budget.tokens and shown.view.truncated
    ```
"""

from __future__ import annotations

import logging
from typing import Any

from langchain_result_layer.core.budget import MIN_RESULT_CHARS, MIN_RESULT_TOKENS, Budget
from langchain_result_layer.core.render import neutralise_inline
from langchain_result_layer.core.view import ResultView
from langchain_result_layer.views._notices import bare_notice
from langchain_result_layer.views.base import (
    Prepared,
    Rendered,
    ResultViewBuilder,
    ViewContext,
    budget_with,
)
from langchain_result_layer.views.binary import binary_notice
from langchain_result_layer.views.blocks import content_chars, content_tokens
from langchain_result_layer.views.text import TextView, utf8_length

__all__ = ["measure", "render_or_fall_back", "render_with_notes", "whole_result_view"]

logger = logging.getLogger(__name__)

TEXT_FALLBACK = TextView()


def measure(content: Any, ctx: ViewContext) -> tuple[int, int]:
    """Tokens and characters of rendered content (block lists at their block costs).

    Args:
        content: A string or a content-block list.
        ctx: The counter and the media block cost.

    Returns:
        `(tokens, chars)`.

    Example:
        ```python
        assert measure("hello", ctx)[1] == 5
        ```
    """
    return (
        content_tokens(content, ctx.counter, image_tokens=ctx.image_tokens),
        content_chars(content),
    )


def _fits(content: Any, ctx: ViewContext) -> int | None:
    tokens, chars = measure(content, ctx)
    return tokens if tokens <= ctx.budget.tokens and chars <= ctx.budget.chars else None


def _notice(text: str, kind: str, ctx: ViewContext) -> tuple[Rendered, int]:
    return Rendered(content=text, view=ResultView(kind=kind, truncated=True)), ctx.counter.count(
        text
    )


def render_or_fall_back(
    view: ResultViewBuilder, prepared: Prepared, ctx: ViewContext
) -> tuple[Rendered, int]:
    """Render with `view`, falling back to the text view, then to a bare notice.

    Args:
        view: The chosen view.
        prepared: Its `prepare` output.
        ctx: Budget, counter, reference and options.

    Returns:
        The rendering, which fits `ctx.budget`, and its tokens.

    Example:
        ```python
        shown, tokens = render_or_fall_back(TEXT_FALLBACK, TEXT_FALLBACK.prepare("hi"), ctx)
        assert "hi" in shown.content and tokens == ctx.counter.count(shown.content)
        ```
    """
    budget = ctx.budget
    try:
        rendered = view.render(prepared, ctx)
        tokens, chars = measure(rendered.content, ctx)
        if tokens <= budget.tokens and chars <= budget.chars:
            return rendered, tokens
        logger.warning(
            "view %r overshot its budget (%d/%d tokens, %d/%d chars); using the text view",
            view.kind,
            tokens,
            budget.tokens,
            chars,
            budget.chars,
        )
    except Exception:
        logger.exception("view %r failed; using the text view", view.kind)
    if isinstance(prepared.raw, bytes):
        return _notice(binary_notice(prepared.raw, ctx), view.kind, ctx)
    if view is not TEXT_FALLBACK:
        try:
            rendered = TEXT_FALLBACK.render(Prepared(raw=prepared.raw), ctx)
            fitting = _fits(rendered.content, ctx)
            if fitting is not None:
                return rendered, fitting
        except Exception:
            logger.exception("the text view failed too; showing a bare notice")
    text = bare_notice(len(prepared.raw), ctx.reference, budget, ctx.counter, ctx.fetch_tool_name)
    return _notice(text, view.kind, ctx)


def render_with_notes(
    view: ResultViewBuilder, prepared: Prepared, ctx: ViewContext, *, summary: str = ""
) -> tuple[Rendered, int, bool]:
    r"""Render below a summary block and above the store's note, within the budget.

    The view gets the budget minus what the extras cost; when that leaves too little, the
    summary is dropped first, then the note.

    Args:
        view: The chosen view.
        prepared: Its `prepare` output.
        ctx: Budget, counter, reference, and the store's notes (`cap_notes`).
        summary: The summary block to put first (`""`: none).

    Returns:
        The rendering, its tokens, and whether the summary block was kept.

    Example:
        ```python
        shown, _, kept = render_with_notes(TEXT_FALLBACK, TEXT_FALLBACK.prepare("x\n" * 9_000),
                                           ctx, summary="[Summary: many x.]")
        assert kept and shown.content.startswith("[Summary: many x.]")
        ```
    """
    note = "" if view.places_notes or not ctx.cap_notes else ctx.cap_notes[0]
    attempts = [(summary, note), ("", note)] if summary else [("", note)]
    for pre, suf in attempts:
        if not pre and not suf:
            break
        head = f"{pre}\n\n" if pre else ""
        tail = f"\n{suf}" if suf else ""
        inner = Budget(
            tokens=ctx.budget.tokens - ctx.counter.count(head + tail) - 4,
            chars=ctx.budget.chars - len(head) - len(tail),
        )
        if inner.tokens < MIN_RESULT_TOKENS or inner.chars < MIN_RESULT_CHARS:
            continue
        rendered, _ = render_or_fall_back(view, prepared, budget_with(ctx, inner))
        if not isinstance(rendered.content, str):
            continue
        content = head + rendered.content + tail
        fitting = _fits(content, ctx)
        if fitting is not None:
            return Rendered(content=content, view=rendered.view), fitting, bool(pre)
    rendered, tokens = render_or_fall_back(view, prepared, ctx)
    return rendered, tokens, False


def _first_line(text: str) -> str:
    """The first non-empty line of a result, for its headline (imitations neutralised)."""
    for line in text[:4_000].splitlines():
        stripped = line.strip()
        if stripped:
            return neutralise_inline(stripped[:160])
    return ""


def whole_result_view(
    text: str, payload: Any, shown: Any, *, kind: str, tokens: int | None, ctx: ViewContext
) -> ResultView:
    r"""The record of a result shown whole (fenced, or unchanged with fencing off).

    Args:
        text: The result as text (its JSON text when it is not a string).
        payload: The result itself.
        shown: What the model sees.
        kind: The record's kind.
        tokens: Tokens of `shown`, when already counted.
        ctx: Budget, counter, tool, status and the reference of the stored copy.

    Returns:
        The view record (its headline is the first line).

    Example:
        ```python
        view = whole_result_view("a\nb", "a\nb", "a\nb", kind="text", tokens=None, ctx=ctx)
        assert view.original_lines == 2 and not view.truncated
        ```
    """
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    if tokens is None:
        tokens = content_tokens(shown, ctx.counter, image_tokens=ctx.image_tokens)
    first = _first_line(text)
    headline = f"{first[:100]} ({lines:,} lines)" if first and lines > 1 else first
    ref = ctx.reference
    return ResultView(
        kind=kind,
        summary={"headline": headline} if headline else {},
        total=lines,
        unit="lines",
        shown=lines,
        original_chars=content_chars(payload),
        original_lines=lines,
        original_bytes=utf8_length(text),
        shown_chars=content_chars(shown),
        shown_tokens=tokens,
        budget_tokens=ctx.budget.tokens,
        budget_chars=ctx.budget.chars,
        counter=ctx.counter.name,
        record_id=ref.record_id if ref else None,
        stored=ref is not None,
        references={"all": str(ref)} if ref else {},
        tool_name=ctx.tool_name,
        status="error" if ctx.is_error else "success",
    )
