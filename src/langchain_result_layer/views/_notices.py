"""The last-resort notice: what the model sees when no view fits the budget.

Example:
    ```python
    from langchain_result_layer.core.budget import Budget
    from langchain_result_layer.core.tokens import ApproximateTokenCounter
    from langchain_result_layer.views._notices import bare_notice

    text = bare_notice(10_000, None, Budget(tokens=20, chars=80), ApproximateTokenCounter(),
                       "fetch_tool_result")
    assert text.startswith("[Tool result omitted")
    ```
"""

from __future__ import annotations

from langchain_result_layer.core.budget import Budget
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.render import fetch_call, plural
from langchain_result_layer.core.tokens import TokenCounter

__all__ = ["bare_notice"]


def bare_notice(
    size: int,
    reference: Reference | None,
    budget: Budget,
    counter: TokenCounter,
    fetch_tool_name: str,
    *,
    unit: str = "char",
) -> str:
    """The shortest honest notice that fits `budget` (the last fallback).

    Args:
        size: Size of the result (in `unit`s).
        reference: Reference to the stored result, when stored.
        budget: What the notice must fit.
        counter: The token counter.
        fetch_tool_name: Name of the fetch tool quoted in the notice.
        unit: `char` or `byte`.

    Returns:
        The longest candidate that fits, or `""` when not even `[omitted]` does.

    Example:
        ```python
        assert bare_notice(5, None, Budget(tokens=1, chars=1), counter, "fetch_tool_result") == ""
        ```
    """
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
