"""A placeholder whose stored copy expired says so instead of offering a dead restore.

Issue 12 item 7. A real layer, a real in-memory store with a one-second TTL, the real budget
guard: the guard clears a result (its placeholder offers `fetch_tool_result(...)`); once the
record's lifetime has passed, the next guard call rewrites that placeholder, once, to say the
copy expired and cannot be restored; the fetch tool indeed finds nothing any more.
"""

from __future__ import annotations

import time
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langchain_result_layer import BudgetGuard, ResultLayer

_TTL = 1.0


def _conversation(layer: ResultLayer) -> list[BaseMessage]:
    messages: list[BaseMessage] = [HumanMessage("check the builds", id="h1")]
    for i in range(6):
        call_id = f"c{i}"
        messages.append(
            AIMessage("", tool_calls=[{"id": call_id, "name": "logs", "args": {}}], id=f"a{i}")
        )
        raw = ToolMessage(
            content="".join(f"build {i} step {n}: ok\n" for n in range(3_000)),
            tool_call_id=call_id,
            name="logs",
            id=f"t{i}",
        )
        messages.append(layer.process_tool_message(raw))
    messages.append(AIMessage("all green", id="a-end"))
    messages.append(HumanMessage("and now?", id="h2"))
    return messages


def _merged(messages: list[BaseMessage], update: dict[str, Any]) -> list[BaseMessage]:
    replaced = {m.id: m for m in update.get("messages", [])}
    return [replaced.get(m.id, m) for m in messages]


def _fetch(layer: ResultLayer, ref: str) -> ToolMessage:
    out = layer.fetch_tool.invoke(
        {"type": "tool_call", "id": "f1", "name": layer.fetch_tool.name, "args": {"ref": ref}}
    )
    assert isinstance(out, ToolMessage)
    return out


def test_an_expired_placeholder_says_so_once() -> None:
    layer = ResultLayer(
        context_window=8_000, store="memory", token_counter="approximate", ttl_seconds=_TTL
    )
    guard = BudgetGuard(layer)
    messages = _conversation(layer)
    first = guard.invoke({"messages": messages})
    assert isinstance(first, dict)
    messages = _merged(messages, first)
    cleared = [
        m
        for m in messages
        if isinstance(m, ToolMessage) and str(m.content).startswith("[Cleared to save context")
    ]
    assert cleared, "the guard cleared nothing: the test would prove nothing"
    refs = {}
    for message in cleared:
        text = str(message.content)
        assert "Restore: fetch_tool_result(" in text
        ref = text.split('ref="', 1)[1].split('"', 1)[0]
        refs[message.id] = ref
        assert _fetch(layer, ref).status != "error"  # restorable while the record lives

    time.sleep(_TTL + 0.3)  # the records' lifetime passes (no timing is asserted)
    second = guard.invoke({"messages": messages})
    assert isinstance(second, dict)
    messages = _merged(messages, second)
    by_id = {m.id: m for m in messages}
    for message_id, ref in refs.items():
        text = str(by_id[message_id].content)
        assert "Restore:" not in text, text
        assert "stored copy expired on" in text
        assert "it cannot be restored" in text
        fetched = _fetch(layer, ref)
        assert fetched.status == "error"
        assert "not found or not accessible" in str(fetched.content)
    # Once: a third call leaves the rewritten placeholders as they are.
    third = guard.invoke({"messages": messages})
    rewritten_again = {m.id for m in (third or {}).get("messages", [])} & set(refs)
    assert not rewritten_again
