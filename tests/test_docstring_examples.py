"""Every example in the package's docstrings runs.

The rule, stated once (docs/ and README blocks have theirs in tests/acceptance/test_docs_blocks.py):

1. Every ```python block of every docstring under `src/langchain_result_layer` (modules,
   classes, functions, methods, private ones too) is an example, and it runs, in a fresh
   namespace, in a fresh working directory, with the network disabled.
2. The namespace holds what the documented module defines (as `doctest` does: an example of
   `views/rows.py` may name `RowsView` without importing it) and these stand-ins for the
   reader's own objects, nothing else: `counter` (the package's default token counter),
   `store` (an `InMemoryResultStore` holding one 3,000-line build log, stored for
   `Principal()`), `ref` (a `Reference` to that record), `ctx` (a `ViewContext` with a
   2,000-token / 8,000-character budget, `counter` and `ref`), `tool_message` (a `ToolMessage`
   of that log from the tool `read_log`), `layer` (a `ResultLayer` with a 128k window over
   `store`) and `model` (a `ScriptedChatModel` with a 128k window). Anything else an
   example needs, it imports, as a reader would.
3. An example may `await` at top level; it then runs in a fresh event loop.
4. There is no "skip" marker: an example that cannot run here (it needs a server, an API key
   or a real model) is rewritten so that it runs, or removed. Process-wide registries an
   example changes (`register_view`) are restored after it.

`PENDING` lists the modules whose examples are not yet held to the rule (issue 14, files
whose owners were still changing them); each entry is removed when its module passes.
"""

from __future__ import annotations

import ast
import asyncio
import importlib
import re
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "langchain_result_layer"
BLOCK_RE = re.compile(r"^[ \t]*```python\n(.*?)^[ \t]*```", re.S | re.M)

PENDING: dict[str, str] = {}


@dataclass(frozen=True)
class Example:
    """One ```python block of one docstring."""

    path: str
    """The module's path below the package."""
    module: str
    """The module's import name."""
    owner: str
    """The documented name (`<module>`, a class, a function or `Class.method`)."""
    line: int
    """The line of the documented definition."""
    code: str

    @property
    def id(self) -> str:
        return f"{self.path}:{self.line}:{self.owner}"


def _docstrings(tree: ast.Module) -> Iterator[tuple[str, int, str]]:
    yield "<module>", 1, ast.get_docstring(tree, clean=True) or ""
    stack: list[tuple[ast.AST, str]] = [(tree, "")]
    while stack:
        node, prefix = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                yield name, child.lineno, ast.get_docstring(child, clean=True) or ""
                stack.append((child, name + "."))


def collect(path: Path) -> list[Example]:
    rel = path.relative_to(PACKAGE).as_posix()
    module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    module = module.removesuffix(".__init__")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        Example(rel, module, owner, line, textwrap.dedent(block))
        for owner, line, doc in _docstrings(tree)
        for block in BLOCK_RE.findall(doc)
    ]


MODULES = sorted(PACKAGE.rglob("*.py"))
EXAMPLES = [example for path in MODULES for example in collect(path)]
HELD = [example for example in EXAMPLES if example.path not in PENDING]


# --------------------------------------------------------------------------- stand-ins

RECORD_ID = "Ex4mpleRec0rd1d"
BUILD_LOG = "".join(
    f"[{i:05d}] compiling module_{i}.c\n"
    if i != 2_400
    else "error: module_2400.c:17: undefined reference to `frobnicate'\n"
    for i in range(3_000)
)


class StandIns:
    """The reader's objects, each built on first use (from the others it needs)."""

    def __init__(self) -> None:
        self._built: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            self._built[name] = getattr(self, f"_{name}")()
        return self._built[name]

    names = ("counter", "store", "ref", "ctx", "tool_message", "layer", "model")

    def _counter(self) -> Any:
        from langchain_result_layer.core.tokens import default_token_counter

        return default_token_counter()

    def _store(self) -> Any:
        from langchain_result_layer import InMemoryResultStore, Principal

        store = InMemoryResultStore()
        store.put(BUILD_LOG, principal=Principal(), tool_name="read_log", record_id=RECORD_ID)
        return store

    def _ref(self) -> Any:
        from langchain_result_layer.core.reference import Reference

        return Reference(record_id=RECORD_ID, kind="text")

    def _ctx(self) -> Any:
        from langchain_result_layer.core.budget import Budget
        from langchain_result_layer.views.base import ViewContext

        budget = Budget(tokens=2_000, chars=8_000)
        return ViewContext(budget=budget, counter=self["counter"], reference=self["ref"])

    def _tool_message(self) -> Any:
        from langchain_core.messages import ToolMessage

        return ToolMessage(content=BUILD_LOG, tool_call_id="call-1", name="read_log", id="tool-1")

    def _layer(self) -> Any:
        from langchain_result_layer import ResultLayer

        return ResultLayer(context_window=128_000, store=self["store"])

    def _model(self) -> Any:
        from langchain_result_layer import ScriptedChatModel

        return ScriptedChatModel(script=["done"], max_input_tokens=128_000)


def _small_chinook(path: Path) -> None:
    """A few rows of the Chinook sample database's `Artist` table, in a fresh SQLite file."""
    import sqlite3

    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE Artist (ArtistId INTEGER PRIMARY KEY, Name TEXT)")
        conn.executemany(
            "INSERT INTO Artist (Name) VALUES (?)",
            [("AC/DC",), ("Accept",), ("Aerosmith",), ("Alanis Morissette",)],
        )
    conn.close()


def namespace_for(example: Example, tree: ast.Module) -> dict[str, Any]:
    """The module's names plus the stand-ins the example names (built only when named)."""
    namespace = dict(vars(importlib.import_module(example.module)))
    namespace["__name__"] = "__example__"
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    stand_ins = StandIns()
    namespace.update({name: stand_ins[name] for name in StandIns.names if name in used})
    return namespace


# --------------------------------------------------------------------------- the tests


@pytest.mark.parametrize("example", HELD, ids=lambda e: e.id)
@pytest.mark.usefixtures("default_views")
def test_docstring_example_runs(
    example: Example, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    if "chinook.sqlite" in example.code:  # the SQL tool's examples read the Chinook sample
        _small_chinook(tmp_path / "chinook.sqlite")
    assert "doctest:" not in example.code, "no skip markers: make the example run or remove it"
    tree = ast.parse(example.code)
    namespace = namespace_for(example, tree)
    code = compile(example.code, example.id, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    result = eval(code, namespace)  # exec, but returns the coroutine of a top-level await
    if asyncio.iscoroutine(result):
        asyncio.run(result)


def test_pending_modules_exist_and_still_have_examples() -> None:
    paths = {path.relative_to(PACKAGE).as_posix() for path in MODULES}
    assert set(PENDING) <= paths, sorted(set(PENDING) - paths)
    documented = {example.path for example in EXAMPLES}
    assert set(PENDING) <= documented, sorted(set(PENDING) - documented)


def test_the_rule_covers_the_package() -> None:
    assert len(EXAMPLES) >= 200
    assert len(HELD) >= 100
    assert any(example.owner == "<module>" for example in HELD)
    assert any("." in example.owner for example in HELD)  # methods count too
