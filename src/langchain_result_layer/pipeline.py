r"""The per-result pipeline: plan how a result is shown, store the raw result, render it.

It knows nothing about LangChain messages: adapters hand it a result's content, status and
tool name, and get back what the model should see plus the record of it. It only
orchestrates: `_planning` decides and renders (through the views, `views._rendering` holds the
fallbacks), the store keeps the raw result. Every decision is made once, in
`ResultPipeline._steps`, which asks for I/O (store writes, a summary) by yielding it;
`process` and `aprocess` are thin drivers that do the I/O (`_pipeline_io`).

Guarantees:

- every result is fenced as untrusted data, small ones too (a result within budget is shown
  whole inside the fence); with fencing off (`ResultLayer(fence_results=False)` or
  `ToolPolicy(fence=False)`) a result that fits passes through unchanged (same object);
- the rendered content always fits the budget (tokens under the configured counter, and
  characters); a view that fails or overshoots falls back to the text view, then to a notice;
- bytes are stored as they are and shown by the binary view (a notice when the layer has
  none); other objects are rendered as deterministic JSON;
- a store that is down or full never loses the view: the model is told that the full result
  could not be saved, and why, whatever the shape of the result;
- on the async path, large results are planned and rendered in a worker thread.

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

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from langchain_result_layer._pipeline_io import (
    NOT_SAVED,
    THREAD_THRESHOLD_CHARS,
    ProcessOptions,
    Steps,
    SummaryRequest,
    is_heavy,
    store_steps,
)
from langchain_result_layer._planning import Planner, ResultPlan
from langchain_result_layer._steps import advance, advance_here, advance_in_thread
from langchain_result_layer.config import ToolPolicy
from langchain_result_layer.core.budget import MIN_RESULT_CHARS, MIN_RESULT_TOKENS, Budget
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.render import DEFAULT_FETCH_TOOL_NAME
from langchain_result_layer.core.token_memo import LineMemoCounter
from langchain_result_layer.core.tokens import TokenCounter
from langchain_result_layer.outcome import META_KEY, ProcessOutcome, headline_of
from langchain_result_layer.stores.base import Principal, RecordMeta, ResultStore
from langchain_result_layer.summarize import ResultSummarizer, SummaryAbout, SummaryOutcome
from langchain_result_layer.views.base import IMAGE_TOKENS, ViewContext
from langchain_result_layer.views.registry import SHAPE_KINDS, ViewRegistry, registered_views

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "META_KEY",
    "THREAD_THRESHOLD_CHARS",
    "ProcessOptions",
    "ProcessOutcome",
    "ResultPipeline",
    "headline_of",
]

logger = logging.getLogger(__name__)


@dataclass(slots=True, kw_only=True, eq=False)
class ResultPipeline:
    """Processes tool outputs: view choice, storage, rendering within the budget.

    Example:
        ```python
        from langchain_result_layer.core.budget import Budget

        pipeline = ResultPipeline(budget=Budget(tokens=2_000, chars=8_000), counter=counter,
                                  store=store)
        assert pipeline.fences("read_log") and pipeline.policy_for("read_log").kind is None
        ```
    """

    budget: Budget
    """Default per-result budget."""
    counter: TokenCounter
    """Token counter the budget is measured with."""
    store: ResultStore | None
    """Where raw results go (`None`: not stored; notices say so)."""
    policies: Mapping[str, ToolPolicy] = field(default_factory=dict)
    """Per-tool overrides, by tool name (`"*"` sets the default policy); kept as a copy."""
    fetch_tool_name: str = DEFAULT_FETCH_TOOL_NAME
    """Name of the fetch tool quoted in notices."""
    image_tokens: int = IMAGE_TOKENS
    """Fixed token cost of one media block."""
    store_small_results: bool = True
    """Also store results that pass through, so that the budget guard can always restore what
    it clears."""
    ttl_seconds: float | None = None
    """Default lifetime of stored results (`None`: the store's default)."""
    summarizer: ResultSummarizer | None = None
    """Optional model-written summaries placed above large views."""
    turn_tokens: int | None = None
    """Tokens that all results of one model turn's parallel tool calls may take together; each
    of `n` parallel results gets at most `turn_tokens / n` (`None`: no turn limit)."""
    fence_results: bool = True
    """Fence every result as untrusted data, small ones too (a tool's `ToolPolicy(fence=...)`
    overrides it); `False` passes results that fit through unchanged."""
    views: ViewRegistry | None = None
    """The views to choose from (`None`: the process-wide default registry, as it is at each
    call; `view_registry()` resolves it)."""

    def __post_init__(self) -> None:
        """Keep a copy of the policies (the caller's mapping may change)."""
        self.policies = dict(self.policies or {})

    def view_registry(self) -> ViewRegistry:
        """The views results are rendered with (this pipeline's, else the process default)."""
        return self.views if self.views is not None else registered_views()

    def using(self, store: ResultStore | None) -> ResultPipeline:
        """This pipeline writing to `store` (a graph's store, for one run); `self` if the same."""
        return self if store is self.store else replace(self, store=store)

    def fences(self, tool_name: str | None) -> bool:
        """Whether results of `tool_name` are fenced (its policy, else the layer's setting)."""
        policy = self.policy_for(tool_name)
        return self.fence_results if policy.fence is None else policy.fence

    def policy_for(self, tool_name: str | None) -> ToolPolicy:
        """The policy of a tool (the default policy when none is configured)."""
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

    # ------------------------------------------------------------------ the steps (no I/O)

    def _plan(
        self,
        content: Any,
        *,
        tool_name: str | None,
        status: str,
        siblings: int = 1,
        budget: Budget | None = None,
        kind: str | None = None,
    ) -> ResultPlan | None:
        policy = self.policy_for(tool_name)
        if not policy.enabled:
            return None
        views = self.view_registry()
        if kind is not None and kind != policy.kind and kind in views:
            policy = replace(policy, kind=kind)
        planner = Planner(
            counter=self.counter,
            image_tokens=self.image_tokens,
            turn_tokens=self.turn_tokens,
            views=views,
        )
        return planner.plan(
            content,
            policy,
            budget or self.budget_for(tool_name, siblings=siblings),
            tool_name=tool_name,
            is_error=status == "error",
            fence=self.fence_results if policy.fence is None else policy.fence,
            siblings=siblings,
            fixed_budget=budget is not None,
        )

    def _steps(self, content: Any, options: ProcessOptions) -> Steps:
        """Plan, store (yielding each write), summarise (yielding the request), render."""
        tool_name = options.get("tool_name")
        plan = self._plan(
            content,
            tool_name=tool_name,
            status=options.get("status", "success"),
            siblings=options.get("siblings", 1),
            budget=options.get("budget"),
        )
        if plan is None:
            return None
        meta, note, parts = yield from store_steps(
            plan,
            self.store,
            principal=options.get("principal") or Principal(),
            tool_call_id=options.get("tool_call_id"),
            ttl_seconds=plan.policy.ttl_seconds or self.ttl_seconds,
            store_small_results=self.store_small_results,
        )
        summary: SummaryOutcome | None = None
        raw = plan.text_to_summarise()
        if raw is not None and plan.view is not None and self.summarizer is not None:
            kind, ref = plan.view.kind, _reference(meta)
            if plan.policy.summarize is True or self.summarizer.wants(raw=raw, kind=kind):
                about: SummaryAbout = {"tool_name": tool_name, "kind": kind, "reference": ref}
                summary = yield SummaryRequest(self.summarizer, raw, plan.budget.tokens, about)
        return self._render(plan, meta, note, parts, summary)

    def _render(
        self,
        plan: ResultPlan,
        meta: RecordMeta | None,
        note: str | None,
        parts: Mapping[int, RecordMeta] | None = None,
        summary: SummaryOutcome | None = None,
    ) -> ProcessOutcome:
        ref = _reference(meta)
        part_refs = {i: Reference(p.record_id, kind=p.kind) for i, p in (parts or {}).items()}
        ctx = ViewContext(
            budget=plan.budget,
            counter=LineMemoCounter(self.counter),  # for this rendering only
            tool_name=plan.tool_name,
            is_error=plan.is_error,
            reference=ref,
            store_note=note,
            fetch_tool_name=self.fetch_tool_name,
            head_fraction=plan.policy.head_fraction,
            options=plan.policy.view_options,
            image_tokens=self.image_tokens,
            fence_parts=plan.fence,
            part_references=part_refs,
            cap_notes=meta.cap_notes() if meta is not None else (),
            choose=self.view_registry().choose if plan.policy.kind is None else None,
        )
        return plan.render(ctx, meta, summary)

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
        """
        kind = record.kind if record is not None else None
        plan = self._plan(
            content,
            tool_name=tool_name,
            status=status,
            budget=budget,
            kind=kind if kind not in SHAPE_KINDS else None,
        )
        if plan is None:
            return None
        return self._render(plan, record, None if record is not None else NOT_SAVED)

    # ------------------------------------------------------------------ the drivers (I/O)

    def process(self, content: Any, **options: Unpack[ProcessOptions]) -> ProcessOutcome | None:
        r"""Process one tool output synchronously.

        Args:
            content: The tool output (message content or the tool's raw return value).
            **options: The tool, status, tool call, owner, parallel results and budget
                (`ProcessOptions`).

        Returns:
            The outcome, or `None` when the tool's policy disables processing.

        Example:
            ```python
            pipeline = ResultPipeline(budget=Budget(tokens=500, chars=4_000), counter=counter,
                                      store=store)
            outcome = pipeline.process("error: boom\n" * 5_000, tool_name="run", status="error")
            assert outcome is not None and outcome.view.stored and outcome.view.truncated
            ```
        """
        steps = self._steps(content, options)
        done, step = advance(steps, None)
        while not done:
            done, step = advance(steps, step.run())
        outcome: ProcessOutcome | None = step
        return outcome

    async def aprocess(
        self, content: Any, **options: Unpack[ProcessOptions]
    ) -> ProcessOutcome | None:
        r"""Async twin of `process` (same arguments and outcome).

        On large results the steps run in a worker thread, so the event loop is never blocked.

        Example:
            ```python
            pipeline = ResultPipeline(budget=Budget(tokens=500, chars=4_000), counter=counter,
                                      store=store)
            outcome = await pipeline.aprocess("x\n" * 100_000, tool_name="shell")
            assert outcome is not None and outcome.view.stored
            ```
        """
        steps = self._steps(content, options)
        step_on = advance_in_thread if is_heavy(content) else advance_here
        done, step = await step_on(steps, None)
        while not done:
            done, step = await step_on(steps, await step.arun())
        outcome: ProcessOutcome | None = step
        return outcome


def _reference(meta: RecordMeta | None) -> Reference | None:
    return Reference(record_id=meta.record_id, kind=meta.kind) if meta is not None else None
