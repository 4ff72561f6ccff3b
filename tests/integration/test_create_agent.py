"""`langchain.agents.create_agent` + `layer.middleware()`, driven for 30+ turns."""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import ToolMessage

from langchain_result_layer import GuardSettings, ResultLayer
from langchain_result_layer.adapters._messages import layer_marker
from langchain_result_layer.adapters.middleware import ResultLayerMiddleware
from langchain_result_layer.scripted import ScriptedChatModel
from tests.doubles import DownStore
from tests.integration.helpers import (
    SYSTEM_PROMPT,
    DataSource,
    Policy,
    assert_pairing,
    check_requests,
    make_tools,
    scripted_model,
)

WINDOW = 16_000
CONFIG = {"recursion_limit": 400, "configurable": {"thread_id": "agent-1", "user_id": "ada"}}


def build(
    data: DataSource,
    *,
    store: Any = "memory",
    turns: int = 32,
    guard: GuardSettings | None = None,
    **mw: Any,
):
    policy = Policy(data, turns=turns)
    model = scripted_model(policy, WINDOW)
    # The window comes from the model's profile.
    layer = ResultLayer(
        model=model, max_result_tokens=1_500, store=store, token_counter="tiktoken", guard=guard
    )
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
    agent, model, _, layer, _ = build(data, guard=GuardSettings(non_destructive=True), turns=31)
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


def _history(data: DataSource, turns: int) -> list[Any]:
    """A conversation already in progress: processed tool results of real logs."""
    from langchain_core.messages import AIMessage, HumanMessage

    names = sorted(data.logs)
    layer = ResultLayer(context_window=WINDOW, max_result_tokens=1_500, token_counter="tiktoken")
    msgs: list[Any] = [HumanMessage("Why did the build fail?", id="h0")]
    for k in range(turns):
        call = {"name": "read_log", "args": {"name": names[k % len(names)]}, "id": f"old{k}"}
        msgs.append(AIMessage("", id=f"old-ai{k}", tool_calls=[call]))
        tm = ToolMessage(
            data.logs[names[k % len(names)]],
            tool_call_id=f"old{k}",
            name="read_log",
            id=f"old-t{k}",
        )
        msgs.append(layer.process_tool_message(tm))
    return msgs


def test_first_call_uses_the_exact_request_and_persists(data: DataSource) -> None:
    """The guard runs on the exact request (`wrap_model_call`: system prompt and tool schemas
    included), clears what is needed on the first call and persists it with the response."""
    from langchain_result_layer.adapters._messages import RequestCounter

    policy = Policy(data, turns=0, fetch=False)
    model = scripted_model(policy, WINDOW)
    layer = ResultLayer(
        model=model, max_result_tokens=1_500, store="memory", token_counter="tiktoken"
    )
    big_prompt = (
        SYSTEM_PROMPT
        + " Background: "
        + " ".join(f"rule {i}: cite line numbers." for i in range(500))
    )
    rc = RequestCounter(layer.token_counter)
    full = _history(data, 20)
    # the longest prefix (ending with a result) that is under the trigger without the prompt
    cut = max(n for n in range(3, len(full) + 1, 2) if rc.count(full[:n]) <= WINDOW * 0.75)
    history = full[:cut]
    assert rc.count(history) <= WINDOW * 0.75 < rc.count(history, system=big_prompt)
    middleware = layer.middleware()
    agent = create_agent(model, make_tools(data), system_prompt=big_prompt, middleware=[middleware])
    out = agent.invoke({"messages": history}, CONFIG)
    check_requests(model, layer)
    cleared = [
        m for m in out["messages"] if isinstance(m, ToolMessage) and layer_marker(m).get("cleared")
    ]
    assert cleared  # persisted in state through the model node's command
    assert_pairing(out["messages"])
