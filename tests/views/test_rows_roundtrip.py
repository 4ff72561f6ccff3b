"""Rows keep the original: the stored record is the tool's text, and following `next` from the
first view to the end shows every row exactly once, for every text layout."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from langchain_core.messages import ToolMessage

from langchain_result_layer import ResultLayer, ToolPolicy
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.render import IMITATION_NOTE, Fence, imitates_layer_markup
from langchain_result_layer.core.view import ResultView
from langchain_result_layer.stores import InMemoryResultStore
from tests.fenced import fence_nonce, first_page_values, unfence

CFG = {"configurable": {"tenant_id": "acme", "user_id": "ada", "thread_id": "t1"}}
Table = tuple[list[str], list[list[str]]]

# Cells: unicode (accents, CJK, emoji, combining marks), quotes, brackets and every delimiter.
_CHARS = st.characters(
    blacklist_categories=("Cs", "Cc"), blacklist_characters="\u2028\u2029\x85"
) | st.sampled_from(list(",;|\t\"' ()[]{}é中😀\u0301"))


def _cells(exclude: str) -> st.SearchStrategy[str]:
    return st.text(
        st.sampled_from(list(",;|\t\"' ()[]{}é中😀\u0301xyz019")) | _CHARS, max_size=14
    ).map(lambda s: "".join(c for c in s if c not in exclude).strip())


@st.composite
def tables(draw: st.DrawFn, exclude: str) -> Table:
    width = draw(st.integers(1, 4))
    columns = ["id"] + [f"c{i}" for i in range(1, width + 1)]
    n = draw(st.integers(40, 90))
    cells = _cells(exclude)
    rows = [[str(i + 1)] + [draw(cells) for _ in range(width)] for i in range(n)]
    return columns, rows


# A format renders a table as text, and gives the exact text of each row in it (`None` where
# a row's text is not simply its own: pretty-printed JSON).
Rendering = tuple[str, list[str] | None]


def _csv(table: Table) -> Rendering:
    def line(values: list[str]) -> str:
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\n").writerow(values)
        return buffer.getvalue()

    columns, rows = table
    texts = [line(r) for r in rows]
    return line(columns) + "".join(texts), texts


def _joined(delimiter: str) -> Callable[[Table], Rendering]:
    def render(table: Table) -> Rendering:
        columns, rows = table
        texts = [delimiter.join(r) + "\n" for r in rows]
        return delimiter.join(columns) + "\n" + "".join(texts), texts

    return render


def _markdown(table: Table) -> Rendering:
    columns, rows = table
    texts = ["| " + " | ".join(r) + " |\n" for r in rows]
    head = "| " + " | ".join(columns) + " |\n|" + "---|" * len(columns) + "\n"
    return head + "".join(texts), texts


def _psql(table: Table) -> Rendering:
    columns, rows = table
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(columns)]
    head = " " + " | ".join(c.center(w) for c, w in zip(columns, widths, strict=True))
    rule = "-" + "-+-".join("-" * w for w in widths) + "-"
    texts = [
        " " + " | ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) + "\n" for r in rows
    ]
    return f"{head}\n{rule}\n" + "".join(texts) + f"({len(rows)} rows)\n\n", texts


def _records(table: Table) -> list[dict[str, str]]:
    columns, rows = table
    return [dict(zip(columns, r, strict=True)) for r in rows]


def _json_array(table: Table) -> Rendering:
    texts = [json.dumps(r, ensure_ascii=False) for r in _records(table)]
    return "[" + ", ".join(texts) + "]", texts


def _json_indented(table: Table) -> Rendering:
    return json.dumps(_records(table), ensure_ascii=False, indent=2), None


def _jsonl(table: Table) -> Rendering:
    texts = [json.dumps(r, ensure_ascii=False) + "\n" for r in _records(table)]
    return "".join(texts), texts


def _sql_tool(table: Table) -> Rendering:
    texts = [json.dumps(r) for r in _records(table)]
    return "[\n" + ",\n".join(texts) + "\n]", texts


FORMATS: dict[str, tuple[Callable[[Table], Rendering], str]] = {
    # name: (render, characters a cell cannot hold in that format)
    "csv": (_csv, ""),
    "tsv": (_joined("\t"), "\t\n\r"),
    "pipe": (_joined("|"), "|\n\r"),
    "semicolon": (_joined(";"), ";\n\r"),
    "markdown": (_markdown, "|\n\r"),
    "psql": (_psql, "|\n\r"),
    "json": (_json_array, ""),
    "json_indent": (_json_indented, ""),
    "sql_tool": (_sql_tool, ""),
    "jsonl": (_jsonl, ""),
}
LINE_FORMATS = {"csv", "tsv", "pipe", "semicolon", "markdown", "psql", "jsonl"}


@st.composite
def outputs(draw: st.DrawFn) -> tuple[str, Rendering, Table]:
    name = draw(st.sampled_from(sorted(FORMATS)))
    render, exclude = FORMATS[name]
    table = draw(tables(exclude))
    return name, render(table), table


def _layer(tokens: int) -> ResultLayer:
    return ResultLayer(
        context_window=32_000,
        max_result_tokens=tokens,
        store=InMemoryResultStore(),
        tool_policies={
            "rows_tool": ToolPolicy(kind="rows", view_options={"max_value_chars": 100_000})
        },
    )


Seen = list[tuple[int, dict[str, Any] | None]]


def follow_pages(
    layer: ResultLayer, message: ToolMessage, text: str, row_texts: list[str] | None, name: str
) -> Seen:
    """Every row the model sees by following `next` from the first view to the end.

    A row too large for the budget is not shown as a row: its `raw` reference gives its
    exact text (checked here) and `next` goes on after it; such rows are `(n, None)`.
    """
    view = ResultView.from_artifact(message.artifact)
    assert view is not None
    seen: Seen = first_page_values(layer, view, CFG)
    ref = view.references.get("next")
    calls = 0
    while ref is not None:
        calls += 1
        assert calls <= 400, "following next must end"
        call = {
            "type": "tool_call",
            "id": f"f{calls}",
            "name": "fetch_tool_result",
            "args": {"ref": ref},
        }
        page = layer.fetch_tool.invoke(call, CFG)
        assert page.status == "success", page.content
        budget = layer.pipeline.budget_for("fetch_tool_result")
        assert layer.token_counter.count(page.content) <= budget.tokens
        page_view = ResultView.from_artifact(page.artifact)
        assert page_view is not None
        assert page_view.kind == "rows", page.content[:500]
        raw = (
            Reference.parse(page_view.references["raw"]) if "raw" in page_view.references else None
        )
        original = (
            text[raw.offset : raw.offset + raw.limit]
            if raw and raw.offset is not None and raw.limit
            else None
        )
        too_large = page_view.summary.get("row_too_large")
        if too_large:
            assert not page_view.items
            seen.append((too_large, None))
            if row_texts is not None:
                assert original == row_texts[too_large - 1]
        else:
            rows = [(item["row"], item["values"]) for item in page_view.items]
            assert rows, page.content
            seen += rows
            if row_texts is not None and name in LINE_FORMATS:
                first, last = rows[0][0], rows[-1][0]
                assert original == "".join(row_texts[first - 1 : last])
        ref = page_view.references.get("next")
    return seen


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(output=outputs(), tokens=st.sampled_from([300, 800, 2_000]))
def test_pages_rebuild_the_rows_and_the_record_is_the_original(
    output: tuple[str, Rendering, Table], tokens: int
) -> None:
    name, (text, row_texts), (columns, rows) = output
    event(name)
    layer = _layer(tokens)
    message = ToolMessage(content=text, tool_call_id="c1", name="rows_tool")
    out = layer.process_tool_message(message, CFG)
    marker = out.response_metadata["result_layer"]
    # The store keeps the original string, exactly.
    assert layer.store is not None
    record = layer.store.read(marker["record_id"], principal=layer.principal_for(CFG))
    assert record.data == text
    if marker["passed_through"]:
        event("passed through")
        if imitates_layer_markup(text):
            # A cell that imitates the layer's markup (hypothesis draws constants of the
            # source, such as RESULT_LAYER) is shown neutralised, every other byte as it was.
            event("imitation neutralised")
            fence = Fence(nonce=fence_nonce(out))
            assert out.content == fence.wrap(text)
            assert IMITATION_NOTE in out.content
        else:
            assert unfence(out.content) == text.removesuffix("\n")
        return
    view = ResultView.from_artifact(out.artifact)
    assert view is not None
    assert view.kind == "rows", (name, out.content[:600])
    assert view.total == len(rows)
    seen = follow_pages(layer, out, text, row_texts, name)
    # No gap, no repeat, in order; every value shown is exact.
    assert [n for n, _ in seen] == list(range(1, len(rows) + 1))
    expected = [dict(zip(columns, r, strict=True)) for r in rows]
    for (n, values), want in zip(seen, expected, strict=True):
        if values is None:
            event("a row larger than the budget")
            continue
        assert values == want, n


def test_a_small_table_with_a_markup_imitating_cell_is_shown_neutralised() -> None:
    """The case hypothesis found: a passed-through CSV whose last cell reads RESULT_LAYER."""
    text = "id,c1\n" + "".join(f"{i},\n" for i in range(1, 40)) + "40,RESULT_LAYER\n"
    layer = _layer(2_000)
    out = layer.process_tool_message(
        ToolMessage(content=text, tool_call_id="c1", name="rows_tool"), CFG
    )
    marker = out.response_metadata["result_layer"]
    assert marker["passed_through"]
    fence = Fence(nonce=fence_nonce(out))
    assert out.content == fence.wrap(text)
    assert f"[{fence.nonce}: {IMITATION_NOTE}] 40,RESULT_LAYER" in out.content
    assert layer.store is not None
    record = layer.store.read(marker["record_id"], principal=layer.principal_for(CFG))
    assert record.data == text


def test_a_page_reference_names_rows_not_lines() -> None:
    """Page 2 of a quoted CSV whose rows span lines is rows 6-10, not lines 6-10."""
    columns = ["id", "note"]
    rows = [[str(i), f"line one of {i}\nline two of {i}"] for i in range(1, 31)]
    text, _ = _csv((columns, rows))
    layer = _layer(400)
    out = layer.process_tool_message(
        ToolMessage(content=text, tool_call_id="c1", name="rows_tool"), CFG
    )
    ref = Reference.parse(out.response_metadata["result_layer"]["ref"])
    page = layer.fetch_tool.invoke(
        {
            "type": "tool_call",
            "id": "p",
            "name": "fetch_tool_result",
            "args": {"ref": str(ref.with_page(2, 5))},
        },
        CFG,
    )
    view = ResultView.from_artifact(page.artifact)
    assert view is not None
    assert [item["values"]["id"] for item in view.items] == ["6", "7", "8", "9", "10"]
    assert view.items[0]["values"]["note"] == "line one of 6\nline two of 6"
    # The exact original text of those rows is one reference away.
    raw = Reference.parse(view.references["raw"])
    assert raw.offset is not None
    assert raw.limit is not None
    assert text[raw.offset : raw.offset + raw.limit] == "".join(
        f'{i},"line one of {i}\nline two of {i}"\n' for i in range(6, 11)
    )
