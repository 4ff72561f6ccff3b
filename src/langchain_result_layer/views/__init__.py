r"""Kind-specific views and the registry that picks one for each result.

Choosing a view (the rule lives in `ViewRegistry.choose`):

1. the tool's declared kind wins (`ToolPolicy(kind="log")`);
2. otherwise every registered view sniffs the output (cheaply: text views look at a prefix,
   and the command view also at the last few kilobytes) and the most confident one above
   0.5 renders it; user-registered views take part like the built-in ones, and win ties.
   Tabular text wins over the log view: a delimited table with a header row (or whose rows
   do not start with a timestamp) scores above a log, whatever its date or status columns;
3. the plain text view (head + error windows + tail) is the fallback.

Built-in kinds (`BUILTIN_VIEWS`, the one table of them): `text`, `rows`, `log`, `command`,
`file`, `json`, `search`, `binary`, `blocks`. Give one layer its own views with
`ResultLayer(views=[...])`; `register_view` adds a view to the process-wide default, which
layers created without `views=` use.

Example:
    ```python
    from langchain_result_layer.views import choose_view

    assert choose_view("hello").kind == "text"
    assert choose_view([{"id": 1}, {"id": 2}]).kind == "rows"
    assert choose_view(b"\x89PNG\r\n\x1a\n").kind == "binary"
    ```
"""

from __future__ import annotations

from langchain_result_layer.views._salience_settings import SalienceSettings
from langchain_result_layer.views._tabular import materialize_rows
from langchain_result_layer.views.base import (
    Prepared,
    Rendered,
    ResultViewBuilder,
    SliceRequest,
    ViewContext,
)
from langchain_result_layer.views.binary import BinaryView
from langchain_result_layer.views.block_list import BlockListView
from langchain_result_layer.views.command import CommandView
from langchain_result_layer.views.files import FileView
from langchain_result_layer.views.json_view import JsonView
from langchain_result_layer.views.logs import LogView
from langchain_result_layer.views.registry import (
    BUILTIN_KINDS,
    BUILTIN_VIEWS,
    SHAPE_KINDS,
    ViewRegistry,
    get_view,
    register_view,
    registered_views,
)
from langchain_result_layer.views.rows import RowsView
from langchain_result_layer.views.search import SearchView
from langchain_result_layer.views.text import TextView

__all__ = [
    "BUILTIN_KINDS",
    "BUILTIN_VIEWS",
    "SHAPE_KINDS",
    "BinaryView",
    "BlockListView",
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
    "ViewRegistry",
    "choose_view",
    "get_view",
    "materialize_rows",
    "register_view",
    "registered_views",
]


def choose_view(
    payload: object, *, kind: str | None = None, views: ViewRegistry | None = None
) -> ResultViewBuilder:
    r"""Pick the view for a tool output (`ViewRegistry.choose`).

    Args:
        payload: The tool output (content string, block list, bytes or object).
        kind: The tool's declared kind, if any; wins when registered.
        views: The registry to choose from (default: the process-wide one).

    Returns:
        The view to use (the text view when nothing is confident).

    Raises:
        ValueError: When `kind` names no registered view.

    Example:
        ```python
        assert choose_view("a,b\n1,2\n", kind="text").kind == "text"
        ```
    """
    return (views if views is not None else registered_views()).choose(payload, kind=kind)
