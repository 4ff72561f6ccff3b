"""What each adapter may use of the `ResultLayer` façade: narrow, typed contexts.

The adapters do not reach into the façade's attributes (its pipeline, its store, its budget):
each names the few operations it needs here, and the façade provides them.

- `ResultProcessor`: the tool wrapper, the truncation node and the output dispatch process
  tool results (`ToolResult` records) and tell processed ones apart, nothing else.
- `MiddlewareContext`: the agent middleware also wraps tools, re-signs and reads markers,
  and shows the fetch tool and the guard.
- `GuardContext`: the budget guard's window, settings, counter, signer and the few layer
  operations it calls (principal, store, pipeline on a store, applying an outcome), captured
  once when the guard is made.

`ResultLayer` satisfies both protocols; a test double may implement only what an adapter
uses.

Example:
    ```python
    from langchain_result_layer.adapters._context import GuardContext, ResultProcessor

    processor: ResultProcessor = layer  # the façade is a ResultProcessor
    context = GuardContext.of(layer)
    assert context.window == layer.context_window and context.counter is layer.request_counter
    ```
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

from langchain_result_layer.config import GuardSettings

if TYPE_CHECKING:
    from langchain_core.messages import ToolMessage
    from langchain_core.runnables import RunnableConfig
    from langchain_core.tools import BaseTool

    from langchain_result_layer.adapters._guard_planning import PlanningContext
    from langchain_result_layer.adapters._markers import MarkerSigner
    from langchain_result_layer.adapters._messages import RequestCounter
    from langchain_result_layer.adapters.budget_guard import BudgetGuard
    from langchain_result_layer.layer import ResultLayer
    from langchain_result_layer.pipeline import ResultPipeline
    from langchain_result_layer.stores.base import Principal, ResultStore

__all__ = ["GuardContext", "MiddlewareContext", "ResultCall", "ResultProcessor", "ToolResult"]


class ResultCall(TypedDict, total=False):
    """What `ResultLayer.process_tool_message` takes besides the message and config.

    Every key is optional; `aprocess_tool_message` takes the same.

    Example:
        ```python
        call: ResultCall = {"siblings": 2}  # two parallel results share the turn's room
        assert layer.is_processed(layer.process_tool_message(tool_message, **call))
        ```
    """

    siblings: int
    """How many results the same model turn produced (they share `turn_fraction`)."""
    store: object
    """The graph's store of the run (`runtime.store`), used when the layer has none."""


@dataclass(frozen=True, slots=True)
class ToolResult:
    """One tool result an adapter hands the layer, with what processing it needs.

    Example:
        ```python
        from langchain_core.messages import ToolMessage

        result = ToolResult(ToolMessage("x" * 100_000, tool_call_id="c1"), siblings=2)
        assert layer.is_processed(layer.process_result(result))
        ```
    """

    value: Any
    """A `ToolMessage`, or what the tool returned (its content for `content_and_artifact`)."""
    config: RunnableConfig | None = None
    """The run's config (its principal; the current one when `None`)."""
    siblings: int = 1
    """How many results the same model turn produced (they share the turn's budget)."""
    store: object = None
    """The graph's store of the run (`runtime.store`), used when the layer has none."""
    tool_name: str | None = None
    """For a raw value: the tool that returned it (selects its policy)."""
    tool_call_id: str | None = None
    """For a raw value: the call it answers (the result becomes that call's `ToolMessage`)."""
    artifact: Any = None
    """For a raw value: a `content_and_artifact` tool's artifact."""


class ResultProcessor(Protocol):
    """Processes tool results: what the tool wrapper, truncation node and dispatch use.

    Example:
        ```python
        from langchain_core.messages import ToolMessage

        processor: ResultProcessor = layer
        msg = processor.process_result(ToolResult(ToolMessage("x" * 100_000, tool_call_id="c1")))
        assert processor.is_processed(msg)
        ```
    """

    def is_processed(self, message: ToolMessage) -> bool:
        """Whether the layer already processed `message` (a verified marker)."""
        ...

    def is_fetch_tool(self, tool: object) -> bool:
        """Whether `tool` is the layer's own fetch tool (never wrapped)."""
        ...

    def process_result(self, result: ToolResult) -> Any:
        """The processed message (or the view of a raw value without a tool call)."""
        ...

    async def aprocess_result(self, result: ToolResult) -> Any:
        """Async twin of `process_result`."""
        ...


class MiddlewareContext(ResultProcessor, Protocol):
    """What the agent middleware uses of the layer (a `ResultProcessor` and a few more).

    Example:
        ```python
        context: MiddlewareContext = layer
        assert context.fetch_tool.name == context.fetch_tool_name
        ```
    """

    @property
    def signer(self) -> MarkerSigner:
        """Signs and verifies the layer's markers."""
        ...

    @property
    def fetch_tool_name(self) -> str:
        """Name of the fetch tool placeholders point to."""
        ...

    @property
    def fetch_tool(self) -> BaseTool:
        """The fetch tool."""
        ...

    @property
    def request_counter(self) -> RequestCounter:
        """The counter the guard counts requests with."""
        ...

    @property
    def budget_guard(self) -> BudgetGuard:
        """The layer's guard."""
        ...

    def wrapped_tool(self, tool: BaseTool) -> BaseTool:
        """The layer's wrapper of `tool` (made once per tool)."""
        ...

    def adopt(self, message: ToolMessage) -> ToolMessage | None:
        """A processed message another middleware wrapped in its own notice, re-signed."""
        ...

    def marker_of(self, message: object) -> Mapping[str, Any]:
        """The layer's verified marker on a message (`{}` when none)."""
        ...


@dataclass(frozen=True, slots=True)
class GuardContext:
    """What a budget guard knows of its layer, captured when the guard is made.

    Example:
        ```python
        context = GuardContext.of(layer)
        assert context.settings is layer.guard_settings and context.max_chars > 0
        ```
    """

    window: int
    """The context window in tokens."""
    settings: GuardSettings
    """The layer's guard settings (a guard may be given its own)."""
    counter: RequestCounter
    """Counts requests (one cache per layer)."""
    planning: PlanningContext
    """Counter, signer and fetch-tool name the planning steps use."""
    max_chars: int
    """Character cap of one result's view (results shrunk again stay under it)."""
    ttl_seconds: float | None
    """Lifetime of the raw results the guard stores."""
    pipeline: ResultPipeline
    """The layer's per-result pipeline (`using(store)` binds it to a run's store)."""
    principal_for: Callable[[RunnableConfig | None], Principal]
    """The principal of a run."""
    store_for: Callable[[object, RunnableConfig | None], ResultStore | None]
    """The store of a run (the layer's, else the graph's)."""
    apply_outcome: Callable[..., ToolMessage]
    """Puts a pipeline outcome on a message (content, artifact, signed marker)."""

    @classmethod
    def of(cls, layer: ResultLayer) -> GuardContext:
        """The guard context of a layer.

        Args:
            layer: The layer.

        Returns:
            Its context.
        """
        from langchain_result_layer.adapters._guard_planning import (  # noqa: PLC0415
            PlanningContext,
        )

        return cls(
            window=layer.context_window,
            settings=layer.guard_settings,
            counter=layer.request_counter,
            planning=PlanningContext.of(layer),
            max_chars=layer.result_budget.chars,
            ttl_seconds=layer.pipeline.ttl_seconds,
            pipeline=layer.pipeline,
            principal_for=layer.principal_for,
            store_for=layer.store_for,
            apply_outcome=layer.apply_outcome,
        )
