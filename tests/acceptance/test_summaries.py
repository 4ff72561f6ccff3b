"""Model-written summaries (issue 8) as a user configures them, with scripted summarisers."""

from __future__ import annotations

import re
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage
from langchain_core.tools import tool

from langchain_result_layer import BudgetGuard, ResultLayer, ToolPolicy
from langchain_result_layer.scripted import (
    ScriptedChatModel,
    ai_tool_calls,
    find_references,
    tool_call,
)
from langchain_result_layer.summarize import SummarySettings
from tests.acceptance.conftest import (
    fenced_body,
    fetch,
    is_cleared,
)

DOC = "\n".join(
    f"Section {i}: decision {i} uses approach {'AB'[i % 2]} because of constraint {i * 7}."
    for i in range(3_000)
)
GOOD = (
    "The document lists 3,000 design decisions alternating approaches A and B [L1-L3000]; "
    "decision 7 uses approach B [L8]. Decision 2999 closes it [L3000]."
)
BUDGET = 1_500


def layer_with(summarizer: Any, **settings: Any) -> ResultLayer:
    settings.setdefault("min_chars", 10_000)
    return ResultLayer(
        context_window=16_000,
        max_result_tokens=BUDGET,
        summarizer=summarizer,
        summary=SummarySettings(**settings),
    )


def process(layer: ResultLayer, raw: str = DOC, name: str = "read_doc") -> ToolMessage:
    return layer.process_tool_message(ToolMessage(content=raw, tool_call_id="c1", name=name))


def test_summary_is_labelled_bounded_and_above_the_view() -> None:
    summarizer = ScriptedChatModel(script=lambda m, i: GOOD)
    layer = layer_with(summarizer)
    msg = process(layer)
    text = str(msg.content)
    assert text.startswith("[Model-written summary")
    assert "not tool output" in text.split("\n", 1)[0]
    assert layer.token_counter.count(text) <= BUDGET
    # The deterministic view follows the summary, unchanged in nature.
    assert text.index("[Tool result `read_doc`") > text.index("decision 7 uses approach B")
    assert 1 <= len(summarizer.requests) <= SummarySettings().max_calls


def test_cited_lines_resolve_to_those_lines() -> None:
    layer = layer_with(ScriptedChatModel(script=lambda m, i: GOOD))
    msg = process(layer)
    cited = re.search(r"\[Cited lines: (.*?)\]", str(msg.content))
    assert cited is not None, msg.content[:800]
    refs = [r.strip() for r in cited.group(1).split(",")]
    assert any(r.endswith("start_line=8&end_line=8") for r in refs)
    for ref in refs:
        out = fetch(layer, None, ref=ref)
        assert out.status == "success", out.content
        if ref.endswith("start_line=8&end_line=8"):
            assert fenced_body(out.content).strip() == DOC.split("\n")[7]


def test_invented_citations_are_removed_and_said() -> None:
    layer = layer_with(
        ScriptedChatModel(script=lambda m, i: "It ends at [L99999]. Decision 7 is B [L8].")
    )
    text = str(process(layer).content)
    assert "[L99999]" not in text
    assert "1 citation(s) outside the result were removed" in text


@pytest.mark.parametrize(
    ("script", "why"),
    [
        (lambda m, i: (_ for _ in ()).throw(RuntimeError("rate limited")), "rate limited"),
        (lambda m, i: "", "returned nothing"),
    ],
    ids=["raises", "empty"],
)
def test_failures_fall_back_to_the_view_and_say_so(script: Any, why: str) -> None:
    layer = layer_with(ScriptedChatModel(script=script))
    msg = process(layer)
    text = str(msg.content)
    assert "summary unavailable" in text
    assert why in text
    assert "[Tool result `read_doc`" in text
    assert layer.token_counter.count(text) <= BUDGET
    view = ResultLayer.view_of(msg)
    assert view is not None
    assert view.stored


def test_over_long_summary_is_clipped_within_the_budget() -> None:
    layer = layer_with(ScriptedChatModel(script=lambda m, i: "Decision facts here. " * 5_000))
    text = str(process(layer).content)
    assert "clipped" in text.split("\n", 1)[0]
    assert layer.token_counter.count(text) <= BUDGET
    assert "[Tool result `read_doc`" in text


def test_summaries_are_cached_by_content() -> None:
    summarizer = ScriptedChatModel(script=lambda m, i: GOOD)
    layer = layer_with(summarizer)
    process(layer)
    calls = len(summarizer.requests)
    process(layer)
    assert len(summarizer.requests) == calls


def test_small_results_kinds_and_policies() -> None:
    summarizer = ScriptedChatModel(script=lambda m, i: GOOD)
    layer = ResultLayer(
        context_window=16_000,
        max_result_tokens=BUDGET,
        summarizer=summarizer,
        summary=SummarySettings(min_chars=10_000, kinds=frozenset({"log"})),
        tool_policies={"always": ToolPolicy(summarize=True), "never": ToolPolicy(summarize=False)},
    )
    process(layer, name="plain")  # a text result; only logs are summarised
    assert not summarizer.requests
    process(layer, name="never")
    assert not summarizer.requests
    assert str(process(layer, name="always").content).startswith("[Model-written summary")
    assert summarizer.requests


async def test_async_path_summarises() -> None:
    summarizer = ScriptedChatModel(script=lambda m, i: GOOD)
    layer = layer_with(summarizer)
    msg = await layer.aprocess_tool_message(
        ToolMessage(content=DOC, tool_call_id="c1", name="read_doc")
    )
    assert str(msg.content).startswith("[Model-written summary")
    assert layer.token_counter.count(str(msg.content)) <= BUDGET


def test_placeholder_keeps_the_summary_line() -> None:
    layer = ResultLayer(
        context_window=8_000,
        max_result_tokens=2_000,
        summarizer=ScriptedChatModel(script=lambda m, i: GOOD),
        summary=SummarySettings(min_chars=10_000),
    )
    messages: list[Any] = [HumanMessage("go", id="h")]
    for k in range(5):
        messages.append(
            AIMessage("", tool_calls=[tool_call("doc", {"k": k}, id=f"c{k}")], id=f"a{k}")
        )
        messages.append(
            layer.process_tool_message(
                ToolMessage(
                    DOC.replace("Section", f"S{k}"), tool_call_id=f"c{k}", name="doc", id=f"t{k}"
                )
            )
        )
    messages.append(AIMessage("thinking", id="z"))
    result = BudgetGuard(layer).guard(messages)
    cleared = [m for m in result.messages if is_cleared(m)]
    assert cleared
    assert "The document lists 3,000 design decisions" in str(cleared[0].content)


def test_small_call_budget_summarises_a_representative_sample() -> None:
    summarizer = ScriptedChatModel(script=lambda m, i: "Facts [L1].")
    layer = layer_with(summarizer, max_calls=2, chunk_chars=24_000)
    text = str(process(layer).content)
    first_line = text.split("\n", 1)[0]
    assert len(summarizer.requests) == 2 or "evenly spaced" not in first_line, first_line


def test_find_references_returns_parseable_references() -> None:
    layer = layer_with(ScriptedChatModel(script=lambda m, i: GOOD))
    msg = process(layer)
    for ref in find_references([msg]):
        assert fetch(layer, None, ref=ref).status == "success", ref


@tool
def read_doc(name: str) -> str:
    """Read a design document."""
    return DOC


async def test_summariser_output_is_not_streamed_as_agent_output() -> None:
    model = ScriptedChatModel(
        script=[ai_tool_calls(tool_call("read_doc", {"name": "d"}, id="c1")), "done"],
        max_input_tokens=16_000,
    )
    layer = ResultLayer(
        model=model,
        max_result_tokens=BUDGET,
        summarizer=ScriptedChatModel(script=lambda m, i: GOOD),
        summary=SummarySettings(min_chars=10_000),
    )
    agent = create_agent(model, [read_doc], middleware=[layer.middleware()])
    streamed = []
    async for message, meta in agent.astream(
        {"messages": [("user", "go")]}, stream_mode="messages"
    ):
        if isinstance(message, AIMessageChunk) and message.content:
            streamed.append((meta.get("langgraph_node"), message.content))
    assert streamed == [("model", "done")], streamed[:3]
