"""`langchain.agents.create_agent` + `layer.middleware()`, driven for 30+ turns."""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import ToolMessage

from langchain_result_layer import ResultLayer
from langchain_result_layer.adapters._messages import layer_marker
from langchain_result_layer.adapters.middleware import ResultLayerMiddleware
from langchain_result_layer.scripted import ScriptedChatModel
from tests.integration.helpers import (
    SYSTEM_PROMPT,
    DataSource,
    DownStore,
    Policy,
    assert_pairing,
    check_requests,
    make_tools,
    scripted_model,
)

WINDOW = 16_000
CONFIG = {"recursion_limit": 400, "configurable": {"thread_id": "agent-1", "user_id": "ada"}}


def build(data: DataSource, *, store: Any = "memory", turns: int = 32, **mw: Any):
    policy = Policy(data, turns=turns)
    model = scripted_model(policy, WINDOW)
    # The window comes from the model's profile.
    layer = ResultLayer(model=model, max_result_tokens=1_500, store=store, token_counter="tiktoken")
    assert layer.context_window == WINDOW
    middleware = layer.middleware(**mw)
    agent = create_agent(
        model, make_tools(data), system_prompt=SYSTEM_PROMPT, middleware=[middleware]
    )
    return agent, model, policy, layer, middleware


def _check_final(messages: list[Any]) -> None:
    assert_pairing(messages)
    for m in messages:
        if isinstance(m, ToolMessage):
            assert layer_marker(m).get("processed"), f"unprocessed result {m.tool_call_id}"


def test_create_agent_sync(data: DataSource) -> None:
    agent, model, policy, layer, middleware = build(data)
    assert isinstance(middleware, ResultLayerMiddleware)
    out = agent.invoke({"messages": [("user", "Why did the build fail?")]}, CONFIG)
    assert any(t.name == "fetch_tool_result" for t in model.bound_tools)  # registered via `tools`
    report = check_requests(model, layer, policy=policy)
    assert len(model.requests) >= 30
    assert report.cleared_calls
    assert report.fetched_ok >= 1
    _check_final(out["messages"])
    # decisions were persisted in state by id
    assert {
        m.tool_call_id
        for m in out["messages"]
        if isinstance(m, ToolMessage) and layer_marker(m).get("cleared")
    }


async def test_create_agent_async(data: DataSource) -> None:
    agent, model, policy, layer, _ = build(data)
    out = await agent.ainvoke({"messages": [("user", "Why did the build fail?")]}, CONFIG)
    report = check_requests(model, layer, policy=policy)
    assert len(model.requests) >= 30
    assert report.cleared_calls
    assert report.fetched_ok >= 1
    _check_final(out["messages"])


def test_create_agent_non_destructive(data: DataSource) -> None:
    agent, model, _, layer, _ = build(data, non_destructive=True, turns=31)
    out = agent.invoke({"messages": [("user", "Why did the build fail?")]}, CONFIG)
    report = check_requests(model, layer)
    assert report.cleared_calls
    assert not any(
        layer_marker(m).get("cleared") for m in out["messages"] if isinstance(m, ToolMessage)
    )


def test_store_down_mid_run_never_crashes_the_agent(data: DataSource) -> None:
    store = DownStore()
    policy = Policy(data, turns=31)
    calls = {"n": 0}

    def script(messages: list[Any], index: int) -> Any:
        calls["n"] += 1
        if calls["n"] == 8:
            store.down = True
        return policy(messages, index)

    model = ScriptedChatModel(script=script, max_input_tokens=WINDOW)
    layer = ResultLayer(model=model, max_result_tokens=1_500, store=store, token_counter="tiktoken")
    agent = create_agent(
        model, make_tools(data), system_prompt=SYSTEM_PROMPT, middleware=[layer.middleware()]
    )
    out = agent.invoke({"messages": [("user", "Why did the build fail?")]}, CONFIG)
    check_requests(model, layer, trigger_bound=False)  # under the window, pairing, no resurrection
    texts = [str(m.content) for m in out["messages"] if isinstance(m, ToolMessage)]
    assert any("could not be saved" in t for t in texts)
    _check_final(out["messages"])


def test_parallel_tool_calls_are_processed_independently(data: DataSource) -> None:
    agent, model, _, layer, _ = build(data, turns=8)
    out = agent.invoke({"messages": [("user", "Look at everything.")]}, CONFIG)
    parallel = [
        m for m in out["messages"] if isinstance(m, ToolMessage) and m.tool_call_id.startswith("p")
    ]
    assert len(parallel) >= 3
    refs = {layer_marker(m).get("ref") for m in parallel} - {None}
    assert len(refs) == len([m for m in parallel if layer_marker(m).get("ref")])  # one record each
    check_requests(model, layer)
