r"""Plain text view: the truncation engine (head + error windows + tail).

It is the fallback for every result no other view claims, and the base of the command and
search views, which only change the head/tail split.

Example:
    ```python
    from langchain_result_layer.core.budget import Budget
    from langchain_result_layer.core.tokens import ApproximateTokenCounter
    from langchain_result_layer.views.base import ViewContext
    from langchain_result_layer.views.text import TextView

    view = TextView()
    ctx = ViewContext(budget=Budget(tokens=300, chars=2_000), counter=ApproximateTokenCounter())
    rendered = view.render(view.prepare("line\\n" * 10_000), ctx)
    assert rendered.view.truncated
    ```
"""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

from langchain_result_layer.core.jsonable import to_json_text
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.render import NoticeFacts, fetch_call
from langchain_result_layer.core.truncate import (
    PLAIN_TEXT_PROFILE,
    TextTruncation,
    TruncationProfile,
    truncate_text,
)
from langchain_result_layer.core.view import ResultView
from langchain_result_layer.views.base import Prepared, Rendered, ResultViewBuilder, ViewContext

__all__ = ["TextView", "raw_text", "text_result_view", "utf8_length"]

_UTF8_CHUNK = 1 << 14  # small slices stay in cache: 2x faster than 1 MiB on a wide string


def utf8_length(text: str) -> int:
    """UTF-8 size of `text` in bytes (lone surrogates count as 3 bytes).

    Args:
        text: Any text.

    Returns:
        Byte length.

    Example:
        ```python
        assert utf8_length("é") == 2
        ```
    """
    if text.isascii():
        return len(text)
    # Encode only the chunks that need it, 16 kB at a time (no full-size copy).
    total = 0
    for start in range(0, len(text), _UTF8_CHUNK):
        chunk = text[start : start + _UTF8_CHUNK]
        total += len(chunk) if chunk.isascii() else len(chunk.encode("utf-8", "surrogatepass"))
    return total


def text_result_view(
    cut: TextTruncation,
    *,
    kind: str,
    raw: str,
    ctx: ViewContext,
    reference: Reference | None,
) -> ResultView:
    r"""Build the `ResultView` record of a text truncation.

    Args:
        cut: The engine's output.
        kind: View kind to record.
        raw: The raw text that was cut.
        ctx: The view context.
        reference: Reference to the stored raw result, with this kind.

    Returns:
        The record.

    Example:
        ```python
        raw = "step\n" * 5_000
        cut = truncate_text(raw, budget=ctx.budget, counter=ctx.counter)
        view = text_result_view(cut, kind="text", raw=raw, ctx=ctx, reference=None)
        assert view.truncated and view.original_lines == 5_000
        ```
    """
    references: dict[str, str] = {}
    if reference is not None:
        references["all"] = str(reference)
        if cut.next_reference is not None:
            references["next"] = str(cut.next_reference)
        for i, hit in enumerate(cut.error_lines[:8], start=1):
            lo = max(1, hit.line_no - 10)
            references[f"error_{i}"] = str(reference.with_lines(lo, hit.line_no + 30))
    shown_lines = sum(s.end_line - s.start_line + 1 for s in cut.segments)
    summary: dict[str, object] = {
        "chars": cut.total_chars,
        "lines": cut.total_lines,
        "kept_chars": cut.kept_chars,
        "omitted_chars": cut.omitted_chars,
        "omitted_whole_lines": cut.omitted_lines,
        "error_lines_found": len(cut.error_lines),
        "error_mode": cut.error_mode,
    }
    return ResultView(
        kind=kind,
        summary=summary,
        items=[seg.to_item() for seg in cut.segments],
        total=cut.total_lines,
        unit="lines",
        shown=shown_lines,
        references=references,
        omitted=list(cut.omitted),
        truncated=cut.truncated,
        original_chars=cut.total_chars,
        original_lines=cut.total_lines,
        original_bytes=utf8_length(raw),
        shown_chars=len(cut.text),
        shown_tokens=cut.tokens,
        budget_tokens=ctx.budget.tokens,
        budget_chars=ctx.budget.chars,
        counter=ctx.counter.name,
        normalised=cut.normalised,
        record_id=reference.record_id if reference else None,
        stored=reference is not None,
        store_error=ctx.store_note if reference is None else None,
        tool_name=ctx.tool_name,
        status="error" if ctx.is_error else "success",
    )


class TextView(ResultViewBuilder):
    """Head + error windows + tail for any text.

    Args:
        profile: How the engine cuts this view's text (head share, error evidence); plain
            text's by default.

    Example:
        ```python
        TextView(profile=TruncationProfile(head_fraction=0.4))
        ```
    """

    kind: ClassVar[str] = "text"
    sniff_ceiling = 0.05
    profile: TruncationProfile = PLAIN_TEXT_PROFILE

    def __init__(self, profile: TruncationProfile | None = None) -> None:
        if profile is not None:
            self.profile = profile

    def sniff(self, payload: object) -> float:
        """Text is always possible, never preferred."""
        return 0.05 if isinstance(payload, str) else 0.0

    def prepare(self, payload: object) -> Prepared:
        """Keep strings as they are; render anything else as deterministic JSON."""
        if isinstance(payload, str):
            return Prepared(raw=payload)
        return Prepared(raw=to_json_text(payload))

    def render(self, prepared: Prepared, ctx: ViewContext) -> Rendered:
        """Cut with the engine within the budget."""
        raw = raw_text(prepared)
        reference = replace(ctx.reference, kind=self.kind) if ctx.reference else None
        cut = truncate_text(
            raw,
            budget=ctx.budget,
            counter=ctx.counter,
            profile=self.profile,
            head_fraction=ctx.head_fraction,
            facts=NoticeFacts(
                tool_name=ctx.tool_name,
                is_error=ctx.is_error,
                reference=reference,
                store_note=ctx.store_note,
                fetch_tool_name=ctx.fetch_tool_name,
            ),
        )
        view = text_result_view(cut, kind=self.kind, raw=raw, ctx=ctx, reference=reference)
        return Rendered(content=cut.text, view=view)


def raw_text(prepared: Prepared) -> str:
    """The prepared raw result as text (bytes decoded as UTF-8, bad bytes replaced).

    Args:
        prepared: A prepared result.

    Returns:
        Its text.

    Example:
        ```python
        assert raw_text(Prepared(raw="caf\u00e9".encode())) == "caf\u00e9"
        ```
    """
    raw = prepared.raw
    return raw if isinstance(raw, str) else raw.decode("utf-8", "replace")


def read_more_hint(reference: Reference, ctx: ViewContext) -> str:
    """The standard "read more" call for a reference.

    Args:
        reference: What to read.
        ctx: The view context (fetch tool name).

    Returns:
        The call text.

    Example:
        ```python
        assert read_more_hint(ref, ctx).startswith(f"{ctx.fetch_tool_name}(ref=")
        ```
    """
    return fetch_call(reference, tool_name=ctx.fetch_tool_name)
