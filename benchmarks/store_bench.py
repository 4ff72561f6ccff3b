"""Result-store benchmark: save cost, 100-line window reads as results grow, concurrent writers.

Results are built from the real logs in the corpus (concatenated and repeated to size), or from
generated log lines when the corpus is absent. Backends: in-memory, SQLite (file), PostgreSQL
(when `LRL_POSTGRES_URL` is reachable) and a LangGraph `InMemoryStore` through the adapter; the
alternative in the same run is a naive SQLite table that keeps each result as one blob and
reads it whole to cut a window (what a store without a chunk/line index does).

Run: `python -m benchmarks.store_bench` (add `--quick` for the smoke run).
"""

from __future__ import annotations

import os
import random
import secrets
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks._common import BenchResult, Table, corpus_path, read_text

MB = 1_000_000
WINDOW = 100


def _source_text(corpus: Path | None) -> str:
    if corpus is not None:
        parts: list[str] = []
        for folder in ("logchunks", "cidiff_breakages", "loghub", "test_logs"):
            for path in sorted((corpus / folder).rglob("*")):
                if path.is_file() and path.suffix not in {".csv", ".json", ".jsonl"}:
                    parts.append(read_text(path))
        text = "".join(parts)
        if len(text) > MB:
            return text
    rng = random.Random(7)
    levels = ["INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR"]
    return "".join(
        f"2024-05-01 12:{i // 60 % 60:02d}:{i % 60:02d} {rng.choice(levels)} worker-{i % 17} "
        f"request {i} handled in {rng.randint(1, 900)} ms\n"
        for i in range(40_000)
    )


def _sized(source: str, size: int) -> str:
    reps = size // len(source) + 1
    text = (source * reps)[:size]
    cut = text.rfind("\n")
    return text[: cut + 1] if cut > 0 else text


class _NaiveBlobStore:
    """The alternative: one row per result, read whole to cut a line window."""

    def __init__(self, path: Path) -> None:
        import sqlite3

        self.conn = sqlite3.connect(path, check_same_thread=False)
        self.conn.execute("create table if not exists r (id text primary key, data blob)")

    def put(self, data: str) -> str:
        rid = secrets.token_urlsafe(16)
        with self.conn:
            self.conn.execute(
                "insert into r values (?, ?)", (rid, data.encode("utf-8", "surrogatepass"))
            )
        return rid

    def read_lines(self, rid: str, start: int, end: int) -> str:
        row = self.conn.execute("select data from r where id = ?", (rid,)).fetchone()
        text = row[0].decode("utf-8", "surrogatepass")
        return "".join(ln + "\n" for ln in text.split("\n")[start - 1 : end])

    def close(self) -> None:
        self.conn.close()


def _pg_url() -> str | None:
    url = os.environ.get("LRL_POSTGRES_URL")
    if not url:
        return None
    try:
        import sqlalchemy as sa

        engine = sa.create_engine(url, connect_args={"connect_timeout": 3})
        with engine.connect() as conn:
            conn.execute(sa.text("select 1"))
        engine.dispose()
    except Exception:
        return None
    return url


def _backends(tmp: Path, pg: str | None) -> dict[str, Callable[[], Any]]:
    from langgraph.store.memory import InMemoryStore

    from langchain_result_layer.stores import (
        InMemoryResultStore,
        LangGraphResultStore,
        SQLResultStore,
    )

    out: dict[str, Callable[[], Any]] = {
        "memory": InMemoryResultStore,
        "sqlite": lambda: SQLResultStore(f"sqlite:///{tmp / f'{secrets.token_hex(4)}.db'}"),
        "langgraph InMemoryStore": lambda: LangGraphResultStore(InMemoryStore()),
    }
    if pg is not None:
        out["postgresql"] = lambda: SQLResultStore(pg, table_prefix=f"b{secrets.token_hex(4)}_")
        out["postgresql durable_audit"] = lambda: SQLResultStore(
            pg, table_prefix=f"b{secrets.token_hex(4)}_", durable_audit=True
        )
    return out


def _cleanup(store: Any) -> None:
    from langchain_result_layer.stores import SQLResultStore

    if isinstance(store, SQLResultStore):
        if store.dialect == "postgresql":
            store.tables.metadata.drop_all(store.engine)
        store.close()


def _window_reads(
    read: Callable[[int, int], str], line_count: int, n: int, rng: random.Random
) -> list[float]:
    times = []
    for _ in range(n):
        start = rng.randint(1, max(1, line_count - WINDOW))
        t0 = time.perf_counter()
        read(start, start + WINDOW - 1)
        times.append(time.perf_counter() - t0)
    return times


def _concurrent_writers(store: Any, writers: int, payload: str) -> tuple[int, float]:
    from langchain_result_layer.stores import Principal

    errors: list[BaseException] = []
    barrier = threading.Barrier(writers)

    def work(i: int) -> None:
        try:
            barrier.wait(timeout=60)
            p = Principal(tenant="bench", user=f"u{i}", thread=f"t{i}")
            meta = store.put(payload, principal=p, kind="log")
            got = store.read(meta.record_id, principal=p, start_line=1, end_line=5).data
            if got != "".join(ln + "\n" for ln in payload.split("\n")[:5]):
                raise AssertionError("read back differs")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(writers)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        print(f"first writer error: {errors[0]!r}", file=sys.stderr)
    return len(errors), time.perf_counter() - t0


def run(*, corpus: Path | None, quick: bool = False) -> BenchResult:
    from langchain_result_layer.stores import Principal

    result = BenchResult(name="store_bench")
    source = _source_text(corpus)
    sizes = [MB, 4 * MB] if quick else [MB, 10 * MB, 100 * MB]
    save_size = 2 * MB if quick else 10 * MB
    reads = 20 if quick else 200
    pg = _pg_url()
    owner = Principal(tenant="bench", user="ada", thread="t1")
    rng = random.Random(1)
    save = Table("Save one result", ["backend", "MB", "seconds", "MB/s"])
    window = Table(
        f"Read a {WINDOW}-line window (median ms over {reads} random windows; p95 in brackets)",
        ["backend", *[f"{s // MB} MB" for s in sizes], f"{sizes[-1] // MB} MB / 1 MB"],
    )
    conc = Table(
        "32 concurrent writers (threads), each saving 256 KB and reading it back",
        ["backend", "writers", "errors", "wall seconds"],
    )
    data: dict[str, Any] = {
        "sizes": sizes,
        "postgresql": pg is not None,
        "window": {},
        "save": {},
        "concurrent": {},
    }
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        texts = {s: _sized(source, s) for s in sorted({*sizes, save_size})}
        for name, factory in _backends(tmp, pg).items():
            store = factory()
            try:
                t0 = time.perf_counter()
                store.put(texts[save_size], principal=owner, kind="log")
                dt = time.perf_counter() - t0
                save.rows.append([name, save_size / MB, dt, save_size / MB / dt])
                data["save"][name] = dt
                medians = []
                for size in sizes:
                    if name.startswith("langgraph") and size > 10 * MB:
                        medians.append(None)
                        continue
                    meta = store.put(texts[size], principal=owner, kind="log")

                    def read(a: int, b: int, rid: str = meta.record_id, s: Any = store) -> str:
                        return s.read(rid, principal=owner, start_line=a, end_line=b).data

                    times = _window_reads(read, meta.line_count, reads, rng)
                    med = statistics.median(times) * 1000
                    p95 = sorted(times)[int(len(times) * 0.95) - 1] * 1000
                    medians.append((med, p95))
                    data["window"].setdefault(name, {})[size] = {"median_ms": med, "p95_ms": p95}
                cells: list[Any] = [name]
                for m in medians:
                    cells.append("-" if m is None else f"{m[0]:.2f} [{m[1]:.2f}]")
                first, last = medians[0], medians[-1]
                cells.append("-" if first is None or last is None else f"{last[0] / first[0]:.2f}x")
                window.rows.append(cells)
                if name in ("sqlite", "postgresql"):
                    payload = _sized(source, 256_000)
                    errors, wall = _concurrent_writers(store, 32, payload)
                    conc.rows.append([name, 32, errors, wall])
                    data["concurrent"][name] = {"errors": errors, "wall_s": wall}
            finally:
                _cleanup(store)
        # The alternative: whole-blob rows.
        naive = _NaiveBlobStore(tmp / "naive.db")
        medians = []
        for size in sizes:
            rid = naive.put(texts[size])
            lines = texts[size].count("\n")
            times = _window_reads(
                lambda a, b, r=rid: naive.read_lines(r, a, b), lines, max(3, reads // 20), rng
            )
            med = statistics.median(times) * 1000
            p95 = sorted(times)[max(0, int(len(times) * 0.95) - 1)] * 1000
            medians.append((med, p95))
            data["window"].setdefault("naive sqlite blob", {})[size] = {"median_ms": med}
        naive.close()
        window.rows.append(
            [
                "naive sqlite blob (alternative)",
                *[f"{m[0]:.2f} [{m[1]:.2f}]" for m in medians],
                f"{medians[-1][0] / medians[0][0]:.2f}x",
            ]
        )
    result.tables += [save, window, conc]
    sq = data["window"].get("sqlite", {})
    nv = data["window"]["naive sqlite blob"]
    big = sizes[-1]
    if big in sq:
        result.notes.append(
            f"At {big // MB} MB, the chunked SQLite store reads a {WINDOW}-line window "
            f"{nv[big]['median_ms'] / sq[big]['median_ms']:.0f}x faster than the whole-blob "
            "alternative."
        )
    if pg is None:
        result.notes.append("PostgreSQL skipped: LRL_POSTGRES_URL unset or unreachable.")
    result.notes.append(
        f"Source: {'corpus logs' if corpus else 'generated log lines'}, repeated to size; "
        f"{'quick run' if quick else 'full run'}."
    )
    result.data = data
    return result


if __name__ == "__main__":
    quick_run = "--quick" in sys.argv
    bench = run(corpus=corpus_path(), quick=quick_run)
    print(bench.render())
    print(bench.write_json())
