"""Tabular text wins over the log heuristics; a log's time range never prints backwards.

Real data: the Chinook database exported as CSV, TSV and markdown, and loghub's structured
CSVs (tables of log records, with level and time columns); generated tables with level-like
and status columns; the loghub system logs stay logs.
"""

from __future__ import annotations

import csv
import io
import json
import random
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langchain_result_layer.views import choose_view
from langchain_result_layer.views._tabular import _is_separator
from langchain_result_layer.views.logs import LogView
from langchain_result_layer.views.rows import RowsView
from tests.views.conftest import assert_fits, make_ctx


def _status_csv(rows: int, *, header: bool = True, sep: str = ",") -> str:
    rng = random.Random(7)
    out = (
        [sep.join(["id", "created_at", "user", "status", "level", "duration_ms"])] if header else []
    )
    for i in range(rows):
        status = "failed" if rng.random() < 0.2 else "ok"
        level = rng.choice(["INFO", "WARN", "ERROR"])
        stamp = (
            f"2024-{1 + i % 12:02d}-{1 + i % 28:02d} {i % 24:02d}:{i % 60:02d}:{(i * 7) % 60:02d}"
        )
        out.append(
            sep.join([str(i), stamp, f"user{i % 97}", status, level, str(rng.randint(1, 9999))])
        )
    return "\n".join(out) + "\n"


def test_a_50k_row_csv_with_a_failed_column_is_rows_not_a_log() -> None:
    text = _status_csv(50_000)
    assert choose_view(text).kind == "rows"
    view = RowsView()
    ctx = make_ctx("rows", tokens=2_000)
    out = view.render(view.prepare(text), ctx)
    assert_fits(out.content, ctx)
    assert out.view.summary["rows"] == 50_000
    assert out.view.summary["columns"] == [
        "id",
        "created_at",
        "user",
        "status",
        "level",
        "duration_ms",
    ]
    assert "error line" not in str(out.content)


@pytest.mark.parametrize("sep", [",", "\t", "|", ";"])
def test_generated_tables_with_level_and_time_columns_are_rows(sep: str) -> None:
    assert choose_view(_status_csv(3_000, sep=sep)).kind == "rows"


def test_markdown_and_psql_tables_with_levels_are_rows() -> None:
    body = [f"| {i} | 2024-01-02 10:00:{i % 60:02d} | ERROR | job {i} failed |" for i in range(300)]
    markdown = "| id | time | level | message |\n|---|---|---|---|\n" + "\n".join(body) + "\n"
    assert choose_view(markdown).kind == "rows"
    psql = " id |        time         | level \n----+---------------------+-------\n" + "\n".join(
        f" {i:>2} | 2024-01-02 10:00:{i % 60:02d} | ERROR" for i in range(300)
    )
    assert choose_view(psql + "\n(300 rows)\n").kind == "rows"


def test_headerless_delimited_text_led_by_timestamps_stays_a_log() -> None:
    lines = [
        f"2024-01-02 10:{i // 60 % 60:02d}:{i % 60:02d}|worker|{1000 + i}|job {i} done"
        for i in range(500)
    ]
    assert choose_view("\n".join(lines) + "\n").kind == "log"
    # Without a header but with an id first and the date in a column: a table.
    assert choose_view(_status_csv(2_000, header=False)).kind == "rows"


def _chinook(corpus: Path, query: str) -> tuple[list[str], list[list[str]]]:
    with sqlite3.connect(corpus / "sql" / "Chinook_Sqlite.sqlite") as con:
        cur = con.execute(query)
        names = [d[0] for d in cur.description]
        return names, [["" if v is None else str(v) for v in row] for row in cur.fetchall()]


@pytest.mark.parametrize(
    "query",
    [
        "SELECT InvoiceId, CustomerId, InvoiceDate, BillingCity, Total FROM Invoice",
        "SELECT TrackId, Name, Milliseconds, UnitPrice FROM Track",
        "SELECT EmployeeId, LastName, Title, BirthDate, HireDate FROM Employee",
    ],
)
def test_chinook_exports_are_rows(corpus: Path, query: str) -> None:
    names, rows = _chinook(corpus, query)
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([names, *rows])
    exports = {
        "csv": out.getvalue(),
        "tsv": "\n".join("\t".join(r) for r in [names, *rows]) + "\n",
        "markdown": "| "
        + " | ".join(names)
        + " |\n|"
        + "---|" * len(names)
        + "\n"
        + "\n".join("| " + " | ".join(c.replace("|", "/") for c in r) + " |" for r in rows)
        + "\n",
    }
    for name, text in exports.items():
        assert choose_view(text).kind == "rows", name


def test_loghub_structured_csvs_are_rows_and_their_logs_are_logs(corpus: Path) -> None:
    cases = [json.loads(line) for line in (corpus / "cases.jsonl").read_text().splitlines()]
    seen = 0
    for case in cases:
        if case.get("kind") != "system_log":
            continue
        log = (corpus / case["path"]).read_text(encoding="utf-8", errors="replace")
        assert choose_view(log).kind == "log", case["id"]
        table = corpus / case["templates_csv"]
        if table.is_file():
            assert choose_view(table.read_text(encoding="utf-8")).kind == "rows", case["id"]
            seen += 1
    if not seen:
        pytest.skip("no system logs in the corpus")


def test_time_range_is_never_printed_backwards() -> None:
    lines = [f"2024-01-02 10:00:{59 - i % 60:02d} INFO worker {i} ok" for i in range(200)]
    lines[-1] = "2024-01-02 09:00:00 ERROR worker failed"
    view = LogView()
    ctx = make_ctx("log", tokens=1_500)
    out = view.render(view.prepare("\n".join(lines) + "\n"), ctx)
    assert_fits(out.content, ctx)
    time = out.view.summary["time"]
    assert time["in_order"] is False
    assert time["range"] == "2024-01-02 09:00:00 to 2024-01-02 10:00:59 (lines not in time order)"
    assert time["range"] in str(out.content)
    assert "2024-01-02 10:00:59 to 2024-01-02 09:00:00" not in str(out.content)


def test_in_order_logs_print_first_to_last() -> None:
    lines = [f"2024-01-02 10:{i // 60:02d}:{i % 60:02d} INFO worker {i} ok" for i in range(200)]
    out = LogView().render(LogView().prepare("\n".join(lines) + "\n"), make_ctx("log"))
    assert out.view.summary["time"]["range"] == "2024-01-02 10:00:00 to 2024-01-02 10:03:19"


def test_rule_lines_are_recognised_in_linear_time() -> None:
    assert _is_separator("|---|:--:|---:|")
    assert _is_separator("----+--------+---")
    assert not _is_separator("--- " + " " * 60_000 + "x")
    assert not _is_separator("+---+")
    text = (
        "a|b|c\n---" + " " * 60_000 + "x\n" + "".join(f"{i}|{2 * i}|v{i}\n" for i in range(60_000))
    )
    assert choose_view(text).kind == "rows"
    prepared = RowsView().prepare(text)
    assert prepared.facts["rows"] == 60_001


_CELLS = st.one_of(
    st.sampled_from(["INFO", "ERROR", "failed", "ok", "WARN", "2024-01-02 10:00:00", "Jun 14"]),
    st.integers(-(10**6), 10**6).map(str),
    st.text(alphabet="abcdefgh xyz", min_size=1, max_size=8).map(str.strip).filter(bool),
)


@given(
    st.integers(2, 6).flatmap(
        lambda width: st.tuples(
            st.lists(
                st.text(alphabet="abcdefghij_", min_size=1, max_size=8),
                min_size=width,
                max_size=width,
                unique=True,
            ),
            st.lists(st.lists(_CELLS, min_size=width, max_size=width), min_size=5, max_size=40),
        )
    ),
    st.sampled_from([",", "\t", "|"]),
)
def test_tables_with_a_header_row_are_rows_whatever_their_cells(
    table: tuple[list[str], list[list[str]]], sep: str
) -> None:
    header, rows = table
    text = "\n".join(sep.join(r) for r in [header, *rows]) + "\n"
    assert LogView().sniff(text) <= RowsView().sniff(text) or RowsView().sniff(text) == 0.0
    if RowsView().sniff(text) > 0.5:
        assert choose_view(text).kind == "rows"
