r"""Which views a layer chooses from, and how it chooses one for each result.

`BUILTIN_VIEWS` is the one table of built-in view kinds: a kind is built in because its class
is listed here, and the list's order is the order in which built-in views sniff a result.

A `ViewRegistry` is an immutable set of views by kind, with the rule that picks one:

1. the tool's declared kind wins (`ToolPolicy(kind="log")`);
2. otherwise every view sniffs the output (cheaply: text views look at a prefix, and the
   command view also at the last few kilobytes) and the most confident one above
   `SNIFF_THRESHOLD` renders it; added views are asked before the built-in ones, in the order
   they were added, and win ties;
3. the plain text view (head + error windows + tail) is the fallback.

Each layer can have its own registry (`ResultLayer(views=[CsvView()])`). The process-wide
default, which `register_view` extends, is used by layers created without `views=`: it is a
convenience for scripts, and it affects every such layer in the process.

Example:
    ```python
    from langchain_result_layer.views.registry import ViewRegistry

    views = ViewRegistry.builtin()
    assert views.choose("hello").kind == "text"
    assert views.choose([{"id": 1}, {"id": 2}]).kind == "rows"
    assert "rows" not in views.without("rows")
    ```
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Iterator, Mapping

from langchain_result_layer.core.reference import register_kind
from langchain_result_layer.views.base import ResultViewBuilder
from langchain_result_layer.views.binary import BinaryView
from langchain_result_layer.views.block_list import BlockListView
from langchain_result_layer.views.command import CommandView
from langchain_result_layer.views.files import FileView
from langchain_result_layer.views.json_view import JsonView
from langchain_result_layer.views.logs import LogView
from langchain_result_layer.views.rows import RowsView
from langchain_result_layer.views.search import SearchView
from langchain_result_layer.views.text import TextView

__all__ = [
    "BUILTIN_KINDS",
    "BUILTIN_VIEWS",
    "SHAPE_KINDS",
    "SNIFF_THRESHOLD",
    "ViewRegistry",
    "get_view",
    "register_view",
    "registered_views",
    "sniff_ceiling",
]

logger = logging.getLogger(__name__)

BUILTIN_VIEWS: tuple[type[ResultViewBuilder], ...] = (
    TextView,
    RowsView,
    LogView,
    CommandView,
    FileView,
    JsonView,
    SearchView,
    BinaryView,
    BlockListView,
)
"""The built-in view classes, in the order they sniff (tabular text before logs)."""

BUILTIN_KINDS: tuple[str, ...] = tuple(view.kind for view in BUILTIN_VIEWS)
"""The kinds of `BUILTIN_VIEWS`, in the same order."""

SHAPE_KINDS: frozenset[str] = frozenset({TextView.kind, JsonView.kind, BlockListView.kind})
"""Kinds recorded for a result's shape (a text, any object as JSON, a block list) as well as
for a view chosen for its content: a stored result of these kinds is sniffed again when it is
rendered again, instead of being held to the view of that kind."""

SNIFF_THRESHOLD = 0.5
"""A view renders a result it was not declared for only when it sniffs it above this score."""

FALLBACK_KIND = TextView.kind
"""The kind used when no view is confident (and when a registry has no view of that kind,
a plain `TextView`)."""


class ViewRegistry(Mapping[str, ResultViewBuilder]):
    """An immutable set of views by kind, with the rule that picks one for a result.

    A registry is a read-only mapping from kind to view. `with_views` and `without` return
    new registries; a registry never changes, so one may be shared by threads and layers.

    Args:
        views: The views, in the order they were added: a later view of the same kind
            replaces an earlier one in its place. Their kinds become kinds that references
            may name (`core.reference.register_kind`).

    Raises:
        ValueError: When a view's kind is not a valid kind name.

    Example:
        ```python
        from langchain_result_layer.core.view import ResultView
        from langchain_result_layer.views.base import Prepared, Rendered, ViewContext


        class UpperView(ResultViewBuilder):
            kind = "upper"

            def sniff(self, payload: object) -> float:
                return 0.9 if isinstance(payload, str) and payload.startswith("SHOUT") else 0.0

            def prepare(self, payload: object) -> Prepared:
                return Prepared(raw=str(payload))

            def render(self, prepared: Prepared, ctx: ViewContext) -> Rendered:
                text = str(prepared.raw).upper()[: ctx.budget.chars]
                return Rendered(content=text, view=ResultView(kind=self.kind))


        views = ViewRegistry.builtin().with_views(UpperView())
        assert views.choose("SHOUT: hello").kind == "upper"
        assert views.choose("hello").kind == "text"
        assert "upper" not in ViewRegistry.builtin()  # the built-in registry is unchanged
        ```
    """

    __slots__ = ("_order", "_sniffing", "_views")

    def __init__(self, views: Iterable[ResultViewBuilder] = ()) -> None:
        by_kind: dict[str, ResultViewBuilder] = {}
        for view in views:
            register_kind(view.kind)  # references may name it
            by_kind[view.kind] = view  # a replacement keeps the slot of the kind it replaces
        self._views = by_kind
        added = [view for kind, view in by_kind.items() if kind not in BUILTIN_KINDS]
        built_in = [by_kind[kind] for kind in BUILTIN_KINDS if kind in by_kind]
        self._order: tuple[ResultViewBuilder, ...] = (*added, *built_in)
        ranked = sorted(enumerate(self._order), key=lambda iv: -sniff_ceiling(iv[1]))
        self._sniffing: tuple[tuple[int, float, ResultViewBuilder], ...] = tuple(
            (i, sniff_ceiling(view), view) for i, view in ranked
        )
        """The views with their place in `_order` and their ceiling, highest ceiling first."""

    @classmethod
    def builtin(cls) -> ViewRegistry:
        """A registry of one fresh instance of each built-in view.

        Returns:
            The registry.

        Example:
            ```python
            assert tuple(ViewRegistry.builtin()) == BUILTIN_KINDS
            ```
        """
        return cls(view() for view in BUILTIN_VIEWS)

    def __getitem__(self, kind: str) -> ResultViewBuilder:
        return self._views[kind]

    def __iter__(self) -> Iterator[str]:
        return iter(self._views)

    def __len__(self) -> int:
        return len(self._views)

    def __repr__(self) -> str:
        return f"ViewRegistry({', '.join(self._views)})"

    def with_views(self, *views: ResultViewBuilder) -> ViewRegistry:
        """A registry with `views` added (a view of a kind already present replaces it).

        Args:
            *views: The views to add.

        Returns:
            The new registry; this one is unchanged.

        Example:
            ```python
            from langchain_result_layer.views.text import TextView

            views = ViewRegistry().with_views(TextView())
            assert list(views) == ["text"]
            ```
        """
        return ViewRegistry((*self._views.values(), *views))

    def without(self, *kinds: str) -> ViewRegistry:
        """A registry without the views of `kinds` (kinds not present are ignored).

        Args:
            *kinds: The kinds to leave out.

        Returns:
            The new registry; this one is unchanged.

        Example:
            ```python
            assert ViewRegistry.builtin().without("binary").get("binary") is None
            ```
        """
        return ViewRegistry(view for kind, view in self._views.items() if kind not in kinds)

    def choose(self, payload: object, *, kind: str | None = None) -> ResultViewBuilder:
        r"""Pick the view for a tool output.

        Args:
            payload: The tool output (content string, block list, bytes or object).
            kind: The tool's declared kind, if any; wins when registered.

        Returns:
            The view to use (the text view when nothing is confident). A view whose `sniff`
            raises is logged and skipped.

        Raises:
            ValueError: When `kind` names no view of this registry.

        Example:
            ```python
            views = ViewRegistry.builtin()
            assert views.choose("a,b\n1,2\n", kind="text").kind == "text"
            assert views.choose(b"\x89PNG\r\n\x1a\n").kind == "binary"
            ```
        """
        if kind is not None:
            view = self._views.get(kind)
            if view is None:
                msg = f"no view registered for kind {kind!r}; known kinds: {sorted(self._views)}"
                raise ValueError(msg)
            return view
        best: ResultViewBuilder = self._views.get(FALLBACK_KIND) or TextView()
        best_score = SNIFF_THRESHOLD
        best_at = -1  # a view must beat the threshold: it wins no tie with it
        # The most confident view wins, the first in `_order` on a tie. Views are asked
        # highest ceiling first, and one that could neither beat nor tie-and-precede the best
        # so far is not asked: the same choice as asking every view in order.
        for at, ceiling, view in self._sniffing:
            if ceiling < best_score or (ceiling == best_score and at > best_at):
                continue
            try:
                score = float(view.sniff(payload))
            except Exception:
                logger.warning("view %r failed to sniff; skipped", view.kind, exc_info=True)
                continue
            if score > best_score or (score == best_score and at < best_at):
                best, best_score, best_at = view, score, at
        return best


def sniff_ceiling(view: ResultViewBuilder) -> float:
    """The highest score `view.sniff` can return (1.0 unless the class defining it says less).

    Args:
        view: A view.

    Returns:
        The `sniff_ceiling` declared by the class that defines the view's `sniff`.

    Example:
        ```python
        from langchain_result_layer.views.logs import LogView

        class LouderLogs(LogView):
            def sniff(self, payload: object) -> float:
                return 0.99

        assert sniff_ceiling(LogView()) == 0.8 and sniff_ceiling(LouderLogs()) == 1.0
        ```
    """
    for klass in type(view).__mro__:
        if "sniff" in vars(klass):
            return float(vars(klass).get("sniff_ceiling", 1.0))
    return 1.0


_DEFAULT = ViewRegistry.builtin()
_DEFAULT_LOCK = threading.Lock()


def register_view(view: ResultViewBuilder, *, replace: bool = True) -> None:
    """Add a view to the process-wide default registry.

    The default registry is what layers created without `views=` choose from, so this
    affects every such layer in the process; prefer `ResultLayer(views=[...])` for one layer.

    Args:
        view: The view.
        replace: Replace an existing view of the same kind (default) or raise.

    Raises:
        ValueError: When the kind is taken and `replace` is false.

    Example:
        ```python
        from langchain_result_layer.views.text import TextView


        class NotesView(TextView):
            kind = "notes"

            def sniff(self, payload: object) -> float:
                return 0.0  # chosen only by tools that declare `ToolPolicy(kind="notes")`


        register_view(NotesView())
        assert get_view("notes") is not None
        ```
    """
    global _DEFAULT  # noqa: PLW0603 - the process-wide default, replaced whole (never mutated)
    with _DEFAULT_LOCK:
        if not replace and view.kind in _DEFAULT:
            msg = f"a view for kind {view.kind!r} is already registered"
            raise ValueError(msg)
        _DEFAULT = _DEFAULT.with_views(view)


def registered_views() -> ViewRegistry:
    """The process-wide default registry, as it is now.

    Returns:
        The registry (immutable: later `register_view` calls do not change it).

    Example:
        ```python
        assert set(BUILTIN_KINDS) <= set(registered_views())
        ```
    """
    return _DEFAULT


def get_view(kind: str) -> ResultViewBuilder | None:
    """The view of the process-wide default registry for `kind`, if any.

    Args:
        kind: A kind name.

    Returns:
        The view or `None`.

    Example:
        ```python
        assert get_view("text") is not None and get_view("nope") is None
        ```
    """
    return _DEFAULT.get(kind)
