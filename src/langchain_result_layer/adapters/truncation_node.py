"""A LangGraph node that applies the per-result layer to new `ToolMessage`s in state.

Put it right after a `ToolNode` in a custom `StateGraph`. It processes only `ToolMessage`s the
layer has not processed yet (results of wrapped tools, fetch-tool results and guard
placeholders carry the layer's marker and are skipped) and returns same-id replacements, which
the `add_messages` reducer swaps in place. Several new results are processed concurrently on
the async path.

Example:
    ```python
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    graph = StateGraph(MessagesState)
    graph.add_node("agent", call_model)
    graph.add_node("tools", ToolNode([search, run_sql, layer.fetch_tool]))
    graph.add_node("truncate", layer.truncation_node)
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "truncate")
    graph.add_edge("truncate", "agent")
    ```
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph._internal._runnable import RunnableCallable

from langchain_result_layer.adapters._messages import parallel_calls

if TYPE_CHECKING:
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


class TruncationNode(RunnableCallable):
    """Processes the `ToolMessage`s in state that the layer has not processed yet.

    Args:
        layer: The result layer.
        messages_key: State key of the messages.
        name: Node name.

    Example:
        ```python
        graph.add_node("truncate", TruncationNode(layer))
        ```
    """

    def __init__(
        self, layer: ResultLayer, *, messages_key: str = "messages", name: str = "truncate"
    ) -> None:
        super().__init__(self._func, self._afunc, name=name, trace=False)
        self.layer = layer
        self.messages_key = messages_key

    def _pending(self, state: Any) -> list[ToolMessage]:
        pending = [
            m
            for m in _state_messages(state, self.messages_key)
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

    def _func(self, state: Any, config: RunnableConfig) -> Any:
        processed: list[BaseMessage] = [
            self.layer.process_tool_message(m, config, siblings=self._siblings(state, m))
            for m in self._pending(state)
        ]
        return self._update(state, processed)

    async def _afunc(self, state: Any, config: RunnableConfig) -> Any:
        pending = self._pending(state)
        processed: list[BaseMessage] = list(
            await asyncio.gather(
                *(
                    self.layer.aprocess_tool_message(m, config, siblings=self._siblings(state, m))
                    for m in pending
                )
            )
        )
        return self._update(state, processed)


def make_truncation_node(layer: ResultLayer) -> TruncationNode:
    """The layer's truncation node (`layer.truncation_node`).

    Args:
        layer: The result layer.

    Returns:
        A node with sync and async functions.

    Example:
        ```python
        graph.add_node("truncate", make_truncation_node(layer))
        ```
    """
    return TruncationNode(layer)
