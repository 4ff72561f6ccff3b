"""The global budget guard's decision, over plain records.

The guard runs before every model call. It sees the request as a list of `MessageRecord`s
(one per message, with its exact token cost) plus a fixed overhead (system prompt, tool
schemas, reserved tokens), and decides which tool results to replace with placeholders and
which old tool-call arguments to clear. Nothing here knows LangChain: adapters build the
records, render the placeholders and apply the plan.

The rules:

- Nothing happens while the request is at or under the trigger.
- Protected, in every stage: results the model has not seen yet (tool messages after the last
  AI message) and results of pinned tools. The last `keep_last` results are protected too,
  unless keeping them would send a request over the window (stage 3).
- Stage 1 clears unprotected results whose raw copy is saved (they can be fetched again):
  successes oldest first, then errors oldest first, until the request is at or under the
  *target* (batch clearing: one cache-breaking edit buys many calls of headroom).
- Stage 2 (when `clear_tool_inputs`) clears the arguments of old tool calls (calls whose
  results are cleared or unprotected), oldest AI message first, until the target is reached.
- Stage 3 runs only when the request would still exceed the window: it clears seen results
  inside `keep_last` (if `relax_keep_last`), then results whose raw copy could not be saved
  (evidence that would be lost, so last), then the arguments of their calls, until the
  request fits the window.
- If it still does not fit, the plan says so (`overflow`); the adapter raises
  `ContextBudgetExceeded` or sends anyway, as configured.

Cleared results are never chosen again, messages are never removed or reordered, and the plan
never touches a protected result.

Example:
    ```python
    from langchain_result_layer.core.guard import GuardLimits, MessageRecord, plan_clearing

    records = [
        MessageRecord(role="human", tokens=10),
        MessageRecord(role="ai", tokens=20, call_ids=("c1",)),
        MessageRecord(role="tool", tokens=900, tool_call_id="c1", tool_name="search"),
        MessageRecord(role="ai", tokens=20, call_ids=("c2",)),
        MessageRecord(role="tool", tokens=500, tool_call_id="c2", tool_name="search"),
    ]
    limits = GuardLimits.from_window(2_000, trigger_fraction=0.5, target_fraction=0.4,
                                     keep_last=1)
    plan = plan_clearing(records, limits=limits, placeholder_tokens=lambda i: 40)
    assert plan.clear == [2] and plan.tokens_after == 10 + 20 + 40 + 20 + 500
    ```
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "DEFAULT_KEEP_LAST",
    "DEFAULT_TARGET_FRACTION",
    "DEFAULT_TRIGGER_FRACTION",
    "ClearingPlan",
    "GuardLimits",
    "MessageRecord",
    "Role",
    "plan_clearing",
    "protected_indices",
]

Role = Literal["system", "human", "ai", "tool", "other"]

DEFAULT_TRIGGER_FRACTION = 0.75
"""Share of the window past which the guard clears (the one default; `GuardSettings` uses it)."""

DEFAULT_TARGET_FRACTION = 0.4
"""Share of the window the guard clears down to: batch clearing keeps the prompt prefix stable
for many calls; 0.4 leaves room for about a third of the window of new results before the
next clearing."""

DEFAULT_KEEP_LAST = 3
"""The most recent tool results the guard keeps (unless the window needs them)."""


@dataclass(frozen=True, slots=True)
class MessageRecord:
    """One message of the request, as the guard sees it.

    Example:
        ```python
        MessageRecord(role="tool", tokens=1_200, tool_call_id="c1", tool_name="run_sql")
        ```
    """

    role: Role
    """`system`, `human`, `ai`, `tool` or `other`."""

    tokens: int
    """What the message costs in the request now (content, tool calls, framing)."""

    tool_call_id: str | None = None
    """For tool results: the call it answers."""

    tool_name: str | None = None
    """For tool results: the tool that produced it."""

    is_error: bool = False
    """For tool results: whether it reports an error (cleared last)."""

    cleared: bool = False
    """For tool results: already a placeholder (never chosen again)."""

    call_ids: tuple[str, ...] = ()
    """For AI messages: ids of its tool calls, in order."""

    clearable_call_ids: tuple[str, ...] = ()
    """For AI messages: calls whose arguments are non-empty and not cleared yet."""

    clearable_args_tokens: int = 0
    """For AI messages: tokens of the arguments of `clearable_call_ids`."""


@dataclass(frozen=True, slots=True)
class GuardLimits:
    """Token limits and protections for one guard run.

    Example:
        ```python
        limits = GuardLimits.from_window(128_000)
        assert (limits.trigger, limits.target) == (96_000, 51_200)
        ```
    """

    window: int
    """The model's input window (a request must never exceed it)."""

    trigger: int
    """Clearing starts when the request exceeds this many tokens."""

    target: int
    """Clearing goes on until the request is at or under this many tokens."""

    overhead: int = 0
    """Tokens of the request outside the messages (system prompt when it is not a message, tool
    schemas, reserved tokens)."""

    keep_last: int = DEFAULT_KEEP_LAST
    """The most recent tool results that stay (unless the window needs them)."""

    pinned_tools: frozenset[str] = field(default_factory=frozenset)
    """Tools whose results are never cleared."""

    clear_tool_inputs: bool = True
    """Whether old tool-call arguments may be cleared."""

    relax_keep_last: bool = True
    """Whether `keep_last` results that the model has seen may be cleared when the request would
    otherwise exceed the window."""

    min_args_tokens: int = 64
    """AI messages whose clearable arguments cost fewer tokens are not worth editing."""

    def __post_init__(self) -> None:
        """Validate."""
        if self.window <= 0:
            msg = f"window must be positive, got {self.window}"
            raise ValueError(msg)
        if not 0 <= self.target <= self.trigger <= self.window:
            msg = (
                "need 0 <= target <= trigger <= window, got "
                f"target={self.target}, trigger={self.trigger}, window={self.window}"
            )
            raise ValueError(msg)
        if self.overhead < 0 or self.keep_last < 0:
            msg = "overhead and keep_last must be >= 0"
            raise ValueError(msg)

    @classmethod
    def from_window(
        cls,
        window: int,
        *,
        trigger_fraction: float = DEFAULT_TRIGGER_FRACTION,
        target_fraction: float = DEFAULT_TARGET_FRACTION,
        overhead: int = 0,
        keep_last: int = DEFAULT_KEEP_LAST,
        pinned_tools: Collection[str] = (),
        clear_tool_inputs: bool = True,
        relax_keep_last: bool = True,
    ) -> GuardLimits:
        """Limits from a window and the trigger/target fractions.

        Args:
            window: The model's input window in tokens.
            trigger_fraction: Share of the window that triggers clearing.
            target_fraction: Share of the window clearing aims for.
            overhead: Tokens outside the messages.
            keep_last: Recent results that stay.
            pinned_tools: Tools never cleared.
            clear_tool_inputs: Whether tool-call arguments may be cleared.
            relax_keep_last: Whether seen recent results may go to fit the window.

        Returns:
            The limits.

        Example:
            ```python
            GuardLimits.from_window(16_000, trigger_fraction=0.8, target_fraction=0.6)
            ```
        """
        return cls(
            window=window,
            trigger=int(window * trigger_fraction),
            target=int(window * target_fraction),
            overhead=overhead,
            keep_last=keep_last,
            pinned_tools=frozenset(pinned_tools),
            clear_tool_inputs=clear_tool_inputs,
            relax_keep_last=relax_keep_last,
        )


@dataclass(slots=True)
class ClearingPlan:
    """What the guard decided for one request.

    Example:
        ```python
        plan = ClearingPlan(tokens_before=900, tokens_after=900)
        assert not plan.changed  # nothing cleared yet
        plan.clear.append(2)
        assert plan.changed
        ```
    """

    tokens_before: int

    """Request tokens before any change (messages plus overhead)."""
    tokens_after: int
    """Request tokens once the plan is applied."""
    triggered: bool = False
    """Whether the request exceeded the trigger."""
    clear: list[int] = field(default_factory=list)
    """Indices of tool results to replace with placeholders, in the order chosen."""
    clear_args: dict[int, tuple[str, ...]] = field(default_factory=dict)
    """AI message index -> the call ids whose arguments to clear."""
    relaxed: list[int] = field(default_factory=list)
    """The subset of `clear` that was inside `keep_last`."""
    unsaved_cleared: list[int] = field(default_factory=list)
    """The subset of `clear` whose raw copy could not be saved."""
    protected: frozenset[int] = frozenset()
    """Indices of results that were protected (unseen, pinned or recent)."""
    overflow: bool = False
    """Whether the request still exceeds the window after every stage."""

    @property
    def changed(self) -> bool:
        """Whether the plan edits any message."""
        return bool(self.clear or self.clear_args)


def protected_indices(
    records: Sequence[MessageRecord], *, keep_last: int, pinned_tools: Collection[str] = ()
) -> tuple[frozenset[int], frozenset[int]]:
    """The tool results the guard must keep, split into hard and soft protection.

    Args:
        records: The request's messages.
        keep_last: How many of the most recent tool results are kept.
        pinned_tools: Tools whose results are never cleared.

    Returns:
        `(hard, recent)`: `hard` holds unseen results (after the last AI message) and pinned
        tools' results; `recent` holds the last `keep_last` results not already in `hard`.

    Example:
        ```python
        records = [
            MessageRecord(role="ai", tokens=20, call_ids=("c1",)),
            MessageRecord(role="tool", tokens=900, tool_call_id="c1", tool_name="plan"),
            MessageRecord(role="tool", tokens=500, tool_call_id="c2", tool_name="search"),
            MessageRecord(role="ai", tokens=20, call_ids=("c3",)),
            MessageRecord(role="tool", tokens=700, tool_call_id="c3", tool_name="search"),
        ]
        hard, recent = protected_indices(records, keep_last=2, pinned_tools={"plan"})
        assert hard == {1, 4} and recent == {2}  # pinned, unseen; the other of the last 2
        ```
    """
    last_ai = -1
    for i in range(len(records) - 1, -1, -1):
        if records[i].role == "ai":
            last_ai = i
            break
    pinned = set(pinned_tools)
    hard: set[int] = set()
    tool_indices = [i for i, r in enumerate(records) if r.role == "tool"]
    for i in tool_indices:
        if i > last_ai or (records[i].tool_name is not None and records[i].tool_name in pinned):
            hard.add(i)
    recent = set(tool_indices[-keep_last:]) - hard if keep_last else set()
    return frozenset(hard), frozenset(recent)


def _order(records: Sequence[MessageRecord], indices: Collection[int]) -> list[int]:
    """Successes oldest first, then errors oldest first."""
    return sorted(indices, key=lambda i: (records[i].is_error, i))


def plan_clearing(
    records: Sequence[MessageRecord],
    *,
    limits: GuardLimits,
    placeholder_tokens: Callable[[int], int],
    cleared_args_tokens: Callable[[int, tuple[str, ...]], int] | None = None,
    unsaved: Collection[int] = (),
) -> ClearingPlan:
    """Decide which results to clear so the request gets under the target (see module doc).

    Args:
        records: The request's messages, in order.
        limits: Window, trigger, target, overhead and protections.
        placeholder_tokens: Exact tokens of the placeholder that would replace the tool
            result at an index (only called for results the guard considers).
        cleared_args_tokens: Exact tokens of the AI message at an index once the arguments
            of the given calls are cleared (the tuple holds every call cleared so far);
            `None` disables argument clearing.
        unsaved: Indices of results whose raw copy cannot be saved: cleared only when the
            window needs it.

    Returns:
        The plan. `tokens_after` is exact given exact callbacks.

    Example:
        ```python
        records = [
            MessageRecord(role="ai", tokens=20, call_ids=("c1",)),
            MessageRecord(role="tool", tokens=1_500, tool_call_id="c1", tool_name="search"),
            MessageRecord(role="ai", tokens=20, call_ids=("c2",)),
            MessageRecord(role="tool", tokens=400, tool_call_id="c2", tool_name="search"),
        ]
        limits = GuardLimits.from_window(2_000, keep_last=1)  # trigger 1,500, target 800
        plan = plan_clearing(records, limits=limits, placeholder_tokens=lambda i: 40)
        assert plan.clear == [1] and plan.tokens_after == 20 + 40 + 20 + 400
        ```
    """
    total = limits.overhead + sum(r.tokens for r in records)
    plan = ClearingPlan(tokens_before=total, tokens_after=total)
    if total <= limits.trigger:
        return plan
    plan.triggered = True
    hard, recent = protected_indices(
        records, keep_last=limits.keep_last, pinned_tools=limits.pinned_tools
    )
    plan.protected = hard | recent
    unsaved_set = set(unsaved)
    chosen: set[int] = set()

    def clear_results(candidates: list[int], goal: int, bucket: list[int] | None) -> None:
        nonlocal total
        for i in candidates:
            if total <= goal:
                return
            saving = records[i].tokens - placeholder_tokens(i)
            if saving <= 0:
                continue
            total -= saving
            chosen.add(i)
            plan.clear.append(i)
            if bucket is not None:
                bucket.append(i)
            if i in unsaved_set:
                plan.unsaved_cleared.append(i)

    def clear_arguments(goal: int) -> None:
        nonlocal total
        if cleared_args_tokens is None or not limits.clear_tool_inputs:
            return
        eligible = {
            r.tool_call_id
            for i, r in enumerate(records)
            if r.role == "tool"
            and r.tool_call_id is not None
            and (r.cleared or i in chosen or (i not in hard and i not in recent))
        }
        for i, r in enumerate(records):
            if total <= goal:
                return
            if (
                r.role != "ai"
                or not r.clearable_call_ids
                or r.clearable_args_tokens < limits.min_args_tokens
            ):
                continue
            already = plan.clear_args.get(i, ())
            ids = tuple(c for c in r.clearable_call_ids if c in eligible and c not in already)
            if not ids:
                continue
            current = r.tokens if not already else cleared_args_tokens(i, already)
            after = cleared_args_tokens(i, already + ids)
            if after >= current:
                continue
            total -= current - after
            plan.clear_args[i] = already + ids

    tools = [i for i, r in enumerate(records) if r.role == "tool" and not r.cleared]
    # Stage 1: unprotected, saved results, down to the target.
    stage1 = [i for i in tools if i not in hard and i not in recent and i not in unsaved_set]
    clear_results(_order(records, stage1), limits.target, None)
    # Stage 2: arguments of calls whose results are cleared, down to the target.
    if total > limits.target:
        clear_arguments(limits.target)
    # Stage 3: only to fit the window.
    if total > limits.window:
        if limits.relax_keep_last:
            saved_recent = [i for i in tools if i in recent and i not in unsaved_set]
            clear_results(_order(records, saved_recent), limits.window, plan.relaxed)
        unsaved_open = [i for i in tools if i in unsaved_set and i not in hard and i not in recent]
        clear_results(_order(records, unsaved_open), limits.window, None)
        if limits.relax_keep_last:
            unsaved_recent = [i for i in tools if i in unsaved_set and i in recent]
            clear_results(_order(records, unsaved_recent), limits.window, plan.relaxed)
        clear_arguments(limits.window)
    plan.tokens_after = total
    plan.overflow = total > limits.window
    return plan
