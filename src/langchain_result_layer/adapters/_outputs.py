"""Apply the per-result layer to whatever a tool call returns.

A tool call can return a `ToolMessage`, a LangGraph `Command` whose `update["messages"]`
carries `ToolMessage`s, a list of those, or (invoked without a tool call) the raw output. The
sync and async paths share the dispatch (a generator that yields each processing call, run by
`adapters._sans_io.drive` or `adrive`); only the processing call differs.

Example:
    ```python
    from langchain_result_layer.adapters._outputs import process_output

    processed = process_output(layer, ToolResult(tool_message))
    assert layer.is_processed(processed) and processed.id == tool_message.id
    ```
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from langchain_core.messages import ToolMessage

from langchain_result_layer.adapters._context import ToolResult
from langchain_result_layer.adapters._sans_io import IOStep, Steps, adrive, drive

if TYPE_CHECKING:
    from langchain_result_layer.adapters._context import ResultProcessor

__all__ = [
    "aprocess_output",
    "aprocess_raw",
    "is_tool_output",
    "process_output",
    "process_raw",
]


def _command_type() -> type[Any] | None:
    try:
        from langgraph.types import Command  # noqa: PLC0415
    except ImportError:  # pragma: no cover - langgraph is a dependency
        return None
    return Command


def _messages_in_update(update: Any) -> tuple[str, Any] | None:
    """Where a `Command.update` keeps its messages: `("dict", list)` or `("pairs", index)`."""
    if isinstance(update, dict):
        messages = update.get("messages")
        if isinstance(messages, (list, tuple)):
            return "dict", messages
        return None
    if isinstance(update, (list, tuple)):
        for index, pair in enumerate(update):
            if (
                isinstance(pair, tuple)
                and len(pair) == 2
                and pair[0] == "messages"
                and isinstance(pair[1], (list, tuple))
            ):
                return "pairs", index
    return None


def _rebuild_update(update: Any, where: tuple[str, Any], new_messages: list[Any]) -> Any:
    if where[0] == "dict":
        return {**update, "messages": new_messages}
    index = where[1]
    pairs = list(update)
    pairs[index] = ("messages", new_messages)
    return pairs if isinstance(update, list) else tuple(pairs)


def _command_messages(command: Any) -> tuple[tuple[str, Any], list[Any]] | None:
    where = _messages_in_update(command.update)
    if where is None:
        return None
    messages = where[1] if where[0] == "dict" else command.update[where[1]][1]
    return where, list(messages)


def process_output(layer: ResultProcessor, call: ToolResult) -> Any:
    """Process a tool call's output (`ToolMessage`, `Command`, or a list of them).

    Args:
        layer: The result layer (what processes results).
        call: What the tool (or `ToolNode`'s handler) returned (`call.value`), with the run's
            config, the results of the same model turn and the graph's store.

    Returns:
        The same shape with every `ToolMessage` processed; anything else unchanged.

    Example:
        ```python
        from langchain_core.messages import ToolMessage

        big = "build step ok " * 50_000
        out = process_output(layer, ToolResult([ToolMessage(big, tool_call_id="c1")]))
        assert len(out) == 1 and layer.is_processed(out[0]) and len(out[0].text) < len(big)
        ```
    """
    return drive(_dispatch(call.value, _processing(layer, call)))


async def aprocess_output(layer: ResultProcessor, call: ToolResult) -> Any:
    """Async twin of `process_output` (same arguments and result).

    Example:
        ```python
        processed = await aprocess_output(layer, ToolResult(tool_message))
        assert layer.is_processed(processed)
        ```
    """
    return await adrive(_dispatch(call.value, _processing(layer, call)))


def _process(layer: ResultProcessor, result: ToolResult) -> IOStep[Any]:
    """Processing one result, in its sync and async form."""
    return IOStep(
        functools.partial(layer.process_result, result),
        functools.partial(layer.aprocess_result, result),
    )


def _processing(layer: ResultProcessor, call: ToolResult) -> Callable[[ToolMessage], IOStep[Any]]:
    """How each `ToolMessage` of one tool call is processed (`call` holds the rest)."""
    return lambda message: _process(layer, dataclasses.replace(call, value=message))


def _dispatch(output: Any, process: Callable[[ToolMessage], IOStep[Any]]) -> Steps[Any]:
    """Process every `ToolMessage` in an output, one after the other (the shape is kept)."""
    command_type = _command_type()
    if isinstance(output, ToolMessage):
        return (yield process(output))
    if command_type is not None and isinstance(output, command_type):
        found = _command_messages(output)
        if found is None:
            return output
        where, messages = found
        new = []
        for message in messages:
            new.append((yield process(message)) if isinstance(message, ToolMessage) else message)
        return dataclasses.replace(output, update=_rebuild_update(output.update, where, new))
    if isinstance(output, list) and output and all(_is_output(o, command_type) for o in output):
        processed = []
        for one in output:
            processed.append((yield from _dispatch(one, process)))
        return processed
    return output


def _is_output(value: Any, command_type: type[Any] | None) -> bool:
    return isinstance(value, ToolMessage) or (
        command_type is not None and isinstance(value, command_type)
    )


def is_tool_output(value: Any) -> bool:
    """Whether a value is a `ToolMessage`, a `Command` or a list of them.

    Args:
        value: Anything.

    Returns:
        `True` for outputs `process_output` handles.
    """
    command_type = _command_type()
    if _is_output(value, command_type):
        return True
    return (
        isinstance(value, list) and bool(value) and all(_is_output(v, command_type) for v in value)
    )


def process_raw(layer: ResultProcessor, call: ToolResult) -> Any:
    """Process what a tool returned: messages and commands, or a raw output (no tool call).

    Args:
        layer: The result layer (what processes results).
        call: The tool's return value (`call.value`) and its name (`call.tool_name`, which
            selects its policy), with the run's config, the results of the same model turn
            and the graph's store.

    Returns:
        The processed messages, or the fenced view of a raw output (the output itself when
        fencing is off and it is within budget).

    Example:
        ```python
        view = process_raw(layer, ToolResult("x" * 10_000_000, tool_name="read_log"))
        assert isinstance(view, str) and len(view) < 500_000  # the bounded, fenced view
        ```
    """
    return drive(_raw(layer, call))


async def aprocess_raw(layer: ResultProcessor, call: ToolResult) -> Any:
    """Async twin of `process_raw` (same arguments and result).

    Example:
        ```python
        rows = [{"id": i, "status": "ok"} for i in range(20_000)]
        view = await aprocess_raw(layer, ToolResult(rows, tool_name="run_sql"))
        assert isinstance(view, str) and "20,000" in view
        ```
    """
    return await adrive(_raw(layer, call))


def _raw(layer: ResultProcessor, call: ToolResult) -> Steps[Any]:
    """Messages and commands go through the dispatch; a raw output is one result."""
    if is_tool_output(call.value) or call.value is None:
        each = _processing(layer, dataclasses.replace(call, tool_name=None))
        return (yield from _dispatch(call.value, each))
    return (yield _process(layer, dataclasses.replace(call, siblings=1)))
