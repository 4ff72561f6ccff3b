"""Property-based invariants of the budget guard on real LangChain message lists."""

from __future__ import annotations

import warnings
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langchain_result_layer import GuardSettings, ResultLayer
from langchain_result_layer.adapters._messages import RequestCounter, layer_marker
from langchain_result_layer.adapters.budget_guard import BudgetGuard
from tests.integration.helpers import assert_pairing

WORDS = ["error", "ok", "build", "step", "передача", "数据", "0xdeadbeef", '{"k": 1}', "\t", "\r\n"]


@st.composite
def conversations(draw: st.DrawFn) -> list[BaseMessage]:
    msgs: list[BaseMessage] = [HumanMessage("start", id="h0")]
    call = 0
    for turn in range(draw(st.integers(0, 14))):
        width = draw(st.integers(1, 3))
        calls = []
        for _ in range(width):
            args: dict[str, Any] = {
                "q": " ".join(draw(st.lists(st.sampled_from(WORDS), max_size=60)))
            }
            calls.append(
                {
                    "name": draw(st.sampled_from(["search", "sql", "plan"])),
                    "args": args,
                    "id": f"c{call}",
                }
            )
            call += 1
        msgs.append(AIMessage(draw(st.text(max_size=40)), id=f"a{turn}", tool_calls=calls))
        for c in calls:
            size, seed = draw(st.integers(0, 1_500)), draw(st.integers(0, 99))
            content: Any = " ".join(WORDS[(seed + i * i) % len(WORDS)] for i in range(size))
            if draw(st.integers(0, 6)) == 0:
                content = [{"type": "text", "text": content}]
            msgs.append(
                ToolMessage(
                    content,
                    tool_call_id=c["id"],
                    name=c["name"],
                    id=f"t{c['id']}",
                    status=draw(st.sampled_from(["success", "success", "error"])),
                )
            )
        if draw(st.integers(0, 4)) == 0:
            msgs.append(HumanMessage(draw(st.text(max_size=80)), id=f"h{turn + 1}"))
    return msgs


def settings_keep_last(layer: ResultLayer) -> int:
    return layer.guard_settings.keep_last


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    conversations(),
    st.integers(1_500, 24_000),
    st.integers(0, 4),
    st.booleans(),
    st.booleans(),
)
def test_guard_invariants(
    msgs: list[BaseMessage], window: int, keep_last: int, process: bool, store: bool
) -> None:
    layer = ResultLayer(
        context_window=window,
        store="memory" if store else False,
        token_counter="approximate",
        guard=GuardSettings(
            keep_last=keep_last, pinned_tools=frozenset({"plan"}), on_overflow="send"
        ),
    )
    if process:
        msgs = [layer.process_tool_message(m) if isinstance(m, ToolMessage) else m for m in msgs]
    guard = BudgetGuard(layer)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = guard.guard(msgs)
    out = result.messages
    event(f"changed={result.changed} overflow={result.overflow} args={bool(result.cleared_inputs)}")

    # Never delete or reorder; keep ids, tool_call_id, name, status; pairing intact.
    assert [m.id for m in out] == [m.id for m in msgs]
    assert [type(m) for m in out] == [type(m) for m in msgs]
    for before, after in zip(msgs, out, strict=True):
        if isinstance(before, ToolMessage):
            assert isinstance(after, ToolMessage)
            assert (after.tool_call_id, after.name, after.status) == (
                before.tool_call_id,
                before.name,
                before.status,
            )
        if isinstance(before, AIMessage):
            assert isinstance(after, AIMessage)
            assert [c["id"] for c in after.tool_calls] == [c["id"] for c in before.tool_calls]
    assert_pairing(out)

    # Replacements are exactly the changed messages, by id.
    changed = {a.id for b, a in zip(msgs, out, strict=True) if a is not b}
    assert {m.id for m in result.replacements} == changed

    # Exact accounting.
    rc = RequestCounter(layer.token_counter, image_tokens=layer.image_tokens)
    assert result.tokens_after == rc.count(out)
    assert result.overflow == (result.tokens_after > window)
    if result.tokens_before <= result.trigger:
        assert not result.changed

    # Protected results are never cleared: unseen ones (after the last AI message) and pinned
    # tools. Unseen results are only ever rendered again with a smaller share (never cleared),
    # and only when they alone would overflow the window.
    last_ai = max((i for i, m in enumerate(msgs) if isinstance(m, AIMessage)), default=-1)
    shrunk = set(result.shrunk)
    for i, (before, after) in enumerate(zip(msgs, out, strict=True)):
        if isinstance(before, ToolMessage) and before.name == "plan" and i <= last_ai:
            assert after is before
        if isinstance(before, ToolMessage) and i > last_ai and after is not before:
            assert after.id in shrunk
            assert not layer_marker(after).get("cleared")
            assert layer_marker(after).get("shrunk_by_guard") is True

    # Seen results kept by keep_last are only ever shown smaller, while a clearing happens
    # anyway and could not reach the target: stored, not pinned, never cleared, smaller.
    kept = set(result.shrunk_kept)
    if kept:
        assert result.cleared or result.cleared_inputs
    tools_seen = [i for i, m in enumerate(msgs) if isinstance(m, ToolMessage) and i <= last_ai]
    for i, (before, after) in enumerate(zip(msgs, out, strict=True)):
        if after.id in kept and isinstance(after, ToolMessage):
            assert i in tools_seen[-settings_keep_last(layer) :]
            assert before.name != "plan"
            assert not layer_marker(after).get("cleared")
            assert layer_marker(after).get("shrunk_by_guard") is True
            assert layer_marker(after).get("ref")
            assert rc.message_tokens(after) < rc.message_tokens(before)
    shrunk |= kept

    # Placeholders restore: with a store, every cleared result carries a reference.
    for m in result.replacements:
        if isinstance(m, ToolMessage) and m.id not in shrunk:
            marker = layer_marker(m)
            assert marker["cleared"] is True
            if store:
                assert marker["ref"], m.content
            else:
                assert marker["ref"] is None
                assert "could not be saved" in str(m.content)

    # Idempotent: the guarded request is left alone when it is under the trigger.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = guard.guard(out)
    assert not set(again.cleared) & set(result.cleared)
    if result.tokens_after <= result.trigger:
        assert not again.changed
