"""`python -m langchain_result_layer` entry point."""

from __future__ import annotations

import sys

from langchain_result_layer.cli.main import main

if __name__ == "__main__":
    sys.exit(main(prog="python -m langchain_result_layer"))
