"""A custom `StateGraph`: agent -> ToolNode -> truncation node -> budget guard node -> agent.

Also the SQLite checkpointer round trip: a second process-like run (new graph, new saver, same
database file and thread) continues from the checkpoint.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from langchain_result_layer import ResultLayer, ResultView
from langchain_result_layer.adapters._messages import layer_marker
from langchain_result_layer.adapters.budget_guard import BudgetGuard
from langchain_result_layer.scripted import ScriptedChatModel, ai_tool_calls, tool_call
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


def build_graph(
    layer: ResultLayer, model: ScriptedChatModel, data: DataSource, *, checkpointer: Any = None
) -> Any:
    tools = [*make_tools(data), layer.fetch_tool]
    bound = model.bind_tools(tools)
    guard = BudgetGuard(layer, system_prompt=SYSTEM_PROMPT, tools=tools)

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [bound.invoke([("system", SYSTEM_PROMPT), *state["messages"]])]}

    async def aagent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await bound.ainvoke([("system", SYSTEM_PROMPT), *state["messages"]])]}

    from langchain_core.runnables import RunnableLambda

    graph = StateGraph(MessagesState)
    graph.add_node("agent", RunnableLambda(agent, afunc=aagent))
    graph.add_node("tools", ToolNode(tools))
    graph.add_node("truncate", layer.truncation_node)
    graph.add_node("guard", guard)
    graph.add_edge(START, "guard")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "truncate")
    graph.add_edge("truncate", "guard")
    graph.add_edge("guard", "agent")
    return graph.compile(checkpointer=checkpointer)


def make_layer(store: Any = "memory") -> ResultLayer:
    return ResultLayer(
        context_window=WINDOW, max_result_tokens=1_500, store=store, token_counter="tiktoken"
    )


CONFIG: RunnableConfig = {
    "recursion_limit": 500,
    "configurable": {"thread_id": "graph-1", "user_id": "ada"},
}


def _check_state(messages: list[Any]) -> None:
    assert_pairing(messages)
    for m in messages:
        if isinstance(m, ToolMessage):
            assert layer_marker(m).get("processed")


def test_state_graph_sync(data: DataSource) -> None:
    layer = make_layer()
    policy = Policy(data, turns=32)
    model = scripted_model(policy, WINDOW)
    app = build_graph(layer, model, data)
    out = app.invoke({"messages": [("user", "Why did the build fail?")]}, CONFIG)
    report = check_requests(model, layer, policy=policy)
    assert len(model.requests) >= 30
    assert report.cleared_calls
    assert report.fetched_ok >= 1
    _check_state(out["messages"])


async def test_state_graph_async(data: DataSource) -> None:
    layer = make_layer()
    policy = Policy(data, turns=32)
    model = scripted_model(policy, WINDOW)
    app = build_graph(layer, model, data)
    out = await app.ainvoke({"messages": [("user", "Why did the build fail?")]}, CONFIG)
    report = check_requests(model, layer, policy=policy)
    assert len(model.requests) >= 30
    assert report.cleared_calls
    assert report.fetched_ok >= 1
    _check_state(out["messages"])


def _round_trip_checks(messages: list[Any]) -> tuple[int, int]:
    views = cleared = 0
    for m in messages:
        if not isinstance(m, ToolMessage):
            continue
        marker = layer_marker(m)
        assert marker.get("processed")
        if marker.get("cleared"):
            cleared += 1
            assert "fetch_tool_result(ref=" in str(m.content) or "could not be saved" in str(
                m.content
            )
        if marker.get("truncated") and not marker.get("cleared") and marker.get("kind") != "fetch":
            view = ResultView.from_artifact(m.artifact)  # a dict after the round trip
            assert view is not None
            assert view.truncated
            assert view.record_id == marker["record_id"]
            views += 1
    return views, cleared


def test_sqlite_checkpointer_round_trip(data: DataSource, tmp_path: Path) -> None:
    sqlite = pytest.importorskip("langgraph.checkpoint.sqlite")
    import sqlite3

    db = tmp_path / "checkpoints.db"
    store_url = f"sqlite:///{tmp_path / 'results.db'}"
    policy = Policy(data, turns=16)
    model = scripted_model(policy, WINDOW)
    conn = sqlite3.connect(db, check_same_thread=False)
    app = build_graph(make_layer(store_url), model, data, checkpointer=sqlite.SqliteSaver(conn))
    app.invoke({"messages": [("user", "Why did the build fail?")]}, CONFIG)
    conn.close()

    # A new process: new layer over the same result store, new saver over the same file.
    policy2 = Policy(data, turns=34)
    model2 = scripted_model(policy2, WINDOW)
    layer2 = make_layer(store_url)
    conn2 = sqlite.SqliteSaver(sqlite3.connect(db, check_same_thread=False))
    app2 = build_graph(layer2, model2, data, checkpointer=conn2)
    restored = app2.get_state(CONFIG).values["messages"]
    views, cleared = _round_trip_checks(restored)
    assert views >= 1
    assert cleared >= 1
    restored_cleared = {
        m.tool_call_id: m.content
        for m in restored
        if isinstance(m, ToolMessage) and layer_marker(m).get("cleared")
    }
    out = app2.invoke({"messages": [("user", "Keep going.")]}, CONFIG)
    report = check_requests(model2, layer2, policy=policy2)
    assert len(model2.requests) >= 18
    final = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
    for call_id, content in restored_cleared.items():
        assert final[call_id].content == content  # never re-cleared, never restored
    # a result cleared before the restart can be fetched after it (the store is durable)
    refs = [r for r, _ in policy2.fetched]
    assert report.fetched_ok >= 1
    assert refs
    _check_state(out["messages"])


async def test_async_sqlite_checkpointer_round_trip(data: DataSource, tmp_path: Path) -> None:
    aio = pytest.importorskip("langgraph.checkpoint.sqlite.aio")
    db = str(tmp_path / "checkpoints.db")
    policy = Policy(data, turns=14)
    model = scripted_model(policy, WINDOW)
    async with aio.AsyncSqliteSaver.from_conn_string(db) as saver:
        app = build_graph(make_layer(), model, data, checkpointer=saver)
        await app.ainvoke({"messages": [("user", "Why did the build fail?")]}, CONFIG)
    async with aio.AsyncSqliteSaver.from_conn_string(db) as saver:
        app = build_graph(make_layer(), model, data, checkpointer=saver)
        state = await app.aget_state(CONFIG)
        views, cleared = _round_trip_checks(state.values["messages"])
        assert views >= 1
        assert cleared >= 1


def test_truncation_node_processes_only_new_results(data: DataSource) -> None:
    layer = make_layer()
    node = layer.truncation_node
    big = next(iter(data.logs.values()))
    done = layer.process_tool_message(ToolMessage(big, tool_call_id="c0", name="read_log", id="t0"))
    fresh = ToolMessage(big, tool_call_id="c1", name="read_log", id="t1")
    calls = AIMessage(
        "",
        id="a",
        tool_calls=[
            tool_call("read_log", {"name": "x"}, id="c0"),
            tool_call("read_log", {"name": "y"}, id="c1"),
        ],
    )
    update = node.invoke({"messages": [calls, done, fresh]})
    assert [m.id for m in update["messages"]] == ["t1"]
    new = update["messages"][0]
    assert (new.tool_call_id, new.name, new.status) == ("c1", "read_log", "success")
    assert layer_marker(new)["truncated"]
    assert node.invoke({"messages": [calls, done, new]}) == {}


async def test_truncation_node_async_and_missing_ids(data: DataSource) -> None:
    layer = make_layer()
    node = layer.truncation_node
    big = next(iter(data.logs.values()))
    msgs = [ToolMessage(big, tool_call_id=f"c{i}", name="read_log", id=f"t{i}") for i in range(3)]
    update = await node.ainvoke({"messages": msgs})
    assert [m.id for m in update["messages"]] == ["t0", "t1", "t2"]
    assert all(layer_marker(m)["processed"] for m in update["messages"])
    with pytest.raises(ValueError, match="without ids"):
        node.invoke({"messages": [ToolMessage(big, tool_call_id="c9", name="read_log")]})


def test_guard_node_with_checkpointer_is_sticky(data: DataSource) -> None:
    """Decisions written by the guard node survive in the checkpoint and are not repeated."""
    layer = make_layer()
    names = sorted(data.logs)
    script = [
        ai_tool_calls(tool_call("read_log", {"name": names[i % len(names)]}, id=f"r{i}"))
        for i in range(14)
    ]
    model = ScriptedChatModel(script=script, max_input_tokens=WINDOW)
    app = build_graph(layer, model, data, checkpointer=InMemorySaver())
    app.invoke({"messages": [("user", "Read the logs.")]}, CONFIG)
    history = list(app.get_state_history(CONFIG))
    cleared_at: dict[str, str] = {}
    for snapshot in reversed(history):  # oldest first
        for m in snapshot.values.get("messages", []):
            if isinstance(m, ToolMessage) and layer_marker(m).get("cleared"):
                assert cleared_at.setdefault(m.tool_call_id, str(m.content)) == str(m.content)
    assert cleared_at
