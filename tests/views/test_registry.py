"""View registries: one table of built-in kinds, immutable registries, the process-wide default."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
from langchain_result_layer.views.logs import LogView
from langchain_result_layer.views.registry import FALLBACK_KIND, SNIFF_THRESHOLD, sniff_ceiling

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


def _ceilinged(kind: str, score: float, ceiling: float) -> ResultViewBuilder:
    """A `_Scored` view whose class declares `ceiling` for its own `sniff`."""
    klass = type(f"Ceiling_{kind}", (_Scored,), {"sniff": _Scored.sniff, "sniff_ceiling": ceiling})
    view: ResultViewBuilder = klass(kind, score)
    return view


def _naive_choice(registry: ViewRegistry, payload: object) -> str:
    """The rule `choose` implements: every view asked in order, the first best above 0.5 wins."""
    best, best_score = FALLBACK_KIND, SNIFF_THRESHOLD
    for view in registry._order:
        score = view.sniff(payload)
        if score > best_score:
            best, best_score = view.kind, score
    return best


@settings(max_examples=300, deadline=None)
@given(
    scored=st.lists(
        st.tuples(
            st.sampled_from([0.0, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 1.0]),
            st.sampled_from([0.0, 0.1, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 1.0]),
        ),
        max_size=8,
    ),
    builtins=st.booleans(),
)
def test_views_are_chosen_as_if_every_view_were_asked_in_order(
    scored: list[tuple[float, float]], builtins: bool
) -> None:
    """Skipping views by their ceiling picks what asking every view in order would."""
    views = [
        _ceilinged(f"v{i}", min(score, ceiling), ceiling)
        for i, (score, ceiling) in enumerate(scored)
    ]
    registry = (ViewRegistry.builtin() if builtins else ViewRegistry()).with_views(*views)
    for payload in ("ok\n" * 20 + "error: disk full\nexit code 2\n", TABLE, "x", b"\x00"):
        assert registry.choose(payload).kind == _naive_choice(registry, payload)


def test_a_view_that_cannot_beat_the_best_is_not_asked() -> None:
    """A view whose ceiling is below the best score so far is not asked; one that may tie is."""
    asked: list[str] = []

    class Counted(_Scored):
        sniff_ceiling = 0.6

        def sniff(self, payload: object) -> float:
            asked.append(self.kind)
            return 0.6

    sure = _ceilinged("sure", 0.9, 0.9)
    assert ViewRegistry([Counted("low", 0.6), sure]).choose("x").kind == "sure"
    assert asked == []
    assert (
        ViewRegistry([Counted("low", 0.6), _ceilinged("tie", 0.6, 0.9)]).choose("x").kind == "low"
    )
    assert asked == ["low"]  # it ties the best and comes first: asked, and chosen


def _read(path: Path) -> str:
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        return fh.read()


def test_builtin_views_stay_under_their_sniff_ceilings_on_the_corpus(corpus: Path) -> None:
    """Every built-in view's declared ceiling holds on every corpus result (and the choice too)."""
    registry = ViewRegistry.builtin()
    with open(corpus / "cases.jsonl", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    payloads: list[object] = [_read(corpus / row["path"]) for row in rows]
    payloads += [b"\x89PNG\r\n\x1a\n", [{"id": 1}, {"id": 2}], {"a": 1}, [], "", "x"]
    payloads += [[{"type": "text", "text": "hi"}], '{"a": 1}', "[1, 2]", TABLE]
    for payload in payloads:
        for view in registry.values():
            assert view.sniff(payload) <= sniff_ceiling(view), view.kind
        assert registry.choose(payload).kind == _naive_choice(registry, payload)


def test_a_subclass_that_sniffs_anew_is_always_asked() -> None:
    """A ceiling is the promise of the class that wrote `sniff`, not of its subclasses."""

    class LouderLogs(LogView):
        def sniff(self, payload: object) -> float:
            return 0.99

    assert sniff_ceiling(LogView()) == 0.8
    assert sniff_ceiling(LouderLogs()) == 1.0
    assert ViewRegistry.builtin().with_views(LouderLogs()).choose("x\n" * 50).kind == "log"
