r"""The log view: what a log holds, in numbers, and the lines around its errors.

The model sees the line count, the time range (common timestamp formats), how many lines
each level has, the most frequent message templates with their counts (repeated lines
grouped; see `_templates`), and windows around the first and last errors and other
high-priority lines (see `_salience`), with references to the error windows.

Template counts come from all lines up to `TEMPLATE_SAMPLE_LINES`, level counts and the time
range from all lines up to `EXACT_FACTS_LINES`; longer logs are sampled in windows of
consecutive lines spread over the log (the first at its start, the last at its end) and the
view says so. A huge log is never split or scanned line by line as a whole (see `_salience`
for how its errors are found).

Example:
    ```python
    from langchain_result_layer.views.logs import LogView

    log = "\n".join(f"2024-01-02 10:00:{i % 60:02d} INFO worker {i} done" for i in range(500))
    assert LogView().sniff(log) > 0.5
    ```
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any, ClassVar

from langchain_result_layer.core.evidence import (
    SALIENCE_DETAIL,
    SALIENCE_ERROR,
    SALIENCE_EXIT,
    SALIENCE_STRONG,
    SALIENCE_SUMMARY,
)
from langchain_result_layer.core.render import Fence, plural
from langchain_result_layer.core.view import ResultView
from langchain_result_layer.views._layout import (
    SUMMARY_TITLE,
    Layout,
    Section,
    clip,
    header_text,
)
from langchain_result_layer.views._lines import (
    Window,
    sample_lines,
    spread,
)
from langchain_result_layer.views._salience import Analysis, analyse
from langchain_result_layer.views._salience_settings import DEFAULT_SETTINGS, SalienceSettings
from langchain_result_layer.views._templates import TemplateResult, message_offset, mine_templates
from langchain_result_layer.views._timestamps import TimeRange, detect_format, time_range_of_parts
from langchain_result_layer.views.base import Prepared, Rendered, ViewContext
from langchain_result_layer.views.command import (
    SalienceView,
    finish_line_layout,
    finish_render,
    is_compact,
    line_sections,
    line_view,
    render_line_evidence,
    shown_phrase,
    size_phrase,
)
from langchain_result_layer.views.text import TextView, raw_text

__all__ = ["EXACT_FACTS_LINES", "TEMPLATE_SAMPLE_LINES", "LogView", "level_of"]

TEMPLATE_SAMPLE_LINES = 2_000
"""Templates are mined on at most this many lines (in windows of consecutive lines spread
over the log when it is longer)."""

EXACT_FACTS_LINES = 50_000
"""Level counts and the time range are exact up to this many lines; longer logs are
sampled the same way as templates (the view says so)."""

_SNIFF_CHARS = 32_000
_FACT_SAMPLE_LINES = 10_000
_TEMPLATE_LINE_CHARS = 2_000  # the miner masks at most 78 tokens a line; longer ones end in <*>
_TEMPLATE_CHOICES = (10, 6, 3, 0)
_ERROR_KIND_CHOICES = (24, 12, 6, 0)  # error kinds shown with each template choice
_MIN_EVIDENCE_LINES = 15
_TEMPLATE_CHARS = 200
_EXAMPLE_CHARS = 160
_TEXT_FALLBACK = TextView()

_LEVEL_RE = re.compile(
    r"(?<![\w-])\[?(TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|SEVERE|CRITICAL|CRIT|FATAL"
    r"|ALERT|EMERG|PANIC|trace|debug|info|notice|warn|warning|error|crit|fatal|alert|emerg)\]?"
    r"(?![\w-])"
)
# Lines whose level may make them evidence (a superset, searched in the raw text).
_LEVEL_SIGNAL_RE = re.compile(
    r"WARN|ERR|SEVERE|CRIT|FATAL|ALERT|EMERG|PANIC|warn|err|crit|fatal|alert|emerg"
    r"|\s\d+\s+[WEFA]\s"
)
_ANDROID_LEVEL_RE = re.compile(r"^\s*\d\d-\d\d \d\d:\d\d:\d\d\.\d+\s+\d+\s+\d+\s+([VDIWEFA])\s")
_LEVEL_NAMES = {
    "WARNING": "WARN",
    "ERR": "ERROR",
    "CRITICAL": "CRIT",
    "V": "VERBOSE",
    "D": "DEBUG",
    "I": "INFO",
    "W": "WARN",
    "E": "ERROR",
    "F": "FATAL",
    "A": "FATAL",
}
_ERROR_LEVELS = {"ERROR", "SEVERE", "CRIT", "FATAL", "ALERT", "EMERG", "PANIC"}
_LEVEL_ORDER = (
    "FATAL",
    "PANIC",
    "EMERG",
    "ALERT",
    "CRIT",
    "SEVERE",
    "ERROR",
    "WARN",
    "NOTICE",
    "INFO",
    "DEBUG",
    "TRACE",
    "VERBOSE",
)


def level_of(line: str) -> str | None:
    """The level of a log record, from its first 120 characters.

    Args:
        line: One log line.

    Returns:
        A normalised level name (`ERROR`, `WARN`, `INFO`, ...), or `None`.

    Example:
        ```python
        assert level_of("2024-01-02 10:00:00,123 - WARNING [main] - disk 91% full") == "WARN"
        assert level_of("03-17 16:13:38.811  1702  2395 E AndroidRuntime: crash") == "ERROR"
        ```
    """
    match = _level_match(line)
    if match is None:
        return None
    name = match.group(1).upper()
    return _LEVEL_NAMES.get(name, name)


def _level_match(line: str) -> re.Match[str] | None:
    """Where a log record's level is written (Android's one-letter column, or a level word)."""
    return _ANDROID_LEVEL_RE.match(line, 0, 120) or _LEVEL_RE.search(line, 0, 120)


def _level_salience(line: str, score: float) -> float:
    """A record's level outweighs its words: `ERROR` is evidence, `INFO` much less so."""
    level = level_of(line)
    if level is None or score >= SALIENCE_EXIT:
        return score
    if level in ("FATAL", "PANIC", "EMERG", "ALERT", "CRIT"):
        return max(score, SALIENCE_SUMMARY)
    if level in _ERROR_LEVELS:
        return max(score, SALIENCE_STRONG)
    if level == "WARN":
        return max(min(score, SALIENCE_ERROR), SALIENCE_DETAIL)
    return score * 0.5


@dataclass(frozen=True, slots=True)
class ErrorKind:
    """One kind of error-level line: its template, count, first and last lines, a message."""

    template_id: int
    count: int
    first_line: int
    last_line: int
    example: str

    def as_item(self) -> dict[str, object]:
        """The JSON-ready `ResultView.items` entry (`type` `error_kind`)."""
        return {"type": "error_kind", **asdict(self)}


@dataclass(frozen=True, slots=True)
class TemplateRow:
    """One frequent message template: its text (`<*>` = variable), count and lines."""

    template: str
    count: int
    first_line: int
    last_line: int

    def as_item(self) -> dict[str, object]:
        """The JSON-ready `ResultView.items` entry (`type` `template`)."""
        return {"type": "template", **asdict(self)}


@dataclass(slots=True)
class _LogData:
    analysis: Analysis
    time: TimeRange | None
    levels: dict[str, int]
    levels_sampled: bool
    level_sample: int
    templates: TemplateResult | None
    template_lines: list[int]
    sampled: bool
    error_kinds: list[ErrorKind]


def _analyse_log(raw: str, *, settings: SalienceSettings = DEFAULT_SETTINGS) -> _LogData:
    analysis = analyse(
        raw,
        level_salience=_level_salience,
        extra_signal=_LEVEL_SIGNAL_RE,
        settings=settings,
    )
    # Levels and the time range over every line when that is cheap, else over windows of
    # consecutive lines spread over the log (the first window at its start, the last at
    # its end); templates over at most `TEMPLATE_SAMPLE_LINES` lines.
    total = analysis.total_lines
    fact_lines = EXACT_FACTS_LINES if total <= EXACT_FACTS_LINES else _FACT_SAMPLE_LINES
    facts = sample_lines(raw, max_lines=fact_lines, total_lines=total)
    numbered = facts.numbered
    time = time_range_of_parts(numbered) if numbered else None
    # A CI system's stamp before every line is read past (levels, templates, error kinds).
    prefix = analysis.line_prefix
    if prefix is not None:
        numbered = [(n, prefix.sub("", line, count=1)) for n, line in numbered]
    levels: Counter[str] = Counter()
    for _, line in numbered:
        level = level_of(line)
        if level is not None:
            levels[level] += 1
    picked = spread(numbered, TEMPLATE_SAMPLE_LINES)
    sampled = len(picked) < total
    templates = (
        mine_templates((ln[:_TEMPLATE_LINE_CHARS] for _, ln in picked), strip_header=True)
        if picked
        else None
    )
    return _LogData(
        analysis=analysis,
        time=time,
        levels=dict(levels),
        levels_sampled=facts.sampled,
        level_sample=len(numbered),
        templates=templates,
        template_lines=[n for n, _ in picked],
        sampled=sampled,
        error_kinds=_error_kinds(picked, templates),
    )


def _message_start(line: str) -> int:
    """Where the message of an error-level line starts: after its header and its level."""
    start = message_offset(line)
    level = _level_match(line)
    if level is not None and level.end() > start:
        start = level.end()
    return start


def _error_kinds(
    picked: list[tuple[int, str]], templates: TemplateResult | None
) -> list[ErrorKind]:
    """Templates of error-level lines, each with its error count and first example message.

    Ordered by first appearance: the model sees which kinds of error the log holds, one
    concrete message of each (the `<*>` template alone would hide the values).
    """
    if templates is None:
        return []
    kinds: dict[int, ErrorKind] = {}
    for index, (number, line) in enumerate(picked):
        if level_of(line) not in _ERROR_LEVELS:
            continue
        tid = templates.assignments[index]
        kind = kinds.get(tid)
        if kind is None:
            example, _ = clip(line[_message_start(line) :].strip(), _EXAMPLE_CHARS)
            kinds[tid] = ErrorKind(
                template_id=tid, count=1, first_line=number, last_line=number, example=example
            )
        else:
            kinds[tid] = replace(kind, count=kind.count + 1, last_line=number)
    return list(kinds.values())


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    if s < 86_400:
        return f"{s // 3600}h{(s % 3600) // 60:02d}m"
    return f"{s // 86_400}d{(s % 86_400) // 3600:02d}h"


class LogView(SalienceView):
    r"""Counts, time range, levels, templates and error windows of a log.

    Example:
        ```python
        from langchain_result_layer.views import choose_view

        log = "\n".join(f"Jun 14 15:16:{i % 60:02d} h sshd[{i}]: up" for i in range(400))
        assert choose_view(log).kind == "log"
        ```
    """

    kind: ClassVar[str] = "log"
    sniff_ceiling = 0.8

    def sniff(self, payload: object) -> float:
        """Most lines of the start start with a timestamp or carry a level."""
        if not isinstance(payload, str) or not payload:
            return 0.0
        head = payload[:_SNIFF_CHARS]
        lines = [ln for ln in head.split("\n")[:200] if ln.strip()]
        if len(payload) >= _SNIFF_CHARS:
            lines = lines[:-1]
        if len(lines) < 5:
            return 0.0
        if detect_format(lines) is not None:
            return 0.8
        leveled = sum(1 for ln in lines if level_of(ln) is not None)
        return 0.65 if leveled >= 0.7 * len(lines) else 0.0

    def prepare(self, payload: object) -> Prepared:
        """Keep text as it is (anything else as JSON); analyse it once."""
        prepared = _TEXT_FALLBACK.prepare(payload)
        raw = raw_text(prepared)
        prepared.data = _analyse_log(raw, settings=self.salience)
        return prepared

    def render(self, prepared: Prepared, ctx: ViewContext) -> Rendered:
        """Facts, top templates and as many evidence lines as fit.

        A result the tool reported as an error (`status="error"`) gives its tail more
        weight, as in the command view.
        """
        raw = raw_text(prepared)
        data = prepared.data
        if not isinstance(data, _LogData):
            data = _analyse_log(raw, settings=self.salience)
        analysis = data.analysis.for_status(is_error=ctx.is_error)
        summary = _log_summary(data, raw)
        error_kinds = data.error_kinds
        error_ids = {k.template_id for k in error_kinds}
        template_rows = _template_rows(data, skip=error_ids)
        template_texts = [t.template for t in template_rows] + [k.example for k in error_kinds]
        fitted: tuple[str, ResultView] | None = None
        for n_templates, n_kinds in zip(_TEMPLATE_CHOICES, _ERROR_KIND_CHOICES, strict=True):
            tables = _Tables(kinds=error_kinds[:n_kinds], templates=template_rows[:n_templates])

            def build_view(
                shown: list[Window], where: ViewContext, tables: _Tables = tables
            ) -> ResultView:
                return self._view(where, analysis, summary, tables=tables, shown=shown, raw=raw)

            def compose(
                view: ResultView,
                shown: list[Window],
                where: ViewContext,
                fence: Fence,
                tables: _Tables = tables,
            ) -> Layout:
                return self._compose(view, tables, shown, where, fence)

            attempt = render_line_evidence(
                analysis=analysis,
                ctx=ctx,
                build_view=build_view,
                compose=compose,
                extra_parts=template_texts,
            )
            if attempt is None:
                continue
            fitted = attempt
            if attempt[1].shown >= min(_MIN_EVIDENCE_LINES, len(analysis.priority)):
                break
        return finish_render(
            ctx,
            fitted,
            plural(analysis.total_lines, "line"),
            lambda: self._view(ctx, analysis, summary, tables=_Tables(), shown=[], raw=raw),
        )

    # ------------------------------------------------------------------ record and layout

    def _view(
        self,
        ctx: ViewContext,
        analysis: Analysis,
        summary: dict[str, Any],
        *,
        tables: _Tables,
        shown: list[Window],
        raw: str,
    ) -> ResultView:
        observations: list[str] = []
        share = summary.get("top_template_share")
        if isinstance(share, float) and share >= 0.5 and summary.get("template_count", 0) > 1:
            observations.append(
                f"One template covers {share:.0%} of the lines; the other "
                f"{int(summary['template_count']) - 1:,} templates may hold what is unusual."
            )
        tabled = [
            *(k.as_item() for k in tables.kinds),
            *(t.as_item() for t in tables.templates),
        ]
        return line_view(
            self.kind,
            ctx,
            analysis,
            summary,
            shown=shown,
            raw=raw,
            items=tabled,
            observations=observations,
            truncated=True,
        )

    def _compose(
        self,
        view: ResultView,
        tables: _Tables,
        shown: list[Window],
        ctx: ViewContext,
        fence: Fence,
    ) -> Layout:
        s = view.summary
        compact = is_compact(ctx, self.salience)
        facts = [size_phrase(s, compact=compact)]
        time = s.get("time")
        if isinstance(time, Mapping):
            span = _duration(time.get("span_seconds"))
            facts.append(f"time {time['range']}" + (f" ({span})" if span else ""))
        levels = s.get("levels") or {}
        if levels:
            where = (
                f" in a sample of {int(s['level_sample']):,} lines"
                if s.get("levels_sampled")
                else ""
            )
            facts.append(
                f"levels{where} "
                + " · ".join(f"{name} {count:,}" for name, count in levels.items())
            )
        if s.get("template_count"):
            sample = " in a sample" if s.get("templates_sampled") else ""
            facts.append(f"{plural(int(s['template_count']), 'template')}{sample}")
        errors = int(s.get("error_lines", 0))
        if errors and compact:
            facts.append(plural(errors, "error line"))
        elif errors:
            facts.append(
                f"{plural(errors, 'error line')}, first at line {int(s['first_error']):,}, "
                f"last at line {int(s['last_error']):,}"
            )
        else:
            facts.append("no error lines recognised")
        kinds, templates = tables.kinds, tables.templates
        shown_parts = []
        if kinds:
            shown_parts.append(plural(len(kinds), "error kind"))
        if templates:
            shown_parts.append(plural(len(templates), "template"))
        shown_parts.append(shown_phrase(shown, view.shown, compact=compact))
        header = header_text(ctx, self.kind, "; ".join(facts), ", ".join(shown_parts))
        sections: list[Section] = []
        sample_note = (
            f" in a sample of {int(s['template_sample']):,} lines"
            if s.get("templates_sampled")
            else ""
        )
        if kinds:
            total_kinds = int(s.get("error_kind_count", len(kinds)))
            more = f", {total_kinds:,} in all" if total_kinds > len(kinds) else ""
            sections.append(
                Section(
                    title=(
                        f"{SUMMARY_TITLE}: error kinds{sample_note}{more}, first message of each"
                        if compact
                        else f"{SUMMARY_TITLE}: kinds of error-level line{sample_note}{more},"
                        " in order of first appearance, with the first message of each"
                    ),
                    lines=[
                        f"{k.count:,}× (first line {k.first_line:,}): {k.example}" for k in kinds
                    ],
                )
            )
        if templates:
            sections.append(
                Section(
                    title=(
                        f"{SUMMARY_TITLE}: most frequent "
                        f"{'other ' if kinds else ''}templates{sample_note}, <*> = variable"
                    ),
                    lines=[
                        f"{t.count:,}× (first line {t.first_line:,}): {t.template}"
                        for t in templates
                    ],
                )
            )
        sections.extend(line_sections(shown, fence))
        return finish_line_layout(header, sections, view, shown, ctx)


@dataclass(frozen=True, slots=True)
class _Tables:
    """The summary tables a log view shows above its windows."""

    kinds: list[ErrorKind] = field(default_factory=list)
    templates: list[TemplateRow] = field(default_factory=list)


def _template_rows(data: _LogData, *, skip: set[int]) -> list[TemplateRow]:
    if data.templates is None:
        return []
    others = [t for t in data.templates.by_count() if t.template_id not in skip]
    return [
        TemplateRow(
            template=clip(template.text, _TEMPLATE_CHARS)[0],
            count=template.count,
            first_line=data.template_lines[template.first_index],
            last_line=data.template_lines[template.last_index],
        )
        for template in others[: max(_TEMPLATE_CHOICES)]
    ]


def _log_summary(data: _LogData, raw: str) -> dict[str, Any]:
    analysis = data.analysis
    summary: dict[str, Any] = {
        "lines": analysis.total_lines,
        "chars": len(raw),
        "error_lines": len(analysis.error_lines),
        "error_patterns": analysis.patterns,
        "first_error": analysis.first_error,
        "last_error": analysis.last_error,
        "levels": {name: data.levels[name] for name in _LEVEL_ORDER if name in data.levels},
        "levels_sampled": data.levels_sampled,
        "level_sample": data.level_sample,
        "partial_scan": analysis.partial,
        "unscanned_chars": analysis.unscanned_chars,
    }
    if data.time is not None:
        t = data.time
        summary["time"] = {
            "format": t.format,
            "first": t.first[0],
            "first_line": t.first[1],
            "last": t.last[0],
            "last_line": t.last[1],
            "earliest": t.earliest,
            "latest": t.latest,
            "span_seconds": t.span_seconds,
            "stamped_lines": t.stamped_lines,
            "in_order": t.in_order,
            "range": t.text,
        }
    if data.error_kinds:
        summary["error_kind_count"] = len(data.error_kinds)
    if data.templates is not None:
        ordered = data.templates.by_count()
        sample = len(data.templates.assignments)
        summary["template_count"] = len(ordered)
        summary["template_sample"] = sample
        summary["templates_sampled"] = data.sampled
        if ordered and sample:
            summary["top_template_share"] = ordered[0].count / sample
    head = [plural(analysis.total_lines, "line")]
    if data.time is not None:
        head.append(data.time.text)
    if analysis.error_lines:
        head.append(plural(len(analysis.error_lines), "error line"))
    summary["headline"] = "log: " + ", ".join(head)
    return summary
