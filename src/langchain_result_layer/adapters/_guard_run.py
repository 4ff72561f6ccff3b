"""What one budget-guard run knows and decides, shared by its sync and async drivers.

`GuardRun` is the state of one run (the request, its counts, the limits, the store and the
references made so far); `GuardResult` is what the run returns. Neither lives longer than the
run: the guard itself keeps no per-request state.

Example:
    ```python
    from langchain_result_layer.adapters._guard_run import GuardResult

    result = GuardResult(messages=[])
    assert not result.changed and result.tokens_after == 0
    ```
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import BaseMessage, ToolMessage, convert_to_messages

from langchain_result_layer.adapters._messages import MessageInfo, Scope
from langchain_result_layer.core.guard import ClearingPlan, GuardLimits
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.pipeline import ResultPipeline
from langchain_result_layer.stores.base import Principal, ResultStore

__all__ = ["GuardResult", "GuardRun", "merge_replacements", "messages_of"]


@dataclass(slots=True)
class GuardResult:
    """What one guard run did.

    Example:
        ```python
        result = layer.budget_guard.guard([tool_message])  # far under the trigger
        assert not result.changed and result.tokens_after <= result.trigger
        ```
    """

    messages: list[BaseMessage]
    """The messages to send to the model (edited where the guard cleared)."""

    replacements: list[BaseMessage] = field(default_factory=list)
    """Same-id replacements to write back to state (empty: nothing changed)."""

    window: int = 0
    """The context window."""

    trigger: int = 0
    """Tokens above which the guard clears."""

    target: int = 0
    """Tokens the guard clears down to."""

    cleared: list[str] = field(default_factory=list)
    """Ids of tool results replaced by placeholders in this run."""

    cleared_inputs: list[str] = field(default_factory=list)
    """Ids of tool calls whose arguments were cleared in this run."""

    stored: list[str] = field(default_factory=list)
    """Ids of results the guard stored itself (they had no reference)."""

    unsaved: list[str] = field(default_factory=list)
    """Ids of results cleared although they could not be saved."""

    kept_unsaved: list[str] = field(default_factory=list)
    """Ids of results kept because they could not be saved."""

    relaxed: list[str] = field(default_factory=list)
    """Ids of recent results cleared only to fit the window."""

    shrunk: list[str] = field(default_factory=list)
    """Ids of unseen results rendered again with a smaller budget to fit."""

    shrunk_kept: list[str] = field(default_factory=list)
    """Ids of seen results among the last `keep_last` rendered again smaller while clearing,
    so that the clearing reaches the target."""

    overhead: int = 0
    """Tokens of the request outside the messages (system prompt, tool schemas, framing,
    `reserve_tokens`)."""

    overflow: bool = False
    """Whether the request still exceeds the window."""

    counted: int = 0
    """Request tokens as the run counted them: exact, or an upper bound while `recount` is set."""

    recount: Callable[[], int] | None = field(default=None, repr=False, compare=False)
    """Counts the request exactly, for a run that only bounded it (under the trigger, some
    large new text had only its cheap upper bound); called once, on the first read of
    `tokens_before` or `tokens_after`."""

    after: int | None = None
    """Request tokens of `messages` when the run changed them (`None`: unchanged)."""

    @property
    def tokens_before(self) -> int:
        """Request tokens before the guard ran (exact)."""
        if self.recount is not None:
            self.counted, self.recount = self.recount(), None
        return self.counted

    @tokens_before.setter
    def tokens_before(self, value: int) -> None:
        self.counted, self.recount = value, None

    @property
    def tokens_after(self) -> int:
        """Request tokens of `messages` (exact)."""
        return self.tokens_before if self.after is None else self.after

    @tokens_after.setter
    def tokens_after(self, value: int) -> None:
        self.after = value

    @property
    def changed(self) -> bool:
        """Whether any message was edited."""
        return bool(self.replacements)


@dataclass(slots=True)
class GuardRun:
    """State of one guard run (shared by the sync and async paths).

    Example:
        ```python
        from langchain_result_layer.core.guard import GuardLimits
        from langchain_result_layer.stores.base import Principal

        run = GuardRun(
            messages=[], infos=[], overhead=0, limits=GuardLimits.from_window(16_000),
            principal=Principal(), state=[], scope=(None, None, None), store=None,
            pipeline=layer.pipeline,
        )
        assert run.limits.trigger == 12_000 and not run.refs
        ```
    """

    messages: list[BaseMessage]
    """The request's messages (recalled decisions applied in the non-destructive mode)."""

    infos: list[MessageInfo]
    """What the counter knows about each message."""

    overhead: int
    """Tokens outside the messages."""

    limits: GuardLimits
    """Window, trigger, target and protections of this run."""

    principal: Principal
    """Who runs it (the scope of every cache and store call)."""

    state: list[BaseMessage]
    """The messages as they are in graph state (before recalled decisions are applied)."""

    scope: Scope
    """The counting scope of `principal`."""

    store: ResultStore | None
    """Where results are stored before they are cleared."""

    pipeline: ResultPipeline
    """The per-result pipeline on that store (for shrinking)."""

    refs: dict[int, str] = field(default_factory=dict)
    """References of results stored (or adopted) during this run, by index."""

    expires: dict[int, float | None] = field(default_factory=dict)
    """When those stored copies expire, by index."""

    pending: dict[int, Reference] = field(default_factory=dict)
    """References chosen for results about to be stored, by index."""

    stored: set[int] = field(default_factory=set)
    """Indices of results the guard stored itself."""

    unsaved: dict[int, str] = field(default_factory=dict)
    """Why a result could not be saved, by index."""

    placeholders: dict[int, ToolMessage] = field(default_factory=dict)
    """Placeholders made so far, by index."""

    plan: ClearingPlan | None = None
    """The latest clearing plan."""

    earliest_expiry: float = math.inf
    """When the first stored copy behind a placeholder of the request expires (Unix time)."""


def merge_replacements(result: GuardResult, new: Mapping[int, ToolMessage]) -> None:
    """Put same-id replacements into the request and the state update (replacing earlier ones).

    Args:
        result: The run's result so far.
        new: Replacements by message index.
    """
    by_id = {m.id: k for k, m in enumerate(result.replacements)}
    for i, message in new.items():
        result.messages[i] = message
        k = by_id.get(message.id)
        if k is None:
            result.replacements.append(message)
        else:
            result.replacements[k] = message


def messages_of(state: Any, key: str) -> list[BaseMessage]:
    """The messages of a graph state (a list, a mapping or an object with `key`).

    Args:
        state: The state.
        key: The messages key.

    Returns:
        The messages (converted from dicts or tuples when needed).

    Raises:
        ValueError: When the state has no such key.
    """
    if isinstance(state, list):
        raw: Any = state
    elif isinstance(state, Mapping):
        if key not in state:
            msg = f"budget guard: state has no {key!r} key"
            raise ValueError(msg)
        raw = state[key]
    else:
        raw = getattr(state, key, None)
        if raw is None:
            msg = f"budget guard: state has no {key!r} attribute"
            raise ValueError(msg)
    messages = list(raw)
    if all(isinstance(m, BaseMessage) for m in messages):
        return messages
    return list(convert_to_messages(messages))
