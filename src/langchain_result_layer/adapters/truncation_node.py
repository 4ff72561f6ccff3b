"""A LangGraph node that applies the per-result layer to new `ToolMessage`s in state.

Put it right after a `ToolNode` in a custom `StateGraph`. It processes the new results (the
`ToolMessage`s after the last `AIMessage`) that the layer has not processed yet (results of
wrapped tools, fetch-tool results and guard placeholders carry the layer's signed marker and are
skipped; a forged marker is not) and returns same-id replacements, which the `add_messages`
reducer swaps in place. Older messages are left alone, so a history from before a restart is
never processed twice. Several new results are processed concurrently on the async path. The
node keeps no per-request state; with no store of its own the layer uses the graph's store.

Example:
    ```python
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import StructuredTool
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition
    from langchain_result_layer.scripted import ScriptedChatModel, ai_tool_calls, tool_call

    hits = " ".join(f"hit {i}" for i in range(60_000))  # an unwrapped tool's raw result
    search = StructuredTool.from_function(lambda query: hits, name="search", description="Docs.")
    tools = [search, layer.fetch_tool]
    call = tool_call("search", {"query": "x"}, id="c1")
    model = ScriptedChatModel(script=[ai_tool_calls(call), "done"])
    bound = model.bind_tools(tools)

    def call_model(state: MessagesState) -> dict:
        return {"messages": [bound.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", call_model)
    graph.add_node("tools", ToolNode(tools))
    graph.add_node("truncate", layer.truncation_node)
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "truncate")
    graph.add_edge("truncate", "agent")
    out = graph.compile().invoke({"messages": [("user", "find it")]})
    result = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert layer.is_processed(result) and len(result.text) < 100_000
    ```
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.runnables import RunnableConfig

from langchain_result_layer.adapters._context import ToolResult
from langchain_result_layer.adapters._graph_node import GraphNode, graph_store
from langchain_result_layer.adapters._messages import parallel_calls

if TYPE_CHECKING:
    from langchain_result_layer.adapters._context import ResultProcessor
    from langchain_result_layer.layer import ResultLayer

__all__ = ["TruncationNode", "make_truncation_node"]


def _state_messages(state: Any, key: str) -> list[Any]:
    if isinstance(state, list):
        return state
    if isinstance(state, Mapping):
        if key not in state:
            msg = f"truncation node: state has no {key!r} key"
            raise ValueError(msg)
        return list(state[key])
    value = getattr(state, key, None)
    if value is None:
        msg = f"truncation node: state has no {key!r} attribute"
        raise ValueError(msg)
    return list(value)


class TruncationNode(GraphNode):
    """Processes the `ToolMessage`s in state that the layer has not processed yet.

    Args:
        layer: The result layer.
        messages_key: State key of the messages.
        name: Node name.

    Example:
        ```python
        from langgraph.graph import MessagesState, StateGraph

        graph = StateGraph(MessagesState)
        graph.add_node("truncate", TruncationNode(layer))
        update = layer.truncation_node.run({"messages": [tool_message]}, {})
        assert layer.is_processed(update["messages"][0])
        ```
    """

    def __init__(
        self, layer: ResultProcessor, *, messages_key: str = "messages", name: str = "truncate"
    ) -> None:
        super().__init__(name=name)
        self.layer = layer
        self.messages_key = messages_key

    def _pending(self, state: Any) -> list[ToolMessage]:
        messages = _state_messages(state, self.messages_key)
        last_ai = max((i for i, m in enumerate(messages) if isinstance(m, AIMessage)), default=-1)
        pending = [
            m
            for m in messages[last_ai + 1 :]
            if isinstance(m, ToolMessage) and not self.layer.is_processed(m)
        ]
        missing = [m.tool_call_id for m in pending if m.id is None]
        if missing:
            msg = (
                "truncation node: tool messages without ids cannot be replaced in state "
                f"(tool_call_id {missing[0]!r}); use the add_messages reducer, which assigns ids"
            )
            raise ValueError(msg)
        return pending

    def _update(self, state: Any, processed: list[BaseMessage]) -> Any:
        if isinstance(state, list):  # a graph whose whole state is the message list
            return processed
        return {self.messages_key: processed} if processed else {}

    def _siblings(self, state: Any, message: ToolMessage) -> int:
        return parallel_calls(_state_messages(state, self.messages_key), message.tool_call_id)

    def run(self, state: Any, config: RunnableConfig) -> Any:
        """Process the new results in state.

        Args:
            state: The graph state.
            config: The node's config.

        Returns:
            Same-id replacements of the processed results.
        """
        store = graph_store()
        processed: list[BaseMessage] = [
            self.layer.process_result(ToolResult(m, config, self._siblings(state, m), store))
            for m in self._pending(state)
        ]
        return self._update(state, processed)

    async def arun(self, state: Any, config: RunnableConfig) -> Any:
        """Async twin of `run` (same arguments and update; new results processed concurrently)."""
        pending = self._pending(state)
        store = graph_store()
        processed: list[BaseMessage] = list(
            await asyncio.gather(
                *(
                    self.layer.aprocess_result(
                        ToolResult(m, config, self._siblings(state, m), store)
                    )
                    for m in pending
                )
            )
        )
        return self._update(state, processed)


def make_truncation_node(layer: ResultLayer) -> TruncationNode:
    """The layer's truncation node (`layer.truncation_node`, one per layer).

    Args:
        layer: The result layer.

    Returns:
        A node with sync and async functions.

    Example:
        ```python
        assert make_truncation_node(layer) is layer.truncation_node
        ```
    """
    return layer.truncation_node
