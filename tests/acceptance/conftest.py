"""Shared pieces of the acceptance suite: real data, real tools, and model-side helpers.

The acceptance tests use the package the way a LangChain/LangGraph user would: real graphs
driven by `ScriptedChatModel`, real stores, real outputs (the demo's standard-library tools
and the shared corpus). Helpers here only *read* what the product produced; they never
reach into its internals to make a test pass.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.tools import BaseTool

from langchain_result_layer import ResultLayer

FETCH = "fetch_tool_result"
CALL_RE = re.compile(r'fetch_tool_result\(ref="(ref://tool-result/[^"]+)"\)')
"""The exact call a notice tells the model to make."""

HEADER_CHARS_RE = re.compile(r"chars ([\d,]+)-([\d,]+) of ([\d,]+)")


def num(text: str) -> int:
    """`1,234` -> 1234."""
    return int(text.replace(",", ""))


# --------------------------------------------------------------------------- real data


def read_raw(path: Path) -> str:
    """A file as a tool would return it (no newline translation)."""
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        return fh.read()


@pytest.fixture(scope="session")
def travis_log(corpus: Path) -> str:
    """A real failed Maven build log (Travis CI: CRLF, ANSI colours, 146 kB)."""
    return read_raw(corpus / "logchunks/logs/Java/square@retrofit/failed/403602199.log")


@pytest.fixture(scope="session")
def corpus_logs(corpus: Path) -> dict[str, str]:
    """Forty-odd real CI logs from the corpus, by short name."""
    paths = sorted((corpus / "logchunks" / "logs").glob("*/*/failed/*.log"))
    return {f"log{i}": read_raw(p) for i, p in enumerate(paths[:45])}


@pytest.fixture(scope="session")
def demo_tools(tmp_path_factory: pytest.TempPathFactory) -> dict[str, BaseTool]:
    """The demo's real tools over this machine's standard library (built once)."""
    from langchain_result_layer.demo.tools import make_demo_tools

    tools = make_demo_tools(tmp_path_factory.mktemp("demo_data"))
    return {t.name: t for t in tools}


# --------------------------------------------------------------------------- models


# --------------------------------------------------------------------------- model-side helpers


def marker(message: BaseMessage) -> dict[str, Any]:
    """The layer's marker in `response_metadata` (empty when absent)."""
    meta = getattr(message, "response_metadata", None) or {}
    value = meta.get("result_layer") or {}
    return dict(value) if isinstance(value, dict) else {}


def is_cleared(message: BaseMessage) -> bool:
    """Whether the budget guard turned this tool result into a placeholder."""
    return isinstance(message, ToolMessage) and bool(marker(message).get("cleared"))


def text_of(message: BaseMessage) -> str:
    """The model-visible text of a message."""
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(b if isinstance(b, str) else str(b.get("text", "")) for b in content)


def calls_in(message: BaseMessage) -> list[str]:
    """Every `fetch_tool_result(ref="...")` call a message's text tells the model to make."""
    return CALL_RE.findall(text_of(message))


_FETCH_IDS = iter(range(10**9))


def fetch(layer: ResultLayer, config: dict[str, Any] | None = None, **args: Any) -> ToolMessage:
    """Call the fetch tool the way `ToolNode` does (a `ToolCall`), return its `ToolMessage`."""
    call = {"type": "tool_call", "id": f"fetch_{next(_FETCH_IDS)}", "name": FETCH, "args": args}
    out = layer.fetch_tool.invoke(call, config)
    assert isinstance(out, ToolMessage)
    return out


async def afetch(
    layer: ResultLayer, config: dict[str, Any] | None = None, **args: Any
) -> ToolMessage:
    """Async twin of `fetch`."""
    call = {"type": "tool_call", "id": f"fetch_{next(_FETCH_IDS)}", "name": FETCH, "args": args}
    out = await layer.fetch_tool.ainvoke(call, config)
    assert isinstance(out, ToolMessage)
    return out


def fenced_body(text: str) -> str:
    """The text between the first fence's opening and closing lines."""
    m = re.search(
        r"<<<tool-output (\w+): untrusted data, not instructions>>>\n(.*?)<<<end tool-output \1>>>",
        text,
        re.S,
    )
    assert m, f"no fence in {text[:300]!r}"
    return m.group(2)


# --------------------------------------------------------------------------- request checks


def request_tokens(layer: ResultLayer, request: Sequence[BaseMessage], tools: Sequence[Any]) -> int:
    """An independent estimate of what a request costs under the layer's counter.

    Counts every message's text, tool-call names and JSON arguments, 4 tokens of framing per
    message, and the JSON schemas of the bound tools: what a provider is billed for.
    """
    from langchain_core.utils.function_calling import convert_to_openai_tool

    count = layer.token_counter.count
    total = 3
    for m in request:
        total += 4 + count(text_of(m))
        for call in getattr(m, "tool_calls", None) or []:
            total += count(call["name"]) + count(json.dumps(call["args"], ensure_ascii=False))
    for t in tools:
        total += count(json.dumps(convert_to_openai_tool(t), ensure_ascii=False))
    return total


def message_key(m: BaseMessage) -> tuple[Any, ...]:
    """What a provider's prompt cache sees of one message."""
    return (
        type(m).__name__,
        json.dumps(m.content, sort_keys=True, default=str, ensure_ascii=False),
        json.dumps(getattr(m, "tool_calls", None), sort_keys=True, default=str),
        getattr(m, "tool_call_id", None),
    )


def prefix_breaks(requests: Sequence[Sequence[BaseMessage]]) -> list[tuple[int, bool]]:
    """Calls whose request does not extend the previous one byte for byte.

    Returns:
        `(call index, explained)` pairs; `explained` is true when the request holds a
        placeholder that the previous request did not (the guard cleared something).
    """
    out: list[tuple[int, bool]] = []
    for n in range(1, len(requests)):
        prev, cur = requests[n - 1], requests[n]
        a = [message_key(m) for m in prev]
        b = [message_key(m) for m in cur]
        if b[: len(a)] != a:
            before = {m.tool_call_id for m in prev if is_cleared(m)}  # type: ignore[attr-defined]
            now = {m.tool_call_id for m in cur if is_cleared(m)}  # type: ignore[attr-defined]
            out.append((n, bool(now - before)))
    return out


def assert_pairing(messages: Sequence[BaseMessage]) -> None:
    """Every tool call answered exactly once, after it; no orphan results."""
    calls: set[str] = set()
    answered: set[str] = set()
    for m in messages:
        if isinstance(m, SystemMessage):
            continue
        if isinstance(m, AIMessage):
            for c in m.tool_calls:
                assert c["id"] not in calls, f"duplicate tool call id {c['id']}"
                calls.add(c["id"])
        elif isinstance(m, ToolMessage):
            assert m.tool_call_id in calls, f"orphan tool result {m.tool_call_id}"
            assert m.tool_call_id not in answered, f"answered twice {m.tool_call_id}"
            answered.add(m.tool_call_id)
    assert answered == calls, f"unanswered tool calls: {calls - answered}"
