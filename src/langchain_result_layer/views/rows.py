r"""The rows view: database rows, records, CSV and JSON arrays of objects.

The model sees the total count, small column summaries (nulls, distinct values, the top
values of low-cardinality columns such as a status column, min/max of numbers and dates), the
first page of rows as JSON arrays in column order, and the reference of the next page:
`ref://tool-result/<id>/rows?page=2&page_size=N`.

The stored record is one JSON object per line (JSONL), so a page of `N` rows is a line range
of the record: page `p` is lines `(p-1)*N+1 .. p*N`. Fetching a page renders it as rows again,
with its own next-page reference.

Options (`ToolPolicy.view_options`):

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
    ```
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from langchain_result_layer.core.normalize import clean_for_display
from langchain_result_layer.core.reference import MAX_PAGE_SIZE, Reference
from langchain_result_layer.core.render import plural
from langchain_result_layer.core.view import OmittedRange, ResultView
from langchain_result_layer.views._layout import (
    OBSERVATIONS_TITLE,
    SUMMARY_TITLE,
    Layout,
    Section,
    clip,
    footer_text,
    header_text,
    human_size,
    largest_fitting,
    minimal_text,
    new_fence,
    stamp_view,
)
from langchain_result_layer.views._tabular import (
    SNIFF_PREFIX_CHARS,
    ColumnStats,
    Table,
    column_stats,
    looks_like_rows,
    rows_from_jsonl,
    sniff_delimiter,
    table_from_payload,
    to_jsonl,
)
from langchain_result_layer.views.base import Prepared, Rendered, ResultViewBuilder, ViewContext
from langchain_result_layer.views.text import TextView

__all__ = ["RowsOptions", "RowsView"]

_MAX_SUMMARY_COLUMNS = 40
_TOP_SHOWN = 5
_TEXT_FALLBACK = TextView()


@dataclass(frozen=True, slots=True)
class RowsOptions:
    """Options of the rows view, read from `ToolPolicy.view_options`.

    Attributes:
        fields: Fields to show (`None`: all).
        page_size: Most rows on the first page.
        max_value_chars: Long values are clipped to this many characters.
        column_summaries: Whether to show column summaries.

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


@dataclass(slots=True)
class _RowsData:
    table: Table
    line_ends: list[int]
    stats: dict[tuple[str, ...], list[ColumnStats]] = field(default_factory=dict)

    def stats_for(self, columns: Sequence[str]) -> list[ColumnStats]:
        key = tuple(columns)
        if key not in self.stats:
            self.stats[key] = column_stats(self.table.rows, columns, top_k=_TOP_SHOWN)
        return self.stats[key]


# --------------------------------------------------------------------------- formatting


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _cell(value: Any, limit: int) -> tuple[Any, bool]:
    """A value as shown: long strings and long nested values are clipped."""
    if isinstance(value, str):
        text, cut = clip(value, limit)
        return text, cut
    if isinstance(value, (dict, list)):
        text = _json(value)
        if len(text) > limit:
            return clip(text, limit)[0], True
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
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="").writerow(texts)
        return clean_for_display(buffer.getvalue())
    return clean_for_display(delimiter.join(texts))


def _label(value: Any) -> str:
    text = _json(value)
    return clip(text, 40)[0]


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


def _shown_columns(table: Table, options: RowsOptions) -> tuple[list[str], list[str]]:
    if options.fields is None:
        return list(table.columns), []
    wanted = [f for f in options.fields if f in table.columns]
    if not wanted:  # a whitelist that matches nothing would hide everything: show all
        return list(table.columns), []
    hidden = [c for c in table.columns if c not in wanted]
    return wanted, hidden


def _rows_phrase(first: int, last: int) -> str:
    if last < first:
        return "no rows"
    return f"row {first:,}" if first == last else f"rows {first:,}-{last:,}"


# --------------------------------------------------------------------------- the view


class RowsView(ResultViewBuilder):
    """Rows with a count, column summaries, a page of rows and a next-page reference.

    Example:
        ```python
        from langchain_result_layer.views import choose_view

        assert choose_view([{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]).kind == "rows"
        ```
    """

    kind: ClassVar[str] = "rows"
    default_page_size: ClassVar[int] = 100

    # ------------------------------------------------------------------ sniff / prepare

    def sniff(self, payload: object) -> float:
        """Row containers score high; delimited text and JSON arrays of objects moderately."""
        if isinstance(payload, str):
            prefix = payload[:SNIFF_PREFIX_CHARS]
            head = prefix.lstrip()[:2]
            if head.startswith("[") and head[1:2] in ("{", "\n", " ", "\r", "\t"):
                probe = prefix.lstrip()[1:].lstrip()
                return 0.8 if probe.startswith("{") else 0.0
            if sniff_delimiter(prefix) is not None:
                return 0.7
            return 0.0
        return 0.95 if looks_like_rows(payload) else 0.0

    def prepare(self, payload: object) -> Prepared:
        """Recognise the rows and store them as JSONL (one object per line)."""
        table = table_from_payload(payload)
        if table is None:
            prepared = _TEXT_FALLBACK.prepare(payload)
            prepared.facts["fallback"] = "text"
            return prepared
        raw = to_jsonl(table.rows)
        line_ends = _iter_line_ends(raw)
        facts = {
            "rows": len(table.rows),
            "columns": list(table.columns),
            "source": table.source,
        }
        if table.delimiter is not None:
            facts["delimiter"] = table.delimiter
        return Prepared(raw=raw, data=_RowsData(table=table, line_ends=line_ends), facts=facts)

    # ------------------------------------------------------------------ render

    def render(self, prepared: Prepared, ctx: ViewContext) -> Rendered:
        """Summary, the first page of rows and the next-page reference, within the budget."""
        data = prepared.data
        if not isinstance(data, _RowsData):
            return _TEXT_FALLBACK.render(prepared, ctx)
        options = RowsOptions.from_mapping(ctx.options)
        table = data.table
        raw = prepared.raw if isinstance(prepared.raw, str) else ""
        columns, hidden = _shown_columns(table, options)
        total = len(table.rows)
        stats = data.stats_for(columns[:_MAX_SUMMARY_COLUMNS]) if options.column_summaries else []
        max_rows = min(total, options.page_size)
        delimiter = table.delimiter if table.source == "csv" else None
        candidates = _candidate_rows(
            table.rows, columns, max_rows, options.max_value_chars, delimiter
        )
        summary_lines = [_stats_line(s) for s in stats]
        fence = new_fence(
            (line for line, _, _ in candidates),
            (_row_line(values) for _, values, _ in candidates),
            summary_lines,
            [_json(columns), _row_line(columns, delimiter)],
        )
        base_ref = ctx.reference

        def build_view(n_summary: int, n_rows: int, limit: int) -> ResultView:
            shown = (
                candidates
                if limit == options.max_value_chars
                else _candidate_rows(table.rows[:n_rows], columns, n_rows, limit, delimiter)
            )
            shown = shown[:n_rows]
            return self._view(
                ctx=ctx,
                table=table,
                raw=raw,
                line_ends=data.line_ends,
                columns=columns,
                hidden=hidden,
                stats=stats[:n_summary],
                rows=shown,
                clip_limit=limit,
                base_ref=base_ref,
                source=table.source,
            )

        levels = len(stats) + max_rows
        chosen: tuple[int, str] | None = None
        view_at: dict[int, ResultView] = {}

        def text_at(level: int, limit: int) -> str:
            n_summary = min(level, len(stats))
            n_rows = max(0, level - len(stats))
            view = build_view(n_summary, n_rows, limit)
            view_at[level] = view
            return self._compose(view, ctx).render(fence)

        limit = options.max_value_chars
        guess = len(stats) + _guess_rows(candidates, ctx, len(stats))
        chosen = largest_fitting(
            lambda lv: text_at(lv, limit),
            lo=0,
            hi=levels,
            budget=ctx.budget,
            counter=ctx.counter,
            guess=guess,
        )
        few = min(max_rows, 10)
        if (
            chosen is not None
            and chosen[0] - len(stats) < few
            and any(clipped for _, _, clipped in candidates[:few])
            and limit > 60
        ):
            # Long values crowd out rows: clip them shorter before giving up rows.
            limit = 60
            view_at.clear()
            chosen = largest_fitting(
                lambda lv: text_at(lv, limit),
                lo=0,
                hi=levels,
                budget=ctx.budget,
                counter=ctx.counter,
            )
        if chosen is None:
            text = minimal_text(
                ctx, f"{plural(total, 'row')}, {plural(len(table.columns), 'column')}"
            )
            view = build_view(0, 0, limit)
            view.items = []
            return Rendered(content=text, view=stamp_view(view, text, ctx))
        level, text = chosen
        view = view_at.get(level) or build_view(
            min(level, len(stats)), max(0, level - len(stats)), limit
        )
        return Rendered(content=text, view=stamp_view(view, text, ctx))

    # ------------------------------------------------------------------ view record

    def _view(
        self,
        *,
        ctx: ViewContext,
        table: Table,
        raw: str,
        line_ends: Sequence[int],
        columns: list[str],
        hidden: list[str],
        stats: list[ColumnStats],
        rows: list[tuple[str, list[Any], bool]],
        clip_limit: int,
        base_ref: Reference | None,
        source: str,
        first_row: int = 1,
        record_rows: int | None = None,
    ) -> ResultView:
        total = len(table.rows) if record_rows is None else record_rows
        n = len(rows)
        last_row = first_row + n - 1
        clipped = sum(1 for _, _, c in rows if c)
        summary: dict[str, Any] = {
            "rows": total,
            "columns": list(table.columns),
            "fields_shown": list(columns),
            "fields_hidden": list(hidden),
            "source": source,
            "column_summaries": {s.name: s.to_dict() for s in stats},
            "rows_shown": [first_row, last_row] if n else [],
            "rows_with_clipped_values": clipped,
            "value_clip_chars": clip_limit,
            "row_format": "delimited" if source == "csv" and table.delimiter else "json",
            "delimiter": table.delimiter if source == "csv" else None,
            "headline": f"rows: {plural(total, 'row')} × {plural(len(table.columns), 'column')}",
        }
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
        omitted: list[OmittedRange] = []
        if base_ref is not None:
            references["all"] = str(base_ref)
            if n:
                if first_row == 1:
                    references["current"] = str(base_ref.with_page(1, n))
                else:
                    references["current"] = str(base_ref.with_lines(first_row, last_row))
        if n < total - first_row + 1 or first_row > 1:
            omitted = _omitted_rows(raw, line_ends, first_row, last_row, total)
        if base_ref is not None and last_row < total:
            if first_row == 1 and n:
                references["next"] = str(base_ref.with_page(2, n))
            else:
                start = last_row + 1
                size = max(n, 1)
                references["next"] = str(base_ref.with_lines(start, min(total, start + size - 1)))
        observations = _observations(stats, total)
        return ResultView(
            kind=self.kind,
            summary=summary,
            items=items,
            total=total,
            unit="rows",
            shown=n,
            observations=observations,
            references=references,
            omitted=omitted,
            truncated=bool(omitted) or clipped > 0 or bool(hidden),
            original_chars=len(raw),
            original_lines=total,
            original_bytes=len(raw.encode("utf-8", "surrogatepass")) if raw else 0,
        )

    def _compose(self, view: ResultView, ctx: ViewContext) -> Layout:
        """The layout, read from the view record only."""
        s = view.summary
        total = int(view.total or 0)
        columns: list[str] = list(s.get("fields_shown", []))
        all_columns: list[str] = list(s.get("columns", []))
        hidden: list[str] = list(s.get("fields_hidden", []))
        rows_shown: list[int] = list(s.get("rows_shown", []))
        sections: list[Section] = []
        delimiter = s.get("delimiter") if s.get("row_format") == "delimited" else None
        summary_lines = [_json(columns)]
        stats: dict[str, Any] = s.get("column_summaries", {})
        for name in columns:
            if name in stats:
                summary_lines.append(_stats_line(_stats_from_dict(name, stats[name])))
        sections.append(
            Section(title=SUMMARY_TITLE + ": fields, then one line per field", lines=summary_lines)
        )
        if view.items:
            first, last = rows_shown
            if delimiter is None:
                layout = "one JSON array per row"
            else:
                layout = f"one row per line, fields separated by {delimiter!r} as in the output"
            title = f"{_rows_phrase(first, last)} of {total:,} ({layout}, in the field order above)"
            lines = [_row_line(list(item["values"].values()), delimiter) for item in view.items]
            sections.append(Section(title=title, lines=lines))
        if view.observations:
            sections.append(
                Section(title=OBSERVATIONS_TITLE, lines=[f"- {o}" for o in view.observations])
            )
        facts = f"{plural(total, 'row')} × {plural(len(all_columns), 'field')}"
        if view.original_bytes:
            facts += f", {human_size(view.original_bytes, 'byte')} as JSONL"
        shown_parts = []
        if len(summary_lines) > 1:
            shown_parts.append(
                f"{plural(len(summary_lines) - 1, 'field summary', 'field summaries')}"
            )
        if view.items:
            shown_parts.append(_rows_phrase(rows_shown[0], rows_shown[1]))
        else:
            shown_parts.append("no rows")
        header = header_text(ctx, self.kind, facts, ", ".join(shown_parts))
        omitted_parts: list[str] = []
        if view.items:
            first, last = rows_shown
            if first > 1:
                omitted_parts.append(f"{_rows_phrase(1, first - 1)}")
            if last < total:
                omitted_parts.append(
                    f"{_rows_phrase(last + 1, total)} ({plural(total - last, 'row')})"
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
        refs: list[tuple[str, str]] = []
        if "next" in view.references:
            refs.append(("Next page", view.references["next"]))
        elif view.items and "current" in view.references and clipped:
            refs.append(("Unclipped rows", view.references["current"]))
        footer = footer_text(ctx, omitted="; ".join(omitted_parts) or None, references=refs)
        return Layout(header=header, sections=sections, footer=footer)

    # ------------------------------------------------------------------ fetched pages

    def render_slice(
        self,
        data: str | bytes,
        *,
        reference: Reference,
        slice_start_line: int | None,
        slice_offset: int,
        record_size: int,
        record_lines: int,
        ctx: ViewContext,
    ) -> Rendered | None:
        """Render a fetched page of the stored JSONL as rows, with its own next reference.

        Returns `None` (the plain text slice is used instead) for character-range reads and
        for records that are not JSONL rows.
        """
        if not isinstance(data, str) or slice_start_line is None:
            return None
        rows = rows_from_jsonl(data)
        if rows is None and not data.endswith("\n") and "\n" in data:
            # A read capped by size ends inside a row: show the whole rows before it (the
            # next reference starts at the cut row).
            rows = rows_from_jsonl(data[: data.rindex("\n") + 1])
        if rows is None:
            return None
        options = RowsOptions.from_mapping(ctx.options)
        columns_seen: dict[str, None] = {}
        for row in rows:
            for key in row:
                columns_seen.setdefault(key, None)
        table = Table(columns=list(columns_seen), rows=rows, source="jsonl")
        columns, hidden = _shown_columns(table, options)
        candidates = _candidate_rows(rows, columns, len(rows), options.max_value_chars)
        fence = new_fence((line for line, _, _ in candidates), [_json(columns)])
        base = ctx.reference or reference.base()
        line_ends: list[int] = []  # offsets are relative to the slice: not reported
        view_at: dict[int, ResultView] = {}

        def text_at(n: int) -> str:
            view = self._view(
                ctx=ctx,
                table=table,
                raw="",
                line_ends=line_ends,
                columns=columns,
                hidden=hidden,
                stats=[],
                rows=candidates[:n],
                clip_limit=options.max_value_chars,
                base_ref=base,
                source="jsonl",
                first_row=slice_start_line,
                record_rows=record_lines,
            )
            view.summary["slice_rows"] = len(rows)
            view_at[n] = view
            return self._compose(view, ctx).render(fence)

        chosen = largest_fitting(
            text_at,
            lo=0,
            hi=len(candidates),
            budget=ctx.budget,
            counter=ctx.counter,
            guess=_guess_rows(candidates, ctx, 0),
        )
        if chosen is None:
            text = minimal_text(ctx, f"{plural(len(rows), 'row')} of {record_lines:,}")
            view = ResultView(kind=self.kind, total=record_lines, unit="rows", truncated=True)
            return Rendered(content=text, view=stamp_view(view, text, ctx))
        n, text = chosen
        view = view_at[n]
        view.original_chars = record_size
        return Rendered(content=text, view=stamp_view(view, text, ctx))


# --------------------------------------------------------------------------- helpers


def _iter_line_ends(raw: str) -> list[int]:
    ends: list[int] = []
    pos = raw.find("\n")
    while pos >= 0:
        ends.append(pos + 1)
        pos = raw.find("\n", pos + 1)
    if raw and not raw.endswith("\n"):
        ends.append(len(raw))
    return ends


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


def _omitted_rows(
    raw: str, line_ends: Sequence[int], first: int, last: int, total: int
) -> list[OmittedRange]:
    """Rows outside `first..last`, as line/char ranges of the stored JSONL."""
    out: list[OmittedRange] = []

    def char_at(row: int) -> int:
        # Offset of the first character of `row` (1-based) in the JSONL.
        if not line_ends:
            return 0
        return 0 if row <= 1 else line_ends[min(row - 1, len(line_ends)) - 1]

    if first > 1:
        out.append(
            OmittedRange(
                start_line=1,
                end_line=first - 1,
                start_char=char_at(1),
                end_char=char_at(first),
                lines=first - 1,
            )
        )
    start = max(first, last + 1)
    if start <= total:
        end_char = line_ends[-1] if line_ends else len(raw)
        out.append(
            OmittedRange(
                start_line=start,
                end_line=total,
                start_char=char_at(start),
                end_char=max(char_at(start), end_char),
                lines=total - start + 1,
            )
        )
    return out


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
