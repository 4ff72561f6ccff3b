r"""How one tool output is shown: whole (fenced), or by which view; planned, then rendered.

Both steps are pure (no I/O): the pipeline stores the result between them.

The rule, stated once:

1. one-shot sources (a SQLAlchemy `Result`, generators, iterators, also inside content
   blocks) are read once, first, so that measuring them does not consume them;
2. a text, or any object as its JSON text, that fits the budget as shown (inside its fence
   unless fencing is off) is shown whole; a content-block list likewise, block by block;
3. bytes (also bytes LangChain stringified as `b'...'`) go to the layer's binary view, or
   become a notice when it has none; a block list that does not fit goes to the block-list
   view; anything else to the view the tool declares or the views' sniffing picks;
4. a view that cannot prepare the output gives way to the text view (the notice, for bytes).

Example:
    ```python
    from langchain_result_layer._planning import Planner
    from langchain_result_layer.config import ToolPolicy
    from langchain_result_layer.core.budget import Budget
    from langchain_result_layer.views.registry import ViewRegistry

    planner = Planner(counter=counter, image_tokens=1_600, turn_tokens=None,
                      views=ViewRegistry.builtin())
    plan = planner.plan("x\n" * 100_000, ToolPolicy(), Budget(tokens=500, chars=4_000))
    assert not plan.fits and plan.view is not None and plan.view.kind == "text"
    ```
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from langchain_result_layer.config import ToolPolicy
from langchain_result_layer.core.budget import Budget
from langchain_result_layer.core.jsonable import materialize, to_json_text
from langchain_result_layer.core.render import Fence
from langchain_result_layer.core.tokens import TokenCounter, count_within
from langchain_result_layer.outcome import ProcessOutcome
from langchain_result_layer.stores.base import RecordMeta
from langchain_result_layer.summarize import SummaryOutcome
from langchain_result_layer.views import materialize_rows
from langchain_result_layer.views._rendering import render_with_notes, whole_result_view
from langchain_result_layer.views.base import Prepared, ResultViewBuilder, ViewContext
from langchain_result_layer.views.binary import BINARY_NOTICE, BinaryView, bytes_from_repr
from langchain_result_layer.views.block_list import (
    BLOCK_LIST,
    FENCE_CHARS,
    BlockListView,
    plan_block_list,
)
from langchain_result_layer.views.blocks import (
    BlockPlan,
    block_text,
    content_chars,
    is_content_block_list,
)
from langchain_result_layer.views.json_view import JsonView
from langchain_result_layer.views.registry import ViewRegistry
from langchain_result_layer.views.text import TextView

__all__ = ["Planner", "ResultPlan"]

logger = logging.getLogger(__name__)

_TEXT = TextView()
_json = to_json_text


@dataclass(slots=True)
class ResultPlan:
    """How one tool output is shown (made by `Planner.plan`).

    Example:
        ```python
        plan = ResultPlan(policy=ToolPolicy(), budget=Budget(tokens=9, chars=9), payload="hi")
        assert plan.shape_kind == "text" and not plan.fits
        ```
    """

    policy: ToolPolicy
    """The tool's policy (with the kind a re-render declares)."""
    budget: Budget
    """The result's budget (a block list's media allowance included)."""
    payload: Any
    """The output as it is shown and stored (one-shot sources read; bytes as `bytes`)."""
    tool_name: str | None = None
    """The tool that produced it."""
    is_error: bool = False
    """Whether the tool reported an error."""
    fence: bool = True
    """Whether the result is fenced (the layer's and the tool's setting)."""
    fits: bool = False
    """Whether it is shown whole."""
    shown: Any = None
    """What the model sees of a result that fits (the fenced text; the payload unfenced)."""
    tokens: int | None = None
    """Tokens of `shown`, when counted (results that fit)."""
    view: ResultViewBuilder | None = None
    """The view that renders it (results that do not fit)."""
    prepared: Prepared | None = None
    """The view's `prepare` output."""
    blocks: BlockPlan | None = None
    """The plan of a content-block list."""
    binary: bool = False
    """Whether the output is bytes."""

    @property
    def shape_kind(self) -> str:
        """The kind recorded for a result shown whole: text, a block list, or JSON."""
        if isinstance(self.payload, str):
            return TextView.kind
        return BlockListView.kind if self.blocks is not None else JsonView.kind

    def stored_form(self) -> tuple[str | bytes, str]:
        """What is stored of the result, and under which kind.

        Returns:
            The view's raw form and kind; for a result shown whole, its text (JSON text for
            objects) and `shape_kind`.
        """
        if self.prepared is not None and self.view is not None:
            return self.prepared.raw, self.view.kind
        payload = self.payload
        return (payload if isinstance(payload, str) else to_json_text(payload)), self.shape_kind

    def cut_block_texts(self) -> dict[int, str]:
        """Text blocks that will be cut, by index: each is stored on its own.

        A cut block's view names line ranges of that block's text; storing it alone makes
        those ranges fetchable.

        Returns:
            The texts (none when the result is not a block list, or fits).
        """
        if self.blocks is None or self.fits:
            return {}
        return {i: block_text(self.payload[i]) or "" for i in self.blocks.cut}

    def text_to_summarise(self) -> str | None:
        """The raw text a model-written summary may be made of (cut text results only).

        Returns:
            The text, or `None` when the result fits, is a block list or bytes, or its
            policy says `summarize=False`.
        """
        if self.fits or self.blocks is not None or self.policy.summarize is False:
            return None
        raw = self.prepared.raw if self.prepared is not None else None
        return raw if isinstance(raw, str) and self.view is not None else None

    def render(
        self, ctx: ViewContext, meta: RecordMeta | None, summary: SummaryOutcome | None
    ) -> ProcessOutcome:
        """Render the result as planned, and make the record of it.

        Args:
            ctx: The rendering context (budget, reference or store note, parts, notes).
            meta: The stored record, when stored.
            summary: The model-written summary, when one was made.

        Returns:
            The outcome: the whole result when it fits, else its view within the budget.
        """
        ref = ctx.reference
        if self.fits:
            payload = self.payload
            text = payload if isinstance(payload, str) else to_json_text(payload)
            kind = meta.kind if meta is not None else self.shape_kind
            whole = whole_result_view(
                text, payload, self.shown, kind=kind, tokens=self.tokens, ctx=ctx
            )
            return ProcessOutcome(self.shown, whole, True, meta, ref, fenced=self.fence)
        assert self.view is not None
        assert self.prepared is not None
        rendered, tokens, shown_summary = render_with_notes(
            self.view, self.prepared, ctx, summary=summary.block() if summary else ""
        )
        view = rendered.view
        if summary is not None:
            summary.record_in(view, shown=shown_summary)
        view.record_id, view.stored = (meta.record_id if meta else None), meta is not None
        view.store_error = ctx.store_note if meta is None else None
        view.tool_name, view.status = self.tool_name, "error" if self.is_error else "success"
        view.counter = view.counter or ctx.counter.name
        view.budget_tokens, view.budget_chars = self.budget.tokens, self.budget.chars
        view.shown_chars, view.shown_tokens = content_chars(rendered.content), tokens
        if ref is not None and "all" not in view.references:
            view.references["all"] = str(ref)
        return ProcessOutcome(rendered.content, view, False, meta, ref)


@dataclass(frozen=True, slots=True)
class Planner:
    """Plans tool outputs for one pipeline's counter, media cost, turn budget and views.

    Example:
        ```python
        planner = Planner(counter=counter, image_tokens=1_600, turn_tokens=None,
                          views=ViewRegistry.builtin())
        assert planner.plan("hi", ToolPolicy(), Budget(tokens=500, chars=4_000)).fits
        ```
    """

    counter: TokenCounter
    """Token counter the budget is measured with."""
    image_tokens: int
    """Fixed token cost of one media block."""
    turn_tokens: int | None
    """Tokens all results of one model turn may take together (`None`: no limit)."""
    views: ViewRegistry
    """The views to choose from."""

    def plan(
        self,
        content: Any,
        policy: ToolPolicy,
        budget: Budget,
        *,
        tool_name: str | None = None,
        is_error: bool = False,
        fence: bool = True,
        siblings: int = 1,
        fixed_budget: bool = False,
    ) -> ResultPlan:
        """Decide how `content` is shown.

        Args:
            content: The tool output.
            policy: The tool's policy.
            budget: The result's budget.
            tool_name: The tool that produced it.
            is_error: Whether the tool reported an error.
            fence: Whether the result is fenced.
            siblings: Results of the same model turn (they share the turn budget).
            fixed_budget: Whether the caller gave `budget` (no media allowance on top).

        Returns:
            The plan.
        """
        plan = ResultPlan(
            policy=policy,
            budget=budget,
            payload=content,
            tool_name=tool_name,
            is_error=is_error,
            fence=fence,
        )
        if not isinstance(content, (str, bytes, bytearray, memoryview)):
            content = plan.payload = materialize(materialize_rows(content))
        if isinstance(content, str):
            if self._fits_whole(plan, content, content):
                return plan
            data = bytes_from_repr(content)  # LangChain may have stringified the tool's bytes
            if data is not None:
                content = data
        if isinstance(content, (bytes, bytearray, memoryview)):
            plan.payload, plan.binary = bytes(content), True
        elif is_content_block_list(content) and policy.kind is None:
            self._plan_blocks(plan, content, siblings=siblings, fixed_budget=fixed_budget)
            return plan
        elif not isinstance(content, str) and self._fits_whole(plan, _json(content), content):
            return plan
        plan.view, plan.prepared = self._prepare(plan)
        return plan

    def _fits_whole(self, plan: ResultPlan, text: str, original: Any) -> bool:
        """Whether the whole result, as shown (fenced unless fencing is off), fits the budget."""
        budget = plan.budget
        shown: Any = original
        if plan.fence:
            if len(text) + FENCE_CHARS > budget.chars:
                return False
            shown = text = Fence.for_content(text).wrap(text)
        if len(text) > budget.chars:
            return False
        plan.tokens = count_within(self.counter, text, budget.tokens)
        if plan.tokens is None:
            return False
        plan.fits, plan.shown = True, shown
        return True

    def _plan_blocks(
        self, plan: ResultPlan, blocks: list[Any], *, siblings: int, fixed_budget: bool
    ) -> None:
        turn = None if fixed_budget or self.turn_tokens is None else self.turn_tokens
        laid = plan_block_list(
            blocks,
            plan.budget,
            counter=self.counter,
            image_tokens=self.image_tokens,
            fence=plan.fence,
            turn_share=None if turn is None else turn // max(1, siblings),
        )
        plan.budget, plan.blocks, plan.fits, plan.tokens = (
            laid.budget,
            laid.blocks,
            laid.fits,
            laid.tokens,
        )
        if laid.fits:
            plan.shown = laid.shown
            return
        view = self.views.get(BlockListView.kind, BLOCK_LIST)
        plan.view = view
        if isinstance(view, BlockListView):
            plan.prepared = view.prepare_planned(blocks, laid.blocks)
        else:
            plan.prepared = view.prepare(blocks)

    def _prepare(self, plan: ResultPlan) -> tuple[ResultViewBuilder, Prepared]:
        kind = plan.policy.kind
        try:
            if plan.binary and kind is None and BinaryView.kind not in self.views:
                view: ResultViewBuilder = BINARY_NOTICE  # the layer has no binary view
            else:
                view = self.views.choose(plan.payload, kind=kind)
            return view, view.prepare(plan.payload)
        except Exception:  # a broken or unknown view falls back to text (bytes: the notice)
            logger.exception(
                "view preparation failed for tool %r; using the text view", plan.tool_name
            )
            view = BINARY_NOTICE if plan.binary else _TEXT
            return view, view.prepare(plan.payload)
