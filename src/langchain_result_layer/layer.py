"""`ResultLayer`: configure once, get every adapter.

Example:
    ```python
    from langchain_result_layer import ResultLayer

    layer = ResultLayer(context_window=128_000, store="sqlite:///tool_results.db")
    tools = layer.wrap_tools([search, run_sql, read_log]) + [layer.fetch_tool]
    agent = create_react_agent(model, tools, pre_model_hook=layer.budget_guard)
    agent = create_agent(model, [search, run_sql], middleware=[layer.middleware()])
    graph.add_node("truncate", layer.truncation_node)
    msg = layer.process_tool_message(tool_message)
    ```
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_result_layer.config import GuardSettings, ToolPolicy, coerce_policy
from langchain_result_layer.core.budget import (
    DEFAULT_MAX_RESULT_CHARS,
    DEFAULT_RESULT_FRACTION,
    Budget,
    result_budget,
)
from langchain_result_layer.core.render import DEFAULT_FETCH_TOOL_NAME
from langchain_result_layer.core.tokens import TokenCounter, resolve_token_counter
from langchain_result_layer.core.view import ResultView
from langchain_result_layer.pipeline import META_KEY, ProcessOutcome, ResultPipeline
from langchain_result_layer.principal import PrincipalResolver, resolve_principal_spec
from langchain_result_layer.stores import resolve_store
from langchain_result_layer.stores.base import Principal, ResultStore
from langchain_result_layer.summarize import ResultSummarizer, SummarySettings

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage, ToolMessage
    from langchain_core.runnables import RunnableConfig
    from langchain_core.tools import BaseTool

__all__ = ["ResultLayer", "window_from_model"]


def window_from_model(model: object) -> int | None:
    """The input window of a chat model from its `profile["max_input_tokens"]`, if known.

    Args:
        model: A LangChain chat model (or anything with a `profile` mapping).

    Returns:
        The window in tokens, or `None`.

    Example:
        ```python
        window_from_model(object())  # None
        ```
    """
    profile = getattr(model, "profile", None)
    if isinstance(profile, Mapping):
        value = profile.get("max_input_tokens")
        if isinstance(value, int) and value > 0:
            return value
    return None


def _model_name(model: object) -> str | None:
    for attr in ("model_name", "model", "model_id"):
        value = getattr(model, attr, None)
        if isinstance(value, str) and value:
            return value
    return None


def _check_policies(policies: Mapping[str, ToolPolicy], window: int) -> None:
    """Refuse policies that cannot work: unknown view kinds, caps over the window."""
    from langchain_result_layer.views import registered_views  # noqa: PLC0415

    kinds = registered_views()
    for name, policy in policies.items():
        if policy.kind is not None and policy.kind not in kinds:
            msg = (
                f"tool_policies[{name!r}]: unknown view kind {policy.kind!r}; "
                f"known kinds: {', '.join(sorted(kinds))} (or register_view your own)"
            )
            raise ValueError(msg)
        if policy.max_tokens is not None and policy.max_tokens > window:
            msg = (
                f"tool_policies[{name!r}]: max_tokens={policy.max_tokens:,} is larger than the "
                f"{window:,}-token context window"
            )
            raise ValueError(msg)
        if policy.ttl_seconds is not None and policy.ttl_seconds <= 0:
            msg = f"tool_policies[{name!r}]: ttl_seconds must be positive"
            raise ValueError(msg)


class ResultLayer:
    """The façade: one configuration, every integration.

    Args:
        context_window: The model's input window in tokens. Optional when `model` has a
            `profile["max_input_tokens"]`.
        model: The chat model; used for the window (its profile) and the tokenizer choice.
        max_result_tokens: Token cap of one result's view (default: 30% of the window).
        max_result_chars: Character cap of one result's view (default: 400,000).
        result_fraction: Share of the window one result may take when no cap is given.
        store: Where raw results go: a `ResultStore`, `"memory"` (default), a SQLAlchemy URL
            (`"sqlite:///tool_results.db"`, `"postgresql+psycopg://..."`), an `Engine`, a
            LangGraph `BaseStore`, or `False` for no storage.
        token_counter: `"auto"` (exact tiktoken when its data is local, else a calibrated
            estimate), `"tiktoken"`, `"approximate"`, an encoding name, a chat model, a
            `TokenCounter` or a `str -> int` callable.
        tool_policies: Per-tool overrides (`ToolPolicy` or dicts), by tool name; `"*"` sets
            the default.
        principal: How to read the principal from a `RunnableConfig`: a
            `PrincipalResolver` or a callback `config -> Principal`.
        guard: Budget guard settings.
        fetch_tool_name: Name of the fetch tool.
        image_tokens: Fixed cost of one image or other non-text block.
        store_small_results: Also store results that pass through unchanged, so the guard can
            restore every result it clears.
        ttl_seconds: Lifetime of stored results (`None`: the store's default of 7 days).
        summarizer: A chat model that writes summaries of large results, placed above the
            deterministic view (off by default; see `summarize.py`).
        summary: When and how results are summarised (`SummarySettings`).
        turn_fraction: Share of the window that all results of one model turn may take
            together: `n` parallel tool calls each get at most `turn_fraction / n` of the
            window (and never more than `max_result_tokens`).

    Attributes:
        context_window: The model's input window in tokens (resolved from `model` if needed).
        result_budget: The per-result `Budget` (`tokens`, `chars`) every view fits.
        token_counter: The `TokenCounter` every bound is measured with (`.name`, `.exact`,
            `.count(text)`).
        store: The `ResultStore` holding the raw results (`None` with `store=False`);
            `store.read(record_id, principal=..., start_line=..., end_line=...)` returns them
            exactly.
        tool_policies: The per-tool `ToolPolicy` overrides, by tool name.
        principal_resolver: Reads the `Principal` (tenant, user, thread) from a config.
        guard_settings: The budget guard's `GuardSettings` (trigger and target fractions,
            `keep_last`, ...).
        fetch_tool: The `fetch_tool_result` tool (a property; one per layer).

    Example:
        ```python
        layer = ResultLayer(context_window=16_000, max_result_tokens=2_000, store="memory")
        assert layer.result_budget.tokens == 2_000
        ```
    """

    def __init__(
        self,
        *,
        context_window: int | None = None,
        model: object | None = None,
        max_result_tokens: int | None = None,
        max_result_chars: int | None = None,
        result_fraction: float = DEFAULT_RESULT_FRACTION,
        store: object = None,
        token_counter: object = "auto",
        tool_policies: Mapping[str, ToolPolicy | Mapping[str, Any]] | None = None,
        principal: PrincipalResolver | Callable[[Mapping[str, Any]], Principal] | None = None,
        guard: GuardSettings | None = None,
        fetch_tool_name: str = DEFAULT_FETCH_TOOL_NAME,
        image_tokens: int = 1_600,
        store_small_results: bool = True,
        ttl_seconds: float | None = None,
        summarizer: object | None = None,
        summary: SummarySettings | None = None,
        turn_fraction: float = 0.5,
    ) -> None:
        window = context_window if context_window is not None else window_from_model(model)
        if window is None:
            msg = (
                "ResultLayer needs context_window=..., or a model whose "
                "profile['max_input_tokens'] is set"
            )
            raise ValueError(msg)
        if not 0 < turn_fraction <= 1:
            msg = f"turn_fraction must be in (0, 1], got {turn_fraction}"
            raise ValueError(msg)
        self.context_window: int = window
        self.model = model
        self.result_budget: Budget = result_budget(
            context_window=window,
            max_result_tokens=max_result_tokens,
            max_result_chars=max_result_chars
            if max_result_chars is not None
            else DEFAULT_MAX_RESULT_CHARS,
            fraction=result_fraction,
        )
        spec = model if token_counter == "model" else token_counter
        self.token_counter: TokenCounter = resolve_token_counter(
            spec, model_name=_model_name(model) if model is not None else None
        )
        self.store: ResultStore | None = resolve_store(store)
        if ttl_seconds is not None and ttl_seconds <= 0:
            msg = f"ttl_seconds must be positive (None: the store's default), got {ttl_seconds}"
            raise ValueError(msg)
        self.tool_policies: dict[str, ToolPolicy] = {
            name: coerce_policy(p) for name, p in (tool_policies or {}).items()
        }
        _check_policies(self.tool_policies, window)
        self.principal_resolver: PrincipalResolver = resolve_principal_spec(principal)
        pinned = {name for name, p in self.tool_policies.items() if p.pinned}
        settings = guard or GuardSettings()
        if pinned - settings.pinned_tools:
            from dataclasses import replace  # noqa: PLC0415

            settings = replace(settings, pinned_tools=frozenset(settings.pinned_tools | pinned))
        self.guard_settings: GuardSettings = settings
        self.fetch_tool_name = fetch_tool_name
        self.image_tokens = image_tokens
        self.pipeline = ResultPipeline(
            budget=self.result_budget,
            counter=self.token_counter,
            store=self.store,
            policies=self.tool_policies,
            fetch_tool_name=fetch_tool_name,
            image_tokens=image_tokens,
            store_small_results=store_small_results,
            ttl_seconds=ttl_seconds,
            turn_tokens=max(1, int(window * turn_fraction)),
            summarizer=(
                ResultSummarizer(
                    model=summarizer,
                    settings=summary or SummarySettings(),
                    counter=self.token_counter,
                )
                if summarizer is not None
                else None
            ),
        )
        self._lock = threading.Lock()
        self._fetch_tool: BaseTool | None = None

    # ------------------------------------------------------------------ construction helpers

    @classmethod
    def from_model(cls, model: object, **kwargs: Any) -> ResultLayer:
        """Build a layer whose window comes from `model.profile["max_input_tokens"]`.

        Args:
            model: The chat model.
            **kwargs: Other `ResultLayer` arguments.

        Returns:
            The layer.

        Example:
            ```python
            layer = ResultLayer.from_model(model, store="sqlite:///results.db")  # doctest: +SKIP
            ```
        """
        return cls(model=model, **kwargs)

    def __repr__(self) -> str:
        return (
            f"ResultLayer(context_window={self.context_window}, "
            f"result_budget={self.result_budget}, counter={self.token_counter.name}, "
            f"store={type(self.store).__name__ if self.store else None})"
        )

    # ------------------------------------------------------------------ principals

    def principal_for(self, config: RunnableConfig | Mapping[str, Any] | None = None) -> Principal:
        """The principal of a config (the current runnable config when `None`).

        Args:
            config: A `RunnableConfig`.

        Returns:
            The principal.

        Example:
            ```python
            layer.principal_for({"configurable": {"user_id": "ada"}}).user  # 'ada'
            ```
        """
        if config is None:
            from langchain_core.runnables.config import var_child_runnable_config  # noqa: PLC0415

            config = var_child_runnable_config.get()
        return self.principal_resolver(config)

    # ------------------------------------------------------------------ post-processor

    @staticmethod
    def is_processed(message: ToolMessage) -> bool:
        """Whether the layer already processed `message`.

        Args:
            message: A tool message.

        Returns:
            `True` when it carries the layer's marker.

        Example:
            ```python
            ResultLayer.is_processed(ToolMessage(content="x", tool_call_id="1"))  # False
            ```
        """
        marker = (message.response_metadata or {}).get(META_KEY)
        return isinstance(marker, Mapping) and bool(marker.get("processed"))

    def _apply(self, message: ToolMessage, outcome: ProcessOutcome | None) -> ToolMessage:
        if outcome is None:
            return message
        metadata = {**(message.response_metadata or {}), META_KEY: outcome.metadata()}
        if outcome.passed_through:
            update: dict[str, Any] = {"response_metadata": metadata}
            if outcome.content is not message.content:  # its generators, read once
                update["content"] = outcome.content
            return message.model_copy(update=update)
        view = outcome.view
        view.original_artifact = message.artifact
        return message.model_copy(
            update={"content": outcome.content, "artifact": view, "response_metadata": metadata}
        )

    def _check(self, message: object) -> ToolMessage:
        from langchain_core.messages import ToolMessage  # noqa: PLC0415 - on first use

        if not isinstance(message, ToolMessage):
            msg = f"process_tool_message expects a ToolMessage, got {type(message).__name__}"
            raise TypeError(msg)
        return message

    def process_tool_message(
        self, message: ToolMessage, config: RunnableConfig | None = None, *, siblings: int = 1
    ) -> ToolMessage:
        """Apply the per-result layer to one `ToolMessage`.

        The returned message keeps `id`, `tool_call_id`, `name` and `status`; its content is
        the bounded view and its artifact the `ResultView` (carrying the original artifact).
        A result within budget keeps its content byte-identical; a processed message is
        returned unchanged.

        Args:
            message: The tool message.
            config: The runnable config (for the principal); the current one by default.
            siblings: How many results the same model turn produced (parallel tool calls
                share `turn_fraction` of the window).

        Returns:
            The processed message.

        Example:
            ```python
            msg = layer.process_tool_message(ToolMessage(content=big_log, tool_call_id="c1"))
            ```
        """
        message = self._check(message)
        if self.is_processed(message):
            return message
        outcome = self.pipeline.process(
            message.content,
            tool_name=message.name,
            status=message.status,
            tool_call_id=message.tool_call_id,
            principal=self.principal_for(config),
            siblings=siblings,
        )
        return self._apply(message, outcome)

    async def aprocess_tool_message(
        self, message: ToolMessage, config: RunnableConfig | None = None, *, siblings: int = 1
    ) -> ToolMessage:
        """Async twin of `process_tool_message` (never blocks the event loop).

        Args:
            message: The tool message.
            config: The runnable config (for the principal); the current one by default.
            siblings: How many results the same model turn produced.

        Returns:
            The processed message.

        Example:
            ```python
            msg = await layer.aprocess_tool_message(tool_message)
            ```
        """
        message = self._check(message)
        if self.is_processed(message):
            return message
        outcome = await self.pipeline.aprocess(
            message.content,
            tool_name=message.name,
            status=message.status,
            tool_call_id=message.tool_call_id,
            principal=self.principal_for(config),
            siblings=siblings,
        )
        return self._apply(message, outcome)

    @staticmethod
    def view_of(message: ToolMessage) -> ResultView | None:
        """The `ResultView` of a processed message (also after a checkpoint round trip).

        Args:
            message: A tool message.

        Returns:
            The view, or `None` for messages the layer did not cut.

        Example:
            ```python
            view = ResultLayer.view_of(msg)
            ```
        """
        return ResultView.from_artifact(message.artifact)

    # ------------------------------------------------------------------ adapters

    @property
    def fetch_tool(self) -> BaseTool:
        """The `fetch_tool_result` tool that resolves references (one per layer).

        Example:
            ```python
            tools = [*my_tools, layer.fetch_tool]
            ```
        """
        with self._lock:
            if self._fetch_tool is None:
                from langchain_result_layer.adapters.fetch_tool import make_fetch_tool  # noqa: PLC0415

                self._fetch_tool = make_fetch_tool(self)
            return self._fetch_tool

    def wrap_tool(self, tool: BaseTool | Callable[..., Any]) -> BaseTool:
        """Wrap one tool so its results go through the per-result layer.

        Args:
            tool: A `BaseTool` or a function (converted with `@tool`).

        Returns:
            A tool with the same name, description and schema.

        Example:
            ```python
            safe_search = layer.wrap_tool(search)
            ```
        """
        from langchain_result_layer.adapters.tool_wrapper import wrap_tool  # noqa: PLC0415

        return wrap_tool(self, tool)

    def wrap_tools(self, tools: Sequence[BaseTool | Callable[..., Any]]) -> list[BaseTool]:
        """Wrap several tools (see `wrap_tool`).

        Args:
            tools: The tools.

        Returns:
            The wrapped tools, in order.

        Example:
            ```python
            tools = layer.wrap_tools([search, run_sql]) + [layer.fetch_tool]
            ```
        """
        return [self.wrap_tool(t) for t in tools]

    @property
    def truncation_node(self) -> Any:
        """A LangGraph node (sync and async) that processes new `ToolMessage`s in state.

        Example:
            ```python
            graph.add_node("truncate", layer.truncation_node)
            graph.add_edge("tools", "truncate")
            ```
        """
        from langchain_result_layer.adapters.truncation_node import make_truncation_node  # noqa: PLC0415

        return make_truncation_node(self)

    def count_request(
        self,
        messages: Sequence[BaseMessage],
        *,
        system: str | BaseMessage | None = None,
        tools: Sequence[Any] | None = None,
    ) -> int:
        """Tokens of a whole request as the budget guard counts it, with this layer's counter.

        Messages, their tool calls, a system prompt given apart (`system`), the schemas of the
        bound `tools` and a fixed per-request cost; counts are cached per message, so counting
        a growing conversation again costs only its new messages.

        Example:
            ```python
            tokens = layer.count_request(state["messages"], system=prompt, tools=tools)
            ```
        """
        from langchain_result_layer.adapters.budget_guard import request_counter_for  # noqa: PLC0415

        return request_counter_for(self).count(messages, system=system, tools=tools)

    @property
    def budget_guard(self) -> Any:
        """The global budget guard as a pre-model hook / node (sync and async).

        Example:
            ```python
            agent = create_react_agent(model, tools, pre_model_hook=layer.budget_guard)
            ```
        """
        from langchain_result_layer.adapters.budget_guard import make_budget_guard  # noqa: PLC0415

        return make_budget_guard(self)

    def middleware(self, **kwargs: Any) -> Any:
        """An `AgentMiddleware` for `langchain.agents.create_agent`.

        Args:
            **kwargs: Options of `ResultLayerMiddleware`.

        Returns:
            The middleware.

        Example:
            ```python
            agent = create_agent(model, tools, middleware=[layer.middleware()])
            ```
        """
        from langchain_result_layer.adapters.middleware import ResultLayerMiddleware  # noqa: PLC0415

        return ResultLayerMiddleware(self, **kwargs)
