"""The layer behaves like LangChain's own pieces: built from options, concrete types, the graph's
store, one artifact shape through checkpoints, tool events carrying the view, middleware order."""

from __future__ import annotations

import json
import sqlite3
import warnings
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import (
    ClearToolUsesEdit,
    ContextEditingMiddleware,
    HumanInTheLoopMiddleware,
)
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import create_react_agent
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command

from langchain_result_layer import (
    RAW_TOOL_TAG,
    BudgetGuard,
    GuardSettings,
    MiddlewareOrderWarning,
    ResultLayer,
    ResultLayerMiddleware,
    ResultStoreWarning,
    ResultView,
    TruncationNode,
)
from langchain_result_layer.scripted import ScriptedChatModel, ai_tool_calls, tool_call
from langchain_result_layer.stores.langgraph_store import LangGraphResultStore

WINDOW = 16_000
BIG = "".join(f"2024-05-01 10:00:{i % 60:02d} INFO step {i} ok\n" for i in range(6_000))
BIG += "ERROR: disk full on /var/lib/build\n"


@tool
def read_log(name: str) -> str:
    """Read a whole build log."""
    return f"log {name}\n" + BIG


@tool(response_format="content_and_artifact")
def rows(n: int) -> tuple[str, dict[str, Any]]:
    """Rows as text; the tool's own artifact is the row count."""
    return "\n".join(f"{i}|ok" for i in range(n)), {"count": n}


def model_for(*steps: AIMessage | str) -> ScriptedChatModel:
    return ScriptedChatModel(script=list(steps), max_input_tokens=WINDOW)


# --------------------------------------------------------------------------- construction


def test_middleware_is_built_from_options_like_langchains_own() -> None:
    middleware = ResultLayerMiddleware(context_window=WINDOW, store="memory", max_result_tokens=900)
    assert isinstance(middleware.layer, ResultLayer)
    assert middleware.layer.context_window == WINDOW
    assert middleware.layer.result_budget.tokens == 900
    assert middleware.name == "ResultLayerMiddleware"
    assert [t.name for t in middleware.tools] == ["fetch_tool_result"]
    agent = create_agent(
        model_for(ai_tool_calls(tool_call("read_log", {"name": "a"}, id="c1")), "done"),
        [read_log],
        middleware=[middleware],
    )
    out = agent.invoke({"messages": [("user", "why?")]})
    result = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert middleware.layer.is_processed(result)


def test_options_are_validated_when_given() -> None:
    with pytest.raises(TypeError, match="unknown options"):
        ResultLayerMiddleware(context_window=WINDOW, max_result_token=5)
    with pytest.raises(TypeError, match="either a ResultLayer or its options"):
        ResultLayerMiddleware(ResultLayer(context_window=WINDOW), store="memory")
    with pytest.raises(TypeError, match="expects a ResultLayer"):
        ResultLayerMiddleware("openai:gpt-4o")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="on_overflow='warn' is not supported"):
        GuardSettings(on_overflow="warn")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="unknown ToolPolicy fields"):
        ResultLayer(context_window=WINDOW, tool_policies={"t": {"max_token": 5}})
    with pytest.raises(TypeError, match="guard must be a GuardSettings"):
        ResultLayer(context_window=WINDOW, guard={"keep_last": 2})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="context_window must be positive"):
        ResultLayer(context_window=0)


def test_public_types_are_concrete_and_adapters_are_made_once() -> None:
    layer = ResultLayer(context_window=WINDOW)
    assert isinstance(layer.budget_guard, BudgetGuard)
    assert layer.budget_guard is layer.budget_guard
    assert isinstance(layer.truncation_node, TruncationNode)
    assert layer.truncation_node is layer.truncation_node
    assert isinstance(layer.middleware(), ResultLayerMiddleware)
    assert layer.fetch_tool is layer.fetch_tool


def test_string_and_wrapped_models_resolve_their_window_or_say_what_to_pass() -> None:
    model = model_for("hi")
    assert ResultLayer(model=model.with_retry()).context_window == WINDOW
    assert ResultLayer(model=model.bind(stop=["x"]).with_retry()).context_window == WINDOW
    assert ResultLayer(model=model.with_fallbacks([model])).context_window == WINDOW
    with pytest.raises(ValueError, match=r"context_window=<the model's input window in tokens>"):
        ResultLayer(model="nonexistent-provider:some-model")
    # With the window given, a string model only names the tokenizer: nothing is initialised.
    layer = ResultLayer(model="openai:gpt-4o", context_window=128_000)
    assert layer.context_window == 128_000
    no_profile = ScriptedChatModel(script=["hi"])
    with pytest.raises(ValueError, match="Pass context_window="):
        ResultLayer(model=no_profile)


def test_two_layers_coexist_in_one_agent() -> None:
    """A second layer with its own fetch tool name: distinct names, each processes once."""
    logs = ResultLayer(
        context_window=WINDOW, max_result_tokens=800, tool_policies={"rows": {"enabled": False}}
    )
    tables = ResultLayer(
        context_window=WINDOW,
        max_result_tokens=1_500,
        fetch_tool_name="fetch_table",
        tool_policies={"read_log": {"enabled": False}},
    )
    first, second = logs.middleware(), tables.middleware(guard=False)
    assert first.name != second.name
    model = model_for(
        ai_tool_calls(
            tool_call("read_log", {"name": "a"}, id="c1"), tool_call("rows", {"n": 9_000}, id="c2")
        ),
        "done",
    )
    agent = create_agent(model, [read_log, rows], middleware=[first, second])
    out = agent.invoke({"messages": [("user", "go")]})
    results = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
    assert logs.token_counter.count(str(results["c1"].content)) <= 800
    assert "fetch_tool_result(" in str(results["c1"].content)
    assert "fetch_table(" in str(results["c2"].content)
    assert str(results["c1"].content).count("<<<tool-output") == 1
    assert {t.name for t in model.bound_tools} >= {"fetch_tool_result", "fetch_table"}


# --------------------------------------------------------------------------- stores


def test_the_graphs_store_is_used_when_the_layer_has_none() -> None:
    store = InMemoryStore()
    middleware = ResultLayerMiddleware(context_window=WINDOW, max_result_tokens=800)
    assert middleware.layer.store_is_default
    model = model_for(ai_tool_calls(tool_call("read_log", {"name": "a"}, id="c1")), "done")
    agent = create_agent(model, [read_log], middleware=[middleware], store=store)
    out = agent.invoke({"messages": [("user", "why?")]}, {"configurable": {"user_id": "ada"}})
    result = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    record_id = middleware.layer.marker_of(result)["record_id"]
    assert store.search(()), "nothing was written to the graph's store"
    # The layer's own default store holds nothing; the graph's store has the raw result.
    assert middleware.layer.store is not None
    adapted = LangGraphResultStore(store)
    principal = middleware.layer.principal_for({"configurable": {"user_id": "ada"}})
    assert adapted.read(record_id, principal=principal).data == "log a\n" + BIG


def test_the_graphs_store_is_used_by_the_pre_model_hook_and_the_fetch_tool() -> None:
    store = InMemoryStore()
    layer = ResultLayer(context_window=WINDOW, max_result_tokens=800)
    tools = [*layer.wrap_tools([read_log]), layer.fetch_tool]
    model = model_for(ai_tool_calls(tool_call("read_log", {"name": "a"}, id="c1")), "next")

    def fetch_first(messages: list[BaseMessage]) -> AIMessage | str:
        import re

        found = re.search(r'fetch_tool_result\(ref="([^"]+)"\)', str(messages[-1].content))
        assert found
        return ai_tool_calls(tool_call("fetch_tool_result", {"ref": found.group(1)}, id="f1"))

    model = ScriptedChatModel(
        script=[model.script[0], fetch_first, "done"], max_input_tokens=WINDOW
    )
    agent = create_react_agent(model, tools, pre_model_hook=layer.budget_guard, store=store)
    out = agent.invoke({"messages": [("user", "why?")]})
    fetched = next(
        m for m in out["messages"] if isinstance(m, ToolMessage) and m.name != "read_log"
    )
    assert fetched.status == "success", fetched.content
    assert "step" in str(fetched.content)


def test_memory_store_with_a_checkpointer_warns_once_with_the_fix() -> None:
    middleware = ResultLayerMiddleware(context_window=WINDOW, max_result_tokens=800)
    agent = create_agent(
        model_for(ai_tool_calls(tool_call("read_log", {"name": "a"}, id="c1")), "done", "done"),
        [read_log],
        middleware=[middleware],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "t1"}}
    with pytest.warns(ResultStoreWarning, match=r"store='sqlite:///tool_results\.db'"):
        agent.invoke({"messages": [("user", "why?")]}, config)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResultStoreWarning)
        agent.invoke({"messages": [("user", "again")]}, config)  # once per layer
    explicit = ResultLayerMiddleware(context_window=WINDOW, store="memory")
    quiet = create_agent(
        model_for("done"), [read_log], middleware=[explicit], checkpointer=InMemorySaver()
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResultStoreWarning)
        quiet.invoke({"messages": [("user", "hi")]}, config)


# --------------------------------------------------------------------------- artifacts


def _artifact_size(view: ResultView) -> int:
    return view.record_size()


@pytest.mark.parametrize("n", [3, 40_000])
def test_one_artifact_shape_through_a_sqlite_checkpoint(tmp_path: Path, n: int) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver

    layer = ResultLayer(context_window=WINDOW, max_result_tokens=800, store="memory")
    model = model_for(ai_tool_calls(tool_call("rows", {"n": n}, id="c1")), "done")
    saver = SqliteSaver(sqlite3.connect(tmp_path / "cp.db", check_same_thread=False))
    agent = create_agent(model, [rows], middleware=[layer.middleware()], checkpointer=saver)
    config = {"configurable": {"thread_id": "t"}}
    out = agent.invoke({"messages": [("user", "go")]}, config)
    live = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert isinstance(live.artifact, ResultView)  # in process: the view
    assert live.artifact.original_artifact == {"count": n}  # the tool's own, whatever the size
    assert _artifact_size(live.artifact) <= len(str(live.content)) + 2_048
    restored = next(
        m for m in agent.get_state(config).values["messages"] if isinstance(m, ToolMessage)
    )
    stored = restored.artifact
    if isinstance(stored, dict):  # a checkpoint keeps a dict marked as a view
        assert stored["protocol"] == "langchain_result_layer.ResultView/1"
    again = ResultView.from_artifact(stored)
    assert again == live.artifact  # round-trips
    assert ResultLayer.tool_artifact(restored) == {"count": n}
    assert layer.is_processed(restored)  # the signed marker survives the checkpoint
    json.dumps(again.to_dict())


# --------------------------------------------------------------------------- streaming


async def _tool_end_outputs(agent: Any) -> list[tuple[str, list[str], Any]]:
    events = []
    async for event in agent.astream_events({"messages": [("user", "go")]}, version="v2"):
        if event["event"] == "on_tool_end":
            events.append((event["name"], event["tags"], event["data"]["output"]))
    return events


def _shown(output: Any) -> str:
    if isinstance(output, Command):
        output = output.update["messages"][0]
    return str(output.content if isinstance(output, ToolMessage) else output)


def _streaming_agent(wiring: str, layer: ResultLayer) -> Any:
    model = model_for(ai_tool_calls(tool_call("read_log", {"name": "a"}, id="c1")), "done")
    if wiring == "middleware":
        return create_agent(model, [read_log], middleware=[layer.middleware()])
    return create_react_agent(model, layer.wrap_tools([read_log]))


@pytest.mark.parametrize("wiring", ["middleware", "wrapped"])
async def test_tool_events_streamed_to_a_ui_carry_the_view(wiring: str) -> None:
    layer = ResultLayer(context_window=WINDOW, max_result_tokens=800)
    events = await _tool_end_outputs(_streaming_agent(wiring, layer))
    views = [e for e in events if RAW_TOOL_TAG not in e[1]]
    assert len(views) == 1
    shown = _shown(views[0][2])
    assert "<<<tool-output" in shown
    assert len(shown) < len(BIG) // 10
    # The raw run is a child tagged RAW_TOOL_TAG: `exclude_tags=[RAW_TOOL_TAG]` drops it.
    raw = [e for e in events if RAW_TOOL_TAG in e[1]]
    assert all(len(_shown(e[2])) > len(BIG) for e in raw)
    filtered = []
    async for event in _streaming_agent(wiring, layer).astream_events(
        {"messages": [("user", "go")]}, version="v2", exclude_tags=[RAW_TOOL_TAG]
    ):
        if event["event"] == "on_tool_end":
            filtered.append(_shown(event["data"]["output"]))
    assert filtered
    assert all(len(text) < len(BIG) // 10 for text in filtered)


def test_langgraph_tools_stream_mode_never_carries_the_raw_output() -> None:
    layer = ResultLayer(context_window=WINDOW, max_result_tokens=800)
    model = model_for(ai_tool_calls(tool_call("read_log", {"name": "a"}, id="c1")), "done")
    agent = create_agent(model, [read_log], middleware=[layer.middleware()])
    finished = [
        chunk
        for chunk in agent.stream({"messages": [("user", "go")]}, stream_mode="tools")
        if isinstance(chunk, dict) and chunk.get("event") == "tool-finished"
    ]
    assert len(finished) == 1
    assert len(_shown(finished[0]["output"])) < len(BIG) // 10


# --------------------------------------------------------------------------- order


def _hitl_edit_run(order: str) -> tuple[ResultLayer, str]:
    from langgraph.checkpoint.memory import InMemorySaver

    layer = ResultLayer(context_window=WINDOW, max_result_tokens=800, store="memory")
    hitl = HumanInTheLoopMiddleware(interrupt_on={"read_log": True})
    ours = layer.middleware()
    middleware = [ours, hitl] if order == "layer first" else [hitl, ours]
    model = model_for(ai_tool_calls(tool_call("read_log", {"name": "a"}, id="c1")), "done")
    agent = create_agent(model, [read_log], middleware=middleware, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": order}}
    agent.invoke({"messages": [("user", "go")]}, config)
    edit = {"type": "edit", "edited_action": {"name": "read_log", "args": {"name": "b"}}}
    out = agent.invoke(Command(resume={"decisions": [edit]}), config)
    result = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    return layer, str(result.content)


@pytest.mark.parametrize("order", ["layer first", "layer last"])
def test_a_reviewers_edit_notice_stays_outside_the_fence(order: str) -> None:
    layer, text = _hitl_edit_run(order)
    assert layer.fence_results
    assert "Executed instead: read_log" in text
    fence = text.index("<<<tool-output")
    assert text.index("Executed instead") < fence  # the notice is the reviewer's, not data
    assert "log b" in text[fence:]


def test_a_middleware_inside_the_layer_that_answers_for_the_tool_is_warned_about() -> None:
    """A reviewer answering for the tool (per-call mode) inside the layer: fenced, warned."""
    layer = ResultLayer(context_window=WINDOW, max_result_tokens=800, store="memory")
    hitl = HumanInTheLoopMiddleware(interrupt_on={"read_log": True}, interrupt_mode="per_call")
    model = model_for(ai_tool_calls(tool_call("read_log", {"name": "a"}, id="c1")), "done")
    agent = create_agent(
        model, [read_log], middleware=[layer.middleware(), hitl], checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "t"}}
    agent.invoke({"messages": [("user", "go")]}, config)
    respond = {"type": "respond", "message": "The build failed on a full disk."}
    with pytest.warns(MiddlewareOrderWarning, match="List ResultLayerMiddleware last"):
        agent.invoke(Command(resume=respond), config)


def test_context_editing_clearing_keeps_a_way_back() -> None:
    """ContextEditingMiddleware before the layer: its `[cleared]` results get the restore call."""
    layer = ResultLayer(context_window=WINDOW, max_result_tokens=800, store="memory")
    editing = ContextEditingMiddleware(edits=[ClearToolUsesEdit(trigger=1_500, keep=1)])
    script: list[AIMessage | str] = [
        ai_tool_calls(tool_call("read_log", {"name": f"l{k}"}, id=f"c{k}")) for k in range(4)
    ]
    model = model_for(*script, "done")
    agent = create_agent(model, [read_log], middleware=[editing, layer.middleware()])
    agent.invoke({"messages": [("user", "go")]})
    last = model.requests[-1]
    cleared = [
        m for m in last if isinstance(m, ToolMessage) and "cleared" in str(m.content).lower()
    ]
    assert cleared, "ContextEditingMiddleware did not clear anything: the test proves nothing"
    for message in cleared:
        assert 'fetch_tool_result(ref="ref://tool-result/' in str(message.content), message.content


def test_tools_without_the_layer_keep_their_events(tmp_path: Path) -> None:
    """Tools the middleware does not process (enabled=False) are untouched."""
    layer = ResultLayer(
        context_window=WINDOW, max_result_tokens=800, tool_policies={"read_log": {"enabled": False}}
    )
    model = model_for(ai_tool_calls(tool_call("read_log", {"name": "a"}, id="c1")), "done")
    agent = create_agent(model, [read_log], middleware=[layer.middleware(guard=False)])
    out = agent.invoke({"messages": [("user", "go")]})
    result = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert result.content == "log a\n" + BIG
    assert isinstance(read_log, BaseTool)
