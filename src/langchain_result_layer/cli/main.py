"""Command line: `langchain-result-layer {demo,inspect}` (or `python -m langchain_result_layer`).

Example:
    ```bash
    langchain-result-layer inspect build.log --budget 2000
    python -m langchain_result_layer demo
    ```
"""

from __future__ import annotations

import argparse
import sys

from langchain_result_layer.cli import demo_cmd, inspect_cmd

__all__ = ["build_parser", "main"]


PROG = "langchain-result-layer"
"""The console script's name, shown in usage lines (`__main__` passes its own)."""


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    """The argument parser with every sub-command.

    Args:
        prog: The program name shown in usage lines.

    Returns:
        The parser.

    Example:
        ```python
        build_parser().parse_args(["inspect", "x.log"])
        ```
    """
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Bounded, evidence-preserving views of huge tool results.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    demo_cmd.add_parser(sub)
    inspect_cmd.add_parser(sub)
    return parser


def main(argv: list[str] | None = None, *, prog: str = PROG) -> int:
    r"""Run the command line.

    Args:
        argv: Arguments (default: `sys.argv[1:]`).
        prog: The program name shown in usage lines.

    Returns:
        The exit status.

    Example:
        ```python
        from pathlib import Path

        Path("build.log").write_text("compiling\n" * 10_000 + "error: linker failed\n")
        assert main(["inspect", "build.log", "--budget", "2000"]) == 0
        ```
    """
    args = build_parser(prog).parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
