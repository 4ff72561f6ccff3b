"""The demo: a real `create_agent` graph over real local data, with and without the layer.

A scripted chat model (no API key needed) drives a LangChain v1 agent through a realistic
investigation of the Python standard library on this machine: a code search with a thousand
hits, reading a 750 KB module, a SQL query returning 17,000 rows, a unit-test run that fails,
then fetches of the evidence it was shown references to. The same script runs twice:

- with `ResultLayer` (`layer.middleware()`, SQLite store on disk): every request the model
  receives stays inside the window;
- without any management: the requests the model would have received.

It prints, per model call, what the model saw (tokens, views, placeholders, fetches), and writes
a PNG chart of the context size per call.

`run_demo` runs it (`python -m langchain_result_layer demo` from the command line).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from langchain_result_layer.core.reference import Reference
from langchain_result_layer.demo.tools import make_demo_tools
from langchain_result_layer.errors import InvalidReferenceError
from langchain_result_layer.layer import ResultLayer
from langchain_result_layer.pipeline import META_KEY
from langchain_result_layer.scripted import ScriptedChatModel, ai_tool_calls, find_references
from langchain_result_layer.scripted import tool_call as call

__all__ = ["DemoReport", "TurnStats", "demo_script", "run_demo"]

SYSTEM_PROMPT = (
    "You investigate the Python standard library on this machine with the tools you have. "
    "Large tool results are shown in part; use fetch_tool_result with the references they give "
    "to read more."
)


@dataclass(slots=True)
class TurnStats:
    """What the model saw on one call.

    Example:
        ```python
        TurnStats(call=1, tokens=120)
        ```
    """

    call: int
    """1-based model call number."""
    tokens: int
    """Tokens of the request (messages, as counted by the layer's counter)."""
    tool_results: int = 0
    """Tool results in the request."""
    truncated_views: int = 0
    """Results shown as a bounded view."""
    placeholders: int = 0
    """Results cleared by the budget guard (one-line placeholders)."""
    fetches: int = 0
    """Fetch results in the request."""
    cleared_now: int = 0
    """Results the guard cleared before this call (placeholders new here)."""
    protected: int = 0
    """Results in the request the guard may not clear (the last `keep_last` results and results the
    model has not seen yet)."""
    actions: list[str] = field(default_factory=list)
    """Tool calls the model made in answer."""


@dataclass(slots=True)
class DemoReport:
    """Both runs of the demo.

    Example:
        ```python
        report = DemoReport(window=16_000, with_layer=[TurnStats(call=1, tokens=9_000)],
                            without_layer=[TurnStats(call=1, tokens=90_000)], chart=None,
                            store_url="sqlite:///tool_results.db", seconds=2.0)
        assert max(t.tokens for t in report.with_layer) <= report.window
        ```
    """

    window: int
    """The context window used."""
    with_layer: list[TurnStats]
    """Per-call stats with the layer."""
    without_layer: list[TurnStats]
    """Per-call stats without any management."""
    chart: Path | None
    """Path of the PNG chart, if written."""
    store_url: str
    """Where the raw results were stored."""
    seconds: float
    """Wall time of the run with the layer."""
    trigger: int = 0
    """Request tokens above which the budget guard clears results."""
    keep_last: int = 0
    """How many of the most recent results the guard never clears."""


def _last_tool_results(messages: list[BaseMessage]) -> list[ToolMessage]:
    out: list[ToolMessage] = []
    for message in reversed(messages):
        if isinstance(message, ToolMessage):
            out.append(message)
        elif isinstance(message, AIMessage):
            break
    return list(reversed(out))


def _ref_in(messages: list[BaseMessage], tool: str, *, key: str = "next") -> str | None:
    """A reference the model saw for `tool`'s result: the view's `key` reference, else any."""
    for message in reversed(messages):
        if not isinstance(message, ToolMessage) or message.name != tool:
            continue
        artifact = message.artifact
        refs = getattr(artifact, "references", None)
        if refs is None and isinstance(artifact, dict):
            refs = artifact.get("references")
        if isinstance(refs, dict):
            for name in (key, "next", "all"):
                if refs.get(name):
                    return str(refs[name])
        found = find_references([message])
        if found:
            return found[-1]
    return None


def demo_script() -> Callable[[list[BaseMessage], int], AIMessage | str | None]:
    """The scripted investigation (a function of what the model sees).

    Returns:
        The script for `ScriptedChatModel`.

    Example:
        ```python
        model = ScriptedChatModel(script=demo_script())
        ```
    """

    def step(messages: list[BaseMessage], index: int) -> AIMessage | str | None:
        plan: list[Callable[[], AIMessage | str | None]] = [
            lambda: ai_tool_calls(call("search_code", {"pattern": r"def __init__\("}, id="s1")),
            lambda: ai_tool_calls(call("read_file", {"path": "pydoc_data/topics.py"}, id="r1")),
            lambda: ai_tool_calls(
                call("run_sql", {"query": "SELECT * FROM definitions ORDER BY id"}, id="q1")
            ),
            lambda: ai_tool_calls(call("run_tests", {}, id="t1")),
            lambda: _fetch_or(messages, "run_tests", "error_1", "f1"),
            lambda: _fetch_or(messages, "run_sql", "next", "f2"),
            lambda: ai_tool_calls(
                call("search_code", {"pattern": r"raise NotImplemented"}, id="s2"),
                call("read_file", {"path": "json/decoder.py"}, id="r2"),
            ),
            lambda: ai_tool_calls(
                call(
                    "run_sql",
                    {"query": "SELECT kind, COUNT(*) AS n FROM definitions GROUP BY kind"},
                    id="q2",
                )
            ),
            lambda: ai_tool_calls(call("read_file", {"path": "asyncio/base_events.py"}, id="r3")),
            lambda: _fetch_or(messages, "search_code", "next", "f3"),
            lambda: ai_tool_calls(call("search_code", {"pattern": r"^class \w+Error"}, id="s3")),
            lambda: (
                "The unit-test run fails twice: test_json_float_precision (0.1 + 0.2 does not "
                "equal 0.3 after a JSON round trip) and test_optional_module (the module "
                "definitely_not_an_installed_module_xyz is not installed)."
            ),
        ]
        return plan[index]() if index < len(plan) else None

    return step


def _fetch_or(messages: list[BaseMessage], tool: str, key: str, call_id: str) -> AIMessage:
    ref = _ref_in(messages, tool, key=key)
    if ref is not None:
        return ai_tool_calls(call("fetch_tool_result", {"ref": ref}, id=call_id))
    # Without the layer there is nothing to fetch: look at something small instead.
    return ai_tool_calls(
        call(
            "run_sql",
            {"query": "SELECT name, lines FROM modules ORDER BY lines DESC LIMIT 5"},
            id=call_id,
        )
    )


def _stats(
    requests: list[list[BaseMessage]], layer: ResultLayer, answers: list[AIMessage]
) -> list[TurnStats]:
    keep_last = layer.guard_settings.keep_last
    out: list[TurnStats] = []
    for i, request in enumerate(requests):
        stats = TurnStats(call=i + 1, tokens=layer.count_request(request))
        results = [m for m in request if isinstance(m, ToolMessage)]
        last_ai = max((j for j, m in enumerate(request) if isinstance(m, AIMessage)), default=-1)
        unseen = {id(m) for m in request[last_ai + 1 :] if isinstance(m, ToolMessage)}
        recent = {id(m) for m in results[-keep_last:]} if keep_last else set()
        for message in results:
            stats.tool_results += 1
            marker = (message.response_metadata or {}).get(META_KEY) or {}
            if marker.get("cleared"):
                stats.placeholders += 1
                continue
            if id(message) in unseen or id(message) in recent:
                stats.protected += 1
            if marker.get("kind") == "fetch":
                stats.fetches += 1
            elif marker.get("truncated"):
                stats.truncated_views += 1
        stats.cleared_now = max(0, stats.placeholders - (out[-1].placeholders if out else 0))
        if i < len(answers):
            stats.actions = [_short_call(c) for c in answers[i].tool_calls] or ["answer"]
        out.append(stats)
    return out


def _short_call(tool_call: Any) -> str:
    """A tool call in a few words: a fetch by the range it reads, others by their first argument."""
    name = tool_call.get("name")
    args = tool_call.get("args") or {}
    if name == "fetch_tool_result":
        return f"{name}({_fetch_range(args)})"
    text = str(next(iter(args.values()), ""))
    text = text if len(text) <= 40 else text[:39] + "…"
    return f"{name}({text})" if args else f"{name}()"


def _fetch_range(args: dict[str, Any]) -> str:
    """What a fetch reads: `lines 6-205`, `page 2, size 127`, `chars 0+4,096`, `all`."""
    try:
        ref = Reference.parse(str(args.get("ref", "")))
    except InvalidReferenceError:
        return "an invalid reference"
    got = {k: args.get(k, getattr(ref, k)) for k in ("page", "page_size", "start_line")}
    got.update({k: args.get(k, getattr(ref, k)) for k in ("end_line", "offset", "limit")})
    if got["start_line"] is not None or got["end_line"] is not None:
        end = got["end_line"] if got["end_line"] is not None else "end"
        return f"lines {got['start_line'] or 1}-{end}"
    if got["page"] is not None or got["page_size"] is not None:
        size = f", size {got['page_size']}" if got["page_size"] else ""
        return f"page {got['page'] or 1}{size}"
    if got["offset"] is not None or got["limit"] is not None:
        limit = f"+{got['limit']:,}" if got["limit"] is not None else "-end"
        return f"chars {got['offset'] or 0:,}{limit}"
    return f"path {ref.path}" if ref.path else "all"


def _run_agent(
    model: ScriptedChatModel,
    tools: list[Any],
    middleware: list[Any],
    on_call: Callable[[int], None],
) -> list[AIMessage]:
    from langchain.agents import create_agent  # noqa: PLC0415

    agent = create_agent(model, tools, system_prompt=SYSTEM_PROMPT, middleware=middleware)
    answers: list[AIMessage] = []
    for update in agent.stream(
        {"messages": [("user", "Why do the unit tests fail, and what does the stdlib define?")]},
        {"recursion_limit": 100, "configurable": {"thread_id": "demo", "user_id": "demo-user"}},
        stream_mode="updates",
    ):
        for node_update in update.values():
            if not isinstance(node_update, dict):
                continue
            for message in node_update.get("messages", []) or []:
                if isinstance(message, AIMessage) and message.id not in {a.id for a in answers}:
                    answers.append(message)
                    on_call(len(answers))
    return answers


def run_demo(
    workdir: Path,
    *,
    window: int = 16_000,
    chart: bool = True,
    on_call: Callable[[str, int], None] | None = None,
) -> DemoReport:
    """Run the demo twice (with and without the layer) and return what the model saw.

    Args:
        workdir: Where data, the SQLite result store and the chart go.
        window: The model's context window for the demo.
        chart: Write `context_per_call.png`.
        on_call: Progress callback `(run name, model calls so far)`.

    Returns:
        The report.

    Example:
        ```python
        report = run_demo(Path("demo_output"), window=16_000, chart=False)
        assert max(t.tokens for t in report.with_layer) <= report.window
        assert max(t.tokens for t in report.without_layer) > report.window
        ```
    """
    workdir.mkdir(parents=True, exist_ok=True)
    progress = on_call or (lambda _name, _n: None)
    tools = make_demo_tools(workdir)
    store_path = workdir / "tool_results.db"
    store_url = f"sqlite:///{store_path}"

    model = ScriptedChatModel(script=demo_script(), max_input_tokens=window)
    layer = ResultLayer(model=model, store=store_url)
    start = time.perf_counter()
    answers = _run_agent(model, tools, [layer.middleware()], lambda n: progress("with layer", n))
    seconds = time.perf_counter() - start
    with_layer = _stats(model.requests, layer, answers)

    bare = ScriptedChatModel(script=demo_script(), max_input_tokens=window)
    bare_answers = _run_agent(bare, tools, [], lambda n: progress("without layer", n))
    without_layer = _stats(bare.requests, layer, bare_answers)

    chart_path = (
        _chart(workdir / "context_per_call.png", window, layer, with_layer, without_layer)
        if chart
        else None
    )
    return DemoReport(
        window=window,
        with_layer=with_layer,
        without_layer=without_layer,
        chart=chart_path,
        store_url=store_url,
        seconds=seconds,
        trigger=int(window * layer.guard_settings.trigger_fraction),
        keep_last=layer.guard_settings.keep_last,
    )


def _chart(
    path: Path,
    window: int,
    layer: ResultLayer,
    with_layer: list[TurnStats],
    without_layer: list[TurnStats],
) -> Path | None:
    try:
        import matplotlib  # noqa: PLC0415

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415
    except ImportError:
        return None
    fig, ax = plt.subplots(figsize=(9, 5), dpi=120)
    for turns, color, label in (
        (without_layer, "#c0392b", "without the layer"),
        (with_layer, "#2471a3", "with ResultLayer"),
    ):
        ax.plot(
            [t.call for t in turns], [t.tokens for t in turns], marker="o", color=color, label=label
        )
    ax.axhline(
        window, color="black", linestyle="--", linewidth=1, label=f"context window ({window:,})"
    )
    trigger = int(window * layer.guard_settings.trigger_fraction)
    ax.axhline(
        trigger, color="gray", linestyle=":", linewidth=1, label=f"guard trigger ({trigger:,})"
    )
    cleared = [t for t in with_layer if t.cleared_now]
    ax.scatter(
        [t.call for t in cleared],
        [t.tokens for t in cleared],
        s=160,
        facecolors="none",
        edgecolors="#117a65",
        linewidths=1.5,
        zorder=3,
        label="guard cleared results before this call",
    )
    for t in cleared:
        ax.annotate(
            f"cleared {t.cleared_now}",
            (t.call, t.tokens),
            textcoords="offset points",
            xytext=(0, -16),
            ha="center",
            fontsize=8,
            color="#117a65",
        )
    for t in with_layer:
        if trigger < t.tokens <= window:
            ax.annotate(
                f"above the trigger: {t.protected} results the guard\n"
                f"may not clear (last {layer.guard_settings.keep_last} / not yet seen)",
                (t.call, t.tokens),
                textcoords="offset points",
                xytext=(10, 22),
                fontsize=7,
                color="#2471a3",
                arrowprops={"arrowstyle": "->", "color": "#2471a3", "linewidth": 0.8},
            )
    ax.set_yscale("log")
    ax.set_xlabel("model call")
    ax.set_ylabel("request tokens (log scale)")
    ax.set_title(
        "Context sent to the model per call (scripted model: one script, with and without)"
    )
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
