"""A layer's own views (`ResultLayer(views=...)`): they serve that layer only."""

from __future__ import annotations

import pytest
from langchain_core.messages import ToolMessage

from langchain_result_layer import ResultLayer
from langchain_result_layer.config import ToolPolicy
from langchain_result_layer.core.view import ResultView
from langchain_result_layer.pipeline import META_KEY
from langchain_result_layer.views.base import Prepared, Rendered, ViewContext
from langchain_result_layer.views.registry import ViewRegistry, registered_views
from langchain_result_layer.views.text import TextView

SHOUTS = "SHOUT " + "loud line\n" * 20_000


class ShoutView(TextView):
    kind = "shout"

    def sniff(self, payload: object) -> float:
        return 0.9 if isinstance(payload, str) and payload.startswith("SHOUT") else 0.0

    def render(self, prepared: Prepared, ctx: ViewContext) -> Rendered:
        text = "SHOUTING, " + str(prepared.raw)[:200]
        return Rendered(content=text, view=ResultView(kind=self.kind, truncated=True))

    def render_slice(self, data: str | bytes, **kwargs: object) -> Rendered:
        text = "SHOUTED PAGE: " + str(data)[:200]
        return Rendered(content=text, view=ResultView(kind=self.kind))


def _kind(layer: ResultLayer, content: str) -> str:
    out = layer.process_tool_message(
        ToolMessage(content=content, tool_call_id="c1", name="shell", id="m1")
    )
    return str(out.response_metadata[META_KEY]["kind"])


def test_a_layer_with_its_own_views_uses_them_and_the_default_is_untouched() -> None:
    own = ResultLayer(context_window=20_000, store="memory", views=[ShoutView()])
    plain = ResultLayer(context_window=20_000, store="memory")
    assert _kind(own, SHOUTS) == "shout"
    assert _kind(plain, SHOUTS) == "text"
    assert "shout" not in registered_views()
    assert _kind(own, "x\n" * 50_000) == "text"  # the built-in views are still there


def test_a_registry_is_used_as_it_is_and_its_kinds_are_the_known_kinds() -> None:
    views = ViewRegistry.builtin().without("rows").with_views(ShoutView())
    layer = ResultLayer(
        context_window=20_000,
        store="memory",
        views=views,
        tool_policies={"shell": ToolPolicy(kind="shout")},
    )
    assert layer.pipeline.views is views
    assert _kind(layer, "a,b,c\n" + "1,2,3\n" * 20_000) == "shout"  # declared kind wins


def test_a_kind_only_another_layer_has_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown view kind 'shout'"):
        ResultLayer(context_window=20_000, tool_policies={"x": ToolPolicy(kind="shout")})


def test_the_fetch_tool_pages_with_the_layers_own_view() -> None:
    layer = ResultLayer(context_window=20_000, store="memory", views=[ShoutView()])
    out = layer.process_tool_message(
        ToolMessage(content=SHOUTS, tool_call_id="c1", name="shell", id="m1")
    )
    ref = out.response_metadata[META_KEY]["ref"]
    assert ref is not None
    assert "/shout" in ref
    page = layer.fetch_tool.invoke({"ref": ref, "page": 2})
    assert "SHOUTED PAGE: loud line" in str(page)  # the layer's view renders the page


def test_layers_with_different_views_share_threads_and_an_event_loop() -> None:
    """Two layers, one with its own view, used at once from threads and coroutines."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    own = ResultLayer(context_window=20_000, store="memory", views=[ShoutView()])
    plain = ResultLayer(context_window=20_000, store="memory")

    def both(i: int) -> tuple[str, str]:
        content = SHOUTS + f"call {i}\n"
        return _kind(own, content), _kind(plain, content)

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert set(pool.map(both, range(32))) == {("shout", "text")}

    async def abatch() -> list[str]:
        async def one(layer: ResultLayer, i: int) -> str:
            out = await layer.aprocess_tool_message(
                ToolMessage(content=SHOUTS + f"a{i}\n", tool_call_id=f"c{i}", name="shell")
            )
            return str(out.response_metadata[META_KEY]["kind"])

        return await asyncio.gather(*(one(own if i % 2 else plain, i) for i in range(16)))

    kinds = asyncio.run(abatch())
    assert kinds == ["text" if i % 2 == 0 else "shout" for i in range(16)]
