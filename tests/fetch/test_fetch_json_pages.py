"""Pages of JSON arrays through the real fetch tool and stores (in-memory and SQLite).

The model's path: the first view names a `next` page; the fetch tool reads the stored record,
pages through the array and names the page after; page arguments given to the tool page
through the array a `?path=` reference names.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage

from langchain_result_layer import ResultLayer
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.view import ResultView
from langchain_result_layer.stores import InMemoryResultStore, SQLResultStore

CFG = {"configurable": {"tenant_id": "acme", "user_id": "ada", "thread_id": "t1"}}
EVE = {"configurable": {"tenant_id": "acme", "user_id": "eve", "thread_id": "t1"}}
OMITTED_RE = re.compile(r"\[Omitted: ([\d,]+) of the ([\d,]+) chars of the original")


def records(n: int) -> list[dict[str, Any]]:
    return [
        {"id": i, "name": f"user{i}", "status": ["ok", "fail"][i % 2], "note": "x" * (i % 90)}
        for i in range(n)
    ]


@pytest.fixture(params=["memory", "sqlite"])
def layer(request: pytest.FixtureRequest, tmp_path: Path) -> ResultLayer:
    store: Any = (
        InMemoryResultStore()
        if request.param == "memory"
        else SQLResultStore(f"sqlite:///{tmp_path / 'results.db'}")
    )
    return ResultLayer(context_window=16_000, max_result_tokens=1_000, store=store)


def first(layer: ResultLayer, raw: str) -> ToolMessage:
    msg = layer.process_tool_message(
        ToolMessage(content=raw, tool_call_id="c1", name="list_users"), CFG
    )
    assert msg.response_metadata["result_layer"]["kind"] == "json"
    return msg


async def fetch(
    layer: ResultLayer, args: dict[str, Any], *, asynchronous: bool, config: Any = CFG
) -> ToolMessage:
    call = {"type": "tool_call", "id": "f1", "name": "fetch_tool_result", "args": args}
    if asynchronous:
        message: ToolMessage = await layer.fetch_tool.ainvoke(call, config)
    else:
        message = layer.fetch_tool.invoke(call, config)
    return message


def view_of(msg: ToolMessage) -> ResultView:
    view = ResultView.from_artifact(msg.artifact)
    assert view is not None
    return view


def ids_in(content: str) -> list[int]:
    return [int(i) for i in re.findall(r'^\[\d+\] \{"id": (\d+),', content, flags=re.M)]


@pytest.mark.parametrize("asynchronous", [False, True])
async def test_next_from_the_first_view_reads_every_record_once(
    layer: ResultLayer, asynchronous: bool
) -> None:
    raw = json.dumps({"users": records(1_000), "total": 1_000})
    msg = first(layer, raw)
    view = view_of(msg)
    seen = [int(i["index"]) for i in view.items if i.get("type") == "json_item"]
    ref = view.references.get("next")
    budget = layer.pipeline.budget_for("fetch_tool_result")
    calls = 0
    while ref is not None:
        calls += 1
        assert calls <= 200
        page = await fetch(layer, {"ref": ref}, asynchronous=asynchronous)
        assert page.status == "success", page.content
        assert layer.token_counter.count(page.content) <= budget.tokens
        assert ids_in(str(page.content)) == [int(i["index"]) for i in view_of(page).items]
        seen.extend(ids_in(str(page.content)))
        ref = view_of(page).references.get("next")
    assert seen == list(range(1_000))
    assert calls <= 1_000 // 10  # pages of many records, not one call per record


async def test_page_arguments_page_through_the_array_a_path_names(layer: ResultLayer) -> None:
    raw = json.dumps({"users": records(300)})
    ref = str(view_of(first(layer, raw)).references["all"]) + "?path=$.users"
    page = await fetch(layer, {"ref": ref, "page": 3, "page_size": 7}, asynchronous=False)
    assert page.status == "success", page.content
    assert ids_in(str(page.content)) == list(range(14, 21))
    nxt = Reference.parse(view_of(page).references["next"])
    assert (nxt.path, nxt.page, nxt.page_size) == ("$.users", 4, 7)
    # Arguments of the same form override the reference's page and keep its path.
    again = await fetch(layer, {"ref": str(nxt), "page": 10}, asynchronous=True)
    assert ids_in(str(again.content)) == list(range(63, 70))
    # A line range drops the path: lines of the stored text.
    lines = await fetch(layer, {"ref": ref, "start_line": 1, "end_line": 1}, asynchronous=False)
    assert lines.status == "success"
    assert view_of(lines).unit != "elements"


async def test_a_page_past_the_end_is_an_error_that_names_the_last_page(
    layer: ResultLayer,
) -> None:
    raw = json.dumps({"users": records(300)})
    base = view_of(first(layer, raw)).references["all"]
    out = await fetch(
        layer, {"ref": f"{base}?path=$.users", "page": 40, "page_size": 10}, asynchronous=True
    )
    assert out.status == "error"
    assert "its last page is 30" in out.content
    assert out.response_metadata["result_layer"]["error"]


async def test_pages_are_reads_like_any_other(layer: ResultLayer) -> None:
    """Another user gets the same not-found answer for a page as for anything else."""
    raw = json.dumps({"users": records(300)})
    ref = view_of(first(layer, raw)).references["next"]
    out = await fetch(layer, {"ref": ref}, asynchronous=False, config=EVE)
    assert out.status == "error"
    assert "not found or not accessible" in out.content


def test_the_first_view_counts_what_it_left_out(layer: ResultLayer) -> None:
    raw = json.dumps({"users": records(1_000), "total": 1_000}, indent=2)
    msg = first(layer, raw)
    view = view_of(msg)
    match = OMITTED_RE.search(str(msg.content))
    assert match is not None, str(msg.content)[-400:]
    assert int(match.group(1).replace(",", "")) == view.omitted_chars
    assert int(match.group(2).replace(",", "")) == len(raw)
    shown = [i for i in view.items if i.get("type") == "json_item"]
    assert f"elements [{len(shown)}]-[999] of $.users" in str(msg.content)
    # What is not omitted is the raw text of values shown whole, nothing else.
    shown_values = [json.loads(i["json"]) for i in shown]
    shown_values += [
        json.loads(i["preview"]) for i in view.items if "preview" in i and not i["clipped"]
    ]
    pos = 0
    for r in [*view.omitted, None]:
        stretch = raw[pos : r.start_char if r is not None else len(raw)]
        if stretch.strip():
            assert all(v in shown_values for v in json.loads(f"[{stretch}]"))
        pos = r.end_char if r is not None else pos
    assert 0 < len(raw) - view.omitted_chars < len(raw) // 10
