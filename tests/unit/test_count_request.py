"""`ResultLayer.count_request`: a whole request counted as the budget guard counts it."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from langchain_result_layer import BudgetGuard, ResultLayer


@tool
def search(query: str) -> str:
    """Search the code base for `query` and return matching lines."""
    return query


def conversation() -> list:
    return [
        HumanMessage("Why does the build fail?", id="h1"),
        AIMessage(
            "", id="a1", tool_calls=[{"name": "search", "args": {"query": "error"}, "id": "c1"}]
        ),
        ToolMessage("ERROR: disk full\n" * 200, tool_call_id="c1", name="search", id="t1"),
    ]


def test_matches_what_the_guard_counts() -> None:
    layer = ResultLayer(context_window=100_000)
    messages = conversation()
    assert layer.count_request(messages) == BudgetGuard(layer).guard(messages).tokens_before


def test_system_prompt_and_tool_schemas_count() -> None:
    layer = ResultLayer(context_window=100_000)
    messages = conversation()
    bare = layer.count_request(messages)
    with_system = layer.count_request(messages, system="You are a careful build engineer.")
    with_tools = layer.count_request(messages, tools=[search])
    assert bare < with_system
    assert bare < with_tools
    assert layer.count_request(messages[:1]) < bare
