"""The per-result pipeline: choose a view, store the raw result, render within budget.

This module knows nothing about LangChain messages; adapters hand it the content, status and
tool name of a result and get back what the model should see plus the record of it.

Guarantees:

- a result within budget passes through unchanged (same object, byte-identical);
- the rendered content always fits the budget (tokens under the configured counter, and
  characters); a view that fails or overshoots falls back to the text view, then to a bare
  notice;
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
    outcome = pipeline.process("x\\n" * 100_000, tool_name="shell")
    assert outcome is not None and outcome.view.truncated
    ```
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_result_layer.config import ToolPolicy
from langchain_result_layer.core.budget import MIN_RESULT_CHARS, MIN_RESULT_TOKENS, Budget
from langchain_result_layer.core.jsonable import to_json_text
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.render import DEFAULT_FETCH_TOOL_NAME, plural
from langchain_result_layer.core.tokens import TokenCounter
from langchain_result_layer.core.view import ResultView
from langchain_result_layer.errors import StoreQuotaExceededError
from langchain_result_layer.stores.base import Principal, RecordMeta, ResultStore
from langchain_result_layer.views import ViewContext, choose_view
from langchain_result_layer.views.base import Prepared, Rendered, ResultViewBuilder
from langchain_result_layer.views.blocks import (
    BlockPlan,
    block_text,
    content_tokens,
    dropped_notice,
    is_content_block_list,
    nontext_notice,
    plan_blocks,
)
from langchain_result_layer.views.text import TextView, utf8_length

__all__ = ["META_KEY", "ProcessOutcome", "ResultPipeline", "headline_of"]

logger = logging.getLogger(__name__)

META_KEY = "result_layer"
"""Key of the layer's marker in `ToolMessage.response_metadata`."""

_THREAD_THRESHOLD_CHARS = 256_000
_TEXT_FALLBACK = TextView()


@dataclass(slots=True)
class ProcessOutcome:
    """The result of processing one tool output.

    Attributes:
        content: What the model sees (the original object when it passed through).
        view: The record of the view.
        passed_through: Whether the content is the original, unchanged.
        record: The stored record's metadata, when stored.
        reference: Reference to the stored raw result, when stored.

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

    def metadata(self) -> dict[str, Any]:
        """The JSON-ready marker stored in `response_metadata["result_layer"]`."""
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
    own = view.summary.get("headline") if isinstance(view.summary, dict) else None
    if isinstance(own, str) and own:
        return own[:300]
    facts = f"{view.kind}, {plural(view.original_chars, 'char')}, {plural(view.original_lines, 'line')}"
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
    view: ResultViewBuilder | None
    prepared: Prepared | None
    fits: bool
    blocks: BlockPlan | None
    payload: Any
    is_error: bool
    tool_name: str | None


class ResultPipeline:
    """Processes tool outputs: view choice, storage, rendering within the budget.

    Args:
        budget: Default per-result budget.
        counter: Token counter the budget is measured with.
        store: Where raw results go (`None`: not stored; notices say so).
        policies: Per-tool overrides, by tool name.
        fetch_tool_name: Name of the fetch tool quoted in notices.
        image_tokens: Fixed token cost of one non-text block.
        store_small_results: Also store results that pass through, so that the budget guard
            can always restore what it clears.
        ttl_seconds: Default lifetime of stored results (`None`: the store's default).

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
    ) -> None:
        self.budget = budget
        self.counter = counter
        self.store = store
        self.policies = dict(policies or {})
        self.fetch_tool_name = fetch_tool_name
        self.image_tokens = image_tokens
        self.store_small_results = store_small_results
        self.ttl_seconds = ttl_seconds

    # ------------------------------------------------------------------ planning (pure)

    def policy_for(self, tool_name: str | None) -> ToolPolicy:
        """The policy of a tool (the default policy when none is configured).

        Args:
            tool_name: The tool.

        Returns:
            Its policy.
        """
        if tool_name is not None and tool_name in self.policies:
            return self.policies[tool_name]
        return self.policies.get("*", ToolPolicy())

    def budget_for(self, tool_name: str | None) -> Budget:
        """The per-result budget of a tool (its policy's caps, else the layer's).

        Args:
            tool_name: The tool.

        Returns:
            The budget.
        """
        policy = self.policy_for(tool_name)
        tokens = policy.max_tokens if policy.max_tokens is not None else self.budget.tokens
        chars = policy.max_chars if policy.max_chars is not None else self.budget.chars
        return Budget(tokens=max(MIN_RESULT_TOKENS, tokens), chars=max(MIN_RESULT_CHARS, chars))

    def _fits_text(self, text: str, budget: Budget) -> bool:
        return len(text) <= budget.chars and self.counter.count(text) <= budget.tokens

    def _plan(self, content: Any, *, tool_name: str | None, status: str) -> _Plan | None:
        policy = self.policy_for(tool_name)
        if not policy.enabled:
            return None
        budget = self.budget_for(tool_name)
        is_error = status == "error"
        base = {"policy": policy, "budget": budget, "is_error": is_error, "tool_name": tool_name}
        if isinstance(content, str):
            if self._fits_text(content, budget):
                return _Plan(view=None, prepared=None, fits=True, blocks=None, payload=content, **base)
        elif is_content_block_list(content) and policy.kind is None:
            blocks = plan_blocks(
                content, budget=budget, counter=self.counter, image_tokens=self.image_tokens
            )
            return _Plan(view=None, prepared=None, fits=blocks.fits, blocks=blocks, payload=content, **base)
        elif not isinstance(content, (bytes, bytearray, memoryview)):
            as_text = to_json_text(content)
            if policy.kind is None and self._fits_text(as_text, budget):
                return _Plan(view=None, prepared=None, fits=True, blocks=None, payload=content, **base)
        payload = bytes(content) if isinstance(content, (bytearray, memoryview)) else content
        try:
            view = choose_view(payload, kind=policy.kind)
            prepared = view.prepare(payload)
        except Exception:  # a broken view falls back to text
            logger.exception("view preparation failed for tool %r; using the text view", tool_name)
            view = _TEXT_FALLBACK
            prepared = view.prepare(payload)
        return _Plan(view=view, prepared=prepared, fits=False, blocks=None, payload=payload, **base)

    # ------------------------------------------------------------------ storing

    def _store_args(self, plan: _Plan) -> tuple[str | bytes, str]:
        if plan.prepared is not None:
            return plan.prepared.raw, (plan.view.kind if plan.view else "text")
        payload = plan.payload
        if isinstance(payload, str):
            return payload, "text"
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
        return f"The full result could not be saved ({why[:200]}); what is omitted cannot be fetched."

    def _put(
        self, plan: _Plan, principal: Principal, tool_call_id: str | None
    ) -> tuple[RecordMeta | None, str | None]:
        if not self._should_store(plan):
            return None, None if self.store is not None else "The full result was not saved."
        raw, kind = self._store_args(plan)
        assert self.store is not None
        try:
            meta = self.store.put(
                raw,
                principal=principal,
                kind=kind,
                tool_name=plan.tool_name,
                tool_call_id=tool_call_id,
                ttl_seconds=plan.policy.ttl_seconds or self.ttl_seconds,
            )
        except Exception as exc:  # noqa: BLE001 - the store must never break the agent
            logger.warning("could not store result of %r: %s", plan.tool_name, exc)
            return None, self._store_note(exc)
        return meta, None

    async def _aput(
        self, plan: _Plan, principal: Principal, tool_call_id: str | None
    ) -> tuple[RecordMeta | None, str | None]:
        if not self._should_store(plan):
            return None, None if self.store is not None else "The full result was not saved."
        raw, kind = self._store_args(plan)
        assert self.store is not None
        try:
            meta = await self.store.aput(
                raw,
                principal=principal,
                kind=kind,
                tool_name=plan.tool_name,
                tool_call_id=tool_call_id,
                ttl_seconds=plan.policy.ttl_seconds or self.ttl_seconds,
            )
        except Exception as exc:  # noqa: BLE001 - the store must never break the agent
            logger.warning("could not store result of %r: %s", plan.tool_name, exc)
            return None, self._store_note(exc)
        return meta, None

    # ------------------------------------------------------------------ rendering (pure)

    def _context(self, plan: _Plan, budget: Budget, ref: Reference | None, note: str | None) -> ViewContext:
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

    def _fits(self, content: Any, budget: Budget) -> bool:
        if isinstance(content, str):
            return len(content) <= budget.chars and self.counter.count(content) <= budget.tokens
        tokens = content_tokens(content, self.counter, image_tokens=self.image_tokens)
        chars = sum(len(t) for t in (block_text(b) for b in content) if t is not None)
        return tokens <= budget.tokens and chars <= budget.chars

    def _render_view(
        self, view: ResultViewBuilder, prepared: Prepared, ctx: ViewContext
    ) -> Rendered:
        try:
            rendered = view.render(prepared, ctx)
            if self._fits(rendered.content, ctx.budget):
                return rendered
            logger.warning("view %r overshot its budget; using the text view", view.kind)
        except Exception:
            logger.exception("view %r failed; using the text view", view.kind)
        if view is not _TEXT_FALLBACK:
            text_prepared = prepared if isinstance(prepared.raw, str) else _TEXT_FALLBACK.prepare(
                prepared.raw.decode("utf-8", "replace") if isinstance(prepared.raw, bytes) else prepared.raw
            )
            rendered = _TEXT_FALLBACK.render(text_prepared, ctx)
            if self._fits(rendered.content, ctx.budget):
                return rendered
        msg = f"[Tool result omitted: it could not be shown within {ctx.budget.tokens:,} tokens.]"
        if ctx.reference is not None:
            msg = msg[:-1] + f" Full result: {ctx.reference}.]"
        return Rendered(content=msg[: ctx.budget.chars], view=ResultView(kind=view.kind, truncated=True))

    def _render(self, plan: _Plan, meta: RecordMeta | None, note: str | None) -> ProcessOutcome:
        ref = Reference(record_id=meta.record_id, kind=meta.kind) if meta is not None else None
        if plan.fits:
            view = self._passthrough_view(plan, meta)
            return ProcessOutcome(
                content=plan.payload, view=view, passed_through=True, record=meta, reference=ref
            )
        if plan.blocks is not None:
            return self._render_blocks(plan, meta, ref, note)
        assert plan.view is not None and plan.prepared is not None
        ctx = self._context(plan, plan.budget, ref, note)
        rendered = self._render_view(plan.view, plan.prepared, ctx)
        view = rendered.view
        view.record_id = meta.record_id if meta else None
        view.stored = meta is not None
        view.store_error = note if meta is None else None
        view.tool_name = plan.tool_name
        view.status = "error" if plan.is_error else "success"
        if not view.counter:
            view.counter = self.counter.name
        view.budget_tokens, view.budget_chars = plan.budget.tokens, plan.budget.chars
        if isinstance(rendered.content, str):
            view.shown_chars = len(rendered.content)
        view.shown_tokens = content_tokens(
            rendered.content, self.counter, image_tokens=self.image_tokens
        )
        return ProcessOutcome(
            content=rendered.content, view=view, passed_through=False, record=meta, reference=ref
        )

    def _passthrough_view(self, plan: _Plan, meta: RecordMeta | None) -> ResultView:
        payload = plan.payload
        if isinstance(payload, str):
            chars, lines = len(payload), payload.count("\n") + (0 if payload.endswith("\n") or not payload else 1)
            tokens = self.counter.count(payload)
            nbytes = utf8_length(payload)
            kind = "text"
        else:
            text = to_json_text(payload)
            chars, lines = len(text), text.count("\n") + 1
            tokens = content_tokens(payload, self.counter, image_tokens=self.image_tokens)
            nbytes = utf8_length(text)
            kind = "blocks" if plan.blocks is not None else "json"
        return ResultView(
            kind=meta.kind if meta else kind,
            total=lines,
            unit="lines",
            shown=lines,
            original_chars=chars,
            original_lines=lines,
            original_bytes=nbytes,
            shown_chars=chars,
            shown_tokens=tokens,
            budget_tokens=plan.budget.tokens,
            budget_chars=plan.budget.chars,
            counter=self.counter.name,
            record_id=meta.record_id if meta else None,
            stored=meta is not None,
            tool_name=plan.tool_name,
            status="error" if plan.is_error else "success",
        )

    def _render_blocks(
        self, plan: _Plan, meta: RecordMeta | None, ref: Reference | None, note: str | None
    ) -> ProcessOutcome:
        blocks: list[Any] = list(plan.payload)
        bplan = plan.blocks
        assert bplan is not None
        out: list[Any] = []
        items: list[dict[str, Any]] = []
        ref_text = str(ref) if ref else None
        dropped = set(bplan.drop_text)
        for i, block in enumerate(blocks):
            if i in dropped:
                continue
            if i in bplan.replace_nontext:
                out.append({"type": "text", "text": nontext_notice(block, ref_text)})
                items.append({"type": "block", "index": i, "action": "replaced"})
            elif i in bplan.cut:
                text = block_text(block) or ""
                sub_budget = bplan.cut[i]
                ctx = self._context(plan, sub_budget, ref, note)
                sub_view = choose_view(text) if plan.policy.kind is None else _TEXT_FALLBACK
                rendered = self._render_view(sub_view, sub_view.prepare(text), ctx)
                out.append({"type": "text", "text": rendered.content})
                items.append(
                    {"type": "block", "index": i, "action": "cut", "view": rendered.view.to_dict()}
                )
            else:
                out.append(block)
                items.append({"type": "block", "index": i, "action": "kept"})
        if dropped:
            chars = sum(len(block_text(blocks[i]) or "") for i in dropped)
            out.append({"type": "text", "text": dropped_notice(len(dropped), chars, ref_text)})
        # Line ranges inside cut blocks refer to each block's own text; the whole list is
        # stored as JSON under `ref`.
        total_text = sum(len(block_text(b) or "") for b in blocks)
        view = ResultView(
            kind="blocks",
            summary={
                "blocks": len(blocks),
                "text_blocks": sum(1 for b in blocks if block_text(b) is not None),
                "cut": sorted(bplan.cut),
                "dropped": sorted(dropped),
                "replaced": list(bplan.replace_nontext),
            },
            items=items,
            total=len(blocks),
            unit="blocks",
            shown=len(blocks) - len(dropped),
            references={"all": ref_text} if ref_text else {},
            truncated=True,
            original_chars=total_text,
            original_lines=sum((block_text(b) or "").count("\n") + 1 for b in blocks),
            budget_tokens=plan.budget.tokens,
            budget_chars=plan.budget.chars,
            counter=self.counter.name,
            record_id=meta.record_id if meta else None,
            stored=meta is not None,
            store_error=note if meta is None else None,
            tool_name=plan.tool_name,
            status="error" if plan.is_error else "success",
        )
        view.shown_tokens = content_tokens(out, self.counter, image_tokens=self.image_tokens)
        view.shown_chars = sum(len(block_text(b) or "") for b in out)
        return ProcessOutcome(content=out, view=view, passed_through=False, record=meta, reference=ref)

    # ------------------------------------------------------------------ entry points

    def process(
        self,
        content: Any,
        *,
        tool_name: str | None = None,
        status: str = "success",
        tool_call_id: str | None = None,
        principal: Principal | None = None,
    ) -> ProcessOutcome | None:
        """Process one tool output synchronously.

        Args:
            content: The tool output (message content or the tool's raw return value).
            tool_name: The tool's name (selects its policy).
            status: `success` or `error`.
            tool_call_id: The tool call's id, recorded with the stored result.
            principal: Owner of the stored result.

        Returns:
            The outcome, or `None` when the tool's policy disables processing.
        """
        plan = self._plan(content, tool_name=tool_name, status=status)
        if plan is None:
            return None
        meta, note = self._put(plan, principal or Principal(), tool_call_id)
        return self._render(plan, meta, note)

    async def aprocess(
        self,
        content: Any,
        *,
        tool_name: str | None = None,
        status: str = "success",
        tool_call_id: str | None = None,
        principal: Principal | None = None,
    ) -> ProcessOutcome | None:
        """Async twin of `process`; CPU-heavy steps on large results run in a thread.

        Args:
            content: The tool output.
            tool_name: The tool's name.
            status: `success` or `error`.
            tool_call_id: The tool call's id.
            principal: Owner of the stored result.

        Returns:
            The outcome, or `None` when the tool's policy disables processing.
        """
        heavy = _approx_size(content) > _THREAD_THRESHOLD_CHARS
        if heavy:
            plan = await asyncio.to_thread(self._plan, content, tool_name=tool_name, status=status)
        else:
            plan = self._plan(content, tool_name=tool_name, status=status)
        if plan is None:
            return None
        meta, note = await self._aput(plan, principal or Principal(), tool_call_id)
        if heavy:
            return await asyncio.to_thread(self._render, plan, meta, note)
        return self._render(plan, meta, note)


def _approx_size(content: Any) -> int:
    if isinstance(content, (str, bytes, bytearray)):
        return len(content)
    if isinstance(content, list):
        return sum(_approx_size(b) if isinstance(b, str) else len(str(b)) for b in content[:10_000])
    return 0
