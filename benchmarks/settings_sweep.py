"""Choosing settings: the effect of the window and `max_result_tokens`, measured.

Calls the existing benchmarks over a grid instead of re-implementing them:

- **prompt-cache breaks, cost and evidence in context** (`guard_replay`): the real agent
  conversations of the corpus replayed through the full product (per-result layer + guard), for
  each window and per-result cap; next to `ContextEditingMiddleware` at the same window.
  `evidence` is the mean tokens of tool results the model still sees per call (not placeholders).
- **evidence kept in one result** (`evidence_recall`): the share of failing build logs whose every
  labelled failure line the chosen view keeps at that per-result cap, on the validation set (the
  repositories no rule was tuned on).
- **the demo investigation** (`langchain_result_layer.demo`): the scripted `create_agent` run of
  `python -m langchain_result_layer demo` (results of 20 kB to 1.4 MB, fetches of the references it
  is shown) with `layer.middleware()`, measured with the same meter: its results are far larger
  than the corpus conversations', so the guard works at every window below 128k.

`max_result_tokens=None` is the default, 30% of the window. Run:
`python -m benchmarks settings_sweep --corpus ../shared/corpus` (about 10 minutes here;
`--quick`: one window, two caps, three conversations and three logs).
"""

from __future__ import annotations

import contextlib
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from langchain_core.messages import SystemMessage

from benchmarks import evidence_recall, guard_replay
from benchmarks._common import BenchResult, Table, corpus_path
from langchain_result_layer import GuardSettings, ResultLayer
from langchain_result_layer.adapters._messages import RequestCounter
from langchain_result_layer.core.budget import DEFAULT_RESULT_FRACTION
from langchain_result_layer.core.tokens import TiktokenCounter

WINDOWS = (8_000, 16_000, 32_000, 128_000)
DEMO_WINDOWS = (16_000, 32_000)
RESULT_TOKENS: tuple[int | None, ...] = (None, 4_000, 2_000, 1_000)


def _cap(window: int, max_result_tokens: int | None) -> int:
    return max_result_tokens or int(window * DEFAULT_RESULT_FRACTION)


@contextlib.contextmanager
def _replay_at(window: int, max_result_tokens: int | None) -> Iterator[None]:
    """`guard_replay` with another window and per-result cap (its settings are module-level)."""
    saved = guard_replay.WINDOW, guard_replay.TRIGGER, guard_replay._layer

    def layer(**settings: Any) -> ResultLayer:
        return ResultLayer(
            context_window=window,
            max_result_tokens=max_result_tokens,
            store="memory",
            token_counter="tiktoken",
            guard=GuardSettings(on_overflow="send", **settings),
        )

    guard_replay.WINDOW, guard_replay.TRIGGER = window, int(window * 0.75)
    guard_replay._layer = layer
    try:
        yield
    finally:
        guard_replay.WINDOW, guard_replay.TRIGGER, guard_replay._layer = saved


def _replay(
    convs: list[guard_replay.Conversation], meter: guard_replay.Meter, strategy: Any
) -> guard_replay.Metrics:
    total = guard_replay.Metrics()
    for conv in convs:
        total.add(meter.measure(conv, strategy(conv, meter.rc)))
    return total


def _recall(logs: list[Any], counter: Any, budget: int) -> float:
    chosen = evidence_recall._strategies(counter, budget_tokens=budget)["chosen view"]
    results = evidence_recall._evaluate(logs, chosen, counter, budget)
    return evidence_recall._stats(logs, results).all_rate


def _demo_requests(window: int, max_result_tokens: int | None, workdir: Path) -> list[Any]:
    """The requests of the demo investigation with the layer (scripted model)."""
    from langchain.agents import create_agent

    from langchain_result_layer import ScriptedChatModel
    from langchain_result_layer.demo import SYSTEM_PROMPT, demo_script, make_demo_tools

    model = ScriptedChatModel(script=demo_script(), max_input_tokens=window)
    layer = ResultLayer(
        model=model, max_result_tokens=max_result_tokens, store="memory", token_counter="tiktoken"
    )
    agent = create_agent(
        model,
        make_demo_tools(workdir),
        system_prompt=SYSTEM_PROMPT,
        middleware=[layer.middleware()],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent.invoke(
            {
                "messages": [
                    ("user", "Why do the unit tests fail, and what does the stdlib define?")
                ]
            },
            {"recursion_limit": 100, "configurable": {"thread_id": "sweep"}},
        )
    return [[m for m in r if not isinstance(m, SystemMessage)] for r in model.requests]


def _demo_table(counter: Any, caps: tuple[int | None, ...], windows: tuple[int, ...]) -> Table:
    from langchain_result_layer.demo import SYSTEM_PROMPT

    table = Table(
        title="the demo investigation (scripted create_agent + layer.middleware())",
        columns=["window", "max_result_tokens", "calls", "over window", "cache breaks", "peak"],
    )
    with tempfile.TemporaryDirectory(prefix="lrl-sweep-") as tmp:
        for window in windows:
            for max_result_tokens in caps:
                requests = _demo_requests(window, max_result_tokens, Path(tmp))
                conv = guard_replay.Conversation(name="demo", system=SYSTEM_PROMPT, messages=[])
                with _replay_at(window, max_result_tokens):
                    m = guard_replay.Meter(RequestCounter(counter)).measure(conv, requests)
                cap = _cap(window, max_result_tokens)
                table.rows.append(
                    [
                        f"{window:,}",
                        f"{cap:,}" + (" (default)" if max_result_tokens is None else ""),
                        m.calls,
                        m.over_window,
                        m.cache_breaks,
                        f"{100 * m.max_fraction:.0f}%",
                    ]
                )
    return table


def run(*, corpus: Path | None, quick: bool = False) -> BenchResult:
    result = BenchResult(name="settings_sweep")
    corpus = corpus or corpus_path()
    if corpus is None or not (corpus / "trajectories").exists():
        result.notes.append("corpus with trajectories/ not found: nothing measured")
        return result
    counter = TiktokenCounter(encoding="o200k_base")
    if not counter.available:
        result.notes.append("o200k_base data not available offline: nothing measured")
        return result
    windows = WINDOWS[:1] if quick else WINDOWS
    caps = RESULT_TOKENS[:2] if quick else RESULT_TOKENS
    convs = guard_replay.load_conversations(corpus, quick=quick)
    limit = 3 if quick else None
    logs = [
        case
        for source in evidence_recall.TARGET_SOURCES
        for case in evidence_recall._cases(
            corpus, evidence_recall.load_cases(corpus, source=source), counter, limit=limit
        )
    ]
    logs += evidence_recall._cases(
        corpus / "train", evidence_recall._train_rows(corpus), counter, limit=limit
    )
    validation = [c for c in logs if evidence_recall.is_validation(c)] or logs
    recall: dict[int, float] = {}

    table = Table(
        title=(
            f"{len(convs)} real agent conversations replayed, and {len(validation)} validation "
            "build logs, per window and per-result cap"
        ),
        columns=[
            "window",
            "max_result_tokens",
            "calls",
            "over window",
            "cache breaks",
            "ContextEditing breaks",
            "cost vs ContextEditing",
            "evidence tokens/call",
            "build logs: every labelled line kept",
        ],
    )
    rows: list[dict[str, Any]] = []
    for window in windows:
        meter = guard_replay.Meter(RequestCounter(counter))
        with _replay_at(window, None):
            theirs = _replay(convs, meter, guard_replay.context_editing)
        for max_result_tokens in caps:
            cap = _cap(window, max_result_tokens)
            if cap not in recall:
                recall[cap] = _recall(validation, counter, cap)
            with _replay_at(window, max_result_tokens):
                ours = _replay(convs, meter, guard_replay.ours(per_result=True))
            label = f"{cap:,}" + (" (default)" if max_result_tokens is None else "")
            row = {
                "window": window,
                "max_result_tokens": cap,
                "default": max_result_tokens is None,
                "calls": ours.calls,
                "over_window": ours.over_window,
                "cache_breaks": ours.cache_breaks,
                "context_editing_breaks": theirs.cache_breaks,
                "cost_ratio": ours.cost / theirs.cost if theirs.cost else 0.0,
                "evidence_per_call": ours.evidence_sum / max(1, ours.calls),
                "all_lines_kept": recall[cap],
            }
            rows.append(row)
            table.rows.append(
                [
                    f"{window:,}",
                    label,
                    row["calls"],
                    row["over_window"],
                    row["cache_breaks"],
                    row["context_editing_breaks"],
                    f"{row['cost_ratio']:.2f}x",
                    round(row["evidence_per_call"]),
                    f"{100 * row['all_lines_kept']:.1f}%",
                ]
            )
    result.tables.append(table)
    result.data["rows"] = rows
    result.tables.append(_demo_table(counter, caps, DEMO_WINDOWS[:1] if quick else DEMO_WINDOWS))
    result.notes.append(
        "cache breaks: calls whose request does not start with the whole previous request "
        "(the provider's prompt cache misses); cost: uncached tokens + 0.1 x cached tokens, "
        "summed over calls, divided by ContextEditingMiddleware's at the same window"
    )
    return result
