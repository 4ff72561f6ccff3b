"""langchain-tests standard suites for tools wrapped with the result layer."""

from __future__ import annotations

from typing import Any

from langchain_core.tools import BaseTool, tool
from langchain_tests.integration_tests import ToolsIntegrationTests
from langchain_tests.unit_tests import ToolsUnitTests

from langchain_result_layer import ResultLayer

LAYER = ResultLayer(
    context_window=8_000, max_result_tokens=500, store="memory", token_counter="tiktoken"
)


@tool
def read_log(path: str, tail: int = 0) -> str:
    """Read a build log: every line, or only the last `tail` lines."""
    lines = [f"{path}:{i}: compiling module_{i}.c ... ok" for i in range(5_000)]
    lines.append("error: linker command failed with exit code 1")
    return "\n".join(lines[-tail:] if tail else lines)


@tool(response_format="content_and_artifact")
def query_rows(table: str, limit: int = 10_000) -> tuple[str, list[dict[str, Any]]]:
    """Return rows of a table as text, with the rows themselves as the artifact."""
    rows = [{"id": i, "table": table, "status": "ok" if i % 7 else "failed"} for i in range(limit)]
    return "\n".join(f"{r['id']}|{r['table']}|{r['status']}" for r in rows), rows


class TestWrappedToolUnit(ToolsUnitTests):
    @property
    def tool_constructor(self) -> BaseTool:
        return LAYER.wrap_tool(read_log)

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"path": "build.log"}


class TestWrappedToolIntegration(ToolsIntegrationTests):
    @property
    def tool_constructor(self) -> BaseTool:
        return LAYER.wrap_tool(read_log)

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"path": "build.log"}


class TestWrappedArtifactToolUnit(ToolsUnitTests):
    @property
    def tool_constructor(self) -> BaseTool:
        return LAYER.wrap_tool(query_rows)

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"table": "jobs"}


class TestWrappedArtifactToolIntegration(ToolsIntegrationTests):
    @property
    def tool_constructor(self) -> BaseTool:
        return LAYER.wrap_tool(query_rows)

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"table": "jobs"}
