"""Wrap a tool so its results go through the per-result layer.

The wrapper delegates every call to the wrapped tool (`invoke`/`ainvoke`, `run`/`arun`), so
argument parsing, injected arguments (`ToolRuntime`, `InjectedState`, `InjectedStore`,
`InjectedToolCallId`, a `RunnableConfig` parameter), `response_format="content_and_artifact"`,
`handle_tool_error`, `handle_validation_error` and `Command` returns keep working exactly as
they do unwrapped. It then processes what came back: a `ToolMessage`, the `ToolMessage`s
inside a `Command`'s `update["messages"]`, or, when invoked without a tool call, the raw
output.

Name, description, `args_schema`, `tool_call_schema`, `return_direct`, `response_format`,
tags and metadata are the wrapped tool's, so models, `ToolNode` and `create_react_agent` see
the same tool.

Streaming: a call through `invoke`/`ainvoke` is one tool run whose `on_tool_end` event carries
the processed message (the view), not the raw output, so UIs that stream tool events
(`astream_events`, LangGraph's `stream_mode="tools"`) never receive the raw result. The wrapped
tool runs as a child run tagged `RAW_TOOL_TAG` and LangGraph's `nostream`: LangGraph's stream
modes skip it, and `astream_events(..., exclude_tags=[RAW_TOOL_TAG])` drops its events (its
`on_tool_end` carries the raw output); tracing keeps it.

Example:
    ```python
    from langchain_core.tools import tool
    from langchain_result_layer import ResultLayer

    @tool
    def read_log(path: str) -> str:
        '''Read a log file.'''
        return open(path).read()

    layer = ResultLayer(context_window=128_000)
    safe = layer.wrap_tool(read_log)
    assert safe.name == "read_log"
    ```
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langchain_core.callbacks import (
    AsyncCallbackManager,
    AsyncCallbackManagerForToolRun,
    CallbackManager,
    CallbackManagerForToolRun,
)
from langchain_core.messages.tool import ToolOutputMixin
from langchain_core.runnables import RunnableConfig, ensure_config, patch_config
from langchain_core.tools import BaseTool, StructuredTool, Tool
from langchain_core.tools import tool as as_tool
from langchain_core.utils.pydantic import TypeBaseModel
from pydantic import Field
from typing_extensions import override

from langchain_result_layer.adapters._context import ToolResult
from langchain_result_layer.adapters._graph_node import graph_store
from langchain_result_layer.adapters._outputs import (
    aprocess_raw,
    process_raw,
)

if TYPE_CHECKING:
    from langchain_core.messages import ToolCall

    from langchain_result_layer.adapters._context import ResultProcessor

__all__ = [
    "RAW_TOOL_TAG",
    "RawOutput",
    "ResultLayerTool",
    "tool_siblings",
    "unwrap_tool",
    "wrap_tool",
]

RAW_TOOL_TAG = "langchain_result_layer:raw"
"""Tag of the wrapped tool's own run (its events carry the raw output)."""

_NOSTREAM = "nostream"
"""LangGraph's tag for runs its stream modes skip (`langgraph.constants.TAG_NOSTREAM`)."""

tool_siblings: ContextVar[int] = ContextVar("langchain_result_layer_tool_siblings", default=1)
"""How many parallel calls the current model turn made (set by the middleware per call)."""


def _field_names(schema: Any) -> set[str]:
    fields = getattr(schema, "model_fields", None)
    if isinstance(fields, Mapping):
        return {str(k) for k in fields}
    if isinstance(schema, Mapping):
        properties = schema.get("properties")
        return {str(k) for k in properties} if isinstance(properties, Mapping) else set()
    return set()


def _injected_names(tool: BaseTool) -> set[str]:
    """Arguments the graph injects (state, store, runtime): in the input schema, not the model's."""
    try:
        return _field_names(tool.get_input_schema()) - _field_names(tool.tool_call_schema)
    except Exception:  # an unusual schema: show every argument
        return set()


def _call_parts(input: Any) -> tuple[Any, str | None]:
    """The arguments and the tool call id of a tool input (a `ToolCall` dict or plain args)."""
    if isinstance(input, Mapping) and input.get("type") == "tool_call" and "args" in input:
        call_id = input.get("id")
        return input["args"], call_id if isinstance(call_id, str) else None
    return input, None


class RawOutput(ToolOutputMixin):
    """A tool's return value carried through LangChain's tool run untouched.

    Invoked with a `ToolCall`, `BaseTool.run` turns any output that is not text into text
    (`json.dumps`, else `str()`) before the wrapper could see it: a generator becomes its repr,
    an int over 4,300 digits raises. Outputs that are `ToolOutputMixin`s are passed on as they
    are (LangChain's documented way for a tool to return something else), so the wrapper's
    raw twin of a function tool returns its value inside one, and the layer reads the value.

    The twin is made when the tool is wrapped: change a tool (`handle_tool_error`, ...) before
    wrapping it.

    Example:
        ```python
        carried = RawOutput({"rows": [1, 2]}, artifact=None)
        assert carried.content == {"rows": [1, 2]} and carried.artifact is None
        assert repr(carried) == "RawOutput(dict)"  # tracing never prints the raw value
        ```
    """

    __slots__ = ("artifact", "content")

    def __init__(self, content: Any, artifact: Any = None) -> None:
        """Carry `content` (and a `content_and_artifact` tool's artifact)."""
        self.content = content
        self.artifact = artifact

    def __repr__(self) -> str:
        # What tracing shows for the raw child run: the value's type, never the value.
        return f"RawOutput({type(self.content).__name__})"


def _carried(value: Any, response_format: str) -> Any:
    """What the raw twin returns for the wrapped function's `value` (see `RawOutput`)."""
    if response_format == "content_and_artifact":
        if not isinstance(value, tuple) or len(value) != 2:
            return value  # LangChain reports the malformed response as it always does
        content, artifact = value
        if isinstance(content, (str, ToolOutputMixin)):
            return value
        return RawOutput(content, artifact), None
    if isinstance(value, (str, ToolOutputMixin)) or (
        isinstance(value, list) and value and all(isinstance(v, ToolOutputMixin) for v in value)
    ):
        return value  # text, messages and commands take LangChain's own path
    return RawOutput(value)


def _raw_twin(tool: BaseTool) -> BaseTool | None:
    """A copy of a function tool whose functions return their value as a `RawOutput`.

    Same name, schema, injected arguments, error handling and callbacks (the wrappers keep
    the functions' signatures, which LangChain inspects); `None` for tools without functions
    (custom `BaseTool` subclasses), which keep LangChain's text conversion.
    """
    if not isinstance(tool, (StructuredTool, Tool)):
        return None
    fmt = tool.response_format
    update: dict[str, Any] = {}
    func, coroutine = tool.func, tool.coroutine
    if func is not None:

        @functools.wraps(func)
        def carry(*args: Any, **kwargs: Any) -> Any:
            return _carried(func(*args, **kwargs), fmt)

        update["func"] = carry
    if coroutine is not None:

        @functools.wraps(coroutine)
        async def acarry(*args: Any, **kwargs: Any) -> Any:
            return _carried(await coroutine(*args, **kwargs), fmt)

        update["coroutine"] = acarry
    return tool.model_copy(update=update) if update else None


@dataclass(frozen=True, slots=True)
class _ToolRun:
    """One run of a wrapped tool, as its callbacks are told it starts."""

    config: RunnableConfig
    """The run's config (`ensure_config` applied)."""
    serialized: dict[str, Any]
    """The tool as `on_tool_start` describes it (name, description)."""
    shown: str
    """The input as text (the arguments the model gave)."""
    start: dict[str, Any]
    """`on_tool_start`'s keyword arguments (run name and id, inputs, tool call id)."""
    call_id: str | None
    """The tool call id (`None`: invoked with plain arguments)."""


class ResultLayerTool(BaseTool):
    """A tool whose results go through the result layer; everything else is the wrapped tool's.

    Build it with `layer.wrap_tool(tool)`.

    Example:
        ```python
        from langchain_core.tools import StructuredTool

        rows = StructuredTool.from_function(
            lambda query: " ".join(f"row {i}" for i in range(50_000)),
            name="run_sql",
            description="Run a query.",
        )
        wrapped = layer.wrap_tool(rows)
        call = {"name": "run_sql", "args": {"query": "select 1"}, "id": "c1"}
        msg = wrapped.invoke({**call, "type": "tool_call"})
        assert isinstance(wrapped, ResultLayerTool) and layer.is_processed(msg)
        ```
    """

    wrapped: BaseTool
    """The original tool."""

    layer: Any = Field(default=None, exclude=True)
    """What processes the results: the `ResultLayer` (typed `ResultProcessor` by `_layer`)."""

    raw: BaseTool | None = Field(default=None, exclude=True)
    """The wrapped tool's raw twin (see `RawOutput`), used for calls with a `ToolCall`."""

    # ------------------------------------------------------------------ schema

    @property
    @override
    def tool_call_schema(self) -> Any:
        """The wrapped tool's schema for model tool calls (injected arguments excluded)."""
        return self.wrapped.tool_call_schema

    @override
    def get_input_schema(self, config: RunnableConfig | None = None) -> TypeBaseModel:
        """The wrapped tool's full input schema (with injected arguments, for `ToolNode`)."""
        return self.wrapped.get_input_schema(config)

    @override
    def get_output_schema(self, config: RunnableConfig | None = None) -> TypeBaseModel:
        """The wrapped tool's output schema."""
        return self.wrapped.get_output_schema(config)

    @property
    def func(self) -> Callable[..., Any] | None:
        """The wrapped tool's function, when it has one (`ToolNode` reads its annotations)."""
        value = getattr(self.wrapped, "func", None)
        return value if callable(value) else None

    @property
    def coroutine(self) -> Callable[..., Any] | None:
        """The wrapped tool's coroutine function, when it has one."""
        value = getattr(self.wrapped, "coroutine", None)
        return value if callable(value) else None

    # ------------------------------------------------------------------ calls

    def _layer(self) -> ResultProcessor:
        layer: ResultProcessor = self.layer
        return layer

    def _start_args(self, input: Any) -> tuple[dict[str, Any], str, str | None]:
        args, call_id = _call_parts(input)
        injected = _injected_names(self.wrapped)
        inputs = (
            {k: v for k, v in args.items() if k not in injected}
            if isinstance(args, Mapping)
            else {}
        )
        shown = args if isinstance(args, str) else str(inputs)
        return inputs, shown, call_id

    def _manager_args(self, config: RunnableConfig) -> tuple[Any, ...]:
        return (
            config.get("callbacks"),
            self.callbacks,
            self.verbose,
            config.get("tags"),
            self.tags,
            config.get("metadata"),
            self.metadata,
        )

    def _run_of(self, input: Any, config: RunnableConfig | None) -> _ToolRun:
        """What `on_tool_start` gets for one run: serialized tool, input text, keyword arguments."""
        config = ensure_config(config)
        inputs, shown, call_id = self._start_args(input)
        start = {
            "name": config.get("run_name") or self.name,
            "run_id": config.get("run_id"),
            "inputs": inputs,
            "tool_call_id": call_id,
        }
        serialized = {"name": self.name, "description": self.description}
        return _ToolRun(config, serialized, shown, start, call_id)

    def _started(
        self, input: Any, config: RunnableConfig | None
    ) -> tuple[CallbackManagerForToolRun, _ToolRun]:
        """The run's callbacks, told that the tool starts."""
        run = self._run_of(input, config)
        manager = CallbackManager.configure(*self._manager_args(run.config))
        return manager.on_tool_start(run.serialized, run.shown, **run.start), run

    async def _astarted(
        self, input: Any, config: RunnableConfig | None
    ) -> tuple[AsyncCallbackManagerForToolRun, _ToolRun]:
        """Async twin of `_started`."""
        run = self._run_of(input, config)
        manager = AsyncCallbackManager.configure(*self._manager_args(run.config))
        return await manager.on_tool_start(run.serialized, run.shown, **run.start), run

    def _returned(self, output: Any, config: RunnableConfig) -> ToolResult:
        """What the tool returned in a run of the tool call's turn, as the layer takes it."""
        return ToolResult(
            output, config, siblings=tool_siblings.get(), store=graph_store(), tool_name=self.name
        )

    def _tool_for(self, call_id: str | None) -> BaseTool:
        """The tool to run: the raw twin for a tool call (when there is one), else the tool."""
        return self.raw if call_id is not None and self.raw is not None else self.wrapped

    def _raw(self, output: RawOutput, run: _ToolRun) -> ToolResult:
        """The carried raw output of a tool call, as the layer takes it."""
        return ToolResult(
            output.content,
            run.config,
            siblings=tool_siblings.get(),
            store=graph_store(),
            tool_name=self.name,
            tool_call_id=run.call_id or "",
            artifact=output.artifact,
        )

    def _inner_config(
        self,
        config: RunnableConfig,
        run_manager: CallbackManagerForToolRun | AsyncCallbackManagerForToolRun,
    ) -> RunnableConfig:
        child = run_manager.get_child()
        child.add_tags([RAW_TOOL_TAG, _NOSTREAM])
        return patch_config(config, callbacks=child)

    @override
    def invoke(
        self,
        input: str | dict[str, Any] | ToolCall,
        config: RunnableConfig | None = None,
        **kwargs: Any,
    ) -> Any:
        run_manager, run = self._started(input, config)
        try:
            inner = self._inner_config(run.config, run_manager)
            output = self._tool_for(run.call_id).invoke(input, inner, **kwargs)
            if isinstance(output, RawOutput):
                processed = self._layer().process_result(self._raw(output, run))
            else:
                processed = process_raw(self._layer(), self._returned(output, run.config))
        except BaseException as exc:
            run_manager.on_tool_error(exc, tool_call_id=run.call_id)
            raise
        run_manager.on_tool_end(processed, name=self.name)
        return processed

    @override
    async def ainvoke(
        self,
        input: str | dict[str, Any] | ToolCall,
        config: RunnableConfig | None = None,
        **kwargs: Any,
    ) -> Any:
        run_manager, run = await self._astarted(input, config)
        try:
            inner = self._inner_config(run.config, run_manager)
            output = await self._tool_for(run.call_id).ainvoke(input, inner, **kwargs)
            if isinstance(output, RawOutput):
                processed = await self._layer().aprocess_result(self._raw(output, run))
            else:
                processed = await aprocess_raw(self._layer(), self._returned(output, run.config))
        except BaseException as exc:
            await run_manager.on_tool_error(exc, tool_call_id=run.call_id)
            raise
        await run_manager.on_tool_end(processed, name=self.name)
        return processed

    @override
    def run(self, tool_input: str | dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        output = self.wrapped.run(tool_input, *args, **kwargs)
        config = kwargs.get("config")
        call = ToolResult(output, config, store=graph_store(), tool_name=self.name)
        return process_raw(self._layer(), call)

    @override
    async def arun(self, tool_input: str | dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        output = await self.wrapped.arun(tool_input, *args, **kwargs)
        config = kwargs.get("config")
        call = ToolResult(output, config, store=graph_store(), tool_name=self.name)
        return await aprocess_raw(self._layer(), call)

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        """Not used: `run` delegates to the wrapped tool's `run`."""
        return self.wrapped._run(*args, **kwargs)

    async def _arun(self, *args: Any, **kwargs: Any) -> Any:
        """Not used: `arun` delegates to the wrapped tool's `arun`."""
        return await self.wrapped._arun(*args, **kwargs)


def unwrap_tool(tool: BaseTool) -> BaseTool:
    """The original tool behind any number of `ResultLayerTool` wrappers.

    Args:
        tool: A tool, wrapped or not.

    Returns:
        The innermost tool.

    Example:
        ```python
        from langchain_core.tools import StructuredTool

        search = StructuredTool.from_function(lambda query: "no hits", name="search",
                                              description="Search the docs.")
        assert unwrap_tool(layer.wrap_tool(search)) is search
        ```
    """
    while isinstance(tool, ResultLayerTool):
        tool = tool.wrapped
    return tool


_COPIED_FIELDS = (
    "name",
    "description",
    "args_schema",
    "return_direct",
    "verbose",
    "tags",
    "metadata",
    "handle_tool_error",
    "handle_validation_error",
    "response_format",
    "extras",
)
"""The wrapped tool's fields the wrapper carries as its own (models and `ToolNode` read them)."""


def wrap_tool(layer: ResultProcessor, tool: BaseTool | Callable[..., Any]) -> BaseTool:
    """Wrap a tool (or a function, converted with `@tool`) with the result layer.

    Wrapping twice with the same layer returns the first wrapper; the fetch tool and tools
    whose results the layer already processes are returned as they are.

    Args:
        layer: The result layer.
        tool: A `BaseTool` or a function.

    Returns:
        A `ResultLayerTool` with the wrapped tool's name, description and schema.

    Raises:
        TypeError: When `tool` is neither a `BaseTool` nor a callable.

    Example:
        ```python
        def search(query: str) -> str:
            "Search the docs."
            return "no hits"

        wrapped = wrap_tool(layer, search)  # a function becomes a tool first
        assert wrapped.name == "search" and wrap_tool(layer, wrapped) is wrapped
        ```
    """
    if not isinstance(tool, BaseTool):
        candidate: object = tool
        if not callable(candidate):
            msg = f"wrap_tool expects a BaseTool or a function, got {type(candidate).__name__}"
            raise TypeError(msg)
        converted: BaseTool = as_tool(tool)
        tool = converted
    if isinstance(tool, ResultLayerTool) and tool.layer is layer:
        return tool
    if layer.is_fetch_tool(tool):
        return tool
    own = {name: getattr(tool, name) for name in _COPIED_FIELDS}
    return ResultLayerTool(**own, wrapped=tool, layer=layer, raw=_raw_twin(tool))
