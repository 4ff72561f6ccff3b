"""Multi-block content: a list of text, image and other blocks sharing one budget.

Rules:

- the cost of a content list is the sum of its text blocks' tokens, a fixed cost per non-text
  block (`image_tokens`), and `BLOCK_OVERHEAD_TOKENS` per block;
- when the list fits, it passes through unchanged;
- otherwise text blocks share what the non-text blocks leave, in proportion to their size with
  a floor; blocks under their share stay whole (their surplus goes to the others), larger ones
  are cut by the text view; if there are more blocks than floors fit, the last ones are
  replaced by one notice;
- non-text blocks are kept, unless they alone exceed the budget: then each becomes a short
  notice;
- the total never exceeds the budget.

Example:
    ```python
    from langchain_result_layer.views.blocks import content_tokens

    n = content_tokens([{"type": "text", "text": "hi"}], counter, image_tokens=1_600)  # doctest: +SKIP
    ```
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_result_layer.core.budget import MIN_RESULT_TOKENS, Budget
from langchain_result_layer.core.jsonable import to_json_text
from langchain_result_layer.core.render import plural
from langchain_result_layer.core.tokens import TokenCounter

__all__ = [
    "BLOCK_OVERHEAD_TOKENS",
    "BlockPlan",
    "block_text",
    "content_tokens",
    "is_content_block_list",
    "plan_blocks",
]

BLOCK_OVERHEAD_TOKENS = 4
"""Tokens charged per block for its framing."""

_FLOOR_TOKENS = 2 * MIN_RESULT_TOKENS
_TEXT_TYPES = {"text", "text-plain"}


def is_content_block_list(content: object) -> bool:
    """Whether `content` is a LangChain content-block list (strings and typed dicts).

    A list of plain dicts without `type` (rows a tool returned) is *not* a block list.

    Args:
        content: Message content.

    Returns:
        `True` for block lists.

    Example:
        ```python
        assert is_content_block_list([{"type": "text", "text": "x"}, "y"])
        assert not is_content_block_list([{"id": 1}, {"id": 2}])
        ```
    """
    if not isinstance(content, list) or not content:
        return False
    return all(
        isinstance(b, str) or (isinstance(b, dict) and isinstance(b.get("type"), str))
        for b in content
    )


def block_text(block: object) -> str | None:
    """The text of a text block, `None` for other blocks.

    Args:
        block: A string or a block dict.

    Returns:
        The text or `None`.

    Example:
        ```python
        assert block_text({"type": "text", "text": "hi"}) == "hi"
        ```
    """
    if isinstance(block, str):
        return block
    if isinstance(block, dict) and block.get("type") in _TEXT_TYPES:
        text = block.get("text")
        return text if isinstance(text, str) else to_json_text(text)
    return None


def content_tokens(content: object, counter: TokenCounter, *, image_tokens: int) -> int:
    """Tokens of message content under the block-cost rules of this module.

    Args:
        content: A string or a block list.
        counter: The token counter.
        image_tokens: Fixed cost of each non-text block.

    Returns:
        The cost.

    Example:
        ```python
        content_tokens("hello", counter, image_tokens=1_600)  # doctest: +SKIP
        ```
    """
    if isinstance(content, str):
        return counter.count(content)
    if isinstance(content, list):
        total = 0
        for block in content:
            text = block_text(block)
            total += BLOCK_OVERHEAD_TOKENS
            total += counter.count(text) if text is not None else image_tokens
        return total
    return counter.count(to_json_text(content))


def content_chars(content: object) -> int:
    """Characters of the text parts of `content` (non-text blocks count their JSON size).

    Args:
        content: A string or a block list.

    Returns:
        Characters.

    Example:
        ```python
        assert content_chars(["ab", {"type": "text", "text": "c"}]) == 3
        ```
    """
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list):
        total = 0
        for block in content:
            text = block_text(block)
            total += len(text) if text is not None else 0
        return total
    return len(to_json_text(content))


@dataclass(slots=True)
class BlockPlan:
    """How a block list is shown.

    Attributes:
        keep: Indices of blocks shown unchanged.
        cut: Index -> budget for text blocks that must be cut.
        drop_text: Indices of text blocks replaced by the trailing notice.
        replace_nontext: Indices of non-text blocks replaced by a notice.
        fits: Whether the whole list passes through unchanged.

    Example:
        ```python
        plan.cut  # doctest: +SKIP
        ```
    """

    keep: list[int] = field(default_factory=list)
    cut: dict[int, Budget] = field(default_factory=dict)
    drop_text: list[int] = field(default_factory=list)
    replace_nontext: list[int] = field(default_factory=list)
    fits: bool = False


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
    notice_tokens: int = 48,
) -> BlockPlan:
    """Decide which blocks stay, which are cut (with what budget) and which are dropped.

    Args:
        blocks: The content blocks.
        budget: Budget for the whole list.
        counter: Token counter.
        image_tokens: Fixed cost of a non-text block.
        notice_tokens: Room kept for a notice block when something is dropped.

    Returns:
        The plan; the blocks it keeps and the budgets it hands out sum to at most `budget`.

    Example:
        ```python
        plan = plan_blocks(["x" * 10], budget=Budget(tokens=100, chars=1_000),
                           counter=counter, image_tokens=1_600)  # doctest: +SKIP
        ```
    """
    plan = BlockPlan()
    texts: list[tuple[int, str]] = []
    nontext: list[int] = []
    for i, block in enumerate(blocks):
        text = block_text(block)
        if text is None:
            nontext.append(i)
        else:
            texts.append((i, text))
    overhead = BLOCK_OVERHEAD_TOKENS * len(blocks)
    sizes = {i: _quick_tokens(t, counter, budget.tokens) for i, t in texts}
    chars = {i: len(t) for i, t in texts}
    nontext_cost = image_tokens * len(nontext)
    if (
        sum(sizes.values()) + nontext_cost + overhead <= budget.tokens
        and sum(chars.values()) <= budget.chars
    ):
        plan.fits = True
        plan.keep = list(range(len(blocks)))
        return plan

    available = budget.tokens - overhead - notice_tokens
    if nontext and nontext_cost > available - min(len(texts), 1) * _FLOOR_TOKENS:
        plan.replace_nontext = list(nontext)
        available -= notice_tokens * len(nontext)
    else:
        plan.keep.extend(nontext)
        available -= nontext_cost
    chars_available = max(0, budget.chars - 200 * (len(plan.replace_nontext) + 1))

    # How many text blocks can have at least the floor?
    capacity = max(0, available // _FLOOR_TOKENS) if available > 0 else 0
    if len(texts) > capacity:
        # Keep the earliest blocks; drop the rest into one notice.
        plan.drop_text = [i for i, _ in texts[capacity:]]
        texts = texts[:capacity]
    if not texts:
        plan.keep.sort()
        return plan

    # Proportional shares with a floor; whole blocks under their share release the surplus.
    remaining = dict((i, sizes[i]) for i, _ in texts)
    tok_left, chars_left = available, chars_available
    settled = True
    while settled and remaining:
        settled = False
        total = sum(remaining.values()) or 1
        for i in list(remaining):
            share = max(_FLOOR_TOKENS, tok_left * remaining[i] // total)
            if sizes[i] <= share and chars[i] <= chars_left * remaining[i] // total + 1:
                plan.keep.append(i)
                tok_left -= sizes[i]
                chars_left -= chars[i]
                del remaining[i]
                settled = True
    if remaining:
        total = sum(remaining.values()) or 1
        n = len(remaining)
        floor_total = _FLOOR_TOKENS * n
        spare = max(0, tok_left - floor_total)
        for i in remaining:
            tokens = _FLOOR_TOKENS + spare * remaining[i] // total
            block_chars = max(256, chars_left * remaining[i] // total)
            plan.cut[i] = Budget(tokens=max(MIN_RESULT_TOKENS, tokens), chars=block_chars)
    plan.keep.sort()
    return plan


def dropped_notice(count: int, chars: int, reference: str | None) -> str:
    """The notice that replaces text blocks that did not fit at all.

    Args:
        count: Blocks dropped.
        chars: Their characters.
        reference: Reference to the whole stored content, if stored.

    Returns:
        The notice text.

    Example:
        ```python
        dropped_notice(3, 1200, None)
        ```
    """
    where = f" Full content: {reference}." if reference else " They were not saved."
    return (
        f"[{plural(count, 'more text block')} ({plural(chars, 'char')}) omitted: "
        f"no room left in this result's budget.{where}]"
    )


def nontext_notice(block: object, reference: str | None) -> str:
    """The notice that replaces a non-text block when those alone exceed the budget.

    Args:
        block: The block.
        reference: Reference to the whole stored content, if stored.

    Returns:
        The notice text.

    Example:
        ```python
        nontext_notice({"type": "image", "base64": "..."}, None)
        ```
    """
    kind = block.get("type", "block") if isinstance(block, dict) else type(block).__name__
    size = len(to_json_text(block))
    where = f" Stored with the full content: {reference}." if reference else ""
    return f"[{kind} block omitted ({plural(size, 'char')} of data): over this result's budget.{where}]"
