"""Budgets: how much of the context window one tool result may take.

Defaults follow the reference design: one result may take 30% of the context window and never
more than 400,000 characters. Both bounds hold at once: a view fits `Budget.tokens` under the
configured counter *and* `Budget.chars` characters.

Example:
    ```python
    from langchain_result_layer.core.budget import Budget, result_budget

    budget = result_budget(context_window=128_000)
    assert budget == Budget(tokens=38_400, chars=400_000)
    ```
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "DEFAULT_IMAGE_TOKENS",
    "DEFAULT_MAX_RESULT_CHARS",
    "DEFAULT_RESULT_FRACTION",
    "DEFAULT_TURN_FRACTION",
    "MIN_RESULT_CHARS",
    "MIN_RESULT_TOKENS",
    "Budget",
    "result_budget",
]

DEFAULT_RESULT_FRACTION = 0.30
"""Share of the context window one tool result may take."""

DEFAULT_MAX_RESULT_CHARS = 400_000
"""Hard cap on the characters of one result's view, whatever the window."""

DEFAULT_TURN_FRACTION = 0.5
"""Share of the window all results of one model turn (parallel tool calls) may take together."""

DEFAULT_IMAGE_TOKENS = 1_600
"""Fixed cost of one image or other non-text block (about what providers charge a 1024 px
image)."""

MIN_RESULT_TOKENS = 64
"""Smallest token budget the layer accepts: room for the notice that tells what was left out."""

MIN_RESULT_CHARS = 256
"""Smallest character budget the layer accepts."""


@dataclass(frozen=True, slots=True)
class Budget:
    """A two-sided bound on one rendered result.

    Example:
        ```python
        b = Budget(tokens=2_000, chars=8_000)
        assert b.scaled(0.5) == Budget(tokens=1_000, chars=4_000)
        ```
    """

    tokens: int
    """Maximum tokens under the configured counter."""

    chars: int
    """Maximum characters."""

    def __post_init__(self) -> None:
        """Validate the bounds."""
        if self.tokens < 1 or self.chars < 1:
            msg = f"budget bounds must be positive, got tokens={self.tokens}, chars={self.chars}"
            raise ValueError(msg)

    def scaled(self, factor: float) -> Budget:
        """Return a budget with both bounds multiplied by `factor` (at least 1 each).

        Args:
            factor: Multiplier, for example `0.5`.

        Returns:
            The scaled budget.
        """
        return Budget(
            tokens=max(1, int(self.tokens * factor)), chars=max(1, int(self.chars * factor))
        )

    def minus(self, tokens: int, chars: int) -> Budget:
        """Return this budget less an overhead (never below 1).

        Args:
            tokens: Tokens to subtract.
            chars: Characters to subtract.

        Returns:
            The remaining budget.
        """
        return Budget(tokens=max(1, self.tokens - tokens), chars=max(1, self.chars - chars))


def result_budget(
    *,
    context_window: int,
    max_result_tokens: int | None = None,
    max_result_chars: int | None = None,
    fraction: float = DEFAULT_RESULT_FRACTION,
) -> Budget:
    """Compute the per-result budget from the window and optional caps.

    Args:
        context_window: The model's input window in tokens.
        max_result_tokens: Explicit token cap; defaults to `fraction * context_window`.
        max_result_chars: Explicit character cap; defaults to 400,000.
        fraction: Share of the window one result may take when no token cap is given.

    Returns:
        The budget.

    Raises:
        ValueError: When the window or caps are not positive or the budget is below
            `MIN_RESULT_TOKENS`.

    Example:
        ```python
        result_budget(context_window=16_000, max_result_tokens=2_000).tokens  # 2000
        ```
    """
    if context_window <= 0:
        msg = f"context_window must be positive, got {context_window}"
        raise ValueError(msg)
    if not 0 < fraction <= 1:
        msg = f"fraction must be in (0, 1], got {fraction}"
        raise ValueError(msg)
    tokens = max_result_tokens if max_result_tokens is not None else int(context_window * fraction)
    chars = max_result_chars if max_result_chars is not None else DEFAULT_MAX_RESULT_CHARS
    if tokens > context_window:
        msg = (
            f"max_result_tokens={tokens:,} is larger than the {context_window:,}-token context "
            "window: one result could overflow it"
        )
        raise ValueError(msg)
    if tokens < MIN_RESULT_TOKENS:
        msg = f"per-result budget must be at least {MIN_RESULT_TOKENS} tokens, got {tokens}"
        raise ValueError(msg)
    if chars < MIN_RESULT_CHARS:
        msg = f"max_result_chars must be at least {MIN_RESULT_CHARS}, got {chars}"
        raise ValueError(msg)
    return Budget(tokens=tokens, chars=chars)
