"""Command line: `python -m langchain_result_layer {demo,inspect}`.

Example:
    ```bash
    python -m langchain_result_layer inspect build.log --budget 2000
    python -m langchain_result_layer demo
    ```
"""

from __future__ import annotations

import argparse
import sys

from langchain_result_layer.cli import demo_cmd, inspect_cmd

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every sub-command.

    Returns:
        The parser.

    Example:
        ```python
        build_parser().parse_args(["inspect", "x.log"])
        ```
    """
    parser = argparse.ArgumentParser(
        prog="python -m langchain_result_layer",
        description="Bounded, evidence-preserving views of huge tool results.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    demo_cmd.add_parser(sub)
    inspect_cmd.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line.

    Args:
        argv: Arguments (default: `sys.argv[1:]`).

    Returns:
        The exit status.

    Example:
        ```python
        main(["inspect", "build.log", "--budget", "2000"])  # doctest: +SKIP
        ```
    """
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
