"""The same fetch gives the same page every time, whatever random nonce its fence draws.

Views and fetched pages fit their lines to the budget inside a fence whose nonce is random; a
nonce that happens to cost a token more or less must not change which rows, hits or elements are
shown (the fence is drawn to cost what the canonical one costs). Each case stores one result and
fetches its next page many times (same record, a new nonce each time).
"""

from __future__ import annotations

import json
import re

import pytest
from langchain_core.messages import ToolMessage

from langchain_result_layer import ResultLayer, ToolPolicy
from tests.views.conftest import COUNTER

_NONCE_RE = re.compile(r"tool-output ([a-z2-9]{8})")
_RUNS = 24


_NEXT_RE = re.compile(r'fetch_tool_result\(ref="([^"]+)"\)')


def _without_nonce(text: str) -> str:
    nonce = _NONCE_RE.search(text)
    assert nonce is not None
    return text.replace(nonce.group(1), "NONCE")


def _fetch(layer: ResultLayer, ref: str) -> str:
    out = layer.fetch_tool.invoke(
        {"type": "tool_call", "id": "f1", "name": layer.fetch_tool.name, "args": {"ref": ref}}
    )
    assert isinstance(out, ToolMessage)
    return str(out.content)


_JSON = json.dumps(
    {
        "meta": {"n": 3000},
        "items": [{"id": i, "name": f"n{i}", "tags": ["a", i]} for i in range(3000)],
    }
)
_CSV = "id,name,status,score\n" + "\n".join(
    f"{i},user{i},{'failed' if i % 7 == 0 else 'ok'},{i * 37 % 1000}" for i in range(3000)
)
_SEARCH = "\n".join(
    f"src/pkg{i % 40}/mod{i}.py:{i % 300 + 1}:    value = compute({i})" for i in range(3000)
)


@pytest.mark.parametrize(
    ("content", "kind"),
    [(_JSON, None), (_CSV, "rows"), (_SEARCH, "search")],
    ids=["json", "rows", "search"],
)
def test_the_same_result_gives_the_same_view_whatever_the_nonce(
    content: str, kind: str | None
) -> None:
    policies = {"tool": ToolPolicy(kind=kind)} if kind else {}
    layer = ResultLayer(
        context_window=100_000,
        max_result_tokens=600,
        store="memory",
        token_counter=COUNTER,
        tool_policies=policies,
    )
    msg = layer.process_tool_message(ToolMessage(content=content, tool_call_id="c1", name="tool"))
    view = layer.view_of(msg)
    assert view is not None
    assert view.record_id is not None  # cut: a view, not the raw text
    refs = _NEXT_RE.findall(str(msg.content))
    assert refs
    # Ask for more than one fetch can show, so that the page is cut where the budget ends.
    ref = re.sub(r"page_size=\d+", "page_size=2000", refs[-1])
    ref = re.sub(r"end_line=\d+", "end_line=3000", ref)
    pages = {_without_nonce(_fetch(layer, ref)) for _ in range(_RUNS)}
    assert all(re.search(r"Omitted|more follow|did not fit", page) for page in pages)  # cut
    assert len(pages) == 1


def test_the_text_view_does_not_depend_on_the_nonce() -> None:
    # A plain text cut (head, error windows, tail) at many budgets: with a fence nonce drawn at
    # random, whatever it cost, this failed (1 token more or less moved the fitted scale).
    from langchain_result_layer.views.text import TextView
    from tests.views.conftest import make_ctx

    words = [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "error",
        "failed",
        "test_case",
        "module",
        "value",
        "assert",
    ]
    raw = "\n".join(
        f"{i:05d} " + " ".join(words[(i * 7 + k) % len(words)] for k in range(1 + i * 13 % 29))
        for i in range(3000)
    )
    view = TextView()
    prepared = view.prepare(raw)
    for tokens in range(400, 2400, 101):
        shown = {
            _without_nonce(str(view.render(prepared, make_ctx("text", tokens=tokens)).content))
            for _ in range(8)
        }
        assert len(shown) == 1, tokens
