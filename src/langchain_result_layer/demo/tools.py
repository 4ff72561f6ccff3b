"""Real tools over real local data, for the demo and the notebooks.

- `search_code(pattern)`: regex search over the Python standard library, `path:line:text`;
- `read_file(path)`: a standard-library file, whole;
- `run_sql(query)`: SQL over a SQLite database of every standard-library definition;
- `run_tests()`: a real unittest run with hundreds of passing tests and two failures
  (its ToolMessage has `status="error"` when the run fails, as a shell tool would).

Their outputs are large on purpose: this is what the layer is for.

`make_demo_tools(workdir)` builds them (and their data, once, in `workdir`).
"""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId, tool

from langchain_result_layer.demo.data import (
    build_stdlib_database,
    iter_stdlib_files,
    stdlib_root,
    write_failing_test_suite,
)

__all__ = ["make_demo_tools"]

_MAX_PATTERN = 200


def make_demo_tools(workdir: Path) -> list[BaseTool]:
    """Build the demo tools; data files go to `workdir`.

    Args:
        workdir: Directory for the SQLite database and the generated test suite.

    Returns:
        `[search_code, read_file, run_sql, run_tests]`.

    Example:
        ```python
        search_code, read_file, run_sql, run_tests = make_demo_tools(Path("demo"))
        assert "def " in read_file.invoke({"path": "textwrap.py"})
        ```
    """
    workdir.mkdir(parents=True, exist_ok=True)
    db_path = workdir / "stdlib.db"
    if not db_path.exists():
        build_stdlib_database(db_path)
    suite = write_failing_test_suite(workdir / "test_stdlib_behaviour.py")
    root = stdlib_root()

    @tool
    def search_code(pattern: str) -> str:
        """Search the Python standard library with a regular expression.

        Returns every matching line as `path:line:text`.
        """
        if len(pattern) > _MAX_PATTERN:
            return f"pattern too long ({len(pattern)} > {_MAX_PATTERN} characters)"
        try:
            rx = re.compile(pattern)
        except re.error as exc:
            return f"invalid regular expression: {exc}"
        hits: list[str] = []
        for file in iter_stdlib_files():
            rel = file.relative_to(root).as_posix()
            try:
                lines = file.read_text(encoding="utf-8").splitlines()
            except (UnicodeDecodeError, OSError):
                continue
            hits.extend(f"{rel}:{no}:{line}" for no, line in enumerate(lines, 1) if rx.search(line))
        return "\n".join(hits) if hits else "no matches"

    @tool
    def read_file(path: str) -> str:
        """Read a file of the Python standard library by its path relative to the library root."""
        target = (root / path).resolve()
        if root.resolve() not in target.parents or not target.is_file():
            return f"no such standard-library file: {path}"
        return target.read_text(encoding="utf-8", errors="replace")

    @tool
    def run_sql(query: str) -> list[dict[str, Any]] | str:
        """Run a read-only SQL query on the standard-library database.

        Tables: modules(id, name, path, lines, bytes) and definitions(id, module, kind, name,
        qualname, lineno, end_lineno, args, decorators, has_docstring).
        """
        con = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
        con.row_factory = sqlite3.Row
        try:
            rows = con.execute(query).fetchall()
        except sqlite3.Error as exc:
            return f"SQL error: {exc}"
        finally:
            con.close()
        return [dict(r) for r in rows]

    @tool
    def run_tests(tool_call_id: Annotated[str, InjectedToolCallId]) -> ToolMessage:
        """Run the project's unit tests and return their full output."""
        proc = subprocess.run(  # noqa: S603 - fixed command, no shell
            [sys.executable, str(suite)],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        output = proc.stdout + proc.stderr + f"\nexit code {proc.returncode}\n"
        return ToolMessage(
            content=output,
            tool_call_id=tool_call_id,
            name="run_tests",
            status="error" if proc.returncode else "success",
        )

    return [search_code, read_file, run_sql, run_tests]
