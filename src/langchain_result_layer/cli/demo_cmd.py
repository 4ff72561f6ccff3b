"""`python -m langchain_result_layer demo`: the layer on a real agent, in one command.

Example:
    ```bash
    python -m langchain_result_layer demo --window 16000 --out demo_output
    ```
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """Register the `demo` sub-command.

    Args:
        sub: The `argparse` sub-parsers object.

    Example:
        ```python
        add_parser(argparse.ArgumentParser().add_subparsers())
        ```
    """
    p = sub.add_parser("demo", help="run a real LangGraph agent with and without the layer")
    p.add_argument("--out", type=Path, default=Path("demo_output"), help="output directory")
    p.add_argument("--window", type=int, default=16_000, help="context window of the model")
    p.add_argument("--no-chart", action="store_true", help="do not write the PNG chart")
    p.set_defaults(func=run)


def _console() -> Any:
    try:
        from rich.console import Console  # noqa: PLC0415

        return Console()
    except ImportError:
        return None


def run(args: argparse.Namespace) -> int:
    """Execute the demo and print what the model saw per call.

    Args:
        args: Parsed arguments.

    Returns:
        The exit status (1 when a request with the layer exceeded the window).

    Example:
        ```python
        args = argparse.Namespace(out=Path("demo_output"), window=16_000, no_chart=False)
        run(args)  # doctest: +SKIP
        ```
    """
    from langchain_result_layer.demo.run import run_demo  # noqa: PLC0415

    console = _console()
    say = console.print if console is not None else print
    say(f"Building real data from this machine's Python standard library in {args.out}/ ...")

    def progress(name: str, calls: int) -> None:
        say(f"  [{name}] model call {calls} done")

    if console is not None:
        with console.status("running the agents ..."):
            report = run_demo(
                args.out, window=args.window, chart=not args.no_chart, on_call=progress
            )
    else:
        report = run_demo(args.out, window=args.window, chart=not args.no_chart, on_call=progress)

    _print_table(
        console,
        "With ResultLayer (create_agent + layer.middleware(), SQLite store)",
        report.with_layer,
        report.window,
    )
    _print_table(
        console, "Without any management (the same script)", report.without_layer, report.window
    )
    peak_with = max(t.tokens for t in report.with_layer)
    peak_without = max(t.tokens for t in report.without_layer)
    over = sum(1 for t in report.with_layer if t.tokens > report.window)
    over_without = sum(1 for t in report.without_layer if t.tokens > report.window)
    say(
        f"\nLargest request: {peak_with:,} tokens with the layer "
        f"({100 * peak_with / report.window:.0f}% of the {report.window:,}-token window), "
        f"{peak_without:,} without ({peak_without / report.window:.1f}x the window)."
    )
    say(f"Requests over the window: {over} with the layer, {over_without} without.")
    say(f"Raw results stored in {report.store_url}; the agent ran in {report.seconds:.1f} s.")
    if report.chart is not None:
        say(f"Chart of context size per call: {report.chart}")
    return 1 if over else 0


def _print_table(console: Any, title: str, turns: list[Any], window: int) -> None:
    header = ["call", "tokens", "window", "views", "cleared", "fetched", "model then called"]
    rows = [
        [
            str(t.call),
            f"{t.tokens:,}",
            f"{100 * t.tokens / window:.0f}%",
            str(t.truncated_views),
            str(t.placeholders),
            str(t.fetches),
            ", ".join(t.actions),
        ]
        for t in turns
    ]
    if console is not None:
        from rich.table import Table  # noqa: PLC0415

        table = Table(title=title, title_justify="left")
        for i, name in enumerate(header):
            last = i == len(header) - 1
            table.add_column(
                name,
                overflow="fold" if last else "ignore",
                no_wrap=not last,
                justify="left" if last else "right",
            )
        for row in rows:
            table.add_row(*row)
        console.print(table)
        return
    print(f"\n{title}")
    print(" | ".join(header))
    for row in rows:
        print(" | ".join(row))
