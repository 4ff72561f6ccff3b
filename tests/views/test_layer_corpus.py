"""Views through `ResultLayer.process_tool_message` on real corpus files, and fetches back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage

from langchain_result_layer import ResultLayer, ToolPolicy
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.view import ResultView
from tests.views.conftest import COUNTER, assert_fence_unforgeable

BUDGET = 2_000


def _layer(**policies: ToolPolicy) -> ResultLayer:
    return ResultLayer(
        context_window=100_000,
        max_result_tokens=BUDGET,
        store="memory",
        token_counter=COUNTER,
        tool_policies=policies,
    )


def _message(content: Any, name: str = "tool", status: str = "success") -> ToolMessage:
    return ToolMessage(content=content, tool_call_id="call-1", name=name, status=status, id="m1")


def _fetch(layer: ResultLayer, ref: str) -> str:
    out = layer.fetch_tool.invoke(
        {"type": "tool_call", "id": "f1", "name": layer.fetch_tool.name, "args": {"ref": ref}}
    )
    assert isinstance(out, ToolMessage)
    return str(out.content)


def _check(message: ToolMessage, kind: str) -> ResultView:
    content = message.content
    assert isinstance(content, str)
    assert COUNTER.count(content) <= BUDGET
    assert_fence_unforgeable(content)
    view = ResultView.from_artifact(message.artifact)
    assert view is not None
    assert view.kind == kind
    assert view.stored
    assert view.record_id
    return view


def _case(corpus: Path, source: str, index: int = 0) -> dict[str, Any]:
    cases = [json.loads(x) for x in (corpus / "cases.jsonl").read_text().splitlines()]
    return [c for c in cases if c["source"] == source][index]


def test_build_log_becomes_a_command_view_and_the_error_window_is_fetchable(corpus: Path) -> None:
    case = _case(corpus, "cidiff_breakages", 5)  # a long Maven log
    raw = (corpus / case["path"]).read_text(encoding="utf-8", errors="replace")
    layer = _layer()
    out = layer.process_tool_message(_message(raw, status="error"))
    view = _check(out, "command")
    assert out.id == "m1"
    assert out.tool_call_id == "call-1"
    assert out.status == "error"
    for needle in case["needles"][:1]:
        assert needle in str(out.content)
    ref = view.references.get("first_error") or view.references["next"]
    fetched = _fetch(layer, ref)
    parsed = Reference.parse(ref)
    assert parsed.start_line is not None
    first = raw.split("\n")[parsed.start_line - 1].rstrip("\r")
    assert first[:60].strip() in fetched


def test_system_log_becomes_a_log_view(corpus: Path) -> None:
    raw = (corpus / "loghub" / "Zookeeper" / "Zookeeper_2k.log").read_text(encoding="utf-8")
    out = _layer().process_tool_message(_message(raw, name="read_log"))
    view = _check(out, "log")
    assert view.summary["levels"] == {"ERROR": 13, "WARN": 1_318, "INFO": 669}
    assert view.summary["time"]["first"] == "2015-07-29 17:41:44,747"


def test_declared_kind_is_used(corpus: Path) -> None:
    raw = (corpus / "loghub" / "Spark" / "Spark_2k.log").read_text(encoding="utf-8")
    layer = _layer(run=ToolPolicy(kind="command"))
    out = layer.process_tool_message(_message(raw, name="run"))
    _check(out, "command")


def test_sql_output_pages_through_the_fetch_tool(corpus: Path) -> None:
    text = (corpus / "sql" / "outputs" / "invoicelines_invoice_300.txt").read_text(encoding="utf-8")
    layer = _layer()
    out = layer.process_tool_message(_message(text, name="run_sql"))
    view = _check(out, "rows")
    total = text.count("\n") - 1
    assert view.total == total
    nxt = view.references["next"]
    page = Reference.parse(nxt)
    assert page.page == 2
    assert page.page_size == view.shown
    fetched = _fetch(layer, nxt)
    first_row = view.shown + 1
    line = text.split("\n")[first_row]  # line 0 is the header
    # The rows view shows delimited text in its own delimiter (JSON arrays for objects).
    as_json = json.dumps(line.split("|"), ensure_ascii=False)
    assert line in fetched or as_json in fetched
    assert f"rows {first_row:,}-" in fetched


def test_list_of_dicts_content_is_rows(corpus: Path) -> None:
    del corpus
    rows = [
        {"id": i, "status": "ok" if i % 10 else "failed", "payload": "x" * 40} for i in range(3_000)
    ]
    layer = _layer()
    out = layer.process_tool_message(_message(rows, name="query"))
    view = _check(out, "rows")
    assert view.total == 3_000
    assert view.summary["column_summaries"]["status"]["top"] == [["ok", 2_700], ["failed", 300]]
    fetched = _fetch(layer, view.references["next"])
    assert '"ok"' in fetched
    assert f"rows {view.shown + 1:,}-" in fetched


@pytest.mark.parametrize("name", ["sphinx-doc__sphinx-8474__step03.txt"])
def test_search_output(corpus: Path, name: str) -> None:
    text = (corpus / "tool_outputs" / "searches" / name).read_text(encoding="utf-8")
    layer = ResultLayer(
        context_window=100_000, max_result_tokens=600, store="memory", token_counter=COUNTER
    )
    out = layer.process_tool_message(_message(text, name="search"))
    content = out.content
    assert isinstance(content, str)
    view = ResultView.from_artifact(out.artifact)
    assert view is not None
    assert view.kind == "search"
    assert COUNTER.count(content) <= 600


async def test_async_twin_gives_the_same_kind(corpus: Path) -> None:
    raw = (corpus / "loghub" / "Linux" / "Linux_2k.log").read_text(encoding="utf-8")
    out = await _layer().aprocess_tool_message(_message(raw, name="read_log"))
    _check(out, "log")
