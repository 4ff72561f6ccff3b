"""Execute every notebook in `notebooks/` and check what it computed; check the saved files.

Each notebook runs in a fresh kernel (`python3`, resolved to this interpreter), in a temporary
working directory, offline (API keys removed, non-local connections refused in the kernel; this
process runs under pytest-socket), with a timeout per cell and per notebook. Any cell error
fails the test. After the last cell, check expressions are evaluated in the kernel's namespace,
so a notebook that silently does nothing (or whose views stop fitting their budget) fails.

The corpus (`tests/conftest.py::CORPUS`) is passed to the kernel as `LRL_CORPUS`; the notebooks
skip their corpus parts when it is absent. `LRL_POSTGRES_URL` is passed through: when it is set
(as in CI), `04_production_setup.ipynb` must run its PostgreSQL part.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tests.conftest import CORPUS
from tests.notebooks.execute import (
    KERNEL_NAME,
    ExecutedNotebook,
    execute_notebook,
    notebook_paths,
)

pytestmark = pytest.mark.notebook

CELL_TIMEOUT = 240
"""Seconds one cell may take (the slowest cell takes a few seconds on a 2-core machine)."""

NOTEBOOK_TIMEOUT = 420
"""Seconds one notebook test may take, kernel start included."""

MAX_SAVED_BYTES = 300 * 1024

CHECKS: dict[str, dict[str, str]] = {
    "01_quickstart.ipynb": {
        "views": "[[ResultLayer.view_of(m).shown_tokens, ResultLayer.view_of(m).budget_tokens, "
        "ResultLayer.view_of(m).original_chars, ResultLayer.view_of(m).truncated, "
        "ResultLayer.view_of(m).stored] for m in views.values()]",
        "names": "sorted(views)",
        "budget": "layer.result_budget.tokens",
        "fetch_status": "fetched.status",
        "fetch_exact": "part.data == raw_tests[part.offset:part.end_offset] and len(part.data) > 0",
        "whole_exact": "whole.data == raw_tests",
        "bad_status": "bad.status",
        "agent_fetches": "[m.status for m in result['messages'] "
        "if m.type == 'tool' and m.name == 'fetch_tool_result']",
        "corpus_used": "corpus is not None",
    },
    "02_langgraph_agent.ipynb": {
        "window": "WINDOW",
        "with_layer": "[r['tokens'] for r in with_mw]",
        "react": "[r['tokens'] for r in react]",
        "bare": "[r['tokens'] for r in bare]",
        "placeholders": "sum(r['placeholders'] for r in with_mw)",
        "fetches": "sum(r['fetches'] for r in with_mw)",
        "react_placeholders": "sum(r['placeholders'] for r in react)",
        "sticky": "sticky",
        "reuse": "reuse",
        "tuned_peak": "max(r['tokens'] for r in tuned)",
    },
    "03_views.ipynb": {
        "views": "{k: [v.kind, v.shown_tokens, v.budget_tokens, v.truncated, v.stored, "
        "v.original_chars] for k, v in all_views.items()}",
        "rows_total": "rows_view.total",
        "rows_in_db": "n_definitions",
        "page_status": "page.status",
        "page_kind": "ResultLayer.view_of(page).kind",
        "refused_status": "refused.status",
        "sql_artifact": "[rows_view.original_artifact['row_count'], "
        "rows_view.original_artifact['truncated']]",
        "definition_status": "definition.status",
        "definition_lines": "[ResultLayer.view_of(definition).summary.get('start_line'), "
        "wanted['start_line']]",
        "json_fetch": "[json_part.status, ResultLayer.view_of(json_part).summary.get('error')]",
        "corpus_used": "corpus is not None",
    },
    "04_production_setup.ipynb": {
        "backends": "sorted(layers)",
        "answers": "answers",
        "purged": "purged",
        "denied": "audit_denied",
        "quota": "[[v.stored, v.store_error is not None] for v in quota_views]",
        "summary": "[summary_view.summary['model_summary']['shown'], "
        "summary_view.shown_tokens <= summary_view.budget_tokens, "
        "str(summarized.content).startswith('[Model-written summary by'), "
        "cited_fetch.status, "
        "str(fallback.content).startswith('[Model-written summary unavailable')]",
    },
}


def _kernel_env() -> dict[str, str]:
    env = {"LRL_CORPUS": str(CORPUS)}
    if os.environ.get("LRL_POSTGRES_URL"):
        env["LRL_POSTGRES_URL"] = os.environ["LRL_POSTGRES_URL"]
    return env


def _run(name: str, tmp_path: Path) -> ExecutedNotebook:
    path = next((p for p in notebook_paths() if p.name == name), None)
    assert path is not None, f"notebooks/{name} is missing"
    return execute_notebook(
        path,
        workdir=tmp_path,
        timeout=CELL_TIMEOUT,
        checks=CHECKS[name],
        env=_kernel_env(),
    )


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], ExecutedNotebook]:
    """Executes a notebook once per module (several tests check one execution)."""
    cache: dict[str, ExecutedNotebook | BaseException] = {}

    def run(name: str) -> ExecutedNotebook:
        if name not in cache:
            try:
                cache[name] = _run(name, tmp_path_factory.mktemp(Path(name).stem))
            except Exception as exc:  # re-raised for every test of this notebook
                cache[name] = exc
        result = cache[name]
        if isinstance(result, BaseException):
            raise result
        return result

    return run


def _corpus_present() -> bool:
    return (CORPUS / "cases.jsonl").is_file()


def test_every_notebook_has_checks() -> None:
    names = {p.name for p in notebook_paths()}
    assert names, "no notebooks found"
    assert names == set(CHECKS), (
        "every notebook in notebooks/ must be executed with checks of what it computed: "
        f"missing checks for {sorted(names - set(CHECKS))}, "
        f"checks for missing notebooks {sorted(set(CHECKS) - names)}"
    )


@pytest.mark.timeout(NOTEBOOK_TIMEOUT)
def test_quickstart(executed: Callable[[str], ExecutedNotebook]) -> None:
    done = executed("01_quickstart.ipynb")
    c = done.checks
    assert done.kernel_executable == sys.executable, "the kernel must run this interpreter"
    expected = {"search_code", "read_file", "run_tests"}
    assert expected <= set(c["names"])
    assert c["corpus_used"] == _corpus_present()
    assert ("read_build_log" in c["names"]) == _corpus_present()
    for shown, budget, original, truncated, stored in c["views"]:
        assert budget == c["budget"] == 1_500
        assert 0 < shown <= budget, "a view must fit its budget"
        assert truncated
        assert stored
        assert original > 20_000, "the quickstart shows huge real outputs"
    assert c["fetch_status"] == "success"
    assert c["fetch_exact"] is True
    assert c["whole_exact"] is True
    assert c["bad_status"] == "error"
    assert c["agent_fetches"] == ["success"], "the scripted agent fetches one reference"
    text = done.text()
    assert "fetch_tool_result(ref=" in text
    assert "fits the budget: True" in text
    assert done.image_count() == 1, "sizes before/after as a picture"


@pytest.mark.timeout(NOTEBOOK_TIMEOUT)
def test_langgraph_agent(executed: Callable[[str], ExecutedNotebook]) -> None:
    done = executed("02_langgraph_agent.ipynb")
    c = done.checks
    window = c["window"]
    assert len(c["with_layer"]) == len(c["bare"]) == len(c["react"]) >= 10
    assert max(c["with_layer"]) < window, "create_agent + middleware must stay under the window"
    assert max(c["react"]) < window, "create_react_agent + budget_guard must stay under it"
    assert c["tuned_peak"] < window
    assert max(c["bare"]) > 10 * window, "without the layer the requests must overflow"
    assert c["placeholders"] > 0, "the guard must have cleared something"
    assert c["react_placeholders"] > 0
    assert c["fetches"] > 0, "the model must have fetched by reference"
    assert c["sticky"] is True, "placeholders must be written back to state"
    assert len(c["reuse"]) == len(c["with_layer"]) - 1
    assert all(0 <= r <= 1 for r in c["reuse"])
    assert done.image_count() == 1, "the notebook shows one plot"


@pytest.mark.timeout(NOTEBOOK_TIMEOUT)
def test_views(executed: Callable[[str], ExecutedNotebook]) -> None:
    done = executed("03_views.ipynb")
    c = done.checks
    assert set(c["views"]) == {"rows (stdlib)", "log", "source file", "json", "search"}
    for name, (_kind, shown, budget, truncated, stored, original) in c["views"].items():
        assert 0 < shown <= budget == 1_200, f"{name}: a view must fit its budget"
        assert truncated, name
        assert stored, name
        assert original > 50_000, name
    assert c["views"]["rows (stdlib)"][0] == "rows"
    assert c["views"]["log"][0] == "log"
    assert c["rows_total"] == c["rows_in_db"] > 10_000
    assert c["page_status"] == "success"
    assert c["page_kind"] == "rows"
    assert c["refused_status"] == "error", "the SQL tool refuses writes"
    assert c["sql_artifact"] == [c["rows_in_db"], False], "the tool's artifact is kept"
    assert c["definition_status"] == "success"
    assert c["definition_lines"][0] == c["definition_lines"][1], "fetched the outlined definition"
    assert c["corpus_used"] == _corpus_present()
    if _corpus_present():
        assert "query_chinook" in done.text()
    assert done.image_count() == 1, "what each view kept of its input, as a picture"


@pytest.mark.timeout(NOTEBOOK_TIMEOUT)
def test_views_json_path_fetch(executed: Callable[[str], ExecutedNotebook]) -> None:
    status, error = executed("03_views.ipynb").checks["json_fetch"]
    assert error is None, error
    assert status == "success"


@pytest.mark.timeout(NOTEBOOK_TIMEOUT)
def test_production_setup(executed: Callable[[str], ExecutedNotebook]) -> None:
    done = executed("04_production_setup.ipynb")
    c = done.checks
    expected = ["SQLite file"] + (["PostgreSQL"] if os.environ.get("LRL_POSTGRES_URL") else [])
    assert c["backends"] == sorted(expected), "PostgreSQL must run when LRL_POSTGRES_URL is set"
    if os.environ.get("CI", "").lower() == "true":
        assert "PostgreSQL" in c["backends"], "CI must run the PostgreSQL part"
    for backend, answer in c["answers"].items():
        assert answer["owner"] == "success", backend
        assert "not found or not accessible" in answer["other tenant"], backend
        assert answer["other tenant"] == answer["other thread"] == answer["missing"], backend
        assert c["purged"][backend] >= 1, backend
        assert c["denied"][backend] >= 4, backend
    assert c["quota"][0] == [True, False]
    assert c["quota"][-1] == [False, True], "the last result must exceed the tenant quota"
    assert c["summary"] == [True, True, True, "success", True], c["summary"]
    assert done.image_count() == 1, "the audit/TTL timeline"


PUBLIC_MODULES = {
    "langchain_result_layer",
    "langchain_result_layer.demo",
    "langchain_result_layer.scripted",
    "langchain_result_layer.tools",
    "langchain_result_layer.views",
}
"""The documented modules a notebook may import from (the rest is internal)."""


@pytest.mark.parametrize("path", notebook_paths(), ids=lambda p: p.name)
def test_notebooks_use_only_the_public_api(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    code = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "code")
    imported = set(re.findall(r"^\s*from (langchain_result_layer[\w.]*) import", code, re.M))
    imported |= set(re.findall(r"^\s*import (langchain_result_layer[\w.]*)", code, re.M))
    assert imported <= PUBLIC_MODULES, sorted(imported - PUBLIC_MODULES)
    assert "__file__" not in code, "find data relative to the notebook, not to the package"
    assert "request_counter_for" not in code


@pytest.mark.parametrize("path", notebook_paths(), ids=lambda p: p.name)
def test_saved_notebook_hygiene(path: Path) -> None:
    raw = path.read_bytes()
    assert len(raw) < MAX_SAVED_BYTES, f"{path.name} is {len(raw) / 1024:.0f} KB"
    nb = nbformat.reads(raw.decode("utf-8"), as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.get("kernelspec", {}).get("name") == KERNEL_NAME
    assert "version" not in nb.metadata.get("language_info", {}), "no interpreter version"
    assert set(nb.metadata) <= {"kernelspec", "language_info"}
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert code
    counts = [cell.execution_count for cell in code]
    assert counts == list(range(1, len(code) + 1)), "save the notebook after one full run"
    outputs: list[dict[str, Any]] = [o for cell in code for o in cell.outputs]
    assert outputs, "save the notebook with its outputs"
    assert not [o for o in outputs if o.get("output_type") == "error"]
    for cell in nb.cells:
        assert "execution" not in cell.metadata, "strip execution timing metadata"
