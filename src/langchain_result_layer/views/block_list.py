"""The block-list view: a list of text, image and other content blocks within one budget.

A list that fits is shown whole (each text block fenced); otherwise `views.blocks` plans
which blocks stay, which are cut by the view their text calls for, and which are named in a
closing notice. Cut blocks stored on their own (`ViewContext.part_references`) get their own
references; a note on what the store could not keep goes last, as a text block.

Example:
    ```python
    from langchain_result_layer.core.budget import Budget
    from langchain_result_layer.views.block_list import BlockListView

    blocks = [{"type": "text", "text": "x " * 20_000}, {"type": "image", "base64": "AAAA"}]
    view = BlockListView()
    shown = view.render(view.prepare(blocks), ctx)
    assert shown.view.kind == "blocks" and shown.view.summary["cut"] == [0]
    ```
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from langchain_result_layer.core.budget import MIN_RESULT_CHARS, MIN_RESULT_TOKENS, Budget
from langchain_result_layer.core.jsonable import to_json_text
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.render import Fence
from langchain_result_layer.core.tokens import TokenCounter
from langchain_result_layer.core.view import ResultView
from langchain_result_layer.views._rendering import measure, render_or_fall_back
from langchain_result_layer.views.base import Prepared, Rendered, ResultViewBuilder, ViewContext
from langchain_result_layer.views.blocks import (
    BLOCK_OVERHEAD_TOKENS,
    FLOOR_TOKENS,
    BlockPlan,
    block_text,
    is_content_block_list,
    plan_blocks,
    render_blocks,
)
from langchain_result_layer.views.text import TextView

__all__ = [
    "BLOCK_LIST",
    "FENCE_CHARS",
    "FENCE_TOKENS",
    "BlockListPlan",
    "BlockListView",
    "fence_blocks",
    "media_allowance",
    "plan_block_list",
]

logger = logging.getLogger(__name__)

FENCE_CHARS = 96
"""Characters a fence adds around a text (open and close lines with their newlines)."""
FENCE_TOKENS = 32
"""Tokens reserved for one fence when planning (the final text is counted exactly)."""
_MEDIA_NOTICE_TOKENS = 64
"""Room `plan_blocks` keeps for its closing notice next to media blocks."""
_SHORT_NOTE_FLOOR = Budget(tokens=16, chars=48)
"""Room left for '[N blocks omitted.]' next to the short store note."""
_TEXT = TextView()


@dataclass(frozen=True, slots=True)
class _Blocks:
    """A prepared block list, with its plan when the pipeline made one."""

    blocks: list[Any]
    plan: BlockPlan | None = None


@dataclass(slots=True)
class BlockListPlan:
    """How a block list is shown, as `plan_block_list` decided.

    Example:
        ```python
        plan = BlockListPlan(budget=Budget(tokens=100, chars=400), blocks=BlockPlan(fits=True))
        assert plan.shown is None
        ```
    """

    budget: Budget
    """The list's budget (raised by the media allowance, when granted)."""
    blocks: BlockPlan
    """Which blocks stay, are cut or are dropped."""
    fits: bool = False
    """Whether the whole list, as shown, fits the budget."""
    shown: list[Any] | None = None
    """The list as shown when it fits (text blocks fenced, when fencing is on)."""
    tokens: int | None = None
    """Tokens of `shown` (or of the list, when counted)."""


def fence_blocks(blocks: list[Any], indices: Iterable[int]) -> list[Any]:
    """`blocks` with the text blocks at `indices` fenced (each with its own fence).

    Args:
        blocks: The content blocks.
        indices: Which ones to fence (media blocks among them are left alone).

    Returns:
        A new list; `blocks` is unchanged.

    Example:
        ```python
        shown = fence_blocks(["hi", {"type": "image", "base64": "AA"}], range(2))
        assert shown[0] != "hi" and "hi" in shown[0] and shown[1]["type"] == "image"
        ```
    """
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


def media_allowance(
    blocks: Sequence[Any], budget: Budget, *, image_tokens: int, turn_share: int | None
) -> int:
    """Tokens granted to media blocks on top of the per-result cap.

    An image costs a fixed `image_tokens` whatever the text budget, so a per-result cap
    below that cost must not drop every image: when the media do not fit the cap next to a
    floor for the text, they get their fixed cost on top of it (the text keeps its cap), as
    long as the result stays within its share of the turn budget. The guard still keeps the
    whole request under the window.

    Args:
        blocks: The content blocks.
        budget: The per-result budget (fence reserves taken off).
        image_tokens: Fixed cost of one media block.
        turn_share: This result's share of the turn budget (`None`: no turn limit).

    Returns:
        The extra tokens (0 when the media fit already, or not even the turn's share).

    Example:
        ```python
        blocks = [{"type": "image", "base64": "AA"}, "caption"]
        assert media_allowance(blocks, Budget(tokens=500, chars=1), image_tokens=1_600,
                               turn_share=64_000) == 1_604
        ```
    """
    media = sum(1 for b in blocks if block_text(b) is None)
    if not media or turn_share is None:
        return 0
    need = media * (image_tokens + BLOCK_OVERHEAD_TOKENS)
    # What the text needs next to them: a floor, the closing notice, their framing.
    text = FLOOR_TOKENS + _MEDIA_NOTICE_TOKENS + 2 * BLOCK_OVERHEAD_TOKENS
    if need + text <= budget.tokens or budget.tokens + need > turn_share:
        return 0
    return need


def plan_block_list(
    blocks: list[Any],
    budget: Budget,
    *,
    counter: TokenCounter,
    image_tokens: int,
    fence: bool,
    turn_share: int | None,
) -> BlockListPlan:
    """Plan a content-block list; fenced text blocks get room for their fences.

    Args:
        blocks: The content blocks.
        budget: The result's budget.
        counter: Token counter.
        image_tokens: Fixed cost of one media block.
        fence: Whether text blocks shown whole are fenced.
        turn_share: This result's share of the turn budget, for the media allowance
            (`None`: a budget given by the caller is kept as it is).

    Returns:
        The plan; when the list fits, `shown` is what the model sees and `tokens` its cost.

    Example:
        ```python
        plan = plan_block_list(["hi"], Budget(tokens=500, chars=2_000), counter=counter,
                               image_tokens=1_600, fence=True, turn_share=None)
        assert plan.fits and plan.shown is not None and "hi" in plan.shown[0]
        ```
    """
    texts = sum(1 for b in blocks if block_text(b) is not None) if fence else 0
    reserve = (texts * FENCE_TOKENS, texts * FENCE_CHARS)
    base = Budget(tokens=max(1, budget.tokens - reserve[0]), chars=1)
    extra = media_allowance(blocks, base, image_tokens=image_tokens, turn_share=turn_share)
    fit = _FitList(blocks, counter, image_tokens, fence)
    if not extra:
        return fit.plan(budget, reserve)
    plan = fit.plan(Budget(tokens=budget.tokens + extra, chars=budget.chars), reserve)
    if any(block_text(blocks[i]) is None for i in plan.blocks.keep):
        return plan
    # The allowance is for media shown: a plan that shows none keeps the cap.
    return fit.plan(budget, reserve)


@dataclass(frozen=True, slots=True)
class _FitList:
    """What `plan_block_list` plans within one budget."""

    blocks: list[Any]
    counter: TokenCounter
    image_tokens: int
    fence: bool

    def plan(self, budget: Budget, reserve: tuple[int, int]) -> BlockListPlan:
        """The plan within `budget`, the fences' `reserve` (tokens, chars) taken off first."""
        blocks, counter, image_tokens = self.blocks, self.counter, self.image_tokens
        reserve_tokens, reserve_chars = reserve
        for _ in range(3):
            inner = Budget(
                tokens=max(MIN_RESULT_TOKENS, budget.tokens - reserve_tokens),
                chars=max(MIN_RESULT_CHARS, budget.chars - reserve_chars),
            )
            bplan = plan_blocks(blocks, budget=inner, counter=counter, image_tokens=image_tokens)
            if not bplan.fits:
                return BlockListPlan(budget=budget, blocks=bplan, tokens=bplan.tokens)
            shown = fence_blocks(blocks, range(len(blocks))) if self.fence else blocks
            ctx = ViewContext(budget=budget, counter=counter, image_tokens=image_tokens)
            tokens, chars = measure(shown, ctx)
            if tokens <= budget.tokens and chars <= budget.chars:
                return BlockListPlan(
                    budget=budget, blocks=bplan, fits=True, shown=shown, tokens=tokens
                )
            reserve_tokens, reserve_chars = reserve_tokens * 2 + 16, reserve_chars * 2 + 64
        return BlockListPlan(budget=budget, blocks=bplan, tokens=bplan.tokens)


class BlockListView(ResultViewBuilder):
    """Content-block lists (text, images and other blocks) within one budget.

    Example:
        ```python
        assert BlockListView().sniff([{"type": "text", "text": "x"}, "y"]) > 0.9
        assert BlockListView().sniff([{"id": 1}]) == 0.0
        ```
    """

    kind: ClassVar[str] = "blocks"
    sniff_ceiling = 0.99
    places_notes: ClassVar[bool] = True

    def sniff(self, payload: object) -> float:
        """Content-block lists are this kind."""
        return 0.99 if is_content_block_list(payload) else 0.0

    def prepare(self, payload: object) -> Prepared:
        """Store the list as its JSON text.

        Raises:
            TypeError: When `payload` is not a content-block list.
        """
        if not is_content_block_list(payload):
            msg = "the block-list view renders content-block lists only"
            raise TypeError(msg)
        assert isinstance(payload, list)
        return Prepared(raw=to_json_text(payload), data=_Blocks(list(payload)), text=False)

    def prepare_planned(self, blocks: list[Any], plan: BlockPlan) -> Prepared:
        """`prepare`, keeping a plan already made (by `plan_block_list`).

        Args:
            blocks: The content blocks.
            plan: Their plan.

        Returns:
            The prepared result.
        """
        return Prepared(raw=to_json_text(blocks), data=_Blocks(list(blocks), plan), text=False)

    def render(self, prepared: Prepared, ctx: ViewContext) -> Rendered:
        """The planned blocks, cut ones rendered by their own view, then the store note."""
        data = prepared.data
        assert isinstance(data, _Blocks)
        blocks = data.blocks
        bplan = (
            data.plan
            or plan_block_list(
                blocks,
                ctx.budget,
                counter=ctx.counter,
                image_tokens=ctx.image_tokens,
                fence=ctx.fence_parts,
                turn_share=None,
            ).blocks
        )
        ref_text = str(ctx.reference) if ctx.reference else None
        note, budget = self._store_note(ctx)
        # Text blocks shown whole are fenced like any result; cut ones are fenced by their view.
        rendering = render_blocks(
            fence_blocks(blocks, bplan.keep) if ctx.fence_parts else blocks,
            bplan,
            budget=budget,
            counter=ctx.counter,
            image_tokens=ctx.image_tokens,
            cut_block=lambda i, text, room: self._cut(ctx, i, text, room),
            reference=ref_text,
        )
        if note:
            rendering.content = [*rendering.content, {"type": "text", "text": note}]
        texts = [block_text(b) for b in blocks]
        view = ResultView(
            kind=self.kind,
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
        )
        for i, part in ctx.part_references.items():
            view.references[f"block_{i + 1}"] = str(Reference(record_id=part.record_id))
        return Rendered(content=rendering.content, view=view)

    @staticmethod
    def _store_note(ctx: ViewContext) -> tuple[str, Budget]:
        """The store's note and the budget left for the blocks.

        The full note when the blocks keep a useful budget, else the short one, which leaves
        room for the blocks' own notice.
        """
        floors = (Budget(tokens=MIN_RESULT_TOKENS, chars=MIN_RESULT_CHARS), _SHORT_NOTE_FLOOR)
        budget = ctx.budget
        for note, floor in zip(ctx.cap_notes, floors, strict=False):
            cost = ctx.counter.count(note) + BLOCK_OVERHEAD_TOKENS
            if budget.tokens - cost >= floor.tokens and budget.chars - len(note) >= floor.chars:
                return note, Budget(tokens=budget.tokens - cost, chars=budget.chars - len(note))
        return "", budget

    @staticmethod
    def _cut(ctx: ViewContext, index: int, text: str, budget: Budget) -> tuple[str, dict[str, Any]]:
        """Text block `index` rendered within `budget` by its view, and that view's record."""
        part = ctx.part_references.get(index)
        note = ctx.store_note  # not saved at all: the store's own reason
        if part is not None:
            note = None
        elif ctx.reference is not None:
            note = (
                f"This block could not be saved on its own; the whole content is {ctx.reference}."
            )
        part_ctx = replace(
            ctx, budget=budget, reference=part, store_note=note, part_references={}, cap_notes=()
        )
        try:
            view = ctx.choose(text) if ctx.choose is not None else _TEXT
            rendered, _ = render_or_fall_back(view, view.prepare(text), part_ctx)
        except Exception:  # choose/prepare of a user view: fall back to text
            logger.exception("block view failed; using the text view")
            rendered, _ = render_or_fall_back(_TEXT, _TEXT.prepare(text), part_ctx)
        content = rendered.content
        if not isinstance(content, str):
            content = block_text({"type": "text", "text": to_json_text(content)}) or ""
        record = rendered.view.to_dict()
        record.pop("original_artifact", None)
        return content, record


BLOCK_LIST = BlockListView()
"""The one `BlockListView` a layer uses when its views have none of that kind."""
