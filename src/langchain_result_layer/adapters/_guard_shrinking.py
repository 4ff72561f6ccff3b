r"""Rendering results again with a smaller budget (one implementation for sync and async).

Two cases, both decided here without I/O:

- **unseen results that alone overflow** (many large parallel results the model has not
  seen yet, which the planner may not clear): each is rendered again from its stored raw copy
  with an equal share of the room under the trigger (or the window, when the trigger is out
  of reach);
- **kept results while clearing**: when the last `keep_last` results keep the request above
  the target after a clearing, those the model has already seen (raw copy stored) are shown
  again smaller, so that the one cache break of a clearing buys the full headroom. Their full
  text stays one fetch away.

The I/O (a store read, then rendering; or processing a raw result) is one `IOStep` per job.

Example:
    ```python
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langchain_result_layer import ResultLayer

    small = ResultLayer(context_window=4_000, store="memory")
    log = "\n".join(f"step {i}: ok" for i in range(3_000))  # two of these overflow 4k
    calls = [{"name": "read_log", "args": {}, "id": f"c{k}"} for k in range(2)]
    messages = [HumanMessage("why?", id="h"), AIMessage("", tool_calls=calls, id="a")]
    messages += [ToolMessage(log, tool_call_id=f"c{k}", name="read_log", id=f"t{k}")
                 for k in range(2)]
    result = small.budget_guard.guard(messages)  # unseen: shown smaller, not cleared
    assert result.shrunk == ["t0", "t1"] and result.tokens_after <= result.window
    ```
"""

from __future__ import annotations

import asyncio
import functools
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from langchain_result_layer.adapters._guard_run import GuardResult, GuardRun
from langchain_result_layer.adapters._messages import RequestCounter, Scope
from langchain_result_layer.adapters._sans_io import IOStep
from langchain_result_layer.core.budget import MIN_RESULT_CHARS, MIN_RESULT_TOKENS, Budget
from langchain_result_layer.pipeline import ProcessOutcome, ResultPipeline
from langchain_result_layer.stores.base import Principal, ResultStore

__all__ = [
    "CHARS_PER_SHARED_TOKEN",
    "KEPT_FLOOR_TOKENS",
    "KEPT_STEP_TOKENS",
    "RERENDER_FRAMING_TOKENS",
    "ShrinkJob",
    "shrink_jobs",
]

RERENDER_FRAMING_TOKENS = 32
"""Tokens reserved per re-rendered result for what its view's budget does not cover: the
message's framing, tool name and tool-call id, and the few tokens a fresh fence nonce or
reference may differ by."""

CHARS_PER_SHARED_TOKEN = 8
"""Character cap per token of a re-rendered result's share (the token cap binds first:
real text averages 3-4.5 characters per o200k token; 8 only stops pathological lines)."""

KEPT_FLOOR_TOKENS = 4 * MIN_RESULT_TOKENS
"""Fewest tokens a kept result is shrunk to while clearing."""

KEPT_STEP_TOKENS = 128
"""Kept results are shrunk to a multiple of this many tokens, so that a few tokens more or
less elsewhere (a random reference, a fence's nonce) give the same budget, hence the same
view."""


@dataclass(frozen=True, slots=True)
class ShrinkJob:
    """One result to render again with a smaller budget.

    Example:
        ```python
        from langchain_result_layer.core.budget import Budget
        from langchain_result_layer.stores.base import Principal

        job = ShrinkJob(0, tool_message, None, Budget(tokens=500, chars=4_000), Principal())
        outcome = job.step(layer.pipeline, None).sync()  # processes the raw content
        assert outcome is not None and outcome.view.shown_tokens <= 500
        ```
    """

    index: int
    """The result's index in the request."""

    message: ToolMessage
    """The result as it is in the request."""

    record_id: str | None
    """Its stored raw copy (`None`: render it from its content)."""

    budget: Budget
    """The share it may keep."""

    principal: Principal
    """Who reads the stored copy."""

    def step(self, pipeline: ResultPipeline, store: ResultStore | None) -> IOStep[Any]:
        """The I/O of this job: read and render again, or process the raw content.

        Args:
            pipeline: The run's pipeline.
            store: The run's store.

        Returns:
            The step (its result is a `ProcessOutcome` or `None`).
        """
        message, budget = self.message, self.budget
        if self.record_id is not None and store is not None:
            record_id = self.record_id

            def rerender(read: Any) -> ProcessOutcome | None:
                return pipeline.rerender(
                    read.data,
                    record=read.meta,
                    tool_name=message.name,
                    status=message.status,
                    budget=budget,
                )

            def sync() -> ProcessOutcome | None:
                return rerender(store.read(record_id, principal=self.principal))

            async def async_() -> ProcessOutcome | None:
                read = await store.aread(record_id, principal=self.principal)
                return await asyncio.to_thread(rerender, read)

            return IOStep(sync, async_)
        kwargs: dict[str, Any] = {
            "tool_name": message.name,
            "status": message.status,
            "tool_call_id": message.tool_call_id,
            "principal": self.principal,
            "budget": budget,
        }
        return IOStep(
            functools.partial(pipeline.process, message.content, **kwargs),
            functools.partial(pipeline.aprocess, message.content, **kwargs),
        )


def _last_ai(messages: list[BaseMessage]) -> int:
    return max((i for i, m in enumerate(messages) if isinstance(m, AIMessage)), default=-1)


def _unseen(counter: RequestCounter, messages: list[BaseMessage], scope: Scope) -> list[int]:
    return [
        i
        for i in range(_last_ai(messages) + 1, len(messages))
        if isinstance(messages[i], ToolMessage)
        and not counter.info(messages[i], scope).record.cleared
    ]


def _unseen_targets(
    counter: RequestCounter, run: GuardRun, result: GuardResult
) -> tuple[list[int], int]:
    """Unseen results to render again, and the token share each may keep."""
    unseen = _unseen(counter, result.messages, run.scope)
    if not unseen:
        return [], 0
    tokens = [info.record.tokens for info in counter.infos(result.messages, run.scope)]
    rest = result.tokens_after - sum(tokens[i] for i in unseen)
    room = RERENDER_FRAMING_TOKENS * len(unseen)
    goal = run.limits.trigger
    if rest + room + len(unseen) * 2 * MIN_RESULT_TOKENS > goal:
        goal = run.limits.window
    share = (goal - rest - room) // len(unseen)
    if share < MIN_RESULT_TOKENS:
        return [], 0
    return [i for i in unseen if tokens[i] > share], share


def _restorable(counter: RequestCounter, run: GuardRun, message: BaseMessage) -> bool:
    """Whether a result's full text stays reachable once it is shown smaller."""
    marker = counter.marker(message)
    return run.store is not None and bool(marker.get("record_id") or not marker.get("processed"))


def _kept_targets(
    counter: RequestCounter, run: GuardRun, result: GuardResult
) -> tuple[list[int], int]:
    """Seen results kept by `keep_last` to render again smaller when clearing."""
    if not result.replacements or result.tokens_after <= run.limits.target:
        return [], 0
    keep = run.limits.keep_last
    if keep <= 0:
        return [], 0
    messages = result.messages
    seen = [i for i in range(_last_ai(messages)) if isinstance(messages[i], ToolMessage)]
    infos = counter.infos(messages, run.scope)
    candidates = [
        i
        for i in seen[-keep:]
        if not infos[i].record.cleared
        and messages[i].name not in run.limits.pinned_tools
        and _restorable(counter, run, messages[i])
    ]
    if not candidates:
        return [], 0
    tokens = [info.record.tokens for info in infos]
    rest = result.tokens_after - sum(tokens[i] for i in candidates)
    room = RERENDER_FRAMING_TOKENS * len(candidates)
    share = (run.limits.target - rest - room) // len(candidates)
    share = max(share // KEPT_STEP_TOKENS * KEPT_STEP_TOKENS, KEPT_FLOOR_TOKENS)
    return [i for i in candidates if tokens[i] > share], share


def shrink_jobs(
    run: GuardRun,
    result: GuardResult,
    *,
    counter: RequestCounter,
    max_chars: int,
    kept: bool = False,
) -> list[ShrinkJob]:
    """What to render again (no I/O).

    Args:
        run: The run.
        result: Its result after clearing.
        counter: The request counter.
        max_chars: The layer's per-result character cap.
        kept: Kept results while clearing (else unseen results that overflow).

    Returns:
        The jobs.
    """
    targets, share = (
        _kept_targets(counter, run, result) if kept else _unseen_targets(counter, run, result)
    )
    if not targets:
        return []
    chars = max(MIN_RESULT_CHARS, min(max_chars, share * CHARS_PER_SHARED_TOKEN))
    budget = Budget(tokens=share, chars=chars)
    jobs = []
    for i in targets:
        message = result.messages[i]
        assert isinstance(message, ToolMessage)
        marker = counter.marker(message)
        record_id = marker.get("record_id") if run.store is not None else None
        if record_id or not marker.get("processed"):
            jobs.append(
                ShrinkJob(i, message, str(record_id) if record_id else None, budget, run.principal)
            )
    return jobs
