"""Multi-block content: a list of text, image and other blocks sharing one budget.

Rules:

- a list is a content-block list when every item is a string or a dict whose `type` is a
  known content-block type (LangChain's standard blocks and the provider formats tools
  return); a list of rows (plain dicts, or dicts whose `type` is a column) is not;
- the cost of a content list is, per block, `BLOCK_OVERHEAD_TOKENS` plus its text's tokens,
  or a fixed `image_tokens` for media blocks (images, audio, video, files, documents);
  blocks of other types count as their JSON text;
- a list that fits passes through unchanged;
- otherwise media blocks are kept at their fixed cost when they fit next to a floor for the
  text, else each becomes a short notice (or, when even the notices do not fit, is counted
  in one closing notice);
- text blocks share what is left in proportion to their size, each cut block getting at
  least a floor: blocks under their share stay whole (their surplus goes to the others),
  larger ones are cut by a view; blocks beyond what the floors allow are replaced by one
  closing notice that says which blocks and how much;
- the rendered list is counted exactly and shrunk until it fits: the total never exceeds
  the budget, however many blocks there are.

Example:
    ```python
    from langchain_result_layer.core.tokens import ApproximateTokenCounter
    from langchain_result_layer.views.blocks import content_tokens

    counter = ApproximateTokenCounter()
    assert content_tokens([{"type": "text", "text": "hi"}], counter, image_tokens=1_600) >= 5
    ```
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_result_layer.core.budget import MIN_RESULT_TOKENS, Budget
from langchain_result_layer.core.jsonable import to_json_text
from langchain_result_layer.core.render import plural
from langchain_result_layer.core.tokens import TokenCounter

__all__ = [
    "BLOCK_OVERHEAD_TOKENS",
    "KNOWN_BLOCK_TYPES",
    "MEDIA_BLOCK_TYPES",
    "BlockPlan",
    "BlockRendering",
    "block_text",
    "content_chars",
    "content_tokens",
    "dropped_notice",
    "is_content_block_list",
    "is_media_block",
    "nontext_notice",
    "plan_blocks",
    "render_blocks",
]

BLOCK_OVERHEAD_TOKENS = 4
"""Tokens charged per block for its framing."""

FLOOR_TOKENS = 2 * MIN_RESULT_TOKENS
"""Smallest budget a cut text block gets (room for its notice and some content)."""

FLOOR_CHARS = 512
"""Smallest character budget a cut text block gets."""

TEXT_BLOCK_TYPES = frozenset({"text", "text-plain", "input_text", "output_text"})
"""Block types whose `text` is shown as text."""

MEDIA_BLOCK_TYPES = frozenset(
    {
        "image",
        "image_url",
        "input_image",
        "audio",
        "input_audio",
        "video",
        "file",
        "input_file",
        "document",
    }
)
"""Block types counted at a fixed cost (their data is not text a model reads)."""

KNOWN_BLOCK_TYPES = (
    TEXT_BLOCK_TYPES
    | MEDIA_BLOCK_TYPES
    | frozenset(
        {
            "json",
            "search_result",
            "custom_tool_call_output",
            "reasoning",
            "thinking",
            "redacted_thinking",
            "refusal",
            "citation",
            "tool_use",
            "tool_result",
            "tool_call",
            "tool_call_chunk",
            "invalid_tool_call",
            "server_tool_call",
            "server_tool_call_chunk",
            "server_tool_result",
            "non_standard",
        }
    )
)
"""Content-block types: LangChain's standard blocks and the provider formats tools return."""

_NOTICE_CHARS = 400


def is_content_block_list(content: object) -> bool:
    """Whether `content` is a content-block list (strings and dicts of known block types).

    A list of plain dicts (rows a tool returned), or of dicts whose `type` is not a block
    type (rows with a `type` column), is *not* a block list.

    Args:
        content: Message content.

    Returns:
        `True` for block lists.

    Example:
        ```python
        assert is_content_block_list([{"type": "text", "text": "x"}, "y"])
        assert not is_content_block_list([{"id": 1}, {"id": 2}])
        assert not is_content_block_list([{"type": "user", "id": 1}])
        ```
    """
    if not isinstance(content, list) or not content:
        return False
    return all(
        isinstance(b, str) or (isinstance(b, dict) and b.get("type") in KNOWN_BLOCK_TYPES)
        for b in content
    )


def is_media_block(block: object) -> bool:
    """Whether `block` is counted at the fixed media cost.

    Args:
        block: A string or a block dict.

    Returns:
        `True` for images, audio, video, files and documents.

    Example:
        ```python
        assert is_media_block({"type": "image", "url": "https://example.com/a.png"})
        ```
    """
    return isinstance(block, dict) and block.get("type") in MEDIA_BLOCK_TYPES


def block_text(block: object) -> str | None:
    """The text a block shows the model, `None` for media blocks.

    Text blocks give their `text`; other non-media blocks (JSON, search results, ...) give
    their JSON form, which is what they cost and what a cut shows.

    Args:
        block: A string or a block dict.

    Returns:
        The text or `None`.

    Example:
        ```python
        assert block_text({"type": "text", "text": "hi"}) == "hi"
        assert block_text({"type": "image", "base64": "AAAA"}) is None
        ```
    """
    if isinstance(block, str):
        return block
    if not isinstance(block, dict):
        return to_json_text(block)
    kind = block.get("type")
    if kind in MEDIA_BLOCK_TYPES:
        return None
    if kind in TEXT_BLOCK_TYPES:
        text = block.get("text")
        if isinstance(text, str):
            return text
        if text is None and kind != "text-plain":
            return ""
    return to_json_text(block)


def content_tokens(content: object, counter: TokenCounter, *, image_tokens: int) -> int:
    """Tokens of message content under the block-cost rules of this module.

    Args:
        content: A string, a block list, or any other object (counted as its JSON text;
            so is a list that is not a block list, such as rows).
        counter: The token counter.
        image_tokens: Fixed cost of each media block.

    Returns:
        The cost.

    Example:
        ```python
        from langchain_result_layer.core.tokens import ApproximateTokenCounter

        assert content_tokens("hello", ApproximateTokenCounter(), image_tokens=1_600) >= 1
        ```
    """
    if isinstance(content, str):
        return counter.count(content)
    if isinstance(content, list) and all(isinstance(b, (str, dict)) for b in content):
        if content and not is_content_block_list(content):
            # Rows and other lists of dicts: what a model is sent is their JSON text.
            return counter.count(to_json_text(content))
        total = 0
        for block in content:
            text = block_text(block)
            total += BLOCK_OVERHEAD_TOKENS
            total += counter.count(text) if text is not None else image_tokens
        return total
    return counter.count(to_json_text(content))


def content_chars(content: object) -> int:
    """Characters of the text parts of `content` (media blocks count none).

    Args:
        content: A string, a block list, or any other object (its JSON text).

    Returns:
        Characters.

    Example:
        ```python
        assert content_chars(["ab", {"type": "text", "text": "c"}]) == 3
        ```
    """
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list) and all(isinstance(b, (str, dict)) for b in content):
        if content and not is_content_block_list(content):
            return len(to_json_text(content))
        return sum(len(t) for t in map(block_text, content) if t is not None)
    return len(to_json_text(content))


@dataclass(slots=True)
class BlockPlan:
    """How a block list is shown (made by `plan_blocks`).

    Example:
        ```python
        plan = BlockPlan(keep=[0], fits=True)
        assert not plan.cut and not plan.drop_text
        ```
    """

    keep: list[int] = field(default_factory=list)
    """Indices of blocks shown unchanged."""
    cut: dict[int, Budget] = field(default_factory=dict)
    """Index -> budget for text blocks that must be cut."""
    drop_text: list[int] = field(default_factory=list)
    """Indices of blocks (text or media) left out and named in the closing notice."""
    replace_nontext: list[int] = field(default_factory=list)
    """Indices of media blocks replaced by a short notice each."""
    fits: bool = False
    """Whether the whole list passes through unchanged."""
    tokens: int | None = None
    """Tokens of the list as it is (`BLOCK_OVERHEAD_TOKENS` per block included), when it was
    counted (lists far over the budget are not counted in full)."""


def _quick_tokens(text: str, counter: TokenCounter, cap: int) -> int:
    """Exact tokens, or `cap + 1` when the text is obviously larger than `cap`."""
    if len(text) > cap * 16:
        return cap + 1
    return counter.count(text)


def plan_blocks(
    blocks: Sequence[Any],
    *,
    budget: Budget,
    counter: TokenCounter,
    image_tokens: int,
    notice_tokens: int = 64,
) -> BlockPlan:
    """Decide which blocks stay, which are cut (with what budget) and which are dropped.

    Args:
        blocks: The content blocks.
        budget: Budget for the whole list.
        counter: Token counter.
        image_tokens: Fixed cost of a media block.
        notice_tokens: Room kept for the closing notice (and each media notice).

    Returns:
        The plan. Its estimate stays within `budget`; `render_blocks` checks the rendered
        list exactly and drops more blocks if the estimate was short.

    Example:
        ```python
        from langchain_result_layer.core.tokens import ApproximateTokenCounter

        blocks = [{"type": "text", "text": "x " * 10_000}, {"type": "image", "base64": "AAAA"}]
        plan = plan_blocks(blocks, budget=Budget(tokens=500, chars=2_000),
                           counter=ApproximateTokenCounter(), image_tokens=1_600)
        assert list(plan.cut) == [0] and plan.replace_nontext == [1] and not plan.fits
        ```
    """
    found = [(i, block_text(block)) for i, block in enumerate(blocks)]
    texts = [(i, text) for i, text in found if text is not None]
    media = [i for i, text in found if text is None]
    sizes = _text_tokens(texts, budget=budget, counter=counter)
    chars = {i: len(t) for i, t in texts}
    whole = sum(sizes.values()) + image_tokens * len(media) + BLOCK_OVERHEAD_TOKENS * len(blocks)
    if whole <= budget.tokens and sum(chars.values()) <= budget.chars:
        return BlockPlan(keep=list(range(len(blocks))), fits=True, tokens=whole)
    plan = BlockPlan()
    room = _Room(
        tokens=budget.tokens - (notice_tokens + BLOCK_OVERHEAD_TOKENS),
        chars=budget.chars - _NOTICE_CHARS,
    )
    text_reserve = (FLOOR_TOKENS + BLOCK_OVERHEAD_TOKENS) if texts else 0
    _place_media(
        plan,
        media,
        room,
        image_tokens=image_tokens,
        notice_tokens=notice_tokens,
        text_reserve=text_reserve,
    )
    bases = _place_text_bases(plan, [i for i, _ in texts], sizes, chars, room)
    _share_the_rest(plan, bases, sizes, chars, room)
    plan.keep.sort()
    return plan


@dataclass(slots=True)
class _Room:
    """What is left of a block list's budget while it is planned."""

    tokens: int
    chars: int


def _text_tokens(
    texts: Sequence[tuple[int, str]], *, budget: Budget, counter: TokenCounter
) -> dict[int, int]:
    """Tokens of each text block, at most one over the budget.

    Exact for blocks that could be kept whole, within a bounded amount of counting; beyond
    that, the UTF-8 length (never below the token count) stands in.
    """
    cap = budget.tokens
    sizes: dict[int, int] = {}
    counted = 0
    for i, t in texts:
        if len(t) > budget.chars:
            sizes[i] = cap + 1
        elif counted <= 8 * budget.chars:
            sizes[i] = _quick_tokens(t, counter, cap)
            counted += len(t)
        else:
            sizes[i] = len(t) if t.isascii() else len(t.encode("utf-8", "surrogatepass"))
    return sizes


def _place_media(
    plan: BlockPlan,
    media: Sequence[int],
    room: _Room,
    *,
    image_tokens: int,
    notice_tokens: int,
    text_reserve: int,
) -> None:
    """Keep, replace or drop the media blocks.

    All are kept when they fit next to a floor for the text, else each gets a notice (in
    order, while those fit), else it is named in the closing notice.
    """
    overhead = BLOCK_OVERHEAD_TOKENS
    if (image_tokens + overhead) * len(media) <= room.tokens - text_reserve:
        plan.keep.extend(media)
        room.tokens -= (image_tokens + overhead) * len(media)
        return
    for i in media:
        if notice_tokens + overhead <= room.tokens - text_reserve and room.chars > _NOTICE_CHARS:
            plan.replace_nontext.append(i)
            room.tokens -= notice_tokens + overhead
            room.chars -= _NOTICE_CHARS
        else:
            plan.drop_text.append(i)


def _place_text_bases(
    plan: BlockPlan,
    texts: Sequence[int],
    sizes: Mapping[int, int],
    chars: Mapping[int, int],
    room: _Room,
) -> dict[int, tuple[int, int]]:
    """Set aside the base of each text block, in order, while they fit; drop the others.

    A block's base is all of itself (small blocks: cutting them would leave little but the
    cut's own notice) or the floor.

    Returns:
        Chosen block -> its base `(tokens, chars)`; the others are dropped.
    """
    bases: dict[int, tuple[int, int]] = {}
    for i in texts:
        if sizes[i] <= 2 * FLOOR_TOKENS and chars[i] <= 2 * FLOOR_CHARS:
            need_t, need_c = sizes[i], chars[i]
        else:
            need_t, need_c = min(sizes[i], FLOOR_TOKENS), min(chars[i], FLOOR_CHARS)
        if need_t + BLOCK_OVERHEAD_TOKENS <= room.tokens and need_c <= room.chars:
            bases[i] = (need_t, need_c)
            room.tokens -= need_t + BLOCK_OVERHEAD_TOKENS
            room.chars -= need_c
        else:
            plan.drop_text.append(i)
    plan.drop_text.sort()
    return bases


def _share_the_rest(
    plan: BlockPlan,
    bases: Mapping[int, tuple[int, int]],
    sizes: Mapping[int, int],
    chars: Mapping[int, int],
    room: _Room,
) -> None:
    """Share what is left among the chosen text blocks, in proportion to their characters.

    A block under its base plus share stays whole (and frees the rest of its share); the
    others are cut to theirs.
    """
    open_ = [i for i, (t, c) in bases.items() if sizes[i] > t or chars[i] > c]
    plan.keep.extend(i for i in bases if i not in set(open_))
    settled = True
    while settled and open_:
        settled = False
        weight = sum(chars[i] for i in open_) or 1
        for i in list(open_):
            base_t, base_c = bases[i]
            extra_t = room.tokens * chars[i] // weight
            extra_c = room.chars * chars[i] // weight
            if sizes[i] <= base_t + extra_t and chars[i] <= base_c + extra_c:
                plan.keep.append(i)
                room.tokens -= sizes[i] - base_t
                room.chars -= chars[i] - base_c
                open_.remove(i)
                settled = True
    weight = sum(chars[i] for i in open_) or 1
    for i in open_:
        base_t, base_c = bases[i]
        share_t = base_t + max(0, room.tokens) * chars[i] // weight
        share_c = base_c + max(0, room.chars) * chars[i] // weight
        plan.cut[i] = Budget(tokens=max(1, share_t), chars=max(1, share_c))


def _index_ranges(indices: Sequence[int]) -> str:
    """`3, 7-9 and 12` for block numbers (1-based)."""
    runs: list[tuple[int, int]] = []
    for i in sorted(indices):
        if runs and i == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
    parts = [f"{a + 1:,}" if a == b else f"{a + 1:,}-{b + 1:,}" for a, b in runs[:8]]
    if len(runs) > 8:
        parts.append(f"{plural(len(runs) - 8, 'more range')}")
    return ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]


def dropped_notice(
    count: int, chars: int, reference: str | None, *, indices: Sequence[int] | None = None
) -> str:
    """The closing notice for blocks that did not fit at all.

    Args:
        count: Blocks dropped.
        chars: Their characters (text blocks; media count none).
        reference: Reference to the whole stored content, if stored.
        indices: Their positions in the list (0-based), named 1-based in the notice.

    Returns:
        The notice text.

    Example:
        ```python
        assert dropped_notice(3, 1200, None).endswith("They were not saved.]")
        ```
    """
    where = f" Full content: {reference}." if reference else " They were not saved."
    which = f" (blocks {_index_ranges(indices)})" if indices else ""
    return (
        f"[{plural(count, 'more block')}{which}, {plural(chars, 'char')} of text, omitted: "
        f"no room left in this result's budget.{where}]"
    )


def nontext_notice(block: object, reference: str | None) -> str:
    """The notice that replaces a media block when media alone exceed the budget.

    Args:
        block: The block.
        reference: Reference to the whole stored content, if stored.

    Returns:
        The notice text.

    Example:
        ```python
        assert nontext_notice({"type": "image", "base64": "..."}, None).startswith("[image block")
        ```
    """
    kind = block.get("type", "block") if isinstance(block, dict) else type(block).__name__
    size = len(to_json_text(block))
    where = f" Stored with the full content: {reference}." if reference else " Not saved."
    return f"[{str(kind)[:40]} block omitted ({plural(size, 'char')} of data): over this " + (
        f"result's budget.{where}]"
    )


@dataclass(slots=True)
class BlockRendering:
    """A block list rendered within its budget (made by `render_blocks`).

    Example:
        ```python
        shown = BlockRendering(content=["hi"], items=[{"index": 0, "action": "kept"}],
                               tokens=5, chars=2)
        assert not shown.dropped
        ```
    """

    content: list[Any]
    """The blocks the model sees."""
    items: list[dict[str, Any]]
    """One record per original block: `index`, `action` (`kept`, `cut`, `replaced`,
    `dropped`) and, for cut blocks, the view's record."""
    tokens: int
    """Tokens of `content` (block overheads and media costs included)."""
    chars: int
    """Characters of `content`'s text."""
    dropped: list[int] = field(default_factory=list)
    """Indices of blocks named in the closing notice."""
    replaced: list[int] = field(default_factory=list)
    """Indices of media blocks replaced by a notice."""
    cut: list[int] = field(default_factory=list)
    """Indices of text blocks shown cut."""


CutBlock = Callable[[int, str, Budget], tuple[str, dict[str, Any]]]
"""Renders text block `index` within a budget: returns the text and its view's record."""


def render_blocks(
    blocks: Sequence[Any],
    plan: BlockPlan,
    *,
    budget: Budget,
    counter: TokenCounter,
    image_tokens: int,
    cut_block: CutBlock,
    reference: str | None,
) -> BlockRendering:
    """Render a plan and make sure the result fits: drop trailing blocks until it does.

    Args:
        blocks: The original blocks.
        plan: Output of `plan_blocks` (not a fitting one).
        budget: Budget for the whole list.
        counter: Token counter.
        image_tokens: Fixed cost of a media block.
        cut_block: Renders one text block within a budget.
        reference: Reference to the whole stored list, for the notices.

    Returns:
        The rendering; `tokens <= budget.tokens` and `chars <= budget.chars` always hold.

    Example:
        ```python
        from langchain_result_layer.core.tokens import ApproximateTokenCounter

        counter, budget = ApproximateTokenCounter(), Budget(tokens=500, chars=2_000)
        blocks = [{"type": "text", "text": "x " * 10_000}, {"type": "image", "base64": "AAAA"}]
        plan = plan_blocks(blocks, budget=budget, counter=counter, image_tokens=1_600)


        def cut(index: int, text: str, room: Budget) -> tuple[str, dict[str, object]]:
            return text[: room.chars // 2], {"index": index}


        shown = render_blocks(blocks, plan, budget=budget, counter=counter,
                              image_tokens=1_600, cut_block=cut, reference=None)
        assert shown.tokens <= budget.tokens and shown.cut == [0] and shown.replaced == [1]
        ```
    """
    shown = _shown_blocks(
        blocks,
        plan,
        counter=counter,
        image_tokens=image_tokens,
        cut_block=cut_block,
        reference=reference,
    )
    dropped = sorted(set(plan.drop_text))

    def closing() -> tuple[str, int, int]:
        if not dropped:
            return "", 0, 0
        chars = sum(len(block_text(blocks[i]) or "") for i in dropped)
        text = dropped_notice(len(dropped), chars, reference, indices=dropped)
        return text, counter.count(text) + BLOCK_OVERHEAD_TOKENS, len(text)

    order = sorted(shown)
    while True:
        notice, notice_t, notice_c = closing()
        tokens = sum(shown[i].tokens for i in order) + notice_t
        chars = sum(shown[i].chars for i in order) + notice_c
        if (tokens <= budget.tokens and chars <= budget.chars) or not order:
            break
        # Over budget (estimates were short): the last shown block joins the dropped ones.
        last = order.pop()
        del shown[last]
        dropped = sorted([*dropped, last])
    if tokens > budget.tokens or chars > budget.chars:
        # Not even the closing notice fits: say as little as possible.
        notice = _shortest_notice(len(blocks), reference, budget, counter)
        notice_t = counter.count(notice) + BLOCK_OVERHEAD_TOKENS if notice else 0
        tokens, chars = notice_t, len(notice)
        dropped = list(range(len(blocks)))
    content = [shown[i].block for i in order]
    if notice:
        content.append({"type": "text", "text": notice})
    items = [shown[i].item for i in order] + [{"index": i, "action": "dropped"} for i in dropped]
    items.sort(key=lambda item: int(item["index"]))
    return BlockRendering(
        content=content,
        items=items,
        tokens=tokens,
        chars=chars,
        dropped=dropped,
        replaced=sorted(i for i in plan.replace_nontext if i in shown),
        cut=sorted(i for i in plan.cut if i in shown),
    )


@dataclass(frozen=True, slots=True)
class _Shown:
    """One block as it is shown, with its cost."""

    block: Any
    tokens: int
    """Tokens, `BLOCK_OVERHEAD_TOKENS` included."""
    chars: int
    item: dict[str, Any]
    """Its record in `BlockRendering.items`."""


def _shown_blocks(
    blocks: Sequence[Any],
    plan: BlockPlan,
    *,
    counter: TokenCounter,
    image_tokens: int,
    cut_block: CutBlock,
    reference: str | None,
) -> dict[int, _Shown]:
    """Every block the plan shows (cut, replaced by a notice, or kept), by index."""
    shown: dict[int, _Shown] = {}

    def as_text(i: int, text: str, item: dict[str, Any]) -> None:
        cost = counter.count(text) + BLOCK_OVERHEAD_TOKENS
        shown[i] = _Shown({"type": "text", "text": text}, cost, len(text), item)

    for i, room in plan.cut.items():
        text, record = cut_block(i, block_text(blocks[i]) or "", room)
        as_text(i, text, {"index": i, "action": "cut", "view": record})
    for i in plan.replace_nontext:
        if i not in plan.cut:
            as_text(i, nontext_notice(blocks[i], reference), {"index": i, "action": "replaced"})
    for i in plan.keep:
        kept = block_text(blocks[i])
        cost = (counter.count(kept) if kept is not None else image_tokens) + BLOCK_OVERHEAD_TOKENS
        shown[i] = _Shown(blocks[i], cost, len(kept or ""), {"index": i, "action": "kept"})
    return shown


def _shortest_notice(
    count: int, reference: str | None, budget: Budget, counter: TokenCounter
) -> str:
    candidates = [
        f"[{plural(count, 'block')} omitted: over this result's budget."
        + (f" Full content: {reference}.]" if reference else "]"),
        f"[{plural(count, 'block')} omitted.]",
        "[omitted]",
    ]
    for text in candidates:
        if (
            len(text) <= budget.chars
            and counter.count(text) + BLOCK_OVERHEAD_TOKENS <= budget.tokens
        ):
            return text
    return ""
