"""Real local data for the demo: the Python standard library on this machine.

- `stdlib_root()`: the directory of the running interpreter's standard library;
- `build_stdlib_database(path)`: a SQLite database of every module, class and function defined
  in the standard library (parsed with `ast`), tens of thousands of rows;
- `write_failing_test_suite(path)`: a real unittest suite over standard-library functions with
  hundreds of passing tests and a couple of genuine failures.

Example:
    ```python
    from pathlib import Path

    from langchain_result_layer.demo.data import stdlib_root, write_failing_test_suite

    suite = write_failing_test_suite(Path("test_demo.py"), n_tests=20)
    assert "unittest" in suite.read_text() and (stdlib_root() / "os.py").exists()
    ```
"""

from __future__ import annotations

import ast
import os
import sqlite3
import sysconfig
from collections.abc import Iterator
from pathlib import Path

__all__ = [
    "build_stdlib_database",
    "iter_stdlib_files",
    "stdlib_root",
    "write_failing_test_suite",
]

_SKIP_DIRS = {
    "site-packages",
    "dist-packages",
    "__pycache__",
    "test",
    "tests",
    "idlelib",
    "turtledemo",
}


def stdlib_root() -> Path:
    """The running interpreter's standard-library directory.

    Returns:
        The directory.

    Example:
        ```python
        assert (stdlib_root() / "os.py").exists()
        ```
    """
    return Path(sysconfig.get_paths()["stdlib"])


def iter_stdlib_files() -> Iterator[Path]:
    """Every `.py` file of the standard library (no tests, no site-packages), sorted.

    Yields:
        File paths.

    Example:
        ```python
        next(iter_stdlib_files())
        ```
    """
    root = stdlib_root()
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        found.extend(Path(dirpath) / f for f in filenames if f.endswith(".py"))
    yield from sorted(found)


def build_stdlib_database(path: Path) -> Path:
    """Build (or rebuild) a SQLite database describing the standard library.

    Tables: `modules(id, name, path, lines, bytes)`, `definitions(id, module, kind, name,
    qualname, lineno, end_lineno, args, decorators, has_docstring)`.

    Args:
        path: Database file to create.

    Returns:
        The path.

    Example:
        ```python
        import sqlite3

        db = build_stdlib_database(Path("stdlib.db"))
        with sqlite3.connect(db) as con:
            (n,) = con.execute("select count(*) from definitions").fetchone()
        assert n > 10_000
        ```
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.unlink()
    root = stdlib_root()
    con = sqlite3.connect(path)
    try:
        con.executescript(
            """
            CREATE TABLE modules (id INTEGER PRIMARY KEY, name TEXT NOT NULL, path TEXT NOT NULL,
                                  lines INTEGER NOT NULL, bytes INTEGER NOT NULL);
            CREATE TABLE definitions (id INTEGER PRIMARY KEY, module TEXT NOT NULL,
                                      kind TEXT NOT NULL, name TEXT NOT NULL,
                                      qualname TEXT NOT NULL,
                                      lineno INTEGER NOT NULL, end_lineno INTEGER,
                                      args INTEGER NOT NULL, decorators TEXT NOT NULL,
                                      has_docstring INTEGER NOT NULL);
            """
        )
        for file in iter_stdlib_files():
            rel = file.relative_to(root).as_posix()
            module = rel[:-3].replace("/", ".").removesuffix(".__init__")
            try:
                source = file.read_text(encoding="utf-8")
                tree = ast.parse(source)
            except (SyntaxError, UnicodeDecodeError, ValueError):
                continue
            con.execute(
                "INSERT INTO modules (name, path, lines, bytes) VALUES (?, ?, ?, ?)",
                (module, rel, source.count("\n") + 1, len(source.encode("utf-8"))),
            )
            con.executemany(
                "INSERT INTO definitions (module, kind, name, qualname, lineno, end_lineno, args,"
                " decorators, has_docstring) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                list(_definitions(module, tree)),
            )
        con.commit()
    finally:
        con.close()
    return path


def _definitions(
    module: str, tree: ast.Module
) -> Iterator[tuple[str, str, str, str, int, int | None, int, str, int]]:
    stack: list[tuple[ast.AST, str]] = [(tree, "")]
    while stack:
        node, prefix = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qual = f"{prefix}{child.name}"
                if isinstance(child, ast.ClassDef):
                    kind, nargs = "class", len(child.bases)
                else:
                    kind = "method" if prefix else "function"
                    a = child.args
                    nargs = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs)
                decorators = ",".join(ast.unparse(d)[:40] for d in child.decorator_list)
                yield (
                    module,
                    kind,
                    child.name,
                    qual,
                    child.lineno,
                    child.end_lineno,
                    nargs,
                    decorators,
                    int(ast.get_docstring(child) is not None),
                )
                stack.append((child, qual + "."))


_TEST_TEMPLATE = '''"""Generated test suite: real checks of standard-library behaviour."""
import json
import textwrap
import unittest


class TestTextwrap(unittest.TestCase):
{textwrap_tests}


class TestJson(unittest.TestCase):
{json_tests}

    def test_json_float_precision(self):
        # A genuine failure: binary floating point does not round-trip this sum exactly.
        self.assertEqual(json.loads(json.dumps(0.1 + 0.2)), 0.3)


class TestImports(unittest.TestCase):
    def test_optional_module(self):
        import importlib
        importlib.import_module("definitely_not_an_installed_module_xyz")


if __name__ == "__main__":
    unittest.main(verbosity=2)
'''


def write_failing_test_suite(path: Path, *, n_tests: int = 400) -> Path:
    """Write a unittest module with `n_tests` passing tests and two real failures.

    Args:
        path: Where to write the module.
        n_tests: How many passing tests to generate.

    Returns:
        The path.

    Example:
        ```python
        suite = write_failing_test_suite(Path("test_demo.py"), n_tests=10)
        assert suite.read_text().count("def test_") >= 10
        ```
    """
    half = n_tests // 2
    textwrap_tests = "\n".join(
        f"    def test_wrap_width_{i}(self):\n"
        f"        words = ' '.join('w' * (j % 7 + 1) for j in range({i + 20}))\n"
        f"        width = {i % 30 + 10}\n"
        f"        self.assertTrue(all(len(x) <= width for x in textwrap.wrap(words, width)))\n"
        for i in range(half)
    )
    json_tests = "\n".join(
        f"    def test_roundtrip_{i}(self):\n"
        f"        value = {{'n': {i}, 'items': list(range({i % 13})), 's': 'x' * {i % 11}}}\n"
        f"        self.assertEqual(json.loads(json.dumps(value)), value)\n"
        for i in range(n_tests - half)
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        _TEST_TEMPLATE.format(textwrap_tests=textwrap_tests, json_tests=json_tests),
        encoding="utf-8",
    )
    return path
