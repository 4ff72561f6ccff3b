"""Per-tool policies and guard settings.

Example:
    ```python
    from langchain_result_layer import ResultLayer, ToolPolicy

    layer = ResultLayer(
        context_window=128_000,
        tool_policies={
            "run_sql": ToolPolicy(kind="rows", view_options={"fields": ["id", "status"]}),
            "read_log": ToolPolicy(kind="log", max_tokens=4_000),
            "get_plan": ToolPolicy(pinned=True),
        },
    )
    ```
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_result_layer.core.guard import (
    DEFAULT_KEEP_LAST,
    DEFAULT_TARGET_FRACTION,
    DEFAULT_TRIGGER_FRACTION,
    GuardLimits,
)

__all__ = ["GuardSettings", "ToolPolicy", "coerce_policy"]


@dataclass(frozen=True, slots=True)
class ToolPolicy:
    """Overrides for one tool's results.

    Example:
        ```python
        ToolPolicy(kind="search", head_fraction=0.8)
        ```
    """

    max_tokens: int | None = None
    """Token cap for this tool's results (instead of the layer's)."""

    max_chars: int | None = None
    """Character cap for this tool's results."""

    kind: str | None = None
    """View kind to use (`text`, `command`, `search`, `log`, `rows`, `file`, `json`, or a
    registered one) instead of sniffing."""

    head_fraction: float | None = None
    """Head share of the head/tail split for text-like views (0-1)."""

    pinned: bool = False
    """Never clear this tool's results in the budget guard."""

    enabled: bool = True
    """Process this tool's results at all (`False`: pass through untouched)."""

    ttl_seconds: float | None = None
    """How long to keep this tool's raw results (`None`: the store's default)."""

    view_options: Mapping[str, Any] = field(default_factory=dict)
    """Options for the view (for example `fields`, `page_size`)."""

    summarize: bool | None = None
    """Model-written summary for this tool's large results: `None` follows the layer's summary
    settings, `True` always (when a summarizer is configured), `False` never."""

    fence: bool | None = None
    """Fence this tool's results as untrusted data: `None` follows the layer's `fence_results`
    (on by default), `False` passes results that fit through byte-identical (only for tools
    whose output you trust)."""

    def __post_init__(self) -> None:
        """Validate."""
        if self.head_fraction is not None and not 0 <= self.head_fraction <= 1:
            msg = f"head_fraction must be within [0, 1], got {self.head_fraction}"
            raise ValueError(msg)
        for name in ("max_tokens", "max_chars"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                msg = f"{name} must be positive, got {value}"
                raise ValueError(msg)


_POLICY_FIELDS = (
    "max_tokens",
    "max_chars",
    "kind",
    "head_fraction",
    "pinned",
    "enabled",
    "ttl_seconds",
    "view_options",
    "summarize",
    "fence",
)


def coerce_policy(value: ToolPolicy | Mapping[str, Any]) -> ToolPolicy:
    """Accept a `ToolPolicy` or a dict of its fields.

    Args:
        value: The policy or its fields.

    Returns:
        The policy.

    Example:
        ```python
        assert coerce_policy({"pinned": True}).pinned
        ```
    """
    candidate: object = value
    if isinstance(candidate, ToolPolicy):
        return candidate
    if not isinstance(candidate, Mapping):
        msg = f"a tool policy must be a ToolPolicy or a dict, got {type(candidate).__name__}"
        raise TypeError(msg)
    unknown = sorted(str(k) for k in candidate if k not in _POLICY_FIELDS)
    if unknown:
        msg = f"unknown ToolPolicy fields {unknown}; known: {', '.join(_POLICY_FIELDS)}"
        raise TypeError(msg)
    return ToolPolicy(**dict(candidate))


OverflowAction = Literal["raise", "send"]
_OVERFLOW_ACTIONS = ("raise", "send")


@dataclass(frozen=True, slots=True)
class GuardSettings:
    """How the global budget guard behaves.

    Example:
        ```python
        GuardSettings(trigger_fraction=0.8, target_fraction=0.5, keep_last=5)
        ```
    """

    trigger_fraction: float = DEFAULT_TRIGGER_FRACTION
    """Start clearing once the request passes this share of the window (0.75)."""

    target_fraction: float = DEFAULT_TARGET_FRACTION
    """Clear until the request is under this share of the window (0.4: batch clearing keeps the
    prompt prefix stable for many calls, leaving room for about a third of the window of new
    results before the next clearing)."""

    keep_last: int = DEFAULT_KEEP_LAST
    """The most recent tool results that are never cleared (3)."""

    pinned_tools: frozenset[str] = frozenset()
    """Tools whose results are never cleared."""

    clear_tool_inputs: bool = True
    """When clearing results is not enough, also clear the arguments of old tool calls."""

    on_overflow: OverflowAction = "raise"
    """What to do when the request still exceeds the window: `raise` `ContextBudgetExceeded`
    (default) or `send` it anyway with a warning."""

    reserve_tokens: int = 0
    """Tokens kept free for what the guard cannot see (system prompt and tool schemas when not
    given, the model's output)."""

    non_destructive: bool = False
    """Do not write placeholders back to graph state; only the model's input is edited (the
    original history stays untouched, but the prompt prefix changes whenever the decision does)."""

    relax_keep_last: bool = True
    """When the request would still exceed the window, also clear results among the last
    `keep_last` that the model has already seen (never unseen results or pinned tools)."""

    def __post_init__(self) -> None:
        """Validate."""
        if not 0 < self.target_fraction <= self.trigger_fraction <= 1:
            msg = (
                "need 0 < target_fraction <= trigger_fraction <= 1, got "
                f"target={self.target_fraction}, trigger={self.trigger_fraction}"
            )
            raise ValueError(msg)
        if self.keep_last < 0:
            msg = f"keep_last must be >= 0, got {self.keep_last}"
            raise ValueError(msg)
        if self.reserve_tokens < 0:
            msg = f"reserve_tokens must be >= 0, got {self.reserve_tokens}"
            raise ValueError(msg)
        if self.on_overflow not in _OVERFLOW_ACTIONS:
            msg = (
                f"on_overflow={self.on_overflow!r} is not supported: use 'raise' "
                "(ContextBudgetExceeded) or 'send' (a ContextBudgetWarning); the budget guard "
                "never deletes messages"
            )
            raise ValueError(msg)
        pinned: object = self.pinned_tools
        if not isinstance(pinned, frozenset):
            if isinstance(pinned, str) or not isinstance(pinned, (set, list, tuple)):
                msg = f"pinned_tools must be a set of tool names, got {pinned!r}"
                raise TypeError(msg)
            object.__setattr__(self, "pinned_tools", frozenset(pinned))

    def limits(self, window: int, *, overhead: int = 0) -> GuardLimits:
        """The core guard's limits for a request with `overhead` tokens outside its messages.

        Args:
            window: The context window in tokens.
            overhead: System prompt, tool schemas, reserve and framing tokens.

        Returns:
            The limits (trigger and target from the fractions, the protections as set here).

        Example:
            ```python
            limits = GuardSettings(keep_last=1).limits(128_000, overhead=500)
            assert (limits.trigger, limits.keep_last, limits.overhead) == (96_000, 1, 500)
            ```
        """
        return GuardLimits.from_window(
            window,
            trigger_fraction=self.trigger_fraction,
            target_fraction=self.target_fraction,
            overhead=overhead,
            keep_last=self.keep_last,
            pinned_tools=self.pinned_tools,
            clear_tool_inputs=self.clear_tool_inputs,
            relax_keep_last=self.relax_keep_last,
        )
