"""`python -m langchain_result_layer inspect PATH`: see the view a file would produce.

Prints what the model would see for the file as one tool result, then the numbers: the kind
chosen, the original size, what was kept and omitted, the tokens used against the budget.

Example:
    ```bash
    python -m langchain_result_layer inspect build.log --budget 2000
    python -m langchain_result_layer inspect rows.json --kind rows --json
    ```
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from langchain_result_layer.core.render import format_line_ranges, plural

__all__ = ["add_parser", "load_payload", "run"]

_BINARY_SNIFF = 8_192


def load_payload(path: Path) -> str | bytes:
    """Read a file as a tool would return it: text when it is UTF-8, bytes otherwise.

    Line endings are kept as they are (no newline translation).

    Args:
        path: The file.

    Returns:
        The text, or the bytes for binary files.

    Example:
        ```python
        load_payload(Path("build.log"))  # doctest: +SKIP
        ```
    """
    data = path.read_bytes()
    head = data[:_BINARY_SNIFF]
    if b"\x00" in head:
        try:
            head.decode("utf-16")
        except UnicodeDecodeError:
            return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = sum(1 for b in data[: 1 << 20] if b >= 0x80)
        if bad > len(data[: 1 << 20]) * 0.3:
            return data
        _ = exc
        return data.decode("utf-8", "replace")


def add_parser(sub: Any) -> None:
    """Register the `inspect` sub-command.

    Args:
        sub: The `argparse` sub-parsers object.

    Example:
        ```python
        parser = argparse.ArgumentParser()
        add_parser(parser.add_subparsers(dest="command"))
        ```
    """
    p = sub.add_parser("inspect", help="print the view a file would produce, with its numbers")
    p.add_argument("path", type=Path, help="file to inspect (or - for standard input)")
    p.add_argument("--kind", default=None, help="declared view kind (default: sniffed)")
    p.add_argument("--budget", type=int, default=None, help="token budget for the result")
    p.add_argument("--chars", type=int, default=None, help="character budget for the result")
    p.add_argument("--window", type=int, default=128_000, help="context window (default 128000)")
    p.add_argument("--tool-name", default="inspect", help="tool name shown in the view")
    p.add_argument("--status", choices=["success", "error"], default="success")
    p.add_argument("--counter", default="auto", help="auto, tiktoken, approximate or encoding")
    p.add_argument("--json", action="store_true", help="print the ResultView as JSON too")
    p.add_argument("--quiet", action="store_true", help="numbers only, not the view")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Execute `inspect`.

    Args:
        args: Parsed arguments.

    Returns:
        The exit status.

    Example:
        ```python
        run(argparse.Namespace(path=Path("x.log"), ...))  # doctest: +SKIP
        ```
    """
    from langchain_core.messages import ToolMessage  # noqa: PLC0415

    from langchain_result_layer import ResultLayer, ToolPolicy  # noqa: PLC0415

    if str(args.path) == "-":
        payload: str | bytes = sys.stdin.read()
    else:
        if not args.path.exists():
            print(f"inspect: no such file: {args.path}", file=sys.stderr)
            return 2
        if not args.path.is_file():
            print(f"inspect: not a regular file: {args.path}", file=sys.stderr)
            return 2
        try:
            payload = load_payload(args.path)
        except OSError as exc:
            print(f"inspect: cannot read {args.path}: {exc}", file=sys.stderr)
            return 2
    from langchain_result_layer.core.budget import MIN_RESULT_CHARS, MIN_RESULT_TOKENS  # noqa: PLC0415
    from langchain_result_layer.views import registered_views  # noqa: PLC0415

    if args.budget is not None and args.budget < MIN_RESULT_TOKENS:
        print(f"inspect: --budget must be at least {MIN_RESULT_TOKENS} tokens", file=sys.stderr)
        return 2
    if args.chars is not None and args.chars < MIN_RESULT_CHARS:
        print(f"inspect: --chars must be at least {MIN_RESULT_CHARS}", file=sys.stderr)
        return 2
    if args.kind is not None and args.kind not in registered_views():
        known = ", ".join(sorted(registered_views()))
        print(f"inspect: unknown --kind {args.kind!r}; known kinds: {known}", file=sys.stderr)
        return 2
    policies = {args.tool_name: ToolPolicy(kind=args.kind)} if args.kind else None
    try:
        layer = ResultLayer(
            context_window=args.window,
            max_result_tokens=args.budget,
            max_result_chars=args.chars,
            token_counter=args.counter,
            tool_policies=policies,
        )
    except (ValueError, TypeError) as exc:
        print(f"inspect: {exc}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    if isinstance(payload, bytes):
        outcome = layer.pipeline.process(payload, tool_name=args.tool_name, status=args.status)
        content: Any = outcome.content if outcome else payload
        view = outcome.view if outcome else None
    else:
        msg = ToolMessage(
            content=payload, tool_call_id="inspect", name=args.tool_name, status=args.status
        )
        out = layer.process_tool_message(msg)
        content = out.content
        view = ResultLayer.view_of(out)
        if view is None:
            view = layer.pipeline.process(
                payload, tool_name=args.tool_name, status=args.status
            ).view  # type: ignore[union-attr]
    elapsed = time.perf_counter() - start
    if not args.quiet:
        print(content if isinstance(content, str) else json.dumps(content, indent=2)[:20_000])
        print()
    _print_numbers(view, layer, elapsed)
    if args.json and view is not None:
        data = view.to_dict()
        data.pop("original_artifact", None)
        print(json.dumps(data, indent=2, ensure_ascii=False, default=str))
    return 0


def _print_numbers(view: Any, layer: Any, elapsed: float) -> None:
    if view is None:
        print("(processing disabled for this tool)")
        return
    budget = layer.pipeline.budget_for("inspect")
    print("--- numbers " + "-" * 60)
    print(f"kind:          {view.kind}")
    print(
        f"original:      {plural(view.original_chars, 'char')}, "
        f"{plural(view.original_lines, 'line')}, {plural(view.original_bytes, 'byte')}"
    )
    pct = 100 * view.shown_tokens / max(1, budget.tokens)
    print(
        f"shown:         {plural(view.shown_tokens, 'token')} ({pct:.0f}% of {budget.tokens:,}), "
        f"{plural(view.shown_chars, 'char')} (limit {budget.chars:,})"
    )
    print(f"counter:       {view.counter or layer.token_counter.name}")
    if view.truncated:
        print(
            f"omitted:       {plural(view.omitted_chars, 'char')}, "
            f"{plural(view.omitted_lines, 'whole line')}"
        )
        if view.omitted:
            print(f"ranges:        {format_line_ranges(view.omitted, limit=10)}")
    else:
        print("omitted:       nothing (fits the budget; passed through unchanged)")
    for name, ref in list(view.references.items())[:6]:
        print(f"ref {name + ':':10s} {ref}")
    print(f"time:          {elapsed * 1000:.1f} ms")
