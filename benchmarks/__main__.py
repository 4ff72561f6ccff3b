"""Run the benchmark suite: `python -m benchmarks all --corpus ../shared/corpus [--quick]`.

Each benchmark prints its table(s) and writes JSON to `benchmarks/results/<name>.json`;
`all` also writes `benchmarks/results/summary.md`.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
import traceback
from pathlib import Path

from benchmarks._common import RESULTS_DIR, BenchResult, corpus_path, machine_info

# Order matters only for the report.
SUITE = [
    "token_calibration",
    "throughput",
    "view_speed",
    "evidence_recall",
    "fresh_logs",
    "mixed_outputs",
    "log_templates",
    "store_bench",
    "guard_overhead",
    "guard_replay",
    "settings_sweep",
    "adversarial",
]


def available() -> list[str]:
    here = Path(__file__).resolve().parent
    return [name for name in SUITE if (here / f"{name}.py").exists()]


def run_one(name: str, corpus: Path | None, quick: bool) -> BenchResult:
    module = importlib.import_module(f"benchmarks.{name}")
    result: BenchResult = module.run(corpus=corpus, quick=quick)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument(
        "names", nargs="*", default=["all"], help=f"benchmarks to run: all or any of {SUITE}"
    )
    parser.add_argument(
        "--corpus", default=None, help="corpus folder (default: $LRL_CORPUS or ../shared/corpus)"
    )
    parser.add_argument("--quick", action="store_true", help="small, fast run (smoke test)")
    parser.add_argument("--out", default=str(RESULTS_DIR), help="where to write JSON results")
    args = parser.parse_args(argv)
    corpus = corpus_path(args.corpus)
    names = available() if args.names == ["all"] else args.names
    unknown = [n for n in names if n not in SUITE]
    if unknown:
        parser.error(f"unknown benchmark(s) {unknown}; known: {SUITE}")
    print(f"# Benchmarks ({'quick' if args.quick else 'full'}) — corpus: {corpus or 'absent'}")
    print(f"machine: {machine_info()}\n")
    failures = 0
    rendered: list[str] = []
    for name in names:
        start = time.perf_counter()
        try:
            result = run_one(name, corpus, args.quick)
        except Exception:
            failures += 1
            print(f"## {name}: FAILED\n{traceback.format_exc()}")
            continue
        text = result.render()
        print(text)
        print(f"({name}: {time.perf_counter() - start:.1f} s)\n")
        rendered.append(text)
        result.write_json(Path(args.out))
    if args.names == ["all"] and not args.quick:
        (Path(args.out) / "summary.md").write_text("\n".join(rendered), encoding="utf-8")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
