"""Adapters use only their narrow context of the layer (issue 14 item 5).

A `ResultProcessor` that offers nothing but its four operations (delegating to a real layer)
drives the tool wrapper, the output dispatch and the truncation node through real calls and a
real graph: if an adapter reached for anything else of the façade, these tests would fail with
an `AttributeError`. The guard keeps its `GuardContext`, not the layer.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph

from langchain_result_layer import ResultLayer
from langchain_result_layer.adapters._context import GuardContext, ResultProcessor, ToolResult
from langchain_result_layer.adapters._outputs import process_output, process_raw
from langchain_result_layer.adapters.budget_guard import BudgetGuard
from langchain_result_layer.adapters.tool_wrapper import wrap_tool
from langchain_result_layer.adapters.truncation_node import TruncationNode

BIG = "\n".join(f"2024-05-01 10:00:{i % 60:02d} INFO step {i} ok" for i in range(20_000))


class OnlyTheContext:
    """The four operations of `ResultProcessor`, and nothing else of the layer."""

    __slots__ = ("_layer",)

    def __init__(self, layer: ResultLayer) -> None:
        self._layer = layer

    def is_processed(self, message: ToolMessage) -> bool:
        return self._layer.is_processed(message)

    def is_fetch_tool(self, tool: object) -> bool:
        return self._layer.is_fetch_tool(tool)

    def process_result(self, result: ToolResult) -> Any:
        return self._layer.process_result(result)

    async def aprocess_result(self, result: ToolResult) -> Any:
        return await self._layer.aprocess_result(result)


def _layer() -> ResultLayer:
    return ResultLayer(context_window=16_000, store="memory", token_counter="approximate")


@tool
def read_log() -> str:
    """Read the build log."""
    return BIG


@tool
def rows() -> Any:
    """Rows, lazily."""
    return ({"id": i, "ok": i % 5 != 0} for i in range(3_000))


def test_the_tool_wrapper_needs_only_its_context() -> None:
    layer = _layer()
    narrow: ResultProcessor = OnlyTheContext(layer)
    wrapped = wrap_tool(narrow, read_log)
    message = wrapped.invoke({"type": "tool_call", "id": "c1", "name": "read_log", "args": {}})
    assert layer.is_processed(message)
    assert len(message.text) < len(BIG)
    raw = wrap_tool(narrow, rows).invoke(
        {"type": "tool_call", "id": "c2", "name": "rows", "args": {}}
    )
    assert layer.is_processed(raw)
    assert "generator object" not in raw.text
    view = wrap_tool(narrow, read_log).invoke({})  # no tool call: the bounded view itself
    assert isinstance(view, str)
    assert len(view) < len(BIG)
    assert wrap_tool(narrow, layer.fetch_tool) is layer.fetch_tool  # never wrapped


async def test_the_async_paths_need_only_the_context() -> None:
    layer = _layer()
    narrow = OnlyTheContext(layer)
    message = await wrap_tool(narrow, rows).ainvoke(
        {"type": "tool_call", "id": "c3", "name": "rows", "args": {}}
    )
    assert layer.is_processed(message)
    node = TruncationNode(narrow)
    calls = [{"name": "read_log", "args": {}, "id": "c4", "type": "tool_call"}]
    state = {
        "messages": [
            AIMessage("", tool_calls=calls, id="a1"),
            ToolMessage(BIG, tool_call_id="c4", name="read_log", id="t1"),
        ]
    }
    update = await node.arun(state, {})
    assert [layer.is_processed(m) for m in update["messages"]] == [True]


def test_the_output_dispatch_and_the_truncation_node_in_a_graph() -> None:
    layer = _layer()
    narrow = OnlyTheContext(layer)
    out = process_output(narrow, ToolResult([ToolMessage(BIG, tool_call_id="c5", id="t5")]))
    assert layer.is_processed(out[0])
    assert isinstance(process_raw(narrow, ToolResult(BIG, tool_name="read_log")), str)

    graph = StateGraph(MessagesState)
    graph.add_node("truncate", TruncationNode(narrow))
    graph.add_edge(START, "truncate")
    graph.add_edge("truncate", END)
    calls = [{"name": "read_log", "args": {}, "id": "c6", "type": "tool_call"}]
    final = graph.compile().invoke(
        {
            "messages": [
                AIMessage("", tool_calls=calls, id="a6"),
                ToolMessage(BIG, tool_call_id="c6", name="read_log", id="t6"),
            ]
        }
    )
    assert layer.is_processed(final["messages"][-1])


def test_the_guard_keeps_its_context_not_the_layer() -> None:
    layer = _layer()
    guard = BudgetGuard(layer, system_prompt="Be brief.")
    assert not hasattr(guard, "layer")
    assert isinstance(guard.context, GuardContext)
    assert guard.context.window == layer.context_window
    assert guard.context.counter is layer.request_counter
    assert guard.context.max_chars == layer.result_budget.chars
