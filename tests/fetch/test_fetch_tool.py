"""`fetch_tool_result` end to end: ResultLayer(store=...) + process_tool_message + fetch."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool

from langchain_result_layer import ResultLayer, ToolPolicy
from langchain_result_layer.adapters.fetch_tool import not_accessible_message
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.view import ResultView
from langchain_result_layer.stores import InMemoryResultStore, Principal, SQLResultStore
from langchain_result_layer.views.slices import display_safe

CFG = {"configurable": {"tenant_id": "acme", "user_id": "ada", "thread_id": "t1"}}
OPEN_RE = re.compile(r"<<<tool-output (\w+): untrusted data, not instructions>>>\n")


def make_log(n: int = 3_000) -> str:
    lines = []
    for i in range(1, n + 1):
        if i % 97 == 0:
            lines.append(
                f"2024-01-01 12:00:{i % 60:02d} ERROR worker {i} failed: \x1b[31mboom\x1b[0m"
            )
        else:
            lines.append(f"2024-01-01 12:00:{i % 60:02d} INFO step {i} ok " + "." * (i % 50))
    return "\r\n".join(lines[:10]) + "\r\n" + "\n".join(lines[10:]) + "\n"


def call(args: dict[str, Any], id: str = "f1", name: str = "fetch_tool_result") -> dict[str, Any]:
    return {"type": "tool_call", "id": id, "name": name, "args": args}


def body_of(msg: ToolMessage) -> str:
    """The fenced body, exactly as much as the view says it shows."""
    view = ResultView.from_artifact(msg.artifact)
    assert view is not None
    content = msg.content
    assert isinstance(content, str)
    match = OPEN_RE.search(content)
    assert match is not None
    start = match.end()
    end = content.index(f"<<<end tool-output {match.group(1)}>>>", start)
    inner = content[start:end]
    if view.unit == "bytes":  # a hex dump
        return inner
    shown = view.summary["end_offset"] - view.summary["offset"]
    assert inner[:shown] + ("\n" if inner[:shown] and not inner[:shown].endswith("\n") else "") == (
        inner
    )
    return inner[:shown]


@pytest.fixture(params=["memory", "sqlite"])
def layer(request: pytest.FixtureRequest, tmp_path: Path) -> ResultLayer:
    store: Any = (
        InMemoryResultStore()
        if request.param == "memory"
        else f"sqlite:///{tmp_path / 'results.db'}"
    )
    return ResultLayer(context_window=16_000, max_result_tokens=800, store=store)


def stored_ref(layer: ResultLayer, text: str, name: str = "read_log") -> str:
    msg = layer.process_tool_message(ToolMessage(content=text, tool_call_id="c1", name=name), CFG)
    marker = msg.response_metadata["result_layer"]
    assert marker["stored"] is True
    assert marker["truncated"] is True
    assert isinstance(marker["ref"], str)
    return marker["ref"]


def test_fetch_returns_a_marked_tool_message_within_budget(layer: ResultLayer) -> None:
    text = make_log()
    ref = stored_ref(layer, text)
    msg = layer.fetch_tool.invoke(call({"ref": ref, "start_line": 200, "end_line": 230}), CFG)
    assert isinstance(msg, ToolMessage)
    assert msg.status == "success"
    assert msg.tool_call_id == "f1"
    assert msg.name == "fetch_tool_result"
    marker = msg.response_metadata["result_layer"]
    assert marker["processed"] is True
    assert marker["kind"] == "fetch"
    assert marker["stored"] is True
    assert marker["truncated"] is False
    rid = Reference.parse(ref).record_id
    assert marker["record_id"] == rid
    assert marker["ref"] == str(Reference.parse(ref).with_lines(200, 230))
    budget = layer.pipeline.budget_for("fetch_tool_result")
    assert marker["tokens"] == layer.token_counter.count(msg.content) <= budget.tokens
    lines = text.split("\n")
    assert body_of(msg) == display_safe("".join(ln + "\n" for ln in lines[199:230]))[0]
    assert "lines 200-230 of 3,000" in msg.content
    assert 'fetch_tool_result(ref="' in msg.content
    assert f"{rid}/" in ResultView.from_artifact(msg.artifact).references["next"]
    # The per-result layer leaves fetch results alone (no re-processing, no re-storing).
    again = layer.process_tool_message(msg, CFG)
    assert again is msg
    # Plain arguments (no ToolCall) give the text.
    text_out = layer.fetch_tool.invoke({"ref": ref, "start_line": 200, "end_line": 230}, CFG)
    assert isinstance(text_out, str)
    assert body_of(msg) in text_out


@pytest.mark.parametrize("asynchronous", [False, True])
async def test_following_next_rebuilds_the_original_exactly(
    layer: ResultLayer, asynchronous: bool
) -> None:
    text = make_log(1_500)
    ref: str | None = stored_ref(layer, text)
    pieces: list[str] = []
    offsets: list[tuple[int, int]] = []
    calls = 0
    while ref is not None:
        calls += 1
        assert calls < 400
        tool_call = call({"ref": ref}, id=f"f{calls}")
        msg = (
            (await layer.fetch_tool.ainvoke(tool_call, CFG))
            if asynchronous
            else (layer.fetch_tool.invoke(tool_call, CFG))
        )
        assert msg.status == "success", msg.content
        assert (
            layer.token_counter.count(msg.content)
            <= layer.pipeline.budget_for("fetch_tool_result").tokens
        )
        view = ResultView.from_artifact(msg.artifact)
        assert view is not None
        pieces.append(body_of(msg))
        offsets.append((view.summary["offset"], view.summary["end_offset"]))
        ref = view.references.get("next")
    assert calls > 3
    assert [a for a, _ in offsets[1:]] == [b for _, b in offsets[:-1]]
    assert offsets[0][0] == 0
    assert offsets[-1][1] == len(text)
    assert "".join(pieces) == display_safe(text)[0]
    assert "end of the result" in msg.content


def test_offset_chain_and_pages(layer: ResultLayer) -> None:
    text = make_log(400)
    ref = Reference.parse(stored_ref(layer, text))
    msg = layer.fetch_tool.invoke(call({"ref": str(ref.with_chars(1_000, 5_000))}), CFG)
    view = ResultView.from_artifact(msg.artifact)
    assert view.summary["offset"] == 1_000
    assert body_of(msg) == display_safe(text[1_000 : view.summary["end_offset"]])[0]
    nxt = Reference.parse(view.references["next"])
    assert nxt.offset == view.summary["end_offset"]
    assert nxt.offset + nxt.limit == 6_000
    page = layer.fetch_tool.invoke(call({"ref": str(ref), "page": 3, "page_size": 10}), CFG)
    lines = [ln + "\n" for ln in text.split("\n")[:-1]]
    assert body_of(page) == display_safe("".join(lines[20:30]))[0]
    nxt_page = Reference.parse(ResultView.from_artifact(page.artifact).references["next"])
    assert (nxt_page.page, nxt_page.page_size) == (4, 10)


def test_arguments_override_the_reference_range(layer: ResultLayer) -> None:
    text = make_log(400)
    ref = Reference.parse(stored_ref(layer, text))
    lines_ref = str(ref.with_lines(5, 9))
    merged = layer.fetch_tool.invoke(call({"ref": lines_ref, "end_line": 6}), CFG)
    assert merged.response_metadata["result_layer"]["ref"] == str(ref.with_lines(5, 6))
    switched = layer.fetch_tool.invoke(call({"ref": lines_ref, "offset": 10, "limit": 20}), CFG)
    assert switched.response_metadata["result_layer"]["ref"] == str(ref.with_chars(10, 20))
    assert body_of(switched) == display_safe(text[10:30])[0]


@pytest.mark.parametrize(
    ("args", "config", "expected"),
    [
        ({"ref": "ref://tool-result/nope"}, CFG, "Invalid reference"),
        ({"ref": "https://example.com"}, CFG, "expected ref://tool-result/"),
        (
            {"ref": "ref://tool-result/AAAAAAAAAAAAAAAAAAAAAA/text"},
            CFG,
            "not found or not accessible",
        ),
        ({"ref": "<REF>", "page": 1, "start_line": 2}, CFG, "one range form"),
        ({"ref": "<REF>", "page": "two"}, CFG, "Invalid arguments"),
        ({"ref": "<REF>", "offset": -1}, CFG, "Invalid arguments"),
        ({"ref": "<REF>", "colour": "red"}, CFG, "Invalid arguments"),
        ({"page": 1}, CFG, "Invalid arguments"),
        (
            {"ref": "<REF>"},
            {"configurable": {"tenant_id": "acme", "user_id": "eve", "thread_id": "t1"}},
            "not found or not accessible",
        ),
        (
            {"ref": "<REF>"},
            {"configurable": {"tenant_id": "acme", "user_id": "ada", "thread_id": "t2"}},
            "not found or not accessible",
        ),
        (
            {"ref": "<REF>"},
            {"configurable": {"tenant_id": "other", "user_id": "ada", "thread_id": "t1"}},
            "not found or not accessible",
        ),
    ],
)
@pytest.mark.parametrize("asynchronous", [False, True])
async def test_problems_come_back_as_error_messages(
    layer: ResultLayer, args: dict[str, Any], config: Any, expected: str, asynchronous: bool
) -> None:
    ref = stored_ref(layer, make_log(300))
    args = {k: (ref if v == "<REF>" else v) for k, v in args.items()}
    tc = call(args)
    msg = (
        (await layer.fetch_tool.ainvoke(tc, config))
        if asynchronous
        else (layer.fetch_tool.invoke(tc, config))
    )
    assert isinstance(msg, ToolMessage)
    assert msg.status == "error"
    assert expected in msg.content
    marker = msg.response_metadata["result_layer"]
    assert marker["processed"] is True
    assert marker["kind"] == "fetch"
    assert marker["stored"] is False
    assert marker["error"]
    # The denied read is audited as denied.
    if "not accessible" in expected and "AAAA" not in str(args.get("ref")):
        store = layer.store
        rid = Reference.parse(ref).record_id
        assert store is not None
        assert store.audit_log(record_id=rid)[0].granted is False


def test_no_store_and_expired_records(tmp_path: Path) -> None:
    layer = ResultLayer(context_window=16_000, max_result_tokens=800, store=False)
    msg = layer.fetch_tool.invoke(call({"ref": "ref://tool-result/AAAAAAAAAAAAAAAAAAAAAA/text"}))
    assert msg.status == "error"
    assert "no result store" in msg.content
    now = [1_000.0]
    store = SQLResultStore(f"sqlite:///{tmp_path / 'r.db'}", clock=lambda: now[0])
    layer = ResultLayer(context_window=16_000, max_result_tokens=800, store=store)
    ref = stored_ref(layer, make_log(300))
    now[0] += 8 * 24 * 3600
    msg = layer.fetch_tool.invoke(call({"ref": ref}), CFG)
    assert msg.status == "error"
    assert "expired" in msg.content


def test_binary_records_are_shown_as_hex(layer: ResultLayer) -> None:
    store = layer.store
    assert store is not None
    principal = layer.principal_for(CFG)
    data = bytes(range(256)) * 40
    meta = store.put(data, principal=principal, kind="binary")
    ref: str | None = str(Reference(record_id=meta.record_id, kind="binary"))
    seen = bytearray()
    while ref:
        msg = layer.fetch_tool.invoke(call({"ref": ref}), CFG)
        assert msg.status == "success"
        view = ResultView.from_artifact(msg.artifact)
        for line in body_of(msg).splitlines():
            seen.extend(bytes.fromhex(line[10:57].replace(" ", "")))
        ref = view.references.get("next")
    assert bytes(seen) == data


def test_capped_records_say_what_was_lost(tmp_path: Path) -> None:
    store = SQLResultStore(
        f"sqlite:///{tmp_path / 'r.db'}", max_record_size=20_000, min_capped_size=1_000
    )
    layer = ResultLayer(context_window=16_000, max_result_tokens=800, store=store)
    text = make_log(3_000)
    ref = Reference.parse(stored_ref(layer, text))
    meta = store.info(ref.record_id, principal=layer.principal_for(CFG))
    assert meta.capped
    msg = layer.fetch_tool.invoke(call({"ref": str(ref.with_lines(1_500, 1_510))}), CFG)
    assert msg.status == "success"
    assert "exceeded the store's size cap" in msg.content
    assert f"offset {meta.gap_end:,}" in msg.content
    assert (
        layer.token_counter.count(msg.content)
        <= layer.pipeline.budget_for("fetch_tool_result").tokens
    )


def test_a_huge_single_line_is_cut_within_and_the_range_goes_on(layer: ResultLayer) -> None:
    text = "x" * 50_000 + " ERROR: the cause " + "y" * 30_000 + "\nend\n"
    ref = stored_ref(layer, text)
    msg = layer.fetch_tool.invoke(call({"ref": ref, "start_line": 1, "end_line": 2}), CFG)
    assert msg.status == "success"
    content = str(msg.content)
    # The long line does not eat the budget: it is cut within, and line 2 is shown too.
    assert "ERROR: the cause" in content
    assert "\nend\n" in content
    view = ResultView.from_artifact(msg.artifact)
    assert view is not None
    cuts = [r for r in view.omitted if r.partial_start and r.partial_end]
    assert cuts
    assert all(r.start_line == r.end_line == 1 for r in cuts)
    # Every cut is stated with its exact raw range, and that range can be fetched.
    for r in cuts:
        assert f"chars {r.start_char:,}-{r.end_char:,} omitted" in content
    first = cuts[0]
    part = layer.fetch_tool.invoke(
        call({"ref": ref, "offset": first.start_char, "limit": 200}, id="f2"), CFG
    )
    assert part.status == "success"
    assert text[first.start_char : first.start_char + 200] in str(part.content)


def test_in_a_tool_node_with_the_graph_config() -> None:
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode

    layer = ResultLayer(context_window=16_000, max_result_tokens=800, store="sqlite://")
    ref = stored_ref(layer, make_log(500))
    graph = StateGraph(MessagesState)
    tools: list[BaseTool] = [layer.fetch_tool]
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    app = graph.compile()
    ai = AIMessage(
        content="",
        tool_calls=[
            {
                "name": "fetch_tool_result",
                "args": {"ref": ref, "page": 2, "page_size": 5},
                "id": "x1",
            },
            {"name": "fetch_tool_result", "args": {"ref": ref, "page": 1}, "id": "x2"},
        ],
    )
    out = app.invoke({"messages": [ai]}, CFG)
    results = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert [m.tool_call_id for m in results] == ["x1", "x2"]
    assert all(m.status == "success" for m in results)
    assert all(m.response_metadata["result_layer"]["kind"] == "fetch" for m in results)
    denied = app.invoke({"messages": [ai]}, {"configurable": {"user_id": "eve"}})
    assert all(m.status == "error" for m in denied["messages"] if isinstance(m, ToolMessage))


def test_principal_comes_from_the_callback_when_configured() -> None:
    layer = ResultLayer(
        context_window=16_000,
        max_result_tokens=800,
        store="memory",
        principal=lambda cfg: Principal(user=(cfg.get("metadata") or {}).get("who")),
    )
    msg = layer.process_tool_message(
        ToolMessage(content=make_log(300), tool_call_id="c", name="t"), {"metadata": {"who": "x"}}
    )
    ref = msg.response_metadata["result_layer"]["ref"]
    ok = layer.fetch_tool.invoke(call({"ref": ref}), {"metadata": {"who": "x"}})
    bad = layer.fetch_tool.invoke(call({"ref": ref}), {"metadata": {"who": "y"}})
    assert ok.status == "success"
    assert bad.status == "error"


def test_tool_schema_is_what_the_model_sees() -> None:
    layer = ResultLayer(context_window=16_000, store="memory")
    tool = layer.fetch_tool
    assert tool is layer.fetch_tool
    assert tool.name == "fetch_tool_result"
    schema = tool.tool_call_schema.model_json_schema()
    assert set(schema["properties"]) == {
        "ref",
        "page",
        "page_size",
        "start_line",
        "end_line",
        "offset",
        "limit",
    }
    assert schema["required"] == ["ref"]
    assert "config" not in schema["properties"]


@pytest.mark.parametrize("asynchronous", [False, True])
async def test_not_accessible_is_one_message_that_states_no_lifetime(
    tmp_path: Path, asynchronous: bool
) -> None:
    """Missing, expired and another user's records get the same words, and no made-up TTL.

    The layer keeps results one hour and this tool's a minute: whatever lifetime applied to a
    record that is gone, the answer must not claim one (it once said "about 7 days").
    """
    now = [1_000.0]
    store = SQLResultStore(f"sqlite:///{tmp_path / 'r.db'}", clock=lambda: now[0])
    layer = ResultLayer(
        context_window=16_000,
        max_result_tokens=800,
        store=store,
        ttl_seconds=3_600,
        tool_policies={"read_log": ToolPolicy(ttl_seconds=60)},
    )
    ref = stored_ref(layer, make_log(300))
    rid = Reference.parse(ref).record_id
    eve = {"configurable": {"tenant_id": "acme", "user_id": "eve", "thread_id": "t1"}}

    async def ask(ref_: str, config: Any) -> ToolMessage:
        tc = call({"ref": ref_})
        if asynchronous:
            out: ToolMessage = await layer.fetch_tool.ainvoke(tc, config)
        else:
            out = layer.fetch_tool.invoke(tc, config)
        assert out.status == "error"
        assert isinstance(out.content, str)
        return out

    missing_id = "A" * 22
    answers = {
        "other principal": (await ask(ref, eve)).content,
        "missing": (await ask(ref.replace(rid, missing_id), CFG)).content,
    }
    now[0] += 61
    answers["expired"] = (await ask(ref, CFG)).content
    texts = {k: str(v).replace(rid, "<id>").replace(missing_id, "<id>") for k, v in answers.items()}
    assert len(set(texts.values())) == 1, texts
    text = texts["expired"]
    assert "not found or not accessible" in text
    assert "may have expired" in text
    assert "run the original tool again" in text
    assert not re.search(r"\d\s*(day|hour|minute|second|week)", text), text
    assert text == not_accessible_message("<id>")


def test_next_after_a_line_range_is_sized_from_the_lines_read_ahead(layer: ResultLayer) -> None:
    """Long lines then short ones: the page after the long lines asks for many more lines."""
    long_lines = [f"{i:04d} " + "x" * 300 for i in range(1, 11)]
    short_lines = [f"{i:04d} ok" for i in range(11, 2_001)]
    ref = stored_ref(layer, "\n".join(long_lines + short_lines) + "\n")
    first = layer.fetch_tool.invoke(call({"ref": ref, "start_line": 1, "end_line": 10}), CFG)
    view = ResultView.from_artifact(first.artifact)
    assert view is not None
    assert "Shown in full; the result goes on." in first.content
    nxt = Reference.parse(view.references["next"])
    assert nxt.start_line == 11
    assert nxt.end_line is not None
    # Ten lines of ~300 characters were shown; the next page holds ~300-character pages'
    # worth of 8-character lines, not another ten lines.
    assert nxt.end_line - nxt.start_line + 1 > 100
    second = layer.fetch_tool.invoke(call({"ref": view.references["next"]}), CFG)
    # The lines shown are exactly those asked for, no more (the read-ahead is not shown).
    assert body_of(first) == "".join(line + "\n" for line in long_lines)
    assert "0011 ok\n" in body_of(second)
    assert layer.token_counter.count(second.content) <= layer.result_budget.tokens
