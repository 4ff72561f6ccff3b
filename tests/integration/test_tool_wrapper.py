"""`layer.wrap_tool`: delegation with real `ToolNode` injection, artifacts, errors, `Command`s,
`return_direct`; and `layer.process_tool_message` as a plain post-processor after a ToolNode."""

from __future__ import annotations

import warnings
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import InjectedToolCallId, StructuredTool, ToolException, tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import InjectedState, InjectedStore, ToolNode, ToolRuntime
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command

from langchain_result_layer import ResultLayer, ResultView
from langchain_result_layer.adapters._messages import layer_marker
from langchain_result_layer.adapters.tool_wrapper import ResultLayerTool, unwrap_tool
from langchain_result_layer.scripted import ScriptedChatModel, ai_tool_calls, tool_call
from tests.fenced import unfence

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from langgraph.prebuilt import create_react_agent

BIG = (
    "\n".join(
        f"row {i}: value={i * 7} status={'ok' if i % 50 else 'FAILED'}" for i in range(20_000)
    )
    + "\n"
)


@pytest.fixture
def layer() -> ResultLayer:
    return ResultLayer(
        context_window=16_000, max_result_tokens=800, store="memory", token_counter="tiktoken"
    )


def run_tool_node(
    tools: list[Any],
    calls: list[Any],
    *,
    store: BaseStore | None = None,
    config: RunnableConfig | None = None,
) -> list[ToolMessage]:
    graph = StateGraph(MessagesState)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "tools")
    app = graph.compile(store=store)
    out = app.invoke({"messages": [AIMessage("", id="a", tool_calls=calls)]}, config or {})
    return [m for m in out["messages"] if isinstance(m, ToolMessage)]


def test_keeps_name_description_and_schemas(layer: ResultLayer) -> None:
    @tool
    def search(
        query: str, limit: int = 10, state: Annotated[dict | None, InjectedState] = None
    ) -> str:  # type: ignore[assignment]
        """Search the code base."""
        return query

    wrapped = layer.wrap_tool(search)
    assert isinstance(wrapped, ResultLayerTool)
    assert unwrap_tool(wrapped) is search
    assert (wrapped.name, wrapped.description) == (search.name, search.description)
    assert convert_to_openai_tool(wrapped) == convert_to_openai_tool(search)
    assert wrapped.args == search.args
    assert wrapped.get_input_schema() is search.get_input_schema()
    assert layer.wrap_tool(wrapped) is wrapped  # idempotent
    assert layer.wrap_tool(layer.fetch_tool) is layer.fetch_tool
    assert layer.wrap_tools([search])[0].name == "search"


def test_injected_arguments_pass_through_tool_node(layer: ResultLayer) -> None:
    seen: dict[str, Any] = {}

    @tool
    def probe(
        q: str,
        runtime: ToolRuntime,
        state: Annotated[dict, InjectedState],
        store: Annotated[BaseStore, InjectedStore()],
        call_id: Annotated[str, InjectedToolCallId],
        config: RunnableConfig,
    ) -> str:
        """Probe what the tool receives."""
        seen.update(
            runtime_call=runtime.tool_call_id,
            messages=len(state["messages"]),
            store=store,
            call_id=call_id,
            thread=config["configurable"].get("thread_id"),
        )
        return BIG

    store = InMemoryStore()
    wrapped = layer.wrap_tool(probe)
    assert set(convert_to_openai_tool(wrapped)["function"]["parameters"]["properties"]) == {"q"}
    [msg] = run_tool_node(
        [wrapped],
        [tool_call("probe", {"q": "x"}, id="c1")],
        store=store,
        config={"configurable": {"thread_id": "t-7"}},
    )
    assert seen == {
        "runtime_call": "c1",
        "messages": 1,
        "store": store,
        "call_id": "c1",
        "thread": "t-7",
    }
    assert layer_marker(msg)["truncated"]
    assert msg.tool_call_id == "c1"
    assert msg.name == "probe"
    assert len(msg.content) < len(BIG)


def test_content_and_artifact_is_kept(layer: ResultLayer) -> None:
    @tool(response_format="content_and_artifact")
    def rows(n: int) -> tuple[str, dict[str, Any]]:
        """Rows as text, the raw rows as artifact."""
        return ("\n".join(f"{i}|ok" for i in range(n)), {"count": n})

    wrapped = layer.wrap_tool(rows)
    assert wrapped.response_format == "content_and_artifact"
    small, big = run_tool_node(
        [wrapped], [tool_call("rows", {"n": 3}, id="s"), tool_call("rows", {"n": 50_000}, id="b")]
    )
    # One artifact shape whatever the size: the view, with the tool's own artifact inside.
    assert ResultLayer.tool_artifact(small) == {"count": 3}
    assert isinstance(small.artifact, ResultView)
    assert unfence(str(small.content)) == "0|ok\n1|ok\n2|ok"
    view = ResultView.from_artifact(big.artifact)
    assert view is not None
    assert view.truncated
    assert view.original_artifact == {"count": 50_000}


def test_handle_tool_error_results_are_processed(layer: ResultLayer) -> None:
    def fail(n: int) -> str:
        raise ToolException("Traceback:\n" + "  frame\n" * 20_000 + "RuntimeError: disk full")

    flaky = StructuredTool.from_function(
        fail, name="flaky", description="Fail with a long message.", handle_tool_error=True
    )
    wrapped = layer.wrap_tool(flaky)
    assert wrapped.handle_tool_error is True
    [msg] = run_tool_node([wrapped], [tool_call("flaky", {"n": 1}, id="e1")])
    assert msg.status == "error"
    assert layer_marker(msg)["truncated"]
    assert "RuntimeError: disk full" in msg.content  # the error tail is kept


def test_unhandled_errors_propagate(layer: ResultLayer) -> None:
    @tool
    def broken(n: int) -> str:
        """Always fails."""
        raise ToolException("nope")

    with pytest.raises(ToolException):
        layer.wrap_tool(broken).invoke({"n": 1})


def test_command_returns_have_their_tool_messages_processed(layer: ResultLayer) -> None:
    @tool
    def stateful(q: str, call_id: Annotated[str, InjectedToolCallId]) -> Command:
        """Return a Command with a big result and a state update."""
        return Command(
            update={
                "messages": [ToolMessage(BIG, tool_call_id=call_id, name="stateful")],
                "note": q,
            }
        )

    wrapped = layer.wrap_tool(stateful)
    out = wrapped.invoke(tool_call("stateful", {"q": "x"}, id="k1"))
    assert isinstance(out, Command)
    assert out.update["note"] == "x"
    [msg] = out.update["messages"]
    assert layer_marker(msg)["truncated"]
    assert msg.tool_call_id == "k1"
    [via_node] = run_tool_node([wrapped], [tool_call("stateful", {"q": "y"}, id="k2")])
    assert layer_marker(via_node)["truncated"]


async def test_async_paths(layer: ResultLayer) -> None:
    @tool
    async def aread(path: str) -> str:
        """Read asynchronously."""
        return BIG

    wrapped = layer.wrap_tool(aread)
    msg = await wrapped.ainvoke(tool_call("aread", {"path": "x"}, id="a1"))
    assert isinstance(msg, ToolMessage)
    assert layer_marker(msg)["truncated"]
    text = await wrapped.ainvoke({"path": "x"})  # no tool call: the bounded view itself
    assert isinstance(text, str)
    assert len(text) < len(BIG)
    assert "ref://tool-result/" in text


def test_plain_invoke_and_functions(layer: ResultLayer) -> None:
    def dump(n: int) -> str:
        """Dump n rows."""
        return BIG[: n * 30]

    wrapped = layer.wrap_tool(dump)
    assert wrapped.name == "dump"
    assert unfence(wrapped.invoke({"n": 2})) == BIG[:60].removesuffix("\n")  # shown whole
    assert len(wrapped.invoke({"n": 10_000})) < 10_000 * 30
    assert unfence(wrapped.run({"n": 2})) == BIG[:60].removesuffix("\n")
    plain = ResultLayer(context_window=layer.context_window, fence_results=False)
    assert plain.wrap_tool(dump).invoke({"n": 2}) == BIG[:60]  # the opt-out: unchanged
    with pytest.raises(TypeError):
        layer.wrap_tool(42)  # type: ignore[arg-type]


def test_return_direct_ends_the_react_agent(layer: ResultLayer) -> None:
    @tool(return_direct=True)
    def answer(text: str) -> str:
        """Give the final answer."""
        return text * 5_000

    wrapped = layer.wrap_tool(answer)
    assert wrapped.return_direct
    model = ScriptedChatModel(
        script=[ai_tool_calls(tool_call("answer", {"text": "done. "}, id="r1"))],
        max_input_tokens=16_000,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = create_react_agent(model, [wrapped], pre_model_hook=layer.budget_guard)
    out = agent.invoke({"messages": [("user", "answer")]})
    assert len(model.requests) == 1
    assert isinstance(out["messages"][-1], ToolMessage)
    assert layer_marker(out["messages"][-1])["truncated"]


def test_process_tool_message_after_a_tool_node(layer: ResultLayer) -> None:
    @tool
    def dump(n: int) -> str:
        """Dump rows."""
        return BIG

    raw = run_tool_node(
        [dump], [tool_call("dump", {"n": 1}, id="d1"), tool_call("dump", {"n": 2}, id="d2")]
    )
    processed = [layer.process_tool_message(m) for m in raw]
    for before, after in zip(raw, processed, strict=True):
        assert (after.id, after.tool_call_id, after.name, after.status) == (
            before.id,
            before.tool_call_id,
            before.name,
            before.status,
        )
        assert layer_marker(after)["truncated"]
        assert len(after.content) < len(before.content)
        assert layer.process_tool_message(after) is after  # processing twice changes nothing


async def test_aprocess_tool_message_after_a_tool_node(layer: ResultLayer) -> None:
    @tool
    def dump(n: int) -> str:
        """Dump rows."""
        return BIG

    raw = run_tool_node([dump], [tool_call("dump", {"n": 1}, id="d1")])
    after = await layer.aprocess_tool_message(raw[0])
    assert layer_marker(after)["truncated"]
    assert await layer.aprocess_tool_message(after) is after
