"""`create_react_agent` + `pre_model_hook=guard` + wrapped tools, driven for 30+ turns."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from langchain_core.messages import ToolMessage

from langchain_result_layer import GuardSettings, ResultLayer
from langchain_result_layer.adapters._messages import layer_marker
from langchain_result_layer.adapters.budget_guard import BudgetGuard
from tests.integration.helpers import (
    SYSTEM_PROMPT,
    DataSource,
    Policy,
    assert_pairing,
    check_requests,
    make_tools,
    scripted_model,
)

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from langgraph.prebuilt import create_react_agent

WINDOW = 16_000
pytestmark = pytest.mark.filterwarnings(
    "ignore::DeprecationWarning", "ignore::PendingDeprecationWarning"
)


def make_layer(**kwargs: Any) -> ResultLayer:
    kwargs.setdefault("store", "memory")
    return ResultLayer(
        context_window=WINDOW, max_result_tokens=1_500, token_counter="tiktoken", **kwargs
    )


def fetch_tools(layer: ResultLayer) -> list[Any]:
    try:
        return [layer.fetch_tool]
    except ImportError:  # the fetch tool has not landed
        return []


def build(
    layer: ResultLayer,
    data: DataSource,
    *,
    guard: Any = None,
    checkpointer: Any = None,
    turns: int = 32,
):
    extra = fetch_tools(layer)
    tools = layer.wrap_tools(make_tools(data)) + extra
    policy = Policy(data, turns=turns, fetch=bool(extra))
    model = scripted_model(policy, WINDOW)
    if guard is None:
        guard = BudgetGuard(layer, system_prompt=SYSTEM_PROMPT, tools=tools)
    agent = create_react_agent(
        model, tools, prompt=SYSTEM_PROMPT, pre_model_hook=guard, checkpointer=checkpointer
    )
    return agent, model, policy


CONFIG = {"recursion_limit": 400, "configurable": {"thread_id": "react-1", "user_id": "ada"}}


def _check_final(messages: list[Any], layer: ResultLayer) -> None:
    assert_pairing(messages)
    for m in messages:
        if isinstance(m, ToolMessage):
            assert layer_marker(m).get("processed"), f"unprocessed result {m.tool_call_id}"


def test_react_agent_sync(data: DataSource) -> None:
    layer = make_layer()
    agent, model, policy = build(layer, data)
    out = agent.invoke({"messages": [("user", "Why did the build fail?")]}, CONFIG)
    report = check_requests(model, layer, system=SYSTEM_PROMPT, policy=policy)
    assert len(model.requests) >= 30
    assert report.cleared_calls, "the guard never cleared anything"
    assert max(report.tokens) > WINDOW * 0.5
    _check_final(out["messages"], layer)
    if policy.fetch:
        assert report.fetched_ok >= 1


async def test_react_agent_async(data: DataSource) -> None:
    layer = make_layer()
    agent, model, policy = build(layer, data)
    out = await agent.ainvoke({"messages": [("user", "Why did the build fail?")]}, CONFIG)
    report = check_requests(model, layer, system=SYSTEM_PROMPT, policy=policy)
    assert len(model.requests) >= 30
    assert report.cleared_calls
    _check_final(out["messages"], layer)


def test_default_guard_with_reserve_for_prompt_and_tools(data: DataSource) -> None:
    """`layer.budget_guard` does not know the prompt and tools; `reserve_tokens` covers them."""
    layer = make_layer(guard=GuardSettings(reserve_tokens=1_500))
    agent, model, _ = build(layer, data, guard=layer.budget_guard, turns=31)
    agent.invoke({"messages": [("user", "Why did the build fail?")]}, CONFIG)
    check_requests(model, layer, system=SYSTEM_PROMPT)


def test_non_destructive_mode_keeps_state_and_prefix(data: DataSource) -> None:
    layer = make_layer()
    tools = layer.wrap_tools(make_tools(data)) + fetch_tools(layer)
    policy = Policy(data, turns=31, fetch=False)
    model = scripted_model(policy, WINDOW)
    guard = BudgetGuard(
        layer,
        system_prompt=SYSTEM_PROMPT,
        tools=tools,
        settings=GuardSettings(non_destructive=True),
    )
    agent = create_react_agent(model, tools, prompt=SYSTEM_PROMPT, pre_model_hook=guard)
    out = agent.invoke({"messages": [("user", "Why did the build fail?")]}, CONFIG)
    report = check_requests(model, layer, system=SYSTEM_PROMPT)
    assert report.cleared_calls
    # state keeps every result as the tools returned it (processed, never cleared)
    assert not any(
        layer_marker(m).get("cleared") for m in out["messages"] if isinstance(m, ToolMessage)
    )
