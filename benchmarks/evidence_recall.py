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
  token (8,000), cut down until it fits 2,000 tokens;
- `deepagents eviction`: deepagents' large-result eviction, re-implemented from its
  documented behaviour (see `_deepagents_preview`): above its threshold a result is replaced by
  a pointer to the saved file and a preview of its first and last 5 lines. The threshold is
  set to this benchmark's budget (2,000 tokens at deepagents' 4 chars per token), so results
  under 8,000 characters pass whole, and a preview is not cut to the budget: the `over
  budget` column counts the results a strategy shows above 2,000 tokens.

Case kinds: the evidence target (failing CI build logs: `logchunks`, `cidiff_breakages`),
SWE-bench test-runner logs, tracebacks and code searches from agent runs, Chinook SQL outputs,
and loghub system logs (no labels there: the needles are the distinct templates of the
error-level lines, `EventId` of `*_structured.csv`, each kept when any line of it is shown).

Cross-validation (the judgement-call weights of `SalienceSettings` are tuned on some logs):
the target cases are split into two halves by `split_group` (one project or dataset per
group, assigned by a hash of its name); a small grid of weights is evaluated on every case,
the best weights on one half are scored on the other half and vice versa, and the held-out
scores are reported next to the defaults' scores on the same cases.

A result within budget passes through whole (every strategy keeps every needle). Views are
rendered with a reference, as in production, so their notices cost what they cost. Fence
nonces are random, so a view's token count varies by a few tokens between runs and a case on
the edge of the budget can flip.

Run: `python -m benchmarks.evidence_recall` (writes benchmarks/results/evidence_recall.json;
`--quick` for the smoke run, `--misses` to list the cases the chosen view misses).
"""

from __future__ import annotations

import csv
import hashlib
import itertools
import json
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks._common import BenchResult, Table, corpus_path, load_cases, read_text

BUDGET_TOKENS = 2_000
BUDGET_CHARS = 400_000
TARGET_SOURCES = ("logchunks", "cidiff_breakages")
OTHER_GROUPS: tuple[tuple[str, str, str | None], ...] = (
    ("test logs (swebench_eval_logs)", "swebench_eval_logs", None),
    ("tracebacks", "sweagent_observations", "traceback"),
    ("searches", "sweagent_observations", "search"),
    ("sql outputs (chinook)", "chinook_sql", None),
    ("system logs (loghub, error templates)", "loghub", "system_log"),
)
_REFERENCE_KEYWORDS = re.compile(
    r"error|exception|failed|fatal|traceback|panic|errno|exit code", re.IGNORECASE
)
_ERROR_LEVELS = frozenset(
    {"E", "F", "A", "ERROR", "ERR", "FATAL", "SEVERE", "CRITICAL", "CRIT", "ALERT", "EMERG"}
)
_WARN_LEVELS = frozenset({"W", "WARN", "WARNING"})
_TEMPLATE_ALTERNATIVES = 50

# deepagents' eviction, as documented and as its source reads (langchain-ai/deepagents,
# libs/deepagents/deepagents/middleware/_message_eviction.py: TOO_LARGE_TOOL_MSG,
# _create_content_preview(head_lines=5, tail_lines=5), PREVIEW_LINE_CHAR_LIMIT = 1000, lines
# numbered `cat -n` style by format_content_with_line_numbers; FilesystemMiddleware
# (tool_token_limit_before_evict=20000 by default, chars / 4 as its token estimate) in the
# reference docs at reference.langchain.com/python/deepagents/middleware/filesystem).
_DEEPAGENTS_MSG = (
    "Tool result too large, the result of this tool call {tool_call_id} was saved in the "
    "filesystem at this path: {file_path}\n\n"
    "You can read the result from the filesystem by using the read_file tool, but make sure "
    "to only read part of the result at a time.\n\n"
    "You can do this by specifying an offset and limit in the read_file tool call. For "
    "example, to read the first 100 lines, you can use the read_file tool with offset=0 and "
    "limit=100.\n\n"
    "{preview_note}\n\n{content_sample}\n"
)
_DEEPAGENTS_LINE_LIMIT = 1_000
_DEEPAGENTS_CHARS_PER_TOKEN = 4
_DEEPAGENTS_HEAD_TAIL = 5

# The judgement-call weights tried in the cross-validation (defaults included).
CV_GRID: dict[str, tuple[float, ...]] = {
    "outside_failed_step": (0.5, 0.7, 1.0),
    "repeat_block": (0.3, 0.5, 1.0),
    "exact_repeat": (0.3, 0.6),
}
_QUICK_GRID: dict[str, tuple[float, ...]] = {"repeat_block": (0.5, 1.0)}

Strategy = Callable[[str], str]


@dataclass
class Case:
    """One case: its raw text and the needles (each a list of alternatives)."""

    case_id: str
    group: str
    raw: str
    needles: list[list[str]]
    labelled: list[str] = field(default_factory=list)
    fits: bool = False

    def found(self, shown: str) -> int:
        return sum(1 for alts in self.needles if any(a in shown for a in alts))


def _deepagents_preview(raw: str, *, budget_tokens: int = BUDGET_TOKENS) -> str:
    """deepagents' eviction of one result at `budget_tokens` (see the module docstring)."""
    if len(raw) <= budget_tokens * _DEEPAGENTS_CHARS_PER_TOKEN:
        return raw  # under its threshold: the result is kept whole
    lines = raw.splitlines()
    n = _DEEPAGENTS_HEAD_TAIL

    def numbered(rows: Sequence[str], start: int) -> str:
        return "\n".join(
            f"{start + i:6d}\t{row[:_DEEPAGENTS_LINE_LIMIT]}" for i, row in enumerate(rows)
        )

    clipped = any(len(row) > _DEEPAGENTS_LINE_LIMIT for row in (*lines[:n], *lines[-n:]))
    if len(lines) <= 2 * n:
        sample = numbered(lines, 1)
        note = "Here is a preview of the result"
        omitted = False
    else:
        marker = f"... [{len(lines) - 2 * n} lines truncated] ..."
        sample = numbered(lines[:n], 1) + f"\n{marker}\n" + numbered(lines[-n:], len(lines) - n + 1)
        note = "Here is a preview showing the head and tail of the result"
        omitted = True
    caveats = []
    if omitted:
        caveats.append(
            "lines of the form `... [N lines truncated] ...` indicate omitted lines in the "
            "middle of the content"
        )
    if clipped:
        caveats.append(
            f"lines longer than {_DEEPAGENTS_LINE_LIMIT} characters are clipped to their first "
            f"{_DEEPAGENTS_LINE_LIMIT} characters"
        )
    if caveats:
        note += f" ({'; '.join(caveats)})"
    return _DEEPAGENTS_MSG.format(
        tool_call_id="call_bench",
        file_path="/large_tool_results/call_bench",
        preview_note=note + ":",
        content_sample=sample,
    )


def _strategies(counter: Any, *, salience: Any = None) -> dict[str, Strategy]:
    from langchain_result_layer.core.budget import Budget
    from langchain_result_layer.core.reference import Reference
    from langchain_result_layer.views import choose_view
    from langchain_result_layer.views.base import ResultViewBuilder, ViewContext
    from langchain_result_layer.views.command import CommandView
    from langchain_result_layer.views.logs import LogView
    from langchain_result_layer.views.text import TextView

    budget = Budget(tokens=BUDGET_TOKENS, chars=BUDGET_CHARS)
    command = CommandView(salience=salience) if salience is not None else CommandView()
    log = LogView(salience=salience) if salience is not None else LogView()

    def render(view: ResultViewBuilder, raw: str) -> str:
        ref = Reference(record_id="BenchBenchBenchBench00", kind=view.kind)
        ctx = ViewContext(budget=budget, counter=counter, tool_name="run", reference=ref)
        rendered = view.render(view.prepare(raw), ctx)
        text = rendered.content if isinstance(rendered.content, str) else str(rendered.content)
        if len(text) > budget.chars or counter.count(text) > budget.tokens:
            msg = f"{view.kind} view overshot the budget"
            raise AssertionError(msg)
        return text

    def chosen(raw: str) -> str:
        view = choose_view(raw)
        if view.kind == "command":
            view = command
        elif view.kind == "log":
            view = log
        return render(view, raw)

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
        text = raw[:lo] + "\n...\n" + raw[len(raw) - lo :]
        while lo > 0 and counter.count(text) > BUDGET_TOKENS:
            # Tokens can merge differently across the join: shrink until the whole fits.
            lo -= max(1, lo // 100)
            text = raw[:lo] + "\n...\n" + raw[len(raw) - lo :]
        return text

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

    return {
        "chosen view": chosen,
        "log view": lambda raw: render(log, raw),
        "command view": lambda raw: render(command, raw),
        "text view": lambda raw: render(text_view, raw),
        "head only": head_only,
        "tail only": tail_only,
        "head+tail 50/50": head_tail,
        "reference rule": reference_rule,
        "deepagents eviction": _deepagents_preview,
    }


def _loghub_needles(corpus: Path, case: dict[str, Any]) -> list[list[str]]:
    """One needle per error-level template (warning-level when there is no error level)."""
    path = corpus / str(case.get("templates_csv") or "")
    if not path.is_file():
        return []
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        rows = list(csv.DictReader(fh))
    if not rows or "Level" not in rows[0]:
        return []
    for levels in (_ERROR_LEVELS, _WARN_LEVELS):
        groups: dict[str, list[str]] = {}
        for row in rows:
            if row.get("Level", "").strip().upper() in levels and row.get("Content", "").strip():
                alts = groups.setdefault(row["EventId"], [])
                if len(alts) < _TEMPLATE_ALTERNATIVES:
                    alts.append(row["Content"].strip())
        if groups:
            return list(groups.values())
    return []


def _load(
    corpus: Path, counter: Any, *, source: str, kind: str | None, limit: int | None
) -> list[Case]:
    out: list[Case] = []
    for case in load_cases(corpus, source=source, kind=kind):
        if source == "loghub":
            needles = _loghub_needles(corpus, case)
        else:
            needles = [[str(n)] for n in case.get("needles") or []]
            if case.get("kind") == "sql_rows":
                # The rows view shows rows as JSON arrays.
                needles = [
                    [n[0], json.dumps(n[0].split("|"), ensure_ascii=False)] if "|" in n[0] else n
                    for n in needles
                ]
        if not needles:
            continue
        raw = read_text(corpus / case["path"])
        out.append(
            Case(
                case_id=case["id"],
                group=str(case.get("split_group") or case["id"]),
                raw=raw,
                needles=needles,
                labelled=list(case.get("labelled_lines") or []),
                fits=len(raw) <= BUDGET_CHARS and counter.count(raw) <= BUDGET_TOKENS,
            )
        )
        if limit is not None and len(out) >= limit:
            break
    return out


@dataclass
class _Stats:
    cases: int = 0
    needles: int = 0
    found: int = 0
    all_kept: int = 0
    over_budget: int = 0
    labelled: int = 0
    labelled_found: int = 0
    seconds: float = 0.0
    misses: list[str] = field(default_factory=list)

    def add(self, other: _Stats) -> None:
        for name in (
            "cases",
            "needles",
            "found",
            "all_kept",
            "over_budget",
            "labelled",
            "labelled_found",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.seconds += other.seconds
        self.misses += other.misses

    @property
    def recall(self) -> float:
        return self.found / max(1, self.needles)

    @property
    def all_rate(self) -> float:
        return self.all_kept / max(1, self.cases)


def _evaluate(
    cases: list[Case], strategies: dict[str, Strategy], counter: Any
) -> dict[str, _Stats]:
    stats = {name: _Stats() for name in strategies}
    for case in cases:
        for name, strategy in strategies.items():
            start = time.perf_counter()
            shown = case.raw if case.fits else strategy(case.raw)
            s = stats[name]
            s.seconds += time.perf_counter() - start
            found = case.found(shown)
            s.cases += 1
            s.needles += len(case.needles)
            s.found += found
            s.all_kept += int(found == len(case.needles))
            if found < len(case.needles):
                s.misses.append(case.case_id)
            if not case.fits and counter.count(shown) > BUDGET_TOKENS:
                s.over_budget += 1
            if case.labelled:
                s.labelled += len(case.labelled)
                s.labelled_found += sum(1 for ln in case.labelled if ln in shown)
    return stats


def _table(title: str, stats: dict[str, _Stats], *, labelled: bool) -> Table:
    columns = ["strategy", "cases", "needle recall", "all needles kept", "over budget", "ms/case"]
    if labelled:
        columns.insert(4, "labelled-line recall")
    table = Table(title=title, columns=columns)
    for name, s in stats.items():
        row: list[Any] = [
            name,
            s.cases,
            s.recall,
            s.all_rate,
            s.over_budget,
            1000 * s.seconds / max(1, s.cases),
        ]
        if labelled:
            row.insert(4, s.labelled_found / s.labelled if s.labelled else "-")
        table.rows.append(row)
    return table


def _ratio(ours: float, theirs: float) -> str:
    if theirs == 0:
        return "inf" if ours > 0 else "-"
    return f"{ours / theirs:.2f}x"


def _ratios_table(target: dict[str, _Stats]) -> Table:
    ours = target["chosen view"]
    table = Table(
        title="evidence target: chosen view vs each alternative (ratio of rates)",
        columns=["alternative", "all needles kept", "ratio (ours / theirs)", "recall ratio"],
    )
    for name, s in target.items():
        if name == "chosen view":
            continue
        table.rows.append(
            [name, s.all_rate, _ratio(ours.all_rate, s.all_rate), _ratio(ours.recall, s.recall)]
        )
    return table


def _fold_of(group: str) -> int:
    return hashlib.sha256(group.encode("utf-8")).digest()[0] % 2


def _grid(grid: dict[str, tuple[float, ...]]) -> list[dict[str, float]]:
    keys = sorted(grid)
    return [
        dict(zip(keys, values, strict=True))
        for values in itertools.product(*(grid[k] for k in keys))
    ]


def _cross_validate(
    cases: list[Case], counter: Any, grid: dict[str, tuple[float, ...]]
) -> tuple[Table, dict[str, Any]]:
    """Tune the salience weights on one half of the groups, score them on the other."""
    from langchain_result_layer.views._salience import DEFAULT_SETTINGS, SalienceSettings

    truncated = [c for c in cases if not c.fits]
    configs = _grid(grid)
    defaults = {k: float(getattr(DEFAULT_SETTINGS, k)) for k in grid}
    if defaults not in configs:
        configs.append(defaults)
    # Every config on every case once; folds are subsets.
    kept: dict[int, dict[str, tuple[int, int]]] = {}
    for i, config in enumerate(configs):
        settings = SalienceSettings(**config)  # type: ignore[arg-type]
        chosen = _strategies(counter, salience=settings)["chosen view"]
        kept[i] = {}
        for case in truncated:
            found = case.found(chosen(case.raw))
            kept[i][case.case_id] = (int(found == len(case.needles)), found)
    folds = {0: [c for c in truncated if _fold_of(c.group) == 0]}
    folds[1] = [c for c in truncated if _fold_of(c.group) == 1]
    whole = [c for c in cases if c.fits]  # pass whole under every config

    def score(i: int, part: list[Case]) -> tuple[int, int]:
        return (
            sum(kept[i][c.case_id][0] for c in part),
            sum(kept[i][c.case_id][1] for c in part),
        )

    def closeness(i: int) -> float:
        return -sum(abs(configs[i][k] - defaults[k]) for k in grid)

    default_i = configs.index(defaults)
    table = Table(
        title=(
            "cross-validation of the salience weights by split_group (2 folds; target cases, "
            "chosen view)"
        ),
        columns=[
            "tuned on",
            "groups",
            "cases",
            "best weights",
            "train all-kept",
            "held-out all-kept",
            "defaults on held-out",
        ],
    )
    data: dict[str, Any] = {"grid": configs, "folds": []}
    held_total = held_default = held_cases = 0
    for train_fold, test_fold in ((0, 1), (1, 0)):
        train, test = folds[train_fold], folds[test_fold]
        best = max(range(len(configs)), key=lambda i: (*score(i, train), closeness(i)))
        train_kept = score(best, train)[0]
        test_kept = score(best, test)[0]
        test_default = score(default_i, test)[0]
        n_whole = sum(1 for c in whole if _fold_of(c.group) == test_fold)
        n_train_whole = sum(1 for c in whole if _fold_of(c.group) == train_fold)
        n_test = len(test) + n_whole
        n_train = len(train) + n_train_whole
        groups = len(
            {c.group for c in train} | {c.group for c in whole if _fold_of(c.group) == train_fold}
        )
        table.rows.append(
            [
                f"fold {train_fold} -> fold {test_fold}",
                groups,
                f"{n_train} -> {n_test}",
                ", ".join(f"{k}={v:g}" for k, v in configs[best].items()),
                (train_kept + n_train_whole) / max(1, n_train),
                (test_kept + n_whole) / max(1, n_test),
                (test_default + n_whole) / max(1, n_test),
            ]
        )
        held_total += test_kept + n_whole
        held_default += test_default + n_whole
        held_cases += n_test
        data["folds"].append(
            {
                "train_fold": train_fold,
                "best": configs[best],
                "train_all_kept": train_kept + n_train_whole,
                "train_cases": n_train,
                "held_out_all_kept": test_kept + n_whole,
                "held_out_default_all_kept": test_default + n_whole,
                "held_out_cases": n_test,
            }
        )
    table.rows.append(
        [
            "both folds held out",
            "-",
            held_cases,
            "(tuned without the case's group)",
            "-",
            held_total / max(1, held_cases),
            held_default / max(1, held_cases),
        ]
    )
    data["held_out_rate"] = held_total / max(1, held_cases)
    data["defaults_rate"] = held_default / max(1, held_cases)
    # How much the weights matter at all: every weight set of the grid on every case.
    everyone = truncated
    rates = sorted(
        (score(i, everyone)[0] + len(whole)) / max(1, len(everyone) + len(whole))
        for i in range(len(configs))
    )
    table.rows.append(
        [
            "every weight set of the grid",
            "-",
            len(everyone) + len(whole),
            f"{len(configs)} sets",
            "-",
            f"min {rates[0]:.3f} · median {rates[len(rates) // 2]:.3f} · max {rates[-1]:.3f}",
            "-",
        ]
    )
    data["grid_rates"] = rates
    return table, data


def run(*, corpus: Path | None, quick: bool = False) -> BenchResult:
    """Needle recall per strategy on the corpus's labelled cases, and the cross-validation."""
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
    details: dict[str, Any] = {}
    target: dict[str, _Stats] = {name: _Stats() for name in strategies}
    target_cases: list[Case] = []
    source_tables: list[Table] = []
    for source in TARGET_SOURCES:
        cases = _load(corpus, counter, source=source, kind=None, limit=3 if quick else None)
        target_cases += cases
        stats = _evaluate(cases, strategies, counter)
        details[source] = {
            name: {**vars(s), "recall": s.recall, "all_rate": s.all_rate}
            for name, s in stats.items()
        }
        source_tables.append(
            _table(
                f"{source} ({BUDGET_TOKENS:,} tokens)", stats, labelled=source == "cidiff_breakages"
            )
        )
        for name, s in stats.items():
            target[name].add(s)
    result.tables.append(
        _table(
            f"evidence target: logchunks + cidiff_breakages ({BUDGET_TOKENS:,} tokens)",
            target,
            labelled=False,
        )
    )
    result.tables.append(_ratios_table(target))
    result.tables += source_tables
    for title, group_source, kind in OTHER_GROUPS:
        limit = (1 if group_source == "loghub" else 2) if quick else None
        cases = _load(corpus, counter, source=group_source, kind=kind, limit=limit)
        stats = _evaluate(cases, strategies, counter)
        details[title] = {
            name: {**vars(s), "recall": s.recall, "all_rate": s.all_rate}
            for name, s in stats.items()
        }
        result.tables.append(_table(f"{title} ({BUDGET_TOKENS:,} tokens)", stats, labelled=False))
    cv_table, cv_data = _cross_validate(target_cases, counter, _QUICK_GRID if quick else CV_GRID)
    result.tables.append(cv_table)
    details["cross_validation"] = cv_data
    chosen = target["chosen view"]
    result.notes.append(
        f"target (needles survive in >= 95% of logchunks + cidiff cases): chosen view keeps "
        f"all needles in {chosen.all_rate:.1%} of {chosen.cases} cases (needle recall "
        f"{chosen.recall:.3f})" + (" (quick run: a subset)" if quick else "")
    )
    result.notes.append(
        f"cross-validated by split_group: {cv_data['held_out_rate']:.1%} with weights tuned "
        f"without the case's group, {cv_data['defaults_rate']:.1%} with the defaults; the "
        "rules themselves were written looking at this public sample (the independent "
        "held-out set is the real test)"
    )
    result.notes.append(
        "needles: exact substrings from the corpus labels (logchunks: labelled failure lines; "
        "cidiff: labelled error lines; test logs: runner failure lines; sql: gold rows, matched "
        "literally or as the rows view's JSON arrays; system logs: one per error-level "
        "template, any of its lines)"
    )
    result.notes.append(
        "deepagents eviction: threshold set to this budget (2,000 tokens = 8,000 chars at its "
        "4 chars per token); its preview is not cut to the budget (see 'over budget')"
    )
    result.data = details
    return result


if __name__ == "__main__":
    quick_run = "--quick" in sys.argv
    bench = run(corpus=None, quick=quick_run)
    print(bench.render())
    if "--misses" in sys.argv:
        misses = {
            k: v["chosen view"]["misses"]
            for k, v in bench.data.items()
            if isinstance(v, dict) and "chosen view" in v
        }
        print(json.dumps(misses, indent=1))
    print(bench.write_json())
