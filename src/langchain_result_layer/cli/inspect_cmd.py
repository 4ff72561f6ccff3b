"""`langchain-result-layer inspect PATH`: see the view a file would produce.

Prints what the model would see for the file as one tool result, then the numbers: the kind
chosen, the original size, what was kept and omitted, the tokens used against the budget.

The raw result is kept in memory only, so the `ref://` references in the output cannot be
fetched once `inspect` exits, unless `--store URL` names a store to keep it in; then
`inspect --fetch REF --store URL` reads any part of it back, as the model's fetch tool would.

Example:
    ```bash
    langchain-result-layer inspect build.log --budget 2000
    langchain-result-layer inspect rows.json --kind rows --json
    langchain-result-layer inspect build.log --store sqlite:///inspect.db
    langchain-result-layer inspect --fetch 'ref://tool-result/<id>/log' --store sqlite:///inspect.db
    ```
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from langchain_result_layer.core.budget import (
    DEFAULT_MAX_RESULT_CHARS,
    DEFAULT_RESULT_FRACTION,
    MIN_RESULT_CHARS,
    MIN_RESULT_TOKENS,
)
from langchain_result_layer.core.render import format_line_ranges, plural

__all__ = ["add_parser", "load_payload", "run"]

_BINARY_SNIFF = 8_192
_DEFAULT_WINDOW = 128_000
_RANGE_OPTIONS = ("page", "page_size", "start_line", "end_line", "offset", "limit")


def load_payload(path: Path) -> str | bytes:
    r"""Read a file as a tool would return it: text when it is UTF-8, bytes otherwise.

    Line endings are kept as they are (no newline translation).

    Args:
        path: The file.

    Returns:
        The text, or the bytes for binary files.

    Example:
        ```python
        Path("build.log").write_bytes(b"step 1\r\nstep 2\r\n")
        assert load_payload(Path("build.log")) == "step 1\r\nstep 2\r\n"  # endings kept
        Path("image.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
        assert isinstance(load_payload(Path("image.png")), bytes)
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
    except UnicodeDecodeError:
        bad = sum(1 for b in data[: 1 << 20] if b >= 0x80)
        if bad > len(data[: 1 << 20]) * 0.3:
            return data
        return data.decode("utf-8", "replace")


def _kinds() -> str:
    from langchain_result_layer.views import registered_views  # noqa: PLC0415

    return ", ".join(sorted(registered_views()))


class _Kinds:
    """The registered kinds, looked up when the help is printed (importing views is slow)."""

    def __str__(self) -> str:
        return _kinds()


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
    p = sub.add_parser(
        "inspect",
        help="print the view a file would produce, with its numbers",
        description=(
            "Print the bounded view the model would see if a tool returned FILE, then the "
            "numbers (kind, sizes, what was omitted, tokens against the budget). The raw "
            "result is kept in memory only, so the ref:// references printed are not "
            "fetchable after inspect exits, unless --store URL keeps it; then "
            "'inspect --fetch REF --store URL' reads it back, as the model's fetch tool would."
        ),
    )
    p.add_argument(
        "path", type=Path, nargs="?", help="file to inspect (- for standard input)", metavar="FILE"
    )
    kind = p.add_argument(
        "--kind",
        default=None,
        metavar="KIND",
        help="view to use: one of %(kinds)s (default: chosen from the content)",
    )
    kind.kinds = _Kinds()  # argparse fills %(kinds)s from the action's attributes
    p.add_argument(
        "--budget",
        type=int,
        metavar="TOKENS",
        default=None,
        help=(
            f"token budget of the result (default: {100 * DEFAULT_RESULT_FRACTION:.0f}%% of "
            f"--window; at least {MIN_RESULT_TOKENS})"
        ),
    )
    p.add_argument(
        "--chars",
        type=int,
        metavar="N",
        default=None,
        help=f"character cap of the result (default: {DEFAULT_MAX_RESULT_CHARS:,})",
    )
    p.add_argument(
        "--window",
        type=int,
        metavar="TOKENS",
        default=_DEFAULT_WINDOW,
        help=f"the model's context window in tokens (default: {_DEFAULT_WINDOW:,})",
    )
    p.add_argument(
        "--tool-name",
        metavar="NAME",
        default=None,
        help="tool name shown in the view (default: the file's name)",
    )
    p.add_argument(
        "--status",
        choices=["success", "error"],
        default="success",
        help="the tool call's status; error results get more room for their error lines "
        "(default: success)",
    )
    p.add_argument(
        "--counter",
        default="auto",
        metavar="NAME",
        help="token counter: auto (exact o200k_base when its data is installed, else an "
        "estimate), approximate, or a tiktoken encoding name (default: auto)",
    )
    p.add_argument(
        "--store",
        metavar="URL",
        default=None,
        help="keep the raw result in this store (a SQLAlchemy URL such as "
        "sqlite:///inspect.db) so its references stay fetchable (default: memory, gone on exit)",
    )
    p.add_argument(
        "--fetch",
        metavar="REF",
        default=None,
        help="instead of inspecting a file, read a stored result by its reference (needs --store)",
    )
    fetch = p.add_argument_group(
        "reading a stored result (--fetch REF --store URL; one range form at most)"
    )
    for name, text in (
        ("--page", "page number, 1-based"),
        ("--page-size", "lines, rows or hits per page"),
        ("--start-line", "first line, 1-based"),
        ("--end-line", "last line, inclusive"),
        ("--offset", "first character (byte for binary), 0-based"),
        ("--limit", "number of characters (bytes for binary)"),
    ):
        fetch.add_argument(name, type=int, default=None, metavar="N", help=text)
    owner = p.add_argument_group(
        "owner of a stored result (stored with it, re-checked on every read; default: none)"
    )
    for who in ("tenant", "user", "thread"):
        owner.add_argument(f"--{who}", default=None, metavar="ID", help=f"{who} id")
    p.add_argument("--json", action="store_true", help="print the ResultView as JSON too")
    p.add_argument("--quiet", action="store_true", help="numbers only, not the view")
    p.set_defaults(func=run)


def _error(message: str) -> int:
    print(f"inspect: {message}", file=sys.stderr)
    return 2


def _read_input(path: Path) -> str | bytes | int:
    """The payload, or an exit status after printing why it cannot be read."""
    if str(path) == "-":
        return sys.stdin.read()
    if not path.exists():
        return _error(f"no such file: {path}")
    if not path.is_file():
        return _error(f"not a regular file: {path}")
    try:
        return load_payload(path)
    except OSError as exc:
        return _error(f"cannot read {path}: {exc}")


def _check_options(args: argparse.Namespace) -> str | None:
    """A usage problem with the options, or `None`."""
    from langchain_result_layer.views import registered_views  # noqa: PLC0415

    ranges = [name for name in _RANGE_OPTIONS if getattr(args, name) is not None]
    if args.fetch is not None:
        if args.path is not None:
            return "give either FILE or --fetch REF, not both"
        if args.store is None:
            return "--fetch needs --store URL: inspect's own store lives in memory only"
        return None
    if ranges:
        return f"--{ranges[0].replace('_', '-')} is for --fetch"
    if args.path is None:
        return "give a FILE to inspect (or - for standard input), or --fetch REF --store URL"
    if args.budget is not None and args.budget < MIN_RESULT_TOKENS:
        return f"--budget must be at least {MIN_RESULT_TOKENS} tokens"
    if args.chars is not None and args.chars < MIN_RESULT_CHARS:
        return f"--chars must be at least {MIN_RESULT_CHARS}"
    if args.kind is not None and args.kind not in registered_views():
        return f"unknown --kind {args.kind!r}; known kinds: {_kinds()}"
    return None


def _tool_name(args: argparse.Namespace) -> str:
    if args.tool_name:
        return str(args.tool_name)
    if args.path is None or str(args.path) == "-":
        return "stdin"
    return str(args.path.name)


def run(args: argparse.Namespace) -> int:
    r"""Execute `inspect`.

    Args:
        args: Parsed arguments.

    Returns:
        The exit status: 0, 1 when a fetch failed, 2 for a usage error.

    Example:
        ```python
        from langchain_result_layer.cli.main import build_parser

        Path("x.log").write_text("".join(f"line {i}\n" for i in range(5_000)))
        assert run(build_parser().parse_args(["inspect", "x.log", "--budget", "500"])) == 0
        ```
    """
    from langchain_result_layer import Principal, ResultLayer, ToolPolicy  # noqa: PLC0415

    for name in ("tool_name", "store", "fetch", "tenant", "user", "thread", *_RANGE_OPTIONS):
        if not hasattr(args, name):  # a Namespace built by hand, not by the parser
            setattr(args, name, None)
    problem = _check_options(args)
    if problem is not None:
        return _error(problem)
    tool_name = _tool_name(args)
    policies = {tool_name: ToolPolicy(kind=args.kind)} if args.kind else None
    try:
        layer = ResultLayer(
            context_window=args.window,
            max_result_tokens=args.budget,
            max_result_chars=args.chars,
            token_counter=args.counter,
            tool_policies=policies,
            store=args.store if args.store is not None else "memory",
        )
    except Exception as exc:  # a bad URL or counter name is a usage error, not a traceback
        return _error(str(exc))
    principal = Principal(tenant=args.tenant, user=args.user, thread=args.thread)
    if args.fetch is not None:
        return _fetch(layer, args, principal)
    payload = _read_input(args.path)
    if isinstance(payload, int):
        return payload
    start = time.perf_counter()
    outcome = layer.pipeline.process(
        payload, tool_name=tool_name, status=args.status, principal=principal
    )
    elapsed = time.perf_counter() - start
    if not args.quiet:
        content: Any = outcome.content if outcome is not None else payload
        if isinstance(content, bytes):
            content = f"({plural(len(content), 'byte')} of binary data, passed through)"
        print(content if isinstance(content, str) else json.dumps(content, indent=2)[:20_000])
        print()
    if outcome is None:
        print("(processing disabled for this tool)")
        return 0
    _print_numbers(outcome.view, layer, tool_name, elapsed, binary=isinstance(payload, bytes))
    _print_fetch_hint(outcome.view, args)
    if args.json:
        data = outcome.view.to_dict()
        data.pop("original_artifact", None)
        print(json.dumps(data, indent=2, ensure_ascii=False, default=str))
    return 0


def _fetch(layer: Any, args: argparse.Namespace, principal: Any) -> int:
    """Read a stored result through the layer's fetch tool, as the model would."""
    call_args: dict[str, Any] = {"ref": args.fetch}
    call_args.update({n: getattr(args, n) for n in _RANGE_OPTIONS if getattr(args, n) is not None})
    tool = layer.fetch_tool
    configurable = {
        key: value
        for key, value in (
            ("tenant_id", principal.tenant),
            ("user_id", principal.user),
            ("thread_id", principal.thread),
        )
        if value is not None
    }
    message = tool.invoke(
        {"type": "tool_call", "id": "inspect-fetch", "name": tool.name, "args": call_args},
        config={"configurable": configurable},
    )
    print(message.content)
    return 1 if message.status == "error" else 0


def _print_numbers(view: Any, layer: Any, tool_name: str, elapsed: float, *, binary: bool) -> None:
    budget = layer.pipeline.budget_for(tool_name)
    print("--- numbers " + "-" * 60)
    print(f"kind:          {view.kind}")
    if binary:
        print(f"original:      {plural(view.original_bytes, 'byte')} of binary data")
    else:
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
    if not view.truncated:
        print("omitted:       nothing (fits the budget; passed through unchanged)")
    elif binary:
        print(f"omitted:       {plural(view.omitted_chars, 'byte')}")
        spans = [f"bytes {r.start_char:,}-{r.end_char - 1:,}" for r in view.omitted[:10]]
        if spans:
            print(f"ranges:        {'; '.join(spans)}")
    else:
        print(
            f"omitted:       {plural(view.omitted_chars, 'char')}, "
            f"{plural(view.omitted_lines, 'whole line')}"
        )
        if view.omitted:
            print(f"ranges:        {format_line_ranges(view.omitted, limit=10)}")
    print(f"time:          {elapsed * 1000:.1f} ms")
    refs = list(view.references.items())[:6]
    if refs:
        print("references:")
        width = max(len(name) for name, _ in refs) + 1
        for name, ref in refs:
            print(f"  {name + ':':{width}s} {ref}")


def _print_fetch_hint(view: Any, args: argparse.Namespace) -> None:
    if not view.references:
        return
    if args.store is None:
        print("fetchable:     no: inspect keeps the raw result in memory only, gone on exit;")
        print("               add --store sqlite:///inspect.db to keep it and fetch it later")
        return
    ref = view.references.get("all") or next(iter(view.references.values()))
    who = "".join(
        f" --{name} {value}"
        for name, value in (("tenant", args.tenant), ("user", args.user), ("thread", args.thread))
        if value is not None
    )
    print(f"fetchable:     yes: inspect --fetch '{ref}' --store {args.store}{who}")
