"""The demo: a real LangChain agent over real local data, and its tools (public API).

`python -m langchain_result_layer demo` runs it. The same pieces serve the notebooks and your
own experiments, offline and without downloads: every tool works on this machine's Python
standard library.

- `make_demo_tools(workdir)`: `[search_code, read_file, run_sql, run_tests]`, real tools with
  large outputs (a code search with a thousand hits, a 750 KB module, a 17,000-row SQL result, a
  unit-test run with two failures);
- `build_stdlib_database(path)`: the SQLite database of every standard-library definition that
  `run_sql` queries;
- `demo_script()`: the scripted investigation (for `ScriptedChatModel`) that decides each step
  from what the model sees and fetches the references the layer gave it;
- `SYSTEM_PROMPT`: the demo agent's system prompt;
- `run_demo(workdir, window=...)`: both runs (with and without the layer) and their per-call
  numbers (`DemoReport`, `TurnStats`).

Example:
    ```python
    from pathlib import Path

    from langchain_result_layer import ResultLayer, ScriptedChatModel
    from langchain_result_layer.demo import SYSTEM_PROMPT, demo_script, make_demo_tools

    tools = make_demo_tools(Path("demo_output"))
    model = ScriptedChatModel(script=demo_script(), max_input_tokens=16_000)
    ```
"""

from __future__ import annotations

from langchain_result_layer.demo.data import build_stdlib_database
from langchain_result_layer.demo.run import (
    SYSTEM_PROMPT,
    DemoReport,
    TurnStats,
    demo_script,
    run_demo,
)
from langchain_result_layer.demo.tools import make_demo_tools

__all__ = [
    "SYSTEM_PROMPT",
    "DemoReport",
    "TurnStats",
    "build_stdlib_database",
    "demo_script",
    "make_demo_tools",
    "run_demo",
]
