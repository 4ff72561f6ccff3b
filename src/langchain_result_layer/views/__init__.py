r"""Kind-specific views and the registry that picks one for each result.

Choosing a view:

1. the tool's declared kind wins (`ToolPolicy(kind="log")`);
2. otherwise every registered view sniffs the output (cheaply: text views look at a prefix,
   and the command view also at the last few kilobytes) and the most confident one above
   0.5 renders it; user-registered views take part like the built-in ones, and win ties.
   Tabular text wins over the log view: a delimited table with a header row (or whose rows
   do not start with a timestamp) scores above a log, whatever its date or status columns;
3. the plain text view (head + error windows + tail) is the fallback.

Built-in kinds: `text`, `rows`, `log`, `command`, `file`, `json`, `search`, `binary`.
Register your own with `register_view`.

Example:
    ```python
    from langchain_result_layer.views import choose_view

    assert choose_view("hello").kind == "text"
    assert choose_view([{"id": 1}, {"id": 2}]).kind == "rows"
    assert choose_view(b"\x89PNG\r\n\x1a\n").kind == "binary"
    ```
"""

from __future__ import annotations

import logging

from langchain_result_layer.views._salience import SalienceSettings
from langchain_result_layer.views.base import (
    Prepared,
    Rendered,
    ResultViewBuilder,
    SliceRequest,
    ViewContext,
    get_view,
    register_view,
    registered_views,
)
from langchain_result_layer.views.binary import BinaryView
from langchain_result_layer.views.command import CommandView
from langchain_result_layer.views.files import FileView
from langchain_result_layer.views.json_view import JsonView
from langchain_result_layer.views.logs import LogView
from langchain_result_layer.views.rows import RowsView
from langchain_result_layer.views.search import SearchView
from langchain_result_layer.views.text import TextView

__all__ = [
    "BUILTIN_KINDS",
    "BinaryView",
    "CommandView",
    "FileView",
    "JsonView",
    "LogView",
    "Prepared",
    "Rendered",
    "ResultViewBuilder",
    "RowsView",
    "SalienceSettings",
    "SearchView",
    "SliceRequest",
    "TextView",
    "ViewContext",
    "choose_view",
    "get_view",
    "register_view",
    "registered_views",
]

logger = logging.getLogger(__name__)

_SNIFF_THRESHOLD = 0.5

BUILTIN_KINDS: tuple[str, ...] = (
    "text",
    "rows",
    "log",
    "command",
    "file",
    "json",
    "search",
    "binary",
)
"""Kinds registered when the package is imported."""


def _register_builtin_views() -> None:
    for view in (
        TextView(),
        RowsView(),
        LogView(),
        CommandView(),
        FileView(),
        JsonView(),
        SearchView(),
        BinaryView(),
    ):
        register_view(view)


def choose_view(payload: object, *, kind: str | None = None) -> ResultViewBuilder:
    r"""Pick the view for a tool output.

    Args:
        payload: The tool output (content string, block list, bytes or object).
        kind: The tool's declared kind, if any; wins when registered.

    Returns:
        The view to use (the text view when nothing is confident).

    Raises:
        ValueError: When `kind` names no registered view.

    Example:
        ```python
        choose_view("a,b\n1,2\n", kind="text").kind  # 'text'
        ```
    """
    views = registered_views()
    if kind is not None:
        view = views.get(kind)
        if view is None:
            msg = f"no view registered for kind {kind!r}; known kinds: {sorted(views)}"
            raise ValueError(msg)
        return view
    best: ResultViewBuilder = views.get("text") or TextView()
    best_score = _SNIFF_THRESHOLD
    # User views are asked first and keep ties; built-in views in a fixed order.
    ordered = [v for k, v in views.items() if k not in BUILTIN_KINDS] + [
        views[k] for k in BUILTIN_KINDS if k in views
    ]
    for view in ordered:
        try:
            score = float(view.sniff(payload))
        except Exception:
            logger.warning("view %r failed to sniff; skipped", view.kind, exc_info=True)
            continue
        if score > best_score:
            best, best_score = view, score
    return best


_register_builtin_views()
