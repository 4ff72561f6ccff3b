"""The budget guard from the user's side: long runs over real logs, prompt-cache friendliness,
placeholders that restore, pinned tools, non-destructive mode, and what happens on overflow.
"""

from __future__ import annotations

import asyncio
import warnings
from dataclasses import dataclass
from typing import Annotated, Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from typing_extensions import TypedDict

from langchain_result_layer import (
    BudgetGuard,
    ContextBudgetExceeded,
    ContextBudgetWarning,
    GuardSettings,
    ResultLayer,
    ToolPolicy,
)
from langchain_result_layer.scripted import ScriptedChatModel, ai_tool_calls, tool_call
from tests.acceptance.conftest import (
    FETCH,
    assert_pairing,
    calls_in,
    fenced_body,
    fetch,
    is_cleared,
    prefix_breaks,
    request_tokens,
)
from tests.fenced import unfence

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from langgraph.prebuilt import create_react_agent

pytestmark = pytest.mark.filterwarnings("ignore:create_react_agent has been moved")

WINDOW = 24_000
TURNS = 42
PROMPT = "You are a CI investigator. Read logs, compare failures, cite lines."
CONFIG: dict[str, Any] = {
    "recursion_limit": 500,
    "configurable": {"thread_id": "long-run", "user_id": "ada"},
}
PLAN = "PLAN\n" + "\n".join(
    f"step {i}: check build {i} for the root cause " + "." * 50 for i in range(150)
)


def make_tools(logs: dict[str, str]) -> list[BaseTool]:
    @tool
    def read_log(name: str) -> str:
        """Read a whole CI log by name (log0 ... log44)."""
        return logs[name]

    @tool
    def get_plan(step: int) -> str:
        """The investigation plan."""
        return PLAN

    return [read_log, get_plan]


class _State(TypedDict):
    messages: Annotated[list[BaseMessage], add_messages]


def _custom_graph(model: ScriptedChatModel, layer: ResultLayer, tools: list[BaseTool]) -> Any:
    """The README's custom StateGraph: ToolNode -> truncation node -> guard -> model."""
    guard = BudgetGuard(layer, system_prompt=PROMPT, tools=[*tools, layer.fetch_tool])
    bound = model.bind_tools([*tools, layer.fetch_tool])

    def agent(state: _State) -> dict[str, Any]:
        return {"messages": [bound.invoke([SystemMessage(PROMPT), *state["messages"]])]}

    graph = StateGraph(_State)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode([*tools, layer.fetch_tool]))
    graph.add_node("truncate", layer.truncation_node)
    graph.add_node("guard", guard)
    graph.add_edge(START, "guard")
    graph.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    graph.add_edge("tools", "truncate")
    graph.add_edge("truncate", "guard")
    graph.add_edge("guard", "agent")
    return graph.compile()


@dataclass
class LongRun:
    setup: str
    non_destructive: bool
    model: ScriptedChatModel
    layer: ResultLayer
    final: list[BaseMessage]
    fetched: list[tuple[str, str]]
    """(call id, reference) of every fetch of a cleared result."""


def _policy(fetched: list[tuple[str, str]]) -> Any:
    def decide(messages: list[BaseMessage], index: int) -> AIMessage | str:
        turn = sum(isinstance(m, AIMessage) for m in messages)
        if turn >= TURNS:
            return "The builds fail for the reasons shown in the error windows."
        if turn == 0:
            return ai_tool_calls(tool_call("get_plan", {"step": 0}, id="plan"))
        if turn % 7 == 6:
            done = {ref for _, ref in fetched}
            placeholders = [m for m in messages if is_cleared(m) and m.name == "read_log"]
            refs = [r for m in placeholders for r in calls_in(m) if r not in done]
            if refs:
                fetched.append((f"fetch{turn}", refs[0]))
                return ai_tool_calls(tool_call(FETCH, {"ref": refs[0]}, id=f"fetch{turn}"))
        return ai_tool_calls(tool_call("read_log", {"name": f"log{turn % 45}"}, id=f"read{turn}"))

    return decide


def batched_breaks_bound(layer: ResultLayer, calls: int) -> int:
    """Most cache breaks a batch-clearing guard may cause over `calls` model calls.

    After a clearing the request is under the target; each new result (at most the
    per-result budget: views fill it when they leave lines out) brings it closer to the
    trigger, so a clearing lasts at least `(trigger - target) // result` calls. A guard that
    cleared one result at a time would break the prefix on nearly every call.
    """
    window = layer.context_window
    guard = layer.guard_settings
    room = (guard.trigger_fraction - guard.target_fraction) * window
    per_clearing = max(1, int(room // layer.result_budget.tokens))
    return calls // per_clearing + 1


def _run(corpus_logs: dict[str, str], setup: str, non_destructive: bool) -> LongRun:
    fetched: list[tuple[str, str]] = []
    model = ScriptedChatModel(script=_policy(fetched), max_input_tokens=WINDOW)
    layer = ResultLayer(
        model=model,
        max_result_tokens=2_500,
        guard=GuardSettings(non_destructive=non_destructive),
        tool_policies={"get_plan": ToolPolicy(pinned=True)},
    )
    tools = make_tools(corpus_logs)
    if setup.startswith("create_agent"):
        agent = create_agent(model, tools, system_prompt=PROMPT, middleware=[layer.middleware()])
    elif setup == "react":
        wrapped = [*layer.wrap_tools(tools), layer.fetch_tool]
        guard = BudgetGuard(layer, system_prompt=PROMPT, tools=wrapped)
        agent = create_react_agent(model, wrapped, prompt=PROMPT, pre_model_hook=guard)
    else:
        agent = _custom_graph(model, layer, tools)
    question = {"messages": [("user", "Why do these builds fail?")]}
    if setup.endswith("async"):
        out = asyncio.run(agent.ainvoke(question, CONFIG))
    else:
        out = agent.invoke(question, CONFIG)
    return LongRun(setup, non_destructive, model, layer, out["messages"], fetched)


@pytest.fixture(
    scope="module",
    params=[
        ("create_agent", False),
        ("react", False),
        ("graph", False),
        ("create_agent-async", False),
        ("create_agent", True),
    ],
    ids=["create_agent", "react", "state_graph", "create_agent-async", "non_destructive"],
)
def long_run(request: pytest.FixtureRequest, corpus_logs: dict[str, str]) -> LongRun:
    setup, non_destructive = request.param
    return _run(corpus_logs, setup, non_destructive)


def test_every_request_fits_the_window(long_run: LongRun, corpus_logs: dict[str, str]) -> None:
    model, layer = long_run.model, long_run.layer
    assert len(model.requests) == TURNS + 1
    sizes = [request_tokens(layer, r, model.bound_tools) for r in model.requests]
    assert max(sizes) <= WINDOW, sizes
    # Without the guard the conversation would be many windows long (chars / 4 ~ tokens).
    names = [
        c["args"]["name"]
        for m in long_run.final
        if isinstance(m, AIMessage)
        for c in m.tool_calls
        if c["name"] == "read_log"
    ]
    assert sum(len(corpus_logs[n]) for n in names) / 4 > 10 * WINDOW


def test_pairing_holds_in_every_request(long_run: LongRun) -> None:
    for request in long_run.model.requests:
        assert_pairing(request)


def test_prefix_is_stable_except_when_the_guard_clears(long_run: LongRun) -> None:
    breaks = prefix_breaks(long_run.model.requests)
    assert breaks, "the guard never cleared anything: the test did not exercise it"
    unexplained = [n for n, explained in breaks if not explained]
    assert not unexplained, f"prefix changed without a clearing at calls {unexplained}"
    # Batch clearing: a clearing lasts as many calls as the room between the trigger and the
    # target holds results (views fill their budget, 2,500 tokens here), not one call.
    assert len(breaks) <= batched_breaks_bound(long_run.layer, len(long_run.model.requests)), breaks


def test_a_cleared_result_never_comes_back(long_run: LongRun) -> None:
    placeholders: dict[str, str] = {}
    for n, request in enumerate(long_run.model.requests):
        now = {m.tool_call_id: str(m.content) for m in request if isinstance(m, ToolMessage)}
        for call_id, text in placeholders.items():
            assert now.get(call_id) == text, f"result {call_id} changed again in request {n}"
        for m in request:
            if is_cleared(m):
                placeholders.setdefault(m.tool_call_id, str(m.content))  # type: ignore[attr-defined]


def test_pinned_tool_is_never_cleared(long_run: LongRun) -> None:
    for request in long_run.model.requests[1:]:
        plan = [m for m in request if isinstance(m, ToolMessage) and m.name == "get_plan"]
        assert len(plan) == 1
        assert not is_cleared(plan[0])
        assert unfence(str(plan[0].content)) == PLAN.removesuffix("\n")


def test_placeholders_are_one_line_and_restore_through_fetch(
    long_run: LongRun, corpus_logs: dict[str, str]
) -> None:
    last = long_run.model.requests[-1]
    cleared = [m for m in last if is_cleared(m) and m.name == "read_log"]
    assert len(cleared) >= 10
    args = {c["id"]: c["args"] for m in last if isinstance(m, AIMessage) for c in m.tool_calls}
    for placeholder in cleared[:8]:
        assert long_run.layer.token_counter.count(str(placeholder.content)) <= 200
        refs = calls_in(placeholder)
        assert refs, placeholder.content
        out = fetch(long_run.layer, CONFIG, ref=refs[0])
        assert out.status == "success", out.content[:300]
        raw = corpus_logs[args[placeholder.tool_call_id]["name"]]
        body = fenced_body(out.content).rstrip("\n")
        first_line = body.split("\n", 1)[0]
        assert len(first_line) == len(raw.split("\n", 1)[0])


def test_the_models_own_fetches_of_cleared_results_succeeded(long_run: LongRun) -> None:
    assert long_run.fetched, "the scripted model never fetched a cleared result"
    results = {m.tool_call_id: m for m in long_run.final if isinstance(m, ToolMessage)}
    for call_id, _ref in long_run.fetched:
        first_seen = next(
            m
            for request in long_run.model.requests
            for m in request
            if isinstance(m, ToolMessage) and m.tool_call_id == call_id
        )
        assert first_seen.status == "success"
        assert str(first_seen.content).startswith("[Fetched ref://tool-result/")
        assert call_id in results


def test_state_reflects_the_mode(long_run: LongRun) -> None:
    cleared_in_state = [m for m in long_run.final if is_cleared(m)]
    if long_run.non_destructive:
        assert not cleared_in_state, "non-destructive mode edited graph state"
    else:
        assert len(cleared_in_state) >= 10


# --------------------------------------------------------------------------- overflow


def _parallel_reads(
    corpus_logs: dict[str, str], n: int, setup: str = "create_agent", **layer_kw: Any
) -> tuple[Any, ScriptedChatModel, ResultLayer]:
    names = sorted(corpus_logs, key=lambda k: -len(corpus_logs[k]))[:n]
    script = [
        ai_tool_calls(
            *[tool_call("read_log", {"name": name}, id=f"p{i}") for i, name in enumerate(names)]
        ),
        "done",
    ]
    model = ScriptedChatModel(script=script, max_input_tokens=16_000)
    layer = ResultLayer(model=model, **layer_kw)
    tools = make_tools(corpus_logs)[:1]
    if setup == "create_agent":
        agent = create_agent(model, tools, middleware=[layer.middleware()])
    else:
        wrapped = [*layer.wrap_tools(tools), layer.fetch_tool]
        agent = create_react_agent(model, wrapped, pre_model_hook=layer.budget_guard)
    return agent, model, layer


def _pasted_log_agent(
    corpus_logs: dict[str, str], **layer_kw: Any
) -> tuple[Any, ScriptedChatModel, str]:
    """A user pastes a whole build log into the chat: nothing the guard may clear."""
    pasted = max(corpus_logs.values(), key=len)[:120_000]
    model = ScriptedChatModel(
        script=[ai_tool_calls(tool_call("read_log", {"name": "log0"}, id="c1")), "done"],
        max_input_tokens=16_000,
    )
    layer = ResultLayer(model=model, **layer_kw)
    agent = create_agent(model, make_tools(corpus_logs)[:1], middleware=[layer.middleware()])
    return agent, model, pasted


def test_overflow_raise_gives_a_clear_error(corpus_logs: dict[str, str]) -> None:
    agent, model, pasted = _pasted_log_agent(corpus_logs, guard=GuardSettings(on_overflow="raise"))
    with pytest.raises(ContextBudgetExceeded) as info:
        agent.invoke({"messages": [("user", pasted)]}, CONFIG)
    assert "16,000" in str(info.value)
    assert not model.requests  # nothing over the window was sent


def test_overflow_send_warns_and_sends(corpus_logs: dict[str, str]) -> None:
    agent, model, pasted = _pasted_log_agent(corpus_logs, guard=GuardSettings(on_overflow="send"))
    with pytest.warns(ContextBudgetWarning, match="over the 16,000-token window"):
        agent.invoke({"messages": [("user", pasted)]}, CONFIG)
    assert len(model.requests) == 2


@pytest.mark.parametrize("n", [4, 6, 30])
def test_parallel_tool_calls_share_the_turn_budget(corpus_logs: dict[str, str], n: int) -> None:
    agent, model, layer = _parallel_reads(corpus_logs, n)
    out = agent.invoke({"messages": [("user", "go")]}, CONFIG)
    for request in model.requests:
        assert request_tokens(layer, request, model.bound_tools) <= layer.context_window
    results = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert len(results) == n
    assert sum(layer.token_counter.count(str(m.content)) for m in results) <= 8_000


@pytest.mark.parametrize("n", [4, 30])
def test_parallel_wrapped_tool_calls_do_not_crash(corpus_logs: dict[str, str], n: int) -> None:
    agent, model, layer = _parallel_reads(corpus_logs, n, setup="react")
    agent.invoke({"messages": [("user", "go")]}, CONFIG)
    for request in model.requests:
        assert request_tokens(layer, request, model.bound_tools) <= layer.context_window


@pytest.mark.parametrize("setup", ["create_agent", "react"])
def test_three_parallel_large_calls_fit(corpus_logs: dict[str, str], setup: str) -> None:
    agent, model, layer = _parallel_reads(corpus_logs, 3, setup=setup)
    agent.invoke({"messages": [("user", "go")]}, CONFIG)
    for request in model.requests:
        assert request_tokens(layer, request, model.bound_tools) <= layer.context_window


def test_overflow_message_names_an_oversized_system_prompt(corpus_logs: dict[str, str]) -> None:
    model = ScriptedChatModel(
        script=[ai_tool_calls(tool_call("get_plan", {"step": 0}, id="c1")), "done"],
        max_input_tokens=16_000,
    )
    layer = ResultLayer(model=model)
    agent = create_agent(
        model,
        make_tools(corpus_logs),
        system_prompt="Follow the house style guide below. " * 4_000,
        middleware=[layer.middleware()],
    )
    with pytest.raises(ContextBudgetExceeded) as info:
        agent.invoke({"messages": [("user", "go")]}, CONFIG)
    assert "system prompt" in str(info.value)


def test_two_layers_do_not_process_a_result_twice(corpus_logs: dict[str, str]) -> None:
    model = ScriptedChatModel(
        script=[ai_tool_calls(tool_call("read_log", {"name": "log0"}, id="c1")), "done"],
        max_input_tokens=16_000,
    )
    inner = ResultLayer(model=model, max_result_tokens=500)
    outer = ResultLayer(model=model, max_result_tokens=1_500)
    agent = create_agent(
        model, inner.wrap_tools(make_tools(corpus_logs)[:1]), middleware=[outer.middleware()]
    )
    out = agent.invoke({"messages": [("user", "go")]}, CONFIG)
    result = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert str(result.content).count("<<<tool-output") == 1
    assert inner.token_counter.count(str(result.content)) <= 500
    assert outer.process_tool_message(result) is result


def test_guard_without_a_store_still_clears_in_batches(corpus_logs: dict[str, str]) -> None:
    def read_each(messages: list[BaseMessage], index: int) -> AIMessage | str:
        turn = sum(isinstance(m, AIMessage) for m in messages)
        if turn >= 30:
            return "done"
        return ai_tool_calls(tool_call("read_log", {"name": f"log{turn}"}, id=f"c{turn}"))

    model = ScriptedChatModel(script=read_each, max_input_tokens=16_000)
    layer = ResultLayer(model=model, store=False, max_result_tokens=2_000)
    agent = create_agent(model, make_tools(corpus_logs)[:1], middleware=[layer.middleware()])
    agent.invoke({"messages": [("user", "go")]}, CONFIG)
    sizes = [request_tokens(layer, r, model.bound_tools) for r in model.requests]
    assert max(sizes) <= layer.context_window
    breaks = prefix_breaks(model.requests)
    bound = batched_breaks_bound(layer, len(model.requests))
    assert len(breaks) <= bound, (len(breaks), len(model.requests), bound)


def test_cleared_fetch_results_can_be_fetched_again(long_run: LongRun) -> None:
    last = long_run.model.requests[-1]
    cleared_fetches = [m for m in last if is_cleared(m) and m.name == FETCH]
    assert cleared_fetches, "no fetch result was cleared: the test did not exercise it"
    for placeholder in cleared_fetches:
        refs = calls_in(placeholder)
        assert refs, placeholder.content
        out = fetch(long_run.layer, CONFIG, ref=refs[0])
        assert out.status == "success", out.content[:300]
