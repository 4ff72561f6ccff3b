"""Adversarial inputs through the layer: time and peak memory per shape (issue 12).

Shapes (all built here, no corpus needed):

- **regex DoS** (item 2), 1 MB each through `ResultLayer.process_tool_message` with the
  default 128k window: a 1 MB line ending `\\x01\\r\\n`, ten such 100 kB lines, a control
  character every 4 kB, a table rule line of 60,000 spaces, digit runs before ` error`, and
  runs of the characters that made the package's patterns backtrack. Target: <= 1 s each.
- **odd objects** (item 6): an object whose `repr` raises, an int over 4,300 digits, an
  infinite generator, a structure shared 2**80 times, through the pipeline. Target: <= 2 s.
- **bounded cost** (item 8): 5,000,000 empty objects, 1,000,000 keys, a 1,000,000-deep
  nesting, through `process_tool_message`; peak extra memory (tracemalloc, separate run) as a
  multiple of the input. Target: <= 2 s and <= 2x. (The same shapes at 300 MB, a 300 MB
  string and 300 MB of real logs: `python -m benchmarks throughput`.)
- **`?path=` fetches** on a 66 MB JSON record (900,000 elements): a malformed path, the
  first page, a late page, one element. Peak memory as a multiple of the record.
- **quota check** of the LangGraph-store adapter: time per put at 100 and 4,000 records.

Each time is the best of `repeat` runs on a shared machine; memory runs are separate (the
tracer slows Python code down). `--quick` scales every shape down (smoke test).

Run: `python -m benchmarks adversarial` (`--quick` for the smoke run).
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from benchmarks._common import BenchResult, Table, timed
from benchmarks.throughput import _keys_object, _peak

MB = 1_000_000


def _best(fn: Callable[[], Any], repeat: int) -> float:
    return timed(fn, repeat=repeat)[0]


# --------------------------------------------------------------------------- shapes


def regex_shapes(size: int) -> dict[str, str]:
    """The regex-DoS shapes of issue 12 item 2, each about `size` characters."""
    rows = "".join(f"{i}|{i}|{i}\n" for i in range(size // 20))
    return {
        "one line ending \\x01\\r\\n": "x" * (size - 3) + "\x01\r\n",
        "ten lines ending \\x01\\r\\n": ("x" * (size // 10 - 3) + "\x01\r\n") * 10,
        "a control char every 4 kB": ("y" * 4095 + "\x01") * max(1, size // 4096),
        "table rule of 60k spaces + rows": "a|b|c\n---" + " " * min(60_000, size) + "x\n" + rows,
        "2,000-digit runs + ' error'": ("1" * 2000 + " error\n") * max(1, size // 2007),
        "20k-char letter runs": ("a" * 20_000 + "\n") * max(1, size // 20_001),
        "'~' runs": ("~" * 20_000 + "\n") * max(1, size // 20_001),
        "'.1' pairs": (".1" * 10_000 + "\x01\n") * max(1, size // 20_002),
        "space runs then x": (" " * 20_000 + "x\n") * max(1, size // 20_002),
    }


class _RaisingRepr:
    def __repr__(self) -> str:
        raise RuntimeError("repr is broken")


def _shared(levels: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(levels):
        value = [value, value]
    return value


def _endless() -> Iterator[dict[str, int]]:
    return ({"i": i} for i in itertools.count())


def odd_objects() -> dict[str, Callable[[], Any]]:
    """Tool outputs that used to crash or hang the layer (item 6)."""
    return {
        "repr raises": _RaisingRepr,
        "int of 5,001 digits": lambda: {"n": 10**5_000},
        "list of both": lambda: [_RaisingRepr(), 10**5_000] * 1_000,
        "infinite generator": _endless,
        "structure shared 2**80 times": lambda: _shared(80),
    }


def cost_shapes(scale: float) -> dict[str, Callable[[], str]]:
    """The JSON bombs of issue 12 item 8 at its sizes (`scale` 1.0).

    The same shapes at 300 MB, with a 300 MB string and real logs, are measured by
    `python -m benchmarks throughput` (`bounded_cost`).
    """
    n_objects = int(5_000_000 * scale)
    depth = int(1_000_000 * scale)
    return {
        f"{n_objects:,} empty objects": lambda: "[" + "{}," * (n_objects - 1) + "{}]",
        f"{int(1_000_000 * scale):,} keys": lambda: _keys_object(int(1_000_000 * scale)),
        f"{depth:,}-deep nesting": lambda: "[" * depth + "]" * depth,
    }


# --------------------------------------------------------------------------- runs


def _layer() -> Any:
    from langchain_core.messages import ToolMessage

    from langchain_result_layer import ResultLayer

    layer = ResultLayer(context_window=128_000, store="memory")
    layer.process_tool_message(ToolMessage(content="warm up", tool_call_id="w", name="t"))
    return layer


def _through(layer: Any, content: str) -> Any:
    from langchain_core.messages import ToolMessage

    return layer.process_tool_message(ToolMessage(content=content, tool_call_id="c", name="t"))


def _regex_table(quick: bool) -> tuple[Table, dict[str, Any]]:
    layer = _layer()
    size = 50_000 if quick else MB
    table = Table(
        f"Regex-DoS shapes through process_tool_message ({size:,} chars, 128k window)",
        ["shape", "chars", "seconds (best of 3)", "view chars", "target"],
    )
    data: dict[str, Any] = {}
    for name, text in regex_shapes(size).items():
        seconds = _best(lambda t=text: _through(layer, t), 1 if quick else 3)
        shown = len(str(_through(layer, text).content))
        table.rows.append([name, len(text), seconds, shown, "<= 1 s"])
        data[name] = seconds
    return table, data


_FORCED_KINDS = ("text", "log", "command", "rows", "json")


def _forced_views_table(quick: bool) -> tuple[Table, dict[str, Any]]:
    """Each regex-DoS shape through each view, forced with `ToolPolicy(kind=...)`."""
    from langchain_core.messages import ToolMessage

    from langchain_result_layer import ResultLayer
    from langchain_result_layer.config import ToolPolicy

    size = 50_000 if quick else MB
    table = Table(
        f"Regex-DoS shapes through each view forced by ToolPolicy(kind=...) ({size:,} chars, "
        "128k window; seconds, best of 3; target <= 1 s)",
        ["shape", *_FORCED_KINDS],
    )
    layers = {}
    for kind in _FORCED_KINDS:
        layer = ResultLayer(
            context_window=128_000, store="memory", tool_policies={"t": ToolPolicy(kind=kind)}
        )
        layer.process_tool_message(ToolMessage(content="warm up", tool_call_id="w", name="t"))
        layers[kind] = layer
    data: dict[str, Any] = {}
    for name, text in regex_shapes(size).items():
        row: list[Any] = [name]
        for kind, layer in layers.items():
            seconds = _best(lambda t=text, lay=layer: _through(lay, t), 1 if quick else 3)
            row.append(seconds)
            data[f"{name} / {kind}"] = seconds
        table.rows.append(row)
    return table, data


def _odd_table(quick: bool) -> tuple[Table, dict[str, Any]]:
    from langchain_result_layer.core.jsonable import to_json_text

    layer = _layer()
    table = Table(
        "Odd objects through the pipeline (raw tool output)",
        ["object", "seconds", "view chars", "target"],
    )
    data: dict[str, Any] = {}
    for name, build in odd_objects().items():
        value = build()
        start = time.perf_counter()
        outcome = layer.pipeline.process(value, tool_name="odd")
        seconds = time.perf_counter() - start
        table.rows.append([name, seconds, len(to_json_text(outcome.content)), "<= 2 s"])
        data[name] = seconds
        if quick:
            break
    return table, data


def _cost_table(quick: bool) -> tuple[Table, dict[str, Any]]:
    layer = _layer()
    table = Table(
        "Bounded cost through process_tool_message (peak extra memory: tracemalloc)",
        ["input", "MB", "seconds", "peak extra MB", "peak / input", "view kind", "target"],
    )
    data: dict[str, Any] = {}
    for name, build in cost_shapes(0.01 if quick else 1.0).items():
        text = build()
        seconds = _best(lambda t=text: _through(layer, t), 1)
        out = _through(layer, text)
        peak = _peak(lambda t=text: _through(layer, t))
        kind = out.response_metadata["result_layer"].get("kind")
        table.rows.append(
            [name, len(text) / MB, seconds, peak / MB, peak / len(text), kind, "<= 2 s, <= 2x"]
        )
        data[name] = {"seconds": seconds, "peak_ratio": peak / len(text)}
        del text, out
    return table, data


def _fetch_table(quick: bool) -> tuple[Table, dict[str, Any]]:
    from langchain_result_layer import ResultLayer
    from langchain_result_layer.stores import InMemoryResultStore

    n = 20_000 if quick else 900_000
    doc = {
        "meta": {"n": 1},
        "items": [
            {"id": i, "name": f"item {i}", "tags": ["a", "b"], "v": i * 1.5} for i in range(n)
        ],
    }
    raw = json.dumps(doc)
    del doc
    layer = ResultLayer(
        context_window=128_000,
        store=InMemoryResultStore(max_record_size=None),
        token_counter="approximate",
    )
    meta = layer.store.put(raw, principal=layer.principal_for(None), kind="json")
    ref = f"ref://tool-result/{meta.record_id}/json"
    last_page = n // 50

    def fetch(r: str) -> Any:
        call = {"type": "tool_call", "id": "f", "name": layer.fetch_tool.name, "args": {"ref": r}}
        return layer.fetch_tool.invoke(call)

    table = Table(
        f"?path= fetches on a {len(raw) / MB:.1f} MB JSON record ({n:,} elements)",
        ["request", "seconds", "peak extra MB", "peak / record", "status"],
    )
    data: dict[str, Any] = {}
    requests = {
        "malformed path": f"{ref}?path=$.items[oops",
        "page 1 (50 elements)": f"{ref}?path=$.items&page=1&page_size=50",
        f"page {last_page:,} (the last)": f"{ref}?path=$.items&page={last_page}&page_size=50",
        "one element": f"{ref}?path=$.items[{n // 2}]",
    }
    for name, r in requests.items():
        seconds = _best(lambda r=r: fetch(r), 1 if quick else 2)
        peak = _peak(lambda r=r: fetch(r))
        status = fetch(r).status
        table.rows.append([name, seconds, peak / MB, peak / len(raw), status])
        data[name] = {"seconds": seconds, "peak_ratio": peak / len(raw)}
    return table, data


def _quota_table(quick: bool) -> tuple[Table, dict[str, Any]]:
    from langgraph.store.memory import InMemoryStore

    from langchain_result_layer.stores import LangGraphResultStore, Principal

    table = Table(
        "LangGraph-store adapter with a tenant quota: time per put",
        ["records already stored", "ms per put (best of 50)"],
    )
    data: dict[str, Any] = {}
    for count in [100] if quick else [100, 4_000]:
        store = LangGraphResultStore(InMemoryStore(), tenant_quota=10**12)
        p = Principal(tenant="acme")
        for _ in range(count):
            store.put("x" * 100, principal=p)
        per_put = _best(lambda s=store, q=p: s.put("y" * 100, principal=q), 50) * 1000
        table.rows.append([count, per_put])
        data[str(count)] = per_put
    return table, data


def run(*, corpus: Path | None, quick: bool = False) -> BenchResult:
    """Time (and memory) of every adversarial shape (see the module docstring)."""
    del corpus  # every input is built here
    result = BenchResult(name="adversarial")
    for build in (
        _regex_table,
        _forced_views_table,
        _odd_table,
        _cost_table,
        _fetch_table,
        _quota_table,
    ):
        table, data = build(quick)
        result.tables.append(table)
        result.data[table.title] = data
    result.notes.append(
        "Times are the best of several runs on a shared machine; peak memory is a separate "
        "tracemalloc run (Python allocations, the input string itself excluded)."
    )
    return result


if __name__ == "__main__":
    import sys

    print(run(corpus=None, quick="--quick" in sys.argv).render())
