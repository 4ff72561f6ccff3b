"""Configuration edge cases a user will hit: windows, caps, stores, counters, policies, views."""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langgraph.store.memory import InMemoryStore

from langchain_result_layer import (
    Principal,
    PrincipalResolver,
    ResultLayer,
    ResultView,
    ToolPolicy,
    register_view,
)
from langchain_result_layer.core.tokens import TiktokenCounter
from langchain_result_layer.scripted import ScriptedChatModel
from langchain_result_layer.views import Prepared, Rendered, ResultViewBuilder, ViewContext
from tests.acceptance.conftest import calls_in, fenced_body, fetch

USER = {"configurable": {"user_id": "ada", "thread_id": "t1"}}


def process(
    layer: ResultLayer, content: Any, name: str = "tool", config: Any = USER
) -> ToolMessage:
    return layer.process_tool_message(
        ToolMessage(content=content, tool_call_id=f"c_{name}", name=name), config
    )


# --------------------------------------------------------------------------- window


def test_window_from_the_model_profile() -> None:
    model = ScriptedChatModel(script=[], max_input_tokens=8_000)
    assert ResultLayer(model=model).context_window == 8_000
    assert ResultLayer.from_model(model).result_budget.tokens == 2_400
    # An explicit window wins over the profile.
    assert ResultLayer(model=model, context_window=4_000).context_window == 4_000


def test_model_without_profile_needs_a_window() -> None:
    with pytest.raises(ValueError, match="context_window"):
        ResultLayer(model=ScriptedChatModel(script=[]))


@pytest.mark.parametrize("window", [0, -5])
def test_nonsense_windows_are_rejected(window: int) -> None:
    with pytest.raises(ValueError, match="context_window"):
        ResultLayer(context_window=window)


def test_tiny_windows_and_caps_are_rejected_clearly() -> None:
    with pytest.raises(ValueError, match="64 tokens"):
        ResultLayer(context_window=100)
    with pytest.raises(ValueError, match="64 tokens"):
        ResultLayer(context_window=16_000, max_result_tokens=10)
    with pytest.raises(ValueError, match="256"):
        ResultLayer(context_window=16_000, max_result_chars=10)


def test_smallest_useful_window_still_bounds_real_output(travis_log: str) -> None:
    layer = ResultLayer(context_window=1_000)  # 300-token results
    msg = process(layer, travis_log)
    assert layer.token_counter.count(msg.content) <= 300
    assert calls_in(msg)
    assert fetch(layer, USER, ref=calls_in(msg)[0]).status == "success"


def test_result_cap_larger_than_the_window_is_refused_or_clamped(travis_log: str) -> None:
    try:
        layer = ResultLayer(
            context_window=16_000, tool_policies={"t": ToolPolicy(max_tokens=100_000)}
        )
    except ValueError:
        return
    msg = process(layer, travis_log, name="t")
    assert layer.token_counter.count(msg.content) <= layer.context_window


def test_max_result_chars_caps_the_view(travis_log: str) -> None:
    layer = ResultLayer(context_window=128_000, max_result_chars=2_000)
    msg = process(layer, travis_log)
    assert len(msg.content) <= 2_000


# --------------------------------------------------------------------------- stores


def test_relative_sqlite_store_survives_a_new_layer(
    travis_log: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    first = ResultLayer(context_window=16_000, max_result_tokens=800, store="sqlite:///relative.db")
    msg = process(first, travis_log)
    assert (tmp_path / "relative.db").exists()
    second = ResultLayer(
        context_window=16_000, max_result_tokens=800, store="sqlite:///relative.db"
    )
    out = fetch(second, USER, ref=calls_in(msg)[0])
    assert out.status == "success", out.content[:300]


def test_unwritable_sqlite_store_degrades_honestly(travis_log: str, tmp_path: Path) -> None:
    layer = ResultLayer(
        context_window=16_000,
        max_result_tokens=800,
        store=f"sqlite:///{tmp_path / 'missing-dir' / 'results.db'}",
    )
    msg = process(layer, travis_log)
    assert layer.token_counter.count(msg.content) <= 800
    assert "could not be saved" in msg.content
    assert not calls_in(msg)


def test_langgraph_base_store(travis_log: str) -> None:
    layer = ResultLayer(context_window=16_000, max_result_tokens=800, store=InMemoryStore())
    msg = process(layer, travis_log)
    assert fetch(layer, USER, ref=calls_in(msg)[0]).status == "success"
    assert (
        fetch(layer, {"configurable": {"user_id": "eve"}}, ref=calls_in(msg)[0]).status == "error"
    )


@pytest.mark.skipif(not os.environ.get("LRL_POSTGRES_URL"), reason="LRL_POSTGRES_URL is not set")
def test_postgresql_store_shared_by_two_workers(travis_log: str) -> None:
    url = os.environ["LRL_POSTGRES_URL"]
    worker1 = ResultLayer(context_window=16_000, max_result_tokens=800, store=url)
    worker2 = ResultLayer(context_window=16_000, max_result_tokens=800, store=url)
    msg = process(worker1, travis_log)
    ref = calls_in(msg)[0]
    assert fetch(worker2, USER, ref=ref).status == "success"
    assert (
        fetch(worker2, {"configurable": {"user_id": "eve", "thread_id": "t1"}}, ref=ref).status
        == "error"
    )


@pytest.mark.parametrize("bad", [True, "Memory", 42])
def test_bad_store_arguments_fail_at_construction(bad: Any) -> None:
    with pytest.raises(Exception):  # noqa: B017 - any clear construction error
        ResultLayer(context_window=16_000, store=bad)


def test_nonpositive_ttl_is_rejected_at_construction() -> None:
    with pytest.raises(ValueError, match="ttl"):
        ResultLayer(context_window=16_000, ttl_seconds=0)


# --------------------------------------------------------------------------- principals


def test_principal_keys_and_callbacks(travis_log: str) -> None:
    layer = ResultLayer(
        context_window=16_000,
        max_result_tokens=800,
        principal=PrincipalResolver(user_key="account_id"),
    )
    msg = process(layer, travis_log, config={"configurable": {"account_id": "acc-1"}})
    ref = calls_in(msg)[0]
    assert fetch(layer, {"configurable": {"account_id": "acc-1"}}, ref=ref).status == "success"
    assert fetch(layer, {"configurable": {"account_id": "acc-2"}}, ref=ref).status == "error"

    def by_org(config: Any) -> Principal:
        return Principal(tenant=(config.get("metadata") or {}).get("org"))

    layer = ResultLayer(context_window=16_000, max_result_tokens=800, principal=by_org)
    msg = process(layer, travis_log, config={"metadata": {"org": "o1"}})
    ref = calls_in(msg)[0]
    assert fetch(layer, {"metadata": {"org": "o1"}}, ref=ref).status == "success"
    assert fetch(layer, {"metadata": {"org": "o2"}}, ref=ref).status == "error"


# --------------------------------------------------------------------------- counters


def _samples(travis_log: str) -> dict[str, str]:
    return {
        "log": travis_log,
        "cjk": ("错误：数据库连接失败，请检查配置文件中的主机名和端口。" * 10 + "\n") * 300,
        "json": "[" + ",".join(f'{{"k": {i}, "v": "{"z" * 30}"}}' for i in range(20_000)) + "]",
        "base64": __import__("base64").b64encode(bytes(range(256)) * 800).decode(),
        "emoji": ("🚀🔥✅❌ deploy " * 50 + "\n") * 200,
    }


def test_approximate_counter_never_undercounts_the_real_tokenizer(travis_log: str) -> None:
    exact = TiktokenCounter()
    layer = ResultLayer(context_window=100_000, max_result_tokens=600, token_counter="approximate")
    for name, raw in _samples(travis_log).items():
        msg = process(layer, raw, name=name)
        assert layer.token_counter.count(msg.content) <= 600, name
        assert exact.count(msg.content) <= 600, name


class WordCounter:
    """A user's own counter (the `TokenCounter` protocol: name, exact, count)."""

    name = "words"
    exact = False

    def count(self, text: str) -> int:
        return len(text.split()) + text.count("\n")


@pytest.mark.parametrize(
    "counter",
    [WordCounter(), lambda text: len(text) // 3 + 1, "cl100k_base"],
    ids=["protocol", "callable", "encoding"],
)
def test_custom_counters_bound_the_view(travis_log: str, counter: Any) -> None:
    layer = ResultLayer(context_window=16_000, max_result_tokens=500, token_counter=counter)
    msg = process(layer, travis_log)
    assert layer.token_counter.count(msg.content) <= 500


def test_chat_model_counter_without_tokenizer(travis_log: str) -> None:
    model = ScriptedChatModel(script=[], max_input_tokens=16_000)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            layer = ResultLayer(model=model, token_counter=model, max_result_tokens=500)
    except (ValueError, TypeError):
        return  # a clear construction error is acceptable
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        msg = process(layer, travis_log)
    assert layer.token_counter.count(msg.content) <= 500


# --------------------------------------------------------------------------- policies


def test_wildcard_policy_and_specific_override(travis_log: str) -> None:
    layer = ResultLayer(
        context_window=16_000,
        tool_policies={"*": ToolPolicy(max_tokens=300), "big": {"max_tokens": 1_200}},
    )
    assert layer.token_counter.count(process(layer, travis_log, name="any").content) <= 300
    big = layer.token_counter.count(process(layer, travis_log, name="big").content)
    assert 300 < big <= 1_200


def test_disabled_policy_passes_the_result_through(travis_log: str) -> None:
    layer = ResultLayer(context_window=16_000, tool_policies={"raw": ToolPolicy(enabled=False)})
    assert process(layer, travis_log, name="raw").content == travis_log


def test_unknown_policy_kind_is_rejected_at_construction() -> None:
    with pytest.raises(ValueError, match="kind"):
        ResultLayer(context_window=16_000, tool_policies={"read_log": ToolPolicy(kind="logs")})


def test_policy_validation() -> None:
    with pytest.raises(ValueError):
        ToolPolicy(head_fraction=1.5)
    with pytest.raises(ValueError):
        ToolPolicy(max_tokens=0)
    with pytest.raises(TypeError):
        ResultLayer(context_window=16_000, tool_policies={"t": {"max_token": 5}})


# --------------------------------------------------------------------------- user views


class UpperView(ResultViewBuilder):
    """The docstring's example view: shows the result upper-cased."""

    kind = "shout"

    def sniff(self, payload: object) -> float:
        return 0.99 if isinstance(payload, str) and payload.startswith("SHOUT:") else 0.0

    def prepare(self, payload: object) -> Prepared:
        return Prepared(raw=str(payload))

    def render(self, prepared: Prepared, ctx: ViewContext) -> Rendered:
        text = str(prepared.raw).upper()
        while ctx.counter.count(text) > ctx.budget.tokens // 2:
            text = text[: len(text) // 2]
        return Rendered(content=text, view=ResultView(kind=self.kind))


class GreedyView(UpperView):
    """A user view that ignores its budget."""

    kind = "greedy"

    def sniff(self, payload: object) -> float:
        return 0.99 if isinstance(payload, str) and payload.startswith("GREEDY:") else 0.0

    def render(self, prepared: Prepared, ctx: ViewContext) -> Rendered:
        return Rendered(content=str(prepared.raw), view=ResultView(kind=self.kind))


@pytest.fixture
def user_views(default_views: None) -> None:
    register_view(UpperView())
    register_view(GreedyView())


@pytest.mark.usefixtures("user_views")
def test_registered_view_is_sniffed_and_declared() -> None:
    raw = "SHOUT:" + "\n".join(f"row {i} value" for i in range(5_000))
    layer = ResultLayer(
        context_window=16_000,
        max_result_tokens=400,
        tool_policies={"loud": ToolPolicy(kind="shout")},
    )
    msg = process(layer, raw)
    assert msg.content.startswith("SHOUT:ROW 0 VALUE")
    assert layer.token_counter.count(msg.content) <= 400
    declared = process(layer, "row 1\n" * 20_000, name="loud")
    assert declared.content.startswith("ROW 1")


@pytest.mark.usefixtures("user_views")
def test_a_user_view_that_overshoots_is_still_bounded() -> None:
    raw = "GREEDY:" + "\n".join(f"row {i} value" for i in range(5_000))
    layer = ResultLayer(context_window=16_000, max_result_tokens=400)
    msg = process(layer, raw)
    assert layer.token_counter.count(msg.content) <= 400
    view = ResultLayer.view_of(msg)
    assert view is not None
    out = fetch(layer, USER, ref=view.references["all"])
    assert out.status == "success"
    assert fenced_body(out.content).startswith("GREEDY:row 0 value")
