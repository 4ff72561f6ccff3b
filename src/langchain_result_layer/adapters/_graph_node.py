"""A LangGraph node with sync and async twins, built on the public `Runnable` API only.

LangGraph runs any `Runnable` as a node (`StateGraph.add_node`, `create_react_agent`'s
`pre_model_hook`): it calls `invoke(state, config)` or `ainvoke(state, config)`. A node built on
this base keeps no per-request state: everything a call needs comes from its arguments and the
runtime of the graph run (`langgraph.runtime.get_runtime`).

Example:
    ```python
    from langgraph.graph import START, MessagesState, StateGraph
    from langchain_result_layer.adapters._graph_node import GraphNode

    class Noop(GraphNode):
        def run(self, state, config):
            return {}

        async def arun(self, state, config):
            return self.run(state, config)

    graph = StateGraph(MessagesState)
    graph.add_node("noop", Noop(name="noop"))
    graph.add_edge(START, "noop")
    assert graph.compile().invoke({"messages": []}) == {"messages": []}
    ```
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from langchain_core.runnables import Runnable, RunnableConfig, ensure_config

__all__ = ["GraphNode", "checkpointed", "graph_store"]


class GraphNode(Runnable[Any, Any], ABC):
    """Base of the layer's graph nodes: `invoke`/`ainvoke` call `run`/`arun`.

    Args:
        name: The node's name (LangGraph uses it when `add_node` gets no name).

    Example:
        ```python
        node = layer.truncation_node  # a GraphNode
        assert node.invoke({"messages": []}, {"configurable": {"thread_id": "t1"}}) == {}
        ```
    """

    def __init__(self, *, name: str) -> None:
        self.name = name

    @abstractmethod
    def run(self, state: Any, config: RunnableConfig) -> Any:
        """Compute the node's state update.

        Args:
            state: The graph state.
            config: The runnable config of this call.

        Returns:
            The state update.
        """

    @abstractmethod
    async def arun(self, state: Any, config: RunnableConfig) -> Any:
        """Async twin of `run` (same arguments and update)."""

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Run the node (LangGraph calls this with the state and the node's config).

        Args:
            input: The graph state.
            config: The runnable config.
            **kwargs: Ignored.

        Returns:
            The state update.
        """
        del kwargs
        return self.run(input, ensure_config(config))

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Async twin of `invoke` (same arguments and update)."""
        del kwargs
        return await self.arun(input, ensure_config(config))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


def graph_store() -> Any | None:
    """The LangGraph `BaseStore` of the current graph run, if it has one.

    Uses the public `langgraph.runtime.get_runtime`; outside a graph run (or in a graph
    compiled without `store=`) it returns `None`.

    Returns:
        The graph's store, or `None`.

    Example:
        ```python
        assert graph_store() is None  # not inside a graph run
        ```
    """
    try:
        from langgraph.runtime import get_runtime  # noqa: PLC0415

        runtime = get_runtime()
    except (ImportError, RuntimeError, KeyError, AttributeError):
        return None
    return getattr(runtime, "store", None)


def checkpointed() -> bool:
    """Whether the current graph run belongs to a conversation thread (a checkpointed one).

    LangGraph keys checkpoints by thread: a run that names one
    (`runtime.execution_info.thread_id`) is one whose history a checkpointer keeps. There is
    no public way to tell an in-memory checkpointer from a persistent one.

    Returns:
        `True` inside a graph run with a thread id.

    Example:
        ```python
        assert not checkpointed()  # not inside a graph run
        ```
    """
    try:
        from langgraph.runtime import get_runtime  # noqa: PLC0415

        info = getattr(get_runtime(), "execution_info", None)
    except (ImportError, RuntimeError, KeyError, AttributeError):
        return False
    return getattr(info, "thread_id", None) is not None
