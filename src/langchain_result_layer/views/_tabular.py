"""Tabular data: recognising rows in any shape, finding them in text, summarising columns.

Shapes accepted as rows:

- a list/tuple of mappings (`list[dict]`, SQLAlchemy `RowMapping`s), of SQLAlchemy `Row`s,
  or of tuples/lists (positional columns);
- a SQLAlchemy `Result` (consumed once);
- an object with `to_dict(orient="records")` and `columns` (a pandas `DataFrame`);
- CSV/TSV/pipe/semicolon-separated text with a consistent number of fields per line (the
  output of `sqlite3 -header`, `psql`, `psql -A`, markdown tables, spreadsheets);
- JSON text of an array of objects, and JSON lines (one object per line).

Rows are kept as `dict`s in column order. Text is stored as it was given; `detect_layout`
and `parse_text_rows` find its rows again, with where each row starts and ends, so a page of
rows can be read from the original. Objects are stored as JSON lines (`to_jsonl`).
"""

from __future__ import annotations

import bisect
import csv
import io
import json
import math
import re
import sys
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from langchain_result_layer.core.jsonable import parse_would_exceed, to_jsonable

__all__ = [
    "DELIMITED",
    "JSONL",
    "JSON_ARRAY",
    "SNIFF_PREFIX_CHARS",
    "ColumnStats",
    "ParsedRows",
    "Table",
    "TextLayout",
    "column_stats",
    "detect_layout",
    "ends_as_table",
    "is_trailer_line",
    "line_rows",
    "line_starts_of",
    "looks_like_rows",
    "materialize_rows",
    "parse_delimited",
    "parse_text_rows",
    "rows_from_jsonl",
    "sniff_delimiter",
    "split_line",
    "table_from_payload",
    "text_rows",
    "to_jsonl",
]

SNIFF_PREFIX_CHARS = 64_000
"""Text views sniff only this much of a large input."""

_DELIMITERS = (",", "\t", "|", ";")
_MIN_LINES = 3
_NUMERIC_RE = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$")
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?)?")
_TOP_CAP = 12
_TOP_COVER = 0.5


@dataclass(slots=True)
class Table:
    """Rows recognised in a tool output."""

    columns: list[str]
    """Column names, in first-seen order."""
    rows: list[dict[str, Any]]
    """One dict per row (values exactly as given, JSON-ready)."""
    source: str
    """Where the rows came from (`records`, `tuples`, `sqlalchemy`, `csv`, `json`, `dataframe`)."""
    delimiter: str | None = None
    """Field separator for delimited text."""


# --------------------------------------------------------------------------- recognising


def _sqlalchemy_result_type() -> type | None:
    """`sqlalchemy.engine.Result`, if SQLAlchemy is loaded.

    A Result cannot exist otherwise, so the views never import SQLAlchemy themselves.
    """
    module = sys.modules.get("sqlalchemy.engine")
    result = getattr(module, "Result", None) if module is not None else None
    return result if isinstance(result, type) else None


def _is_sqlalchemy_result(obj: object) -> bool:
    result_type = _sqlalchemy_result_type()
    return result_type is not None and isinstance(obj, result_type)


def _row_mapping(obj: object) -> Mapping[str, Any] | None:
    mapping = getattr(obj, "_mapping", None)
    if isinstance(mapping, Mapping):
        return mapping
    return None


def _is_dataframe(obj: object) -> bool:
    return (
        hasattr(obj, "to_dict")
        and hasattr(obj, "columns")
        and hasattr(obj, "iloc")
        and not isinstance(obj, (dict, list))
    )


def looks_like_rows(payload: object) -> bool:
    """Cheap check: is `payload` a row container (not text)?

    Args:
        payload: A tool output.

    Returns:
        `True` for sequences of mappings/rows/tuples, SQLAlchemy results and data frames.

    Example:
        ```python
        assert looks_like_rows([{"id": 1}, {"id": 2}])
        assert not looks_like_rows([{"type": "text", "text": "x"}])
        ```
    """
    if _is_sqlalchemy_result(payload) or _is_dataframe(payload):
        return True
    if not isinstance(payload, (list, tuple)) or not payload:
        return False
    probe = payload[:200]
    if all(_row_mapping(r) is not None for r in probe):
        return True
    if all(isinstance(r, Mapping) for r in probe):
        # A content-block list (every item has a string "type") is not rows.
        return not all(isinstance(r.get("type"), str) for r in probe)
    if all(isinstance(r, (list, tuple)) for r in probe):
        widths = {len(r) for r in probe}
        scalar = all(not isinstance(v, (list, tuple, dict)) for r in probe[:20] for v in r)
        return len(widths) == 1 and next(iter(widths)) >= 1 and scalar
    return False


def materialize_rows(payload: object) -> object:
    """Read a one-shot row source (a SQLAlchemy `Result`) into a list; anything else as is.

    A `Result` can be iterated once: whoever reads it first (measuring the output's size, say)
    leaves nothing for the rows view. Call this before anything reads the output.

    Args:
        payload: A tool output.

    Returns:
        A list of SQLAlchemy `Row`s for a `Result`, else `payload` itself.

    Example:
        ```python
        import sqlalchemy

        with sqlalchemy.create_engine("sqlite://").connect() as connection:
            rows = materialize_rows(connection.execute(sqlalchemy.text("SELECT 1 AS one")))
        assert isinstance(rows, list) and rows[0].one == 1  # readable after the connection
        assert materialize_rows("not a result") == "not a result"
        ```
    """
    if _is_sqlalchemy_result(payload):
        result: Any = payload
        return list(result.all())
    return payload


def _records_table(rows: Iterable[Mapping[str, Any]], source: str) -> Table:
    columns: dict[str, None] = {}
    out: list[dict[str, Any]] = []
    for row in rows:
        record = {str(k): to_jsonable(v) for k, v in row.items()}
        for key in record:
            if key not in columns:
                columns[key] = None
        out.append(record)
    return Table(columns=list(columns), rows=out, source=source)


def _json_records(rows: Sequence[Mapping[str, Any]], source: str) -> Table:
    """A table of parsed JSON objects (values are JSON already: kept as they are)."""
    columns: dict[str, None] = {}
    for row in rows:
        for key in row:
            if key not in columns:
                columns[key] = None
    return Table(
        columns=list(columns),
        rows=[r if isinstance(r, dict) else dict(r) for r in rows],
        source=source,
    )


def _tuples(rows: Iterable[Sequence[Any]], names: Sequence[str] | None, source: str) -> Table:
    out: list[dict[str, Any]] = []
    width = 0
    for row in rows:
        values = list(row)
        width = max(width, len(values))
        keys = names if names is not None and len(names) >= len(values) else None
        if keys is None:
            keys = [str(i) for i in range(len(values))]
        out.append({str(keys[i]): to_jsonable(v) for i, v in enumerate(values)})
    columns = list(names) if names is not None else [str(i) for i in range(width)]
    return Table(columns=[str(c) for c in columns], rows=out, source=source)


def table_from_payload(payload: object) -> Table | None:
    r"""Recognise rows in a tool output of any supported shape.

    Args:
        payload: The tool output.

    Returns:
        The table, or `None` when the payload is not rows.

    Example:
        ```python
        table = table_from_payload("id,status\n1,ok\n2,failed\n3,ok\n")
        assert table is not None and table.columns == ["id", "status"]
        ```
    """
    if isinstance(payload, str):
        return _table_from_text(payload)
    if isinstance(payload, (bytes, bytearray)):
        return None
    if _is_sqlalchemy_result(payload):
        result: Any = payload
        names = [str(k) for k in result.keys()]  # noqa: SIM118 - a Result, not a dict
        return _tuples(result.all(), names, "sqlalchemy")
    if _is_dataframe(payload):
        try:
            records = payload.to_dict(orient="records")  # type: ignore[attr-defined]
        except Exception:
            return None
        table = _records_table(records, "dataframe")
        table.columns = [str(c) for c in payload.columns]  # type: ignore[attr-defined]
        return table
    if not looks_like_rows(payload):
        return None
    assert isinstance(payload, (list, tuple))
    first = payload[0]
    if _row_mapping(first) is not None:
        fields = getattr(first, "_fields", None)
        if fields is not None and all(_row_mapping(r) is not None for r in payload):
            names = [str(f) for f in fields]
            return _tuples(payload, names, "sqlalchemy")
        return _records_table((_row_mapping(r) or {} for r in payload), "sqlalchemy")
    if isinstance(first, Mapping):
        return _records_table(payload, "records")
    return _tuples(payload, None, "tuples")


# --------------------------------------------------------------------------- text layouts
#
# A tool's text is stored exactly as it was given, so a page of rows must be found in the
# original text. `detect_layout` decides, from the first `SNIFF_PREFIX_CHARS` characters only,
# how rows are laid out; sniffing, preparing and fetching all call it on the same prefix, so a
# fetched page is always cut the way the first view was. `parse_text_rows` then parses a whole
# text under that layout and records where every row starts and ends.
#
# Layouts where every row is exactly one line (`TextLayout.line_rows`: JSON lines, and
# delimited text without quoting: tabs, pipes, semicolons, psql and markdown tables) are paged
# by line arithmetic: row `r` is line `data_start + r`. Layouts whose rows may span lines
# (comma CSV with quoted newlines, JSON arrays, pretty-printed or on one line) are parsed as a
# whole when a page is fetched.

JSON_ARRAY = "json_array"
JSONL = "jsonl"
DELIMITED = "delimited"

_JSON_ARRAY_RE = re.compile(r"(?<!\s)\s*\[\s*\{")
_CELL_SPLIT_RE = re.compile(r"[|+]")
_PSQL_FOOTER_RE = re.compile(r"^\(\d+ rows?\)$")
_LOG_MILLIS_RE = re.compile(r"(\d\d:\d\d:\d\d),(\d{3})(?!\d)")
_BRACKETS = (("(", ")"), ("[", "]"), ("{", "}"))
_SNIFF_LINES = 200
_PROSE_WORDS = 3.0


@dataclass(frozen=True, slots=True)
class TextLayout:
    r"""How rows are laid out in a tool's text.

    Example:
        ```python
        layout = detect_layout("id|name\n1|a\n2|b\n3|c\n", whole=True)
        assert layout is not None and layout.line_rows and layout.data_start == 1
        ```
    """

    format: str
    """`json_array`, `jsonl` or `delimited`."""
    delimiter: str | None = None
    """Field delimiter (delimited text)."""
    header: bool = False
    """Whether the first record names the columns (delimited text)."""
    aligned: bool = False
    """A psql or markdown table: a separator line under the header, cells padded with spaces,
    markdown's outer pipes."""
    trailing: bool = False
    """Every line ends with the delimiter (an empty last field that is dropped)."""
    columns: tuple[str, ...] = ()
    """Column names (delimited text: the header, else `1..n`)."""
    data_start: int = 0
    """Lines before the first row (leading blank lines, header, separator); meaningful for
    `line_rows` layouts."""

    @property
    def line_rows(self) -> bool:
        """Whether every row is exactly one line (pages are line ranges)."""
        return self.format == JSONL or (self.format == DELIMITED and self.delimiter != ",")

    @property
    def source(self) -> str:
        """`Table.source` of rows in this layout."""
        return {JSON_ARRAY: "json", JSONL: "jsonl"}.get(self.format, "csv")


@dataclass(slots=True)
class ParsedRows:
    r"""Rows parsed from a whole text, with where each row is in it.

    Example:
        ```python
        parsed = text_rows("a,b\n1,2\n3,4\n5,6\n")
        assert parsed is not None and parsed.row_lines(1) == (2, 2)
        ```
    """

    table: Table
    """The rows."""
    layout: TextLayout
    """The layout they were parsed with."""
    starts: array[int]
    """Offset of each row's first character."""
    ends: array[int]
    """Offset one past each row's last character (its newline included for line-based rows)."""
    line_starts: array[int]
    """Offset of the first character of every line of the text."""

    def line_of(self, offset: int) -> int:
        """The 1-based line holding the character at `offset`."""
        return max(1, bisect.bisect_right(self.line_starts, offset))

    def row_lines(self, row: int) -> tuple[int, int]:
        """First and last line of the 1-based `row`."""
        start, end = self.starts[row - 1], self.ends[row - 1]
        return self.line_of(start), self.line_of(max(start, end - 1))


def line_starts_of(text: str) -> array[int]:
    r"""Offsets of the first character of every line of `text` (lines split on `\n`).

    Args:
        text: Any text.

    Returns:
        One offset per line (`[0]` for the empty text).

    Example:
        ```python
        assert list(line_starts_of("a\nbc\n")) == [0, 2]
        ```
    """
    out = array("q", [0])
    pos = text.find("\n")
    while pos >= 0:
        if pos + 1 < len(text):
            out.append(pos + 1)
        pos = text.find("\n", pos + 1)
    return out


def _strip_cr(line: str) -> str:
    return line[:-1] if line.endswith("\r") else line


def _is_separator(line: str) -> bool:
    """A markdown or psql rule line (`|---|:--:|`, `----+----`), checked in linear time.

    Cells (between `|` or `+`, the outer pipes optional) are dashes with optional `:` ends.
    """
    body = line.strip()
    if body.count("-") < 3 or body.strip("|+:- \t"):
        return False
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|"):
        body = body[:-1]
    for cell in _CELL_SPLIT_RE.split(body):
        dashes = cell.strip()
        dashes = dashes[1:] if dashes.startswith(":") else dashes
        dashes = dashes[:-1] if dashes.endswith(":") else dashes
        if not dashes or dashes.strip("-"):
            return False
    return True


def split_line(line: str, layout: TextLayout) -> list[str]:
    r"""The fields of one line of unquoted delimited text.

    Args:
        line: The line, without its newline.
        layout: A delimited layout.

    Returns:
        The fields (cells of aligned tables trimmed, markdown's outer pipes removed).

    Example:
        ```python
        layout = TextLayout(format="delimited", delimiter="|", aligned=True)
        assert split_line("| a | b |", layout) == ["a", "b"]
        ```
    """
    line = _strip_cr(line)
    delimiter = layout.delimiter or ","
    if layout.aligned or delimiter == "|":
        trimmed = line.strip()
        if len(trimmed) >= 2 and trimmed.startswith("|") and trimmed.endswith("|"):
            line = trimmed[1:-1]
    fields = line.split(delimiter)
    if layout.trailing and len(fields) > 1 and not fields[-1].strip():
        fields.pop()
    if layout.aligned:
        fields = [f.strip() for f in fields]
    return fields


def _has_header(first: Sequence[str], second: Sequence[str] | None) -> bool:
    if not first or any(not f.strip() for f in first) or len(set(first)) != len(first):
        return False
    if any(_NUMERIC_RE.match(f.strip()) for f in first):
        return False
    if second is None:
        return True
    # A header differs in kind from the data under it (numbers below text), or reads as
    # identifiers.
    looks_like_names = all(re.fullmatch(r"[A-Za-z_][\w .()/-]{0,63}", f.strip()) for f in first)
    numbers_below = any(_NUMERIC_RE.match(v.strip()) for v in second)
    return looks_like_names or numbers_below


def _row_from_fields(
    fields: Sequence[str], columns: Sequence[str], delimiter: str
) -> dict[str, Any]:
    width = len(columns)
    if len(fields) > width:
        fields = [*fields[: width - 1], delimiter.join(fields[width - 1 :])]
    return {columns[i]: v for i, v in enumerate(fields)}


def _split_sample(lines: Sequence[str], delimiter: str, *, aligned: bool) -> list[list[str]] | None:
    """Split sample lines into fields for sniffing (`None` when CSV quoting breaks)."""
    probe = TextLayout(format=DELIMITED, delimiter=delimiter, aligned=aligned)
    if delimiter != ",":
        return [split_line(line, probe) for line in lines]
    try:
        return [list(r) for r in csv.reader(lines, delimiter=",", quoting=csv.QUOTE_MINIMAL)]
    except csv.Error:
        return None


def _split_inside_brackets(fields: Sequence[str]) -> bool:
    """Whether a delimiter of this line sits inside a pair of brackets (`f(a, b)`, `[1, 2]`).

    True when a bracket opened in one field is closed in a later one.
    """
    for opening, closing in _BRACKETS:
        depth = 0
        for index, value in enumerate(fields):
            depth += value.count(opening) - value.count(closing)
            if depth > 0 and index + 1 < len(fields) and closing in "".join(fields[index + 1 :]):
                return True
    return False


def _looks_like_table(
    records: list[list[str]],
    delimiter: str,
    lines: Sequence[str],
    *,
    aligned: bool,
    trailing: bool = False,
) -> int:
    """The column count when `records` read as a table, else 0.

    Besides a consistent field count, a table's fields must read as cells: not indented
    code, not sentences split at their punctuation, not brackets split at their commas, not
    items of a code literal (`'a', 'b',`), not one line repeated.
    """
    widths = [len(r) for r in records]
    if not widths or widths[0] < 2:
        return 0
    width = widths[0]
    same = [r for r in records if len(r) == width]
    if len(same) < max(_MIN_LINES, int(0.9 * len(records))):
        return 0
    # A column that is blank in every line is not a column (indentation, trailing commas),
    # nor one that is the same punctuation in every line (markup such as `.. |name|`).
    for i in range(width):
        values = {r[i].strip() for r in same}
        if len(values) == 1 and not any(c.isalnum() for c in values.pop()):
            return 0
    half = len(same) / 2
    if not aligned and sum(1 for r in same if r[0][:1].isspace()) >= half:
        return 0  # indented lines: code or prose, not cells
    if delimiter in ",;":
        spaced = sum(
            1 for r in same if all(f[:1] == " " for f in r[1:]) and not r[0][-1:].isspace()
        )
        words = sum(len(f.split()) for r in same for f in r) / (len(same) * width)
        if spaced >= half and words >= _PROSE_WORDS:
            return 0  # sentences split at their commas or semicolons
        if spaced >= half and trailing:
            return 0  # `a, b, c,` on every line: the items of a code literal
    if sum(1 for r in same if _split_inside_brackets(r)) >= half:
        return 0  # a delimiter inside brackets: code or data structures, not cells
    if len(set(lines)) == 1:
        return 0  # one line repeated is not a table
    return width


def _sniff_lines(prefix: str, *, whole: bool) -> list[str]:
    lines = prefix.split("\n")
    if not whole:
        lines = lines[:-1]  # the last line may be cut
    # The first `_SNIFF_LINES` non-blank lines, found without reading the rest of the prefix
    # (`filter` keeps a line whose `strip()` is not empty, as `if ln.strip()` did).
    return [_strip_cr(ln) for ln in islice(filter(str.strip, lines), _SNIFF_LINES)]


def sniff_delimiter(prefix: str, *, whole: bool | None = None) -> str | None:
    r"""The field delimiter of delimited text, judged on a prefix.

    A delimiter qualifies when at least 3 lines (90% of the sample) split into the same
    number (>= 2) of fields as the first line, and the fields read as cells (see
    `detect_layout`).

    Args:
        prefix: The start of the text.
        whole: Whether `prefix` is the whole text (default: when shorter than the sniff
            prefix).

    Returns:
        The delimiter or `None`.

    Example:
        ```python
        assert sniff_delimiter("a|b\n1|2\n3|4\n") == "|"
        ```
    """
    layout = _delimited_layout(
        prefix, whole=len(prefix) < SNIFF_PREFIX_CHARS if whole is None else whole
    )
    return layout.delimiter if layout is not None else None


def _delimited_layout(prefix: str, *, whole: bool) -> TextLayout | None:
    lines = _sniff_lines(prefix, whole=whole)
    if len(lines) < _MIN_LINES:
        return None
    raw_lines = prefix.split("\n")
    first = 0
    while first < len(raw_lines) and not raw_lines[first].strip():
        first += 1
    aligned = (
        first + 1 < len(raw_lines)
        and "|" in raw_lines[first]
        and _is_separator(_strip_cr(raw_lines[first + 1]))
    )
    candidates = [ln for ln in lines if not (_is_separator(ln) or _PSQL_FOOTER_RE.match(ln))]
    masked = [_LOG_MILLIS_RE.sub(r"\1.\2", ln) for ln in candidates]
    # An escape sequence (colour codes, CI timestamps) holds semicolons in its parameters.
    escapes = any("\x1b" in ln for ln in candidates)
    best: tuple[int, str, bool] | None = None
    for delim in _DELIMITERS:
        if (delim == ";" and escapes) or (aligned and delim != "|"):
            continue  # semicolons of escape sequences; aligned tables are pipe tables
        sample = masked if delim == "," else candidates
        records = _split_sample(sample, delim, aligned=aligned)
        if records is None:
            continue
        # Every line ends with the delimiter: the empty last field is not a column.
        trailing = all(len(r) > 1 and not r[-1].strip() for r in records)
        if trailing:
            records = [r[:-1] for r in records]
        width = _looks_like_table(records, delim, sample, aligned=aligned, trailing=trailing)
        if width and (best is None or width > best[0]):
            best = (width, delim, trailing)
    if best is None:
        return None
    _, delimiter, trailing = best
    return _header_layout(raw_lines, first, delimiter, aligned=aligned, trailing=trailing)


def _header_layout(
    raw_lines: Sequence[str], first: int, delimiter: str, *, aligned: bool, trailing: bool
) -> TextLayout:
    """Columns and where the rows start (leading blank lines, header, separator line)."""
    probe = TextLayout(format=DELIMITED, delimiter=delimiter, aligned=aligned, trailing=trailing)
    records: list[list[str]] = []
    if delimiter == ",":
        reader = csv.reader(
            _lines_keepends("\n".join(raw_lines[first : first + 2 * _SNIFF_LINES])),
            delimiter=",",
            quoting=csv.QUOTE_MINIMAL,
        )
        try:
            for found in reader:
                if found and any(v.strip() for v in found):
                    cut = trailing and len(found) > 1 and not found[-1].strip()
                    records.append(found[:-1] if cut else found)
                if len(records) == 2:
                    break
        except csv.Error:
            records = records[:1]
    else:
        for line in raw_lines[first:]:
            if line.strip() and not (aligned and _is_separator(_strip_cr(line))):
                records.append(split_line(line, probe))
            if len(records) == 2:
                break
    head = records[0] if records else []
    second = records[1] if len(records) > 1 else None
    header = aligned or _has_header(head, second)
    if header:
        columns = tuple(c.strip() for c in head)
        data_start = first + (2 if aligned else 1)
    else:
        columns = tuple(str(i + 1) for i in range(len(head)))
        data_start = first
    return TextLayout(
        format=DELIMITED,
        delimiter=delimiter,
        header=header,
        aligned=aligned,
        trailing=trailing,
        columns=columns,
        data_start=data_start,
    )


def _jsonl_layout(prefix: str, *, whole: bool) -> TextLayout | None:
    """JSON lines: every line of the prefix (at least two) is a JSON object, no blank lines."""
    if not prefix.startswith("{"):
        return None
    lines = prefix.split("\n")
    if not whole:
        lines = lines[:-1]
    while lines and not lines[-1].strip() and whole:
        lines.pop()  # trailing blank lines end the text
    if len(lines) < 2:
        return None
    sample = lines[:_SNIFF_LINES]
    if not all(line.strip() for line in sample) or _json_objects(sample) is None:
        return None
    return TextLayout(format=JSONL)


def detect_layout(prefix: str, *, whole: bool) -> TextLayout | None:
    r"""How rows are laid out in a text, judged on its first `SNIFF_PREFIX_CHARS` characters.

    Sniffing, preparing and fetching all decide with this function on the same prefix, so a
    fetched page is cut exactly as the first view counted rows.

    - `json_array`: the text starts with `[` then `{` (a JSON array of objects);
    - `jsonl`: every line is a JSON object (two lines at least, no blank lines);
    - `delimited`: tab, pipe, semicolon or comma separated fields (CSV quoting for commas),
      including psql and markdown tables; fields must read as cells: indented code, sentences
      split at their punctuation, brackets split at their commas and one line repeated are
      not tables.

    Args:
        prefix: The first `SNIFF_PREFIX_CHARS` characters of the text (or all of it).
        whole: Whether `prefix` is the whole text (else its last line may be cut).

    Returns:
        The layout, or `None` when the text does not look like rows.

    Example:
        ```python
        assert detect_layout("a\tb\n1\t2\n3\t4\n", whole=True).delimiter == "\t"
        assert detect_layout("Note: a; b.\n" * 50, whole=True) is None
        ```
    """
    prefix = prefix[:SNIFF_PREFIX_CHARS]
    if _JSON_ARRAY_RE.match(prefix):
        return TextLayout(format=JSON_ARRAY)
    layout = _jsonl_layout(prefix, whole=whole)
    if layout is not None:
        return layout
    return _delimited_layout(prefix, whole=whole)


def _json_array_rows(text: str) -> tuple[list[Any], array[int], array[int]] | None:
    """Elements of a JSON array with their spans (`None` unless the text is a JSON array)."""
    decoder = json.JSONDecoder()
    ws = " \t\n\r"
    n = len(text)
    pos = 0
    while pos < n and text[pos] in ws:
        pos += 1
    if pos >= n or text[pos] != "[":
        return None
    pos += 1
    values: list[Any] = []
    starts, ends = array("q"), array("q")
    while pos < n and text[pos] in ws:
        pos += 1
    if pos < n and text[pos] == "]":
        pos += 1
    else:
        while True:
            try:
                value, end = decoder.raw_decode(text, pos)
            except ValueError:
                return None
            values.append(value)
            starts.append(pos)
            ends.append(end)
            pos = end
            while pos < n and text[pos] in ws:
                pos += 1
            if pos < n and text[pos] == ",":
                pos += 1
                while pos < n and text[pos] in ws:
                    pos += 1
                continue
            if pos < n and text[pos] == "]":
                pos += 1
                break
            return None
    while pos < n and text[pos] in ws:
        pos += 1
    return (values, starts, ends) if pos == n else None


def _data_end_line(lines: Sequence[str], layout: TextLayout) -> int:
    """Lines up to the last row: trailing blank lines and a psql `(N rows)` footer are not rows."""
    end = len(lines)
    while end > layout.data_start:
        line = _strip_cr(lines[end - 1]).strip()
        if not line or (layout.delimiter == "|" and _PSQL_FOOTER_RE.match(line)):
            end -= 1
            continue
        break
    return end


def is_trailer_line(line: str, layout: TextLayout) -> bool:
    """Whether a line after the rows is not a row (blank, or psql's `(N rows)` footer).

    Args:
        line: The line, without its newline.
        layout: The layout.

    Returns:
        `True` for trailer lines.

    Example:
        ```python
        assert is_trailer_line("(3 rows)", TextLayout(format="delimited", delimiter="|"))
        ```
    """
    text = _strip_cr(line).strip()
    return not text or (layout.delimiter == "|" and _PSQL_FOOTER_RE.match(text) is not None)


_END_ROWS = 3
"""Last lines (not blank, not a rule, not a rows-count footer) a table must end with."""
_END_CHARS = 4_000
"""Characters of the end read to find them."""
_ROWS_FOOTER_RE = re.compile(r"^\(?\d[\d,]* rows?\b", re.IGNORECASE)
"""A rows-count footer: psql's `(3 rows)`, MySQL's `3 rows in set (0.00 sec)`."""


def ends_as_table(text: str, layout: TextLayout) -> bool:
    r"""Whether delimited text still has its table's width in its last lines.

    The layout is judged on the start; a table printed before something else (a program's
    metrics, then its traceback; a query's rows, then a build log) does not end as a table,
    and its last lines are the ones a view of rows would hide. Other layouts hold.

    Args:
        text: The whole text.
        layout: Its layout (`detect_layout` of its start).

    Returns:
        `True` when the last `_END_ROWS` lines that are not blank, a rule or a rows-count
        footer split into as many fields as the layout has columns.

    Example:
        ```python
        table = "id|name\n" + "".join(f"{i}|n{i}\n" for i in range(50))
        layout = detect_layout(table, whole=True)
        assert ends_as_table(table + "(50 rows)\n", layout)
        assert not ends_as_table(table + "Error: database is locked\n", layout)
        ```
    """
    if layout.format != DELIMITED or not layout.columns:
        return True
    width = len(layout.columns)
    tail = text[-_END_CHARS:].split("\n")
    if len(text) > _END_CHARS:
        tail = tail[1:]  # the first piece may be the end of a longer line
    last: list[str] = []
    for line in reversed(tail):
        body = _strip_cr(line).strip()
        if not body.strip("+-|:= \t") or _ROWS_FOOTER_RE.match(body):  # blank, rule, footer
            continue
        last.append(_strip_cr(line))
        if len(last) == _END_ROWS:
            break
    for line in last:
        if layout.delimiter == ",":
            fields = next(csv.reader([line]), [])
            if layout.trailing and len(fields) > 1 and not fields[-1].strip():
                fields.pop()
        else:
            fields = split_line(line, layout)
        if len(fields) != width:
            return False
    return True


def line_rows(lines: Sequence[str], layout: TextLayout) -> list[dict[str, Any]] | None:
    r"""Rows of consecutive lines of a `line_rows` layout (one row per line).

    Args:
        lines: The lines, without newlines.
        layout: A layout whose rows are lines.

    Returns:
        One row per line (a blank line of delimited text is a row without values), or `None`
        when a line of JSON lines is not a JSON object.

    Example:
        ```python
        layout = TextLayout(format="delimited", delimiter="|", columns=("a", "b"))
        assert line_rows(["1|x"], layout) == [{"a": "1", "b": "x"}]
        ```
    """
    if layout.format == JSONL:
        return _json_objects(lines)
    delimiter = layout.delimiter or "|"
    columns = layout.columns
    out: list[dict[str, Any]] = []
    for line in lines:
        if not line.strip():
            out.append({})
            continue
        fields = split_line(line, layout)
        out.append(_row_from_fields(fields, columns, delimiter) if columns else {})
    return out


def _lines_keepends(text: str) -> Iterator[str]:
    r"""Lines split on `\n` only, each with its newline (a lone `\r` is data)."""
    pos, n = 0, len(text)
    while pos < n:
        newline = text.find("\n", pos)
        end = n if newline < 0 else newline + 1
        yield text[pos:end]
        pos = end


def _records_with_lines(text: str, trailing: bool) -> Iterator[tuple[list[str], int, int]]:
    """CSV records of `text` with the (0-based) indexes of their first and last lines."""
    lines: Iterable[str]
    if "\r" not in text or "\r" not in text.replace("\r\n", "\n"):
        # Every line ends with "\n" or "\r\n": the C line splitter counts the same lines.
        lines = io.StringIO(text, newline="")
    else:
        lines = _lines_keepends(text)  # a lone "\r" is data, not a line break
    reader = csv.reader(lines, delimiter=",", quoting=csv.QUOTE_MINIMAL)
    done = 0
    for record in reader:
        first, last = done, reader.line_num - 1
        done = reader.line_num
        cut = trailing and len(record) > 1 and not record[-1].strip()
        yield (record[:-1] if cut else record), first, last


def parse_text_rows(text: str, layout: TextLayout) -> ParsedRows | None:
    r"""Parse a whole text under `layout`, keeping where every row starts and ends.

    Args:
        text: The whole text.
        layout: Its layout (`detect_layout` of its prefix).

    Returns:
        The rows, or `None` when the text is not rows in this layout (a JSON array that is
        not an array of objects, a JSON line that is not an object, broken CSV quoting).

    Example:
        ```python
        text = 'id,note\n1,"two\nlines"\n2,x\n3,y\n'
        parsed = parse_text_rows(text, detect_layout(text, whole=True))
        assert parsed.table.rows[0] == {"id": "1", "note": "two\nlines"}
        assert parsed.row_lines(1) == (2, 3)
        ```
    """
    if parse_would_exceed(text):  # bounded cost: a JSON bomb or a huge table is not parsed
        return None
    line_starts = line_starts_of(text)
    starts, ends = array("q"), array("q")
    n_lines = len(line_starts) if text else 0

    def line_end(index: int) -> int:  # offset one past line `index` (0-based), newline included
        return line_starts[index + 1] if index + 1 < n_lines else len(text)

    if layout.format == JSON_ARRAY:
        found = _json_array_rows(text)
        if found is None:
            return None
        values, starts, ends = found
        if not values or not all(isinstance(v, dict) for v in values):
            return None
        if all(isinstance(v.get("type"), str) for v in values):
            return None  # content blocks, not rows
        table = _json_records(values, "json")
        return ParsedRows(table, layout, starts, ends, line_starts)
    if layout.line_rows:
        lines = text.split("\n")[:n_lines]
        end = _data_end_line(lines, layout)
        rows = line_rows(lines[layout.data_start : end], layout)
        if rows is None:
            return None
        for index in range(layout.data_start, end):
            starts.append(line_starts[index])
            ends.append(line_end(index))
        if layout.format == JSONL:
            table = _json_records(rows, "jsonl")
        else:
            table = Table(
                columns=list(layout.columns), rows=rows, source="csv", delimiter=layout.delimiter
            )
        return ParsedRows(table, layout, starts, ends, line_starts)
    # Comma CSV: records may span lines (quoted newlines).
    columns = list(layout.columns)
    width = len(columns)
    rows = []
    seen_header = not layout.header
    try:
        for record, first, last in _records_with_lines(text, layout.trailing):
            if not record or not "".join(record).strip():
                continue  # a blank line
            if not seen_header:
                seen_header = True
                continue
            if len(record) <= width:
                rows.append(dict(zip(columns, record, strict=False)))
            else:
                rows.append(_row_from_fields(record, columns, ","))
            starts.append(line_starts[first])
            ends.append(line_end(min(last, n_lines - 1)))
    except csv.Error:
        return None
    table = Table(columns=columns, rows=rows, source="csv", delimiter=",")
    return ParsedRows(table, layout, starts, ends, line_starts)


def text_rows(text: str) -> ParsedRows | None:
    r"""Rows in a tool's text (layout from its prefix, then a whole parse).

    Args:
        text: The text.

    Returns:
        The parsed rows, or `None` when the text is not rows.

    Example:
        ```python
        assert text_rows("id|x\n1|a\n2|b\n3|c\n").table.columns == ["id", "x"]
        ```
    """
    layout = detect_layout(text[:SNIFF_PREFIX_CHARS], whole=len(text) <= SNIFF_PREFIX_CHARS)
    if layout is None:
        return None
    return parse_text_rows(text, layout)


def parse_delimited(text: str, delimiter: str) -> Table:
    r"""Parse delimited text into a table (header detected; extra fields join the last column).

    Args:
        text: The whole text.
        delimiter: The field delimiter.

    Returns:
        The table; every value is the exact field text.

    Example:
        ```python
        t = parse_delimited("id|name\n1|a|b\n", "|")
        assert t.rows == [{"id": "1", "name": "a|b"}]
        ```
    """
    raw_lines = text[:SNIFF_PREFIX_CHARS].split("\n")
    first = 0
    while first < len(raw_lines) and not raw_lines[first].strip():
        first += 1
    layout = _header_layout(raw_lines, first, delimiter, aligned=False, trailing=False)
    parsed = parse_text_rows(text, layout)
    if parsed is None:
        return Table(columns=list(layout.columns), rows=[], source="csv", delimiter=delimiter)
    return parsed.table


def _table_from_text(text: str) -> Table | None:
    parsed = text_rows(text)
    return parsed.table if parsed is not None else None


# --------------------------------------------------------------------------- storage


def to_jsonl(rows: Sequence[Mapping[str, Any]]) -> str:
    r"""One compact JSON object per line (values are already JSON-ready).

    This is the stored form of rows that are objects (lists of dicts or tuples, SQLAlchemy
    results, data frames): objects have no text of their own, so this text is their original.

    Args:
        rows: The rows.

    Returns:
        JSONL text (each line ends with `\n`).

    Example:
        ```python
        assert to_jsonl([{"a": 1}, {"a": 2}]) == '{"a": 1}\n{"a": 2}\n'
        ```
    """
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def rows_from_jsonl(text: str) -> list[dict[str, Any]] | None:
    r"""Parse stored JSONL rows (every non-empty line must be a JSON object).

    Args:
        text: JSONL text.

    Returns:
        The rows, or `None` when a line is not a JSON object.

    Example:
        ```python
        assert rows_from_jsonl('{"a": 1}\n') == [{"a": 1}]
        ```
    """
    return _json_objects(line for line in text.split("\n") if line.strip())


def _json_objects(lines: Iterable[str]) -> list[dict[str, Any]] | None:
    """Each line parsed as a JSON object, or `None` when one of them is not one."""
    rows: list[dict[str, Any]] = []
    for line in lines:
        try:
            value = json.loads(line)
        except ValueError:
            return None
        if not isinstance(value, dict):
            return None
        rows.append(value)
    return rows


# --------------------------------------------------------------------------- statistics


@dataclass(slots=True)
class ColumnStats:
    """Facts about one column."""

    name: str
    """Column name."""
    count: int = 0
    """Rows examined."""
    nulls: int = 0
    """Rows where the value is null or missing."""
    types: dict[str, int] = field(default_factory=dict)
    """Value types seen (`int`, `float`, `str`, `bool`, `date`, `object`, ...)."""
    distinct: int = 0
    """Distinct non-null values among the rows examined."""
    distinct_capped: bool = False
    """Whether only the first rows were examined (then `distinct` is a lower bound)."""
    top: list[tuple[Any, int]] = field(default_factory=list)
    """Most frequent values with counts (low-cardinality columns only)."""
    minimum: Any = None
    """Smallest number or date, when the column holds numbers or dates."""
    maximum: Any = None
    """Largest number or date."""
    max_length: int = 0
    """Longest text value."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        data: dict[str, Any] = {
            "count": self.count,
            "nulls": self.nulls,
            "types": dict(self.types),
            "distinct": self.distinct,
        }
        if self.distinct_capped:
            data["distinct_at_least"] = True
        if self.top:
            data["top"] = [[v, n] for v, n in self.top]
        if self.minimum is not None:
            data["min"] = self.minimum
            data["max"] = self.maximum
        if self.max_length:
            data["max_length"] = self.max_length
        return data


_SCALAR_KINDS = frozenset({"int", "float", "str", "bool"})
_STATS_MAX_ROWS = 200_000
"""Column summaries examine at most this many rows (the first ones)."""


_TYPE_NAMES: tuple[tuple[type, str], ...] = (
    (bool, "bool"),  # before int: a bool is an int
    (int, "int"),
    (float, "float"),
    (str, "str"),
    (list, "list"),
    (dict, "object"),
)
"""A column value's type name, by the first class it is an instance of."""


def _kind_of(value: Any) -> str:
    for cls, name in _TYPE_NAMES:
        if isinstance(value, cls):
            return name
    return type(value).__name__


def _number(text: str) -> int | float | None:
    text = text.strip()
    if len(text) > 40 or not _NUMERIC_RE.match(text):
        return None
    try:
        return float(text) if any(c in text for c in ".eE") else int(text)
    except ValueError:  # pragma: no cover - the regex guarantees a number
        return None


def _min_max(distinct: Sequence[Any], kinds: set[str]) -> tuple[Any, Any] | None:
    """Min and max of numbers, of numbers written as text, or of ISO dates written as text."""
    if not distinct:
        return None
    if kinds <= {"int", "float"}:
        finite = [v for v in distinct if not (isinstance(v, float) and not math.isfinite(v))]
        return (min(finite), max(finite)) if finite else None
    if kinds == {"str"}:
        numbers = [_number(v) for v in distinct]
        if all(n is not None for n in numbers):
            lo = min(range(len(numbers)), key=lambda i: numbers[i])  # type: ignore[arg-type,return-value]
            hi = max(range(len(numbers)), key=lambda i: numbers[i])  # type: ignore[arg-type,return-value]
            return distinct[lo], distinct[hi]
        if all(_DATE_RE.match(v) for v in distinct):
            return min(distinct), max(distinct)
    return None


def column_stats(
    rows: Sequence[Mapping[str, Any]], columns: Sequence[str], *, top_k: int = 5
) -> list[ColumnStats]:
    """Summarise every column: nulls, types, distinct values, top values, min/max.

    Top values are reported for low-cardinality columns (at most 12 distinct values, or
    whose `top_k` most frequent values cover at least half of the non-null values);
    min/max for numbers and dates (also numbers and ISO dates written as text, as in CSV).
    At most the first 200,000 rows are examined (`ColumnStats.count` says how many).

    Args:
        rows: The rows.
        columns: Columns to summarise.
        top_k: How many top values to keep.

    Returns:
        One `ColumnStats` per column, in order.

    Example:
        ```python
        stats = column_stats([{"s": "ok"}, {"s": "ok"}, {"s": "bad"}], ["s"])
        assert stats[0].top == [("ok", 2), ("bad", 1)]
        ```
    """
    sample = rows[:_STATS_MAX_ROWS]
    total = len(sample)
    out: list[ColumnStats] = []
    for name in columns:
        values = [row.get(name) for row in sample]
        present = [v for v in values if v is not None]
        stats = ColumnStats(name=name, count=total, nulls=total - len(present))
        kinds: Counter[str] = Counter(_kind_of(v) for v in present)
        stats.types = dict(kinds.most_common())
        kind_set = set(kinds)
        originals: dict[Any, Any] = {}
        if kind_set <= _SCALAR_KINDS:
            keys: list[Any] = present if len(kind_set) <= 1 else [(type(v), v) for v in present]
            if len(kind_set) > 1:
                originals = {(type(v), v): v for v in present}
        else:
            keys = [(_kind_of(v), json.dumps(v, sort_keys=True)) for v in present]
            originals = dict(zip(keys, present, strict=False))
        counts = Counter(keys)
        strings = [v for v in present if isinstance(v, str)]
        stats.max_length = max(map(len, strings), default=0)
        stats.distinct_capped = len(rows) > total
        stats.distinct = len(counts)
        non_null = len(present)
        if counts and len(counts) < non_null:  # unique columns have no top values
            top = counts.most_common(top_k)
            covered = sum(n for _, n in top)
            if len(counts) <= _TOP_CAP or covered >= _TOP_COVER * non_null:
                stats.top = [(originals.get(k, k), n) for k, n in top]
        if kind_set == {"int", "float"} or (
            len(kind_set) == 1 and kind_set <= {"int", "float", "str"}
        ):
            distinct_values = list(counts) if len(kind_set) == 1 else [k[1] for k in counts]
            bounds = _min_max(distinct_values, kind_set)
            if bounds is not None:
                stats.minimum, stats.maximum = bounds
        out.append(stats)
    return out
