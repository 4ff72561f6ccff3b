"""`?path=` fetches of JSON results: the whole record is read (up to the fetch's read cap), and
every failure is a `status="error"` message that says what to do instead."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage

from langchain_result_layer import ResultLayer
from langchain_result_layer.core.view import ResultView
from langchain_result_layer.stores import InMemoryResultStore, SQLResultStore

CFG = {"configurable": {"tenant_id": "acme", "user_id": "ada", "thread_id": "t1"}}


def module(i: int) -> dict[str, Any]:
    return {
        "name": f"package{i // 50}.module{i}",
        "path": f"/usr/lib/python3/package{i // 50}/module{i}.py",
        "lines": 100 + i * 7 % 900,
        "classes": [
            {"name": f"Class{j}", "line": 10 + 40 * j, "methods": [f"method_{k}" for k in range(4)]}
            for j in range(2)
        ],
        "functions": [{"name": f"function_{k}", "line": 300 + k * 9} for k in range(3)],
    }


DOC = {"python": "3.11", "module_count": 3_200, "modules": [module(i) for i in range(3_200)]}
TEXT = json.dumps(DOC, indent=1)


@pytest.fixture(params=["memory", "sqlite"])
def layer(request: pytest.FixtureRequest, tmp_path: Path) -> ResultLayer:
    store: Any = (
        InMemoryResultStore()
        if request.param == "memory"
        else SQLResultStore(f"sqlite:///{tmp_path / 'results.db'}")
    )
    return ResultLayer(context_window=128_000, max_result_tokens=1_200, store=store)


def stored_ref(layer: ResultLayer, text: str = TEXT) -> str:
    msg = layer.process_tool_message(
        ToolMessage(content=text, tool_call_id="c1", name="describe_stdlib"), CFG
    )
    marker = msg.response_metadata["result_layer"]
    assert marker["kind"] == "json"
    assert marker["stored"]
    return str(marker["ref"])


async def fetch(layer: ResultLayer, ref: str, *, asynchronous: bool) -> ToolMessage:
    call = {"type": "tool_call", "id": "f1", "name": "fetch_tool_result", "args": {"ref": ref}}
    if asynchronous:
        message: ToolMessage = await layer.fetch_tool.ainvoke(call, CFG)
    else:
        message = layer.fetch_tool.invoke(call, CFG)
    return message


@pytest.mark.parametrize("asynchronous", [False, True])
async def test_a_path_of_a_large_result_is_resolved(layer: ResultLayer, asynchronous: bool) -> None:
    assert len(TEXT) > 1_500_000
    # More than the per-result character budget: a read capped at the budget cannot parse.
    assert len(TEXT) > layer.pipeline.budget_for("fetch_tool_result").chars
    ref = stored_ref(layer)
    msg = await fetch(layer, ref + "?path=$.modules[3000]", asynchronous=asynchronous)
    assert msg.status == "success", msg.content
    assert "JSON value at $.modules[3000] (object" in msg.content
    assert '"name": "package60.module3000"' in msg.content
    assert (
        layer.token_counter.count(msg.content)
        <= layer.pipeline.budget_for("fetch_tool_result").tokens
    )
    view = ResultView.from_artifact(msg.artifact)
    assert view is not None
    assert view.summary["path"] == "$.modules[3000]"


@pytest.mark.parametrize("asynchronous", [False, True])
@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("$.modules[9999]", "$.modules is an array of 3200; [9999] does not exist"),
        ("$.nope", "$ has no key 'nope'"),
        ("modules", "a JSON path starts with '$'"),
    ],
)
async def test_a_path_that_cannot_be_resolved_is_an_error(
    layer: ResultLayer, path: str, expected: str, asynchronous: bool
) -> None:
    ref = stored_ref(layer)
    msg = await fetch(layer, f"{ref}?path={path}", asynchronous=asynchronous)
    assert msg.status == "error"
    assert expected in msg.content
    assert "Paths look like $.items[3].name" in msg.content
    marker = msg.response_metadata["result_layer"]
    assert marker["error"]


def test_a_record_beyond_the_read_cap_is_an_error_that_says_how_to_read_it(
    layer: ResultLayer,
) -> None:
    ref = stored_ref(layer)
    layer.fetch_tool.max_read_chars = 1_000_000  # type: ignore[attr-defined]
    msg = layer.fetch_tool.invoke(
        {
            "type": "tool_call",
            "id": "f",
            "name": "fetch_tool_result",
            "args": {"ref": ref + "?path=$.modules[3000]"},
        },
        CFG,
    )
    assert msg.status == "error"
    assert f"{len(TEXT):,} chars, more than a fetch reads at once (1,000,000 chars)" in msg.content
    assert "start_line=1" in msg.content


def test_a_path_of_a_capped_record_is_an_error(tmp_path: Path) -> None:
    store = SQLResultStore(
        f"sqlite:///{tmp_path / 'r.db'}", max_record_size=200_000, min_capped_size=1_000
    )
    layer = ResultLayer(context_window=128_000, max_result_tokens=1_200, store=store)
    ref = stored_ref(layer)
    msg = layer.fetch_tool.invoke(
        {
            "type": "tool_call",
            "id": "f",
            "name": "fetch_tool_result",
            "args": {"ref": ref + "?path=$.modules[3]"},
        },
        CFG,
    )
    assert msg.status == "error"
    assert "only its head and tail were saved" in msg.content


def test_a_large_value_is_outlined(layer: ResultLayer) -> None:
    ref = stored_ref(layer)
    msg = layer.fetch_tool.invoke(
        {
            "type": "tool_call",
            "id": "f",
            "name": "fetch_tool_result",
            "args": {"ref": ref + "?path=$.modules"},
        },
        CFG,
    )
    assert msg.status == "success"
    assert "$.modules[0]" in msg.content
    assert (
        layer.token_counter.count(msg.content)
        <= layer.pipeline.budget_for("fetch_tool_result").tokens
    )


def test_following_next_walks_the_items_of_the_largest_array(layer: ResultLayer) -> None:
    """From the first view's `next`, pages of elements continue after the first items shown."""
    doc = {"count": 60, "items": [{"id": i, "text": f"item {i} " * 30} for i in range(60)]}
    msg = layer.process_tool_message(
        ToolMessage(content=json.dumps(doc), tool_call_id="c1", name="list_items"), CFG
    )
    view = ResultView.from_artifact(msg.artifact)
    assert view is not None
    seen = [int(i["index"]) for i in view.items if i.get("type") == "json_item"]
    ref = view.references.get("next")
    assert ref is not None
    calls = 0
    while ref is not None:
        calls += 1
        assert calls <= 60
        page = layer.fetch_tool.invoke(
            {"type": "tool_call", "id": "f", "name": "fetch_tool_result", "args": {"ref": ref}},
            CFG,
        )
        assert page.status == "success", page.content
        page_view = ResultView.from_artifact(page.artifact)
        assert page_view is not None
        assert page_view.summary["array_path"] == "$.items"
        indexes = [int(i["index"]) for i in page_view.items if i["type"] == "json_element"]
        for index in indexes:
            assert f'[{index}] {{"id": {index}, ' in page.content
        seen.extend(indexes)
        ref = page_view.references.get("next")
    assert seen == list(range(60))
    assert calls < 60 // 2  # pages, not one call per element
