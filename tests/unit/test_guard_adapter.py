"""The budget guard adapter on plain message lists: counting, placeholders, storing, overflow."""

from __future__ import annotations

import warnings
from dataclasses import replace

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool

from langchain_result_layer import ContextBudgetExceeded, GuardSettings, ResultLayer, ToolPolicy
from langchain_result_layer.adapters._markers import MarkerSigner
from langchain_result_layer.adapters._messages import RequestCounter
from langchain_result_layer.adapters._placeholders import clear_call_arguments, is_cleared
from langchain_result_layer.adapters.budget_guard import BudgetGuard, ContextBudgetWarning
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.tokens import TiktokenCounter
from langchain_result_layer.stores import Principal
from tests.doubles import DownStore


def _log(n: int, tag: str) -> str:
    return "".join(
        f"{tag} 2024-01-01 12:00:{i % 60:02d} INFO worker {i} processed batch ok\n"
        for i in range(n)
    )


def conversation(
    layer: ResultLayer | None,
    turns: int,
    *,
    lines: int = 120,
    process: bool = True,
    unseen: int = 0,
) -> list[BaseMessage]:
    msgs: list[BaseMessage] = [
        SystemMessage("You are an SRE.", id="sys"),
        HumanMessage("Why did the job fail?", id="h0"),
    ]
    seen = turns - unseen
    for k in range(seen):
        msgs.append(
            AIMessage(
                "",
                id=f"a{k}",
                tool_calls=[
                    {"name": "read_log", "args": {"path": f"/var/log/{k}.log"}, "id": f"c{k}"}
                ],
            )
        )
        tm = ToolMessage(_log(lines, f"t{k}"), tool_call_id=f"c{k}", name="read_log", id=f"t{k}")
        msgs.append(layer.process_tool_message(tm) if (process and layer) else tm)
    if unseen:
        calls = [
            {"name": "read_log", "args": {"path": f"/var/log/{k}.log"}, "id": f"c{k}"}
            for k in range(seen, turns)
        ]
        msgs.append(AIMessage("", id="a-last", tool_calls=calls))
        for k in range(seen, turns):
            tm = ToolMessage(
                _log(lines, f"t{k}"), tool_call_id=f"c{k}", name="read_log", id=f"t{k}"
            )
            msgs.append(layer.process_tool_message(tm) if (process and layer) else tm)
    return msgs


def assert_pairing(messages: list[BaseMessage]) -> None:
    open_calls: dict[str, str] = {}
    answered: set[str] = set()
    for m in messages:
        if isinstance(m, AIMessage):
            for c in m.tool_calls:
                open_calls[c["id"]] = c["name"]
        elif isinstance(m, ToolMessage):
            assert m.tool_call_id in open_calls, f"orphan {m.tool_call_id}"
            assert m.tool_call_id not in answered
            answered.add(m.tool_call_id)
    assert answered == set(open_calls)


@pytest.fixture
def layer() -> ResultLayer:
    # The text view (head and tail) keeps these repetitive logs near the budget; the log view
    # would fold them into a few templates.
    return ResultLayer(
        context_window=8_000,
        max_result_tokens=800,
        store="memory",
        token_counter="tiktoken",
        tool_policies={"read_log": ToolPolicy(kind="text")},
        # These conversations are sized for a target of half the window.
        guard=GuardSettings(target_fraction=0.5),
    )


# --------------------------------------------------------------------------- counting


def test_counter_caches_per_message_and_recounts_changes() -> None:
    rc = RequestCounter(TiktokenCounter())
    msgs = [
        HumanMessage("hello " * 50, id="h"),
        AIMessage("", id="a", tool_calls=[{"name": "f", "args": {"q": "x" * 40}, "id": "c"}]),
    ]
    first = rc.count(msgs)
    misses = rc.misses
    assert rc.count(msgs) == first
    assert rc.misses == misses
    copies = [m.model_copy() for m in msgs]
    assert rc.count(copies) == first
    assert rc.misses == misses
    changed = msgs[0].model_copy(update={"content": "hello " * 51})
    assert rc.count([changed, msgs[1]]) > first
    assert rc.misses == misses + 1
    msgs[0].content = "bye"  # mutated in place: recounted
    assert rc.count(msgs) < first


def test_counter_counts_arguments_names_blocks_and_tools() -> None:
    rc = RequestCounter(TiktokenCounter(), image_tokens=1_000)
    small = AIMessage("", id="a1", tool_calls=[{"name": "f", "args": {"q": "x"}, "id": "c"}])
    big = AIMessage(
        "", id="a2", tool_calls=[{"name": "f", "args": {"q": "word " * 500}, "id": "c"}]
    )
    assert rc.message_tokens(big) - rc.message_tokens(small) >= 490
    blocks = HumanMessage(
        [{"type": "text", "text": "look"}, {"type": "image", "url": "https://x/y.png"}], id="b"
    )
    assert rc.message_tokens(blocks) >= 1_000

    @tool
    def search(query: str, limit: int = 10) -> str:
        """Search the code base for a regular expression and return matching lines."""
        return query

    assert rc.tools_tokens([search]) > 20
    assert rc.system_tokens("Be brief.") > 0
    assert rc.system_tokens(None) == 0


# --------------------------------------------------------------------------- placeholders


def test_placeholders_keep_identity_and_restore_reference(layer: ResultLayer) -> None:
    msgs = conversation(layer, 12)
    artifact_before = {m.id: m.artifact for m in msgs if isinstance(m, ToolMessage)}
    result = BudgetGuard(layer).guard(msgs)
    assert result.changed
    assert result.tokens_before > result.trigger
    assert result.tokens_after <= result.target
    by_id = {m.id: m for m in msgs}
    for new in result.replacements:
        old = by_id[new.id]
        assert isinstance(new, ToolMessage)
        assert is_cleared(new, layer.signer)
        assert (new.id, new.tool_call_id, new.name, new.status) == (
            old.id,
            old.tool_call_id,
            old.name,
            old.status,
        )
        assert new.artifact is artifact_before[new.id]
        marker = new.response_metadata["result_layer"]
        ref = Reference.parse(marker["ref"])
        assert f'fetch_tool_result(ref="{marker["ref"]}")' in new.content
        assert layer.store is not None
        raw = layer.store.read(ref.record_id, principal=Principal()).data
        assert raw == _log(120, f"t{new.tool_call_id[1:]}")
    assert [m.id for m in result.messages] == [m.id for m in msgs]
    assert_pairing(result.messages)


def test_guard_is_idempotent_and_sticky(layer: ResultLayer) -> None:
    guard = BudgetGuard(layer)
    msgs = conversation(layer, 12)
    first = guard.guard(msgs)
    again = guard.guard(first.messages)
    assert not again.changed
    assert again.tokens_before == first.tokens_after
    # more turns: the earlier placeholders stay byte-identical (stable prefix)
    more = first.messages + conversation(layer, 14)[len(msgs) :]
    third = guard.guard(more)
    edited = third.messages
    for i, m in enumerate(first.messages):
        if is_cleared(m, layer.signer):
            assert edited[i] is m or edited[i].content == m.content


def test_protected_results_are_never_cleared(layer: ResultLayer) -> None:
    settings = GuardSettings(keep_last=2, pinned_tools=frozenset({"get_plan"}))
    msgs = conversation(layer, 10, unseen=3)
    plan_msg = ToolMessage("PLAN: " + "step " * 800, tool_call_id="c0", name="get_plan", id="t0")
    msgs[3] = layer.process_tool_message(plan_msg)
    result = BudgetGuard(layer, settings=settings).guard(msgs)
    cleared = set(result.cleared)
    assert "t0" not in cleared  # pinned
    assert not cleared & {"t7", "t8", "t9"}  # unseen (after the last AI message)
    assert result.changed


def test_errors_are_cleared_after_successes(layer: ResultLayer) -> None:
    msgs = conversation(layer, 10)
    msgs[3] = layer.process_tool_message(
        ToolMessage(
            "Traceback (most recent call last):\n" + "  frame\n" * 400 + "ValueError: boom",
            tool_call_id="c0",
            name="read_log",
            id="t0",
            status="error",
        )
    )
    result = BudgetGuard(layer).guard(msgs)
    assert result.cleared
    assert result.cleared[0] != "t0"
    if "t0" in result.cleared:
        assert result.cleared[-1] == "t0"


def test_unprocessed_results_are_stored_before_clearing(layer: ResultLayer) -> None:
    msgs = conversation(layer, 12, process=False)
    result = BudgetGuard(layer).guard(msgs)
    assert result.stored
    assert set(result.stored) == set(result.cleared)
    by_id = {m.id: m for m in msgs}
    assert layer.store is not None
    for new in result.replacements:
        marker = new.response_metadata["result_layer"]
        if new.id in result.shrunk_kept:  # a kept result shown smaller: processed and stored
            assert marker["shrunk_by_guard"] is True
        else:
            assert marker["stored_by_guard"] is True
        ref = Reference.parse(marker["ref"])
        assert layer.store.read(ref.record_id, principal=Principal()).data == by_id[new.id].content


async def test_async_guard_stores_with_the_async_api(layer: ResultLayer) -> None:
    msgs = conversation(layer, 12, lines=40, process=False)
    result = await BudgetGuard(layer).aguard(msgs)
    assert result.stored
    assert result.tokens_after <= result.target


def test_store_down_keeps_unsaved_results_unless_the_window_needs_them() -> None:
    store = DownStore()
    layer = ResultLayer(
        context_window=8_000, max_result_tokens=800, store=store, token_counter="tiktoken"
    )
    msgs = conversation(layer, 14, lines=40, process=False)
    store.down = True
    result = BudgetGuard(layer).guard(msgs)
    # nothing could be saved: results are kept as long as the request fits the window
    assert result.tokens_before > result.window
    assert result.tokens_after <= result.window
    assert result.unsaved
    assert result.kept_unsaved
    for new in result.replacements:
        if isinstance(new, ToolMessage):
            assert "could not be saved" in new.content
            assert "connection refused" in new.content
            assert new.response_metadata["result_layer"]["ref"] is None
    fits = conversation(layer, 8, lines=40, process=False)
    result = BudgetGuard(layer).guard(fits)
    assert result.tokens_before > result.trigger
    assert result.tokens_before <= result.window
    assert not result.changed
    assert result.kept_unsaved


def test_overflow_raises_or_warns() -> None:
    layer = ResultLayer(
        context_window=4_000,
        store="memory",
        token_counter="tiktoken",
        tool_policies={"read_log": ToolPolicy(enabled=False)},
    )
    msgs = conversation(layer, 4, lines=200, unseen=3)  # three unseen results over the window
    with pytest.raises(ContextBudgetExceeded) as err:
        BudgetGuard(layer).guard(msgs)
    assert err.value.tokens > err.value.limit == 4_000
    send = BudgetGuard(layer, settings=GuardSettings(on_overflow="send"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = send.guard(msgs)
    assert result.overflow
    assert any(issubclass(w.category, ContextBudgetWarning) for w in caught)


def test_drop_oldest_turns_is_refused(layer: ResultLayer) -> None:
    with pytest.raises(ValueError, match="never deletes"):
        BudgetGuard(layer, settings=GuardSettings(on_overflow="drop_oldest_turns"))  # type: ignore[arg-type]


def test_clears_old_tool_inputs_when_results_are_not_enough() -> None:
    # Tiny results: unfenced, so that clearing them cannot help and only the inputs can.
    layer = ResultLayer(
        context_window=6_000,
        store="memory",
        token_counter="tiktoken",
        guard=GuardSettings(target_fraction=0.5),
        fence_results=False,
    )
    msgs: list[BaseMessage] = [HumanMessage("refactor", id="h")]
    for k in range(10):
        patch = "\n".join(f"+    line {k}.{i} = compute(value_{i})" for i in range(60))
        msgs.append(
            AIMessage(
                "",
                id=f"a{k}",
                tool_calls=[{"name": "edit", "args": {"patch": patch}, "id": f"c{k}"}],
            )
        )
        msgs.append(
            layer.process_tool_message(
                ToolMessage("applied", tool_call_id=f"c{k}", name="edit", id=f"t{k}")
            )
        )
    result = BudgetGuard(layer).guard(msgs)
    assert result.cleared_inputs
    assert result.tokens_after <= result.target
    edited = {m.id: m for m in result.messages}
    for k in range(10):
        ai = edited[f"a{k}"]
        assert isinstance(ai, AIMessage)
        assert ai.tool_calls[0]["id"] == f"c{k}"
        if f"c{k}" in result.cleared_inputs:
            assert ai.tool_calls[0]["args"] == {}
            assert "arguments of earlier tool calls" in str(ai.content)
    assert_pairing(result.messages)


def test_clear_call_arguments_clears_provider_copies_and_notes_once() -> None:
    ai = AIMessage(
        [
            {"type": "text", "text": "editing"},
            {"type": "tool_use", "id": "c1", "name": "edit", "input": {"p": "x" * 50}},
        ],
        id="a",
        tool_calls=[
            {"name": "edit", "args": {"p": "x" * 50}, "id": "c1"},
            {"name": "edit", "args": {"p": "y"}, "id": "c2"},
        ],
        additional_kwargs={
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "edit", "arguments": '{"p": "x"}'},
                }
            ]
        },
    )
    signer = MarkerSigner()
    once = clear_call_arguments(ai, ["c1"], signer=signer)
    twice = clear_call_arguments(once, ["c2"], signer=signer)
    assert [c["args"] for c in twice.tool_calls] == [{}, {}]
    assert [c["id"] for c in twice.tool_calls] == ["c1", "c2"]
    assert once.content[1]["input"] == {}
    assert once.additional_kwargs["tool_calls"][0]["function"]["arguments"] == "{}"
    assert str(twice.content).count("arguments of earlier tool calls") == 1
    assert twice.response_metadata["result_layer"]["cleared_tool_inputs"] == ["c1", "c2"]


def test_non_destructive_remembers_decisions(layer: ResultLayer) -> None:
    guard = BudgetGuard(layer, settings=replace(layer.guard_settings, non_destructive=True))
    msgs = conversation(layer, 12)
    first = guard.guard(msgs)
    assert first.changed
    # state is untouched: the next call gets the original messages plus new ones
    more = msgs + conversation(layer, 13)[len(msgs) :]
    second = guard.guard(more)
    for i, m in enumerate(first.messages):
        assert second.messages[i].content == m.content  # same prefix as the first request


def test_system_prompt_and_tools_are_counted(layer: ResultLayer) -> None:
    @tool
    def read_log(path: str) -> str:
        """Read a log file from the build machine and return its full text, line by line."""
        return path

    msgs = conversation(layer, 3)
    bare = BudgetGuard(layer).guard(msgs)
    full = BudgetGuard(layer, system_prompt="You are a careful SRE. " * 20, tools=[read_log]).guard(
        msgs
    )
    assert full.tokens_before > bare.tokens_before + 100
    reserve = BudgetGuard(layer, settings=GuardSettings(reserve_tokens=500)).guard(msgs)
    assert reserve.tokens_before == bare.tokens_before + 500


def test_missing_ids_are_a_clear_error_in_state_mode(layer: ResultLayer) -> None:
    msgs = conversation(layer, 12)
    for i, m in enumerate(msgs):
        msgs[i] = m.model_copy(update={"id": None})
    with pytest.raises(ValueError, match="without ids"):
        BudgetGuard(layer).invoke({"messages": msgs})
