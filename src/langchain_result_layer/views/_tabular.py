"""Tabular data: recognising rows in any shape and summarising their columns.

Shapes accepted as rows:

- a list/tuple of mappings (`list[dict]`, SQLAlchemy `RowMapping`s), of SQLAlchemy `Row`s,
  or of tuples/lists (positional columns);
- a SQLAlchemy `Result` (consumed once);
- an object with `to_dict(orient="records")` and `columns` (a pandas `DataFrame`);
- CSV/TSV/pipe-separated text with a consistent number of fields per line (the output of
  `sqlite3 -header`, `psql -A`, spreadsheets);
- JSON text of an array of objects.

Rows are kept as `dict`s in column order. Stored form: one JSON object per line (JSONL), so a
page of rows is a line range of the stored record.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import sys
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_result_layer.core.jsonable import to_jsonable

__all__ = [
    "ColumnStats",
    "Table",
    "column_stats",
    "looks_like_rows",
    "parse_delimited",
    "rows_from_jsonl",
    "table_from_payload",
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
    """Rows recognised in a tool output.

    Attributes:
        columns: Column names, in first-seen order.
        rows: One dict per row (values exactly as given, JSON-ready).
        source: Where the rows came from (`records`, `tuples`, `sqlalchemy`, `csv`, `json`,
            `dataframe`).
        delimiter: Field separator for delimited text.
    """

    columns: list[str]
    rows: list[dict[str, Any]]
    source: str
    delimiter: str | None = None


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


def _records(rows: Iterable[Mapping[str, Any]], source: str) -> Table:
    columns: dict[str, None] = {}
    out: list[dict[str, Any]] = []
    for row in rows:
        record = {str(k): to_jsonable(v) for k, v in row.items()}
        for key in record:
            if key not in columns:
                columns[key] = None
        out.append(record)
    return Table(columns=list(columns), rows=out, source=source)


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
        table = _records(records, "dataframe")
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
        return _records((_row_mapping(r) or {} for r in payload), "sqlalchemy")
    if isinstance(first, Mapping):
        return _records(payload, "records")
    return _tuples(payload, None, "tuples")


# --------------------------------------------------------------------------- text


def _json_array_of_objects(text: str) -> Table | None:
    stripped = text.lstrip()
    if not stripped.startswith("["):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if (
        isinstance(data, list)
        and data
        and all(isinstance(r, dict) for r in data)
        and not all(isinstance(r.get("type"), str) for r in data)
    ):
        return _records(data, "json")
    return None


def _reader(lines: Iterable[str], delimiter: str) -> Iterator[list[str]]:
    """CSV quoting for commas; none for tabs, pipes and semicolons (as tools print them)."""
    if delimiter == ",":
        return csv.reader(lines, delimiter=",", quoting=csv.QUOTE_MINIMAL)
    return csv.reader(lines, delimiter=delimiter, quoting=csv.QUOTE_NONE)


def sniff_delimiter(prefix: str) -> str | None:
    r"""The field delimiter of delimited text, judged on a prefix.

    A delimiter qualifies when at least 3 complete lines all split into the same number
    (>= 2) of fields.

    Args:
        prefix: The start of the text.

    Returns:
        The delimiter or `None`.

    Example:
        ```python
        assert sniff_delimiter("a|b\n1|2\n3|4\n") == "|"
        ```
    """
    lines = prefix.split("\n")
    if len(prefix) >= SNIFF_PREFIX_CHARS:
        lines = lines[:-1]  # the last line may be cut
    lines = [ln.rstrip("\r") for ln in lines if ln.strip()][:200]
    if len(lines) < _MIN_LINES:
        return None
    best: tuple[int, str] | None = None
    for delim in _DELIMITERS:
        try:
            widths = [len(r) for r in _reader(lines, delim)]
        except csv.Error:
            continue
        if not widths or widths[0] < 2:
            continue
        agree = sum(1 for w in widths if w == widths[0])
        if agree < max(_MIN_LINES, int(0.9 * len(widths))):
            continue
        if best is None or widths[0] > best[0]:
            best = (widths[0], delim)
    return best[1] if best else None


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
    reader = _reader(io.StringIO(text, newline=""), delimiter)
    records = [r for r in reader if r and any(v.strip() for v in r)]
    if not records:
        return Table(columns=[], rows=[], source="csv", delimiter=delimiter)
    first = records[0]
    second = records[1] if len(records) > 1 else None
    if _has_header(first, second):
        columns = [c.strip() for c in first]
        data = records[1:]
    else:
        columns = [str(i + 1) for i in range(len(first))]
        data = records
    width = len(columns)
    rows: list[dict[str, Any]] = []
    for record in data:
        fields = record
        if len(fields) > width:
            fields = [*fields[: width - 1], delimiter.join(fields[width - 1 :])]
        rows.append({columns[i]: v for i, v in enumerate(fields)})
    return Table(columns=columns, rows=rows, source="csv", delimiter=delimiter)


def _table_from_text(text: str) -> Table | None:
    table = _json_array_of_objects(text)
    if table is not None:
        return table
    delimiter = sniff_delimiter(text[:SNIFF_PREFIX_CHARS])
    if delimiter is None:
        return None
    return parse_delimited(text, delimiter)


# --------------------------------------------------------------------------- storage


def to_jsonl(rows: Sequence[Mapping[str, Any]]) -> str:
    r"""One compact JSON object per line (values are already JSON-ready).

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
    rows: list[dict[str, Any]] = []
    for line in text.split("\n"):
        if not line.strip():
            continue
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
    """Facts about one column.

    Attributes:
        name: Column name.
        count: Rows examined.
        nulls: Rows where the value is null or missing.
        types: Value types seen (`int`, `float`, `str`, `bool`, `date`, `object`, ...).
        distinct: Distinct non-null values among the rows examined.
        distinct_capped: Whether only the first rows were examined (then `distinct` is a
            lower bound).
        top: Most frequent values with counts (low-cardinality columns only).
        minimum: Smallest number or date, when the column holds numbers or dates.
        maximum: Largest number or date.
        max_length: Longest text value.
    """

    name: str
    count: int = 0
    nulls: int = 0
    types: dict[str, int] = field(default_factory=dict)
    distinct: int = 0
    distinct_capped: bool = False
    top: list[tuple[Any, int]] = field(default_factory=list)
    minimum: Any = None
    maximum: Any = None
    max_length: int = 0

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


def _kind_of(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "object"
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
