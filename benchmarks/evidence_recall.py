"""Evidence recall: do the labelled failure lines survive a 2,000-token view?

For every case of the corpus with needles (exact substrings a good view must keep), render the
result with each strategy at the same per-result budget (2,000 tokens under the exact
`o200k_base` counter; 400,000 characters) and check which needles the model would see.

Strategies:

- `chosen view`: what `choose_view` picks with no declared kind (as the pipeline does);
- `log view` / `command view`: the tool declared `ToolPolicy(kind="log")` / `kind="command"`;
- `text view`: the plain truncation engine (head + error windows + tail);
- `head only`, `tail only`, `head+tail 50/50`: the largest prefix / suffix / half-and-half
  that fits (no fence, no notice: a generous baseline);
- `reference rule`: the reference design's head+tail rule from its published constants:
  tail = min(30% of the budget, 4,000 chars); head+tail only when the last 2,000 chars
  contain error/exception/failed/fatal/traceback/panic/errno/exit code or end with `}`,
  otherwise head only. Its character budget is the characters of 2,000 tokens at 4 chars per
  token (8,000), cut down until it fits 2,000 tokens.

A result within budget passes through whole (every strategy keeps every needle). Views are
rendered with a reference, as in production, so their notices cost what they cost.

Run: `python -m benchmarks.evidence_recall` (writes benchmarks/results/evidence_recall.json).
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks._common import BenchResult, Table, corpus_path, load_cases, read_text

BUDGET_TOKENS = 2_000
BUDGET_CHARS = 400_000
TARGET_SOURCES = ("logchunks", "cidiff_breakages")
OTHER_GROUPS: tuple[tuple[str, str | None, str | None], ...] = (
    ("test logs (swebench_eval_logs)", "swebench_eval_logs", None),
    ("tracebacks", "sweagent_observations", "traceback"),
    ("searches", "sweagent_observations", "search"),
    ("sql outputs (chinook)", "chinook_sql", None),
)
_REFERENCE_KEYWORDS = re.compile(
    r"error|exception|failed|fatal|traceback|panic|errno|exit code", re.IGNORECASE
)

Strategy = Callable[[str], str]


def _strategies(counter: Any) -> dict[str, Strategy]:
    from langchain_result_layer.core.budget import Budget
    from langchain_result_layer.core.reference import Reference
    from langchain_result_layer.views import choose_view, get_view
    from langchain_result_layer.views.base import ViewContext
    from langchain_result_layer.views.text import TextView

    budget = Budget(tokens=BUDGET_TOKENS, chars=BUDGET_CHARS)

    def view_strategy(kind: str | None) -> Strategy:
        def run(raw: str) -> str:
            view = choose_view(raw) if kind is None else get_view(kind)
            if view is None:
                view = TextView()
            ref = Reference(record_id="BenchBenchBenchBench00", kind=view.kind)
            ctx = ViewContext(budget=budget, counter=counter, tool_name="run", reference=ref)
            rendered = view.render(view.prepare(raw), ctx)
            text = rendered.content if isinstance(rendered.content, str) else str(rendered.content)
            if len(text) > budget.chars or counter.count(text) > budget.tokens:
                msg = f"{view.kind} view overshot the budget"
                raise AssertionError(msg)
            return text

        return run

    def fit_prefix(text: str) -> str:
        lo, hi = 0, len(text)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if counter.count(text[:mid]) <= BUDGET_TOKENS:
                lo = mid
            else:
                hi = mid - 1
        return text[:lo]

    def fit_suffix(text: str) -> str:
        lo, hi = 0, len(text)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if counter.count(text[len(text) - mid :]) <= BUDGET_TOKENS:
                lo = mid
            else:
                hi = mid - 1
        return text[len(text) - lo :]

    def head_only(raw: str) -> str:
        return fit_prefix(raw[: BUDGET_TOKENS * 12])

    def tail_only(raw: str) -> str:
        return fit_suffix(raw[-BUDGET_TOKENS * 12 :])

    def head_tail(raw: str) -> str:
        half = BUDGET_TOKENS // 2
        head = raw[: half * 12]
        tail = raw[-half * 12 :]
        lo, hi = 0, min(len(head), len(tail))
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if counter.count(raw[:mid]) + counter.count(raw[len(raw) - mid :]) <= BUDGET_TOKENS:
                lo = mid
            else:
                hi = mid - 1
        return raw[:lo] + "\n...\n" + raw[len(raw) - lo :]

    def reference_rule(raw: str) -> str:
        chars = BUDGET_TOKENS * 4
        while True:
            tail_chars = min(int(chars * 0.3), 4_000)
            last = raw[-2_000:]
            use_tail = bool(_REFERENCE_KEYWORDS.search(last)) or raw.rstrip().endswith("}")
            if use_tail:
                text = raw[: chars - tail_chars] + "\n...\n" + raw[len(raw) - tail_chars :]
            else:
                text = raw[:chars]
            if counter.count(text) <= BUDGET_TOKENS or chars <= 100:
                return text
            chars = int(chars * 0.9)

    text_view = TextView()

    def text_strategy(raw: str) -> str:
        ref = Reference(record_id="BenchBenchBenchBench00", kind="text")
        ctx = ViewContext(budget=budget, counter=counter, tool_name="run", reference=ref)
        content = text_view.render(text_view.prepare(raw), ctx).content
        return content if isinstance(content, str) else str(content)

    return {
        "chosen view": view_strategy(None),
        "log view": view_strategy("log"),
        "command view": view_strategy("command"),
        "text view": text_strategy,
        "head only": head_only,
        "tail only": tail_only,
        "head+tail 50/50": head_tail,
        "reference rule": reference_rule,
    }


def _needle_found(needle: str, shown: str, case: dict[str, Any]) -> bool:
    if needle in shown:
        return True
    if case.get("kind") == "sql_rows" and "|" in needle:
        # The rows view shows rows as JSON arrays.
        as_json = json.dumps(needle.split("|"), ensure_ascii=False)
        return as_json in shown
    return False


def _evaluate(
    cases: list[dict[str, Any]],
    corpus: Path,
    strategies: dict[str, Strategy],
    counter: Any,
) -> tuple[dict[str, dict[str, float]], dict[str, Any]]:
    stats: dict[str, dict[str, float]] = {
        name: {
            "needles": 0,
            "found": 0,
            "all": 0,
            "cases": 0,
            "labelled": 0,
            "labelled_found": 0,
            "seconds": 0.0,
        }
        for name in strategies
    }
    misses: dict[str, list[str]] = {name: [] for name in strategies}
    chosen_kinds: dict[str, int] = {}
    for case in cases:
        needles = list(case.get("needles") or [])
        if not needles:
            continue
        raw = read_text(corpus / case["path"])
        fits = len(raw) <= BUDGET_CHARS and counter.count(raw) <= BUDGET_TOKENS
        labelled = list(case.get("labelled_lines") or [])
        if not fits:
            from langchain_result_layer.views import choose_view

            kind = choose_view(raw).kind
            chosen_kinds[kind] = chosen_kinds.get(kind, 0) + 1
        for name, strategy in strategies.items():
            start = time.perf_counter()
            shown = raw if fits else strategy(raw)
            stats[name]["seconds"] += time.perf_counter() - start
            found = [n for n in needles if _needle_found(n, shown, case)]
            s = stats[name]
            s["cases"] += 1
            s["needles"] += len(needles)
            s["found"] += len(found)
            s["all"] += int(len(found) == len(needles))
            if len(found) < len(needles):
                misses[name].append(case["id"])
            if labelled:
                s["labelled"] += len(labelled)
                s["labelled_found"] += sum(1 for ln in labelled if ln in shown)
    return stats, {"misses": misses, "chosen_kinds": chosen_kinds}


def _table(title: str, stats: dict[str, dict[str, float]], *, labelled: bool) -> Table:
    columns = ["strategy", "cases", "needle recall", "all needles kept", "ms/case"]
    if labelled:
        columns.insert(4, "labelled-line recall")
    table = Table(title=title, columns=columns)
    for name, s in stats.items():
        cases = int(s["cases"]) or 1
        row: list[Any] = [
            name,
            int(s["cases"]),
            s["found"] / max(1, s["needles"]),
            s["all"] / cases,
            1000 * s["seconds"] / cases,
        ]
        if labelled:
            row.insert(4, s["labelled_found"] / max(1, s["labelled"]) if s["labelled"] else "-")
        table.rows.append(row)
    return table


def _merge(
    a: dict[str, dict[str, float]], b: dict[str, dict[str, float]]
) -> dict[str, dict[str, float]]:
    return {name: {k: a[name][k] + b[name][k] for k in a[name]} for name in a}


def run(*, corpus: Path | None, quick: bool = False) -> BenchResult:
    """Needle recall per strategy on the corpus's labelled cases."""
    from langchain_result_layer.core.tokens import TiktokenCounter

    result = BenchResult(name="evidence_recall")
    corpus = corpus_path(corpus) if corpus is None else corpus
    if corpus is None or not (corpus / "cases.jsonl").exists():
        result.notes.append("corpus not found: nothing measured")
        return result
    counter = TiktokenCounter(encoding="o200k_base")
    if not counter.available:
        result.notes.append("o200k_base data not available offline: nothing measured")
        return result
    strategies = _strategies(counter)
    target_stats: dict[str, dict[str, float]] | None = None
    details: dict[str, Any] = {}
    for source in TARGET_SOURCES:
        cases = load_cases(corpus, source=source)
        if quick:
            cases = cases[:3]
        stats, extra = _evaluate(cases, corpus, strategies, counter)
        details[source] = {"stats": stats, **extra}
        result.tables.append(
            _table(
                f"{source} ({BUDGET_TOKENS:,} tokens)", stats, labelled=source == "cidiff_breakages"
            )
        )
        target_stats = stats if target_stats is None else _merge(target_stats, stats)
    assert target_stats is not None
    result.tables.insert(
        0,
        _table(
            f"evidence target: logchunks + cidiff_breakages ({BUDGET_TOKENS:,} tokens)",
            target_stats,
            labelled=False,
        ),
    )
    for title, source, kind in OTHER_GROUPS:
        cases = load_cases(corpus, source=source, kind=kind)
        if quick:
            cases = cases[:2]
        stats, extra = _evaluate(cases, corpus, strategies, counter)
        details[title] = {"stats": stats, **extra}
        result.tables.append(_table(f"{title} ({BUDGET_TOKENS:,} tokens)", stats, labelled=False))
    chosen = target_stats["chosen view"]
    rate = chosen["all"] / max(1, chosen["cases"])
    result.notes.append(
        f"target (needles survive in >= 95% of logchunks + cidiff cases): chosen view keeps "
        f"all needles in {rate:.1%} of {int(chosen['cases'])} cases"
        + (" (quick run: a subset)" if quick else "")
    )
    head = target_stats["head only"]
    ref = target_stats["reference rule"]
    if head["all"]:
        result.notes.append(
            f"all-needles ratio chosen/head-only: {chosen['all'] / head['all']:.2f}x"
        )
    if ref["all"]:
        result.notes.append(
            f"all-needles ratio chosen/reference rule: {chosen['all'] / ref['all']:.2f}x"
        )
    result.notes.append(
        "needles: exact substrings from the corpus labels (logchunks: labelled failure lines; "
        "cidiff: labelled error lines; test logs: runner failure lines; sql: gold rows, matched "
        "literally or as the rows view's JSON arrays)"
    )
    result.data = details
    return result


if __name__ == "__main__":
    quick_run = "--quick" in sys.argv
    bench = run(corpus=None, quick=quick_run)
    print(bench.render())
    misses = {k: v.get("misses", {}) for k, v in bench.data.items()}
    if "--misses" in sys.argv:
        print(json.dumps({k: v.get("chosen view") for k, v in misses.items()}, indent=1))
    print(bench.write_json())
