"""Every Python block of README.md and docs/*.md runs, and every class the docs name imports.

The rule, stated once:

1. The ```python blocks of each document run in order, in one namespace per document, in a fresh
   working directory (a block may use what an earlier block of the same document defined).
2. Names a block uses without defining are the reader's own objects. The test binds each of them
   to a real one, and only these: `model` (a `ScriptedChatModel` with a 128k window), `search`,
   `run_sql`, `read_log` (the demo's real tools over the standard library), `prompt` (a system
   prompt), `tool_message` (a real 750 KB `read_file` result), `graph` (a `StateGraph` with an
   `agent` node, for blocks that add nodes), `ToolNode` (LangGraph's), `state` (a graph state with
   the messages of `tool_message`'s call) and `ref` (a reference to that stored result).
3. A block that cannot run here (it needs a real model, an API key or a server) starts with a line
   `# not run: <reason>` and is skipped; the reason must say why.

Anything else a block needs must be imported in the block, as a reader would. And every
package class a document names in backticks (`SQLResultStore(...)`) must import as the document
shows it: from `langchain_result_layer` itself, or from the module a block of that document
imports it from.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode
from typing_extensions import TypedDict

import langchain_result_layer
from langchain_result_layer import ResultLayer, ScriptedChatModel

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK_RE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
NOT_RUN = "# not run:"

pytestmark = pytest.mark.filterwarnings(
    "ignore:create_react_agent has been moved", "ignore::UserWarning"
)


class _State(TypedDict):
    messages: Annotated[list[Any], add_messages]


def blocks(doc: Path) -> list[str]:
    return BLOCK_RE.findall(doc.read_text(encoding="utf-8"))


def stand_ins(demo_tools: dict[str, Any]) -> dict[str, Any]:
    raw = demo_tools["read_file"].invoke({"path": "pydoc_data/topics.py"})
    message = ToolMessage(content=raw, tool_call_id="c1", name="read_file", id="t1")
    keeper = ResultLayer(context_window=128_000, max_result_tokens=2_000)
    view = ResultLayer.view_of(keeper.process_tool_message(message))
    assert view is not None
    graph = StateGraph(_State)
    graph.add_node("agent", lambda s: {"messages": []})
    call = {"name": "read_file", "args": {"path": "pydoc_data/topics.py"}, "id": "c1"}
    return {
        "model": ScriptedChatModel(script=["done"], max_input_tokens=128_000),
        "search": demo_tools["search_code"],
        "run_sql": demo_tools["run_sql"],
        "read_log": demo_tools["read_file"],
        "prompt": "You are a careful analyst.",
        "tool_message": message,
        "graph": graph,
        "ToolNode": ToolNode,
        "state": {"messages": [AIMessage("", tool_calls=[call], id="a1"), message]},
        "ref": view.references["all"],
    }


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_python_block_runs(
    doc: Path, demo_tools: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    namespace = stand_ins(demo_tools)
    ran = 0
    for n, block in enumerate(blocks(doc)):
        first = block.lstrip().splitlines()[0] if block.strip() else ""
        if first.startswith(NOT_RUN):
            assert len(first) > len(NOT_RUN) + 10, f"{doc.name} block {n}: say why it is not run"
            continue
        code = compile(block, f"{doc.name} python block {n}", "exec")
        exec(code, namespace)
        ran += 1
    if blocks(doc):
        assert ran, f"{doc.name}: every block is marked not run"


def _package_classes() -> set[str]:
    """Classes of the package's public modules (a `_module` holds internals, not API)."""
    names: set[str] = set()
    for path in (ROOT / "src" / "langchain_result_layer").rglob("*.py"):
        if any(part.startswith("_") and part != "__init__.py" for part in path.parts[-3:]):
            continue
        names.update(re.findall(r"^class ([A-Z]\w+)", path.read_text(encoding="utf-8"), re.M))
    return names


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_class_a_document_names_imports_as_shown(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    imported_from: dict[str, str] = {}
    for module, grouped, inline in re.findall(
        r"^\s*from (langchain_result_layer[\w.]*) import (?:\(([\w,\s]+)\)|([\w, ]+))", text, re.M
    ):
        for name in re.split(r"[,\s]+", (grouped or inline).strip()):
            if name:
                imported_from[name] = module
    ours = _package_classes()
    named = set(re.findall(r"`([A-Z]\w+)(?:\(|`|\.)", text)) & ours
    for name in sorted(named):
        module = imported_from.get(name, "langchain_result_layer")
        imported = __import__(module, fromlist=[name])
        assert hasattr(imported, name), (
            f"{doc.name} names `{name}` but `from {module} import {name}` fails"
        )


def test_the_rule_covers_the_documents_it_claims() -> None:
    assert ROOT / "README.md" in DOCS
    assert not (ROOT / "docs" / "helpers").exists(), "internal notes are not user docs"
    assert len(blocks(ROOT / "README.md")) >= 6
    assert langchain_result_layer.__all__  # the namespace the docs import from
