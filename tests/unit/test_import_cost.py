"""Importing the package is cheap: frameworks load only when something needs them.

Each check runs in a fresh interpreter and reads `sys.modules`, so what an earlier test imported
cannot hide a module that the import under test pulls in.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

FRAMEWORKS = ("langchain", "langchain_core", "langgraph", "langsmith", "sqlalchemy")


def _loaded_after(code: str) -> set[str]:
    """The top-level frameworks in `sys.modules` after running `code` in a new interpreter."""
    script = (
        "import json, sys\n"
        f"{code}\n"
        f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({FRAMEWORKS!r}))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_import_package_loads_no_framework() -> None:
    assert _loaded_after("import langchain_result_layer") == set()


@pytest.mark.parametrize(
    "module",
    [
        "langchain_result_layer.core",
        "langchain_result_layer.core.guard",
        "langchain_result_layer.core.tokens",
        "langchain_result_layer.core.truncate",
        "langchain_result_layer.core.reference",
        "langchain_result_layer.core.render",
        "langchain_result_layer.core.view",
        "langchain_result_layer.core.evidence",
        "langchain_result_layer.core.normalize",
        "langchain_result_layer.core.jsonable",
        "langchain_result_layer.core.budget",
    ],
)
def test_core_is_pure(module: str) -> None:
    assert _loaded_after(f"import {module}") == set()


def test_the_per_result_path_with_a_memory_store_loads_no_framework() -> None:
    code = (
        "from langchain_result_layer import ResultLayer\n"
        "layer = ResultLayer(context_window=8_000, token_counter='approximate')\n"
        "out = layer.pipeline.process('x\\n' * 20_000, tool_name='t', status='success')\n"
        "assert out is not None and out.view.truncated\n"
        "import sys\n"
        "assert 'asyncio' not in sys.modules, 'the sync path needs no event loop machinery'\n"
    )
    assert _loaded_after(code) == set()


def test_sql_store_loads_sqlalchemy_on_first_use() -> None:
    code = (
        "from langchain_result_layer import ResultLayer\n"
        "ResultLayer(context_window=8_000, store='sqlite://', token_counter='approximate')\n"
    )
    loaded = _loaded_after(code)
    assert "sqlalchemy" in loaded
    assert "langgraph" not in loaded


def test_budget_guard_loads_langchain_core_on_first_use() -> None:
    # A public `Runnable` (langchain-core) since it no longer builds on LangGraph's private
    # `RunnableCallable`; LangGraph loads only inside a graph run.
    code = (
        "from langchain_result_layer import BudgetGuard\n"
        "assert BudgetGuard.__name__ == 'BudgetGuard'\n"
    )
    loaded = _loaded_after(code)
    assert "langchain_core" in loaded
    assert "sqlalchemy" not in loaded


def test_cli_help_loads_no_framework() -> None:
    code = (
        "import contextlib, io\n"
        "from langchain_result_layer.cli.main import main\n"
        "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['--help'])\n"
    )
    assert _loaded_after(code) == set()


def test_every_public_name_resolves() -> None:
    import langchain_result_layer as lrl

    for name in lrl.__all__:
        assert getattr(lrl, name) is not None, name
    assert set(lrl.__all__) <= set(dir(lrl))
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = lrl.no_such_name  # type: ignore[attr-defined]
