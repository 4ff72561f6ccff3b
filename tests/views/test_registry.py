"""View registries: one table of built-in kinds, immutable registries, the process-wide default."""

from __future__ import annotations

import logging
import threading

import pytest

from langchain_result_layer.core.reference import PLAIN_KIND, known_kinds
from langchain_result_layer.core.view import ResultView
from langchain_result_layer.views import (
    BUILTIN_KINDS,
    BUILTIN_VIEWS,
    Prepared,
    Rendered,
    ResultViewBuilder,
    TextView,
    ViewContext,
    ViewRegistry,
    choose_view,
    get_view,
    register_view,
    registered_views,
)

TABLE = "id,name\n" + "".join(f"{i},n{i}\n" for i in range(100))


class _Scored(ResultViewBuilder):
    """A view that sniffs every string at a fixed score."""

    def __init__(self, kind: str, score: float) -> None:
        self.kind = kind  # type: ignore[misc]  # one instance per kind, for these tests
        self.score = score

    def sniff(self, payload: object) -> float:
        return self.score if isinstance(payload, str) else 0.0

    def prepare(self, payload: object) -> Prepared:
        return Prepared(raw=str(payload))

    def render(self, prepared: Prepared, ctx: ViewContext) -> Rendered:
        return Rendered(content=str(prepared.raw)[: ctx.budget.chars], view=ResultView())


class _Exploding(_Scored):
    def sniff(self, payload: object) -> float:
        raise RuntimeError("boom")


def test_the_builtin_table_is_the_one_source_of_builtin_kinds() -> None:
    assert tuple(view.kind for view in BUILTIN_VIEWS) == BUILTIN_KINDS
    assert len(set(BUILTIN_KINDS)) == len(BUILTIN_KINDS)
    builtin = ViewRegistry.builtin()
    assert tuple(builtin) == BUILTIN_KINDS
    assert [type(builtin[kind]) for kind in BUILTIN_KINDS] == list(BUILTIN_VIEWS)
    assert set(BUILTIN_KINDS) <= set(registered_views())
    # The one kind name written outside the views package names the plain text view, and
    # every built-in kind is one that references may name.
    assert TextView.kind == PLAIN_KIND
    assert PLAIN_KIND in BUILTIN_KINDS
    assert set(BUILTIN_KINDS) <= set(known_kinds())


def test_a_registry_is_an_immutable_mapping() -> None:
    builtin = ViewRegistry.builtin()
    more = builtin.with_views(_Scored("upper", 0.9))
    assert "upper" in more
    assert "upper" not in builtin
    assert len(more) == len(builtin) + 1
    assert "rows" not in more.without("rows", "no-such-kind")
    assert "rows" in more
    assert repr(ViewRegistry().with_views(TextView())) == "ViewRegistry(text)"


def test_added_views_are_asked_first_and_win_ties() -> None:
    first, second = _Scored("first", 0.95), _Scored("second", 0.95)
    views = ViewRegistry.builtin().with_views(first, second)
    assert views.choose("anything") is first  # before second, and before every built-in
    assert views.with_views(_Scored("third", 0.99)).choose("x").kind == "third"  # a higher score


def test_a_replacement_keeps_the_slot_of_the_kind_it_replaces() -> None:
    mine = TextView()
    views = ViewRegistry.builtin().with_views(mine)
    assert tuple(views) == BUILTIN_KINDS
    assert views.choose("plain words " * 50) is mine
    assert views.choose(TABLE).kind == "rows"  # the other built-ins are unchanged


def test_declared_kinds_and_the_fallback() -> None:
    views = ViewRegistry.builtin()
    assert views.choose(TABLE, kind="text") is views["text"]
    with pytest.raises(ValueError, match=r"no view registered for kind 'nope'.*'rows'"):
        views.choose("x", kind="nope")
    without_text = views.without("text")
    assert isinstance(without_text.choose("plain words"), TextView)  # always a text fallback
    assert without_text.choose(TABLE).kind == "rows"


def test_a_view_whose_sniff_raises_is_logged_and_skipped(caplog: pytest.LogCaptureFixture) -> None:
    views = ViewRegistry.builtin().with_views(_Exploding("broken", 1.0))
    with caplog.at_level(logging.WARNING, logger="langchain_result_layer.views.registry"):
        assert views.choose(TABLE).kind == "rows"
    assert "'broken' failed to sniff" in caplog.text


def test_a_layer_registry_leaves_the_default_alone() -> None:
    before = registered_views()
    views = registered_views().with_views(_Scored("upper", 0.99))
    assert choose_view("hello", views=views).kind == "upper"
    assert choose_view("hello").kind == "text"
    assert registered_views() is before


@pytest.mark.usefixtures("default_views")
def test_register_view_changes_the_default_from_many_threads() -> None:
    before = registered_views()
    kinds = [f"user_{i}" for i in range(32)]
    barrier = threading.Barrier(8)

    def register(chunk: list[str]) -> None:
        barrier.wait()
        for kind in chunk:
            register_view(_Scored(kind, 0.0))

    threads = [threading.Thread(target=register, args=(kinds[i::8],)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert set(kinds) <= set(registered_views())  # no registration lost
    assert not set(kinds) & set(before)  # the earlier snapshot did not change
    assert get_view("user_0") is registered_views()["user_0"]
    with pytest.raises(ValueError, match="already registered"):
        register_view(_Scored("user_0", 0.0), replace=False)
