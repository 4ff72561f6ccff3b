"""One middleware, guard or node instance serves many agents and threads at once.

Each agent has its own system prompt and tools (so its requests carry a different overhead);
an instance shared by all of them must give each agent exactly the decisions (which results are
cleared, at which model call) that an instance of its own gives it: nothing of one request may
leak into another.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.prebuilt import create_react_agent

from langchain_result_layer import ResultLayer, ResultLayerMiddleware
from langchain_result_layer.scripted import ScriptedChatModel, ai_tool_calls, tool_call
from tests.integration.helpers import RNG as _RNG
from tests.integration.helpers import seeded_secrets

WINDOW = 8_000
TURNS = 12


def _log(seed: int) -> str:
    rnd = random.Random(seed)
    lines = [
        f"2024-05-0{seed % 9 + 1} 10:{i % 60:02d}:{i % 59:02d} "
        f"{rnd.choice(['INFO'] * 12 + ['WARN', 'ERROR'])} [worker-{i % 5}] step {i} "
        f"{rnd.choice(['ok', 'retrying', 'connection reset by peer', 'cache miss'])}"
        for i in range(rnd.randint(150, 450))
    ]
    return "\n".join(lines) + "\n"


def agent_tools(k: int) -> list[BaseTool]:
    """Agent k's tools: a log reader and an extra tool whose schema size depends on k."""

    @tool
    def read_log(name: str) -> str:
        """Read a whole build log by name."""
        return _log(sum(map(ord, name)) + 31 * k)

    def extra(query: str) -> str:
        return f"{query}: nothing"

    extra.__doc__ = f"Look things up (agent {k}). " + "Details matter. " * (5 + 9 * k)
    extra.__name__ = f"lookup_{k}"
    return [read_log, tool(extra)]


def prompt(k: int) -> str:
    return f"You are investigator {k}. " + "Cite the evidence you rely on. " * (3 + 17 * k)


def script(k: int) -> Callable[[list[BaseMessage], int], AIMessage | str]:
    def step(messages: list[BaseMessage], index: int) -> AIMessage | str:
        turn = sum(isinstance(m, AIMessage) for m in messages)
        if turn >= TURNS:
            return "Done."
        return ai_tool_calls(
            tool_call("read_log", {"name": f"job-{k}-{turn}"}, id=f"a{k}-c{turn}"),
            content=f"Step {turn}.",
        )

    return step


def new_layer() -> ResultLayer:
    return ResultLayer(
        context_window=WINDOW, max_result_tokens=1_200, token_counter="tiktoken", store="memory"
    )


@pytest.fixture(autouse=True, scope="module")
def seeded() -> Iterator[None]:
    with seeded_secrets():
        yield


def decisions(layer: ResultLayer, model: ScriptedChatModel) -> list[tuple[str, ...]]:
    """Per model call: the tool calls whose results the model saw as placeholders."""
    out = []
    for request in model.requests:
        out.append(
            tuple(
                m.tool_call_id
                for m in request
                if isinstance(m, ToolMessage) and layer.marker_of(m).get("cleared")
            )
        )
    return out


def run_create_agent(k: int, middleware: ResultLayerMiddleware) -> list[tuple[str, ...]]:
    _RNG.set(random.Random(k))
    model = ScriptedChatModel(script=script(k), max_input_tokens=WINDOW)
    agent = create_agent(model, agent_tools(k), system_prompt=prompt(k), middleware=[middleware])
    agent.invoke(
        {"messages": [("user", f"Why did build {k} fail?")]},
        {"recursion_limit": 200, "configurable": {"thread_id": f"t{k}", "user_id": f"u{k}"}},
    )
    return decisions(middleware.layer, model)


@pytest.fixture(scope="module")
def own_create_agent(seeded: None) -> dict[int, list[tuple[str, ...]]]:
    """What each agent decides with a middleware (and layer) of its own."""
    return {k: run_create_agent(k, ResultLayerMiddleware(new_layer())) for k in range(16)}


def test_own_instances_clear_something(own_create_agent: dict[int, Any]) -> None:
    again = {k: run_create_agent(k, ResultLayerMiddleware(new_layer())) for k in (0, 7, 15)}
    assert again == {k: own_create_agent[k] for k in again}  # reproducible: the test can tell
    for k, per_call in own_create_agent.items():
        assert len(per_call) == TURNS + 1
        assert any(per_call), f"agent {k} never cleared: the test would prove nothing"
    # Different prompts and tools: the agents do not all decide alike.
    assert len({tuple(v) for v in own_create_agent.values()}) > 1


def test_two_agents_share_one_middleware(own_create_agent: dict[int, Any]) -> None:
    # One after the other on the same instance, in both orders.
    first = ResultLayerMiddleware(new_layer())
    assert run_create_agent(0, first) == own_create_agent[0]
    assert run_create_agent(15, first) == own_create_agent[15]
    second = ResultLayerMiddleware(new_layer())
    assert run_create_agent(15, second) == own_create_agent[15]
    assert run_create_agent(0, second) == own_create_agent[0]


def test_sixteen_threads_share_one_middleware(own_create_agent: dict[int, Any]) -> None:
    shared = ResultLayerMiddleware(new_layer())
    with ThreadPoolExecutor(max_workers=16) as pool:
        results = dict(
            zip(range(16), pool.map(lambda k: run_create_agent(k, shared), range(16)), strict=True)
        )
    assert results == own_create_agent


def run_react_agent(k: int, layer: ResultLayer) -> list[tuple[str, ...]]:
    _RNG.set(random.Random(k))
    model = ScriptedChatModel(script=script(k), max_input_tokens=WINDOW)
    tools = agent_tools(k)
    agent = create_react_agent(model, tools, pre_model_hook=layer.budget_guard)
    agent.invoke(
        {"messages": [("user", f"Why did build {k} fail?")]},
        {"recursion_limit": 200, "configurable": {"thread_id": f"t{k}"}},
    )
    return decisions(layer, model)


def test_sixteen_threads_share_one_pre_model_hook() -> None:
    own = {k: run_react_agent(k, new_layer()) for k in range(16)}
    assert any(any(v) for v in own.values())
    shared = new_layer()
    assert shared.budget_guard is shared.budget_guard  # one guard per layer
    with ThreadPoolExecutor(max_workers=16) as pool:
        results = dict(
            zip(range(16), pool.map(lambda k: run_react_agent(k, shared), range(16)), strict=True)
        )
    assert results == own


async def test_async_agents_share_one_middleware(own_create_agent: dict[int, Any]) -> None:
    import asyncio

    shared = ResultLayerMiddleware(new_layer())

    async def one(k: int) -> list[tuple[str, ...]]:
        _RNG.set(random.Random(k))
        model = ScriptedChatModel(script=script(k), max_input_tokens=WINDOW)
        agent = create_agent(model, agent_tools(k), system_prompt=prompt(k), middleware=[shared])
        await agent.ainvoke(
            {"messages": [("user", f"Why did build {k} fail?")]},
            {"recursion_limit": 200, "configurable": {"thread_id": f"t{k}", "user_id": f"u{k}"}},
        )
        return decisions(shared.layer, model)

    results = await asyncio.gather(*(one(k) for k in range(16)))
    assert dict(enumerate(results)) == own_create_agent


def test_the_instances_hold_no_request_state() -> None:
    layer = new_layer()
    middleware = ResultLayerMiddleware(layer)
    before = {k: type(v) for k, v in vars(middleware).items()}
    run_create_agent(3, middleware)
    assert {k: type(v) for k, v in vars(middleware).items()} == before
    guard = layer.budget_guard
    assert not hasattr(guard, "_memo")
    assert not hasattr(middleware, "last_result")
    assert not hasattr(middleware, "_system")
