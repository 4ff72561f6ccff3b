"""Kind-specific views and the registry that picks one for each result.

The tool's declared kind wins (`ToolPolicy(kind="log")`); otherwise every registered view
sniffs the output and the most confident one renders it, with the plain text view as the
fallback. Register your own with `register_view`.

Example:
    ```python
    from langchain_result_layer.views import choose_view

    assert choose_view("hello").kind == "text"
    ```
"""

from __future__ import annotations

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
from langchain_result_layer.views.text import TextView

__all__ = [
    "Prepared",
    "Rendered",
    "ResultViewBuilder",
    "SliceRequest",
    "TextView",
    "ViewContext",
    "choose_view",
    "get_view",
    "register_view",
    "registered_views",
]

_SNIFF_THRESHOLD = 0.5


def _register_builtin_views() -> None:
    from langchain_result_layer.views.command import CommandView  # noqa: PLC0415
    from langchain_result_layer.views.logs import LogView  # noqa: PLC0415
    from langchain_result_layer.views.rows import RowsView  # noqa: PLC0415

    for view in (TextView(), RowsView(), CommandView(), LogView()):
        register_view(view)


def choose_view(payload: object, *, kind: str | None = None) -> ResultViewBuilder:
    """Pick the view for a tool output.

    Args:
        payload: The tool output (content string, block list, bytes or object).
        kind: The tool's declared kind, if any; wins when registered.

    Returns:
        The view to use (the text view when nothing is confident).

    Raises:
        ValueError: When `kind` names no registered view.

    Example:
        ```python
        choose_view("a,b\\n1,2\\n", kind="text").kind  # 'text'
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
    for view in views.values():
        try:
            score = view.sniff(payload)
        except Exception:  # noqa: BLE001 - a broken user view must not break the pipeline
            continue
        if score > best_score:
            best, best_score = view, score
    return best


_register_builtin_views()
