"""Throughput of the per-result pipeline on 1, 10 and 50 MB of real logs.

First, the whole per-result path as a user runs it: `ResultLayer(context_window=128_000)`
(default configuration: in-memory store, exact `o200k_base` counter, default view choice)
and `process_tool_message` on a `ToolMessage` whose content is the corpus's real **build
logs** (every labelled LogChunks and CiDiff log, public and `train/`, in a fixed order)
concatenated and repeated to 1, 10 and 50 MB; side by side, tiktoken's `encode_ordinary`
over the same text (what merely counting the input exactly would cost). Each figure is the
minimum of several runs (the machine may be shared: the minimum is the least disturbed run).
"First sight" uses a new layer for each run, as a user's layer sees each result once; "same
text again" reuses one layer, whose counter remembers the counts of the last long texts it
counted (how this table was measured before).
Then every build log of the corpus on its own: total MB/s, and the slowest log.

Then the plain-text pipeline on the corpus's mixed real logs (CI builds, system logs, test
runs) concatenated and repeated to the size. For each size it measures, with the exact
`o200k_base` counter and the default budget of a 128k-token window (38,400 tokens, 400,000
characters):

- the plain-text pipeline (`ToolPolicy(kind="text")`) without a store and with the
  in-memory store: best wall time, MB/s, and peak memory (tracemalloc, in a separate run)
  as a multiple of the input string's size;
- the pipeline with its default view choice (sniffing every registered view), for reference;
- two naive baselines in the same run: LangChain's `count_tokens_approximately` plus a
  head slice of `4 * budget` characters, and exact tiktoken over the whole input plus a
  token slice; with how far the naive slice overshoots the budget under the exact counter.

Last, bounded cost (issue 12 item 8): 300 MB inputs that are cheap to build and costly to
show (one line of `x`, 100-character lines, JSON bombs: empty objects, distinct keys, deep
nesting; real build logs) through `process_tool_message` with the default configuration:
the best of two timed runs and one tracemalloc run each (peak extra memory as a multiple of
the input's characters, and of its `str`'s own size: one character outside Latin-1 makes
CPython keep every character of a str in 2 bytes, one outside the BMP in 4, and the
concatenated build logs have emoji). Target: <= 2 s and <= 2x.

Run: `python -m benchmarks.throughput` (`--quick` for the 1 MB smoke run;
`--cost-only 300` for the bounded-cost shapes alone).
"""

from __future__ import annotations

import gc
import itertools
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from benchmarks._common import BenchResult, Table, best_cpu, corpus_path, read_text
from benchmarks.token_calibration import concatenated_logs

BUDGET_TOKENS = 38_400
BUDGET_CHARS = 400_000
MB = 1_000_000


def _best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best = float("inf")
    result = None
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def _best_first_sight(msg: Any, repeat: int) -> tuple[float, float]:
    """Best wall and CPU time of `process_tool_message` by a new layer each run.

    A user's layer sees each result once; a layer that processes the same text again finds
    the counts of the texts it counted last in its counter's small cache. The CPU time of
    this (single-threaded) process is what one core spends, whatever else the machine runs.
    """
    from langchain_result_layer import ResultLayer

    best = cpu = float("inf")
    for i in range(repeat):
        layer = ResultLayer(context_window=128_000)
        layer.token_counter.count("warm up")  # load the encoding outside the timing
        fresh = msg.model_copy(update={"tool_call_id": f"call_first_{i}"})
        gc.collect()
        start, start_cpu = time.perf_counter(), time.process_time()
        layer.process_tool_message(fresh)
        best = min(best, time.perf_counter() - start)
        cpu = min(cpu, time.process_time() - start_cpu)
        del layer
    return best, cpu


def _peak(fn: Callable[[], Any]) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _pipelines() -> dict[str, Any]:
    from langchain_result_layer.config import ToolPolicy
    from langchain_result_layer.core.budget import Budget
    from langchain_result_layer.core.tokens import TiktokenCounter
    from langchain_result_layer.pipeline import ResultPipeline
    from langchain_result_layer.stores.memory import InMemoryResultStore

    counter = TiktokenCounter()
    counter.count("warm up")  # load the encoding outside the timings
    budget = Budget(tokens=BUDGET_TOKENS, chars=BUDGET_CHARS)
    text = {"shell": ToolPolicy(kind="text")}
    return {
        "text view, no store": ResultPipeline(
            budget=budget, counter=counter, store=None, policies=text
        ),
        "text view, in-memory store": ResultPipeline(
            budget=budget,
            counter=counter,
            store=InMemoryResultStore(max_record_size=None),
            policies=text,
        ),
        "default views, no store": ResultPipeline(budget=budget, counter=counter, store=None),
    }


def _naive_langchain(raw: str) -> str:
    from langchain_core.messages import ToolMessage
    from langchain_core.messages.utils import count_tokens_approximately

    msg = ToolMessage(content=raw, tool_call_id="c1")
    if count_tokens_approximately([msg]) <= BUDGET_TOKENS:
        return raw
    return raw[: BUDGET_TOKENS * 4] + "\n... [truncated]"


def _naive_tiktoken(raw: str) -> str:
    from langchain_result_layer.core.tokens import load_offline_encoding

    enc = load_offline_encoding("o200k_base")
    assert enc is not None
    ids = enc.encode_ordinary(raw)
    if len(ids) <= BUDGET_TOKENS:
        return raw
    return enc.decode(ids[: BUDGET_TOKENS - 16]) + "\n... [truncated]"


def build_log_paths(corpus: Path) -> list[Path]:
    """Every labelled build log of the corpus (public LogChunks and CiDiff, then `train/`)."""
    import json

    paths: list[Path] = []
    for root in (corpus, corpus / "train"):
        cases = root / "cases.jsonl"
        if not cases.is_file():
            continue
        with open(cases, encoding="utf-8") as fh:
            for line in fh:
                case = json.loads(line)
                if case.get("kind") == "build_log" and str(case.get("source", "")).startswith(
                    ("logchunks", "cidiff")
                ):
                    paths.append(root / case["path"])
    return paths


def concatenated_build_logs(corpus: Path, size: int) -> str:
    """The corpus's build logs concatenated (and repeated) to exactly `size` characters."""
    parts: list[str] = []
    total = 0
    for path in build_log_paths(corpus):
        parts.append(read_text(path))
        total += len(parts[-1])
        if total >= size:
            break
    joined = "".join(parts)
    if not joined:
        msg = f"no build logs found under {corpus}"
        raise FileNotFoundError(msg)
    return (joined * (size // len(joined) + 1))[:size]


def _layer_path(corpus: Path, sizes: list[int], quick: bool) -> tuple[list[Table], dict[str, Any]]:
    """`process_tool_message` with the default configuration, next to tiktoken."""
    from langchain_core.messages import ToolMessage

    from langchain_result_layer import ResultLayer
    from langchain_result_layer.core.tokens import load_offline_encoding

    enc = load_offline_encoding("o200k_base")
    table = Table(
        "The per-result path: ResultLayer(context_window=128_000).process_tool_message on real "
        "build logs (minimum of repeated runs; first sight: a new layer each run)",
        [
            "input",
            "runs",
            "first sight s",
            "MB/s",
            "same text again s",
            "first sight CPU s",
            "view kind",
            "view tokens",
            "tiktoken encode_ordinary s",
            "tiktoken MB/s",
            "tiktoken CPU s",
            "ours / tiktoken time",
        ],
    )
    data: dict[str, Any] = {}
    for size in sizes:
        raw = concatenated_build_logs(corpus, size)
        mb = len(raw.encode("utf-8", "surrogatepass")) / MB
        layer = ResultLayer(context_window=128_000)
        msg = ToolMessage(content=raw, tool_call_id="call_bench", name="shell")
        repeat = 1 if quick else (7 if size <= MB else 3)
        ids = itertools.count()

        def once(
            msg: ToolMessage = msg, layer: ResultLayer = layer, ids: Iterator[int] = ids
        ) -> ToolMessage:
            fresh = msg.model_copy(update={"tool_call_id": f"call_bench_{next(ids)}"})
            return layer.process_tool_message(fresh)

        once()  # warm up: imports, the encoding, the view registry
        again, out = _best(once, repeat)  # the counter remembers the last texts it counted
        seconds, cpu = _best_first_sight(msg, repeat)
        tk = tk_cpu = float("nan")
        if enc is not None:
            tk, _ = _best(lambda raw=raw: enc.encode_ordinary(raw), min(repeat, 3))
            tk_cpu = best_cpu(lambda raw=raw: enc.encode_ordinary(raw), min(repeat, 3))
        view = out.artifact
        tokens = layer.token_counter.count(str(out.content))
        table.rows.append(
            [
                f"{size // MB} MB",
                repeat,
                seconds,
                mb / seconds,
                again,
                cpu,
                getattr(view, "kind", "?"),
                tokens,
                tk,
                mb / tk if tk == tk else "-",
                tk_cpu,
                f"{seconds / tk:.2f}x" if tk == tk else "-",
            ]
        )
        data[f"{size // MB} MB"] = {
            "seconds": seconds,
            "mb_per_s": mb / seconds,
            "same_text_again_seconds": again,
            "first_sight_cpu_seconds": cpu,
            "tiktoken_cpu_seconds": tk_cpu,
            "tiktoken_seconds": tk,
            "view_kind": getattr(view, "kind", None),
        }
        del raw, msg, layer
    per_log = Table(
        "Every build log of the corpus on its own (process_tool_message, default configuration)",
        ["logs", "MB", "total seconds", "MB/s", "slowest log", "its MB", "its MB/s"],
    )
    paths = build_log_paths(corpus)[: 6 if quick else None]
    layer = ResultLayer(context_window=128_000)
    total_s = total_mb = 0.0
    slowest: tuple[float, str, float] = (float("inf"), "-", 0.0)
    for i, path in enumerate(paths):
        raw = read_text(path)
        mb = len(raw.encode("utf-8", "surrogatepass")) / MB
        msg = ToolMessage(content=raw, tool_call_id=f"call_log_{i}", name="shell")
        seconds, _ = _best(
            lambda msg=msg, layer=layer: layer.process_tool_message(msg), 1 if quick else 2
        )
        total_s += seconds
        total_mb += mb
        if mb >= 0.1 and mb / seconds < slowest[0]:
            slowest = (mb / seconds, str(path.relative_to(corpus)), mb)
    per_log.rows.append(
        [
            len(paths),
            total_mb,
            total_s,
            total_mb / max(total_s, 1e-9),
            slowest[1],
            slowest[2],
            slowest[0] if slowest[1] != "-" else "-",
        ]
    )
    data["per_log"] = {
        "logs": len(paths),
        "mb": total_mb,
        "seconds": total_s,
        "slowest": {"path": slowest[1], "mb": slowest[2], "mb_per_s": slowest[0]},
    }
    return [table, per_log], data


# --------------------------------------------------------------------------- bounded cost


def _keys_object(n_keys: int) -> str:
    """`{"k0":0,"k1":0,...}` with `n_keys` distinct keys, built in chunks (no huge list)."""
    chunks = [
        ",".join(f'"k{j}":0' for j in range(i, min(i + 100_000, n_keys)))
        for i in range(0, n_keys, 100_000)
    ]
    return "{" + ",".join(chunks) + "}"


def cost_shapes(size: int, corpus: Path | None) -> dict[str, Callable[[], str]]:
    """Inputs of about `size` characters that are cheap to build and costly to show.

    A single line of `x` (the worst character for the evidence engine's keyword search),
    100-character lines, JSON bombs (empty objects, distinct keys, deep nesting) and, with a
    corpus, real build logs repeated.
    """
    shapes: dict[str, Callable[[], str]] = {
        "one line of 'x'": lambda: "x" * size,
        "100-char lines": lambda: ("y" * 99 + "\n") * (size // 100),
        "empty objects [{},{},...]": lambda: "[" + "{}," * (size // 3 - 1) + "{}]",
        'distinct keys {"k0":0,...}': lambda: _keys_object(size // 13),
        "deep nesting [[[...]]]": lambda: "[" * (size // 2) + "]" * (size // 2),
    }
    if corpus is not None:
        shapes["real build logs"] = lambda: concatenated_build_logs(corpus, size)
    return shapes


def bounded_cost(sizes: list[int], corpus: Path | None) -> tuple[Table, dict[str, Any]]:
    """Time and peak extra memory of each cost shape through `process_tool_message`.

    Default configuration (`ResultLayer(context_window=128_000)`: in-memory store, exact
    counter). The better of two timed runs and one tracemalloc run per input (they are large
    and the machine is shared); the input string itself is not counted in the peak.
    """
    from langchain_core.messages import ToolMessage

    from langchain_result_layer import ResultLayer

    table = Table(
        "Bounded cost: process_tool_message on large inputs (default configuration; "
        "target <= 2 s and <= 2x the input in extra memory)",
        [
            "input",
            "MB",
            "str bytes / char",
            "seconds",
            "CPU s",
            "peak extra MB",
            "peak / input chars",
            "peak / input str",
            "view kind",
            "view chars",
        ],
    )
    data: dict[str, Any] = {}
    ids = itertools.count()

    def fresh_layer() -> ResultLayer:  # a new store for each input: no records kept between
        layer = ResultLayer(context_window=128_000)
        layer.process_tool_message(ToolMessage(content="warm up", tool_call_id="w", name="t"))
        return layer

    def once(layer: ResultLayer, text: str) -> ToolMessage:
        msg = ToolMessage(content=text, tool_call_id=f"cost_{next(ids)}", name="shell")
        return layer.process_tool_message(msg)

    for size in sizes:
        for name, build in cost_shapes(size, corpus).items():
            text = build()
            seconds = cpu = float("inf")
            for _ in range(2):  # the machine may be shared: the better of two runs
                layer = fresh_layer()
                gc.collect()
                start, start_cpu = time.perf_counter(), time.process_time()
                out = once(layer, text)
                seconds = min(seconds, time.perf_counter() - start)
                cpu = min(cpu, time.process_time() - start_cpu)
            kind = out.response_metadata["result_layer"].get("kind")
            shown = len(str(out.content))
            del out, layer
            layer = fresh_layer()
            peak = _peak(lambda layer=layer, t=text: once(layer, t))
            del layer
            label = f"{name}, {size // MB} MB"
            str_bytes = sys.getsizeof(text)
            table.rows.append(
                [
                    label,
                    len(text) / MB,
                    f"{str_bytes / max(1, len(text)):.0f}",
                    seconds,
                    cpu,
                    peak / MB,
                    peak / len(text),
                    peak / str_bytes,
                    kind,
                    shown,
                ]
            )
            data[label] = {
                "chars": len(text),
                "str_bytes": str_bytes,
                "cpu_seconds": cpu,
                "seconds": seconds,
                "peak_bytes": peak,
                "peak_ratio": peak / len(text),
                "view_kind": kind,
            }
            del text
    return table, data


def run(*, corpus: Path | None, quick: bool = False) -> BenchResult:
    """Measure MB/s and peak memory per size (see the module docstring)."""
    from langchain_result_layer.core.tokens import TiktokenCounter

    result = BenchResult(name="throughput")
    if corpus is None:
        result.notes.append("corpus not found: nothing measured")
        return result
    layer_tables, layer_data = _layer_path(
        corpus, [1 * MB] if quick else [1 * MB, 10 * MB, 50 * MB], quick
    )
    result.tables += layer_tables
    exact = TiktokenCounter()
    sizes = [1 * MB] if quick else [1 * MB, 10 * MB, 50 * MB]
    pipelines = _pipelines()
    table = Table(
        f"Pipeline throughput on real logs (budget {BUDGET_TOKENS:,} tokens / "
        f"{BUDGET_CHARS:,} chars, o200k_base)",
        [
            "input",
            "variant",
            "seconds",
            "MB/s",
            "peak extra / input",
            "view tokens",
            "speed-up vs tiktoken-everything",
        ],
    )
    baselines = Table(
        "Naive baselines in the same run",
        ["input", "baseline", "seconds", "MB/s", "exact tokens of its view", "over budget"],
    )
    data: dict[str, Any] = {}
    for size in sizes:
        raw = concatenated_logs(corpus, size)
        label = f"{size // MB} MB"
        input_bytes = sys.getsizeof(raw)
        mb = len(raw.encode("utf-8", "surrogatepass")) / MB
        repeat = 1 if quick or size >= 50 * MB else 3
        row_data: dict[str, Any] = {"chars": len(raw), "utf8_mb": mb, "str_bytes": input_bytes}
        naive_t, naive_view = _best(lambda raw=raw: _naive_langchain(raw), repeat)
        naive_tokens = exact.count(naive_view)
        baselines.rows.append(
            [
                label,
                "count_tokens_approximately + head slice",
                naive_t,
                mb / naive_t,
                naive_tokens,
                naive_tokens > BUDGET_TOKENS,
            ]
        )
        row_data["naive_langchain"] = {"seconds": naive_t, "view_tokens": naive_tokens}
        tk_t, tk_view = _best(lambda raw=raw: _naive_tiktoken(raw), 1)
        tk_tokens = exact.count(tk_view)
        baselines.rows.append(
            [
                label,
                "tiktoken over everything + token slice",
                tk_t,
                mb / tk_t,
                tk_tokens,
                tk_tokens > BUDGET_TOKENS,
            ]
        )
        row_data["naive_tiktoken"] = {"seconds": tk_t, "view_tokens": tk_tokens}
        for name, pipe in pipelines.items():
            seconds, outcome = _best(
                lambda pipe=pipe, raw=raw: pipe.process(raw, tool_name="shell"), repeat
            )
            peak = _peak(lambda pipe=pipe, raw=raw: pipe.process(raw, tool_name="shell"))
            tokens = exact.count(outcome.content)
            assert tokens <= BUDGET_TOKENS
            table.rows.append(
                [
                    label,
                    name,
                    seconds,
                    mb / seconds,
                    peak / input_bytes,
                    tokens,
                    f"{tk_t / seconds:.2f}x",
                ]
            )
            row_data[name] = {
                "seconds": seconds,
                "mb_per_s": mb / seconds,
                "peak_bytes": peak,
                "peak_ratio": peak / input_bytes,
                "view_tokens": tokens,
                "view_kind": outcome.view.kind,
            }
            if pipe.store is not None:  # do not keep 60 MB of records between sizes
                pipe.store = type(pipe.store)(max_record_size=None)
        data[label] = row_data
        del raw
    result.tables += [table, baselines]
    cost_table, cost_data = bounded_cost([3 * MB] if quick else [300 * MB], corpus)
    result.tables.append(cost_table)
    result.data = {"per_result_path": layer_data, **data, "bounded_cost": cost_data}
    result.notes += [
        "MB = 10^6 bytes of UTF-8. The per-result path's input: the corpus's labelled build "
        "logs concatenated and repeated; every time is the minimum of repeated runs on a "
        "shared machine (other processes were running). CPU s: this process's CPU time "
        "(time.process_time), what one core spends on the work whatever else runs.",
        "The text-view rows' input: the corpus's mixed logs concatenated and repeated.",
        "peak extra / input: tracemalloc's peak of allocations made while processing, "
        "divided by the input string's own size (sys.getsizeof); the input itself is not "
        "counted, so total memory is (1 + ratio) times the input.",
        "Naive LangChain slice: 4 chars per budget token from the head, no store, no notice; "
        "it overshoots the budget whenever the kept text has fewer than 4 chars per token "
        "(these logs' heads have about 4.9, their bodies about 3).",
        "tiktoken-everything: exact but tokenizes the whole input; the last column compares "
        "the pipeline's time with it.",
        "Default views: the registered views sniff the input and the most confident one "
        "renders it (for logs, a log or command view); its cost belongs to that view.",
    ]
    return result


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=None)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--cost-only",
        type=int,
        metavar="MB",
        help="only the bounded-cost shapes, at this size in MB (e.g. 300)",
    )
    args = parser.parse_args()
    if args.cost_only:
        cost, cost_data = bounded_cost([args.cost_only * MB], corpus_path(args.corpus))
        res = BenchResult(name=f"throughput_cost_{args.cost_only}mb", tables=[cost])
        res.data = cost_data
    else:
        res = run(corpus=corpus_path(args.corpus), quick=args.quick)
    print(res.render())
    print(f"written to {res.write_json()}")
