"""The global budget guard: a pre-model hook for `create_react_agent`, also a graph node.

Before each model call the guard counts the request as the model will see it (system prompt,
messages with their tool calls, tool schemas) with the layer's token counter, caching each
message's count so a call costs O(new messages). When the request passes the trigger (75% of
the window by default) it replaces the oldest tool results the model has already seen with
one-line placeholders that keep their reference, until the request is under the target (40%
by default). The placeholders are written back to graph state under the same message ids, so
the decision sticks: the next calls send the same prefix and the provider's prompt cache
keeps hitting. See `langchain_result_layer.core.guard` for the exact rules.

Modes:

- **default (sticky)**: the node returns `{"messages": [same-id replacements]}`; the
  `add_messages` reducer replaces them in state.
- **non-destructive** (`GuardSettings(non_destructive=True)`): state is never edited; the
  node returns `{"llm_input_messages": [...]}`, the input `create_react_agent` sends to the
  model instead of `messages`. Decisions are remembered in memory, keyed by the run's principal
  and thread, the message id and its content, so the prefix stays stable while the process
  lives, but the full history stays in state (and in checkpoints).

The guard is split by concern: `_guard_run` (the state of one run and its `GuardResult`),
`_guard_planning` (placeholders, the plan, applying it, expiry: no I/O), `_guard_storing`
(saving raw results before they are cleared), `_guard_shrinking` (rendering results again
smaller), `_messages` (counting, cached per message), `_decisions` (the non-destructive memory);
this module holds the settings, the run's order and the node I/O. Steps that need I/O yield it
(`_sans_io`), so `guard` and `aguard` share one implementation of every decision.

A guard keeps no per-request state: one instance may serve many agents, threads and tenants
at once. Counting is cached per message (scoped by principal and thread); large new text is
first bounded (a provable upper bound), and counted exactly only when the request might pass
the trigger. The result store is the layer's, or the graph's store (`runtime.store`) when the
layer has none of its own.

Example:
    ```python
    from langchain_result_layer.adapters.budget_guard import BudgetGuard

    guard = BudgetGuard(layer, system_prompt="You are a careful analyst.", tools=[layer.fetch_tool])
    assert guard.overhead() > 0  # the prompt and the tool schema are counted
    # As a node before the model of a custom StateGraph, or LangGraph's (deprecated)
    # create_react_agent(model, tools, prompt=..., pre_model_hook=guard).
    update = guard.run({"messages": [("user", "Why did the build fail?")]}, {})
    assert update == {}  # far under the trigger: nothing to write back
    ```
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypedDict

from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.runnables import RunnableConfig

from langchain_result_layer.adapters._context import GuardContext
from langchain_result_layer.adapters._decisions import DecisionMemory
from langchain_result_layer.adapters._graph_node import GraphNode, graph_store
from langchain_result_layer.adapters._guard_planning import (
    expire_placeholders,
    finish,
    noop,
    plan,
    tokens_of,
)
from langchain_result_layer.adapters._guard_run import (
    GuardResult,
    GuardRun,
    merge_replacements,
    messages_of,
)
from langchain_result_layer.adapters._guard_shrinking import shrink_jobs
from langchain_result_layer.adapters._guard_storing import (
    results_to_store,
    store_result,
)
from langchain_result_layer.adapters._messages import (
    REQUEST_OVERHEAD,
    RequestCounter,
    scope_of,
)
from langchain_result_layer.adapters._sans_io import Steps, adrive, drive
from langchain_result_layer.config import GuardSettings
from langchain_result_layer.core.guard import GuardLimits
from langchain_result_layer.errors import ContextBudgetExceeded
from langchain_result_layer.stores.base import Principal

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from langchain_result_layer.layer import ResultLayer

__all__ = [
    "BudgetGuard",
    "ContextBudgetWarning",
    "GuardCall",
    "GuardResult",
    "make_budget_guard",
    "request_counter_for",
]

logger = logging.getLogger(__name__)


class GuardCall(TypedDict, total=False):
    """What one `BudgetGuard.guard` / `aguard` call takes besides the messages (all optional).

    Example:
        ```python
        call: GuardCall = {"system": "Be brief.", "tools": [layer.fetch_tool]}
        assert not layer.budget_guard.guard([tool_message], **call).changed
        ```
    """

    config: RunnableConfig | None
    """The runnable config (principal and thread of the run)."""
    system: str | BaseMessage | None
    """The system prompt sent apart from the messages (default: the guard's)."""
    tools: Sequence[Any] | None
    """The tools bound to the model (default: the guard's)."""
    store: object
    """The graph's store for this run (`runtime.store`), used when the layer has no store of
    its own (default: the current graph run's, if any)."""


class ContextBudgetWarning(UserWarning):
    """Issued when a request is sent over the window because `on_overflow="send"`.

    Example:
        ```python
        from langchain_result_layer import GuardSettings

        settings = GuardSettings(on_overflow="send")  # warn (this class) instead of raising
        assert settings.on_overflow == "send" and issubclass(ContextBudgetWarning, UserWarning)
        ```
    """


def request_counter_for(layer: ResultLayer) -> RequestCounter:
    """The request counter shared by every guard of a layer (one cache per layer).

    Args:
        layer: The layer.

    Returns:
        Its `RequestCounter`.

    Example:
        ```python
        from langchain_core.messages import HumanMessage

        counter = request_counter_for(layer)
        assert counter is layer.request_counter  # one cache per layer
        assert counter.count([HumanMessage("hello", id="h1")]) > 0
        ```
    """
    return layer.request_counter


class BudgetGuard(GraphNode):
    """Keeps every model request under the context window (sync and async node).

    Use it as `create_react_agent(..., pre_model_hook=guard)`, as a node of a custom
    `StateGraph` right before the model node, or call `guard.guard(messages)` directly. It
    keeps no per-request state, so one instance may serve many agents, threads and tenants.

    Args:
        layer: The result layer (window, token counter, store, guard settings).
        system_prompt: The system prompt the model receives apart from `messages` (for
            example `create_react_agent`'s `prompt`), so it is counted.
        tools: The tools bound to the model, so their schemas are counted.
        settings: Guard settings for this guard (default: the layer's `guard=` settings;
            `GuardSettings` is the one place for them, including `non_destructive`).
        shrink_unseen: When results the model has not seen yet would alone overflow the
            window (many large parallel results), render them again from the store with an
            equal, smaller share each instead of failing.
        messages_key: State key of the messages.
        llm_input_key: State key the non-destructive mode writes (`create_react_agent`
            reads `llm_input_messages`).
        name: Node name.

    Example:
        ```python
        from langchain_result_layer import GuardSettings

        strict = BudgetGuard(layer, system_prompt="Be brief.", settings=GuardSettings(keep_last=1))
        result = strict.guard([tool_message])
        assert result.window == layer.context_window and not result.changed
        ```
    """

    def __init__(
        self,
        layer: ResultLayer,
        *,
        system_prompt: str | BaseMessage | None = None,
        tools: Sequence[Any] | None = None,
        settings: GuardSettings | None = None,
        shrink_unseen: bool = True,
        messages_key: str = "messages",
        llm_input_key: str = "llm_input_messages",
        name: str = "budget_guard",
    ) -> None:
        super().__init__(name=name)
        given: object = settings
        if given is not None and not isinstance(given, GuardSettings):
            msg = f"settings must be a GuardSettings, got {type(given).__name__}"
            raise TypeError(msg)
        self.context = GuardContext.of(layer)
        """What the guard uses of its layer (window, counter, store and pipeline access)."""
        self.settings: GuardSettings = settings or self.context.settings
        self.system_prompt = system_prompt
        self.tools = list(tools) if tools is not None else None
        self.shrink_unseen = shrink_unseen
        self.messages_key = messages_key
        self.llm_input_key = llm_input_key
        self.counter: RequestCounter = self.context.counter
        self.decisions = DecisionMemory()
        """What the non-destructive mode sent, by principal, thread, message id and content."""
        self._planning = self.context.planning

    @property
    def non_destructive(self) -> bool:
        """Whether the guard edits only the model input (`settings.non_destructive`)."""
        return self.settings.non_destructive

    @property
    def relax_keep_last(self) -> bool:
        """Whether seen results among the last `keep_last` may be cleared to fit the window."""
        return self.settings.relax_keep_last

    # ------------------------------------------------------------------ limits

    @property
    def window(self) -> int:
        """The context window in tokens."""
        return self.context.window

    def limits(self, overhead: int) -> GuardLimits:
        """The limits of a run whose request has `overhead` tokens outside the messages.

        Args:
            overhead: System prompt, tool schemas, reserve and framing tokens.

        Returns:
            The limits.
        """
        return self.settings.limits(self.window, overhead=overhead)

    def overhead(
        self, *, system: str | BaseMessage | None = None, tools: Sequence[Any] | None = None
    ) -> int:
        """Tokens of the request outside the messages.

        Args:
            system: The system prompt (default: the guard's `system_prompt`).
            tools: The tool schemas (default: the guard's `tools`).

        Returns:
            Framing, system prompt, tool schemas and `reserve_tokens`.
        """
        system = self.system_prompt if system is None else system
        tools = self.tools if tools is None else tools
        return (
            REQUEST_OVERHEAD
            + self.counter.system_tokens(system)
            + self.counter.tools_tokens(tools)
            + self.settings.reserve_tokens
        )

    # ------------------------------------------------------------------ planning (pure)

    def _principal(self, config: RunnableConfig | None) -> Principal:
        try:
            return self.context.principal_for(config)
        except Exception as exc:  # a broken resolver must not break the agent
            logger.warning("budget guard: principal resolution failed: %s", exc)
            return Principal()

    def _start(
        self,
        messages: Sequence[BaseMessage],
        *,
        config: RunnableConfig | None,
        system: str | BaseMessage | None,
        tools: Sequence[Any] | None,
        store: object,
    ) -> tuple[GuardRun, int, bool]:
        """The run of a request, its tokens and whether they are exact (else a bound)."""
        principal = self._principal(config)
        scope = scope_of(principal)
        state = list(messages)
        msgs = self.decisions.recall(principal, state) if self.non_destructive else state
        resolved = self.context.store_for(graph_store() if store is _GRAPH else store, config)
        survey = self.counter.survey(msgs, scope, exact=False)
        overhead = self.overhead(system=system, tools=tools)
        run = GuardRun(
            messages=msgs,
            infos=survey.infos,
            overhead=overhead,
            limits=self.limits(overhead),
            principal=principal,
            state=state,
            scope=scope,
            store=resolved,
            pipeline=self.context.pipeline.using(resolved),
            earliest_expiry=survey.earliest_expiry,
        )
        total = overhead + survey.tokens
        if total > run.limits.trigger and not survey.exact:
            # Near the trigger: count exactly what was only bounded (once; it is cached).
            survey = self.counter.refine(survey, msgs, scope)
            run.infos = survey.infos
            total = overhead + survey.tokens
        return run, total, survey.exact

    def _recount(self, run: GuardRun) -> Callable[[], int]:
        """Counts `run`'s request exactly, later (only if someone reads its token figures)."""
        messages, counter = list(run.messages), self.counter

        def count() -> int:
            return run.overhead + counter.survey(messages, run.scope).tokens

        return count

    def _check_overflow(self, result: GuardResult) -> None:
        if not result.overflow:
            return
        if result.overhead >= result.window:
            detail = (
                f"the system prompt, tool schemas and reserved tokens alone take "
                f"{result.overhead:,} tokens; shorten them or use a model with a larger window"
            )
        else:
            detail = (
                f"after clearing {len(result.cleared)} results and {len(result.cleared_inputs)} "
                f"tool-call inputs (and shrinking {len(result.shrunk)} new results), what remains "
                "is protected (results the model has not seen yet, pinned tools) or could not be "
                f"saved; the system prompt, tool schemas and reserve take {result.overhead:,} "
                "tokens"
            )
        if self.settings.on_overflow == "send":
            warnings.warn(
                f"Sending a request of {result.tokens_after:,} tokens over the "
                f"{result.window:,}-token window: {detail}",
                ContextBudgetWarning,
                stacklevel=_WARN_STACKLEVEL,
            )
            return
        raise ContextBudgetExceeded(tokens=result.tokens_after, limit=result.window, detail=detail)

    def _remember(
        self, run: GuardRun, originals: list[BaseMessage], sent: list[BaseMessage]
    ) -> None:
        """In the non-destructive mode, what was sent instead of `originals` (to send it again)."""
        if self.non_destructive and sent:
            self.decisions.remember(run.principal, originals, sent)

    # ------------------------------------------------------------------ shrinking

    def _shrink(self, run: GuardRun, result: GuardResult, *, kept: bool = False) -> Steps[None]:
        """Render results again with smaller budgets (see `_guard_shrinking`).

        Unseen results when they alone overflow the window; kept ones (`kept=True`) when a
        clearing cannot reach the target without.
        """
        new: dict[int, ToolMessage] = {}
        jobs = shrink_jobs(
            run,
            result,
            counter=self.counter,
            max_chars=self.context.max_chars,
            kept=kept,
        )
        for job in jobs:
            try:
                outcome = yield job.step(run.pipeline, run.store)
            except Exception as exc:  # the guard must never break the agent
                logger.warning("budget guard could not shrink a result: %s", exc)
                continue
            shrunk = (
                self.context.apply_outcome(job.message, outcome, extra={"shrunk_by_guard": True})
                if outcome is not None
                else None
            )
            if shrunk is not None and self.counter.message_tokens(
                shrunk, run.scope
            ) < self.counter.message_tokens(job.message, run.scope):
                new[job.index] = shrunk
        if not new:
            return
        self._remember(run, [run.messages[i] for i in new], list(new.values()))
        merge_replacements(result, new)
        names = [message.id or str(i) for i, message in new.items()]
        (result.shrunk_kept if kept else result.shrunk).extend(names)
        result.tokens_after = tokens_of(self._planning, run, result.messages)
        result.overflow = result.tokens_after > run.limits.window
        logger.info("budget guard: shrank %d %s results", len(new), "kept" if kept else "unseen")

    # ------------------------------------------------------------------ public API

    def _steps(
        self,
        messages: Sequence[BaseMessage],
        *,
        config: RunnableConfig | None = None,
        system: str | BaseMessage | None = None,
        tools: Sequence[Any] | None = None,
        store: object = None,
    ) -> Steps[GuardResult]:
        """One guard run, its I/O yielded (`guard` and `aguard` drive it)."""
        run, total, exact = self._start(
            messages,
            config=config,
            system=system,
            tools=tools,
            store=_GRAPH if store is None else store,
        )
        ctx = self._planning
        if total <= run.limits.trigger:
            result = noop(run, total, None if exact else self._recount(run))
        else:
            chosen = plan(ctx, run)
            for _ in range(len(run.messages) + 1):
                todo = results_to_store(run, chosen)
                if not todo:
                    break
                for i in todo:
                    yield from store_result(run, i, ttl_seconds=self.context.ttl_seconds)
                chosen = plan(ctx, run)
            result, originals = finish(ctx, run, chosen)
            self._remember(run, originals, result.replacements)
            if result.replacements:
                logger.info(
                    "budget guard: %d -> %d tokens (window %d): cleared %d results, %d call inputs",
                    result.tokens_before,
                    result.tokens_after,
                    result.window,
                    len(result.cleared),
                    len(result.cleared_inputs),
                )
            yield from self._shrink(run, result, kept=True)
            if result.overflow and self.shrink_unseen:
                yield from self._shrink(run, result)
        self._remember(run, *expire_placeholders(ctx, run, result))
        self._check_overflow(result)
        return result

    def guard(self, messages: Sequence[BaseMessage], **call: Unpack[GuardCall]) -> GuardResult:
        """Run the guard on a request.

        Args:
            messages: The conversation (state messages).
            **call: The run's config, system prompt, bound tools and graph store
                (`GuardCall`; each defaults to the guard's own or the current graph run's).

        Returns:
            What to send and what to write back.

        Raises:
            ContextBudgetExceeded: When the request cannot fit the window and
                `on_overflow="raise"`.

        Example:
            ```python
            result = layer.budget_guard.guard([tool_message])
            state_update = {"messages": result.replacements}  # what a node returns
            assert result.tokens_before == result.tokens_after  # under the trigger
            ```
        """
        return drive(self._steps(messages, **call))

    async def aguard(
        self, messages: Sequence[BaseMessage], **call: Unpack[GuardCall]
    ) -> GuardResult:
        """Async twin of `guard` (same arguments; the store's async API, rendering in a thread).

        Example:
            ```python
            result = await layer.budget_guard.aguard([tool_message])
            assert not result.changed
            ```
        """
        return await adrive(self._steps(messages, **call))

    # ------------------------------------------------------------------ node

    def _update(self, state: Any, result: GuardResult) -> Any:
        if self.non_destructive:
            if isinstance(state, list):
                msg = "budget guard: non_destructive needs a dict state (llm_input_messages)"
                raise ValueError(msg)
            return {self.llm_input_key: result.messages}
        if not result.replacements:
            return [] if isinstance(state, list) else {}
        missing = [m for m in result.replacements if m.id is None]
        if missing:
            msg = (
                "budget guard: messages without ids cannot be replaced in state; use the "
                "add_messages reducer (it assigns ids) or GuardSettings(non_destructive=True)"
            )
            raise ValueError(msg)
        if isinstance(state, list):  # a graph whose whole state is the message list
            return result.replacements
        return {self.messages_key: result.replacements}

    def run(self, state: Any, config: RunnableConfig) -> Any:
        """The node: guard the state's messages and return the state update.

        Args:
            state: The graph state.
            config: The node's config.

        Returns:
            Same-id replacements (or `llm_input_messages` in the non-destructive mode).
        """
        messages = messages_of(state, self.messages_key)
        return self._update(state, self.guard(messages, config=config))

    async def arun(self, state: Any, config: RunnableConfig) -> Any:
        """Async twin of `run` (same arguments and update)."""
        messages = messages_of(state, self.messages_key)
        return self._update(state, await self.aguard(messages, config=config))


_GRAPH = object()
"""Sentinel: use the store of the current graph run (when the layer has none of its own)."""

_WARN_STACKLEVEL = 5
"""`ContextBudgetWarning` points at the caller of `guard`/`aguard` (through the driver)."""


def make_budget_guard(layer: ResultLayer) -> BudgetGuard:
    """The layer's default guard (`layer.budget_guard`; `BudgetGuard(layer, ...)` for options).

    Args:
        layer: The layer.

    Returns:
        The guard (one per layer).

    Example:
        ```python
        assert make_budget_guard(layer) is layer.budget_guard
        ```
    """
    return layer.budget_guard
