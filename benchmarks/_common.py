"""Shared helpers for benchmark modules: tables, JSON results, corpus access, machine info.

Every benchmark module `benchmarks/<name>.py` exposes

    def run(*, corpus: Path | None, quick: bool = False) -> BenchResult

and can be run alone with `python -m benchmarks <name>`. `quick=True` must finish in a few
seconds (it is what the test suite's smoke run uses); it must still exercise the real code.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
RESULTS_DIR = Path(__file__).resolve().parent / "results"


def corpus_path(value: str | os.PathLike[str] | None = None) -> Path | None:
    """The corpus folder from an argument, `LRL_CORPUS`, or `../shared/corpus`; `None` if absent."""
    for candidate in (value, os.environ.get("LRL_CORPUS"), DEFAULT_CORPUS):
        if candidate and (Path(candidate) / "cases.jsonl").exists():
            return Path(candidate)
    return None


def load_cases(
    corpus: Path, *, kind: str | None = None, source: str | None = None
) -> list[dict[str, Any]]:
    """Cases from `cases.jsonl`, optionally filtered by kind and source."""
    out = []
    with open(corpus / "cases.jsonl", encoding="utf-8") as fh:
        for line in fh:
            case = json.loads(line)
            if kind is not None and case.get("kind") != kind:
                continue
            if source is not None and case.get("source") != source:
                continue
            out.append(case)
    return out


def read_text(path: Path) -> str:
    """Read a corpus file exactly as a tool would print it (no newline translation)."""
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        return fh.read()


@dataclass
class Table:
    """One result table."""

    title: str
    columns: list[str]
    rows: list[list[Any]] = field(default_factory=list)

    def render(self) -> str:
        cells = [[_fmt(c) for c in row] for row in self.rows]
        widths = [len(c) for c in self.columns]
        for row in cells:
            for i, c in enumerate(row):
                widths[i] = max(widths[i], len(c))
        head = (
            "| " + " | ".join(c.ljust(w) for c, w in zip(self.columns, widths, strict=True)) + " |"
        )
        sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
        body = [
            "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |"
            for row in cells
        ]
        return "\n".join([f"### {self.title}", "", head, sep, *body])


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        if value == 0:
            return "0"
        if abs(value) >= 100:
            return f"{value:,.0f}"
        if abs(value) >= 1:
            return f"{value:.2f}"
        return f"{value:.3f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


@dataclass
class BenchResult:
    """What a benchmark returns: tables, free-text notes and raw numbers."""

    name: str
    tables: list[Table] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)

    def render(self) -> str:
        parts = [f"## {self.name}", ""]
        for table in self.tables:
            parts += [table.render(), ""]
        parts += [f"- {n}" for n in self.notes]
        return "\n".join(parts).rstrip() + "\n"

    def write_json(self, directory: Path = RESULTS_DIR) -> Path:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{self.name}.json"
        payload = {
            "name": self.name,
            "machine": machine_info(),
            "tables": [asdict(t) for t in self.tables],
            "notes": self.notes,
            "data": self.data,
        }
        path.write_text(json.dumps(payload, indent=2, default=str), encoding="utf-8")
        return path


def machine_info() -> dict[str, Any]:
    """CPU, memory and versions, for the report."""
    info: dict[str, Any] = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "date": time.strftime("%Y-%m-%d"),
    }
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo", encoding="utf-8") as fh:
            info["mem_total"] = fh.readline().split(":", 1)[1].strip()
    except OSError:
        pass
    try:
        import langchain_core
        import langgraph  # noqa: F401

        info["langchain_core"] = langchain_core.__version__
    except Exception:
        pass
    with contextlib.suppress(OSError):
        info["git"] = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
        ).stdout.strip()
    return info


def timed(fn: Any, *args: Any, repeat: int = 3, **kwargs: Any) -> tuple[float, Any]:
    """Best wall time of `repeat` runs (seconds) and the last result."""
    best = float("inf")
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn(*args, **kwargs)
        best = min(best, time.perf_counter() - start)
    return best, result


def best_cpu(fn: Any, repeat: int) -> float:
    """CPU seconds of `fn()` (minimum of `repeat` runs): steadier than wall time on a shared
    machine."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best
