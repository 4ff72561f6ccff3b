"""What the guard clears, as placeholders and edited calls (no I/O).

Given a run (`GuardRun`), these steps make the placeholders the planner weighs, ask the pure
planner (`core.guard.plan_clearing`) which results to clear, build the run's `GuardResult` from
the plan, and rewrite placeholders whose stored copy has expired. They need only a narrow,
typed context (`PlanningContext`: the request counter, the marker signer and the fetch tool's
name), never the whole layer.

Example:
    ```python
    from langchain_result_layer.adapters._guard_planning import PlanningContext

    ctx = PlanningContext.of(layer)
    assert ctx.counter is layer.request_counter and ctx.fetch_tool_name == "fetch_tool_result"
    ```
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from langchain_result_layer.adapters._guard_run import GuardResult, GuardRun, merge_replacements
from langchain_result_layer.adapters._guard_storing import reference_for
from langchain_result_layer.adapters._markers import MarkerSigner, raw_marker
from langchain_result_layer.adapters._messages import RequestCounter
from langchain_result_layer.adapters._placeholders import (
    clear_call_arguments,
    expired_placeholder,
    make_placeholder,
)
from langchain_result_layer.core.guard import ClearingPlan, plan_clearing

if TYPE_CHECKING:
    from langchain_result_layer.layer import ResultLayer

__all__ = ["PlanningContext", "expire_placeholders", "finish", "noop", "plan", "tokens_of"]


@dataclass(frozen=True, slots=True)
class PlanningContext:
    """What planning needs from the layer, and nothing more.

    Example:
        ```python
        ctx = PlanningContext(layer.request_counter, layer.signer, "fetch_tool_result")
        ```
    """

    counter: RequestCounter
    """Counts messages (cached per scope)."""

    signer: MarkerSigner
    """Signs the placeholders' and edited calls' markers."""

    fetch_tool_name: str
    """Name of the fetch tool placeholders point to."""

    @classmethod
    def of(cls, layer: ResultLayer) -> PlanningContext:
        """The context of a layer.

        Args:
            layer: The layer.

        Returns:
            Its planning context.
        """
        return cls(layer.request_counter, layer.signer, layer.fetch_tool_name)


def tokens_of(ctx: PlanningContext, run: GuardRun, messages: list[BaseMessage]) -> int:
    """Exact tokens of a request's messages plus the run's overhead.

    Args:
        ctx: The planning context.
        run: The run.
        messages: The messages.

    Returns:
        The request's tokens.
    """
    return run.overhead + ctx.counter.survey(messages, run.scope).tokens


def placeholder(ctx: PlanningContext, run: GuardRun, i: int) -> ToolMessage:
    """The placeholder that would replace result `i` (made once per reference).

    Args:
        ctx: The planning context.
        run: The run.
        i: The result's index.

    Returns:
        The same-id placeholder.
    """
    cached = run.placeholders.get(i)
    ref = reference_for(run, i)
    if cached is not None and raw_marker(cached).get("ref") == ref:
        return cached
    message = run.messages[i]
    assert isinstance(message, ToolMessage)
    info = run.infos[i]
    note = run.unsaved.get(i)
    if note is None and ref is None:
        note = info.store_error
    made = make_placeholder(
        message,
        info,
        signer=ctx.signer,
        ref=ref,
        fetch_tool_name=ctx.fetch_tool_name,
        note=note,
        stored_now=i in run.stored or i in run.pending,
        expires_at=run.expires.get(i, info.expires_at),
    )
    run.placeholders[i] = made
    return made


def plan(ctx: PlanningContext, run: GuardRun) -> ClearingPlan:
    """Ask the planner which results and call arguments to clear.

    Args:
        ctx: The planning context.
        run: The run.

    Returns:
        The plan (also kept as `run.plan`).
    """

    def placeholder_tokens(i: int) -> int:
        return ctx.counter.message_tokens(placeholder(ctx, run, i), run.scope)

    def cleared_args_tokens(i: int, ids: tuple[str, ...]) -> int:
        message = run.messages[i]
        assert isinstance(message, AIMessage)
        edited = clear_call_arguments(message, ids, signer=ctx.signer)
        return ctx.counter.message_tokens(edited, run.scope)

    chosen = plan_clearing(
        [info.record for info in run.infos],
        limits=run.limits,
        placeholder_tokens=placeholder_tokens,
        cleared_args_tokens=cleared_args_tokens,
        # Without any store nothing can ever be saved: such results are cleared like the
        # others (in batches, keeping the prefix stable); a store that is down is different:
        # its results are kept unless the window needs them.
        unsaved=run.unsaved.keys() if run.store is not None else (),
    )
    run.plan = chosen
    return chosen


def noop(run: GuardRun, total: int, recount: Callable[[], int] | None = None) -> GuardResult:
    """The result of a run under the trigger (nothing changes).

    Args:
        run: The run.
        total: Its request's tokens (exact, or an upper bound when `recount` is given).
        recount: Counts the request exactly when `total` is only a bound (on first read).

    Returns:
        The result.
    """
    return GuardResult(
        messages=run.messages,
        overhead=run.overhead,
        counted=total,
        recount=recount,
        window=run.limits.window,
        trigger=run.limits.trigger,
        target=run.limits.target,
    )


def finish(
    ctx: PlanningContext, run: GuardRun, chosen: ClearingPlan
) -> tuple[GuardResult, list[BaseMessage]]:
    """Apply a plan: the edited request, the same-id replacements and what they replace.

    Args:
        ctx: The planning context.
        run: The run.
        chosen: The plan.

    Returns:
        The result and the state messages its replacements replace (in the same order).
    """
    edited = list(run.messages)
    result = GuardResult(
        messages=edited,
        overhead=run.overhead,
        counted=chosen.tokens_before,
        window=run.limits.window,
        trigger=run.limits.trigger,
        target=run.limits.target,
    )
    for i in chosen.clear:
        made = placeholder(ctx, run, i)
        edited[i] = made
        ident = made.id or made.tool_call_id
        result.cleared.append(ident)
        if i in run.stored:
            result.stored.append(ident)
        if i in run.unsaved:
            result.unsaved.append(ident)
    for i in chosen.relaxed:
        result.relaxed.append(run.messages[i].id or str(i))
    for i, ids in chosen.clear_args.items():
        message = edited[i]
        assert isinstance(message, AIMessage)
        edited[i] = clear_call_arguments(message, ids, signer=ctx.signer)
        result.cleared_inputs.extend(ids)
    cleared = set(chosen.clear)
    for i in run.unsaved:
        if i not in cleared:
            result.kept_unsaved.append(run.messages[i].id or str(i))
    changed = sorted(cleared | set(chosen.clear_args))
    result.replacements = [edited[i] for i in changed]
    result.tokens_after = tokens_of(ctx, run, edited)
    result.overflow = result.tokens_after > run.limits.window
    return result, [run.state[i] for i in changed]


def expire_placeholders(
    ctx: PlanningContext, run: GuardRun, result: GuardResult
) -> tuple[list[BaseMessage], list[BaseMessage]]:
    """Rewrite placeholders whose stored copy has expired (they say so, once).

    Args:
        ctx: The planning context.
        run: The run.
        result: Its result so far (updated in place).

    Returns:
        The state messages rewritten and their rewrites (empty when none expired).
    """
    now = time.time()
    if run.earliest_expiry > now:  # nothing has expired (the common case: no scan)
        return [], []
    found: dict[int, ToolMessage] = {}
    expired = [
        i
        for i, info in enumerate(run.infos)
        if info.record.cleared and info.expires_at is not None and info.expires_at <= now
    ]
    for i in expired:
        message = result.messages[i]
        if not isinstance(message, ToolMessage):
            continue
        marker = ctx.counter.marker(message)
        if not marker.get("cleared"):
            continue
        rewritten = expired_placeholder(
            message, marker, signer=ctx.signer, fetch_tool_name=ctx.fetch_tool_name, now=now
        )
        if rewritten is not None:
            found[i] = rewritten
    if not found:
        return [], []
    merge_replacements(result, found)
    result.tokens_after = tokens_of(ctx, run, result.messages)
    result.overflow = result.tokens_after > run.limits.window
    return [run.state[i] for i in found], list(found.values())
