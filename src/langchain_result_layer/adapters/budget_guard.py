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

A guard keeps no per-request state: one instance may serve many agents, threads and tenants
at once. Counting is cached per message (scoped by principal and thread); large new text is
first bounded (a provable upper bound), and counted exactly only when the request might pass
the trigger. The result store is the layer's, or the graph's store (`runtime.store`) when the
layer has none of its own.

Example:
    ```python
    from langgraph.prebuilt import create_react_agent
    from langchain_result_layer import ResultLayer
    from langchain_result_layer.adapters.budget_guard import BudgetGuard

    layer = ResultLayer(context_window=128_000, store="sqlite:///tool_results.db")
    tools = layer.wrap_tools([search, run_sql]) + [layer.fetch_tool]
    guard = BudgetGuard(layer, system_prompt="You are a careful analyst.", tools=tools)
    agent = create_react_agent(model, tools, prompt="You are a careful analyst.",
                               pre_model_hook=guard)
    ```
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage, convert_to_messages
from langchain_core.runnables import RunnableConfig

from langchain_result_layer.adapters._decisions import DecisionMemory
from langchain_result_layer.adapters._graph_node import GraphNode, graph_store
from langchain_result_layer.adapters._markers import raw_marker
from langchain_result_layer.adapters._messages import (
    REQUEST_OVERHEAD,
    MessageInfo,
    RequestCounter,
    Scope,
    scope_of,
)
from langchain_result_layer.adapters._placeholders import (
    clear_call_arguments,
    expired_placeholder,
    make_placeholder,
)
from langchain_result_layer.config import GuardSettings
from langchain_result_layer.core.budget import MIN_RESULT_CHARS, MIN_RESULT_TOKENS, Budget
from langchain_result_layer.core.guard import ClearingPlan, GuardLimits, plan_clearing
from langchain_result_layer.core.jsonable import to_json_text
from langchain_result_layer.core.reference import Reference, new_record_id
from langchain_result_layer.errors import ContextBudgetExceeded
from langchain_result_layer.pipeline import ProcessOutcome, ResultPipeline
from langchain_result_layer.stores.base import Principal, RecordMeta, ResultStore

if TYPE_CHECKING:
    from langchain_result_layer.layer import ResultLayer

__all__ = [
    "BudgetGuard",
    "ContextBudgetWarning",
    "GuardResult",
    "make_budget_guard",
    "request_counter_for",
]

logger = logging.getLogger(__name__)

_KEPT_FLOOR = 4 * MIN_RESULT_TOKENS
"""Fewest tokens a kept result is shrunk to while clearing."""
_KEPT_STEP = 128
"""Kept results are shrunk to a multiple of this many tokens."""


class ContextBudgetWarning(UserWarning):
    """Issued when a request is sent over the window because `on_overflow="send"`.

    Example:
        ```python
        warnings.simplefilter("error", ContextBudgetWarning)
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
        request_counter_for(layer).count(messages)
        ```
    """
    return layer.request_counter


@dataclass(slots=True)
class GuardResult:
    """What one guard run did.

    Attributes:
        messages: The messages to send to the model (edited where the guard cleared).
        replacements: Same-id replacements to write back to state (empty: nothing changed).
        tokens_before: Request tokens before the guard ran.
        tokens_after: Request tokens of `messages` (recounted exactly).
        window: The context window.
        trigger: Tokens above which the guard clears.
        target: Tokens the guard clears down to.
        cleared: Ids of tool results replaced by placeholders in this run.
        cleared_inputs: Ids of tool calls whose arguments were cleared in this run.
        stored: Ids of results the guard stored itself (they had no reference).
        unsaved: Ids of results cleared although they could not be saved.
        kept_unsaved: Ids of results kept because they could not be saved.
        relaxed: Ids of recent results cleared only to fit the window.
        shrunk: Ids of unseen results rendered again with a smaller budget to fit.
        shrunk_kept: Ids of seen results among the last `keep_last` rendered again smaller
            while clearing, so that the clearing reaches the target.
        overhead: Tokens of the request outside the messages (system prompt, tool schemas,
            framing, `reserve_tokens`).
        overflow: Whether the request still exceeds the window.

    Example:
        ```python
        result = guard.guard(messages)
        assert result.tokens_after <= result.window
        ```
    """

    messages: list[BaseMessage]
    replacements: list[BaseMessage] = field(default_factory=list)
    tokens_before: int = 0
    tokens_after: int = 0
    window: int = 0
    trigger: int = 0
    target: int = 0
    cleared: list[str] = field(default_factory=list)
    cleared_inputs: list[str] = field(default_factory=list)
    stored: list[str] = field(default_factory=list)
    unsaved: list[str] = field(default_factory=list)
    kept_unsaved: list[str] = field(default_factory=list)
    relaxed: list[str] = field(default_factory=list)
    shrunk: list[str] = field(default_factory=list)
    shrunk_kept: list[str] = field(default_factory=list)
    overhead: int = 0
    overflow: bool = False

    @property
    def changed(self) -> bool:
        """Whether any message was edited."""
        return bool(self.replacements)


@dataclass(slots=True)
class _Run:
    """State of one guard run (shared by the sync and async paths)."""

    messages: list[BaseMessage]
    infos: list[MessageInfo]
    overhead: int
    limits: GuardLimits
    principal: Principal
    state: list[BaseMessage]
    """The messages as they are in graph state (before recalled decisions are applied)."""
    scope: Scope
    store: ResultStore | None
    pipeline: ResultPipeline
    refs: dict[int, str] = field(default_factory=dict)
    expires: dict[int, float | None] = field(default_factory=dict)
    pending: dict[int, Reference] = field(default_factory=dict)
    stored: set[int] = field(default_factory=set)
    unsaved: dict[int, str] = field(default_factory=dict)
    placeholders: dict[int, ToolMessage] = field(default_factory=dict)
    plan: ClearingPlan | None = None


@dataclass(frozen=True, slots=True)
class _ShrinkJob:
    """One unseen result to render again with a smaller budget."""

    index: int
    message: ToolMessage
    record_id: str | None
    budget: Budget
    principal: Principal

    def rerender_kwargs(self, record: Any) -> dict[str, Any]:
        return {
            "record": record,
            "tool_name": self.message.name,
            "status": self.message.status,
            "budget": self.budget,
        }

    def process_kwargs(self) -> dict[str, Any]:
        return {
            "tool_name": self.message.name,
            "status": self.message.status,
            "tool_call_id": self.message.tool_call_id,
            "principal": self.principal,
            "budget": self.budget,
        }


def _merge(result: GuardResult, new: Mapping[int, ToolMessage]) -> None:
    """Put same-id replacements into the request and the state update (replacing earlier ones)."""
    by_id = {m.id: k for k, m in enumerate(result.replacements)}
    for i, message in new.items():
        result.messages[i] = message
        k = by_id.get(message.id)
        if k is None:
            result.replacements.append(message)
        else:
            result.replacements[k] = message


def _messages_of(state: Any, key: str) -> list[BaseMessage]:
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
        guard = BudgetGuard(layer, system_prompt=prompt, tools=tools)
        agent = create_react_agent(model, tools, prompt=prompt, pre_model_hook=guard)
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
        self.layer = layer
        self.settings: GuardSettings = settings or layer.guard_settings
        self.system_prompt = system_prompt
        self.tools = list(tools) if tools is not None else None
        self.shrink_unseen = shrink_unseen
        self.messages_key = messages_key
        self.llm_input_key = llm_input_key
        self.counter: RequestCounter = layer.request_counter
        self.decisions = DecisionMemory()
        """What the non-destructive mode sent, by principal, thread, message id and content."""

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
        return self.layer.context_window

    def limits(self, overhead: int) -> GuardLimits:
        """The limits of a run whose request has `overhead` tokens outside the messages.

        Args:
            overhead: System prompt, tool schemas, reserve and framing tokens.

        Returns:
            The limits.
        """
        s = self.settings
        return GuardLimits.from_window(
            self.window,
            trigger_fraction=s.trigger_fraction,
            target_fraction=s.target_fraction,
            overhead=overhead,
            keep_last=s.keep_last,
            pinned_tools=s.pinned_tools,
            clear_tool_inputs=s.clear_tool_inputs,
            relax_keep_last=s.relax_keep_last,
        )

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
            return self.layer.principal_for(config)
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
    ) -> tuple[_Run, int]:
        principal = self._principal(config)
        scope = scope_of(principal)
        state = list(messages)
        msgs = self.decisions.recall(principal, state) if self.non_destructive else state
        resolved = self.layer.store_for(graph_store() if store is _GRAPH else store, config)
        infos = self.counter.infos(msgs, scope, exact=False)
        overhead = self.overhead(system=system, tools=tools)
        run = _Run(
            messages=msgs,
            infos=infos,
            overhead=overhead,
            limits=self.limits(overhead),
            principal=principal,
            state=state,
            scope=scope,
            store=resolved,
            pipeline=self.layer.pipeline.using(resolved),
        )
        total = overhead + sum(info.record.tokens for info in infos)
        if total > run.limits.trigger and not all(info.exact for info in infos):
            # Near the trigger: count exactly what was only bounded (once; it is cached).
            run.infos = self.counter.infos(msgs, scope)
            total = overhead + sum(info.record.tokens for info in run.infos)
        return run, total

    def _exact(self, messages: list[BaseMessage], scope: Scope) -> int:
        return sum(info.record.tokens for info in self.counter.infos(messages, scope))

    def _ref_for(self, run: _Run, i: int) -> str | None:
        if i in run.refs:
            return run.refs[i]
        if run.infos[i].ref is not None:
            return run.infos[i].ref
        if i in run.unsaved:
            return None
        pending = run.pending.get(i)
        if pending is None:
            kind = run.infos[i].kind if run.infos[i].kind in ("text", "json") else "text"
            pending = Reference(record_id=new_record_id(), kind=kind or "text")
            run.pending[i] = pending
        return str(pending)

    def _placeholder(self, run: _Run, i: int) -> ToolMessage:
        cached = run.placeholders.get(i)
        ref = self._ref_for(run, i)
        if cached is not None and raw_marker(cached).get("ref") == ref:
            return cached
        message = run.messages[i]
        assert isinstance(message, ToolMessage)
        info = run.infos[i]
        note = run.unsaved.get(i)
        if note is None and ref is None:
            note = info.store_error
        placeholder = make_placeholder(
            message,
            info,
            signer=self.layer.signer,
            ref=ref,
            fetch_tool_name=self.layer.fetch_tool_name,
            note=note,
            stored_now=i in run.stored or i in run.pending,
            expires_at=run.expires.get(i, info.expires_at),
        )
        run.placeholders[i] = placeholder
        return placeholder

    def _plan(self, run: _Run) -> ClearingPlan:
        def placeholder_tokens(i: int) -> int:
            return self.counter.message_tokens(self._placeholder(run, i), run.scope)

        def cleared_args_tokens(i: int, ids: tuple[str, ...]) -> int:
            message = run.messages[i]
            assert isinstance(message, AIMessage)
            edited = clear_call_arguments(message, ids, signer=self.layer.signer)
            return self.counter.message_tokens(edited, run.scope)

        plan = plan_clearing(
            [info.record for info in run.infos],
            limits=run.limits,
            placeholder_tokens=placeholder_tokens,
            cleared_args_tokens=cleared_args_tokens,
            # Without any store nothing can ever be saved: such results are cleared like the
            # others (in batches, keeping the prefix stable); a store that is down is different:
            # its results are kept unless the window needs them.
            unsaved=run.unsaved.keys() if run.store is not None else (),
        )
        run.plan = plan
        return plan

    def _to_store(self, run: _Run, plan: ClearingPlan) -> list[int]:
        return [
            i
            for i in plan.clear
            if i not in run.refs
            and run.infos[i].ref is None
            and i not in run.unsaved
            and i not in run.stored
        ]

    def _store_args(self, run: _Run, i: int) -> tuple[str, dict[str, Any]]:
        message = run.messages[i]
        assert isinstance(message, ToolMessage)
        content = message.content
        data = content if isinstance(content, str) else to_json_text(content)
        reference = run.pending[i]
        kwargs: dict[str, Any] = {
            "principal": run.principal,
            "kind": reference.kind,
            "tool_name": message.name,
            "tool_call_id": message.tool_call_id,
            "ttl_seconds": self.layer.pipeline.ttl_seconds,
            "record_id": reference.record_id,
            "extra": {"stored_by": "budget_guard"},
        }
        return data, kwargs

    @staticmethod
    def _claimed_record(run: _Run, i: int) -> str | None:
        """The record id an unverified marker names (a marker of another process or key)."""
        message = run.messages[i]
        marker = raw_marker(message)
        record_id = marker.get("record_id")
        if run.infos[i].processed or not isinstance(record_id, str) or not record_id:
            return None
        return record_id

    @staticmethod
    def _owns(run: _Run, i: int, meta: RecordMeta) -> bool:
        """Whether a stored record is the layer's own record of this very tool call."""
        message = run.messages[i]
        return bool(meta.tool_call_id) and meta.tool_call_id == getattr(
            message, "tool_call_id", None
        )

    def _stored(self, run: _Run, i: int, meta: RecordMeta) -> None:
        reference = run.pending.pop(i, None)
        kind = reference.kind if reference is not None else meta.kind
        ref = str(Reference(record_id=meta.record_id, kind=kind))
        run.refs[i] = ref
        run.expires[i] = meta.expires_at
        run.stored.add(i)
        run.placeholders.pop(i, None)

    def _adopted(self, run: _Run, i: int, meta: RecordMeta) -> None:
        """Use the store's record of this tool call instead of storing the result again."""
        run.pending.pop(i, None)
        run.refs[i] = str(Reference(record_id=meta.record_id, kind=meta.kind))
        run.expires[i] = meta.expires_at
        run.placeholders.pop(i, None)

    def _failed(self, run: _Run, i: int, exc: BaseException) -> None:
        logger.warning("budget guard could not store a result before clearing it: %s", exc)
        run.pending.pop(i, None)
        run.placeholders.pop(i, None)
        if run.store is None:
            run.unsaved[i] = "no result store is configured"
        else:
            run.unsaved[i] = f"result store unavailable: {type(exc).__name__}: {exc}"[:200]

    def _finish(self, run: _Run, plan: ClearingPlan) -> GuardResult:
        edited = list(run.messages)
        originals: list[BaseMessage] = []
        replacements: list[BaseMessage] = []
        result = GuardResult(
            messages=edited,
            overhead=run.overhead,
            tokens_before=plan.tokens_before,
            window=run.limits.window,
            trigger=run.limits.trigger,
            target=run.limits.target,
        )
        for i in plan.clear:
            placeholder = self._placeholder(run, i)
            edited[i] = placeholder
            ident = placeholder.id or placeholder.tool_call_id
            result.cleared.append(ident)
            if i in run.stored:
                result.stored.append(ident)
            if i in run.unsaved:
                result.unsaved.append(ident)
        for i in plan.relaxed:
            result.relaxed.append(run.messages[i].id or str(i))
        for i, ids in plan.clear_args.items():
            message = edited[i]
            assert isinstance(message, AIMessage)
            edited[i] = clear_call_arguments(message, ids, signer=self.layer.signer)
            result.cleared_inputs.extend(ids)
        cleared = set(plan.clear)
        for i in run.unsaved:
            if i not in cleared:
                result.kept_unsaved.append(run.messages[i].id or str(i))
        for i in sorted(cleared | set(plan.clear_args)):
            originals.append(run.state[i])
            replacements.append(edited[i])
        result.replacements = replacements
        result.tokens_after = run.overhead + self._exact(edited, run.scope)
        result.overflow = result.tokens_after > run.limits.window
        if self.non_destructive and replacements:
            self.decisions.remember(run.principal, originals, replacements)
        if replacements:
            logger.info(
                "budget guard: %d -> %d tokens (window %d): cleared %d results, %d call inputs",
                result.tokens_before,
                result.tokens_after,
                result.window,
                len(result.cleared),
                len(result.cleared_inputs),
            )
        return result

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
                stacklevel=3,
            )
            return
        raise ContextBudgetExceeded(tokens=result.tokens_after, limit=result.window, detail=detail)

    def _noop(self, run: _Run, total: int) -> GuardResult:
        return GuardResult(
            messages=run.messages,
            overhead=run.overhead,
            tokens_before=total,
            tokens_after=total,
            window=run.limits.window,
            trigger=run.limits.trigger,
            target=run.limits.target,
        )

    def _expire(self, run: _Run, result: GuardResult) -> None:
        """Rewrite placeholders whose stored copy has expired (they say so, once)."""
        now = time.time()
        found: dict[int, ToolMessage] = {}
        for i, info in enumerate(run.infos):
            if not info.record.cleared or info.expires_at is None or info.expires_at > now:
                continue
            message = result.messages[i]
            if not isinstance(message, ToolMessage):
                continue
            marker = self.counter.marker(message)
            if not marker.get("cleared"):
                continue
            rewritten = expired_placeholder(
                message,
                marker,
                signer=self.layer.signer,
                fetch_tool_name=self.layer.fetch_tool_name,
                now=now,
            )
            if rewritten is not None:
                found[i] = rewritten
        if not found:
            return
        originals = [run.state[i] for i in found]
        _merge(result, found)
        if self.non_destructive:
            self.decisions.remember(run.principal, originals, list(found.values()))
        result.tokens_after = run.overhead + self._exact(result.messages, run.scope)
        result.overflow = result.tokens_after > run.limits.window

    # ------------------------------------------------------------------ shrinking unseen results

    def _unseen(self, messages: list[BaseMessage], scope: Scope) -> list[int]:
        last_ai = max((i for i, m in enumerate(messages) if isinstance(m, AIMessage)), default=-1)
        return [
            i
            for i in range(last_ai + 1, len(messages))
            if isinstance(messages[i], ToolMessage)
            and not self.counter.info(messages[i], scope).record.cleared
        ]

    def _shrink_targets(self, run: _Run, result: GuardResult) -> tuple[list[int], int]:
        """Unseen results to render again, and the token share each may keep."""
        unseen = self._unseen(result.messages, run.scope)
        if not unseen:
            return [], 0
        tokens = [info.record.tokens for info in self.counter.infos(result.messages, run.scope)]
        rest = result.tokens_after - sum(tokens[i] for i in unseen)
        room = 32 * len(unseen)
        goal = run.limits.trigger
        if rest + room + len(unseen) * 2 * MIN_RESULT_TOKENS > goal:
            goal = run.limits.window
        share = (goal - rest - room) // len(unseen)
        if share < MIN_RESULT_TOKENS:
            return [], 0
        return [i for i in unseen if tokens[i] > share], share

    def _share_budget(self, share: int) -> Budget:
        chars = max(MIN_RESULT_CHARS, min(self.layer.result_budget.chars, share * 8))
        return Budget(tokens=share, chars=chars)

    def _shrunk(self, message: ToolMessage, outcome: ProcessOutcome | None) -> ToolMessage | None:
        if outcome is None:
            return None
        return self.layer.apply_outcome(message, outcome, extra={"shrunk_by_guard": True})

    def _apply_shrunk(
        self, run: _Run, result: GuardResult, new: dict[int, ToolMessage], *, kept: bool = False
    ) -> None:
        if not new:
            return
        if self.non_destructive:
            self.decisions.remember(
                run.principal, [run.messages[i] for i in new], list(new.values())
            )
        _merge(result, new)
        names = [message.id or str(i) for i, message in new.items()]
        (result.shrunk_kept if kept else result.shrunk).extend(names)
        result.tokens_after = run.overhead + self._exact(result.messages, run.scope)
        result.overflow = result.tokens_after > run.limits.window
        logger.info("budget guard: shrank %d %s results", len(new), "kept" if kept else "unseen")

    def _kept_targets(self, run: _Run, result: GuardResult) -> tuple[list[int], int]:
        """Seen results kept by `keep_last` to render again smaller when clearing.

        A clearing breaks the provider's prompt cache once whatever it edits, so it should buy
        as much headroom as it can: when the protected recent results keep the request above
        the target, those the model has already seen (and whose raw copy is stored) are shown
        again with an equal share of the room left under the target (never under a floor of
        `4 x MIN_RESULT_TOKENS`). Their full text stays one fetch away.
        """
        if not result.replacements or result.tokens_after <= run.limits.target:
            return [], 0
        keep = run.limits.keep_last
        if keep <= 0:
            return [], 0
        messages = result.messages
        last_ai = max((i for i, m in enumerate(messages) if isinstance(m, AIMessage)), default=-1)
        seen = [i for i in range(last_ai) if isinstance(messages[i], ToolMessage)]
        infos = self.counter.infos(messages, run.scope)
        candidates = [
            i
            for i in seen[-keep:]
            if not infos[i].record.cleared
            and messages[i].name not in run.limits.pinned_tools
            and run.store is not None
            and (
                self.counter.marker(messages[i]).get("record_id")
                or not self.counter.marker(messages[i]).get("processed")
            )
        ]
        if not candidates:
            return [], 0
        tokens = [info.record.tokens for info in infos]
        rest = result.tokens_after - sum(tokens[i] for i in candidates)
        share = (run.limits.target - rest - 32 * len(candidates)) // len(candidates)
        # In whole steps, so that a few tokens more or less elsewhere (a random reference, a
        # fence's nonce) give the same budget, hence the same view.
        share = max(share // _KEPT_STEP * _KEPT_STEP, _KEPT_FLOOR)
        return [i for i in candidates if tokens[i] > share], share

    def _shrink_jobs(
        self, run: _Run, result: GuardResult, *, kept: bool = False
    ) -> list[_ShrinkJob]:
        """What to render again (shared by the sync and async paths; no I/O)."""
        targets, share = (
            self._kept_targets(run, result) if kept else self._shrink_targets(run, result)
        )
        if not targets:
            return []
        budget = self._share_budget(share)
        jobs = []
        for i in targets:
            message = result.messages[i]
            assert isinstance(message, ToolMessage)
            marker = self.counter.marker(message)
            record_id = marker.get("record_id") if run.store is not None else None
            if record_id or not marker.get("processed"):
                jobs.append(
                    _ShrinkJob(
                        i, message, str(record_id) if record_id else None, budget, run.principal
                    )
                )
        return jobs

    def _shrink(self, run: _Run, result: GuardResult, *, kept: bool = False) -> None:
        """Render results again with smaller budgets.

        Unseen results when they alone overflow the window; kept ones (`kept=True`) when a
        clearing cannot reach the target without.
        """
        new: dict[int, ToolMessage] = {}
        pipeline, store = run.pipeline, run.store
        for job in self._shrink_jobs(run, result, kept=kept):
            try:
                if job.record_id is not None and store is not None:
                    read = store.read(job.record_id, principal=job.principal)
                    outcome = pipeline.rerender(read.data, **job.rerender_kwargs(read.meta))
                else:
                    outcome = pipeline.process(job.message.content, **job.process_kwargs())
            except Exception as exc:  # the guard must never break the agent
                logger.warning("budget guard could not shrink an unseen result: %s", exc)
                continue
            self._collect_shrunk(new, job, outcome, run.scope)
        self._apply_shrunk(run, result, new, kept=kept)

    async def _ashrink(self, run: _Run, result: GuardResult, *, kept: bool = False) -> None:
        """Async twin of `_shrink` (store reads async, rendering in a worker thread)."""
        new: dict[int, ToolMessage] = {}
        pipeline, store = run.pipeline, run.store
        for job in self._shrink_jobs(run, result, kept=kept):
            try:
                if job.record_id is not None and store is not None:
                    read = await store.aread(job.record_id, principal=job.principal)
                    outcome = await asyncio.to_thread(
                        functools.partial(
                            pipeline.rerender, read.data, **job.rerender_kwargs(read.meta)
                        )
                    )
                else:
                    outcome = await pipeline.aprocess(job.message.content, **job.process_kwargs())
            except Exception as exc:  # the guard must never break the agent
                logger.warning("budget guard could not shrink an unseen result: %s", exc)
                continue
            self._collect_shrunk(new, job, outcome, run.scope)
        self._apply_shrunk(run, result, new, kept=kept)

    def _collect_shrunk(
        self,
        new: dict[int, ToolMessage],
        job: _ShrinkJob,
        outcome: ProcessOutcome | None,
        scope: Scope,
    ) -> None:
        shrunk = self._shrunk(job.message, outcome)
        if shrunk is not None and self.counter.message_tokens(
            shrunk, scope
        ) < self.counter.message_tokens(job.message, scope):
            new[job.index] = shrunk

    # ------------------------------------------------------------------ public API

    def guard(
        self,
        messages: Sequence[BaseMessage],
        *,
        config: RunnableConfig | None = None,
        system: str | BaseMessage | None = None,
        tools: Sequence[Any] | None = None,
        store: object = None,
    ) -> GuardResult:
        """Run the guard on a request.

        Args:
            messages: The conversation (state messages).
            config: The runnable config (principal and thread of the run).
            system: The system prompt sent apart from the messages (default: the guard's).
            tools: The tools bound to the model (default: the guard's).
            store: The graph's store for this run (`runtime.store`), used when the layer has
                no store of its own (default: the current graph run's, if any).

        Returns:
            What to send and what to write back.

        Raises:
            ContextBudgetExceeded: When the request cannot fit the window and
                `on_overflow="raise"`.

        Example:
            ```python
            result = guard.guard(state["messages"])
            state_update = {"messages": result.replacements}
            ```
        """
        run, total = self._start(
            messages,
            config=config,
            system=system,
            tools=tools,
            store=_GRAPH if store is None else store,
        )
        if total <= run.limits.trigger:
            result = self._noop(run, total)
        else:
            plan = self._plan(run)
            for _ in range(len(run.messages) + 1):
                todo = self._to_store(run, plan)
                if not todo:
                    break
                for i in todo:
                    self._store_one(run, i)
                plan = self._plan(run)
            result = self._finish(run, plan)
            self._shrink(run, result, kept=True)
            if result.overflow and self.shrink_unseen:
                self._shrink(run, result)
        self._expire(run, result)
        self._check_overflow(result)
        return result

    async def aguard(
        self,
        messages: Sequence[BaseMessage],
        *,
        config: RunnableConfig | None = None,
        system: str | BaseMessage | None = None,
        tools: Sequence[Any] | None = None,
        store: object = None,
    ) -> GuardResult:
        """Async twin of `guard` (stores results with the store's async API).

        Args:
            messages: The conversation.
            config: The runnable config.
            system: The system prompt sent apart from the messages.
            tools: The tools bound to the model.
            store: The graph's store for this run (see `guard`).

        Returns:
            What to send and what to write back.

        Example:
            ```python
            result = await guard.aguard(state["messages"])
            ```
        """
        run, total = self._start(
            messages,
            config=config,
            system=system,
            tools=tools,
            store=_GRAPH if store is None else store,
        )
        if total <= run.limits.trigger:
            result = self._noop(run, total)
        else:
            plan = self._plan(run)
            for _ in range(len(run.messages) + 1):
                todo = self._to_store(run, plan)
                if not todo:
                    break
                for i in todo:
                    await self._astore_one(run, i)
                plan = self._plan(run)
            result = self._finish(run, plan)
            await self._ashrink(run, result, kept=True)
            if result.overflow and self.shrink_unseen:
                await self._ashrink(run, result)
        self._expire(run, result)
        self._check_overflow(result)
        return result

    def _store_one(self, run: _Run, i: int) -> None:
        store = run.store
        if store is None:
            self._failed(run, i, RuntimeError("no store"))
            return
        claimed = self._claimed_record(run, i)
        if claimed is not None:
            try:
                meta = store.info(claimed, principal=run.principal)
            except Exception:  # not ours, gone, or another principal's: store it anew
                meta = None
            if meta is not None and self._owns(run, i, meta):
                self._adopted(run, i, meta)
                return
        self._ref_for(run, i)
        data, kwargs = self._store_args(run, i)
        try:
            meta = store.put(data, **kwargs)
        except Exception as exc:  # the store must never break the agent
            self._failed(run, i, exc)
            return
        self._stored(run, i, meta)

    async def _astore_one(self, run: _Run, i: int) -> None:
        store = run.store
        if store is None:
            self._failed(run, i, RuntimeError("no store"))
            return
        claimed = self._claimed_record(run, i)
        if claimed is not None:
            try:
                meta = await store.ainfo(claimed, principal=run.principal)
            except Exception:  # not ours, gone, or another principal's: store it anew
                meta = None
            if meta is not None and self._owns(run, i, meta):
                self._adopted(run, i, meta)
                return
        self._ref_for(run, i)
        data, kwargs = self._store_args(run, i)
        try:
            meta = await store.aput(data, **kwargs)
        except Exception as exc:  # the store must never break the agent
            self._failed(run, i, exc)
            return
        self._stored(run, i, meta)

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
        messages = _messages_of(state, self.messages_key)
        return self._update(state, self.guard(messages, config=config))

    async def arun(self, state: Any, config: RunnableConfig) -> Any:
        """Async twin of `run`.

        Args:
            state: The graph state.
            config: The node's config.

        Returns:
            The state update.
        """
        messages = _messages_of(state, self.messages_key)
        return self._update(state, await self.aguard(messages, config=config))


_GRAPH = object()
"""Sentinel: use the store of the current graph run (when the layer has none of its own)."""


def make_budget_guard(layer: ResultLayer) -> BudgetGuard:
    """The layer's default guard (`layer.budget_guard`; `BudgetGuard(layer, ...)` for options).

    Args:
        layer: The layer.

    Returns:
        The guard (one per layer).

    Example:
        ```python
        agent = create_react_agent(model, tools, pre_model_hook=make_budget_guard(layer))
        ```
    """
    return layer.budget_guard
