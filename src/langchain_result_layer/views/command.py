r"""The command view: exit status first, then the lines that explain it.

Shell commands, builds and test runs put their verdict at the end and their cause anywhere.
The view states the exit status (parsed from `exit code N`, `exited with N`, `Process
finished with exit code N`, `make: *** [...] Error N`, ...) before anything else, then shows
the highest-priority lines (see `_salience`): the failure verdicts, the errors with their
stack frames and details, the tail and the command that ran, in windows of consecutive lines
with their line numbers, and references to the first and last errors.

It is chosen for CI build logs (Travis, GitHub Actions, Jenkins, Maven and Gradle step markers
near the start), for output that states an exit status or a test runner's verdict near its
end, and for output that starts with a shell prompt.

Example:
    ```python
    from langchain_result_layer.views.command import CommandView

    view = CommandView()
    assert view.sniff("compiling...\nmake: *** [all] Error 2\n") > 0.5
    ```
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import chain
from typing import Any, ClassVar

from langchain_result_layer.core.evidence import (
    SALIENCE_ERROR,
    SALIENCE_SUMMARY,
    ExitStatus,
    find_exit_status,
    line_salience,
)
from langchain_result_layer.core.normalize import clean_for_display
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.render import Fence, format_line_ranges, plural
from langchain_result_layer.core.view import OmittedRange, ResultView
from langchain_result_layer.views._layout import (
    CANONICAL_FENCE,
    OBSERVATIONS_TITLE,
    Layout,
    NeutralisedParts,
    Section,
    equal_cost_fence,
    fits,
    footer_text,
    header_text,
    minimal_text,
    new_fence,
    stamp_view,
)
from langchain_result_layer.views._lines import (
    LineLimits,
    LineTexts,
    Window,
    error_reference,
    fit_windows,
    omitted_line_ranges,
    window_sections,
)
from langchain_result_layer.views._salience import Analysis, analyse
from langchain_result_layer.views._salience_settings import DEFAULT_SETTINGS, SalienceSettings
from langchain_result_layer.views.base import Prepared, Rendered, ResultViewBuilder, ViewContext
from langchain_result_layer.views.text import TextView, raw_text

__all__ = [
    "CommandView",
    "SalienceView",
    "finish_line_layout",
    "finish_render",
    "is_compact",
    "line_references",
    "line_sections",
    "line_view",
    "render_line_evidence",
]

_SNIFF_TAIL = 4_000
_SNIFF_CI_CHARS = 32_000
_CI_MARKERS_NEEDED = 2
# Step markers of CI systems and build tools, at the start of a line (after an optional
# ISO timestamp, as GitHub Actions writes them).
_CI_MARKER_RE = re.compile(
    r"^(?:\ufeff)?(?:\d{4}-\d\d-\d\dT[\d:.]+Z )?(?:\x1b\[[0-9;]*[A-Za-z])*"
    r"(?:travis_(?:fold|time):|\#\#\[(?:group|endgroup|section|error)\]|\[Pipeline\] "
    r"|Started by (?:user|an SCM change|timer|upstream)|Building in workspace "
    r"|\[INFO\] (?:Scanning for projects|BUILD (?:SUCCESS|FAILURE)|Reactor Summary)"
    r"|> Task :|BUILD (?:SUCCESSFUL|FAILED) in )",
    re.MULTILINE,
)
_CANONICAL_ID = "7j5sK6_7cNDcR6zeJp3R7Q"
"""The record id lines are chosen with (the costliest of 20,000 random ids in a footer)."""
_NEAR_TOP = 24
"""The top of the ranking whose lines may be as long as an error line."""
_SNIFF_HEAD = 2_000
_MAX_RANKED = 20_000
_TEXT_FALLBACK = TextView()


@dataclass(slots=True)
class _LinesData:
    analysis: Analysis
    exit: ExitStatus | None


def _as_text(payload: object) -> Prepared:
    return _TEXT_FALLBACK.prepare(payload)


def _newlines(analysis: Analysis, raw: str) -> int:
    r"""The `\n` of `raw`, from its lines as `analysis` counted them (no second count)."""
    if not raw:
        return 0
    return analysis.total_lines - (0 if raw.endswith("\n") else 1)


def _line_limits(ctx: ViewContext, sample: str, settings: SalienceSettings) -> LineLimits:
    tokens = max(1, ctx.counter.count(sample)) if sample else 1
    ratio = max(1.0, len(sample) / tokens) if sample else 3.5
    body = min(ctx.budget.chars, int(ctx.budget.tokens * ratio))
    normal = max(settings.line_min, min(settings.line_max, int(body * settings.line_share)))
    factor = settings.compact_line_factor if is_compact(ctx, settings) else 1.0
    error = max(normal, int(body * settings.error_line_share * factor))
    anchor = max(error, int(body * settings.anchor_line_share * factor))
    return LineLimits(
        normal=normal,
        error=error,
        anchor=anchor,
        anchors=settings.anchor_lines,
        slack=settings.whole_line_slack,
    )


def line_view(
    kind: str,
    ctx: ViewContext,
    analysis: Analysis,
    summary: dict[str, Any],
    *,
    shown: list[Window],
    raw: str,
    items: Sequence[dict[str, Any]] = (),
    observations: Sequence[str] = (),
    truncated: bool | None = None,
) -> ResultView:
    r"""The record of a view that shows windows of lines of `raw`.

    Args:
        kind: The view's kind.
        ctx: The view context (its reference for the omitted ranges).
        analysis: The analysis of `raw`.
        summary: Facts of the view.
        shown: The shown windows.
        raw: The raw text.
        items: Items before the windows (a log view's error kinds and templates).
        observations: What the view observes.
        truncated: Whether the view leaves something out (`None`: whether a line is
            omitted or cut).

    Returns:
        The record.

    Example:
        ```python
        from langchain_result_layer.views._salience import analyse

        view = line_view("command", ctx, analyse("a\nb\n"), {}, shown=[], raw="a\nb\n")
        assert view.total == 2 and view.truncated
        ```
    """
    omitted = omitted_line_ranges(analysis, shown)
    if truncated is None:
        truncated = bool(omitted) or any(w.has_cuts() for w in shown)
    return ResultView(
        kind=kind,
        summary=dict(summary),
        items=[*items, *(w.as_item() for w in shown)],
        total=analysis.total_lines,
        unit="lines",
        shown=sum(w.size for w in shown),
        observations=list(observations),
        references=line_references(ctx, analysis, omitted),
        omitted=omitted,
        truncated=truncated,
        original_chars=len(raw),
        original_lines=analysis.total_lines,
        original_bytes=analysis.byte_size(raw),
        normalised=True,
    )


def finish_render(
    ctx: ViewContext,
    fitted: tuple[str, ResultView] | None,
    facts: str,
    empty: Callable[[], ResultView],
) -> Rendered:
    """The fitted view, or when not even its frame fits, the minimal text of its facts.

    Args:
        ctx: The view context.
        fitted: The fitted text and record (`None`: nothing fits).
        facts: What the minimal text states (`12 lines`, `exit status 2; 12 lines`).
        empty: The record of a view that shows no line.

    Returns:
        The rendered view, its record stamped with the text's size.

    Example:
        ```python
        from langchain_result_layer.core.view import ResultView

        rendered = finish_render(ctx, None, "12 lines", lambda: ResultView(kind="command"))
        assert "12 lines" in rendered.content
        ```
    """
    if fitted is None:
        text, view = minimal_text(ctx, facts), empty()
    else:
        text, view = fitted
    return Rendered(content=text, view=stamp_view(view, text, ctx))


def is_compact(ctx: ViewContext, settings: SalienceSettings = DEFAULT_SETTINGS) -> bool:
    """Whether the budget is small enough for compact lines, header and footer.

    Args:
        ctx: The view context.
        settings: The settings (`compact_budget_tokens`).

    Returns:
        Whether the budget is below `compact_budget_tokens`.

    Example:
        ```python
        assert is_compact(ctx) == (ctx.budget.tokens < DEFAULT_SETTINGS.compact_budget_tokens)
        ```
    """
    return ctx.budget.tokens < settings.compact_budget_tokens


def render_line_evidence(
    *,
    analysis: Analysis,
    ctx: ViewContext,
    build_view: Callable[[list[Window], ViewContext], ResultView],
    compose: Callable[[ResultView, list[Window], ViewContext, Fence], Layout],
    extra_parts: list[str],
) -> tuple[str, ResultView] | None:
    r"""Fit the most lines (by priority) that the budget allows; shared by command and log views.

    Args:
        analysis: Line priorities.
        ctx: The view context.
        build_view: Makes the `ResultView` for the shown windows (in a context).
        compose: Makes the layout from the view and its windows (the text is rendered
            from it).
        extra_parts: Other data texts shown inside the fence (for the nonce choice).

    Returns:
        The text and its view, or `None` when not even the facts fit.

    Example:
        ```python
        raw = "".join(f"step {i}\n" for i in range(3_000)) + "error: disk full\nexit code 1\n"
        view = CommandView()
        prepared = view.prepare(raw)
        analysis = prepared.data.analysis
        summary = {"lines": analysis.total_lines, "chars": len(raw)}

        def build(shown, where):
            return view._view(where, analysis, summary, shown, raw)

        text, result = render_line_evidence(
            analysis=analysis, ctx=ctx, build_view=build, compose=view._compose, extra_parts=[]
        )
        assert "error: disk full" in text and result.shown > 0
        ```
    """
    ranked = analysis.ranking().capped(_MAX_RANKED)  # made as far as the fit reads it
    sample = "\n".join((analysis.text(ln) or "")[:400] for ln in ranked.head(60))
    limits = _line_limits(ctx, sample, analysis.settings)
    texts = LineTexts(analysis, limits, ranked.head(limits.anchors), ranked.head(_NEAR_TOP))
    fence = equal_cost_fence(ctx.counter, extra_parts)
    views: dict[int, ResultView] = {}
    parts = NeutralisedParts()  # the probes render mostly the same lines

    def render(shown: list[Window], fence: Fence, where: ViewContext) -> str:
        view = build_view(shown, where)
        views[id(shown)] = view
        return compose(view, shown, where, fence).render(fence, parts)

    def fit(fence: Fence, where: ViewContext) -> tuple[list[Window], str] | None:
        return fit_windows(
            analysis,
            ranked,
            texts=texts,
            render=lambda shown: render(shown, fence, where),
            budget=ctx.budget,
            counter=ctx.counter,
        )

    # The lines are chosen with a fixed nonce (and a real nonce that tokenizes exactly like
    # it) and a record id that costs at least as many tokens as any, so that which lines are
    # shown does not depend on how random strings happen to tokenize; the view is then
    # rendered with the real ones and checked (and fitted again, should it not fit).
    canonical = ctx
    if ctx.reference is not None:
        canonical = replace(ctx, reference=replace(ctx.reference, record_id=_CANONICAL_ID))
    fitted = fit(CANONICAL_FENCE, canonical)
    for _ in range(3):
        if fitted is None:
            return None
        shown, text = fitted
        lines = list(chain.from_iterable(w.line_texts() for w in shown))
        if fence.nonce in "\n".join(lines):  # never, in practice: a new nonce (no line break)
            fence = new_fence(extra_parts, lines, [fence.nonce])
            continue
        text = render(shown, fence, ctx)
        if fits(text, ctx.budget, ctx.counter):
            return text, views[id(shown)]
        fitted = fit(fence, ctx)
    return None


class SalienceView(ResultViewBuilder):
    """A view that shows the lines the salience ranking puts first (command and log views).

    Example:
        ```python
        view = CommandView(salience=SalienceSettings(tail_floor=7.0))
        assert isinstance(view, SalienceView) and view.salience.tail_floor == 7.0
        ```
    """

    def __init__(self, *, salience: SalienceSettings | None = None) -> None:
        """Create the view.

        Args:
            salience: The weights of the judgement-call rules that rank lines (the
                defaults are tuned on held-out build logs).
        """
        self.salience = salience or DEFAULT_SETTINGS


class CommandView(SalienceView):
    r"""Exit status first, tail-weighted, with windows around the errors.

    Example:
        ```python
        from langchain_result_layer.views import choose_view

        out = "$ pytest\n" + "ok\n" * 5000 + "FAILED test_x.py::test_y\nexit code 1\n"
        assert choose_view(out).kind == "command"
        ```
    """

    kind: ClassVar[str] = "command"
    sniff_ceiling = 0.85

    def sniff(self, payload: object) -> float:
        """A CI build log, a stated exit status near the end, or a shell prompt at the start.

        A CI system's step markers (Travis folds, GitHub Actions groups, Jenkins pipeline
        steps, Maven's and Gradle's task lines) make a log command output, even when its
        lines carry timestamps: it is read by its steps and their verdicts.
        """
        if not isinstance(payload, str) or not payload:
            return 0.0
        if len(_CI_MARKER_RE.findall(payload, 0, _SNIFF_CI_CHARS)) >= _CI_MARKERS_NEEDED:
            return 0.85
        tail = payload[-_SNIFF_TAIL:]
        if find_exit_status(tail, tail_chars=_SNIFF_TAIL) is not None:
            return 0.75
        last = [clean_for_display(ln) for ln in tail.split("\n")[-40:] if ln.strip()]
        scores = [line_salience(ln) for ln in last]
        if any(score >= SALIENCE_SUMMARY for score in scores):
            return 0.7
        if sum(1 for score in scores if score >= SALIENCE_ERROR) >= 2:
            return 0.65
        head = payload[:_SNIFF_HEAD].lstrip()
        if head.startswith(("$ ", "+ ", "> ")):
            return 0.6
        return 0.0

    def prepare(self, payload: object) -> Prepared:
        """Keep text as it is (anything else as JSON); analyse it once."""
        prepared = _as_text(payload)
        raw = raw_text(prepared)
        analysis = analyse(raw, settings=self.salience)
        prepared.data = _LinesData(
            analysis=analysis, exit=find_exit_status(raw, newlines=_newlines(analysis, raw))
        )
        return prepared

    def render(self, prepared: Prepared, ctx: ViewContext) -> Rendered:
        """Exit status, then as many evidence lines as fit, then omissions and references."""
        raw = raw_text(prepared)
        data = prepared.data
        if not isinstance(data, _LinesData):
            data = _LinesData(
                analysis=analyse(raw, settings=self.salience), exit=find_exit_status(raw)
            )
        analysis = data.analysis.for_status(is_error=ctx.is_error)
        summary = _command_summary(analysis, data.exit, raw)

        def build_view(shown: list[Window], where: ViewContext = ctx) -> ResultView:
            return self._view(where, analysis, summary, shown, raw)

        fitted = render_line_evidence(
            analysis=analysis,
            ctx=ctx,
            build_view=build_view,
            compose=self._compose,
            extra_parts=[],
        )
        facts = plural(analysis.total_lines, "line")
        if data.exit is not None:
            facts = f"exit status {data.exit.code}; {facts}"
        return finish_render(ctx, fitted, facts, lambda: build_view([]))

    # ------------------------------------------------------------------ record and layout

    def _view(
        self,
        ctx: ViewContext,
        analysis: Analysis,
        summary: dict[str, Any],
        shown: list[Window],
        raw: str,
    ) -> ResultView:
        return line_view(self.kind, ctx, analysis, summary, shown=shown, raw=raw)

    def _compose(
        self, view: ResultView, shown: list[Window], ctx: ViewContext, fence: Fence
    ) -> Layout:
        compact = is_compact(ctx, self.salience)
        facts = _facts_phrase(view.summary, compact=compact)
        what = shown_phrase(shown, view.shown, compact=compact)
        header = header_text(ctx, self.kind, facts, what)
        return finish_line_layout(header, line_sections(shown, fence), view, shown, ctx)


def shown_phrase(shown: Sequence[Window], lines: int, *, compact: bool) -> str:
    """What a line view's header says it shows: `3 windows of 40 lines` (`40 lines` compact).

    Args:
        shown: The shown windows.
        lines: How many lines they hold.
        compact: Whether the budget is small (the markers count the windows anyway).

    Returns:
        The phrase.

    Example:
        ```python
        assert shown_phrase([], 0, compact=False) == "no lines"
        ```
    """
    if not shown:
        return "no lines"
    if compact:
        return plural(lines, "line")
    return f"{plural(len(shown), 'window')} of {plural(lines, 'line')}"


SINGLES_PER_SECTION = 16
"""At most this many single-line windows in a row share one section (`line_sections`).

A cap for readability only (the marker names each line, in order); each section more costs
a marker of about 11 tokens, as much as a short line. 8 cost a 1,000-token view its last
failure line in a tuned log whose 9th scattered error line opened a new marker."""


def line_sections(shown: Sequence[Window], fence: Fence) -> list[Section]:
    r"""Fenced sections for windows; single lines in a row share one marker.

    Each window is its own section (`lines 40-52`), except that a run of windows of one
    line each (the entries of a failure list, scattered errors) shares one section, whose
    marker names every line in order (`lines 476, 485, 494`): a marker costs about as many
    tokens as the short line under it, so a view of scattered lines shows more of them.
    The record (`ResultView.items`) still has one window per run of lines, and the
    omissions between them are stated as always.

    Args:
        shown: The shown windows, in order.
        fence: The fence (its nonce marks the sections and the cuts).

    Returns:
        The sections, in order.

    Example:
        ```python
        from langchain_result_layer.core.render import Fence
        from langchain_result_layer.views._lines import ShownLine, Window

        def window(first: int, *texts: str) -> Window:
            lines = [ShownLine(text=t) for t in texts]
            return Window("error", first, first + len(texts) - 1, None, None, lines)

        shown = [window(3, "a", "b"), window(9, "c"), window(20, "d"), window(31, "e")]
        sections = line_sections(shown, Fence.for_content())
        assert [s.title for s in sections] == ["lines 3-4", "lines 9, 20, 31"]
        assert sections[1].lines == ["c", "d", "e"]
        ```
    """
    sections: list[Section] = []
    run: list[str] = []  # the line numbers of the last section, when it holds single lines
    for window, section in zip(shown, window_sections(shown, fence), strict=True):
        if window.size > 1:
            sections.append(section)
            run = []
        elif run and len(run) < SINGLES_PER_SECTION:
            run.append(str(window.start_line))
            last = sections[-1]
            sections[-1] = Section(
                title="lines " + ", ".join(run), lines=[*last.lines, *section.lines]
            )
        else:
            sections.append(section)
            run = [str(window.start_line)]
    return sections


def line_references(
    ctx: ViewContext, analysis: Analysis, omitted: list[OmittedRange]
) -> dict[str, str]:
    r"""References to the whole result, its first and last errors and the largest gap.

    Args:
        ctx: The view context.
        analysis: The analysis.
        omitted: The omitted line ranges.

    Returns:
        Name -> reference (empty without a stored result).

    Example:
        ```python
        analysis = analyse("".join(f"step {i}\n" for i in range(500)) + "error: boom\n")
        refs = line_references(ctx, analysis, omitted=[])
        assert refs["first_error"].endswith("start_line=496&end_line=501")
        ```
    """
    references: dict[str, str] = {}
    base = ctx.reference
    if base is None:
        return references
    references["all"] = str(base)
    total = analysis.total_lines
    if analysis.first_error is not None:
        references["first_error"] = str(error_reference(base, analysis.first_error, total))
    if analysis.last_error is not None and analysis.last_error != analysis.first_error:
        references["last_error"] = str(error_reference(base, analysis.last_error, total))
    if omitted:
        gap = max(omitted, key=lambda r: r.lines)
        end = min(gap.end_line, gap.start_line + 199)
        references["next"] = str(base.with_lines(gap.start_line, end))
    return references


def size_phrase(summary: Mapping[str, Any], *, compact: bool) -> str:
    """A line view's size in its header: `1,040 lines, 52,520 chars` (`1,040 lines` compact).

    Args:
        summary: The view's summary (`lines` and `chars` of the raw text).
        compact: Whether the budget is small (the notice states the omitted characters).

    Returns:
        The phrase.

    Example:
        ```python
        assert size_phrase({"lines": 3, "chars": 20}, compact=False) == "3 lines, 20 chars"
        assert size_phrase({"lines": 3, "chars": 20}, compact=True) == "3 lines"
        ```
    """
    lines = plural(int(summary["lines"]), "line")
    return lines if compact else f"{lines}, {plural(int(summary['chars']), 'char')}"


def _facts_phrase(s: dict[str, Any], *, compact: bool = False) -> str:
    parts: list[str] = []
    code = s.get("exit_status")
    if code is not None and compact:
        parts.append(f"exit status {code}")
    elif code is not None:
        parts.append(f"exit status {code} (line {int(s['exit_status_line']):,})")
    else:
        parts.append("no exit status stated")
    parts.append(size_phrase(s, compact=compact))
    errors = int(s.get("error_lines", 0))
    if errors and compact:
        parts.append(plural(errors, "error line"))
    elif errors:
        parts.append(
            f"{plural(errors, 'error line')} ({plural(int(s['error_patterns']), 'pattern')}), "
            f"first at line {int(s['first_error']):,}, last at line {int(s['last_error']):,}"
        )
    else:
        parts.append("no error lines recognised")
    if s.get("partial_scan"):
        unscanned = int(s.get("unscanned_chars", 0))
        parts.append(
            "middle scanned for distinct errors only"
            + (f" ({plural(unscanned, 'char')} of it not searched)" if unscanned else "")
        )
    return "; ".join(parts)


def _command_summary(analysis: Analysis, status: ExitStatus | None, raw: str) -> dict[str, Any]:
    summary: dict[str, Any] = {
        "lines": analysis.total_lines,
        "chars": len(raw),
        "exit_status": status.code if status else None,
        "exit_status_line": status.line_no if status else None,
        "error_lines": len(analysis.error_lines),
        "error_patterns": analysis.patterns,
        "first_error": analysis.first_error,
        "last_error": analysis.last_error,
        "verdict_lines": len(analysis.verdict_lines),
        "partial_scan": analysis.partial,
        "unscanned_chars": analysis.unscanned_chars,
    }
    headline = []
    if status is not None:
        headline.append(f"exit status {status.code}")
    headline.append(plural(analysis.total_lines, "line"))
    if analysis.error_lines:
        headline.append(plural(len(analysis.error_lines), "error line"))
    summary["headline"] = "command output: " + ", ".join(headline)
    return summary


def finish_line_layout(
    header: str, sections: list[Section], view: ResultView, shown: list[Window], ctx: ViewContext
) -> Layout:
    r"""Observations, omissions and references after the windows (shared with the log view).

    Args:
        header: The header line.
        sections: Sections so far.
        view: The view record.
        shown: The shown windows.
        ctx: The view context.

    Returns:
        The layout.

    Example:
        ```python
        from langchain_result_layer.core.render import Fence

        out = CommandView().render(CommandView().prepare("ok\n" * 5_000 + "exit code 2\n"), ctx)
        fence = Fence.for_content()
        layout = finish_line_layout("[header]", [], out.view, [], ctx)
        assert layout.footer.startswith("[Omitted:") and layout.render(fence).startswith("[header]")
        ```
    """
    if view.observations:
        sections.append(
            Section(title=OBSERVATIONS_TITLE, lines=[f"- {o}" for o in view.observations])
        )
    omitted = view.omitted
    omitted_text: str | None = None
    compact = is_compact(ctx)
    if omitted:
        chars = sum(r.chars for r in omitted)
        lines = sum(r.lines for r in omitted)
        where = (
            f" in {plural(len(omitted), 'range')}"
            if compact and len(omitted) > 1
            else f": {format_line_ranges(omitted, limit=3)}"
        )
        omitted_text = f"{plural(lines, 'line')} ({plural(chars, 'char')}){where}"
    cuts = [cut for w in shown for cut in w.all_cuts()]
    if cuts:
        chars = sum(c.chars for c in cuts)
        extra = (
            f"{plural(chars, 'char')} in {plural(len(cuts), 'marked cut')} within lines"
            if compact
            else f"{plural(chars, 'char')} of long lines, in {plural(len(cuts), 'cut')} marked "
            "with their raw range"
        )
        omitted_text = f"{omitted_text}; {extra}" if omitted_text else extra
    refs: list[tuple[str, Reference | str]] = []
    summary = view.summary
    for key, label in (
        (
            "first_error",
            "First error" if compact else "First error (often the cause of the others)",
        ),
        ("last_error", "Last error"),
    ):
        line = summary.get(key)
        visible = isinstance(line, int) and any(w.holds(line) for w in shown)
        if key in view.references and not visible:
            refs.append((label, view.references[key]))
    if cuts and ctx.reference is not None:
        first = max(cuts, key=lambda c: c.chars)
        refs.append(("A cut part", ctx.reference.with_chars(first.start, first.chars)))
    if not refs and "next" in view.references:
        refs.append(("Read more", view.references["next"]))
    footer = footer_text(ctx, omitted=omitted_text, references=refs)
    return Layout(header=header, sections=sections, footer=footer)
