"""No view-kind name is written in `core/` (issue 14 item 3): views declare what core needs.

Core gets a view's choices as values (`TruncationProfile`, `Reference.kind`), never by testing
a kind's name. The scan reads every string constant of `core/` that is not a docstring and
fails on one that equals a built-in kind, unless it is listed below with the reason it is not
a kind name.
"""

from __future__ import annotations

import ast
from pathlib import Path

from langchain_result_layer import core
from langchain_result_layer.views import BUILTIN_KINDS

CORE = Path(core.__file__).parent

ALLOWED: dict[tuple[str, str, str], str] = {
    ("reference.py", "PLAIN_KIND", "text"): "the one definition of the plain kind (stores need it)",
    ("truncate.py", "to_item", "text"): "a field name of a segment item, not a kind",
}
"""(module, enclosing assignment or function, literal) -> why it is not a kind name."""


def _docstrings(tree: ast.Module) -> set[int]:
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    # Attribute docstrings: a string expression right after an assignment.
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            for stmt in body:
                if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                    found.add(id(stmt.value))
    return found


def _owner(stack: list[ast.AST]) -> str:
    """Name of the innermost assignment target or function around a node."""
    for node in reversed(stack):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            return node.targets[0].id
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            return node.target.id
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return node.name
    return "<module>"


def kind_literals(source: str, kinds: set[str]) -> list[tuple[int, str, str]]:
    """(line, owner, literal) of every non-docstring string constant equal to a kind."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    hits: list[tuple[int, str, str]] = []

    def visit(node: ast.AST, stack: list[ast.AST]) -> None:
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value in kinds
            and id(node) not in docs
        ):
            hits.append((node.lineno, _owner(stack), node.value))
        for child in ast.iter_child_nodes(node):
            visit(child, [*stack, node])

    visit(tree, [])
    return hits


def test_the_scan_finds_a_kind_table_and_a_kind_test() -> None:
    source = 'FRACTIONS = {"search": 0.7}\ndef f(p):\n    """log"""\n    return p == "log"\n'
    assert kind_literals(source, set(BUILTIN_KINDS)) == [
        (1, "FRACTIONS", "search"),
        (4, "f", "log"),
    ]


def test_no_kind_name_is_written_in_core() -> None:
    kinds = set(BUILTIN_KINDS)
    found = []
    for path in sorted(CORE.rglob("*.py")):
        for line, owner, literal in kind_literals(path.read_text(encoding="utf-8"), kinds):
            if (path.name, owner, literal) not in ALLOWED:
                found.append(f"core/{path.name}:{line} {literal!r} in {owner}")
    assert not found, "kind names in core (declare the value in the view instead): " + (
        "; ".join(found)
    )
