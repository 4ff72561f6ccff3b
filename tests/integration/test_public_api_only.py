"""The package imports only public LangChain/LangGraph APIs (no `_internal`, no `_private`).

A private module or name of `langchain*` / `langgraph*` can change in any minor release (the
pins allow every 1.x), so the source may not import one, at module level or inside functions.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "src" / "langchain_result_layer").rglob("*.py"))
PACKAGES = ("langchain", "langgraph")


def _third_party(module: str) -> bool:
    top = module.split(".", 1)[0]
    return top.startswith(PACKAGES) and top != "langchain_result_layer"


def _private_parts(name: str) -> list[str]:
    return [part for part in name.split(".") if part.startswith("_") and part != "__future__"]


def private_imports(source: str, filename: str) -> list[str]:
    """Every import of a private module or name from a LangChain/LangGraph package."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source, filename=filename)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _third_party(alias.name) and _private_parts(alias.name):
                    found.append(f"{filename}:{node.lineno}: import {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if not _third_party(node.module):
                continue
            if _private_parts(node.module):
                found.append(f"{filename}:{node.lineno}: from {node.module} import ...")
            for alias in node.names:
                if alias.name.startswith("_"):
                    found.append(
                        f"{filename}:{node.lineno}: from {node.module} import {alias.name}"
                    )
    return found


def test_the_checker_finds_private_imports() -> None:
    bad = (
        "from langgraph._internal._runnable import RunnableCallable\n"
        "import langchain_core.tracers._streaming\n"
        "from langchain_core.tools.base import _is_injected_arg_type\n"
        "def f():\n    from langgraph.pregel._algo import x\n"
    )
    assert len(private_imports(bad, "bad.py")) == 4
    good = (
        "from langgraph.config import get_config\nfrom ._private import x\nimport _thread\n"
        "from langchain_result_layer.adapters._markers import MarkerSigner\n"
    )
    assert private_imports(good, "good.py") == []


def test_no_private_langchain_or_langgraph_import() -> None:
    assert len(SOURCES) > 40
    found = [
        hit
        for path in SOURCES
        for hit in private_imports(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    ]
    assert found == []
