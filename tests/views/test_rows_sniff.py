"""Which texts are rows: positive and negative sniff cases from real data.

Negatives: prose split at its punctuation, indented text, code (dict and list literals,
tokenizer dumps), logs (log4j millisecond commas, ANSI colour codes with semicolons), docs.
Positives: `sqlite3 -header` output, loghub's structured CSVs (quoted fields), and the Chinook
database rendered as CSV, TSV, semicolon CSV, markdown, psql, JSON arrays and JSON lines.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import sysconfig
from collections.abc import Callable
from pathlib import Path

import pytest

from langchain_result_layer.views import choose_view
from langchain_result_layer.views._tabular import SNIFF_PREFIX_CHARS, detect_layout, text_rows
from langchain_result_layer.views.rows import RowsView

VIEW = RowsView()
STDLIB = Path(sysconfig.get_paths()["stdlib"])


def _is_rows(text: str) -> bool:
    return VIEW.sniff(text) > 0.5


def _after(path: Path, marker: str, lines: int = 40) -> str:
    """`lines` lines of a file, from the first line that contains `marker`."""
    all_lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    start = next(i for i, line in enumerate(all_lines) if marker in line)
    return "\n".join(all_lines[start : start + lines]) + "\n"


def _window(path: Path, start: int, lines: int = 40) -> str:
    all_lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    return "\n".join(all_lines[start : start + lines]) + "\n"


# --------------------------------------------------------------------------- negatives

PROSE = {
    "semicolons": "Section 1: the design keeps component 1 behind interface I1; decision 1 "
    "favours latency over cost.\n" * 4000,
    "indented": "\t  indented\n" * 50,
    "commas": "We measured it, as planned, and it held.\n" * 300,
    "log4j millis": "".join(
        f"2015-07-29 17:41:{i % 60:02d},{i % 1000:03d} - INFO  [main:Quorum@{i}] - started\n"
        for i in range(300)
    ),
}


@pytest.mark.parametrize("name", sorted(PROSE))
def test_prose_and_indented_text_are_not_rows(name: str) -> None:
    text = PROSE[name]
    assert not _is_rows(text)
    assert choose_view(text).kind != "rows"


STDLIB_WINDOWS: dict[str, tuple[str, str]] = {
    # name: (file, a line the window starts at)
    "codec table (dict literal)": ("encodings/cp775.py", "decoding_map.update({"),
    "locale aliases (dict literal)": ("locale.py", "locale_alias = {"),
    "html entities (dict literal)": ("html/entities.py", "name2codepoint = {"),
    "encoding aliases (dict literal)": ("encodings/aliases.py", "aliases = {"),
    "stringprep tables (code literal)": ("stringprep.py", "b3_exceptions = {"),
    "tokenizer dump (doctest)": ("test/test_tokenize.py", "NUMBER     '1'"),
}


@pytest.mark.parametrize("name", sorted(STDLIB_WINDOWS))
def test_code_from_the_standard_library_is_not_rows(name: str) -> None:
    relative, marker = STDLIB_WINDOWS[name]
    path = STDLIB / relative
    if not path.is_file():
        pytest.skip(f"{relative} is not in this Python's standard library")
    text = _after(path, marker)
    assert not _is_rows(text), text[:300]


def test_whole_standard_library_files_are_not_rows() -> None:
    files = ["csv.py", "locale.py", "tokenize.py", "encodings/cp775.py", "LICENSE.txt"]
    for relative in files:
        path = STDLIB / relative
        if path.is_file():
            assert not _is_rows(path.read_text(encoding="utf-8")), relative


def test_project_docs_are_not_rows() -> None:
    root = Path(__file__).resolve().parents[2]
    docs = [root / "README.md", *sorted((root / "docs").rglob("*.md"))]
    checked = 0
    for path in docs:
        if path.is_file():
            checked += 1
            assert not _is_rows(path.read_text(encoding="utf-8")), path.name
    assert checked


CORPUS_NEGATIVES: dict[str, tuple[str, int]] = {
    # name: (path under the corpus, first line of a 40-line window)
    "ANSI colour codes (semicolons)": (
        "logchunks/logs/Objective-C/Realm@realm-cocoa/failed/527416812.log",
        1393,
    ),
    "maven build log": ("cidiff_breakages/astor_400/fail.log", 231),
    "zookeeper log (millisecond commas)": ("loghub/Zookeeper/Zookeeper_2k.log", 0),
}


@pytest.mark.parametrize("name", sorted(CORPUS_NEGATIVES))
def test_logs_are_not_rows(corpus: Path, name: str) -> None:
    relative, start = CORPUS_NEGATIVES[name]
    text = _window(corpus / relative, start)
    assert not _is_rows(text), text[:300]


def test_no_corpus_log_is_rows_except_pipe_separated_logs(corpus: Path) -> None:
    found = []
    for path in sorted(corpus.rglob("*")):
        is_log = path.suffix in {".log", ".txt"} and "sql" not in path.parts
        if path.is_file() and is_log and path.stat().st_size < 5_000_000:
            text = path.read_text(encoding="utf-8", errors="replace")
            if _is_rows(text):
                found.append(path.relative_to(corpus).as_posix())
    # HealthApp logs are `time|component|pid|message` lines: a table, and the log view
    # (more confident) takes them.
    assert found == ["loghub/HealthApp/HealthApp_2k.log"]
    health = (corpus / found[0]).read_text(encoding="utf-8")
    assert choose_view(health).kind == "log"


# --------------------------------------------------------------------------- positives


@pytest.mark.parametrize(
    ("name", "rows", "columns"),
    [("albums_by_artist_led_zeppelin.txt", 347, 3), ("invoicelines_invoice_300.txt", 2_240, 5)],
)
def test_sqlite3_outputs_are_rows(corpus: Path, name: str, rows: int, columns: int) -> None:
    text = (corpus / "sql" / "outputs" / name).read_text(encoding="utf-8")
    assert _is_rows(text)
    assert choose_view(text).kind == "rows"
    parsed = text_rows(text)
    assert parsed is not None
    assert (len(parsed.table.rows), len(parsed.table.columns)) == (rows, columns)


def test_loghub_structured_csvs_are_rows(corpus: Path) -> None:
    paths = sorted(corpus.glob("loghub*/*/*_structured*.csv"))
    assert paths
    for path in paths:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert _is_rows(text), path.name
        parsed = text_rows(text)
        assert parsed is not None, path.name
        assert len(parsed.table.rows) == 2_000, path.name
        assert parsed.table.columns[0] == "LineId"
        assert [r["LineId"] for r in parsed.table.rows] == [str(i) for i in range(1, 2_001)]


def _chinook_tracks(corpus: Path) -> tuple[list[str], list[list[str]]]:
    with sqlite3.connect(corpus / "sql" / "Chinook_Sqlite.sqlite") as con:
        cur = con.execute("SELECT TrackId, Name, Composer, Milliseconds, UnitPrice FROM Track")
        columns = [d[0] for d in cur.description]
        rows = [["" if v is None else str(v) for v in r] for r in cur.fetchall()]
    return columns, rows


def _delimited(delimiter: str) -> Callable[[list[str], list[list[str]]], str]:
    def render(columns: list[str], rows: list[list[str]]) -> str:
        buffer = io.StringIO()
        writer = csv.writer(buffer, delimiter=delimiter, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(rows)
        return buffer.getvalue()

    return render


def _markdown(columns: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(v.replace("|", "\\|") for v in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def _psql(columns: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(columns)]
    head = " " + " | ".join(c.center(w) for c, w in zip(columns, widths, strict=True))
    rule = "-" + "-+-".join("-" * w for w in widths) + "-"
    body = [" " + " | ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join([head, rule, *body, f"({len(rows)} rows)", ""]) + "\n"


def _json_dumps(columns: list[str], rows: list[list[str]]) -> str:
    return json.dumps([dict(zip(columns, r, strict=True)) for r in rows], ensure_ascii=False)


def _jsonl(columns: list[str], rows: list[list[str]]) -> str:
    return "".join(json.dumps(dict(zip(columns, r, strict=True))) + "\n" for r in rows)


RENDERINGS: dict[str, tuple[Callable[[list[str], list[list[str]]], str], str, str | None]] = {
    # name: (render, layout format, delimiter)
    "csv": (_delimited(","), "delimited", ","),
    "tsv": (_delimited("\t"), "delimited", "\t"),
    "semicolon csv": (_delimited(";"), "delimited", ";"),
    "markdown": (_markdown, "delimited", "|"),
    "psql": (_psql, "delimited", "|"),
    "json array": (_json_dumps, "json_array", None),
    "json lines": (_jsonl, "jsonl", None),
}


@pytest.mark.parametrize("name", sorted(RENDERINGS))
def test_chinook_tracks_in_every_format_are_rows(corpus: Path, name: str) -> None:
    columns, rows = _chinook_tracks(corpus)
    if name in {"tsv", "semicolon csv", "markdown", "psql"}:
        # Unquoted formats: a value holding the delimiter would not be a table.
        delimiter = RENDERINGS[name][2]
        rows = [r for r in rows if not any(delimiter in v for v in r)]
    render, layout_format, delimiter = RENDERINGS[name]
    text = render(columns, rows)
    assert _is_rows(text)
    assert choose_view(text).kind == "rows"
    layout = detect_layout(text[:SNIFF_PREFIX_CHARS], whole=len(text) <= SNIFF_PREFIX_CHARS)
    assert layout is not None
    assert (layout.format, layout.delimiter) == (layout_format, delimiter)
    parsed = text_rows(text)
    assert parsed is not None
    assert len(parsed.table.rows) == len(rows)
    assert parsed.table.columns == columns
    first = parsed.table.rows[0]
    assert [first[c] for c in columns] == rows[0]


def test_cases_file_is_json_lines(corpus: Path) -> None:
    text = (corpus / "cases.jsonl").read_text(encoding="utf-8")
    assert _is_rows(text)
    parsed = text_rows(text)
    assert parsed is not None
    assert len(parsed.table.rows) == len(text.splitlines())
    assert "needles" in parsed.table.columns


@pytest.mark.parametrize("name", sorted(n for n, r in RENDERINGS.items() if r[1] == "delimited"))
def test_a_table_followed_by_a_real_traceback_is_not_rows(corpus: Path, name: str) -> None:
    # A program that prints a table, then fails: the rows view would page the table and hide
    # the traceback under it, so the text is not rows, and the view chosen keeps the error.
    from langchain_core.messages import ToolMessage

    from langchain_result_layer import ResultLayer

    columns, rows = _chinook_tracks(corpus)
    delimiter = RENDERINGS[name][2] or ","
    rows = [r for r in rows if not any(delimiter in v or "|" in v for v in r)]
    table = RENDERINGS[name][0](columns, rows)
    traceback = (
        corpus / "tool_outputs" / "tracebacks" / "sympy__sympy-17139__step02.txt"
    ).read_text(encoding="utf-8")
    last = traceback.strip().splitlines()[-1]
    assert _is_rows(table)
    assert not _is_rows(table + traceback)
    layer = ResultLayer(context_window=8_000)
    shown = layer.process_tool_message(
        ToolMessage(content=table + traceback, tool_call_id="call_1", name="shell")
    )
    assert last in str(shown.content)


@pytest.mark.parametrize(
    "footer", ["(3,503 rows)", "3503 rows in set (0.02 sec)", "", "+-----+------+"]
)
def test_a_table_ends_as_one_under_its_footer(footer: str) -> None:
    table = "id|name|price\n" + "".join(f"{i}|track {i}|0.99\n" for i in range(3_503))
    assert _is_rows(table + footer + "\n")
    assert not _is_rows(table + "Error: database is locked\n" + footer + "\n")


def test_escape_stamped_lines_are_not_rows() -> None:
    """Buildkite writes `\x1b_bk;t=<ms>\x07` before each line: its `;` splits no cells."""
    log = "".join(
        f"\x1b_bk;t={1_796_676_992_954 + i}\x07INFO row {i} loaded in {i % 7} ms\n"
        for i in range(300)
    )
    log += "\x1b_bk;t=1796676993300\x07KeyError: 'customer_id'\n"
    assert detect_layout(log[:SNIFF_PREFIX_CHARS], whole=True) is None
    assert choose_view(log).kind != "rows"
