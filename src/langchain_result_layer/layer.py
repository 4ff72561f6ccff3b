"""`ResultLayer`: configure once, get every adapter.

Example:
    ```python
    from langchain.agents import create_agent
    from langchain_core.tools import tool
    from langchain_result_layer import ResultLayer

    @tool
    def read_log(name: str) -> str:
        "Read a build log."
        return " ".join(f"{name} step {i}: ok" for i in range(50_000))

    layer = ResultLayer(context_window=128_000, store="sqlite:///tool_results.db")
    tools = layer.wrap_tools([read_log]) + [layer.fetch_tool]  # any agent or ToolNode
    agent = create_agent(model, [read_log], middleware=[layer.middleware()])  # LangChain v1
    node, guard = layer.truncation_node, layer.budget_guard  # StateGraph nodes, pre-model hook
    msg = layer.process_tool_message(tool_message)  # any ToolMessage
    assert layer.is_processed(msg) and layer.view_of(msg) is not None
    ```
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import warnings
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langchain_result_layer.adapters._context import ResultCall, ToolResult
from langchain_result_layer.adapters._markers import MarkerSigner
from langchain_result_layer.config import GuardSettings, ToolPolicy, coerce_policy
from langchain_result_layer.core.budget import (
    DEFAULT_IMAGE_TOKENS,
    DEFAULT_MAX_RESULT_CHARS,
    DEFAULT_RESULT_FRACTION,
    DEFAULT_TURN_FRACTION,
    Budget,
    result_budget,
)
from langchain_result_layer.core.jsonable import to_json_text
from langchain_result_layer.core.render import DEFAULT_FETCH_TOOL_NAME
from langchain_result_layer.core.tokens import TokenCounter, resolve_token_counter
from langchain_result_layer.core.view import ResultView
from langchain_result_layer.errors import ResultStoreWarning
from langchain_result_layer.pipeline import META_KEY, ProcessOptions, ProcessOutcome, ResultPipeline
from langchain_result_layer.principal import PrincipalResolver, resolve_principal_spec
from langchain_result_layer.stores import resolve_store
from langchain_result_layer.stores.base import Principal, ResultStore
from langchain_result_layer.summarize import ResultSummarizer, SummarySettings
from langchain_result_layer.views.registry import ViewRegistry, registered_views

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage, ToolMessage
    from langchain_core.runnables import RunnableConfig
    from langchain_core.tools import BaseTool
    from typing_extensions import Unpack

    from langchain_result_layer.adapters._messages import RequestCounter
    from langchain_result_layer.adapters.budget_guard import BudgetGuard
    from langchain_result_layer.adapters.middleware import ResultLayerMiddleware
    from langchain_result_layer.adapters.truncation_node import TruncationNode
    from langchain_result_layer.specs import ModelSpec, StoreSpec, SummarizerSpec, TokenCounterSpec
    from langchain_result_layer.views.base import ResultViewBuilder

__all__ = ["ResultLayer", "resolve_model", "window_from_model"]

logger = logging.getLogger(__name__)

_MAX_UNWRAP = 16


def resolve_model(model: object) -> object:
    """The chat model behind a string or a wrapper (`.with_retry()`, `.bind_tools()`, ...).

    A `"provider:model"` string is initialised with `init_chat_model` (as `create_agent`
    does); `RunnableBinding`/`RunnableRetry` (`.bound`) and `RunnableWithFallbacks`
    (`.runnable`) are unwrapped.

    Args:
        model: A chat model, a wrapper of one, or a `"provider:model"` string.

    Returns:
        The chat model.

    Raises:
        ValueError: For a string that cannot be initialised here (the message says why and
            what to pass instead).

    Example:
        ```python
        assert resolve_model(model.with_retry()) is model
        assert window_from_model(model.bind(stop=["x"]).with_retry()) == 128_000
        ```
    """
    if isinstance(model, str):
        try:
            from langchain.chat_models import init_chat_model  # noqa: PLC0415

            model = init_chat_model(model)
        except Exception as exc:  # missing provider package, missing key, unknown name
            msg = (
                f"ResultLayer cannot read the context window of the model {model!r}: "
                f"initialising it failed ({type(exc).__name__}: {str(exc)[:200]}). Pass "
                "context_window=<the model's input window in tokens> (for example "
                "context_window=128_000), or pass the chat model object itself, whose "
                "profile['max_input_tokens'] gives the window."
            )
            raise ValueError(msg) from exc
    for _ in range(_MAX_UNWRAP):
        if getattr(model, "profile", None) is not None:
            return model
        inner = getattr(model, "bound", None) or getattr(model, "runnable", None)
        if inner is None or inner is model:
            return model
        model = inner
    return model


def window_from_model(model: object) -> int | None:
    """The input window of a chat model from its `profile["max_input_tokens"]`, if known.

    Wrapped models (`.with_retry()`, `.bind_tools()`, `.with_fallbacks()`) are unwrapped.

    Args:
        model: A LangChain chat model (or anything with a `profile` mapping).

    Returns:
        The window in tokens, or `None`.

    Example:
        ```python
        window_from_model(object())  # None
        ```
    """
    profile = getattr(resolve_model(model), "profile", None)
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


def _no_window_message(model: object | None) -> str:
    if model is None:
        return (
            "ResultLayer needs context_window=<the model's input window in tokens> (for "
            "example context_window=128_000), or model=<a chat model whose "
            "profile['max_input_tokens'] is set>"
        )
    inner = resolve_model(model)
    name = _model_name(inner) or type(inner).__name__
    return (
        f"ResultLayer could not read the context window of {name!r}: its "
        "profile['max_input_tokens'] is not set (the provider package has no profile for it, "
        "or the model is wrapped in something that hides it). Pass context_window=<its input "
        "window in tokens>, for example ResultLayer(model=model, context_window=128_000)."
    )


def _check_options(*, guard: object, turn_fraction: float, ttl_seconds: float | None) -> None:
    """Refuse option values that cannot work, when they are given."""
    if guard is not None and not isinstance(guard, GuardSettings):
        msg = f"guard must be a GuardSettings, got {type(guard).__name__}"
        raise TypeError(msg)
    if not 0 < turn_fraction <= 1:
        msg = f"turn_fraction must be in (0, 1], got {turn_fraction}"
        raise ValueError(msg)
    if ttl_seconds is not None and ttl_seconds <= 0:
        msg = f"ttl_seconds must be positive (None: the store's default), got {ttl_seconds}"
        raise ValueError(msg)


def _resolve_window(context_window: int | None, model: object) -> tuple[int, object, str | None]:
    """The window, the chat model behind `model` and a model-name hint for the tokenizer."""
    if context_window is not None and (
        not isinstance(context_window, int) or isinstance(context_window, bool)
    ):
        msg = f"context_window must be an int, got {type(context_window).__name__}"
        raise TypeError(msg)
    if context_window is not None and context_window <= 0:
        msg = f"context_window must be positive, got {context_window}"
        raise ValueError(msg)
    name_hint: str | None = None
    chat_model: object = None
    if isinstance(model, str) and context_window is not None:
        name_hint = model.split(":", 1)[-1]  # no need to initialise it: the window is given
    elif model is not None:
        chat_model = resolve_model(model)
    window = context_window if context_window is not None else window_from_model(chat_model)
    if window is None:
        raise ValueError(_no_window_message(chat_model))
    return window, chat_model, name_hint


def _pin_tools(settings: GuardSettings, policies: Mapping[str, ToolPolicy]) -> GuardSettings:
    """Guard settings that also pin the tools whose policy says `pinned`."""
    pinned = {name for name, p in policies.items() if p.pinned}
    if not pinned - settings.pinned_tools:
        return settings
    from dataclasses import replace  # noqa: PLC0415

    return replace(settings, pinned_tools=frozenset(settings.pinned_tools | pinned))


def _summarizer(
    model: SummarizerSpec, settings: SummarySettings | None, counter: TokenCounter
) -> ResultSummarizer | None:
    if model is None:
        return None
    return ResultSummarizer(model=model, settings=settings or SummarySettings(), counter=counter)


def _check_policies(policies: Mapping[str, ToolPolicy], window: int, kinds: ViewRegistry) -> None:
    """Refuse policies that cannot work: unknown view kinds, caps over the window."""
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


@dataclass(frozen=True, slots=True)
class _ResultJob:
    """One result to run through the pipeline, sync or async, and what to make of the outcome."""

    pipeline: ResultPipeline
    """The pipeline on the run's store."""
    content: Any
    """What it processes."""
    options: ProcessOptions
    """The tool, status, call, owner and parallel results."""
    message: ToolMessage | None
    """The message the outcome goes into (`None`: a raw value without a tool call)."""


class ResultLayer:
    """The façade: one configuration, every integration.

    Args:
        context_window: The model's input window in tokens. Optional when `model` has a
            `profile["max_input_tokens"]`.
        model: The chat model; used for the window (its profile) and the tokenizer choice.
        max_result_tokens: Token cap of one result's view (default: 30% of the window).
        max_result_chars: Character cap of one result's view (default: 400,000).
        result_fraction: Share of the window one result may take when no cap is given.
        store: Where raw results go: a `ResultStore`, `"memory"`, a SQLAlchemy URL
            (`"sqlite:///tool_results.db"`, `"postgresql+psycopg://..."`), an `Engine`, a
            LangGraph `BaseStore`, or `False` for no storage. Default (`None`): the graph's
            store (`compile(store=...)`, `create_agent(store=...)`) when the run has one, else
            in memory (with a warning when the run is checkpointed: references in a
            persistent checkpoint would outlive the process that holds the results).
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
        fence_results: Fence every tool result as untrusted data, small ones too (default).
            `False` (or `ToolPolicy(fence=False)` for one tool) passes results that fit
            through byte-identical.
        views: The views this layer chooses from: a `ViewRegistry` as it is, or views added
            to the built-in ones (`views=[CsvView()]`; a view of a built-in kind replaces it).
            Default: the process-wide registry (`register_view`), as it is at each call.
        marker_key: Secret that signs the layer's markers on messages, so no tool can forge
            one (at least 16 bytes). Give every process that shares checkpoints the same key;
            by default a random key made once per process (shared by its layers).

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
        model: ModelSpec = None,
        max_result_tokens: int | None = None,
        max_result_chars: int | None = None,
        result_fraction: float = DEFAULT_RESULT_FRACTION,
        store: StoreSpec = None,
        token_counter: TokenCounterSpec = "auto",
        tool_policies: Mapping[str, ToolPolicy | Mapping[str, Any]] | None = None,
        principal: PrincipalResolver | Callable[[Mapping[str, Any]], Principal] | None = None,
        guard: GuardSettings | None = None,
        fetch_tool_name: str = DEFAULT_FETCH_TOOL_NAME,
        image_tokens: int = DEFAULT_IMAGE_TOKENS,
        store_small_results: bool = True,
        ttl_seconds: float | None = None,
        summarizer: SummarizerSpec = None,
        summary: SummarySettings | None = None,
        turn_fraction: float = DEFAULT_TURN_FRACTION,
        fence_results: bool = True,
        marker_key: bytes | str | None = None,
        views: ViewRegistry | Sequence[ResultViewBuilder] | None = None,
    ) -> None:
        _check_options(guard=guard, turn_fraction=turn_fraction, ttl_seconds=ttl_seconds)
        window, chat_model, name_hint = _resolve_window(context_window, model)
        self.context_window: int = window
        """The model's input window in tokens (resolved from `model` if needed)."""
        self.model = chat_model
        """The chat model behind `model=` (unwrapped), or `None`."""
        self.result_budget: Budget = result_budget(
            context_window=window,
            max_result_tokens=max_result_tokens,
            max_result_chars=max_result_chars
            if max_result_chars is not None
            else DEFAULT_MAX_RESULT_CHARS,
            fraction=result_fraction,
        )
        """The per-result `Budget` (`tokens`, `chars`) every view fits."""
        spec = chat_model if token_counter == "model" else token_counter
        self.token_counter: TokenCounter = resolve_token_counter(
            spec, model_name=_model_name(chat_model) if chat_model is not None else name_hint
        )
        """The `TokenCounter` every bound is measured with (`.name`, `.exact`, `.count(text)`)."""
        self.store: ResultStore | None = resolve_store(store)
        """The `ResultStore` holding the raw results (`None` with `store=False`);
        `store.read(record_id, principal=..., start_line=..., end_line=...)` returns them
        exactly."""
        self.store_is_default = store is None
        """Whether no store was given (the graph's store is used when a run has one)."""
        self._graph_stores: weakref.WeakKeyDictionary[Any, ResultStore] = (
            weakref.WeakKeyDictionary()
        )
        self._warned_memory = False
        self.tool_policies: dict[str, ToolPolicy] = {
            name: coerce_policy(p) for name, p in (tool_policies or {}).items()
        }
        """The per-tool `ToolPolicy` overrides, by tool name."""
        registry = (
            ViewRegistry.builtin().with_views(*views) if isinstance(views, Sequence) else views
        )
        _check_policies(
            self.tool_policies, window, registry if registry is not None else registered_views()
        )
        self.principal_resolver: PrincipalResolver = resolve_principal_spec(principal)
        """Reads the `Principal` (tenant, user, thread) from a config."""
        self.guard_settings: GuardSettings = _pin_tools(
            guard or GuardSettings(), self.tool_policies
        )
        """The budget guard's `GuardSettings` (trigger and target fractions, `keep_last`, ...)."""
        self.fetch_tool_name = fetch_tool_name
        self.image_tokens = image_tokens
        self.fence_results = fence_results
        self.signer = MarkerSigner(marker_key)
        """Signs and verifies the layer's markers (its key is secret)."""
        self._request_counter: RequestCounter | None = None
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
            fence_results=fence_results,
            views=registry,
            summarizer=_summarizer(summarizer, summary, self.token_counter),
        )
        self._lock = threading.RLock()  # adapters made under it ask for others (the counter)
        self._fetch_tool: BaseTool | None = None
        self._budget_guard: BudgetGuard | None = None
        self._truncation_node: TruncationNode | None = None
        self._wrappers: dict[int, tuple[BaseTool, BaseTool]] = {}

    # ------------------------------------------------------------------ construction helpers

    @classmethod
    def from_model(cls, model: ModelSpec, **kwargs: Any) -> ResultLayer:
        """Build a layer whose window comes from `model.profile["max_input_tokens"]`.

        Args:
            model: The chat model.
            **kwargs: Other `ResultLayer` arguments.

        Returns:
            The layer.

        Example:
            ```python
            layer = ResultLayer.from_model(model, store="memory")
            assert layer.context_window == 128_000  # the model's profile["max_input_tokens"]
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

    @property
    def request_counter(self) -> RequestCounter:
        """Counts requests for every guard of this layer (one cache per layer, made once).

        Example:
            ```python
            assert layer.request_counter is layer.request_counter
            assert layer.request_counter.count([tool_message]) > 0
            ```
        """
        with self._lock:
            if self._request_counter is None:
                from langchain_result_layer.adapters._messages import RequestCounter  # noqa: PLC0415

                self._request_counter = RequestCounter(
                    self.token_counter, image_tokens=self.image_tokens, signer=self.signer
                )
            return self._request_counter

    # ------------------------------------------------------------------ stores

    def store_for(
        self, graph_store: object = None, config: RunnableConfig | Mapping[str, Any] | None = None
    ) -> ResultStore | None:
        """The result store of one run.

        The layer's own store when one was given; otherwise the graph's store (the LangGraph
        `BaseStore` of `compile(store=...)` / `create_agent(store=...)`, `runtime.store`) when
        the run has one, else the in-memory default, with a warning (once per layer) when the
        run has a checkpointer.

        Args:
            graph_store: The run's `runtime.store`, if any.
            config: The run's config (to tell whether it is checkpointed).

        Returns:
            The store to use.

        Example:
            ```python
            from langgraph.store.memory import InMemoryStore

            assert layer.store_for() is layer.store  # the layer was given a store
            default = ResultLayer(context_window=16_000)
            graph_store = default.store_for(InMemoryStore())  # runtime.store of a graph run
            assert graph_store is not default.store
            ```
        """
        if not self.store_is_default:
            return self.store
        if graph_store is not None:
            return self._graph_store(graph_store)
        if not self._warned_memory:
            from langchain_result_layer.adapters._graph_node import checkpointed  # noqa: PLC0415

            if checkpointed():
                self._warn_memory_store(config)
        return self.store

    def _graph_store(self, graph_store: object) -> ResultStore:
        from langgraph.store.base import BaseStore  # noqa: PLC0415

        from langchain_result_layer.stores.langgraph_store import LangGraphResultStore  # noqa: PLC0415

        if not isinstance(graph_store, BaseStore):
            msg = f"the graph's store must be a LangGraph BaseStore, got {type(graph_store)!r}"
            raise TypeError(msg)
        with self._lock:
            adapted = self._graph_stores.get(graph_store)
            if adapted is None:
                adapted = LangGraphResultStore(graph_store)
                self._graph_stores[graph_store] = adapted
            return adapted

    def _warn_memory_store(self, config: RunnableConfig | Mapping[str, Any] | None) -> None:
        self._warned_memory = True
        thread = ((config or {}).get("configurable") or {}).get("thread_id")
        msg = (
            "langchain-result-layer: this graph run is checkpointed (thread_id="
            f"{thread!r}) but the layer keeps raw tool results in memory (the default store). "
            "With a persistent checkpointer (SqliteSaver, PostgresSaver, ...) every "
            "ref://tool-result/... in the saved history is dead once this process exits. Fix: "
            "ResultLayer(store='sqlite:///tool_results.db') next to SqliteSaver, "
            "ResultLayer(store='postgresql+psycopg://...') next to PostgresSaver, or compile the "
            "graph with a LangGraph store (create_agent(..., store=...), "
            "graph.compile(store=...)), which the layer then uses. With InMemorySaver, pass "
            "store='memory' to silence this."
        )
        logger.warning(msg)
        warnings.warn(msg, ResultStoreWarning, stacklevel=_outside_stacklevel())

    # ------------------------------------------------------------------ markers

    def marker_of(self, message: object) -> Mapping[str, Any]:
        """The layer's marker on a message, only when this layer signed it.

        Args:
            message: Any message.

        Returns:
            The verified marker, or `{}` (none, forged, or changed since it was signed).

        Example:
            ```python
            from langchain_core.messages import ToolMessage

            assert layer.marker_of(ToolMessage("x", tool_call_id="1")) == {}
            assert layer.marker_of(layer.process_tool_message(tool_message))["processed"]
            ```
        """
        return self.signer.verified(message)

    def adopt(self, message: ToolMessage) -> ToolMessage | None:
        """A processed message that another middleware wrapped in its own notice, re-signed.

        Args:
            message: A tool message whose marker does not verify over its whole content.

        Returns:
            The message with its marker signed over the whole content (the notice is the
            other middleware's, outside the fence), or `None` when no part of it is ours.

        Example:
            ```python
            processed = layer.process_tool_message(tool_message)
            notice = "Edited by a reviewer. "
            edited = processed.model_copy(update={"content": notice + processed.text})
            assert not layer.is_processed(edited)  # its signature covers the old content
            assert layer.is_processed(layer.adopt(edited))
            ```
        """
        marker = self.signer.verified_within(message)
        if not marker:
            return None
        adopted = message.model_copy()
        metadata = dict(adopted.response_metadata or {})
        metadata[META_KEY] = self.signer.sign({**marker, "wrapped_by_middleware": True}, adopted)
        adopted.response_metadata = metadata
        return adopted

    def is_processed(self, message: ToolMessage) -> bool:
        """Whether this layer already processed `message` (a verified marker).

        A marker a tool forged (or one whose message was edited afterwards) does not count:
        such a message is processed again.

        Args:
            message: A tool message.

        Returns:
            `True` when it carries this layer's valid marker.

        Example:
            ```python
            from langchain_core.messages import ToolMessage

            assert not layer.is_processed(ToolMessage(content="x", tool_call_id="1"))
            ```
        """
        return bool(self.marker_of(message).get("processed"))

    # ------------------------------------------------------------------ post-processor

    def apply_outcome(
        self,
        message: ToolMessage,
        outcome: ProcessOutcome,
        *,
        extra: Mapping[str, Any] | None = None,
    ) -> ToolMessage:
        """`message` with the outcome's content, its `ResultView` artifact and a signed marker.

        The tool's own artifact moves to `artifact.original_artifact` (always, whatever the
        size of the result), so there is one artifact shape.

        Args:
            message: The tool message as the tool returned it.
            outcome: What the pipeline made of its content.
            extra: More marker fields.

        Returns:
            The processed message (`id`, `tool_call_id`, `name`, `status` unchanged).

        Example:
            ```python
            outcome = layer.pipeline.process(tool_message.content, tool_name="read_log")
            assert outcome is not None
            msg = layer.apply_outcome(tool_message, outcome)
            assert msg.id == tool_message.id and layer.view_of(msg) is msg.artifact
            ```
        """
        view = outcome.view
        previous = ResultView.from_artifact(message.artifact)
        view.original_artifact = (
            previous.original_artifact if previous is not None else message.artifact
        )
        marker = {**outcome.metadata(), **(extra or {})}
        view.compact(limit=_artifact_limit(outcome.content))
        processed = message.model_copy(update={"content": outcome.content, "artifact": view})
        metadata = dict(processed.response_metadata or {})
        metadata[META_KEY] = self.signer.sign(marker, processed)
        processed.response_metadata = metadata
        return processed

    def _check(self, message: object) -> ToolMessage:
        from langchain_core.messages import ToolMessage  # noqa: PLC0415 - on first use

        if not isinstance(message, ToolMessage):
            msg = f"process_tool_message expects a ToolMessage, got {type(message).__name__}"
            raise TypeError(msg)
        return message

    def process_tool_message(
        self, message: ToolMessage, config: RunnableConfig | None = None, **call: Unpack[ResultCall]
    ) -> ToolMessage:
        """Apply the per-result layer to one `ToolMessage`.

        The returned message keeps `id`, `tool_call_id`, `name` and `status`; its content is
        the fenced result (whole when it fits, else a bounded view) and its artifact the
        `ResultView` (carrying the tool's own artifact in `original_artifact`). A message this
        layer already processed is returned unchanged; a forged marker is ignored.

        Args:
            message: The tool message.
            config: The runnable config (for the principal); the current one by default.
            **call: `siblings` (how many results the same model turn produced: parallel tool
                calls share `turn_fraction` of the window) and `store` (the graph's store of
                this run, `runtime.store`, used when the layer has no store of its own).

        Returns:
            The processed message.

        Example:
            ```python
            from langchain_core.messages import ToolMessage

            big_log = " ".join(f"step {i}: ok" for i in range(100_000))
            msg = layer.process_tool_message(ToolMessage(content=big_log, tool_call_id="c1"))
            assert layer.token_counter.count(msg.text) <= layer.result_budget.tokens
            ```
        """
        result = ToolResult(self._check(message), config=config, **call)
        processed: ToolMessage = self.process_result(result)
        return processed

    def _pipeline_args(
        self, message: ToolMessage, result: ToolResult
    ) -> tuple[ResultPipeline, ProcessOptions]:
        """The pipeline on the run's store and the options of processing `message`."""
        pipeline, principal = self._value_pipeline(result)
        return pipeline, {
            "tool_name": message.name,
            "status": message.status,
            "tool_call_id": message.tool_call_id,
            "principal": principal,
            "siblings": result.siblings,
        }

    def _with_outcome(
        self, message: ToolMessage, content: Any, outcome: ProcessOutcome | None
    ) -> ToolMessage:
        """`message` with the outcome applied; unprocessed (as text) when nothing was made."""
        if outcome is not None and isinstance(outcome.content, (str, list)):
            return self.apply_outcome(message, outcome)
        if content is message.content:
            return message
        return message.model_copy(update={"content": _as_content(content)})

    def process_result(self, result: ToolResult) -> Any:
        """Process one tool result an adapter hands over (the adapters' one entry point).

        A `ToolMessage` is processed as `process_tool_message` does. A raw return value is
        read by the layer itself, without LangChain's text conversion first (which prints a
        generator as its repr and fails on an int over 4,300 digits): with a `tool_call_id`
        it becomes that call's processed `ToolMessage` (its content what LangChain would have
        made when the tool's policy disables processing); without one, the bounded, fenced
        view of the value (the value itself when processing is disabled).

        Args:
            result: The result, its run's config, parallel calls and store.

        Returns:
            The processed message, or the view of a raw value without a tool call.

        Example:
            ```python
            from langchain_result_layer.adapters._context import ToolResult

            rows = ({"id": i, "status": "ok"} for i in range(5_000))  # a generator
            msg = layer.process_result(ToolResult(rows, tool_name="run_sql", tool_call_id="c1"))
            assert layer.is_processed(msg) and "generator object" not in msg.text
            view = layer.process_result(ToolResult("x" * 10_000_000, tool_name="read_log"))
            assert isinstance(view, str) and len(view) < 500_000
            ```
        """
        job = self._result_job(result)
        if not isinstance(job, _ResultJob):
            return job
        return self._finish_result(job, job.pipeline.process(job.content, **job.options))

    async def aprocess_result(self, result: ToolResult) -> Any:
        """Async twin of `process_result` (same argument and result; never blocks the loop).

        Example:
            ```python
            from langchain_result_layer.adapters._context import ToolResult

            msg = await layer.aprocess_result(ToolResult(tool_message))
            assert layer.is_processed(msg)
            ```
        """
        job = self._result_job(result)
        if not isinstance(job, _ResultJob):
            return job
        return self._finish_result(job, await job.pipeline.aprocess(job.content, **job.options))

    def _result_job(self, result: ToolResult) -> _ResultJob | ToolMessage:
        """What processing `result` takes (the message itself when it is already processed)."""
        message, content = self._message_of(result)
        if message is None:
            pipeline, principal = self._value_pipeline(result)
            options: ProcessOptions = {"tool_name": result.tool_name, "principal": principal}
            return _ResultJob(pipeline, content, options, None)
        if content is message.content and self.is_processed(message):
            return message
        pipeline, options = self._pipeline_args(message, result)
        return _ResultJob(pipeline, content, options, message)

    def _finish_result(self, job: _ResultJob, outcome: ProcessOutcome | None) -> Any:
        """The processed message of a job, or the view of a raw value without a tool call."""
        if job.message is None:
            return job.content if outcome is None else outcome.content
        return self._with_outcome(job.message, job.content, outcome)

    def _message_of(self, result: ToolResult) -> tuple[ToolMessage | None, Any]:
        """The message a result becomes (`None` for a raw value without a call) and its content."""
        from langchain_core.messages import ToolMessage  # noqa: PLC0415 - on first use

        value = result.value
        if isinstance(value, ToolMessage):
            return value, value.content
        if result.tool_call_id is None:
            return None, value
        message = ToolMessage(
            content="",
            tool_call_id=result.tool_call_id,
            name=result.tool_name,
            artifact=result.artifact,
        )
        return message, value

    def _value_pipeline(self, result: ToolResult) -> tuple[ResultPipeline, Principal]:
        config = _config_or_current(result.config)
        pipeline = self.pipeline.using(self.store_for(result.store, config))
        return pipeline, self.principal_for(config)

    def is_fetch_tool(self, tool: object) -> bool:
        """Whether `tool` is this layer's fetch tool (made on first use).

        Args:
            tool: Any tool.

        Returns:
            `True` only for the very object `fetch_tool` returns.

        Example:
            ```python
            assert layer.is_fetch_tool(layer.fetch_tool) and not layer.is_fetch_tool(object())
            ```
        """
        return self._fetch_tool is not None and self._fetch_tool is tool

    async def aprocess_tool_message(
        self, message: ToolMessage, config: RunnableConfig | None = None, **call: Unpack[ResultCall]
    ) -> ToolMessage:
        """Async twin of `process_tool_message` (same arguments; never blocks the event loop).

        Example:
            ```python
            msg = await layer.aprocess_tool_message(tool_message)
            assert layer.is_processed(msg)
            ```
        """
        result = ToolResult(self._check(message), config=config, **call)
        processed: ToolMessage = await self.aprocess_result(result)
        return processed

    @staticmethod
    def view_of(message: ToolMessage) -> ResultView | None:
        """The `ResultView` of a processed message (also after a checkpoint round trip).

        Args:
            message: A tool message.

        Returns:
            The view, or `None` for messages the layer did not process.

        Example:
            ```python
            view = ResultLayer.view_of(layer.process_tool_message(tool_message))
            assert view is not None and view.shown_tokens > 0
            assert ResultLayer.view_of(tool_message) is None  # not processed
            ```
        """
        return ResultView.from_artifact(message.artifact)

    @staticmethod
    def tool_artifact(message: ToolMessage) -> Any:
        """The tool's own artifact (`response_format="content_and_artifact"`), processed or not.

        Args:
            message: A tool message.

        Returns:
            `view.original_artifact` for processed messages, else `message.artifact`.

        Example:
            ```python
            own = tool_message.model_copy(update={"artifact": {"rows": 3_000}})
            msg = layer.process_tool_message(own)
            assert ResultLayer.tool_artifact(msg) == {"rows": 3_000}
            assert ResultLayer.tool_artifact(own) == {"rows": 3_000}  # not processed: as is
            ```
        """
        view = ResultView.from_artifact(message.artifact)
        return view.original_artifact if view is not None else message.artifact

    # ------------------------------------------------------------------ adapters

    @property
    def fetch_tool(self) -> BaseTool:
        """The `fetch_tool_result` tool that resolves references (one per layer).

        Example:
            ```python
            assert layer.fetch_tool is layer.fetch_tool
            assert layer.fetch_tool.name == "fetch_tool_result"
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
            def search(query: str) -> str:
                "Search the docs."
                return "no hits"

            safe_search = layer.wrap_tool(search)
            assert safe_search.name == "search"
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
            def search(query: str) -> str:
                "Search the docs."
                return "no hits"

            def run_sql(query: str) -> str:
                "Run a query."
                return "0 rows"

            tools = layer.wrap_tools([search, run_sql]) + [layer.fetch_tool]
            assert [t.name for t in tools] == ["search", "run_sql", "fetch_tool_result"]
            ```
        """
        return [self.wrap_tool(t) for t in tools]

    def wrapped_tool(self, tool: BaseTool) -> BaseTool:
        """The layer's wrapper of `tool`, made once per tool object (the middleware's path).

        Args:
            tool: A tool.

        Returns:
            Its `ResultLayerTool` (the fetch tool and already wrapped tools as they are).

        Example:
            ```python
            from langchain_core.tools import tool

            @tool
            def search(query: str) -> str:
                "Search the docs."
                return "no hits"

            assert layer.wrapped_tool(search) is layer.wrapped_tool(search)
            ```
        """
        key = id(tool)
        with self._lock:
            entry = self._wrappers.get(key)
            if entry is not None and entry[0] is tool:
                return entry[1]
        wrapped = self.wrap_tool(tool)
        with self._lock:
            if len(self._wrappers) >= _MAX_WRAPPERS:
                self._wrappers.clear()
            self._wrappers[key] = (tool, wrapped)
        return wrapped

    @property
    def truncation_node(self) -> TruncationNode:
        """A LangGraph node (sync and async) that processes new `ToolMessage`s in state.

        One per layer (the same object on every access); it keeps no per-request state.

        Example:
            ```python
            from langgraph.graph import MessagesState, StateGraph

            graph = StateGraph(MessagesState)
            graph.add_node("truncate", layer.truncation_node)  # after the ToolNode
            assert layer.truncation_node is layer.truncation_node
            ```
        """
        with self._lock:
            if self._truncation_node is None:
                from langchain_result_layer.adapters.truncation_node import TruncationNode  # noqa: PLC0415

                self._truncation_node = TruncationNode(self)
            return self._truncation_node

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
            tools = [layer.fetch_tool]
            tokens = layer.count_request([tool_message], system="Be brief.", tools=tools)
            assert tokens > layer.count_request([tool_message])
            ```
        """
        from langchain_result_layer.adapters.budget_guard import request_counter_for  # noqa: PLC0415

        return request_counter_for(self).count(messages, system=system, tools=tools)

    @property
    def budget_guard(self) -> BudgetGuard:
        """The global budget guard as a pre-model hook / node (sync and async).

        One per layer (the same object on every access); it keeps no per-request state. For
        a system prompt, tools or other settings build `BudgetGuard(layer, ...)`.

        Example:
            ```python
            assert layer.budget_guard is layer.budget_guard  # one per layer
            assert not layer.budget_guard.guard([tool_message]).changed
            ```
        """
        with self._lock:
            if self._budget_guard is None:
                from langchain_result_layer.adapters.budget_guard import BudgetGuard  # noqa: PLC0415

                self._budget_guard = BudgetGuard(self)
            return self._budget_guard

    def middleware(self, **kwargs: Any) -> ResultLayerMiddleware:
        """An `AgentMiddleware` for `langchain.agents.create_agent`.

        Args:
            **kwargs: Options of `ResultLayerMiddleware` (`process_results`, `guard`,
                `fetch_tool`, `name`).

        Returns:
            The middleware.

        Example:
            ```python
            from langchain.agents import create_agent

            agent = create_agent(model, [], middleware=[layer.middleware()])
            assert agent.invoke({"messages": [("user", "hi")]})["messages"][-1].text == "done"
            ```
        """
        from langchain_result_layer.adapters.middleware import ResultLayerMiddleware  # noqa: PLC0415

        return ResultLayerMiddleware(self, **kwargs)


def _config_or_current(config: RunnableConfig | None) -> RunnableConfig | None:
    if config is not None:
        return config
    from langchain_core.runnables.config import var_child_runnable_config  # noqa: PLC0415

    return var_child_runnable_config.get()


_MAX_WRAPPERS = 4_096
"""Tool wrappers kept per layer (the tools of the agents it serves)."""

_ARTIFACT_SLACK = 2_048
"""Characters an artifact may take beyond the text the model sees (its fixed fields)."""


def _outside_stacklevel() -> int:
    """The `stacklevel` of the first caller outside this package (for `warnings.warn`)."""
    level, frame = 2, sys._getframe(2)  # the caller of the function that warns
    while frame.f_back is not None and frame.f_globals.get("__name__", "").startswith(
        "langchain_result_layer."
    ):
        level, frame = level + 1, frame.f_back
    return level


def _as_content(value: Any) -> Any:
    """`value` as `ToolMessage` content, as LangChain makes it (text, unless content blocks)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)) and all(
        isinstance(b, str) or (isinstance(b, Mapping) and isinstance(b.get("type"), str))
        for b in value
    ):
        return list(value)
    try:
        return json.dumps(value, ensure_ascii=False)
    except Exception:  # what json cannot write (LangChain would call str()): bounded, total
        return to_json_text(value)


def _artifact_limit(content: object) -> int:
    if isinstance(content, str):
        return len(content) + _ARTIFACT_SLACK
    from langchain_result_layer.views.blocks import content_chars  # noqa: PLC0415

    return content_chars(content) + _ARTIFACT_SLACK
