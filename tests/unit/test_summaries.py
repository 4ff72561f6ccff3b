"""Model-written summaries (issue 8): labelled, cited, cached, bounded, and never fatal."""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langchain_result_layer import GuardSettings, Reference, ResultLayer, ToolPolicy
from langchain_result_layer.adapters.budget_guard import BudgetGuard
from langchain_result_layer.scripted import ScriptedChatModel
from langchain_result_layer.summarize import (
    ResultSummarizer,
    SummarySettings,
    parse_citations,
)

DOC = "".join(
    f"Section {i} of the design keeps component {i} behind interface I{i} and "
    f"decision {i} favours latency over cost.\n"
    for i in range(1, 4001)
)


def _lines_in(prompt: str) -> list[int]:
    return [int(n) for n in re.findall(r"^(\d+)\| ", prompt, re.M)]


def citing_summariser(messages: list[BaseMessage], index: int) -> str:
    """Summarises the part it is given, citing the first lines it saw."""
    prompt = str(messages[-1].content)
    if prompt.startswith("Combine"):
        cites = re.findall(r"\[L\d+-L\d+\]", prompt)
        return "The design document lists 4,000 component decisions. " + " ".join(cites[:3])
    lines = _lines_in(prompt)
    lo, hi = lines[0], lines[min(5, len(lines) - 1)]
    return f"Components are kept behind interfaces [L{lo}-L{hi}]. Decisions favour latency."


def make_layer(model: Any, **settings: Any) -> ResultLayer:
    return ResultLayer(
        context_window=16_000,
        max_result_tokens=1_500,
        store="memory",
        token_counter="tiktoken",
        summarizer=model,
        summary=SummarySettings(**{"min_chars": 10_000, **settings}),
    )


def process(layer: ResultLayer, text: str = DOC, name: str = "read_doc") -> ToolMessage:
    return layer.process_tool_message(ToolMessage(text, tool_call_id="c1", name=name, id="t1"))


def test_summary_is_labelled_cited_above_the_view_and_within_budget() -> None:
    model = ScriptedChatModel(script=citing_summariser)
    layer = make_layer(model, max_calls=4)
    msg = process(layer)
    content = str(msg.content)
    assert content.startswith("[Model-written summary by")
    assert "not tool output; it may be wrong" in content
    assert content.index("Model-written summary") < content.index("[Tool result")
    assert layer.token_counter.count(content) <= 1_500
    view = ResultLayer.view_of(msg)
    assert view is not None
    info = view.summary["model_summary"]
    assert info["shown"]
    assert info["error"] is None
    assert 1 <= info["calls"] <= 4
    assert info["chunks_summarised"] <= 3 < info["chunks_total"]
    assert view.observations[0].startswith("Model-written summary")
    # Every cited range becomes a reference the fetch tool resolves to those exact lines.
    refs = re.findall(r"ref://tool-result/[^\s,\]]+start_line=\d+&end_line=\d+", content)
    assert refs
    for ref in refs:
        parsed = Reference.parse(ref)
        out = layer.fetch_tool.invoke(
            {"type": "tool_call", "id": "f", "name": "fetch_tool_result", "args": {"ref": ref}}
        )
        assert out.status == "success"
        first = DOC.splitlines()[(parsed.start_line or 1) - 1]
        assert first in str(out.content)


def test_map_reduce_respects_the_call_cap_and_says_what_it_covered() -> None:
    model = ScriptedChatModel(script=citing_summariser)
    layer = make_layer(model, max_calls=3, chunk_chars=20_000)
    msg = process(layer)
    assert len(model.requests) <= 3
    assert "first and last of" in str(msg.content)


def test_a_failing_summariser_falls_back_and_says_so() -> None:
    def boom(messages: list[BaseMessage], index: int) -> str:
        raise RuntimeError("provider is down")

    layer = make_layer(ScriptedChatModel(script=boom))
    msg = process(layer)
    content = str(msg.content)
    assert content.startswith("[Model-written summary unavailable (RuntimeError: provider is down)")
    assert "[Tool result" in content
    assert layer.token_counter.count(content) <= 1_500
    view = ResultLayer.view_of(msg)
    assert view is not None
    assert view.summary["model_summary"]["error"]


def test_an_over_long_summary_is_clipped_to_its_cap() -> None:
    long = " ".join(f"Fact number {i} about the document [L{i}-L{i}]." for i in range(1, 400))
    layer = make_layer(ScriptedChatModel(script=lambda m, i: long), max_summary_tokens=120)
    msg = process(layer)
    content = str(msg.content)
    assert "clipped to its length cap" in content
    block = content.split("[Tool result", 1)[0]
    assert layer.token_counter.count(block.rstrip("\n")) <= 120
    assert layer.token_counter.count(content) <= 1_500


def test_invalid_citations_are_dropped() -> None:
    text, ranges, dropped = parse_citations("ok [L2-L3] bad [L0] far [L9-L99]", total_lines=10)
    assert ranges == [(2, 3)]
    assert dropped == 2
    assert "[L0]" not in text
    assert "L99" not in text


def test_a_slow_summariser_times_out_and_falls_back() -> None:
    def slow(messages: list[BaseMessage], index: int) -> str:
        time.sleep(2)
        return "late"

    layer = make_layer(ScriptedChatModel(script=slow), timeout_seconds=0.2, max_calls=1)
    msg = process(layer)
    assert "Model-written summary unavailable (timed out" in str(msg.content)


def test_summaries_are_cached_by_content() -> None:
    model = ScriptedChatModel(script=citing_summariser)
    layer = make_layer(model, max_calls=2)
    process(layer)
    calls = len(model.requests)
    second = layer.process_tool_message(
        ToolMessage(DOC, tool_call_id="c2", name="read_doc", id="t2")
    )
    assert len(model.requests) == calls
    view = ResultLayer.view_of(second)
    assert view is not None
    assert view.summary["model_summary"]["cached"] is True


def test_small_results_and_opted_out_tools_are_not_summarised() -> None:
    model = ScriptedChatModel(script=citing_summariser)
    layer = ResultLayer(
        context_window=16_000,
        max_result_tokens=1_500,
        store="memory",
        summarizer=model,
        summary=SummarySettings(min_chars=10_000),
        tool_policies={"quiet": ToolPolicy(summarize=False)},
    )
    process(layer, DOC[:9_000])
    process(layer, DOC, name="quiet")
    assert model.requests == []


def test_kinds_filter() -> None:
    model = ScriptedChatModel(script=citing_summariser)
    layer = make_layer(model, kinds=frozenset({"file"}))
    msg = process(layer)
    assert model.requests == []
    assert "Model-written summary" not in str(msg.content)


async def test_async_path_uses_the_async_model_and_runs_map_calls_together() -> None:
    model = ScriptedChatModel(script=citing_summariser)
    layer = make_layer(model, max_calls=4)
    msg = await layer.aprocess_tool_message(
        ToolMessage(DOC, tool_call_id="c1", name="read_doc", id="t1")
    )
    assert str(msg.content).startswith("[Model-written summary by")
    assert 1 < len(model.requests) <= 4


async def test_async_timeout_falls_back() -> None:
    class Slow:
        model_name = "slow"

        async def ainvoke(self, prompt: str) -> AIMessage:
            await asyncio.sleep(2)
            return AIMessage("late")

        def invoke(self, prompt: str) -> AIMessage:  # pragma: no cover - async test
            return AIMessage("late")

    summarizer = ResultSummarizer(
        model=Slow(),
        settings=SummarySettings(timeout_seconds=0.1, min_chars=1_000),
        counter=make_layer(None).token_counter,
    )
    outcome = await summarizer.asummarize(DOC, budget_tokens=2_000)
    assert outcome.text is None
    assert outcome.error is not None
    assert "timed out" in outcome.error


def test_guard_placeholder_reuses_the_summary_line() -> None:
    model = ScriptedChatModel(script=citing_summariser)
    layer = ResultLayer(
        context_window=6_000,
        max_result_tokens=1_500,
        store="memory",
        token_counter="tiktoken",
        summarizer=model,
        summary=SummarySettings(min_chars=10_000, max_calls=2),
        guard=GuardSettings(keep_last=1),
    )
    messages: list[BaseMessage] = [HumanMessage("read the docs", id="h")]
    for k in range(4):
        messages.append(
            AIMessage("", id=f"a{k}", tool_calls=[{"name": "read_doc", "args": {}, "id": f"c{k}"}])
        )
        text = DOC.replace("Section", f"Part{k}")
        messages.append(
            layer.process_tool_message(
                ToolMessage(text, tool_call_id=f"c{k}", name="read_doc", id=f"t{k}")
            )
        )
    messages.append(AIMessage("next", id="a-last"))
    result = BudgetGuard(layer).guard(messages)
    assert result.cleared
    cleared = {m.id: m for m in result.replacements}
    first = cleared[result.cleared[0]]
    assert "model-written summary: Components are kept behind interfaces" in str(first.content)


def test_settings_validation() -> None:
    with pytest.raises(ValueError, match="max_calls"):
        SummarySettings(max_calls=0)
    with pytest.raises(ValueError, match="max_share"):
        SummarySettings(max_share=0.95)


def test_a_model_raising_timeout_error_is_reported_as_its_own_error() -> None:
    def raises(messages: list[BaseMessage], index: int) -> str:
        raise TimeoutError("upstream gateway timeout")

    layer = make_layer(ScriptedChatModel(script=raises), timeout_seconds=30)
    msg = process(layer)
    assert "TimeoutError: upstream gateway timeout" in str(msg.content)


async def test_async_model_errors_are_reported() -> None:
    def raises(messages: list[BaseMessage], index: int) -> str:
        raise ValueError("bad request")

    layer = make_layer(ScriptedChatModel(script=raises))
    msg = await layer.aprocess_tool_message(
        ToolMessage(DOC, tool_call_id="c1", name="read_doc", id="t1")
    )
    assert "ValueError: bad request" in str(msg.content)
