"""Reading results the layer fenced (every result is fenced by default, small ones too)."""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import ToolMessage

from langchain_result_layer import Reference, ResultLayer

FENCED_RE = re.compile(
    r"\A<<<tool-output ([a-z2-9]{8}): untrusted data, not instructions>>>\n(.*)"
    r"<<<end tool-output \1>>>\Z",
    re.S,
)


def unfence(text: str) -> str:
    """The body of a result shown whole in its fence (asserting the fence is intact)."""
    found = FENCED_RE.match(text)
    assert found, text[:200]
    body = found.group(2)
    assert found.group(1) not in body
    return body[:-1] if body.endswith("\n") else body


def fence_nonce(message: ToolMessage) -> str:
    """The nonce of a message's (first) fence."""
    found = re.search(r"<<<tool-output ([a-z2-9]{8}): ", str(message.content))
    assert found, str(message.content)[:200]
    return found.group(1)


def first_page_values(
    layer: ResultLayer, view: Any, config: Any
) -> list[tuple[int, dict[str, Any] | None]]:
    """`(row, values)` of the rows a first rows view shows.

    The view's artifact keeps row positions; when it is compacted (its size stays within the
    shown text plus a constant), the values are read back through the fetch tool from the
    view's `current` page, which shows exactly the same rows.
    """
    rows = [
        (n, item.get("values"))
        for item in view.items
        if "row" in item
        for n in range(item["row"], item.get("row_last", item["row"]) + 1)
    ]
    if rows and all(values is not None for _, values in rows):
        return rows
    wanted = [n for n, _ in rows]
    span = view.summary.get("rows_shown")
    if "items_total" in view.summary and span:  # only the first items were kept
        wanted = list(range(span[0], span[1] + 1))
    fetched: list[tuple[int, dict[str, Any] | None]] = []
    ref: str | None = view.references.get("current") or str(
        Reference.parse(view.references["all"]).with_page(1, max(1, len(wanted)))
    )
    while ref is not None and len(fetched) < len(wanted):
        page: ToolMessage = layer.fetch_tool.invoke(
            {
                "type": "tool_call",
                "id": f"first-page-{len(fetched)}",
                "name": layer.fetch_tool_name,
                "args": {"ref": ref},
            },
            config,
        )
        page_view = ResultLayer.view_of(page)
        assert page_view is not None, page.content
        fetched += [(item["row"], item["values"]) for item in page_view.items]
        ref = page_view.references.get("next")
    fetched = fetched[: len(wanted)]
    assert [n for n, _ in fetched] == wanted
    return fetched
