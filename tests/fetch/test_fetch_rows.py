"""Fetching rows: the stored record is the original, pages are rows, `next` never skips or
repeats a row, and fetched pages look like the first view (fields, clipping, delimiter).

Real data: the corpus's `sqlite3` outputs, the Chinook database through the package's SQL
tool, and the standard-library definitions database of the demo.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage

from langchain_result_layer import ResultLayer, ToolPolicy
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.view import ResultView
from langchain_result_layer.demo.data import build_stdlib_database
from langchain_result_layer.stores import InMemoryResultStore, SQLResultStore
from langchain_result_layer.tools import create_sql_query_tool
from tests.fenced import first_page_values

CFG = {"configurable": {"tenant_id": "acme", "user_id": "ada", "thread_id": "t1"}}


def call(ref: str, n: int = 1, **args: Any) -> dict[str, Any]:
    return {
        "type": "tool_call",
        "id": f"f{n}",
        "name": "fetch_tool_result",
        "args": {"ref": ref, **args},
    }


def view_of(message: ToolMessage) -> ResultView:
    view = ResultView.from_artifact(message.artifact)
    assert view is not None
    return view


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "memory":
        return InMemoryResultStore()
    return SQLResultStore(f"sqlite:///{tmp_path / 'results.db'}")


def make_layer(store: Any, tokens: int = 1_500, **policies: ToolPolicy) -> ResultLayer:
    return ResultLayer(
        context_window=64_000, max_result_tokens=tokens, store=store, tool_policies=policies
    )


async def follow(
    layer: ResultLayer, first: ToolMessage, *, asynchronous: bool = False, limit: int = 2_000
) -> tuple[list[tuple[int, dict[str, Any]]], list[ToolMessage]]:
    """Rows seen by following `next` from the first view to the end, and the pages."""
    view = view_of(first)
    seen = first_page_values(layer, view, CFG)
    pages: list[ToolMessage] = []
    ref = view.references.get("next")
    budget = layer.pipeline.budget_for("fetch_tool_result")
    while ref is not None:
        assert len(pages) < limit, "following next must end"
        tool_call = call(ref, len(pages))
        page = (
            await layer.fetch_tool.ainvoke(tool_call, CFG)
            if asynchronous
            else layer.fetch_tool.invoke(tool_call, CFG)
        )
        assert page.status == "success", page.content
        assert layer.token_counter.count(page.content) <= budget.tokens
        pages.append(page)
        page_view = view_of(page)
        assert page_view.kind == "rows"
        seen += [(item["row"], item["values"]) for item in page_view.items]
        ref = page_view.references.get("next")
    return seen, pages


def assert_every_row_once(seen: list[tuple[int, dict[str, Any]]], total: int) -> None:
    assert [n for n, _ in seen] == list(range(1, total + 1))


# --------------------------------------------------------------------------- real data


@pytest.mark.parametrize(
    "name", ["albums_by_artist_led_zeppelin.txt", "invoicelines_invoice_300.txt"]
)
@pytest.mark.parametrize("asynchronous", [False, True])
async def test_sqlite3_output_pages_are_its_lines(
    corpus: Path, store: Any, name: str, asynchronous: bool
) -> None:
    text = (corpus / "sql" / "outputs" / name).read_text(encoding="utf-8")
    layer = make_layer(store, tokens=1_000)
    msg = layer.process_tool_message(ToolMessage(content=text, tool_call_id="c", name="sql"), CFG)
    marker = msg.response_metadata["result_layer"]
    assert marker["kind"] == "rows"
    # The record is the tool's text, byte for byte (not a re-encoding of its rows).
    rid = marker["record_id"]
    assert layer.store is not None
    assert layer.store.read(rid, principal=layer.principal_for(CFG)).data == text
    lines = text.splitlines()
    seen, pages = await follow(layer, msg, asynchronous=asynchronous)
    assert_every_row_once(seen, len(lines) - 1)
    assert ["|".join(values.values()) for _, values in seen] == lines[1:]
    assert len(pages) >= 2
    for page in pages:  # fetched pages keep the output's own delimiter
        assert "fields separated by '|' as in the output" in page.content
        view = view_of(page)
        first, last = view.summary["rows_shown"]
        body = "\n".join(lines[first : last + 1])  # row n is line n + 1 (the header)
        assert body in page.content


def test_rows_of_the_chinook_database_through_the_sql_tool(corpus: Path, store: Any) -> None:
    database = corpus / "sql" / "Chinook_Sqlite.sqlite"
    tool = create_sql_query_tool(f"sqlite:///{database}", name="run_sql")
    query = (
        "SELECT t.TrackId, t.Name, a.Title AS Album, t.Composer, t.Milliseconds, t.UnitPrice "
        "FROM Track t JOIN Album a USING (AlbumId) ORDER BY t.TrackId"
    )
    raw = tool.invoke({"type": "tool_call", "id": "q", "name": "run_sql", "args": {"query": query}})
    policy = ToolPolicy(
        view_options={"fields": ["TrackId", "Name", "UnitPrice"], "max_value_chars": 12}
    )
    layer = make_layer(store, tokens=2_000, run_sql=policy)
    msg = layer.process_tool_message(raw, CFG)
    view = view_of(msg)
    assert view.kind == "rows"
    assert view.summary["stored_as"] == "text"
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as con:
        expected = con.execute(query).fetchall()
    seen, pages = asyncio_run(follow(layer, msg))
    assert_every_row_once(seen, len(expected))
    # Every fetched page shows the tool's fields only, clipped as on the first page.
    for page in pages:
        page_view = view_of(page)
        assert page_view.summary["fields_shown"] == ["TrackId", "Name", "UnitPrice"]
        assert page_view.summary["fields_hidden"] == ["Album", "Composer", "Milliseconds"]
        assert page_view.summary["value_clip_chars"] == 12
        assert "Composer" not in page.content
    for (_, values), row in zip(seen, expected, strict=True):
        assert values["TrackId"] == row[0]
        assert values["UnitPrice"] == row[5]
        name = row[1]
        assert values["Name"] == (name if len(name) <= 12 else name[:11] + "…")


def asyncio_run(coro: Any) -> Any:
    import asyncio

    return asyncio.run(coro)


def test_the_standard_library_definitions(tmp_path: Path) -> None:
    database = build_stdlib_database(tmp_path / "stdlib.db")
    tool = create_sql_query_tool(f"sqlite:///{database}", name="defs", max_rows=50_000)
    query = "SELECT module, kind, qualname, lineno FROM definitions ORDER BY module, lineno, id"
    raw = tool.invoke({"type": "tool_call", "id": "q", "name": "defs", "args": {"query": query}})
    # Large pages keep the number of fetches down; rows are exact all the same.
    layer = make_layer(InMemoryResultStore(), tokens=30_000)
    msg = layer.process_tool_message(raw, CFG)
    assert layer.store is not None
    stored = layer.store.read(
        msg.response_metadata["result_layer"]["record_id"], principal=layer.principal_for(CFG)
    )
    assert stored.data == raw.content
    with sqlite3.connect(database) as con:
        con.row_factory = sqlite3.Row
        expected = [dict(r) for r in con.execute(query)]
    assert len(expected) > 10_000
    seen, _ = asyncio_run(follow(layer, msg))
    assert_every_row_once(seen, len(expected))
    assert [values for _, values in seen] == expected


# --------------------------------------------------------------------------- field options


def test_fetched_pages_apply_the_tools_field_whitelist_and_clipping(store: Any) -> None:
    rows = [{"id": i, "secret": f"s{i}", "body": "x" * 500} for i in range(400)]
    policy = ToolPolicy(kind="rows", view_options={"fields": ["id", "body"], "max_value_chars": 40})
    layer = make_layer(store, tokens=1_200, list_rows=policy)
    msg = layer.process_tool_message(
        ToolMessage(content=json.dumps(rows), tool_call_id="c", name="list_rows"), CFG
    )
    first = view_of(msg)
    assert first.summary["fields_shown"] == ["id", "body"]
    page = layer.fetch_tool.invoke(call(first.references["next"]), CFG)
    view = view_of(page)
    assert view.summary["fields_shown"] == ["id", "body"]
    assert view.summary["fields_hidden"] == ["secret"]
    assert "secret" not in page.content
    assert '"s' not in page.content
    assert "x" * 39 + "…" in page.content
    assert "x" * 41 not in page.content
    # The exact text of the rows shown, all fields, unclipped, is one reference away.
    assert "These rows as the original text" in page.content
    raw = layer.fetch_tool.invoke(call(view.references["raw"], 2), CFG)
    assert '"secret": "s' in raw.content


def test_fetched_pages_of_delimited_text_use_its_delimiter(store: Any) -> None:
    header = "id\tstatus\tnote\n"
    text = header + "".join(f"{i}\t{'ok' if i % 7 else 'failed'}\tnote {i}\n" for i in range(900))
    layer = make_layer(store, tokens=800)
    msg = layer.process_tool_message(ToolMessage(content=text, tool_call_id="c", name="t"), CFG)
    assert "fields separated by '\\t' as in the output" in msg.content
    page = layer.fetch_tool.invoke(call(view_of(msg).references["next"]), CFG)
    assert "fields separated by '\\t' as in the output" in page.content
    first, _ = view_of(page).summary["rows_shown"]
    assert f"\n{first - 1}\t" in page.content  # row n holds id n - 1
    assert f'["{first - 1}", ' not in page.content  # rows are not JSON arrays


# --------------------------------------------------------------------------- ranges


def _quoted_csv(n: int) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["id", "comment"])
    for i in range(1, n + 1):
        writer.writerow([i, f"first line {i}\nsecond, line {i}" if i % 3 == 0 else f"plain {i}"])
    return buffer.getvalue()


def test_rows_that_span_lines_are_never_cut(store: Any) -> None:
    text = _quoted_csv(600)
    layer = make_layer(store, tokens=700)
    msg = layer.process_tool_message(ToolMessage(content=text, tool_call_id="c", name="t"), CFG)
    seen, _ = asyncio_run(follow(layer, msg))
    assert_every_row_once(seen, 600)
    assert seen[2][1] == {"id": "3", "comment": "first line 3\nsecond, line 3"}
    ref = Reference.parse(msg.response_metadata["result_layer"]["ref"])
    # A line range shows the rows that start on those lines: row 3 is lines 4-5.
    page = layer.fetch_tool.invoke(call(str(ref.with_lines(4, 6))), CFG)
    assert [item["row"] for item in view_of(page).items] == [3, 4]
    page = layer.fetch_tool.invoke(call(str(ref.with_lines(5, 7))), CFG)
    assert [item["row"] for item in view_of(page).items] == [4, 5]
    # A page past the end says so, and is not an error.
    past = layer.fetch_tool.invoke(call(str(ref.with_page(99, 100))), CFG)
    assert past.status == "success"
    assert "the result has only 600 rows" in past.content
    # A character range is the original text, exactly.
    chars = layer.fetch_tool.invoke(call(str(ref.with_chars(0, 40))), CFG)
    assert text[:40].split("\n")[0] in chars.content


def test_objects_are_stored_as_json_lines_and_page_the_same(store: Any) -> None:
    rows = [{"id": i, "status": ["ok", "failed"][i % 2], "n": i * 1.5} for i in range(3_000)]
    layer = make_layer(store, tokens=900)
    outcome = layer.pipeline.process(rows, tool_name="list", principal=layer.principal_for(CFG))
    assert outcome is not None
    assert outcome.record is not None
    stored = layer.store.read(outcome.record.record_id, principal=layer.principal_for(CFG))
    assert stored.data == "".join(json.dumps(r) + "\n" for r in rows)
    first = ToolMessage(content=outcome.content, artifact=outcome.view, tool_call_id="c")
    seen, _ = asyncio_run(follow(layer, first))
    assert [values for _, values in seen] == rows


def test_a_row_larger_than_the_budget_is_skipped_with_its_text(store: Any) -> None:
    lines = [f"{i}|{'huge ' * 3_000 if i == 40 else f'row {i}'}" for i in range(1, 121)]
    text = "id|value\n" + "\n".join(lines) + "\n"
    unclipped = ToolPolicy(view_options={"max_value_chars": 100_000})
    layer = make_layer(store, tokens=600, t=unclipped)
    msg = layer.process_tool_message(ToolMessage(content=text, tool_call_id="c", name="t"), CFG)
    seen, pages = asyncio_run(follow(layer, msg))
    assert [n for n, _ in seen] == [n for n in range(1, 121) if n != 40]
    skipped = [p for p in pages if view_of(p).summary.get("row_too_large") == 40]
    assert len(skipped) == 1
    assert "row 40, which alone does not fit this budget" in skipped[0].content
    raw = Reference.parse(view_of(skipped[0]).references["raw"])
    assert raw.offset is not None
    assert raw.limit is not None
    assert text[raw.offset : raw.offset + raw.limit] == lines[39] + "\n"


def test_rows_that_need_a_whole_parse_beyond_the_read_cap_say_how_to_read_them(
    store: Any,
) -> None:
    text = _quoted_csv(3_000)
    layer = make_layer(store, tokens=700)
    msg = layer.process_tool_message(ToolMessage(content=text, tool_call_id="c", name="t"), CFG)
    tool = layer.fetch_tool
    tool.max_read_chars = 10_000  # type: ignore[attr-defined]
    page = tool.invoke(call(view_of(msg).references["next"]), CFG)
    assert page.status == "error"
    assert "more than a fetch reads at once (10,000 chars)" in page.content
    assert "offset=0" in page.content
    # Pipe-separated rows are one per line: a page is a line range, no whole parse needed.
    pipe = "id|v\n" + "".join(f"{i}|v{i}\n" for i in range(3_000))
    msg = layer.process_tool_message(ToolMessage(content=pipe, tool_call_id="d", name="t"), CFG)
    page = tool.invoke(call(view_of(msg).references["next"], 2), CFG)
    assert page.status == "success"


def test_capped_records_are_read_as_text(tmp_path: Path) -> None:
    store = SQLResultStore(
        f"sqlite:///{tmp_path / 'r.db'}", max_record_size=20_000, min_capped_size=1_000
    )
    layer = make_layer(store, tokens=800)
    text = "id|value\n" + "".join(f"{i}|value {i}\n" for i in range(5_000))
    msg = layer.process_tool_message(ToolMessage(content=text, tool_call_id="c", name="t"), CFG)
    ref = Reference.parse(msg.response_metadata["result_layer"]["ref"])
    page = layer.fetch_tool.invoke(call(str(ref.with_page(30, 100))), CFG)
    assert page.status == "success"
    assert "exceeded the store's size cap" in page.content
