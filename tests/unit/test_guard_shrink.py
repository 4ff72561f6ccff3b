"""Unseen results that alone would overflow the window are shrunk, not fatal."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langchain_result_layer import (
    BudgetGuard,
    ContextBudgetExceeded,
    Principal,
    Reference,
    ResultLayer,
    ToolPolicy,
)
from langchain_result_layer.pipeline import META_KEY

TEXT = {"read_log": ToolPolicy(kind="text")}


def _log(k: int) -> str:
    return "".join(f"[job {k}] step {i}: compiling module_{i}.c ... ok\n" for i in range(4_000)) + (
        f"[job {k}] error: linker failed with exit code 1\n"
    )


def _conversation(layer: ResultLayer, n: int, *, process: bool = True) -> list[BaseMessage]:
    calls = [{"name": "read_log", "args": {"job": k}, "id": f"c{k}"} for k in range(n)]
    msgs: list[BaseMessage] = [
        HumanMessage("why did the jobs fail?", id="h"),
        AIMessage("", id="a", tool_calls=calls),
    ]
    for k in range(n):
        msg = ToolMessage(_log(k), tool_call_id=f"c{k}", name="read_log", id=f"t{k}")
        msgs.append(layer.process_tool_message(msg) if process else msg)
    return msgs


def test_parallel_results_are_shrunk_to_fit_and_keep_their_evidence() -> None:
    layer = ResultLayer(
        context_window=8_000, store="memory", token_counter="tiktoken", tool_policies=TEXT
    )
    msgs = _conversation(layer, 5)
    result = BudgetGuard(layer).guard(msgs)
    assert not result.overflow
    assert result.tokens_after <= result.window
    assert len(result.shrunk) >= 4
    for message in result.replacements:
        assert isinstance(message, ToolMessage)
        marker = message.response_metadata[META_KEY]
        assert marker["shrunk_by_guard"] is True
        assert "linker failed" in str(message.content), "the error survives the shrink"
        ref = Reference.parse(marker["ref"])
        assert layer.store is not None
        raw = layer.store.read(ref.record_id, principal=Principal()).data
        assert raw == _log(int(message.tool_call_id[1:])), "the same stored record is referenced"


def test_unprocessed_parallel_results_are_processed_with_a_share() -> None:
    layer = ResultLayer(
        context_window=8_000, store="memory", token_counter="tiktoken", tool_policies=TEXT
    )
    msgs = _conversation(layer, 5, process=False)
    result = BudgetGuard(layer).guard(msgs)
    assert not result.overflow
    assert len(result.shrunk) == 5


async def test_async_shrink() -> None:
    layer = ResultLayer(
        context_window=8_000, store="memory", token_counter="tiktoken", tool_policies=TEXT
    )
    msgs = _conversation(layer, 5)
    result = await BudgetGuard(layer).aguard(msgs)
    assert not result.overflow
    assert result.shrunk


def test_shrinking_can_be_turned_off() -> None:
    layer = ResultLayer(
        context_window=8_000,
        store="memory",
        token_counter="tiktoken",
        tool_policies=TEXT,
        turn_fraction=1.0,
    )
    msgs = _conversation(layer, 5)
    guard = BudgetGuard(layer, shrink_unseen=False)
    with pytest.raises(ContextBudgetExceeded):
        guard.guard(msgs)
