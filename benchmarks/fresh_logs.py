"""Fresh logs: evidence recall on build logs generated this session, held out from every rule.

`benchmarks/fresh_logs/` holds failing build and test logs produced by real local toolchains
on small generated fixture projects with injected faults, in six batches: batch 1
(`benchmarks/fresh_logs/generate.py`, 2026-12-01: gcc/make, CMake/ctest, cargo, javac/java,
pytest/mypy/sphinx/pip, mocha/tsc/npm/node --test, prove, go, minitest, php, bash) and batch 2
(`benchmarks/fresh_logs/generate2.py`, 2026-12-04, in `batch2/`: erlc/rebar3/eunit/escript,
mix, emacs --batch, vim -es, ghc, dune, R/testthat, luac/lua, tclsh/tcltest, gfortran, fpc,
scalac, Django's test runner, pytest -ra), whose ecosystems batch 1 does not have (but python),
and batch 3 (`benchmarks/fresh_logs/generate3.py`, 2026-12-05, in `batch3/`: meson/ninja,
autoconf/automake, iverilog, cppcheck, shellcheck, yamllint, valgrind, gdb, UBSan, SBCL, Guile,
SWI-Prolog's plunit), whose tools batches 1 and 2 do not have (but gcc and bash), and batch 4
(`benchmarks/fresh_logs/generate4.py`, 2026-12-07, in `batch4/`: mcs/mono, gnatmake/GNAT, gdc,
GnuCOBOL, Nim, raco test, Octave, RSpec, RuboCop, flake8, pylint, ESLint, Groovy, Clojure,
ansible-playbook), whose tools batches 1 to 3 do not have, and batch 5
(`benchmarks/fresh_logs/generate5.py`, 2026-12-07, in `batch5/`: Ant/JUnit, Jest, Bats, Robot
Framework, behave, unittest and Hypothesis, black, pdflatex, NASM, valac, Poly/ML, CHICKEN, coqc,
Bison, protoc, sqlite3, psql, nginx -t, Doxygen, clang++), whose tools batches 1 to 4 do not have,
and batch 6 (`benchmarks/fresh_logs/generate6.py`, 2026-12-07, in `batch6/`: failures of gcc, ld,
pytest, mypy, pip, cargo, javac, java, node, python, prove and minitest wrapped in the raw logs of
GitHub Actions, GitLab CI, Jenkins, Azure Pipelines and Buildkite, with their timestamp prefixes,
group markers, setup and post-job steps), whose layouts batches 1 to 5 do not have.
Each case's needles were chosen from the injected fault
alone (the lines naming the fault and its location, picked by a rule written with the fault)
and committed before this benchmark first ran. No rule of the evidence engine was written
looking at these logs.

Measured exactly as `benchmarks/evidence_recall.py` measures the corpus, by importing its
strategies and bookkeeping: at 1,000, 2,000 and 4,000 tokens under `o200k_base`, per strategy
(the chosen view, as the pipeline picks it, is ours; the baselines are head only, tail only,
head+tail 50/50, the reference rule and deepagents' eviction preview; the declared log, command
and text views are shown too): the share of logs with every needle kept, needle recall, views
over budget and fill (shown tokens / budget over the logs larger than the budget), overall, per
batch (side by side) and per batch and ecosystem.

Run: `python -m benchmarks fresh_logs` (writes benchmarks/results/fresh_logs.json). `--corpus`
is accepted like every benchmark's but not used: the cases live in `benchmarks/fresh_logs/`
(`LRL_FRESH_LOGS` overrides the folder).
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks._common import BenchResult, Table
from benchmarks.evidence_recall import (
    BUDGET_CHARS,
    BUDGET_TOKENS,
    BUDGETS,
    Case,
    Results,
    _evaluate,
    _stats,
    _strategies,
)

FRESH_DIR = Path(__file__).resolve().parent / "fresh_logs"
BATCH_DIRS = {
    "1": ".",
    "2": "batch2",
    "3": "batch3",
    "4": "batch4",
    "5": "batch5",
    "6": "batch6",
    "7": "batch7",
}
"""Each batch's folder under the fresh folder (its `cases.jsonl`, its `logs/`)."""
OURS = "chosen view"
QUICK_PER_BATCH = 2
QUICK_CASES = QUICK_PER_BATCH * len(BATCH_DIRS)


def fresh_dir() -> Path:
    """The folder of the fresh cases: `LRL_FRESH_LOGS` or `benchmarks/fresh_logs`."""
    return Path(os.environ.get("LRL_FRESH_LOGS") or FRESH_DIR)


def read_log(path: Path) -> str:
    """A log exactly as the tool printed it (UTF-8 with replacement; `.gz` read transparently)."""
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf-8", errors="replace", newline="") as fh:
            return fh.read()
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        return fh.read()


def load_rows(root: Path) -> list[dict[str, Any]]:
    """The labelled cases of every batch's `cases.jsonl` under `root` (absent files: none).

    Each row gets `batch` ("1" to "6") and its `path` relative to `root`.
    """
    rows: list[dict[str, Any]] = []
    for batch, sub in BATCH_DIRS.items():
        path = root / sub / "cases.jsonl"
        if not path.is_file():
            continue
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    row = json.loads(line)
                    row["batch"] = batch
                    row["path"] = str(Path(sub) / row["path"])  # Path(".") / p is p
                    rows.append(row)
    return rows


def batch_of(case: Case) -> str:
    """The batch of a case made by `load_cases` ("1" to "6")."""
    return case.source.rsplit(" ", 1)[-1]


def _by_batch(cases: Sequence[Case]) -> dict[str, list[Case]]:
    """The cases of each batch, batches in order."""
    out: dict[str, list[Case]] = {}
    for case in cases:
        out.setdefault(batch_of(case), []).append(case)
    return dict(sorted(out.items()))


def load_cases(root: Path, counter: Any, *, ids: Sequence[str] | None = None) -> list[Case]:
    """The fresh cases as evidence_recall `Case`s (group = ecosystem)."""
    out: list[Case] = []
    for row in load_rows(root):
        if ids is not None and row["id"] not in ids:
            continue
        raw = read_log(root / row["path"])
        out.append(
            Case(
                case_id=row["id"],
                source=f"fresh_logs batch {row['batch']}",
                group=str(row["ecosystem"]),
                raw=raw,
                needles=[[str(n)] for n in row["needles"]],
                tokens=counter.count(raw) if len(raw) <= BUDGET_CHARS else BUDGET_CHARS,
            )
        )
    return out


def _overall_table(cases: Sequence[Case], results: dict[str, dict[int, Results]]) -> Table:
    table = Table(
        title="fresh logs, every strategy at every budget (held out; o200k_base)",
        columns=[
            "strategy",
            "tokens",
            "logs",
            "every needle kept",
            "needle recall",
            "over budget",
            "fill",
        ],
    )
    for name, by_budget in results.items():
        for budget, res in sorted(by_budget.items()):
            s = _stats(cases, res)
            table.rows.append([name, budget, s.cases, s.all_rate, s.recall, s.over_budget, s.fill])
    return table


def _batch_table(
    cases: Sequence[Case], by_batch: dict[str, list[Case]], results: dict[str, dict[int, Results]]
) -> Table:
    sets = {f"batch {b}": members for b, members in by_batch.items()} | {"all": list(cases)}
    columns = ["strategy", "tokens"]
    for label in sets:
        columns += [f"{label} logs", f"{label} kept", f"{label} recall"]
    table = Table(
        title="fresh logs per batch, side by side: logs, share with every needle kept, needle "
        "recall",
        columns=columns,
    )
    for name, by_budget in results.items():
        for budget, res in sorted(by_budget.items()):
            row: list[Any] = [name, budget]
            for members in sets.values():
                s = _stats(members, res)
                row += [s.cases, s.all_rate, s.recall]
            table.rows.append(row)
    return table


def _ecosystem_table(
    cases: Sequence[Case], results: dict[str, dict[int, Results]], strategies: Sequence[str]
) -> Table:
    columns = ["batch", "ecosystem", "logs", "kB (median)"]
    columns += [f"ours {b:,}" for b in BUDGETS]
    columns += [f"{name} {BUDGET_TOKENS:,}" for name in strategies if name != OURS]
    table = Table(
        title="fresh logs per ecosystem: share of logs with every needle kept (ours = chosen "
        f"view at each budget; baselines at {BUDGET_TOKENS:,} tokens)",
        columns=columns,
    )
    keys = sorted({(batch_of(c), c.group) for c in cases})
    keys += [(b, "all") for b in sorted({batch_of(c) for c in cases})] + [("all", "all")]
    for batch, group in keys:
        members = [c for c in cases if batch in ("all", batch_of(c)) and group in ("all", c.group)]
        sizes = sorted(len(c.raw.encode("utf-8")) for c in members)
        row: list[Any] = [batch, group, len(members), sizes[len(sizes) // 2] / 1000]
        row += [_stats(members, results[OURS][b]).all_rate for b in BUDGETS]
        row += [
            _stats(members, results[name][BUDGET_TOKENS]).all_rate
            for name in strategies
            if name != OURS
        ]
        table.rows.append(row)
    return table


def run(*, corpus: Path | None = None, quick: bool = False) -> BenchResult:
    """Every strategy at every budget on the fresh logs (module docstring); `corpus` unused."""
    from langchain_result_layer.core.tokens import TiktokenCounter

    del corpus  # the fresh cases live with the benchmark
    result = BenchResult(name="fresh_logs")
    root = fresh_dir()
    rows = load_rows(root)
    if not rows:
        result.notes.append(f"fresh logs not found in {root}: nothing measured")
        return result
    counter = TiktokenCounter(encoding="o200k_base")
    if not counter.available:
        result.notes.append("o200k_base data not available offline: nothing measured")
        return result
    ids = None
    if quick:
        ids = []
        for batch in BATCH_DIRS:
            mine = sorted((r for r in rows if r["batch"] == batch), key=lambda r: int(r["bytes"]))
            ids += [r["id"] for r in mine[:QUICK_PER_BATCH]]
    cases = load_cases(root, counter, ids=ids)
    by_strategy: dict[str, dict[int, Results]] = {}
    for budget in BUDGETS:
        for name, strategy in _strategies(counter, budget_tokens=budget).items():
            by_strategy.setdefault(name, {})[budget] = _evaluate(cases, strategy, counter, budget)
    names = list(by_strategy)
    result.tables.append(_overall_table(cases, by_strategy))
    by_batch = _by_batch(cases)
    result.tables.append(_batch_table(cases, by_batch, by_strategy))
    baselines = [n for n in names if n not in ("log view", "command view", "text view")]
    result.tables.append(_ecosystem_table(cases, by_strategy, baselines))
    result.data = {
        "cases": len(cases),
        "ecosystems": sorted({c.group for c in cases}),
        "batches": {b: len(by_batch.get(b, [])) for b in BATCH_DIRS},
        "bytes": sum(len(c.raw.encode("utf-8")) for c in cases),
        "strategies": {
            name: {str(b): _stats(cases, res).as_dict() for b, res in sorted(by_budget.items())}
            for name, by_budget in by_strategy.items()
        },
        "per_batch": {
            batch: {
                name: {
                    str(b): _stats(members, res).as_dict() for b, res in sorted(by_budget.items())
                }
                for name, by_budget in by_strategy.items()
            }
            for batch, members in by_batch.items()
        },
        "per_ecosystem": {
            f"{batch}/{group}": {
                str(b): _stats(
                    [c for c in cases if c.group == group and batch_of(c) == batch],
                    by_strategy[OURS][b],
                ).as_dict()
                for b in BUDGETS
            }
            for batch, group in sorted({(batch_of(c), c.group) for c in cases})
        },
    }
    ours = _stats(cases, by_strategy[OURS][BUDGET_TOKENS])
    result.notes.append(
        f"held out (generated by real toolchains, labels frozen before the first run): every "
        f"needle kept in {ours.all_rate:.1%} of {ours.cases} logs of "
        f"{len(result.data['ecosystems'])} ecosystems at {BUDGET_TOKENS:,} tokens (needle recall "
        f"{ours.recall:.3f}, {ours.over_budget} over budget)"
        + (" (quick run: the smallest logs of each batch)" if quick else "")
    )
    for batch, members in by_batch.items():
        mine = _stats(members, by_strategy[OURS][BUDGET_TOKENS])
        result.notes.append(
            f"batch {batch}: every needle kept in {mine.all_rate:.1%} of {mine.cases} logs at "
            f"{BUDGET_TOKENS:,} tokens (needle recall {mine.recall:.3f})"
        )
    result.notes.append(
        "needles: the 1-3 lines naming the injected fault and its location, chosen by a rule "
        "written with the fault (benchmarks/fresh_logs/cases.jsonl: fault, needle_rules)"
    )
    result.notes.append(
        "fill: mean shown tokens / budget over the logs larger than the budget; deepagents "
        "eviction's preview is not cut to the budget (see 'over budget')"
    )
    return result


if __name__ == "__main__":
    bench = run(corpus=None)
    print(bench.render())
    print(bench.write_json())
