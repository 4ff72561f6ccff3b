"""`ResultLayerMiddleware`: the result layer as an `AgentMiddleware` for `create_agent`.

- `wrap_tool_call` / `awrap_tool_call`: the tool call runs through the layer's wrapper of the
  tool, so every result (a `ToolMessage`, or the `ToolMessage`s inside a `Command`) is
  processed where the tool returns it: the tool's `on_tool_end` event carries the view, and
  notices other middleware add to the result (a reviewer's edit notice) stay outside the
  untrusted-data fence whatever the middleware order. A result another middleware made without
  running the tool is processed here, with a warning when it sits inside this middleware.
  Parallel tool calls share the turn budget and are processed independently.
- `wrap_model_call` / `awrap_model_call`: the budget guard checks the exact request (system
  message, messages, tool schemas) and clears what it must; the decisions go back to state
  with the model response (same ids), so they stick and the prompt prefix stays stable. Results
  another middleware cleared (`ContextEditingMiddleware`'s `[cleared]`) keep a way back: the
  layer adds the restore call to them in the request.
- `tools`: the fetch tool, so the model can restore any cleared or truncated result.

The middleware keeps no per-request state: one instance may serve many agents, threads and
tenants at once (everything a call needs comes from its request and runtime). With no store of
its own the layer uses the agent's store (`create_agent(..., store=...)`).

Place it **last** in `middleware=[...]` (innermost): other middleware then see the processed
results, and their own notices are never fenced as tool data.

Example:
    ```python
    from langchain.agents import create_agent
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import tool
    from langchain_result_layer import ResultLayerMiddleware, ScriptedChatModel
    from langchain_result_layer.scripted import ai_tool_calls, tool_call

    middleware = ResultLayerMiddleware(context_window=128_000, store="sqlite:///results.db")

    @tool
    def search(query: str) -> str:
        "Search the docs."
        return " ".join(f"hit {i}" for i in range(50_000))

    model = ScriptedChatModel(
        script=[ai_tool_calls(tool_call("search", {"query": "x"}, id="c1")), "done"],
        max_input_tokens=128_000,
    )
    agent = create_agent(model, [search], middleware=[middleware])
    out = agent.invoke({"messages": [("user", "find it")]})
    result = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert middleware.layer.is_processed(result)  # the model saw the bounded view
    ```
"""

from __future__ import annotations

import inspect
import logging
import warnings
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from langchain.agents.middleware.types import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
)
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.types import Command

from langchain_result_layer.adapters._context import ToolResult
from langchain_result_layer.adapters._graph_node import graph_store
from langchain_result_layer.adapters._messages import parallel_calls
from langchain_result_layer.adapters._outputs import aprocess_output, process_output
from langchain_result_layer.adapters._placeholders import make_placeholder
from langchain_result_layer.adapters.budget_guard import BudgetGuard, GuardCall, GuardResult
from langchain_result_layer.adapters.tool_wrapper import tool_siblings
from langchain_result_layer.config import GuardSettings
from langchain_result_layer.core.render import DEFAULT_FETCH_TOOL_NAME
from langchain_result_layer.errors import MiddlewareOrderWarning
from langchain_result_layer.layer import ResultLayer

if TYPE_CHECKING:
    from langgraph.prebuilt.tool_node import ToolCallRequest

    from langchain_result_layer.adapters._context import MiddlewareContext

__all__ = ["ResultLayerMiddleware"]

logger = logging.getLogger(__name__)

_LAYER_OPTIONS = frozenset(inspect.signature(ResultLayer.__init__).parameters) - {"self"}


@contextmanager
def _turn_siblings(request: ToolCallRequest) -> Iterator[None]:
    """Tell the wrapped tool how many parallel calls its model turn made, while it runs."""
    token = tool_siblings.set(_siblings(request))
    try:
        yield
    finally:
        tool_siblings.reset(token)


def _guard_args(request: ModelRequest[Any]) -> GuardCall:
    """What the guard needs of a model request besides its messages."""
    return {
        "config": _request_config(request),
        "system": request.system_message,
        "tools": list(request.tools or []),
        "store": _runtime_store(request),
    }


def _current_config() -> RunnableConfig | None:
    try:
        from langgraph.config import get_config  # noqa: PLC0415

        return get_config()
    except (ImportError, RuntimeError):
        return None


def _request_config(request: Any) -> RunnableConfig | None:
    runtime = getattr(request, "runtime", None)
    config = getattr(runtime, "config", None)
    if isinstance(config, Mapping):
        return config  # type: ignore[return-value]
    return _current_config()


def _runtime_store(request: Any) -> object:
    store = getattr(getattr(request, "runtime", None), "store", None)
    return store if store is not None else graph_store()


def _siblings(request: ToolCallRequest) -> int:
    state = getattr(request, "state", None)
    messages = state.get("messages") if isinstance(state, Mapping) else None
    call = getattr(request, "tool_call", None) or {}
    return parallel_calls(messages, call.get("id") if isinstance(call, Mapping) else None)


def _any_messages(messages: list[BaseMessage]) -> list[AnyMessage]:
    return [cast("AnyMessage", m) for m in messages]


def _output_messages(output: Any) -> list[ToolMessage]:
    if isinstance(output, ToolMessage):
        return [output]
    if isinstance(output, Command) and isinstance(output.update, Mapping):
        found = output.update.get("messages")
        if isinstance(found, (list, tuple)):
            return [m for m in found if isinstance(m, ToolMessage)]
    return []


class ResultLayerMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Per-result layer, budget guard and fetch tool for `langchain.agents.create_agent`.

    Build it from its options, like langchain's own middleware
    (`ResultLayerMiddleware(context_window=128_000, store="sqlite:///results.db")`), or from a
    layer you configured (`ResultLayerMiddleware(layer)`, `layer.middleware()`). It keeps no
    per-request state; one instance may serve many agents and threads.

    Args:
        layer: A configured `ResultLayer` (default: one built from `**layer_options`).
        process_results: Apply the per-result layer to every tool result.
        guard: Run the budget guard on every model request.
        fetch_tool: Register the fetch tool with the agent.
        name: The middleware's name (default: `ResultLayerMiddleware`, or
            `ResultLayerMiddleware[<fetch tool name>]` for a layer with its own fetch tool
            name, so two layers can sit in one agent).
        **layer_options: `ResultLayer` options (`context_window`, `model`, `store`,
            `max_result_tokens`, `tool_policies`, `guard` settings as `guard_settings`...),
            validated here.

    Raises:
        TypeError: For a `layer` that is not a `ResultLayer`, for both a layer and layer
            options, or for unknown options.

    Example:
        ```python
        from langchain.agents import create_agent

        middleware = ResultLayerMiddleware(context_window=128_000, store="sqlite:///r.db")
        agent = create_agent(model, [], middleware=[middleware])
        assert [t.name for t in middleware.tools] == ["fetch_tool_result"]
        ```
    """

    def __init__(
        self,
        layer: ResultLayer | None = None,
        *,
        process_results: bool = True,
        guard: bool = True,
        fetch_tool: bool = True,
        name: str | None = None,
        guard_settings: GuardSettings | None = None,
        **layer_options: Any,
    ) -> None:
        super().__init__()
        given: object = layer
        if given is None:
            unknown = sorted(set(layer_options) - _LAYER_OPTIONS)
            if unknown:
                msg = (
                    f"ResultLayerMiddleware got unknown options {unknown}; it accepts the "
                    f"ResultLayer options ({', '.join(sorted(_LAYER_OPTIONS))}), "
                    "guard_settings=GuardSettings(...), process_results, guard, fetch_tool "
                    "and name"
                )
                raise TypeError(msg)
            if guard_settings is not None:
                layer_options["guard"] = guard_settings
            given = ResultLayer(**layer_options)
        elif not isinstance(given, ResultLayer):
            msg = f"ResultLayerMiddleware expects a ResultLayer, got {type(given).__name__}"
            raise TypeError(msg)
        elif layer_options or guard_settings is not None:
            given = sorted([*layer_options, *(["guard_settings"] if guard_settings else [])])
            msg = (
                f"pass either a ResultLayer or its options, not both (got a layer and {given}); "
                "configure the layer instead"
            )
            raise TypeError(msg)
        assert isinstance(given, ResultLayer)
        layer = given
        self.layer: ResultLayer = layer
        """The `ResultLayer` this middleware was configured with."""
        self.context: MiddlewareContext = layer
        """What the middleware uses of the layer (the narrow, typed view of it)."""
        self.process_results = process_results
        self.guard_enabled = guard
        self.budget_guard: BudgetGuard = layer.budget_guard
        self.tools = [layer.fetch_tool] if fetch_tool else []
        default = (
            "ResultLayerMiddleware"
            if layer.fetch_tool_name == DEFAULT_FETCH_TOOL_NAME
            else f"ResultLayerMiddleware[{layer.fetch_tool_name}]"
        )
        self._name = name or default

    @property
    def name(self) -> str:
        """The middleware's name (unique per agent)."""
        return self._name

    @property
    def non_destructive(self) -> bool:
        """Whether the guard edits only the model request (`GuardSettings.non_destructive`)."""
        return self.budget_guard.non_destructive

    # ------------------------------------------------------------------ tools

    def _tool_request(self, request: ToolCallRequest) -> ToolCallRequest:
        tool = getattr(request, "tool", None)
        if tool is None or not self.process_results:
            return request
        wrapped = self.context.wrapped_tool(tool)
        return request if wrapped is tool else request.override(tool=wrapped)

    def _adopted(self, result: Any) -> Any:
        """The result with processed messages another middleware wrapped in notices re-signed."""
        if isinstance(result, ToolMessage):
            if self.context.is_processed(result):
                return result
            return self.context.adopt(result) or result
        messages = _output_messages(result)
        if not messages or not isinstance(result, Command) or not isinstance(result.update, dict):
            return result
        found = result.update.get("messages")
        if not isinstance(found, (list, tuple)):
            return result
        new = [
            (self.context.adopt(m) or m)
            if isinstance(m, ToolMessage) and not self.context.is_processed(m)
            else m
            for m in found
        ]
        return replace(result, update={**result.update, "messages": new})

    def _check_result(self, request: ToolCallRequest, result: Any) -> None:
        """Warn when a result did not come from the tool through the layer."""
        messages = _output_messages(result)
        if not messages or all(self.context.is_processed(m) for m in messages):
            return
        if any(m.status == "error" for m in messages):
            return  # a tool error turned into a message (ToolNode, retry middleware)
        call = getattr(request, "tool_call", None) or {}
        warnings.warn(
            f"ResultLayerMiddleware got a result for tool call {call.get('id')!r} that the tool "
            "did not return through the layer: a middleware listed after ResultLayerMiddleware "
            "made or replaced it (for example a reviewer's answer). It is fenced as untrusted "
            "tool data. List ResultLayerMiddleware last in middleware=[...] so other "
            "middleware's messages stay outside the fence.",
            MiddlewareOrderWarning,
            stacklevel=4,
        )

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Run the tool through the layer, so its result is processed where it is returned.

        Args:
            request: The tool call request.
            handler: Executes the tool.

        Returns:
            The processed `ToolMessage` or `Command`.
        """
        if not self.process_results:
            return handler(request)
        with _turn_siblings(request):
            result = handler(self._tool_request(request))
        processed: ToolMessage | Command[Any] = process_output(
            self.context, self._checked(request, result)
        )
        return processed

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """Async twin of `wrap_tool_call` (same request, an awaitable handler)."""
        if not self.process_results:
            return await handler(request)
        with _turn_siblings(request):
            result = await handler(self._tool_request(request))
        processed: ToolMessage | Command[Any] = await aprocess_output(
            self.context, self._checked(request, result)
        )
        return processed

    def _checked(self, request: ToolCallRequest, result: Any) -> ToolResult:
        """The tool's result (adopted, checked) and how to process it: config, siblings, store."""
        result = self._adopted(result)
        self._check_result(request, result)
        return ToolResult(
            result,
            _request_config(request),
            siblings=_siblings(request),
            store=_runtime_store(request),
        )

    # ------------------------------------------------------------------ around the model

    def _restored(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        """The request with results other middleware cleared given back their restore call.

        `ContextEditingMiddleware` (listed before this one) replaces old results with
        `[cleared]` in the request; the layer's signed marker survives on the message, so the
        layer turns each such result into its own placeholder (same facts, the reference and
        the exact fetch call). Only the request changes, as with the other middleware.
        """
        edited: list[AnyMessage] | None = None
        signer = self.context.signer
        for i, message in enumerate(request.messages):
            if not isinstance(message, ToolMessage):
                continue
            other = (message.response_metadata or {}).get("context_editing")
            if not isinstance(other, Mapping) or not other.get("cleared"):
                continue
            marker = self._original_marker(request, message)
            ref = marker.get("ref") if isinstance(marker.get("ref"), str) else None
            if ref is None:
                continue
            headline = marker.get("headline")
            original = marker.get("original_chars")
            info = replace(
                self.context.request_counter.info(message),
                ref=ref,
                headline=headline if isinstance(headline, str) else None,
                processed=True,
                original_chars=original if isinstance(original, int) else None,
            )
            placeholder = make_placeholder(
                message,
                info,
                signer=signer,
                ref=ref,
                fetch_tool_name=self.context.fetch_tool_name,
                expires_at=marker.get("expires_at")
                if isinstance(marker.get("expires_at"), (int, float))
                else None,
            )
            if edited is None:
                edited = list(request.messages)
            edited[i] = cast("AnyMessage", placeholder)
        return request if edited is None else request.override(messages=edited)

    def _original_marker(
        self, request: ModelRequest[Any], message: ToolMessage
    ) -> Mapping[str, Any]:
        """The verified marker of the state's copy of a message another middleware edited."""
        state = request.state
        messages = state.get("messages") if isinstance(state, Mapping) else None
        for original in messages or ():
            if (
                isinstance(original, ToolMessage)
                and original.tool_call_id == message.tool_call_id
                and original.id == message.id
            ):
                return self.context.marker_of(original)
        return {}

    def _respond(
        self, result: GuardResult, response: ModelResponse[Any] | AIMessage
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        if self.non_destructive or not result.replacements:
            return response
        model_response = (
            response
            if isinstance(response, ModelResponse)
            else ModelResponse(result=[response], structured_response=None)
        )
        return ExtendedModelResponse(
            model_response=model_response,
            command=Command(update={"messages": result.replacements}),
        )

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        """Check the exact request against the window; clear what is needed and persist it.

        Args:
            request: The model request.
            handler: Calls the model.

        Returns:
            The model response, with the guard's same-id replacements as a state update when
            it cleared anything.
        """
        request = self._restored(request)
        if not self.guard_enabled:
            return handler(request)
        result = self.budget_guard.guard(request.messages, **_guard_args(request))
        if not result.replacements and not self.non_destructive:
            return handler(request)
        response = handler(request.override(messages=_any_messages(result.messages)))
        return self._respond(result, response)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        """Async twin of `wrap_model_call` (same request, an awaitable handler)."""
        request = self._restored(request)
        if not self.guard_enabled:
            return await handler(request)
        result = await self.budget_guard.aguard(request.messages, **_guard_args(request))
        if not result.replacements and not self.non_destructive:
            return await handler(request)
        response = await handler(request.override(messages=_any_messages(result.messages)))
        return self._respond(result, response)
