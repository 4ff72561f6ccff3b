"""`ResultLayerMiddleware`: the result layer as an `AgentMiddleware` for `create_agent`.

- `wrap_tool_call` / `awrap_tool_call`: every tool result (a `ToolMessage`, or the
  `ToolMessage`s inside a `Command`) goes through the per-result layer. Parallel tool calls
  are processed independently; the store is safe under concurrency.
- `before_model` / `abefore_model`: the budget guard runs on the state's messages and writes
  its placeholders back under the same ids, so the decision sticks and the prompt prefix stays
  stable between calls.
- `wrap_model_call` / `awrap_model_call`: the guard checks the exact request (system message,
  messages, tool schemas) once more. What `before_model` could not know (the system prompt
  and tools of the first call) is cleared here and persisted with the model response; in the
  non-destructive mode this is the only place the guard acts, and state is never edited.
- `tools`: the fetch tool, so the model can restore any cleared or truncated result.

Example:
    ```python
    from langchain.agents import create_agent
    from langchain_result_layer import ResultLayer

    layer = ResultLayer(model=model, store="sqlite:///tool_results.db")
    agent = create_agent(model, [search, run_sql], middleware=[layer.middleware()])
    ```
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
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

from langchain_result_layer.adapters._messages import parallel_calls
from langchain_result_layer.adapters._outputs import aprocess_output, process_output
from langchain_result_layer.adapters.budget_guard import BudgetGuard, GuardResult
from langchain_result_layer.config import GuardSettings

if TYPE_CHECKING:
    from langgraph.prebuilt.tool_node import ToolCallRequest
    from langgraph.runtime import Runtime

    from langchain_result_layer.layer import ResultLayer

__all__ = ["ResultLayerMiddleware"]


def _current_config() -> RunnableConfig | None:
    try:
        from langgraph.config import get_config  # noqa: PLC0415

        return get_config()
    except (ImportError, RuntimeError):
        return None


def _request_config(request: ToolCallRequest) -> RunnableConfig | None:
    runtime = getattr(request, "runtime", None)
    config = getattr(runtime, "config", None)
    if isinstance(config, Mapping):
        return config  # type: ignore[return-value]
    return _current_config()


def _siblings(request: ToolCallRequest) -> int:
    state = getattr(request, "state", None)
    messages = state.get("messages") if isinstance(state, Mapping) else None
    call = getattr(request, "tool_call", None) or {}
    return parallel_calls(messages, call.get("id") if isinstance(call, Mapping) else None)


def _any_messages(messages: list[BaseMessage]) -> list[AnyMessage]:
    return [cast("AnyMessage", m) for m in messages]


class ResultLayerMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Per-result layer, budget guard and fetch tool for `langchain.agents.create_agent`.

    Args:
        layer: The result layer (its window comes from `model.profile` when built with
            `ResultLayer(model=...)`).
        process_results: Apply the per-result layer to every tool result.
        guard: Run the budget guard before every model call.
        fetch_tool: Register the fetch tool with the agent.
        settings: Guard settings (default: `layer.guard_settings`).
        non_destructive: Edit only the model request, never state (default:
            `settings.non_destructive`). Decisions are remembered by message id in memory,
            so the prefix is stable while the process lives.
        relax_keep_last: Clear seen results among the last `keep_last` when the request
            would otherwise exceed the window.

    Example:
        ```python
        agent = create_agent(model, tools, middleware=[ResultLayerMiddleware(layer)])
        ```
    """

    def __init__(
        self,
        layer: ResultLayer,
        *,
        process_results: bool = True,
        guard: bool = True,
        fetch_tool: bool = True,
        settings: GuardSettings | None = None,
        non_destructive: bool | None = None,
        relax_keep_last: bool | None = None,
    ) -> None:
        super().__init__()
        self.layer = layer
        self.process_results = process_results
        self.guard_enabled = guard
        self.budget_guard = BudgetGuard(
            layer,
            settings=settings,
            non_destructive=non_destructive,
            relax_keep_last=relax_keep_last,
            name="ResultLayerMiddleware.budget_guard",
        )
        self.non_destructive = self.budget_guard.non_destructive
        self.tools = [layer.fetch_tool] if fetch_tool else []
        self._system: str | BaseMessage | None = None
        self._bound_tools: list[Any] | None = None
        self.last_result: GuardResult | None = None
        """What the guard did on the most recent model call (for inspection and tests)."""

    # ------------------------------------------------------------------ tools

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Run the tool, then apply the per-result layer to what it returned.

        Args:
            request: The tool call request.
            handler: Executes the tool.

        Returns:
            The processed `ToolMessage` or `Command`.
        """
        result = handler(request)
        if not self.process_results:
            return result
        processed: ToolMessage | Command[Any] = process_output(
            self.layer, result, _request_config(request), siblings=_siblings(request)
        )
        return processed

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """Async twin of `wrap_tool_call`.

        Args:
            request: The tool call request.
            handler: Executes the tool.

        Returns:
            The processed `ToolMessage` or `Command`.
        """
        result = await handler(request)
        if not self.process_results:
            return result
        processed: ToolMessage | Command[Any] = await aprocess_output(
            self.layer, result, _request_config(request), siblings=_siblings(request)
        )
        return processed

    # ------------------------------------------------------------------ before the model

    def _state_update(self, result: GuardResult) -> dict[str, Any] | None:
        self.last_result = result
        if not result.replacements:
            return None
        return {"messages": result.replacements}

    def before_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Clear old tool results in state (same ids) when the request passes the trigger.

        Args:
            state: The agent state.
            runtime: The runtime.

        Returns:
            Same-id replacements, or `None`.
        """
        if not self.guard_enabled or self.non_destructive:
            return None
        result = self.budget_guard.guard(
            state["messages"],
            config=_current_config(),
            system=self._system,
            tools=self._bound_tools,
        )
        return self._state_update(result)

    async def abefore_model(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Async twin of `before_model`.

        Args:
            state: The agent state.
            runtime: The runtime.

        Returns:
            Same-id replacements, or `None`.
        """
        if not self.guard_enabled or self.non_destructive:
            return None
        result = await self.budget_guard.aguard(
            state["messages"],
            config=_current_config(),
            system=self._system,
            tools=self._bound_tools,
        )
        return self._state_update(result)

    # ------------------------------------------------------------------ around the model

    def _learn(self, request: ModelRequest[Any]) -> tuple[BaseMessage | None, list[Any]]:
        system: BaseMessage | None = request.system_message
        tools = list(request.tools or [])
        self._system = system
        self._bound_tools = tools
        return system, tools

    def _respond(
        self, result: GuardResult, response: ModelResponse[Any] | AIMessage
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        self.last_result = result
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
        """Check the exact request against the window; clear what is still needed.

        Args:
            request: The model request.
            handler: Calls the model.

        Returns:
            The model response, with the guard's same-id replacements as a state update when
            it cleared anything here.
        """
        if not self.guard_enabled:
            return handler(request)
        system, tools = self._learn(request)
        result = self.budget_guard.guard(
            request.messages, config=_current_config(), system=system, tools=tools
        )
        if not result.replacements and not self.non_destructive:
            self.last_result = result
            return handler(request)
        response = handler(request.override(messages=_any_messages(result.messages)))
        return self._respond(result, response)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        """Async twin of `wrap_model_call`.

        Args:
            request: The model request.
            handler: Calls the model.

        Returns:
            The model response, possibly with the guard's state update.
        """
        if not self.guard_enabled:
            return await handler(request)
        system, tools = self._learn(request)
        result = await self.budget_guard.aguard(
            request.messages, config=_current_config(), system=system, tools=tools
        )
        if not result.replacements and not self.non_destructive:
            self.last_result = result
            return await handler(request)
        response = await handler(request.override(messages=_any_messages(result.messages)))
        return self._respond(result, response)
