r"""The rows view: database rows, records, CSV/TSV/pipe/psql/markdown tables, JSON arrays.

The model sees the total count, small column summaries (nulls, distinct values, the top
values of low-cardinality columns such as a status column, min/max of numbers and dates), the
first page of rows (in the output's own delimiter for delimited text, else one JSON array per
row, in column order), and the reference of the next page:
`ref://tool-result/<id>/rows?page=2&page_size=N`.

What is stored is the original, exactly:

- **text** (a `ToolMessage`'s string content: CSV, TSV, `sqlite3`/`psql` output, markdown
  tables, JSON text such as LangChain's `json.dumps` of a list of dicts or the SQL tool's
  output) is stored as it was given, byte for byte;
- **objects** (lists of dicts or tuples, SQLAlchemy `Result`/`Row`/`RowMapping`, data frames)
  have no text of their own: their stored original is one JSON object per line (JSONL).

Pages are rows: page `p` of size `N` is rows `(p-1)*N+1 .. p*N` (the header is not a row).
Where every row is one line (JSONL; tab, pipe and semicolon separated text, psql and markdown
tables) a page is read as a line range: row `r` is line `data_start + r`. Where rows may span
lines (comma CSV with quoted newlines, JSON arrays) a fetch parses the whole record, at most
`RecordInfo.max_read` characters (`DEFAULT_MAX_READ_CHARS`, 64 MiB), and says so when a
record is larger. A `start_line`/`end_line` range shows the rows that start on those lines; an
`offset`/`limit` range shows the original text, exactly. Every `next` reference continues at
the first row not shown: following `next` from the first page shows every row once.

Options (`ToolPolicy.view_options`, used by the first view and by every fetched page):

- `fields`: the fields to show (a whitelist; default every field);
- `page_size`: the most rows on the first page (default 500; fewer when the budget is
  smaller: the page is as many rows as fit);
- `max_value_chars`: long values are clipped to this many characters (default 200);
- `column_summaries`: `False` to leave the column summaries out.

Example:
    ```python
    from langchain_result_layer.views.rows import RowsView

    view = RowsView()
    prepared = view.prepare([{"id": i, "status": "ok" if i % 9 else "failed"} for i in range(1000)])
    assert prepared.raw.count("\n") == 1000
    text = "id|status\n" + "".join(f"{i}|ok\n" for i in range(1000))
    assert view.prepare(text).raw is text  # text is stored as it was given
    ```
"""

from __future__ import annotations

import bisect
import csv
import io
import json
from abc import ABC, abstractmethod
from array import array
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from langchain_result_layer.core.normalize import clean_for_display
from langchain_result_layer.core.reference import MAX_PAGE_SIZE, Reference
from langchain_result_layer.core.render import fetch_call, plural
from langchain_result_layer.core.view import OmittedRange, ResultView
from langchain_result_layer.views import _layout
from langchain_result_layer.views._tabular import (
    JSONL,
    SNIFF_PREFIX_CHARS,
    ColumnStats,
    ParsedRows,
    Table,
    TextLayout,
    column_stats,
    detect_layout,
    ends_as_table,
    is_trailer_line,
    line_rows,
    line_starts_of,
    looks_like_rows,
    parse_text_rows,
    rows_from_jsonl,
    split_line,
    table_from_payload,
    text_rows,
    to_jsonl,
)
from langchain_result_layer.views._timestamps import detect_format
from langchain_result_layer.views.base import (
    FetchSliceError,
    FetchSteps,
    Prepared,
    RecordInfo,
    Rendered,
    ResultViewBuilder,
    SliceRead,
    SliceRequest,
    ViewContext,
)
from langchain_result_layer.views.text import TextView, utf8_length

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from langchain_result_layer.views.slices import SliceAt


__all__ = ["RowsOptions", "RowsView"]

_MAX_SUMMARY_COLUMNS = 40
_TOP_SHOWN = 5
_TEXT_FALLBACK = TextView()
_TAIL_LINES = 64
_TABLE_SCORE = 0.85
"""A delimited table's sniff score: above the log view's (0.8), so tabular text wins."""
_STAMP_SAMPLE = 200
_PAGE_READ_MIN_CHARS = 1 << 20
"""A page read returns at least this many characters (rows are clipped for display, so
their raw text may be much longer than what is shown)."""


@dataclass(frozen=True, slots=True)
class RowsOptions:
    """Options of the rows view, read from `ToolPolicy.view_options`.

    Example:
        ```python
        RowsOptions.from_mapping({"fields": ["id", "status"], "page_size": 20})
        ```
    """

    fields: tuple[str, ...] | None = None
    """Fields to show (`None`: all)."""

    page_size: int = 500
    """Most rows on the first page."""

    max_value_chars: int = 200
    """Long values are clipped to this many characters."""

    column_summaries: bool = True
    """Whether to show column summaries."""

    @classmethod
    def from_mapping(cls, options: Mapping[str, Any]) -> RowsOptions:
        """Read the options, ignoring unknown keys and bad values.

        Args:
            options: `ToolPolicy.view_options`.

        Returns:
            The options.

        Example:
            ```python
            assert RowsOptions.from_mapping({"page_size": "x"}).page_size == 500
            ```
        """
        raw_fields = options.get("fields")
        fields: tuple[str, ...] | None = None
        if isinstance(raw_fields, str):
            fields = (raw_fields,)
        elif isinstance(raw_fields, (list, tuple)) and raw_fields:
            fields = tuple(str(f) for f in raw_fields)
        page_size = _positive_int(options.get("page_size"), 500)
        max_chars = max(8, _positive_int(options.get("max_value_chars"), 200))
        summaries = options.get("column_summaries", True) is not False
        return cls(
            fields=fields,
            page_size=min(page_size, MAX_PAGE_SIZE),
            max_value_chars=max_chars,
            column_summaries=summaries,
        )


def _positive_int(value: object, default: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return default
    return value


# --------------------------------------------------------------------------- geometry


class _Geometry(ABC):
    """Where rows are in the stored record (lines 1-based, chars 0-based end-exclusive)."""

    total: int

    @abstractmethod
    def start(self, row: int) -> tuple[int, int]:
        """Line and offset of the first character of `row`."""

    @abstractmethod
    def end(self, row: int) -> tuple[int, int]:
        """Line of the last character of `row` and the offset one past it."""

    @abstractmethod
    def whole_lines(self, first: int, last: int) -> tuple[int, bool, bool]:
        """Whole lines in rows `first..last`, and whether the first/last line is partial."""

    @abstractmethod
    def line_range_rows(self, start_line: int, end_line: int) -> tuple[int, int]:
        """Rows that start on lines `start_line..end_line` (`(a, a - 1)` when none)."""

    def row_per_line(self) -> bool:
        """Whether every row starts on a line of its own."""
        return True


class _ParsedGeometry(_Geometry):
    """Geometry of a whole parsed text (rows may span lines or share one)."""

    def __init__(self, parsed: ParsedRows, size: int) -> None:
        self.parsed = parsed
        self.size = size
        self.total = len(parsed.table.rows)
        self._first_lines: array[int] | None = None

    def start(self, row: int) -> tuple[int, int]:
        offset = self.parsed.starts[row - 1]
        return self.parsed.line_of(offset), offset

    def end(self, row: int) -> tuple[int, int]:
        start, end = self.parsed.starts[row - 1], self.parsed.ends[row - 1]
        return self.parsed.line_of(max(start, end - 1)), end

    def _line_end(self, index: int) -> int:
        starts = self.parsed.line_starts
        return starts[index + 1] if index + 1 < len(starts) else self.size

    def whole_lines(self, first: int, last: int) -> tuple[int, bool, bool]:
        lo, hi = self.parsed.starts[first - 1], self.parsed.ends[last - 1]
        starts = self.parsed.line_starts
        first_full = bisect.bisect_left(starts, lo)
        last_index = bisect.bisect_right(starts, max(lo, hi - 1)) - 1
        last_full = last_index if self._line_end(last_index) <= hi else last_index - 1
        partial_start = starts[bisect.bisect_right(starts, lo) - 1] != lo
        partial_end = self._line_end(last_index) != hi
        return max(0, last_full - first_full + 1), partial_start, partial_end

    def _rows_first_lines(self) -> array[int]:
        if self._first_lines is None:
            self._first_lines = array("q", (self.parsed.line_of(s) for s in self.parsed.starts))
        return self._first_lines

    def line_range_rows(self, start_line: int, end_line: int) -> tuple[int, int]:
        lines = self._rows_first_lines()
        a = bisect.bisect_left(lines, start_line) + 1
        b = bisect.bisect_right(lines, end_line)
        return a, b

    def row_per_line(self) -> bool:
        lines = self._rows_first_lines()
        return all(lines[i] < lines[i + 1] for i in range(len(lines) - 1))


@dataclass(kw_only=True, slots=True)
class _LineGeometry(_Geometry):
    """Geometry of a `line_rows` record known around one window of rows (a fetched page).

    Row `r` is line `data_start + r`; offsets are known for row 1, for the rows read and
    for the end of the last row.
    """

    data_start: int
    """The line before row 1."""
    total: int
    """Rows of the record."""
    first_char: int
    """Offset where row 1 starts."""
    data_end_char: int
    """Offset one past the last row."""
    window_first: int
    """The first row read."""
    window_starts: list[int]
    """Offset where each row read starts."""
    window_end: int
    """Offset one past the last row read."""

    def _char(self, row: int) -> int:
        """Offset where `row` starts (`total + 1`: the end of the rows)."""
        index = row - self.window_first
        if 0 <= index < len(self.window_starts):
            return self.window_starts[index]
        if index == len(self.window_starts):
            return self.window_end
        if row == 1:
            return self.first_char
        if row == self.total + 1:
            return self.data_end_char
        msg = f"offset of row {row} is not known"
        raise LookupError(msg)

    def start(self, row: int) -> tuple[int, int]:
        return self.data_start + row, self._char(row)

    def end(self, row: int) -> tuple[int, int]:
        return self.data_start + row, self._char(row + 1)

    def whole_lines(self, first: int, last: int) -> tuple[int, bool, bool]:
        return last - first + 1, False, False

    def line_range_rows(self, start_line: int, end_line: int) -> tuple[int, int]:
        a = max(1, start_line - self.data_start)
        b = min(self.total, end_line - self.data_start)
        return a, max(a - 1, b)


def _omitted(geometry: _Geometry, first: int, last: int) -> list[OmittedRange]:
    """Rows outside `first..last`, as line/char ranges of the stored record."""
    out: list[OmittedRange] = []
    spans = []
    if first > 1:
        spans.append((1, min(first - 1, geometry.total)))
    start = max(first, last + 1)
    if start <= geometry.total:
        spans.append((start, geometry.total))
    for lo, hi in spans:
        if hi < lo:
            continue
        try:
            start_line, start_char = geometry.start(lo)
            end_line, end_char = geometry.end(hi)
        except LookupError:  # a fetched window that says nothing about these rows
            continue
        lines, partial_start, partial_end = geometry.whole_lines(lo, hi)
        out.append(
            OmittedRange(
                start_line=start_line,
                end_line=end_line,
                start_char=start_char,
                end_char=max(start_char, end_char),
                lines=lines,
                partial_start=partial_start,
                partial_end=partial_end,
            )
        )
    return out


# --------------------------------------------------------------------------- formatting


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _cell(value: Any, limit: int) -> tuple[Any, bool]:
    """A value as shown: long strings and long nested values are clipped."""
    if isinstance(value, str):
        text, cut = _layout.clip(value, limit)
        return text, cut
    if isinstance(value, (dict, list)):
        text = _json(value)
        if len(text) > limit:
            return _layout.clip(text, limit)[0], True
    return value, False


def _row_line(values: Sequence[Any], delimiter: str | None = None) -> str:
    """One row as shown.

    A JSON array, or for delimited text the fields joined back with the output's own
    delimiter (CSV-quoted for commas), which is denser and reads like the input.
    """
    if delimiter is None:
        return clean_for_display(_json(list(values)))
    texts = ["" if v is None else str(v) for v in values]
    if delimiter == ",":
        # CSV-quoted as the output was; a value's newlines are shown as `\n` so that every
        # row stays on one line.
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\n").writerow(texts)
        line = buffer.getvalue()[:-1].replace("\r", "\\r").replace("\n", "\\n")
        return clean_for_display(line)
    return clean_for_display(delimiter.join(texts))


def _label(value: Any) -> str:
    text = _json(value)
    return _layout.clip(text, 40)[0]


def _stats_line(stats: ColumnStats) -> str:
    parts = [_label(stats.name) + ":"]
    types = "/".join(stats.types) if stats.types else "null"
    parts.append(types)
    non_null = stats.count - stats.nulls
    if stats.distinct_capped:
        parts.append(f"≥{stats.distinct:,} distinct")
    elif non_null and stats.distinct == non_null and non_null > 1:
        parts.append(f"{stats.distinct:,} distinct (all different)")
    else:
        parts.append(f"{stats.distinct:,} distinct")
    if stats.nulls:
        parts.append(f"{stats.nulls:,} null/missing")
    if stats.minimum is not None:
        parts.append(f"min {_label(stats.minimum)} · max {_label(stats.maximum)}")
    if stats.top:
        tops = ", ".join(f"{_label(v)} ×{n:,}" for v, n in stats.top)
        parts.append(f"top: {tops}")
    return clean_for_display(" ".join(parts[:2]) + " · " + " · ".join(parts[2:]))


def _shown_columns(columns: Sequence[str], options: RowsOptions) -> tuple[list[str], list[str]]:
    if options.fields is None:
        return list(columns), []
    wanted = [f for f in options.fields if f in columns]
    if not wanted:  # a whitelist that matches nothing would hide everything: show all
        return list(columns), []
    hidden = [c for c in columns if c not in wanted]
    return wanted, hidden


def _rows_phrase(first: int, last: int) -> str:
    if last < first:
        return "no rows"
    return f"row {first:,}" if first == last else f"rows {first:,}-{last:,}"


def _aligned(first: int, capacity: int) -> list[tuple[int, int]]:
    """Ways to show rows from `first` so that `next` is a page reference.

    The next page must start right after the rows shown: `(first - 1 + shown) % size == 0`.
    Returns `(shown, size)` pairs, best first: as many rows as fit, on pages of at least half
    the rows that fit.
    """
    if capacity <= 0:
        return []
    if (first - 1) % capacity == 0:
        return [(capacity, capacity)]
    options: list[tuple[int, int]] = []
    for size in range(capacity, max(1, capacity // 2) - 1, -1):
        end = ((first - 1 + capacity) // size) * size
        shown = end - (first - 1)
        if shown >= 1:
            options.append((shown, size))
    options.sort(key=lambda o: (-o[0], -o[1]))
    return options


def _page_plans(first: int, capacity: int, target: int) -> list[tuple[int, int]]:
    """`(shown, next page size)` pairs, best first, for rows from `first` when `capacity` fit.

    The next page starts right after the rows shown. Best: show every row that fit and let
    the next page be as large as `target` allows (pages grow back after a page of long rows);
    else show at least about half of them on pages of at least half as many rows.
    """
    if capacity <= 0:
        return []
    size = _divisor_at_most(first - 1 + capacity, target)
    best = [(capacity, size)] if size >= max(1, capacity // 2) else []
    return best + _aligned(first, capacity)


def _divisor_at_most(n: int, limit: int) -> int:
    """The largest divisor of `n` that is at most `limit` (pages of that size start at n+1)."""
    for size in range(min(n, limit), 0, -1):
        if n % size == 0:
            return size
    return 1


# --------------------------------------------------------------------------- pages


@dataclass(slots=True)
class _Page:
    """A run of rows to show, and what is known about the record around them."""

    rows: Sequence[Mapping[str, Any]]
    first_row: int
    total: int
    columns: list[str]
    delimiter: str | None
    source: str
    stored_as: str
    geometry: _Geometry
    record_chars: int
    record_lines: int
    record_bytes: int
    asked: Reference | None = None
    line_request: bool = False
    first_view: bool = False
    notes: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _RowsData:
    table: Table
    geometry: _Geometry
    stored_as: str
    stats: dict[tuple[str, ...], list[ColumnStats]] = field(default_factory=dict)

    def stats_for(self, columns: Sequence[str]) -> list[ColumnStats]:
        key = tuple(columns)
        if key not in self.stats:
            self.stats[key] = column_stats(self.table.rows, columns, top_k=_TOP_SHOWN)
        return self.stats[key]


def _display_delimiter(table: Table) -> str | None:
    return table.delimiter if table.source == "csv" else None


# --------------------------------------------------------------------------- the view


def _stamp_led(prefix: str, layout: TextLayout) -> bool:
    """Whether the first field of most sampled lines of a table is a timestamp."""
    raw = prefix.split("\n")[layout.data_start :]
    if raw and len(prefix) >= SNIFF_PREFIX_CHARS:
        raw.pop()  # the last line may be cut
    lines = [ln for ln in raw[:_STAMP_SAMPLE] if ln.strip()]
    firsts = [fields[0] for fields in (split_line(ln, layout) for ln in lines) if fields]
    return bool(firsts) and detect_format(firsts) is not None


class RowsView(ResultViewBuilder):
    """Rows with a count, column summaries, a page of rows and a next-page reference.

    Example:
        ```python
        from langchain_result_layer.views import choose_view

        assert choose_view([{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]).kind == "rows"
        ```
    """

    kind: ClassVar[str] = "rows"
    sniff_ceiling = 0.95
    default_page_size: ClassVar[int] = 100

    # ------------------------------------------------------------------ sniff / prepare

    def sniff(self, payload: object) -> float:
        """Row containers score high; JSON lines, JSON arrays of objects and tables less."""
        if isinstance(payload, str):
            prefix = payload[:SNIFF_PREFIX_CHARS]
            layout = detect_layout(prefix, whole=len(payload) <= SNIFF_PREFIX_CHARS)
            if layout is None:
                return 0.0
            if layout.format == "json_array":
                return 0.8 if _first_element_is_object(prefix) else 0.0
            if layout.format == JSONL:
                return 0.8
            # A table that does not end as one is followed by another output (a traceback,
            # a build log): its last lines are evidence a page of rows would hide.
            if not ends_as_table(payload, layout):
                return 0.0
            # A table wins over the log view (a date column, a `failed` status column are
            # cells, not a log's header and levels) unless, with no header row, its lines
            # start with a timestamp: a log whose fields are delimited.
            if layout.header or not _stamp_led(prefix, layout):
                return _TABLE_SCORE
            return 0.7
        return 0.95 if looks_like_rows(payload) else 0.0

    def prepare(self, payload: object) -> Prepared:
        """Recognise the rows; store text exactly as given, objects as JSONL."""
        if isinstance(payload, str):
            parsed = text_rows(payload)
            if parsed is None:
                return self._fallback(payload)
            raw = payload
            stored_as = "text"
        else:
            table = table_from_payload(payload)
            if table is None:
                return self._fallback(payload)
            raw = to_jsonl(table.rows)
            starts = line_starts_of(raw)
            ends = array("q", starts[1:])
            ends.append(len(raw))
            if not table.rows:
                starts, ends = array("q"), array("q")
            parsed = ParsedRows(table, TextLayout(format=JSONL), starts, ends, line_starts_of(raw))
            stored_as = "jsonl"
        table = parsed.table
        facts: dict[str, Any] = {
            "rows": len(table.rows),
            "columns": list(table.columns),
            "source": table.source,
            "stored_as": stored_as,
        }
        if table.delimiter is not None:
            facts["delimiter"] = table.delimiter
        data = _RowsData(
            table=table, geometry=_ParsedGeometry(parsed, len(raw)), stored_as=stored_as
        )
        return Prepared(raw=raw, data=data, facts=facts)

    @staticmethod
    def _fallback(payload: object) -> Prepared:
        prepared = _TEXT_FALLBACK.prepare(payload)
        prepared.facts["fallback"] = "text"
        return prepared

    # ------------------------------------------------------------------ render

    def render(self, prepared: Prepared, ctx: ViewContext) -> Rendered:
        """Summary, the first page of rows and the next-page reference, within the budget."""
        data = prepared.data
        if not isinstance(data, _RowsData):
            return _TEXT_FALLBACK.render(prepared, ctx)
        options = RowsOptions.from_mapping(ctx.options)
        table = data.table
        raw = prepared.raw if isinstance(prepared.raw, str) else ""
        columns, _ = _shown_columns(table.columns, options)
        stats = data.stats_for(columns[:_MAX_SUMMARY_COLUMNS]) if options.column_summaries else []
        page = _Page(
            rows=table.rows[: options.page_size],
            first_row=1,
            total=len(table.rows),
            columns=list(table.columns),
            delimiter=_display_delimiter(table),
            source=table.source,
            stored_as=data.stored_as,
            geometry=data.geometry,
            record_chars=len(raw),
            record_lines=len(line_starts_of(raw)) if raw else 0,
            record_bytes=utf8_length(raw),
            first_view=True,
        )
        return self._render_page(page, ctx, stats)

    def _render_page(
        self, page: _Page, ctx: ViewContext, stats: Sequence[ColumnStats] = ()
    ) -> Rendered:
        """Fit summaries and rows to the budget; `next` continues at the first row not shown."""
        options = RowsOptions.from_mapping(ctx.options)
        columns, hidden = _shown_columns(page.columns, options)
        stats = list(stats)
        limit = options.max_value_chars
        candidates = _candidate_rows(page.rows, columns, len(page.rows), limit, page.delimiter)
        fence = _layout.equal_cost_fence(
            ctx.counter,
            (line for line, _, _ in candidates),
            (_row_line(values) for _, values, _ in candidates),
            [_stats_line(s) for s in stats],
            [_json(columns), _row_line(columns, page.delimiter)],
        )
        views: dict[tuple[int, int, int], ResultView] = {}

        def build(n_summary: int, n_rows: int, clip_at: int, size: int | None) -> str:
            key = (n_summary, n_rows, clip_at)
            shown = (
                candidates[:n_rows]
                if clip_at == options.max_value_chars
                else _candidate_rows(page.rows, columns, n_rows, clip_at, page.delimiter)
            )
            view = self._view(
                page,
                ctx,
                columns=columns,
                hidden=hidden,
                stats=stats[:n_summary],
                rows=shown,
                clip_limit=clip_at,
                next_size=size,
            )
            views[key] = view
            return self._compose(view, ctx).render(fence)

        def text_at(level: int, clip_at: int) -> str:
            n_rows = max(0, level - len(stats))
            return build(min(level, len(stats)), n_rows, clip_at, None)

        def fit(clip_at: int, guess: int | None) -> tuple[int, str] | None:
            return _layout.largest_fitting(
                lambda lv: text_at(lv, clip_at),
                lo=0,
                hi=len(stats) + len(candidates),
                budget=ctx.budget,
                counter=ctx.counter,
                guess=guess,
            )

        chosen = fit(limit, len(stats) + _guess_rows(candidates, ctx, len(stats)))
        few = min(len(candidates), 10)
        if (
            chosen is not None
            and chosen[0] - len(stats) < few
            and any(clipped for _, _, clipped in candidates[:few])
            and limit > 60
        ):
            # Long values crowd out rows: _layout.clip them shorter before giving up rows.
            limit = 60
            chosen = fit(limit, None)
        if chosen is None:
            return self._minimal(page, ctx, columns, hidden)
        level, text = chosen
        n_summary, capacity = min(level, len(stats)), max(0, level - len(stats))
        last_if_all = page.first_row + capacity - 1
        whole_page = 0 < capacity == len(page.rows) and (page.first_row - 1) % capacity == 0
        if (
            capacity == 0
            or last_if_all >= page.total
            or whole_page  # the next page, of the same size
            or self._next_by_lines(page, capacity)
        ):
            return Rendered(
                content=text,
                view=_layout.stamp_view(views[(n_summary, capacity, limit)], text, ctx),
            )
        # `next` must be a page reference that starts right after the last row shown.
        target = options.page_size
        for shown, size in _page_plans(page.first_row, capacity, target):
            text = build(n_summary, shown, limit, size)
            if len(text) <= ctx.budget.chars and ctx.counter.count(text) <= ctx.budget.tokens:
                return Rendered(
                    content=text,
                    view=_layout.stamp_view(views[(n_summary, shown, limit)], text, ctx),
                )
        return self._minimal(page, ctx, columns, hidden)  # pragma: no cover - 1 row fitted

    def _empty_view(
        self, page: _Page, ctx: ViewContext, columns: list[str], hidden: list[str]
    ) -> ResultView:
        """The record of a page that shows no row."""
        return self._view(
            page,
            ctx,
            columns=columns,
            hidden=hidden,
            stats=[],
            rows=[],
            clip_limit=0,
            next_size=None,
        )

    def _minimal(
        self, page: _Page, ctx: ViewContext, columns: list[str], hidden: list[str]
    ) -> Rendered:
        facts = f"{plural(page.total, 'row')}, {plural(len(page.columns), 'column')}"
        view = self._empty_view(page, ctx, columns, hidden)
        text = _layout.minimal_text(ctx, facts)
        raw = view.references.get("raw")
        if raw is not None and page.first_row <= page.total:
            # Not even one row fits: say how to read the next row's text in parts.
            call = fetch_call(raw, tool_name=ctx.fetch_tool_name)
            nxt = view.references.get("next")
            then = f" Next: {fetch_call(nxt, tool_name=ctx.fetch_tool_name)}." if nxt else ""
            fuller = (
                f"[Tool result omitted: {facts}; row {page.first_row:,} alone does not fit this "
                f"budget. Its text: {call}.{then}]"
            )
            if len(fuller) <= ctx.budget.chars and ctx.counter.count(fuller) <= ctx.budget.tokens:
                text = fuller
        return Rendered(content=text, view=_layout.stamp_view(view, text, ctx))

    @staticmethod
    def _next_by_lines(page: _Page, shown: int) -> bool:
        """Whether `next` is a line range (a line-range fetch over rows on lines of their own)."""
        if not page.line_request or page.first_row + shown > page.total:
            return False
        return page.geometry.row_per_line()

    # ------------------------------------------------------------------ view record

    def _view(
        self,
        page: _Page,
        ctx: ViewContext,
        *,
        columns: list[str],
        hidden: list[str],
        stats: Sequence[ColumnStats],
        rows: Sequence[tuple[str, list[Any], bool]],
        clip_limit: int,
        next_size: int | None,
    ) -> ResultView:
        total = page.total
        first_row = page.first_row
        n = len(rows)
        last_row = first_row + n - 1
        clipped = sum(1 for _, _, c in rows if c)
        delimited = page.delimiter is not None
        summary: dict[str, Any] = {
            "rows": total,
            "columns": list(page.columns),
            "fields_shown": list(columns),
            "fields_hidden": list(hidden),
            "source": page.source,
            "stored_as": page.stored_as,
            "column_summaries": {s.name: s.to_dict() for s in stats},
            "rows_shown": [first_row, last_row] if n else [],
            "rows_with_clipped_values": clipped,
            "value_clip_chars": clip_limit,
            "row_format": "delimited" if delimited else "json",
            "delimiter": page.delimiter,
            "headline": f"rows: {plural(total, 'row')} × {plural(len(page.columns), 'column')}",
        }
        if page.notes:
            summary["notes"] = list(page.notes)
        if not n and not page.first_view and page.rows and first_row <= total:
            summary["row_too_large"] = first_row
        items = [
            {
                "type": "row",
                "row": first_row + i,
                "values": dict(zip(columns, values, strict=False)),
                "clipped": c,
            }
            for i, (_, values, c) in enumerate(rows)
        ]
        references: dict[str, str] = {}
        base = ctx.reference
        if base is not None:
            references["all"] = str(base)
            if n:
                references.update(self._refs(page, base, n, next_size))
            elif first_row <= total and page.rows:
                references.update(self._refs_without_rows(page, base, ctx))
        omitted = _omitted(page.geometry, first_row, last_row) if total else []
        return ResultView(
            kind=self.kind,
            summary=summary,
            items=items,
            total=total,
            unit="rows",
            shown=n,
            observations=_observations(stats, total),
            references=references,
            omitted=omitted,
            truncated=bool(omitted) or clipped > 0 or bool(hidden),
            original_chars=page.record_chars,
            original_lines=page.record_lines,
            original_bytes=page.record_bytes,
        )

    def _refs(self, page: _Page, base: Reference, n: int, next_size: int | None) -> dict[str, str]:
        first, last = page.first_row, page.first_row + n - 1
        refs: dict[str, str] = {}
        if (first - 1) % n == 0:
            refs["current"] = str(base.with_page((first - 1) // n + 1, n))
        elif page.asked is not None:
            refs["current"] = str(page.asked)
        start_char = page.geometry.start(first)[1]
        end_char = page.geometry.end(last)[1]
        if end_char > start_char:
            refs["raw"] = str(base.with_chars(start_char, end_char - start_char))
        if last < page.total:
            if self._next_by_lines(page, n):
                start_line = page.geometry.start(last + 1)[0]
                asked = page.asked
                span = (
                    (asked.end_line - asked.start_line)
                    if asked is not None
                    and asked.start_line is not None
                    and asked.end_line is not None
                    else n - 1
                )
                refs["next"] = str(base.with_lines(start_line, start_line + max(0, span)))
            else:
                size = next_size or n
                refs["next"] = str(base.with_page((first - 1 + n) // size + 1, size))
        return refs

    def _refs_without_rows(self, page: _Page, base: Reference, ctx: ViewContext) -> dict[str, str]:
        """References when no row fitted: where to go on, and the original text of the row."""
        first = page.first_row
        wanted = min(RowsOptions.from_mapping(ctx.options).page_size, self.default_page_size)
        # The first view's summaries may leave no room for rows: a fetched page has more. A
        # fetched page with no row means this row alone is too large: `next` goes on after
        # it (its text is the `raw` reference), so following `next` never stalls.
        start = first if page.first_view else first + 1
        refs: dict[str, str] = {}
        if start <= page.total:
            size = wanted if start == 1 else _divisor_at_most(start - 1, wanted)
            refs["next"] = str(base.with_page((start - 1) // size + 1, size))
        try:
            start_char = page.geometry.start(first)[1]
            end_char = page.geometry.end(first)[1]
        except LookupError:
            return refs
        if end_char > start_char:
            refs["raw"] = str(base.with_chars(start_char, end_char - start_char))
        return refs

    def _compose(self, view: ResultView, ctx: ViewContext) -> _layout.Layout:
        """The layout, read from the view record only."""
        s = view.summary
        total = int(view.total or 0)
        columns: list[str] = list(s.get("fields_shown", []))
        all_columns: list[str] = list(s.get("columns", []))
        hidden: list[str] = list(s.get("fields_hidden", []))
        rows_shown: list[int] = list(s.get("rows_shown", []))
        sections: list[_layout.Section] = []
        delimiter = s.get("delimiter") if s.get("row_format") == "delimited" else None
        summary_lines = [_json(columns)]
        stats: dict[str, Any] = s.get("column_summaries", {})
        for name in columns:
            if name in stats:
                summary_lines.append(_stats_line(_stats_from_dict(name, stats[name])))
        sections.append(
            _layout.Section(
                title=_layout.SUMMARY_TITLE + ": fields, then one line per field",
                lines=summary_lines,
            )
        )
        if view.items:
            first, last = rows_shown
            if delimiter is None:
                layout = "one JSON array per row"
            else:
                layout = f"one row per line, fields separated by {delimiter!r} as in the output"
            title = f"{_rows_phrase(first, last)} of {total:,} ({layout}, in the field order above)"
            lines = [_row_line(list(item["values"].values()), delimiter) for item in view.items]
            sections.append(_layout.Section(title=title, lines=lines))
        if view.observations:
            sections.append(
                _layout.Section(
                    title=_layout.OBSERVATIONS_TITLE, lines=[f"- {o}" for o in view.observations]
                )
            )
        facts = f"{plural(total, 'row')} × {plural(len(all_columns), 'field')}"
        if view.original_bytes:
            as_what = " as JSONL" if s.get("stored_as") == "jsonl" else ""
            facts += f", {_layout.human_size(view.original_bytes, 'byte')}{as_what}"
        shown_parts = []
        if len(summary_lines) > 1:
            shown_parts.append(
                f"{plural(len(summary_lines) - 1, 'field summary', 'field summaries')}"
            )
        if view.items:
            shown_parts.append(_rows_phrase(rows_shown[0], rows_shown[1]))
        else:
            shown_parts.append("no rows")
        header = _layout.header_text(ctx, self.kind, facts, ", ".join(shown_parts))
        omitted_parts: list[str] = []
        if view.items:
            first, last = rows_shown
            if first > 1:
                omitted_parts.append(f"{_rows_phrase(1, first - 1)}")
            if last < total:
                omitted_parts.append(
                    f"{_rows_phrase(last + 1, total)} ({plural(total - last, 'row')})"
                )
        elif s.get("row_too_large"):
            omitted_parts.append(
                f"row {int(s['row_too_large']):,}, which alone does not fit this budget"
            )
        elif total:
            omitted_parts.append(f"all {plural(total, 'row')}")
        clipped = int(s.get("rows_with_clipped_values", 0))
        if clipped:
            omitted_parts.append(
                f"the ends of long values in {plural(clipped, 'row')} (clipped at "
                f"{int(s.get('value_clip_chars', 0)):,} chars, marked …)"
            )
        if hidden:
            omitted_parts.append(f"{plural(len(hidden), 'field')} not in the tool's field list")
        omitted_parts.extend(str(note) for note in s.get("notes", []))
        refs: list[tuple[str, str]] = []
        if "next" in view.references:
            refs.append(("Next page", view.references["next"]))
        if view.items and "raw" in view.references and (clipped or hidden):
            refs.append(("These rows as the original text", view.references["raw"]))
        if s.get("row_too_large") and "raw" in view.references:
            refs.append((f"Row {int(s['row_too_large']):,} as text", view.references["raw"]))
        footer = _layout.footer_text(ctx, omitted="; ".join(omitted_parts) or None, references=refs)
        return _layout.Layout(header=header, sections=sections, footer=footer)

    # ------------------------------------------------------------------ fetched pages

    def fetch_slice(self, reference: Reference, record: RecordInfo, ctx: ViewContext) -> FetchSteps:
        """Serve a fetch of rows: a page, the rows on a line range, or the original text.

        Pages and line ranges are shown as rows (the tool's field list and value clipping,
        the output's own delimiter); an `offset`/`limit` range, binary and capped records are
        shown as the original text. Rows laid out one per line are read as a line range
        (plus the first and last lines of the record, for the header and the row count);
        rows that may span lines are found by parsing the whole record (at most
        `record.max_read` characters).
        """
        if (
            record.binary
            or record.capped
            or reference.offset is not None
            or reference.limit is not None
            or reference.path is not None
        ):
            return (yield from ResultViewBuilder.fetch_slice(self, reference, record, ctx))
        head = yield SliceRequest(offset=0, limit=SNIFF_PREFIX_CHARS, max_size=SNIFF_PREFIX_CHARS)
        head_text = head.data if isinstance(head.data, str) else ""
        layout = detect_layout(head_text, whole=head.end_offset >= record.size)
        if layout is None:
            return (yield from ResultViewBuilder.fetch_slice(self, reference, record, ctx))
        if layout.line_rows:
            return (yield from self._fetch_line_rows(reference, record, ctx, layout, head_text))
        if record.size > record.max_read:
            rid = ctx.reference or reference.base()
            call = fetch_call(
                rid.with_chars(0, max(1_000, ctx.budget.chars // 2)), tool_name=ctx.fetch_tool_name
            )
            msg = (
                f"This result is {record.size:,} chars and its rows may span lines, so finding "
                f"a page of rows means parsing all of it, which is more than a fetch reads at "
                f"once ({record.max_read:,} chars). Read it as text instead: {call}, then "
                "continue with the `next` reference."
            )
            raise FetchSliceError(msg)
        whole = yield SliceRequest(max_size=record.max_read)
        text = whole.data if isinstance(whole.data, str) else ""
        parsed = parse_text_rows(text, layout) if whole.complete else None
        if parsed is None:
            return (yield from ResultViewBuilder.fetch_slice(self, reference, record, ctx))
        geometry = _ParsedGeometry(parsed, record.size)
        first, last, line_request = self._wanted_rows(reference, geometry)
        table = parsed.table
        page = _Page(
            rows=table.rows[first - 1 : last],
            first_row=first,
            total=geometry.total,
            columns=list(table.columns),
            delimiter=_display_delimiter(table),
            source=table.source,
            stored_as="text",
            geometry=geometry,
            record_chars=record.size,
            record_lines=record.lines,
            record_bytes=utf8_length(text),
            asked=reference,
            line_request=line_request,
        )
        return self._page_or_nothing(page, ctx)

    def _wanted_rows(self, reference: Reference, geometry: _Geometry) -> tuple[int, int, bool]:
        """First and last row a reference asks for, and whether it asked by lines."""
        total = geometry.total
        if reference.page is not None or reference.page_size is not None:
            size = reference.page_size or self.default_page_size
            first = ((reference.page or 1) - 1) * size + 1
            return first, min(total, first + size - 1), False
        if reference.start_line is not None or reference.end_line is not None:
            start = reference.start_line or 1
            end = reference.end_line if reference.end_line is not None else 2**62
            first, last = geometry.line_range_rows(start, max(start, end))
            return first, last, True
        return 1, total, False

    def _page_or_nothing(self, page: _Page, ctx: ViewContext) -> Rendered:
        if page.rows:
            return self._render_page(page, ctx)
        first = page.first_row
        if first > page.total:
            what = f"Nothing to show: the result has only {plural(page.total, 'row')}"
        else:
            what = f"No row starts on the lines asked for; the next row is row {first:,}"
        page.notes.append(what)
        columns, hidden = _shown_columns(page.columns, RowsOptions.from_mapping(ctx.options))
        view = self._empty_view(page, ctx, columns, hidden)
        base = ctx.reference
        parts = [f"{what} (asked: {page.asked})."]
        if base is not None:
            parts.append(f"Full result: {base}.")
            size = self.default_page_size
            if first <= page.total:  # go on from the next row
                if first > 1:
                    size = _divisor_at_most(first - 1, size)
                nxt = base.with_page((first - 1) // size + 1, size)
                view.references["next"] = str(nxt)
                parts.append(f"Next rows: {fetch_call(nxt, tool_name=ctx.fetch_tool_name)}.")
            elif page.total:
                first_page = base.with_page(1, size)
                view.references["first"] = str(first_page)
                parts.append(
                    f"First page: {fetch_call(first_page, tool_name=ctx.fetch_tool_name)}."
                )
        header = _layout.header_text(ctx, self.kind, f"{plural(page.total, 'row')}", "no rows")
        text = f"{header}\n[{' '.join(parts)}]"
        if len(text) > ctx.budget.chars or ctx.counter.count(text) > ctx.budget.tokens:
            text = _layout.minimal_text(ctx, what)
        return Rendered(content=text, view=_layout.stamp_view(view, text, ctx))

    def _fetch_line_rows(
        self,
        reference: Reference,
        record: RecordInfo,
        ctx: ViewContext,
        layout: TextLayout,
        head: str,
    ) -> FetchSteps:
        """A page of a record whose rows are its lines: read only that line range."""
        data_start = layout.data_start
        head_starts = line_starts_of(head)
        if data_start >= len(head_starts) and record.lines > data_start:
            # The header is longer than the sniffed prefix: rows cannot be placed.
            return (yield from ResultViewBuilder.fetch_slice(self, reference, record, ctx))
        first_char = head_starts[data_start] if data_start < len(head_starts) else record.size
        data_end_line, data_end_char = yield from _data_end(record, layout, data_start)
        total = max(0, data_end_line - data_start)
        probe = _LineGeometry(
            data_start=data_start,
            total=total,
            first_char=first_char,
            data_end_char=data_end_char,
            window_first=1,
            window_starts=[],
            window_end=first_char,
        )
        first, last, line_request = self._wanted_rows(reference, probe)
        columns = list(layout.columns)
        if first > last or first > total:
            page = self._line_page(layout, probe, [], first, record, reference, line_request)
            return self._page_or_nothing(page, ctx)
        max_size = min(record.max_read, max(_PAGE_READ_MIN_CHARS, ctx.budget.chars * 4))
        part = yield SliceRequest(
            start_line=data_start + first, end_line=data_start + last, max_size=max_size
        )
        text = part.data if isinstance(part.data, str) else ""
        lines = text.split("\n")
        if text.endswith("\n") or not text:
            lines.pop()
        elif not part.complete:
            lines.pop()  # the read was cut inside this row: it is not shown
        rows = line_rows(lines, layout)
        if rows is None:  # a line that is not a JSON object: show the text as it is
            return (yield from ResultViewBuilder.fetch_slice(self, reference, record, ctx))
        if not rows:
            call = fetch_call(
                (ctx.reference or reference.base()).with_chars(part.offset, 20_000),
                tool_name=ctx.fetch_tool_name,
            )
            msg = (
                f"Row {first:,} alone is longer than {max_size:,} chars, so it cannot be shown "
                f"as a row. Read it as text: {call}."
            )
            raise FetchSliceError(msg)
        starts = _line_offsets(part.offset, lines)
        window_end = starts[-1] + len(lines[-1]) + 1
        geometry = _LineGeometry(
            data_start=data_start,
            total=total,
            first_char=first_char,
            data_end_char=max(data_end_char, min(window_end, record.size)),
            window_first=first,
            window_starts=starts,
            window_end=min(window_end, record.size),
        )
        if layout.format == JSONL:
            columns = _columns_of(rows)
        page = self._line_page(layout, geometry, rows, first, record, reference, line_request)
        page.columns = columns
        return self._page_or_nothing(page, ctx)

    @staticmethod
    def _line_page(  # noqa: PLR0917 - private, called twice
        layout: TextLayout,
        geometry: _LineGeometry,
        rows: Sequence[Mapping[str, Any]],
        first: int,
        record: RecordInfo,
        reference: Reference,
        line_request: bool,
    ) -> _Page:
        return _Page(
            rows=rows,
            first_row=first,
            total=geometry.total,
            columns=list(layout.columns),
            delimiter=layout.delimiter if layout.format != JSONL else None,
            source=layout.source,
            stored_as="text",
            geometry=geometry,
            record_chars=record.size,
            record_lines=record.lines,
            record_bytes=0,
            asked=reference,
            line_request=line_request,
        )

    def render_slice(
        self, data: str | bytes, *, ctx: ViewContext, **at: Unpack[SliceAt]
    ) -> Rendered | None:
        """Render lines of a JSONL record (one row per line) read by a caller as rows.

        `fetch_slice` is what the fetch tool uses; this renders a slice that was read
        without it. Returns `None` (the plain text slice is used instead) for character
        ranges and for data that is not JSONL rows.
        """
        reference, slice_start_line = at["reference"], at["slice_start_line"]
        slice_offset = at["slice_offset"]
        record_size, record_lines = at["record_size"], at["record_lines"]
        if not isinstance(data, str) or slice_start_line is None:
            return None
        if reference.offset is not None or reference.limit is not None:
            return None
        text = data
        rows = rows_from_jsonl(text)
        if rows is None and not text.endswith("\n") and "\n" in text:
            # A read capped by size ends inside a row: show the whole rows before it (the
            # next reference starts at the cut row).
            text = text[: text.rindex("\n") + 1]
            rows = rows_from_jsonl(text)
        if rows is None:
            return None
        lines = text.split("\n")
        if text.endswith("\n"):
            lines.pop()
        starts = _line_offsets(slice_offset, lines)
        end = starts[-1] + len(lines[-1]) + 1 if lines else slice_offset
        geometry = _LineGeometry(
            data_start=0,
            total=record_lines,
            first_char=0,
            data_end_char=record_size,
            window_first=slice_start_line,
            window_starts=starts,
            window_end=min(end, record_size),
        )
        page = _Page(
            rows=rows,
            first_row=slice_start_line,
            total=record_lines,
            columns=_columns_of(rows),
            delimiter=None,
            source="jsonl",
            stored_as="jsonl",
            geometry=geometry,
            record_chars=record_size,
            record_lines=record_lines,
            record_bytes=0,
            asked=reference,
            line_request=reference.start_line is not None or reference.end_line is not None,
        )
        return self._page_or_nothing(page, ctx)


# --------------------------------------------------------------------------- helpers


def _first_element_is_object(prefix: str) -> bool:
    """Whether a JSON array's first element decodes as an object (within the prefix)."""
    start = prefix.index("{")
    try:
        value, _ = json.JSONDecoder().raw_decode(prefix, start)
    except ValueError:
        return len(prefix) >= SNIFF_PREFIX_CHARS  # an element longer than the prefix
    return isinstance(value, dict)


def _candidate_rows(
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[str],
    limit: int,
    clip_chars: int,
    delimiter: str | None = None,
) -> list[tuple[str, list[Any], bool]]:
    out: list[tuple[str, list[Any], bool]] = []
    for row in rows[:limit]:
        values: list[Any] = []
        clipped = False
        for col in columns:
            value, cut = _cell(row.get(col), clip_chars)
            values.append(value)
            clipped = clipped or cut
        out.append((_row_line(values, delimiter), values, clipped))
    return out


def _guess_rows(
    candidates: Sequence[tuple[str, list[Any], bool]], ctx: ViewContext, overhead_lines: int
) -> int:
    """Rows that roughly fit, from per-row character counts (a first probe only)."""
    if not candidates:
        return 0
    sample = candidates[: min(len(candidates), 50)]
    sample_text = "\n".join(line for line, _, _ in sample)
    tokens = max(1, ctx.counter.count(sample_text))
    per_row_tokens = tokens / len(sample)
    per_row_chars = len(sample_text) / len(sample)
    room_tokens = ctx.budget.tokens * 0.8 - 150 - overhead_lines * 20
    room_chars = ctx.budget.chars * 0.8 - 600 - overhead_lines * 80
    return max(0, int(min(room_tokens / per_row_tokens, room_chars / max(1.0, per_row_chars))))


def _stats_from_dict(name: str, data: Mapping[str, Any]) -> ColumnStats:
    return ColumnStats(
        name=name,
        count=int(data.get("count", 0)),
        nulls=int(data.get("nulls", 0)),
        types=dict(data.get("types", {})),
        distinct=int(data.get("distinct", 0)),
        distinct_capped=bool(data.get("distinct_at_least", False)),
        top=[(v, int(n)) for v, n in data.get("top", [])],
        minimum=data.get("min"),
        maximum=data.get("max"),
        max_length=int(data.get("max_length", 0)),
    )


def _observations(stats: Sequence[ColumnStats], total: int) -> list[str]:
    notes: list[str] = []
    for s in stats:
        if (
            total >= 20
            and not s.distinct_capped
            and s.nulls == 0
            and s.distinct == total
            and set(s.types) <= {"int", "str"}
        ):
            notes.append(f"{_label(s.name)} may be a key: every row has a different value.")
            break
    for s in stats:
        if s.top and _non_null_share(s) >= 0.5 and 1 < s.distinct <= 10 and total >= 20:
            top_value, top_count = s.top[0]
            share = top_count / max(1, s.count - s.nulls)
            notes.append(
                f"{_label(s.name)} looks categorical ({s.distinct} values); "
                f"{_label(top_value)} is {share:.0%} of its non-null values."
            )
            break
    return [clean_for_display(n) for n in notes]


def _non_null_share(stats: ColumnStats) -> float:
    """Share of rows where the column has a value.

    Args:
        stats: Column facts.

    Returns:
        A number in [0, 1].
    """
    return 0.0 if not stats.count else (stats.count - stats.nulls) / stats.count


def _columns_of(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The keys of JSON rows, in the order they first appear."""
    return list(dict.fromkeys(key for row in rows for key in row))


def _line_offsets(start: int, lines: Sequence[str]) -> list[int]:
    """The offset of each of `lines` (split on newlines) when the first starts at `start`."""
    offsets = [start]
    for line in lines[:-1]:
        offsets.append(offsets[-1] + len(line) + 1)
    return offsets


def _data_end(
    record: RecordInfo, layout: TextLayout, data_start: int
) -> Generator[SliceRequest, SliceRead, tuple[int, int]]:
    """Where the rows end: before trailing blank lines (and psql's "(N rows)" footer).

    Reads the record's tail backwards, a few lines at a time (fetch steps: it yields the
    reads), and returns the last row's line number and the offset after it.
    """
    data_end_line, data_end_char = record.lines, record.size
    while data_end_line > data_start:
        lo = max(data_start + 1, data_end_line - _TAIL_LINES + 1)
        tail = yield SliceRequest(start_line=lo, end_line=data_end_line, max_size=1 << 20)
        tail_text = tail.data if isinstance(tail.data, str) else ""
        lines = tail_text.split("\n")
        if tail_text.endswith("\n"):
            lines.pop()
        if not tail.complete or len(lines) != data_end_line - lo + 1:
            break  # huge trailing lines: they are rows
        offsets = _line_offsets(tail.offset, lines)
        index = len(lines) - 1
        while index >= 0 and is_trailer_line(lines[index], layout):
            index -= 1
        if index >= 0:
            return lo + index, min(offsets[index] + len(lines[index]) + 1, record.size)
        data_end_line, data_end_char = lo - 1, tail.offset
    return data_end_line, min(data_end_char, record.size)
