"""`langchain-result-layer demo`: the layer on a real agent, in one command.

The output is plain text that fits the terminal (80 columns when piped, `COLUMNS` when set):
the per-call tables never cut a column; the model's calls wrap onto continuation lines.

Example:
    ```bash
    python -m langchain_result_layer demo --window 16000 --out demo_output
    python -m langchain_result_layer demo | cat
    ```
"""

from __future__ import annotations

import argparse
import shutil
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_result_layer.demo.run import DemoReport, TurnStats

__all__ = ["add_parser", "format_table", "run"]

_HEADER = ("call", "tokens", "window", "views", "cleared", "fetched")
_LAST = "model then called"
_MIN_LAST = 24


def add_parser(sub: Any) -> None:
    """Register the `demo` sub-command.

    Args:
        sub: The `argparse` sub-parsers object.

    Example:
        ```python
        add_parser(argparse.ArgumentParser().add_subparsers())
        ```
    """
    p = sub.add_parser(
        "demo",
        help="run a real LangGraph agent with and without the layer (scripted model, offline)",
        description=(
            "Run a real create_agent graph over real local data (this machine's Python "
            "standard library), driven by a scripted chat model (no API key), once with "
            "ResultLayer and once without, and print what the model received per call."
        ),
    )
    p.add_argument(
        "--out", type=Path, default=Path("demo_output"), help="output directory (demo_output)"
    )
    p.add_argument(
        "--window",
        type=int,
        default=16_000,
        metavar="TOKENS",
        help="context window of the model (default: 16,000)",
    )
    p.add_argument("--no-chart", action="store_true", help="do not write the PNG chart")
    p.set_defaults(func=run)


def _width() -> int:
    return max(60, shutil.get_terminal_size((80, 24)).columns)


def _fit(calls: list[str], room: int) -> list[str]:
    """The calls as lines of at most `room` characters (a long call wraps; nothing is cut)."""
    lines: list[str] = []
    for i, call in enumerate(calls):
        text = call + ("," if i < len(calls) - 1 else "")
        if lines and len(lines[-1]) + 1 + len(text) <= room:
            lines[-1] = f"{lines[-1]} {text}"
            continue
        lines.extend(
            textwrap.wrap(text, room, break_long_words=True, break_on_hyphens=False) or [""]
        )
    return lines or [""]


def format_table(turns: list[TurnStats], window: int, *, width: int = 80) -> list[str]:
    """The per-call table as lines of at most `width` characters.

    Args:
        turns: Per-call stats of one run.
        window: The context window (for the percentage column).
        width: Line width to fit.

    Returns:
        The lines: a header, then one or more lines per call.

    Example:
        ```python
        from langchain_result_layer.demo import TurnStats

        lines = format_table([TurnStats(call=1, tokens=60, actions=["run_tests()"])], 16_000)
        assert all(len(line) <= 80 for line in lines)
        ```
    """
    rows = [
        (
            str(t.call),
            f"{t.tokens:,}",
            f"{100 * t.tokens / window:.0f}%",
            str(t.truncated_views),
            str(t.placeholders),
            str(t.fetches),
        )
        for t in turns
    ]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(_HEADER)]
    left = sum(widths) + 2 * len(widths)
    fmt = "  ".join(f"{{:>{w}}}" for w in widths) + "  "
    if width - left >= _MIN_LAST:  # the calls in a last column
        out = [fmt.format(*_HEADER) + _LAST]
        for t, row in zip(turns, rows, strict=True):
            parts = _fit(t.actions, width - left)
            out.append(fmt.format(*row) + parts[0])
            out.extend(" " * left + more for more in parts[1:])
    else:  # too narrow for a last column: the calls on the lines under each row
        out = [fmt.format(*_HEADER), f"      -> {_LAST}"]
        for t, row in zip(turns, rows, strict=True):
            out.append(fmt.format(*row))
            out.extend(f"      -> {part}" for part in _fit(t.actions, width - 9))
    return [line.rstrip() for line in out]


def _above_trigger(report: DemoReport) -> list[str]:
    """Why a request may sit above the guard's trigger line and still be fine."""
    notes = []
    for t in report.with_layer:
        if report.trigger < t.tokens <= report.window:
            notes.append(
                f"  call {t.call}: {t.tokens:,} tokens, above the trigger ({report.trigger:,}) "
                f"but under the window: the guard cleared {t.cleared_now} result(s) here and "
                f"kept {t.protected} it may not clear (the last {report.keep_last} results and "
                "results the model has not seen yet)."
            )
    return notes


def run(args: argparse.Namespace) -> int:
    """Execute the demo and print what the model saw per call.

    Args:
        args: Parsed arguments.

    Returns:
        The exit status (1 when a request with the layer exceeded the window).

    Example:
        ```python
        from langchain_result_layer.cli.main import build_parser

        args = build_parser().parse_args(["demo", "--out", "demo_output", "--no-chart"])
        assert args.func is run  # `langchain-result-layer demo` calls run(args); see run_demo
        ```
    """
    from langchain_result_layer.demo.run import run_demo  # noqa: PLC0415

    tty = sys.stdout.isatty()
    print(f"Building real data from this machine's Python standard library in {args.out}/")
    print("The model is scripted (no API key, no network): the same script runs twice.")

    def progress(name: str, calls: int) -> None:
        if tty:
            print(f"\r  [{name}] model call {calls} done", end="", flush=True)

    report = run_demo(args.out, window=args.window, chart=not args.no_chart, on_call=progress)
    if tty:
        print()
    width = _width()
    for title, turns in (
        ("With ResultLayer (create_agent + layer.middleware(), SQLite store)", report.with_layer),
        ("Without any management (the same script)", report.without_layer),
    ):
        print(f"\n{title}")
        print("\n".join(format_table(turns, report.window, width=width)))
    legend = (
        "tokens: the request the model received; window: its share of the "
        f"{report.window:,}-token window; views: results shown as a bounded view; cleared: "
        "results the budget guard replaced with a placeholder (fetchable again); fetched: "
        "slices read back with fetch_tool_result."
    )
    print("\n" + textwrap.fill(legend, width))
    notes = _above_trigger(report)
    if notes:
        print(f"Requests above the guard's trigger ({report.trigger:,} tokens):")
        for note in notes:
            print(textwrap.fill(note, width, subsequent_indent="    "))
    peak_with = max(t.tokens for t in report.with_layer)
    peak_without = max(t.tokens for t in report.without_layer)
    over = sum(1 for t in report.with_layer if t.tokens > report.window)
    over_without = sum(1 for t in report.without_layer if t.tokens > report.window)
    largest = (
        f"Largest request: {peak_with:,} tokens with the layer "
        f"({100 * peak_with / report.window:.0f}% of the {report.window:,}-token window), "
        f"{peak_without:,} without ({peak_without / report.window:.1f}x the window)."
    )
    print("\n" + textwrap.fill(largest, width))
    print(f"Requests over the window: {over} with the layer, {over_without} without.")
    print(f"Raw results stored in {report.store_url};")
    print(f"the agent with the layer ran in {report.seconds:.1f} s.")
    if report.chart is not None:
        print(f"Chart of context size per call: {report.chart}")
    return 1 if over else 0
