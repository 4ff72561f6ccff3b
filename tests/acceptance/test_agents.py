"""Realistic agents in the three setups the README shows, over real data.

`create_agent` + `layer.middleware()`, `create_react_agent` + `wrap_tools` + the guard, and a
custom `StateGraph` + `ToolNode` + `truncation_node`; sync and async; streaming; a SQLite
checkpointer resumed by a fresh layer; and the awkward tool outputs real tools produce.
"""

from __future__ import annotations

import asyncio
import base64
import json
import sqlite3
import warnings
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, ToolException, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Command
from typing_extensions import TypedDict

from langchain_result_layer import BudgetGuard, ResultLayer
from langchain_result_layer.scripted import (
    ScriptedChatModel,
    ai_tool_calls,
    find_references,
    tool_call,
)
from tests.acceptance.conftest import (
    FETCH,
    assert_pairing,
    calls_in,
    fenced_body,
    fetch,
    is_cleared,
    marker,
    request_tokens,
)
from tests.fenced import unfence

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from langgraph.prebuilt import create_react_agent

pytestmark = pytest.mark.filterwarnings("ignore:create_react_agent has been moved")

WINDOW = 16_000
PROMPT = "You investigate the Python standard library. Use the tools; cite evidence."
CONFIG: dict[str, Any] = {
    "recursion_limit": 200,
    "configurable": {"thread_id": "thread-1", "user_id": "ada"},
}


def investigation(messages: list[BaseMessage], index: int) -> AIMessage | str:
    """A realistic investigation: search, read, query, run tests, then follow the evidence."""
    turn = sum(isinstance(m, AIMessage) for m in messages)
    steps: list[AIMessage | str] = [
        ai_tool_calls(tool_call("search_code", {"pattern": r"def __init__\("}, id="s1")),
        ai_tool_calls(tool_call("read_file", {"path": "typing.py"}, id="r1")),
        ai_tool_calls(
            tool_call("run_sql", {"query": "SELECT * FROM definitions LIMIT 4000"}, id="q1")
        ),
        ai_tool_calls(tool_call("run_tests", {}, id="t1")),
        ai_tool_calls(  # parallel calls
            tool_call("search_code", {"pattern": r"raise NotImplementedError"}, id="p1"),
            tool_call("read_file", {"path": "json/decoder.py"}, id="p2"),
            tool_call(
                "run_sql",
                {"query": "SELECT kind, COUNT(*) FROM definitions GROUP BY kind"},
                id="p3",
            ),
        ),
    ]
    if turn < len(steps):
        return steps[turn]
    if turn == len(steps):
        # Follow the exact call the test run's view told the model to make.
        tests = next(m for m in messages if isinstance(m, ToolMessage) and m.tool_call_id == "t1")
        ref = calls_in(tests)[0]
        return ai_tool_calls(tool_call(FETCH, {"ref": ref}, id="f1"))
    return "The failures come from the assertions shown in the test output."


def check_run(model: ScriptedChatModel, layer: ResultLayer, final: list[BaseMessage]) -> None:
    assert len(model.requests) == 7
    for request in model.requests:
        assert request_tokens(layer, request, model.bound_tools) <= layer.context_window
        assert_pairing(request)
    assert_pairing(final)
    results = {m.tool_call_id: m for m in final if isinstance(m, ToolMessage)}
    assert set(results) == {"s1", "r1", "q1", "t1", "p1", "p2", "p3", "f1"}
    for m in results.values():
        assert marker(m).get("processed"), m.tool_call_id
    assert results["t1"].status == "error"  # the failing test run keeps its status
    assert results["f1"].status == "success", results["f1"].content[:300]
    assert results["f1"].content.startswith("[Fetched ref://tool-result/")
    # What the model saw of the big results is bounded and says how to get the rest.
    for cid in ("s1", "r1", "q1", "t1"):
        assert layer.token_counter.count(results[cid].content) <= layer.result_budget.tokens
        assert calls_in(results[cid]), cid


def _agent(
    demo_tools: dict[str, Any], model: ScriptedChatModel, **layer_kw: Any
) -> tuple[Any, ResultLayer]:
    layer = ResultLayer(model=model, **layer_kw)
    agent = create_agent(
        model, list(demo_tools.values()), system_prompt=PROMPT, middleware=[layer.middleware()]
    )
    return agent, layer


def test_create_agent_with_middleware(demo_tools: dict[str, Any]) -> None:
    model = ScriptedChatModel(script=investigation, max_input_tokens=WINDOW)
    agent, layer = _agent(demo_tools, model)
    assert layer.context_window == WINDOW  # from the model's profile
    out = agent.invoke({"messages": [("user", "Why do the tests fail?")]}, CONFIG)
    assert any(t.name == FETCH for t in model.bound_tools)
    check_run(model, layer, out["messages"])


async def test_create_agent_with_middleware_async(demo_tools: dict[str, Any]) -> None:
    model = ScriptedChatModel(script=investigation, max_input_tokens=WINDOW)
    agent, layer = _agent(demo_tools, model, store="sqlite:///:memory:")
    out = await agent.ainvoke({"messages": [("user", "Why do the tests fail?")]}, CONFIG)
    check_run(model, layer, out["messages"])


def test_react_agent_with_wrapped_tools_and_guard(demo_tools: dict[str, Any]) -> None:
    model = ScriptedChatModel(script=investigation, max_input_tokens=WINDOW)
    layer = ResultLayer(model=model)
    tools = [*layer.wrap_tools(list(demo_tools.values())), layer.fetch_tool]
    for original, wrapped in zip(demo_tools.values(), tools, strict=False):
        assert (wrapped.name, wrapped.description) == (original.name, original.description)
        assert wrapped.tool_call_schema.model_json_schema() == (
            original.tool_call_schema.model_json_schema()
        )
    guard = BudgetGuard(layer, system_prompt=PROMPT, tools=tools)
    agent = create_react_agent(model, tools, prompt=PROMPT, pre_model_hook=guard)
    out = agent.invoke({"messages": [("user", "Why do the tests fail?")]}, CONFIG)
    check_run(model, layer, out["messages"])


class _State(TypedDict):
    messages: Annotated[list[BaseMessage], add_messages]


def _custom_graph(
    model: ScriptedChatModel, layer: ResultLayer, tools: list[Any], *, wrap: bool = True, **kw: Any
) -> Any:
    """The README's custom StateGraph, verbatim where it can be (`wrap=False`: the truncation
    node alone processes the results)."""
    bound = model.bind_tools([*tools, layer.fetch_tool])

    def agent(state: _State) -> dict[str, Any]:
        return {"messages": [bound.invoke([("system", PROMPT), *state["messages"]])]}

    graph = StateGraph(_State)
    graph.add_node("agent", agent)
    node_tools = layer.wrap_tools(tools) if wrap else list(tools)
    graph.add_node("tools", ToolNode([*node_tools, layer.fetch_tool]))
    graph.add_node("truncate", layer.truncation_node)
    graph.add_node("guard", layer.budget_guard)
    graph.add_edge(START, "guard")
    graph.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    graph.add_edge("tools", "truncate")
    graph.add_edge("truncate", "guard")
    graph.add_edge("guard", "agent")
    return graph.compile(**kw)


def test_custom_state_graph_with_truncation_node(demo_tools: dict[str, Any]) -> None:
    model = ScriptedChatModel(script=investigation, max_input_tokens=WINDOW)
    layer = ResultLayer(model=model)
    app = _custom_graph(model, layer, list(demo_tools.values()), wrap=False)
    out = app.invoke({"messages": [("user", "Why do the tests fail?")]}, CONFIG)
    check_run(model, layer, out["messages"])


async def test_custom_state_graph_async(demo_tools: dict[str, Any]) -> None:
    model = ScriptedChatModel(script=investigation, max_input_tokens=WINDOW)
    layer = ResultLayer(model=model)
    app = _custom_graph(model, layer, list(demo_tools.values()))
    out = await app.ainvoke({"messages": [("user", "Why do the tests fail?")]}, CONFIG)
    check_run(model, layer, out["messages"])


# --------------------------------------------------------------------------- persistence


def test_sqlite_checkpointer_resumed_by_a_fresh_layer(
    demo_tools: dict[str, Any], tmp_path: Path
) -> None:
    """Day 1 runs an agent; day 2 a new process (new layer, same files) fetches day 1's refs."""
    store_url = f"sqlite:///{tmp_path / 'results.db'}"
    config = {"configurable": {"thread_id": "ticket-42", "user_id": "ada"}}

    def build(script: Any) -> tuple[Any, ScriptedChatModel, ResultLayer, sqlite3.Connection]:
        model = ScriptedChatModel(script=script, max_input_tokens=WINDOW)
        layer = ResultLayer(model=model, store=store_url)
        conn = sqlite3.connect(tmp_path / "checkpoints.db", check_same_thread=False)
        agent = create_agent(
            model,
            list(demo_tools.values()),
            middleware=[layer.middleware()],
            checkpointer=SqliteSaver(conn),
        )
        return agent, model, layer, conn

    agent, _, _, conn = build(
        [ai_tool_calls(tool_call("read_file", {"path": "typing.py"}, id="day1")), "Read it."]
    )
    agent.invoke({"messages": [("user", "Read typing.py")]}, config)
    conn.close()

    def follow_old_reference(messages: list[BaseMessage]) -> AIMessage:
        old = next(m for m in messages if isinstance(m, ToolMessage) and m.tool_call_id == "day1")
        return ai_tool_calls(tool_call(FETCH, {"ref": calls_in(old)[0]}, id="day2"))

    agent, _model, layer, conn = build([follow_old_reference, "Found it."])
    try:
        history = agent.get_state(config).values["messages"]
        old = next(m for m in history if isinstance(m, ToolMessage))
        view = ResultLayer.view_of(old)  # still structured after the checkpoint round trip
        assert view is not None
        assert view.kind == "file"
        assert view.record_id
        out = agent.invoke({"messages": [("user", "Show me more")]}, config)
        fetched = next(
            m for m in out["messages"] if isinstance(m, ToolMessage) and m.tool_call_id == "day2"
        )
        assert fetched.status == "success", fetched.content[:300]
        raw = demo_tools["read_file"].invoke({"path": "typing.py"})
        assert fenced_body(fetched.content).rstrip("\n") in raw
        # Another user on the same thread id cannot read it.
        eve = {"configurable": {"thread_id": "ticket-42", "user_id": "eve"}}
        assert fetch(layer, eve, ref=calls_in(old)[0]).status == "error"
    finally:
        conn.close()


# --------------------------------------------------------------------------- streaming


def _big_logs_policy(messages: list[BaseMessage], index: int) -> AIMessage | str:
    turn = sum(isinstance(m, AIMessage) for m in messages)
    if turn >= 4:
        return "done"
    return ai_tool_calls(
        tool_call("search_code", {"pattern": r"def \w+\(self"}, id=f"a{turn}"),
        tool_call(
            "read_file",
            {"path": ["typing.py", "argparse.py", "ast.py", "enum.py"][turn]},
            id=f"b{turn}",
        ),
    )


@pytest.mark.parametrize("setup", ["create_agent", "react"])
@pytest.mark.parametrize("mode", ["updates", "messages"])
def test_streamed_tool_results_are_already_bounded(
    demo_tools: dict[str, Any], setup: str, mode: str
) -> None:
    model = ScriptedChatModel(script=_big_logs_policy, max_input_tokens=WINDOW)
    layer = ResultLayer(model=model, max_result_tokens=1_500)
    tools = [demo_tools["search_code"], demo_tools["read_file"]]
    if setup == "create_agent":
        app = create_agent(model, tools, middleware=[layer.middleware()])
    else:
        wrapped = [*layer.wrap_tools(tools), layer.fetch_tool]
        app = create_react_agent(model, wrapped, pre_model_hook=layer.budget_guard)
    streamed: list[ToolMessage] = []
    ai_chunks = 0
    for event in app.stream({"messages": [("user", "go")]}, stream_mode=mode):
        if mode == "messages":
            message, _meta = event
            if isinstance(message, ToolMessage):
                streamed.append(message)
            elif isinstance(message, AIMessageChunk):
                ai_chunks += 1
        else:
            for update in event.values():
                for m in (update or {}).get("messages", []) if isinstance(update, dict) else []:
                    if isinstance(m, ToolMessage):
                        streamed.append(m)
    assert len(streamed) >= 8
    for m in streamed:
        assert layer.token_counter.count(m.content) <= layer.result_budget.tokens
    if mode == "messages":
        assert ai_chunks >= 5
    assert len(model.requests) == 5


async def test_astream_messages_with_middleware(demo_tools: dict[str, Any]) -> None:
    model = ScriptedChatModel(script=_big_logs_policy, max_input_tokens=WINDOW)
    layer = ResultLayer(model=model, max_result_tokens=1_500)
    app = create_agent(
        model, [demo_tools["search_code"], demo_tools["read_file"]], middleware=[layer.middleware()]
    )
    sizes = []
    async for message, _meta in app.astream({"messages": [("user", "go")]}, stream_mode="messages"):
        if isinstance(message, ToolMessage):
            sizes.append(layer.token_counter.count(message.content))
    assert len(sizes) >= 8
    assert max(sizes) <= 1_500


def test_scripted_model_streams_tool_calls() -> None:
    model = ScriptedChatModel(
        script=[ai_tool_calls(tool_call("search", {"q": "x"}, id="c1"), content="Looking.")]
    )
    chunks = list(model.stream("hi"))
    full = chunks[0]
    for c in chunks[1:]:
        full = full + c
    assert [c["name"] for c in full.tool_calls] == ["search"]


# --------------------------------------------------------------------------- awkward outputs

BIG = "\n".join(f"line {i}: " + "x" * 80 for i in range(5_000))
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(120_000)).decode()


@tool
def explode(x: int) -> str:
    """A tool that fails with a long message."""
    raise ToolException("fatal: deploy failed\n" + BIG + "\nerror: exit code 3")


explode.handle_tool_error = True


@tool
def as_command(x: int, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
    """A tool that answers with a Command."""
    return Command(
        update={"messages": [ToolMessage(BIG, tool_call_id=tool_call_id, name="as_command")]}
    )


@tool
def records(n: int) -> list[dict[str, Any]]:
    """A tool returning a list of dicts."""
    return [{"id": i, "user": f"u{i}", "ok": i % 3 == 0} for i in range(n)]


@tool(response_format="content_and_artifact")
def screenshot(n: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A tool returning text and an image block, with an artifact."""
    blocks = [
        {"type": "text", "text": "caption\n" + BIG[:40_000]},
        {"type": "image", "base64": PNG, "mime_type": "image/png"},
    ]
    return blocks, {"page": "https://example.invalid/app"}


@tool
def one_line_json(n: int) -> str:
    """A tool returning one huge JSON line."""
    return json.dumps({"data": [{"k": i, "v": "z" * 30} for i in range(n)]})


@tool
def nothing(n: int) -> str:
    """A tool returning an empty string."""
    return ""


@tool
def chinese(n: int) -> str:
    """A tool returning CJK text."""
    return ("错误：数据库连接失败，请检查配置文件中的主机名和端口。" * 10 + "\n") * n


@tool("lookup.v2-beta:search")
def odd_name(n: int) -> str:
    """A tool with dots, dashes and a colon in its name."""
    return BIG


AWKWARD = [explode, as_command, records, screenshot, one_line_json, nothing, chinese, odd_name]
AWKWARD_CALLS = [
    ("explode", {"x": 1}),
    ("as_command", {"x": 1}),
    ("records", {"n": 3_000}),
    ("screenshot", {"n": 1}),
    ("one_line_json", {"n": 20_000}),
    ("nothing", {"n": 1}),
    ("chinese", {"n": 300}),
    ("lookup.v2-beta:search", {"n": 1}),
]


def _awkward_run(setup: str) -> tuple[dict[str, ToolMessage], ResultLayer, ScriptedChatModel]:
    script: list[Any] = [
        ai_tool_calls(tool_call(name, args, id=f"c{i}"))
        for i, (name, args) in enumerate(AWKWARD_CALLS)
    ] + ["done"]
    model = ScriptedChatModel(script=script, max_input_tokens=64_000)
    layer = ResultLayer(model=model, max_result_tokens=1_000)
    if setup == "create_agent":
        app = create_agent(model, AWKWARD, middleware=[layer.middleware()])
    else:
        app = create_react_agent(
            model, [*layer.wrap_tools(AWKWARD), layer.fetch_tool], pre_model_hook=layer.budget_guard
        )
    out = app.invoke({"messages": [("user", "go")]}, CONFIG)
    results = {m.name: m for m in out["messages"] if isinstance(m, ToolMessage)}
    assert set(results) == {name for name, _ in AWKWARD_CALLS}
    return results, layer, model


@pytest.fixture(scope="module", params=["create_agent", "react"])
def awkward(
    request: pytest.FixtureRequest,
) -> tuple[dict[str, ToolMessage], ResultLayer, ScriptedChatModel]:
    return _awkward_run(request.param)


def _tokens(layer: ResultLayer, m: ToolMessage) -> int:
    if isinstance(m.content, str):
        return layer.token_counter.count(m.content)
    return sum(
        layer.token_counter.count(b["text"]) if b.get("type") == "text" else layer.image_tokens
        for b in m.content
        if isinstance(b, dict)
    )


def test_awkward_outputs_are_bounded_and_processed(awkward: Any) -> None:
    results, layer, model = awkward
    for name, m in results.items():
        assert marker(m).get("processed"), name
        # The text keeps the cap; an image kept under a cap below its fixed cost adds that cost.
        images = [b for b in m.content if isinstance(b, dict) and b.get("type") == "image"]
        limit = layer.result_budget.tokens + len(images) * (layer.image_tokens + 4)
        assert _tokens(layer, m) <= limit, name
    assert_pairing(model.requests[-1])


def test_tool_error_keeps_status_and_both_ends(awkward: Any) -> None:
    results, _, _ = awkward
    m = results["explode"]
    assert m.status == "error"
    assert "fatal: deploy failed" in m.content
    assert "exit code 3" in m.content


def test_command_result_is_processed(awkward: Any) -> None:
    results, layer, _ = awkward
    m = results["as_command"]
    view = ResultLayer.view_of(m)
    assert view is not None
    assert view.truncated
    assert view.stored
    assert fetch(layer, CONFIG, ref=calls_in(m)[0]).status == "success"


def test_list_of_dicts_becomes_a_rows_view(awkward: Any) -> None:
    results, _, _ = awkward
    view = ResultLayer.view_of(results["records"])
    assert view is not None
    assert view.kind == "rows"
    assert view.total == 3_000


def test_image_blocks_are_kept_or_replaced_and_artifact_survives(awkward: Any) -> None:
    results, layer, _ = awkward
    m = results["screenshot"]
    assert isinstance(m.content, list)
    view = ResultLayer.view_of(m)
    assert view is not None
    assert view.original_artifact == {"page": "https://example.invalid/app"}
    for ref in find_references([m]):
        assert fetch(layer, CONFIG, ref=ref).status == "success", ref


def test_single_line_json_is_bounded_and_fetchable(awkward: Any) -> None:
    results, layer, _ = awkward
    m = results["one_line_json"]
    view = ResultLayer.view_of(m)
    assert view is not None
    assert view.truncated
    for ref in calls_in(m):
        out = fetch(layer, CONFIG, ref=ref)
        assert out.status == "success", out.content[:300]


def test_empty_result_passes_through(awkward: Any) -> None:
    results, _, _ = awkward
    # Fenced like every result (default), with nothing inside.
    assert unfence(results["nothing"].content) == ""
    assert results["nothing"].status == "success"


def test_cjk_result_is_cut_on_characters_and_fetchable(awkward: Any) -> None:
    results, layer, _ = awkward
    m = results["chinese"]
    body = fenced_body(m.content)
    assert body.startswith("错误：数据库连接失败")
    assert "\ufffd" not in m.content
    out = fetch(layer, CONFIG, ref=calls_in(m)[0])
    assert out.status == "success"
    assert "错误" in out.content


def test_odd_tool_names_work(awkward: Any) -> None:
    results, layer, _ = awkward
    m = results["lookup.v2-beta:search"]
    assert "lookup.v2-beta:search" in m.content.split("\n", 1)[0]
    assert fetch(layer, CONFIG, ref=calls_in(m)[0]).status == "success"


# --------------------------------------------------------------------------- concurrency


async def test_parallel_async_tool_calls_into_one_sqlite_file(
    demo_tools: dict[str, Any], tmp_path: Path
) -> None:
    patterns = [
        r"def __init__\(",
        r"import os",
        r"class \w+Error",
        r"raise ValueError",
        r"yield from",
        r"async def",
        r"lambda",
        r"@property",
    ]
    script = [
        ai_tool_calls(
            *[tool_call("search_code", {"pattern": p}, id=f"c{i}") for i, p in enumerate(patterns)]
        ),
        "done",
    ]
    model = ScriptedChatModel(script=script, max_input_tokens=400_000)
    layer = ResultLayer(model=model, max_result_tokens=800, store=f"sqlite:///{tmp_path / 'r.db'}")
    app = create_agent(
        model,
        [demo_tools["search_code"]],
        middleware=[layer.middleware()],
        checkpointer=InMemorySaver(),
    )
    out = await app.ainvoke({"messages": [("user", "go")]}, CONFIG)
    results = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert len(results) == len(patterns)
    assert all(marker(m).get("stored") for m in results)
    outs = await asyncio.gather(
        *[
            layer.fetch_tool.ainvoke(
                {
                    "type": "tool_call",
                    "id": f"f{i}",
                    "name": FETCH,
                    "args": {"ref": calls_in(m)[0]},
                },
                CONFIG,
            )
            for i, m in enumerate(results)
        ]
    )
    assert all(o.status == "success" for o in outs)
    assert not any(is_cleared(m) for m in results)


@tool
def download(n: int) -> bytes:
    """A tool returning raw bytes (an HTTP body, a file read in binary mode)."""
    return b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * n


@pytest.mark.parametrize("setup", ["create_agent", "react"])
def test_tool_returning_bytes_gets_the_binary_view(setup: str) -> None:
    model = ScriptedChatModel(
        script=[ai_tool_calls(tool_call("download", {"n": 300}, id="c1")), "done"],
        max_input_tokens=64_000,
    )
    layer = ResultLayer(model=model, max_result_tokens=1_000)
    if setup == "create_agent":
        app = create_agent(model, [download], middleware=[layer.middleware()])
    else:
        app = create_react_agent(
            model, layer.wrap_tools([download]), pre_model_hook=layer.budget_guard
        )
    out = app.invoke({"messages": [("user", "go")]}, CONFIG)
    result = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    view = ResultLayer.view_of(result)
    assert view is not None
    assert view.kind == "binary"


def test_custom_graph_keeps_raw_results_out_of_checkpoints(demo_tools: dict[str, Any]) -> None:
    model = ScriptedChatModel(
        script=[ai_tool_calls(tool_call("read_file", {"path": "typing.py"}, id="r1")), "done"],
        max_input_tokens=WINDOW,
    )
    layer = ResultLayer(model=model)
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    app = _custom_graph(model, layer, [demo_tools["read_file"]], checkpointer=SqliteSaver(conn))
    config = {"configurable": {"thread_id": "raw-check", "user_id": "ada"}}
    app.invoke({"messages": [("user", "read typing.py")]}, config)
    largest = max(
        len(str(m.content))
        for snapshot in app.get_state_history(config)
        for m in snapshot.values.get("messages", [])
    )
    conn.close()
    raw = demo_tools["read_file"].invoke({"path": "typing.py"})
    assert largest < len(raw) // 2, largest
