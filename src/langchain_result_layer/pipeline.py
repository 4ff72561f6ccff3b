r"""The per-result pipeline: choose a view, store the raw result, render within budget.

This module knows nothing about LangChain messages; adapters hand it the content, status and
tool name of a result and get back what the model should see plus the record of it.

Guarantees:

- every result is fenced as untrusted data, small ones too: a result within budget is shown
  whole inside the fence (text imitating the layer's markup neutralised); with fencing off
  (`ResultLayer(fence_results=False)` or `ToolPolicy(fence=False)`) it passes through
  unchanged instead (same object, byte-identical);
- the rendered content always fits the budget (tokens under the configured counter, and
  characters); a view that fails or overshoots falls back to the text view, then to a bare
  notice;
- bytes are stored as they are and shown as a binary notice (or by a registered `binary`
  view); other objects are rendered as deterministic JSON;
- a store that is down or full never loses the view: the model is told plainly that the full
  result could not be saved;
- CPU-heavy work on large results runs in a worker thread on the async path, so the event
  loop is never blocked.

Example:
    ```python
    from langchain_result_layer.core.budget import Budget
    from langchain_result_layer.core.tokens import ApproximateTokenCounter
    from langchain_result_layer.pipeline import ResultPipeline

    pipeline = ResultPipeline(budget=Budget(tokens=500, chars=4_000),
                              counter=ApproximateTokenCounter(), store=None)
    outcome = pipeline.process("x\n" * 100_000, tool_name="shell")
    assert outcome is not None and outcome.view.truncated
    ```
"""

from __future__ import annotations

import ast
import copy
import hashlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from langchain_result_layer.config import ToolPolicy
from langchain_result_layer.core.budget import MIN_RESULT_CHARS, MIN_RESULT_TOKENS, Budget
from langchain_result_layer.core.jsonable import materialize, to_json_text
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.render import (
    DEFAULT_FETCH_TOOL_NAME,
    Fence,
    fetch_call,
    neutralise_inline,
    plural,
)
from langchain_result_layer.core.tokens import TokenCounter, count_within
from langchain_result_layer.core.view import ResultView
from langchain_result_layer.errors import StoreQuotaExceededError
from langchain_result_layer.stores.base import Principal, RecordMeta, ResultStore
from langchain_result_layer.summarize import ResultSummarizer, SummaryOutcome
from langchain_result_layer.views import ViewContext, choose_view
from langchain_result_layer.views._tabular import materialize_rows
from langchain_result_layer.views.base import Prepared, Rendered, ResultViewBuilder
from langchain_result_layer.views.blocks import (
    BLOCK_OVERHEAD_TOKENS,
    FLOOR_TOKENS,
    BlockPlan,
    block_text,
    content_chars,
    content_tokens,
    is_content_block_list,
    plan_blocks,
    render_blocks,
)
from langchain_result_layer.views.registry import get_view
from langchain_result_layer.views.text import TextView, utf8_length

__all__ = ["META_KEY", "ProcessOutcome", "ResultPipeline", "headline_of"]

logger = logging.getLogger(__name__)

META_KEY = "result_layer"
"""Key of the layer's marker in `ToolMessage.response_metadata`."""

THREAD_THRESHOLD_CHARS = 64_000
"""On the async path, results larger than this are planned and rendered in a worker thread."""

_THREAD_THRESHOLD_BLOCKS = 256
_SHORT_BLOCKS_TOKENS = 16  # room left for '[N blocks omitted.]' next to a short store note
_SHORT_BLOCKS_CHARS = 48
_TEXT_FALLBACK = TextView()


@dataclass(slots=True)
class ProcessOutcome:
    """The result of processing one tool output.

    Attributes:
        content: What the model sees (the whole result, fenced, when it fits; the original
            object itself when fencing is off).
        view: The record of the view.
        passed_through: Whether the whole result is shown (nothing was cut).
        record: The stored record's metadata, when stored.
        reference: Reference to the stored raw result, when stored.
        extra: Free-form details for adapters.

    Example:
        ```python
        outcome.metadata()["ref"]  # doctest: +SKIP
        ```
    """

    content: Any
    view: ResultView
    passed_through: bool
    record: RecordMeta | None = None
    reference: Reference | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    fenced: bool = True
    """Whether the content is fenced as untrusted data (`False` only with fencing off)."""

    def metadata(self) -> dict[str, Any]:
        """The JSON-ready marker stored in `response_metadata["result_layer"]`.

        Returns:
            The marker (`processed: True`, kind, reference, sizes, headline).
        """
        view = self.view
        return {
            "version": 1,
            "processed": True,
            "kind": view.kind,
            "ref": str(self.reference) if self.reference else None,
            "record_id": view.record_id,
            "stored": view.stored,
            "store_error": view.store_error,
            "truncated": view.truncated,
            "passed_through": self.passed_through,
            "tokens": view.shown_tokens,
            "original_chars": view.original_chars,
            "original_lines": view.original_lines,
            "omitted_chars": view.omitted_chars,
            "shown_chars": view.shown_chars,
            "counter": view.counter,
            "capped": bool(self.record is not None and self.record.capped),
            "expires_at": self.record.expires_at if self.record is not None else None,
            "fenced": self.fenced,
            "headline": headline_of(view),
        }


def headline_of(view: ResultView) -> str:
    """One line that says what a result was (for placeholders of cleared results).

    Args:
        view: The view record.

    Returns:
        The view's own `summary["headline"]` when it has one, else size facts and the first
        error line shown.

    Example:
        ```python
        headline_of(ResultView(kind="text", original_chars=10, original_lines=2))
        ```
    """
    summary = view.summary if isinstance(view.summary, dict) else {}
    model_line = summary.get("model_summary_line")
    suffix = (
        f"; model-written summary: {model_line}"
        if isinstance(model_line, str) and model_line
        else ""
    )
    own = summary.get("headline")
    if isinstance(own, str) and own:
        return (own + suffix)[:400]
    if suffix:
        size = f"{plural(view.original_chars, 'char')}, {plural(view.original_lines, 'line')}"
        return f"{view.kind}, {size}{suffix}"[:400]
    size = f"{plural(view.original_chars, 'char')}, {plural(view.original_lines, 'line')}"
    facts = f"{view.kind}, {size}"
    for item in view.items:
        if item.get("role") == "error":
            text = str(item.get("text", "")).strip().splitlines()
            error_line = next((ln for ln in text if ln.strip()), "")
            if error_line:
                return f"{facts}; first error shown: {error_line[:160]}"
    return facts


@dataclass(slots=True)
class _Plan:
    policy: ToolPolicy
    budget: Budget
    is_error: bool
    tool_name: str | None
    payload: Any
    fits: bool = False
    view: ResultViewBuilder | None = None
    prepared: Prepared | None = None
    blocks: BlockPlan | None = None
    binary: bool = False
    fence: bool = True
    """Whether the result is fenced (the layer's and the tool's setting)."""
    shown: Any = None
    """What the model sees of a result that fits (the fenced text; the payload unfenced)."""
    tokens: int | None = None
    """Tokens of `shown`, when counted (results that fit)."""


class ResultPipeline:
    """Processes tool outputs: view choice, storage, rendering within the budget.

    Args:
        budget: Default per-result budget.
        counter: Token counter the budget is measured with.
        store: Where raw results go (`None`: not stored; notices say so).
        policies: Per-tool overrides, by tool name (`"*"` sets the default policy).
        fetch_tool_name: Name of the fetch tool quoted in notices.
        image_tokens: Fixed token cost of one media block.
        store_small_results: Also store results that pass through, so that the budget guard
            can always restore what it clears.
        ttl_seconds: Default lifetime of stored results (`None`: the store's default).
        summarizer: Optional model-written summaries placed above large views.
        turn_tokens: Tokens that all results of one model turn's parallel tool calls may take
            together; each of `n` parallel results gets at most `turn_tokens / n`
            (`None`: no turn limit).
        fence_results: Fence every result as untrusted data, small ones too (a tool's
            `ToolPolicy(fence=...)` overrides it); `False` passes results that fit through
            unchanged.

    Example:
        ```python
        ResultPipeline(budget=Budget(tokens=2_000, chars=8_000), counter=counter, store=store)
        ```
    """

    def __init__(
        self,
        *,
        budget: Budget,
        counter: TokenCounter,
        store: ResultStore | None,
        policies: Mapping[str, ToolPolicy] | None = None,
        fetch_tool_name: str = DEFAULT_FETCH_TOOL_NAME,
        image_tokens: int = 1_600,
        store_small_results: bool = True,
        ttl_seconds: float | None = None,
        summarizer: ResultSummarizer | None = None,
        turn_tokens: int | None = None,
        fence_results: bool = True,
    ) -> None:
        self.fence_results = fence_results
        self.summarizer = summarizer
        self.turn_tokens = turn_tokens
        self.budget = budget
        self.counter = counter
        self.store = store
        self.policies = dict(policies or {})
        self.fetch_tool_name = fetch_tool_name
        self.image_tokens = image_tokens
        self.store_small_results = store_small_results
        self.ttl_seconds = ttl_seconds

    def using(self, store: ResultStore | None) -> ResultPipeline:
        """This pipeline with another store (the graph's store of one run).

        Args:
            store: The store to write to.

        Returns:
            `self` when it is the same store, else a shallow copy using `store`.

        Example:
            ```python
            pipeline.using(graph_store).process(big_log)  # doctest: +SKIP
            ```
        """
        if store is self.store:
            return self
        other = copy.copy(self)
        other.store = store
        return other

    def fences(self, tool_name: str | None) -> bool:
        """Whether results of `tool_name` are fenced (its policy, else the layer's setting).

        Args:
            tool_name: The tool.

        Returns:
            `True` when fenced.

        Example:
            ```python
            assert pipeline.fences("read_log")  # doctest: +SKIP
            ```
        """
        policy = self.policy_for(tool_name)
        return self.fence_results if policy.fence is None else policy.fence

    # ------------------------------------------------------------------ planning (pure)

    def policy_for(self, tool_name: str | None) -> ToolPolicy:
        """The policy of a tool (the default policy when none is configured).

        Args:
            tool_name: The tool.

        Returns:
            Its policy.

        Example:
            ```python
            pipeline.policy_for("run_sql").kind  # doctest: +SKIP
            ```
        """
        if tool_name is not None and tool_name in self.policies:
            return self.policies[tool_name]
        return self.policies.get("*", ToolPolicy())

    def budget_for(self, tool_name: str | None, *, siblings: int = 1) -> Budget:
        """The per-result budget of a tool (its policy's caps, else the layer's).

        Args:
            tool_name: The tool.
            siblings: How many results the same model turn produced (parallel tool calls);
                they share the turn budget.

        Returns:
            The budget.

        Example:
            ```python
            pipeline.budget_for("read_log").tokens  # doctest: +SKIP
            ```
        """
        policy = self.policy_for(tool_name)
        tokens = policy.max_tokens if policy.max_tokens is not None else self.budget.tokens
        chars = policy.max_chars if policy.max_chars is not None else self.budget.chars
        if siblings > 1 and self.turn_tokens is not None:
            share = self.turn_tokens // siblings
            if share < tokens:
                chars = int(chars * share / tokens)
                tokens = share
        return Budget(tokens=max(MIN_RESULT_TOKENS, tokens), chars=max(MIN_RESULT_CHARS, chars))

    def _count_if_fits(self, text: str, budget: Budget) -> int | None:
        if len(text) > budget.chars:
            return None
        return count_within(self.counter, text, budget.tokens)

    def _fits_whole(self, plan: _Plan, text: str, original: Any) -> bool:
        """Whether the whole result, as shown (fenced unless fencing is off), fits the budget."""
        if plan.fence:
            if len(text) + _FENCE_CHARS > plan.budget.chars:
                return False
            shown: Any = Fence.for_content(text).wrap(text)
            plan.tokens = self._count_if_fits(shown, plan.budget)
        else:
            shown = original
            plan.tokens = self._count_if_fits(text, plan.budget)
        if plan.tokens is None:
            return False
        plan.fits, plan.shown = True, shown
        return True

    def _media_allowance(self, blocks: list[Any], budget: Budget, siblings: int) -> int:
        """Tokens granted to media blocks on top of the per-result cap.

        An image costs a fixed `image_tokens` whatever the text budget, so a per-result cap
        below that cost must not drop every image: when the media do not fit the cap next to
        a floor for the text, they get their fixed cost on top of it (the text keeps its
        cap), as long as the result stays within its share of the turn budget
        (`turn_fraction` of the window over the parallel calls). The guard still keeps the
        whole request under the window.
        """
        media = sum(1 for b in blocks if block_text(b) is None)
        if not media or self.turn_tokens is None:
            return 0
        share = self.turn_tokens // max(1, siblings)
        need = media * (self.image_tokens + BLOCK_OVERHEAD_TOKENS)
        # What the text needs next to them: a floor, the closing notice, their framing.
        text = FLOOR_TOKENS + _MEDIA_NOTICE_TOKENS + 2 * BLOCK_OVERHEAD_TOKENS
        if need + text <= budget.tokens or budget.tokens + need > share:
            return 0  # they fit the cap already, or not even the turn's share: notices
        return need

    def _plan_block_list(
        self, plan: _Plan, blocks: list[Any], *, siblings: int = 1, fixed_budget: bool = False
    ) -> None:
        """Plan a content-block list; fenced text blocks get room for their fences."""
        reserve_tokens = reserve_chars = 0
        if plan.fence:
            texts = sum(1 for b in blocks if block_text(b) is not None)
            reserve_tokens, reserve_chars = texts * _FENCE_TOKENS, texts * _FENCE_CHARS
        if not fixed_budget:
            base = Budget(tokens=max(1, plan.budget.tokens - reserve_tokens), chars=1)
            extra = self._media_allowance(blocks, base, siblings)
            if extra:
                plan.budget = Budget(tokens=plan.budget.tokens + extra, chars=plan.budget.chars)
        budget = plan.budget
        for _ in range(3):
            inner = Budget(
                tokens=max(MIN_RESULT_TOKENS, budget.tokens - reserve_tokens),
                chars=max(MIN_RESULT_CHARS, budget.chars - reserve_chars),
            )
            plan.blocks = plan_blocks(
                blocks, budget=inner, counter=self.counter, image_tokens=self.image_tokens
            )
            plan.fits = plan.blocks.fits
            plan.tokens = plan.blocks.tokens
            if not plan.fits:
                return
            shown = _fence_blocks(blocks, range(len(blocks))) if plan.fence else blocks
            tokens, chars = self._measure(shown)
            if tokens <= budget.tokens and chars <= budget.chars:
                plan.shown, plan.tokens = shown, tokens
                return
            reserve_tokens, reserve_chars = reserve_tokens * 2 + 16, reserve_chars * 2 + 64
        plan.fits = False

    def _plan(
        self,
        content: Any,
        *,
        tool_name: str | None,
        status: str,
        siblings: int = 1,
        budget: Budget | None = None,
        kind: str | None = None,
    ) -> _Plan | None:
        policy = self.policy_for(tool_name)
        if not policy.enabled:
            return None
        if kind is not None and kind != policy.kind and get_view(kind) is not None:
            policy = replace(policy, kind=kind)
        plan = _Plan(
            policy=policy,
            budget=budget or self.budget_for(tool_name, siblings=siblings),
            is_error=status == "error",
            tool_name=tool_name,
            payload=content,
            fence=self.fence_results if policy.fence is None else policy.fence,
        )
        given_budget = budget
        budget = plan.budget
        if not isinstance(content, (str, bytes, bytearray, memoryview)):
            # One-shot sources (a SQLAlchemy `Result`, generators, iterators, also inside
            # content blocks) are read once, here (generators within bounds), so that the size
            # check below does not consume them before the view and the store see them.
            content = plan.payload = materialize(materialize_rows(content))
        if isinstance(content, (bytes, bytearray, memoryview)):
            plan.payload = bytes(content)
            plan.binary = True
            if policy.kind is None and get_view("binary") is None:
                return plan  # no binary view: a notice, rendered by the pipeline
        elif isinstance(content, str):
            if self._fits_whole(plan, content, content):
                return plan
            data = _bytes_from_repr(content)
            if data is not None:
                # LangChain turned the tool's bytes into their Python repr: show them as bytes.
                plan.payload = data
                plan.binary = True
                if policy.kind is None and get_view("binary") is None:
                    return plan
        elif is_content_block_list(content) and policy.kind is None:
            self._plan_block_list(
                plan, content, siblings=siblings, fixed_budget=given_budget is not None
            )
            return plan
        elif self._fits_whole(plan, to_json_text(content), content):
            return plan
        try:
            view = choose_view(plan.payload, kind=policy.kind)
            prepared = view.prepare(plan.payload)
        except Exception:  # a broken or unknown view falls back to text
            logger.exception("view preparation failed for tool %r; using the text view", tool_name)
            if plan.binary:
                return plan
            view = _TEXT_FALLBACK
            prepared = view.prepare(plan.payload)
        plan.view, plan.prepared = view, prepared
        return plan

    # ------------------------------------------------------------------ storing

    def _store_args(self, plan: _Plan) -> tuple[str | bytes, str]:
        if plan.prepared is not None:
            return plan.prepared.raw, (plan.view.kind if plan.view else "text")
        payload = plan.payload
        if isinstance(payload, (str, bytes)):
            return payload, "binary" if isinstance(payload, bytes) else "text"
        if plan.blocks is not None:
            return to_json_text(payload), "blocks"
        return to_json_text(payload), "json"

    def _should_store(self, plan: _Plan) -> bool:
        return self.store is not None and (not plan.fits or self.store_small_results)

    @staticmethod
    def _store_note(exc: BaseException) -> str:
        if isinstance(exc, StoreQuotaExceededError):
            why = f"storage quota exceeded: {exc}"
        else:
            why = f"result store unavailable: {type(exc).__name__}: {exc}"
        return (
            f"The full result could not be saved ({why[:200]}); what is omitted cannot be fetched."
        )

    def _put_kwargs(
        self, plan: _Plan, principal: Principal, tool_call_id: str | None, kind: str
    ) -> dict[str, Any]:
        return {
            "principal": principal,
            "kind": kind,
            "tool_name": plan.tool_name,
            "tool_call_id": tool_call_id,
            "ttl_seconds": plan.policy.ttl_seconds or self.ttl_seconds,
        }

    def _block_texts_to_store(self, plan: _Plan) -> dict[int, str]:
        """Text blocks that will be cut, each stored on its own.

        A cut block's view names line ranges of that block's text; storing it alone makes
        those ranges fetchable.
        """
        if plan.blocks is None or plan.fits or self.store is None:
            return {}
        blocks = plan.payload
        return {i: block_text(blocks[i]) or "" for i in plan.blocks.cut}

    def _put(
        self, plan: _Plan, principal: Principal, tool_call_id: str | None
    ) -> tuple[RecordMeta | None, str | None, dict[int, RecordMeta]]:
        if not self._should_store(plan):
            return None, None if self.store is not None else "The full result was not saved.", {}
        assert self.store is not None
        raw, kind = self._store_args(plan)
        try:
            meta = self.store.put(raw, **self._put_kwargs(plan, principal, tool_call_id, kind))
        except Exception as exc:  # the store must never break the agent
            logger.warning("could not store result of %r: %s", plan.tool_name, exc)
            return None, self._store_note(exc), {}
        parts: dict[int, RecordMeta] = {}
        for i, text in self._block_texts_to_store(plan).items():
            try:
                parts[i] = self.store.put(
                    text, **self._put_kwargs(plan, principal, tool_call_id, "text")
                )
            except Exception as exc:  # the block's view says it was not saved
                logger.warning("could not store block %d of %r: %s", i, plan.tool_name, exc)
        return meta, None, parts

    async def _aput(
        self, plan: _Plan, principal: Principal, tool_call_id: str | None
    ) -> tuple[RecordMeta | None, str | None, dict[int, RecordMeta]]:
        if not self._should_store(plan):
            return None, None if self.store is not None else "The full result was not saved.", {}
        assert self.store is not None
        raw, kind = self._store_args(plan)
        try:
            meta = await self.store.aput(
                raw, **self._put_kwargs(plan, principal, tool_call_id, kind)
            )
        except Exception as exc:  # the store must never break the agent
            logger.warning("could not store result of %r: %s", plan.tool_name, exc)
            return None, self._store_note(exc), {}
        parts: dict[int, RecordMeta] = {}
        for i, text in self._block_texts_to_store(plan).items():
            try:
                parts[i] = await self.store.aput(
                    text, **self._put_kwargs(plan, principal, tool_call_id, "text")
                )
            except Exception as exc:  # the block's view says it was not saved
                logger.warning("could not store block %d of %r: %s", i, plan.tool_name, exc)
        return meta, None, parts

    # ------------------------------------------------------------------ rendering (pure)

    def _context(
        self, plan: _Plan, budget: Budget, ref: Reference | None, note: str | None
    ) -> ViewContext:
        return ViewContext(
            budget=budget,
            counter=self.counter,
            tool_name=plan.tool_name,
            is_error=plan.is_error,
            reference=ref,
            store_note=note,
            fetch_tool_name=self.fetch_tool_name,
            head_fraction=plan.policy.head_fraction,
            options=plan.policy.view_options,
        )

    def _measure(self, content: Any) -> tuple[int, int]:
        """Tokens and characters of rendered content."""
        return (
            content_tokens(content, self.counter, image_tokens=self.image_tokens),
            content_chars(content),
        )

    def _render_view(
        self, view: ResultViewBuilder, prepared: Prepared, ctx: ViewContext
    ) -> tuple[Rendered, int]:
        """Render with `view`, falling back to the text view, then to a bare notice."""
        budget = ctx.budget
        try:
            rendered = view.render(prepared, ctx)
            tokens, chars = self._measure(rendered.content)
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
            text = self._binary_notice(prepared.raw, ctx)
            return Rendered(content=text, view=ResultView(kind=view.kind, truncated=True)), (
                self.counter.count(text)
            )
        if view is not _TEXT_FALLBACK:
            try:
                rendered = _TEXT_FALLBACK.render(Prepared(raw=prepared.raw), ctx)
                tokens, chars = self._measure(rendered.content)
                if tokens <= budget.tokens and chars <= budget.chars:
                    return rendered, tokens
            except Exception:
                logger.exception("the text view failed too; showing a bare notice")
        text = _bare_notice(
            len(prepared.raw), ctx.reference, budget, self.counter, ctx.fetch_tool_name
        )
        return Rendered(content=text, view=ResultView(kind=view.kind, truncated=True)), (
            self.counter.count(text)
        )

    def _binary_notice(self, data: bytes, ctx: ViewContext) -> str:
        """What the model sees of binary data when no binary view renders it."""
        digest = hashlib.sha256(data).hexdigest()[:16]
        head = data[:16].hex(" ")
        text = (
            f"[Binary tool result{f' `{ctx.tool_name}`' if ctx.tool_name else ''}: "
            f"{plural(len(data), 'byte')} (sha256 {digest}…, first bytes {head}); not shown "
            "as text."
        )
        if ctx.reference is not None:
            call = fetch_call(ctx.reference.with_chars(0, 4_096), tool_name=ctx.fetch_tool_name)
            text += f" Full result: {ctx.reference}. Read bytes: {call}.]"
        elif ctx.store_note:
            text += f" {ctx.store_note}]"
        else:
            text += " It was not saved.]"
        if len(text) <= ctx.budget.chars and self.counter.count(text) <= ctx.budget.tokens:
            return text
        return _bare_notice(
            len(data), ctx.reference, ctx.budget, self.counter, ctx.fetch_tool_name, unit="byte"
        )

    def _render_with_extras(
        self,
        plan: _Plan,
        ref: Reference | None,
        note: str | None,
        *,
        prefix: str,
        suffix: str,
    ) -> tuple[Rendered, int, bool]:
        """Render the view below a summary block and above a store note, within the budget.

        The view gets the budget minus what the extras cost; when that leaves too little, the
        summary is dropped first, then the note.

        Returns:
            The rendered content, its tokens, and whether the summary block was kept.
        """
        assert plan.view is not None
        assert plan.prepared is not None
        budget = plan.budget
        attempts = [(prefix, suffix), ("", suffix)] if prefix else [("", suffix)]
        for pre, suf in attempts:
            if not pre and not suf:
                break
            head = f"{pre}\n\n" if pre else ""
            tail = f"\n{suf}" if suf else ""
            extra_tokens = self.counter.count(head + tail) + 4
            inner_tokens = budget.tokens - extra_tokens
            inner_chars = budget.chars - len(head) - len(tail)
            if inner_tokens < MIN_RESULT_TOKENS or inner_chars < MIN_RESULT_CHARS:
                continue
            inner = Budget(tokens=inner_tokens, chars=inner_chars)
            rendered, _ = self._render_view(
                plan.view, plan.prepared, self._context(plan, inner, ref, note)
            )
            if not isinstance(rendered.content, str):
                continue
            content = head + rendered.content + tail
            tokens, chars = self._measure(content)
            if tokens <= budget.tokens and chars <= budget.chars:
                return Rendered(content=content, view=rendered.view), tokens, bool(pre)
        rendered, tokens = self._render_view(
            plan.view, plan.prepared, self._context(plan, budget, ref, note)
        )
        return rendered, tokens, False

    def _render(
        self,
        plan: _Plan,
        meta: RecordMeta | None,
        note: str | None,
        parts: Mapping[int, RecordMeta] | None = None,
        summary: SummaryOutcome | None = None,
    ) -> ProcessOutcome:
        ref = Reference(record_id=meta.record_id, kind=meta.kind) if meta is not None else None
        if plan.fits:
            view = self._passthrough_view(plan, meta)
            return ProcessOutcome(
                content=plan.shown,
                view=view,
                passed_through=True,
                record=meta,
                reference=ref,
                fenced=plan.fence,
            )
        if plan.blocks is not None:
            return self._render_blocks(plan, meta, ref, note, parts or {})
        ctx = self._context(plan, plan.budget, ref, note)
        used_summary = False
        if plan.view is None or plan.prepared is None:  # bytes without a binary view
            assert isinstance(plan.payload, bytes)
            text = self._binary_notice(plan.payload, ctx)
            rendered = Rendered(content=text, view=ResultView(kind="binary", truncated=True))
            tokens = self.counter.count(text)
            rendered.view.summary = {"bytes": len(plan.payload)}
            rendered.view.original_bytes = len(plan.payload)
            rendered.view.original_chars = len(plan.payload)
            rendered.view.total, rendered.view.unit = len(plan.payload), "bytes"
        else:
            prefix = _summary_prefix(summary)
            suffix = _capped_note(meta)
            rendered, tokens, used_summary = self._render_with_extras(
                plan, ref, note, prefix=prefix, suffix=suffix
            )
        if summary is not None:
            _record_summary(rendered.view, summary, shown=used_summary)
        view = rendered.view
        view.record_id = meta.record_id if meta else None
        view.stored = meta is not None
        view.store_error = note if meta is None else None
        view.tool_name = plan.tool_name
        view.status = "error" if plan.is_error else "success"
        if not view.counter:
            view.counter = self.counter.name
        view.budget_tokens, view.budget_chars = plan.budget.tokens, plan.budget.chars
        view.shown_chars = content_chars(rendered.content)
        view.shown_tokens = tokens
        if ref is not None and "all" not in view.references:
            view.references["all"] = str(ref)
        return ProcessOutcome(
            content=rendered.content, view=view, passed_through=False, record=meta, reference=ref
        )

    def _passthrough_view(self, plan: _Plan, meta: RecordMeta | None) -> ResultView:
        payload = plan.payload
        if isinstance(payload, str):
            text = payload
            kind = "text"
        else:
            text = to_json_text(payload)
            kind = "blocks" if plan.blocks is not None else "json"
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        tokens = plan.tokens
        if tokens is None:
            tokens = content_tokens(plan.shown, self.counter, image_tokens=self.image_tokens)
        first = _first_line(text)
        headline = f"{first[:100]} ({lines:,} lines)" if first and lines > 1 else first
        return ResultView(
            kind=meta.kind if meta else kind,
            summary={"headline": headline} if headline else {},
            total=lines,
            unit="lines",
            shown=lines,
            original_chars=content_chars(payload),
            original_lines=lines,
            original_bytes=utf8_length(text),
            shown_chars=content_chars(plan.shown),
            shown_tokens=tokens,
            budget_tokens=plan.budget.tokens,
            budget_chars=plan.budget.chars,
            counter=self.counter.name,
            record_id=meta.record_id if meta else None,
            stored=meta is not None,
            references={"all": str(Reference(record_id=meta.record_id, kind=meta.kind))}
            if meta
            else {},
            tool_name=plan.tool_name,
            status="error" if plan.is_error else "success",
        )

    def _render_blocks(
        self,
        plan: _Plan,
        meta: RecordMeta | None,
        ref: Reference | None,
        note: str | None,
        parts: Mapping[int, RecordMeta],
    ) -> ProcessOutcome:
        blocks: list[Any] = list(plan.payload)
        bplan = plan.blocks
        assert bplan is not None
        ref_text = str(ref) if ref else None

        def cut_block(index: int, text: str, budget: Budget) -> tuple[str, dict[str, Any]]:
            part = parts.get(index)
            part_ref = Reference(record_id=part.record_id, kind="text") if part else None
            block_note = note if part is None else None
            if part is None and meta is not None:
                block_note = (
                    f"This block could not be saved on its own; the whole content is {ref}."
                )
            ctx = self._context(plan, budget, part_ref, block_note)
            try:
                view = choose_view(text) if plan.policy.kind is None else _TEXT_FALLBACK
                rendered, _ = self._render_view(view, view.prepare(text), ctx)
            except Exception:  # choose_view/prepare of a user view: fall back to text
                logger.exception("block view failed; using the text view")
                rendered, _ = self._render_view(_TEXT_FALLBACK, _TEXT_FALLBACK.prepare(text), ctx)
            content = rendered.content
            if not isinstance(content, str):
                content = block_text({"type": "text", "text": to_json_text(content)}) or ""
            record = rendered.view.to_dict()
            record.pop("original_artifact", None)
            return content, record

        blocks_budget, note = plan.budget, ""
        # The store note goes first: the full one when the blocks keep a useful budget,
        # else a short one that leaves room for the blocks' own notice.
        for candidate, floor in (
            (_capped_note(meta), (MIN_RESULT_TOKENS, MIN_RESULT_CHARS)),
            (_capped_note(meta, short=True), (_SHORT_BLOCKS_TOKENS, _SHORT_BLOCKS_CHARS)),
        ):
            if not candidate:
                break
            cost = self.counter.count(candidate) + BLOCK_OVERHEAD_TOKENS
            if (
                plan.budget.tokens - cost >= floor[0]
                and plan.budget.chars - len(candidate) >= floor[1]
            ):
                note = candidate
                blocks_budget = Budget(
                    tokens=plan.budget.tokens - cost, chars=plan.budget.chars - len(candidate)
                )
                break
        # Text blocks shown whole are fenced like any result; cut ones are fenced by their view.
        shown_blocks = _fence_blocks(blocks, bplan.keep) if plan.fence else blocks
        rendering = render_blocks(
            shown_blocks,
            bplan,
            budget=blocks_budget,
            counter=self.counter,
            image_tokens=self.image_tokens,
            cut_block=cut_block,
            reference=ref_text,
        )
        if note:
            rendering.content = [*rendering.content, {"type": "text", "text": note}]
            rendering.tokens += self.counter.count(note) + BLOCK_OVERHEAD_TOKENS
            rendering.chars += len(note)
        texts = [block_text(b) for b in blocks]
        view = ResultView(
            kind="blocks",
            summary={
                "blocks": len(blocks),
                "text_blocks": sum(1 for t in texts if t is not None),
                "cut": rendering.cut,
                "dropped": rendering.dropped,
                "replaced": rendering.replaced,
            },
            items=[{"type": "block", **item} for item in rendering.items],
            total=len(blocks),
            unit="blocks",
            shown=len(blocks) - len(rendering.dropped),
            references={"all": ref_text} if ref_text else {},
            truncated=True,
            original_chars=sum(len(t) for t in texts if t is not None),
            original_lines=sum(t.count("\n") + 1 for t in texts if t is not None),
            budget_tokens=plan.budget.tokens,
            budget_chars=plan.budget.chars,
            counter=self.counter.name,
            record_id=meta.record_id if meta else None,
            stored=meta is not None,
            store_error=note if meta is None else None,
            tool_name=plan.tool_name,
            status="error" if plan.is_error else "success",
            shown_tokens=rendering.tokens,
            shown_chars=rendering.chars,
        )
        for i, part in parts.items():
            view.references[f"block_{i + 1}"] = str(Reference(record_id=part.record_id))
        return ProcessOutcome(
            content=rendering.content, view=view, passed_through=False, record=meta, reference=ref
        )

    def _summary_input(self, plan: _Plan) -> str | None:
        """The raw text to summarise, when a summary is configured and wanted for `plan`."""
        if self.summarizer is None or plan.fits or plan.blocks is not None:
            return None
        if plan.prepared is None or plan.view is None or plan.policy.summarize is False:
            return None
        raw = plan.prepared.raw
        if not isinstance(raw, str):
            return None
        if plan.policy.summarize is True:
            return raw
        return raw if self.summarizer.wants(raw=raw, kind=plan.view.kind) else None

    def rerender(
        self,
        content: Any,
        *,
        record: RecordMeta | None,
        tool_name: str | None,
        status: str = "success",
        budget: Budget,
    ) -> ProcessOutcome | None:
        """Render an already stored result again with a smaller budget (nothing is stored).

        The budget guard uses it to shrink results the model has not seen yet when they alone
        would overflow the window (many large parallel results).

        Args:
            content: The raw result (read back from the store).
            record: Its stored record (the new view keeps the same reference).
            tool_name: The tool that produced it.
            status: `success` or `error`.
            budget: The new budget.

        Returns:
            The new outcome, or `None` when the tool's policy disables processing.

        Example:
            ```python
            pipeline.rerender(raw, record=meta, tool_name="read_log",
                              budget=Budget(tokens=800, chars=4_000))  # doctest: +SKIP
            ```
        """
        kind = record.kind if record is not None else None
        plan = self._plan(
            content,
            tool_name=tool_name,
            status=status,
            budget=budget,
            kind=kind if kind not in (None, "text", "blocks", "json") else None,
        )
        if plan is None:
            return None
        return self._render(
            plan, record, None if record is not None else "The full result was not saved."
        )

    # ------------------------------------------------------------------ entry points

    def process(
        self,
        content: Any,
        *,
        tool_name: str | None = None,
        status: str = "success",
        tool_call_id: str | None = None,
        principal: Principal | None = None,
        siblings: int = 1,
        budget: Budget | None = None,
    ) -> ProcessOutcome | None:
        """Process one tool output synchronously.

        Args:
            content: The tool output (message content or the tool's raw return value).
            tool_name: The tool's name (selects its policy).
            status: `success` or `error`.
            tool_call_id: The tool call's id, recorded with the stored result.
            principal: Owner of the stored result.
            siblings: Results of the same model turn (parallel calls share the turn budget).
            budget: Use this budget instead of the tool's.

        Returns:
            The outcome, or `None` when the tool's policy disables processing.

        Example:
            ```python
            outcome = pipeline.process(big_log, tool_name="read_log", status="error")
            ```
        """
        plan = self._plan(
            content, tool_name=tool_name, status=status, siblings=siblings, budget=budget
        )
        if plan is None:
            return None
        meta, note, parts = self._put(plan, principal or Principal(), tool_call_id)
        summary: SummaryOutcome | None = None
        raw = self._summary_input(plan)
        if raw is not None and self.summarizer is not None:
            summary = self.summarizer.summarize(
                raw,
                budget_tokens=plan.budget.tokens,
                tool_name=tool_name,
                kind=plan.view.kind if plan.view else "text",
                reference=_ref_of(meta),
            )
        return self._render(plan, meta, note, parts, summary)

    async def aprocess(
        self,
        content: Any,
        *,
        tool_name: str | None = None,
        status: str = "success",
        tool_call_id: str | None = None,
        principal: Principal | None = None,
        siblings: int = 1,
        budget: Budget | None = None,
    ) -> ProcessOutcome | None:
        """Async twin of `process`; CPU-heavy steps on large results run in a thread.

        Args:
            content: The tool output.
            tool_name: The tool's name.
            status: `success` or `error`.
            tool_call_id: The tool call's id.
            principal: Owner of the stored result.
            siblings: Results of the same model turn (parallel calls share the turn budget).
            budget: Use this budget instead of the tool's.

        Returns:
            The outcome, or `None` when the tool's policy disables processing.

        Example:
            ```python
            outcome = await pipeline.aprocess(big_log, tool_name="read_log")
            ```
        """
        import asyncio  # noqa: PLC0415 - already loaded where an event loop runs

        heavy = _is_heavy(content)
        if heavy:
            plan = await asyncio.to_thread(
                self._plan,
                content,
                tool_name=tool_name,
                status=status,
                siblings=siblings,
                budget=budget,
            )
        else:
            plan = self._plan(
                content, tool_name=tool_name, status=status, siblings=siblings, budget=budget
            )
        if plan is None:
            return None
        meta, note, parts = await self._aput(plan, principal or Principal(), tool_call_id)
        summary: SummaryOutcome | None = None
        raw = self._summary_input(plan)
        if raw is not None and self.summarizer is not None:
            summary = await self.summarizer.asummarize(
                raw,
                budget_tokens=plan.budget.tokens,
                tool_name=tool_name,
                kind=plan.view.kind if plan.view else "text",
                reference=_ref_of(meta),
            )
        if heavy:
            return await asyncio.to_thread(self._render, plan, meta, note, parts, summary)
        return self._render(plan, meta, note, parts, summary)


_BYTES_REPR_MAX = 64_000_000
_FENCE_CHARS = 96
"""Characters a fence adds around a text (open and close lines with their newlines)."""
_MEDIA_NOTICE_TOKENS = 64
"""Room `plan_blocks` keeps for its closing notice next to media blocks."""
_FENCE_TOKENS = 32
"""Tokens reserved for one fence when planning (the final text is counted exactly)."""


def _first_line(text: str) -> str:
    """The first non-empty line of a result, for its headline (imitations neutralised)."""
    for line in text[:4_000].splitlines():
        stripped = line.strip()
        if stripped:
            return neutralise_inline(stripped[:160])
    return ""


def _fence_blocks(blocks: list[Any], indices: Any) -> list[Any]:
    """`blocks` with the text blocks at `indices` fenced (each with its own fence)."""
    out = list(blocks)
    for i in indices:
        block = out[i]
        text = block_text(block)
        if text is None:
            continue
        fenced = Fence.for_content(text).wrap(text)
        if isinstance(block, str):
            out[i] = fenced
        elif isinstance(block, dict) and isinstance(block.get("text"), str):
            out[i] = {**block, "text": fenced}
        else:
            out[i] = {"type": "text", "text": fenced}
    return out


def _bytes_from_repr(text: str) -> bytes | None:
    """The bytes a tool returned, when LangChain stringified them as `b'...'`; else `None`."""
    if len(text) < 3 or len(text) > _BYTES_REPR_MAX or text[0] != "b" or text[1] not in "'\"":
        return None
    if text[-1] != text[1]:
        return None
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, bytes) else None


def _ref_of(meta: RecordMeta | None) -> Reference | None:
    return Reference(record_id=meta.record_id, kind=meta.kind) if meta is not None else None


def _summary_prefix(summary: SummaryOutcome | None) -> str:
    if summary is None:
        return ""
    if summary.text is not None:
        return summary.text
    return (
        f"[Model-written summary unavailable ({summary.error}); showing the deterministic "
        "view only.]"
    )


def _capped_note(meta: RecordMeta | None, *, short: bool = False) -> str:
    """What the model must know when the store kept only a head and a tail."""
    if meta is None or not meta.capped:
        return ""
    unit = "byte" if meta.is_binary else "char"
    start = meta.gap_start if meta.gap_start is not None else meta.size
    end = meta.gap_end if meta.gap_end is not None else meta.original_size
    reason = meta.cap_reason or "size cap"
    if short:
        return f"[Store note: {unit}s {start:,}-{end:,} were not stored ({reason}).]"
    return (
        f"[Store note: because of the {reason}, the stored copy keeps only the first "
        f"{plural(start, unit)} and the last {plural(meta.original_size - end, unit)}; "
        f"{unit}s {start:,}-{end:,} of the original cannot be fetched.]"
    )


def _record_summary(view: ResultView, summary: SummaryOutcome, *, shown: bool) -> None:
    view.summary["model_summary"] = {
        "shown": shown,
        "error": summary.error,
        "calls": summary.calls,
        "cached": summary.cached,
        "chunks_total": summary.chunks_total,
        "chunks_summarised": summary.chunks_summarised,
        "citations": [list(c) for c in summary.citations],
        "dropped_citations": summary.dropped_citations,
        "clipped": summary.clipped,
    }
    if shown and summary.summary:
        view.summary["model_summary_line"] = summary.line
        view.observations.insert(0, f"Model-written summary (may be wrong): {summary.summary}")


def _is_heavy(content: Any) -> bool:
    """Whether processing `content` may take long enough to block an event loop."""
    if isinstance(content, (str, bytes, bytearray, memoryview)):
        return len(content) > THREAD_THRESHOLD_CHARS
    if isinstance(content, list):
        if len(content) > _THREAD_THRESHOLD_BLOCKS:
            return True
        size = 0
        for block in content:
            if isinstance(block, str):
                size += len(block)
            elif isinstance(block, dict):
                size += sum(len(v) if isinstance(v, (str, bytes)) else 64 for v in block.values())
            else:
                return True
        return size > THREAD_THRESHOLD_CHARS
    # Any other object is rendered as JSON first: its size is unknown until then.
    return not isinstance(content, (int, float, bool, type(None)))


def _bare_notice(
    size: int,
    reference: Reference | None,
    budget: Budget,
    counter: TokenCounter,
    fetch_tool_name: str,
    *,
    unit: str = "char",
) -> str:
    """The shortest honest notice that fits `budget` (the last fallback)."""
    amount = plural(size, unit)
    candidates = []
    if reference is not None:
        candidates += [
            f"[Tool result omitted: {amount}; it could not be shown within "
            f"{budget.tokens:,} tokens. Full result: {reference}. Read it with "
            f"{fetch_call(reference.with_lines(1, 100), tool_name=fetch_tool_name)}.]",
            f"[Tool result omitted ({amount}). Full result: {reference}.]",
        ]
    candidates += [
        f"[Tool result omitted: {amount}; it could not be shown within {budget.tokens:,} "
        "tokens and was not saved.]",
        f"[Tool result omitted: {amount}.]",
        "[Tool result omitted.]",
        "[omitted]",
    ]
    for text in candidates:
        if len(text) <= budget.chars and counter.count(text) <= budget.tokens:
            return text
    return ""
