"""Invariants of the per-result layer on every content a `ToolMessage` can hold.

Through `ResultLayer.process_tool_message` and its async twin, with a real in-memory store:
no exception escapes; the content the model sees fits the tool's budget (block costs
included); `id`, `tool_call_id`, `name` and `status` are kept; content under budget passes
through as the same object; processing twice changes nothing; what was stored reads back
exactly.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from langchain_core.messages import ToolMessage

from langchain_result_layer import ResultLayer
from langchain_result_layer.core.budget import Budget
from langchain_result_layer.core.jsonable import to_json_text
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.render import Fence
from langchain_result_layer.core.tokens import ApproximateTokenCounter, TiktokenCounter
from langchain_result_layer.core.view import ResultView
from langchain_result_layer.stores.base import Principal
from langchain_result_layer.views.blocks import content_chars, content_tokens, is_media_block
from tests.fenced import fence_nonce, unfence
from tests.property.strategies import layer_budgets, message_content

SETTINGS = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
counters = st.sampled_from([TiktokenCounter(), ApproximateTokenCounter()])


def _layer(budget: Budget, counter: Any, *, fence: bool = True) -> ResultLayer:
    return ResultLayer(
        context_window=100_000,
        max_result_tokens=budget.tokens,
        max_result_chars=budget.chars,
        token_counter=counter,
        store="memory",
        fence_results=fence,
    )


def _check(layer: ResultLayer, msg: ToolMessage, out: ToolMessage, budget: Budget) -> None:
    assert out.id == msg.id
    assert out.tool_call_id == msg.tool_call_id
    assert out.name == msg.name
    assert out.status == msg.status
    counter = layer.token_counter
    image_tokens = layer.image_tokens
    tokens = content_tokens(out.content, counter, image_tokens=image_tokens)
    chars = content_chars(out.content)
    original_tokens = content_tokens(msg.content, counter, image_tokens=image_tokens)
    fits = original_tokens <= budget.tokens and content_chars(msg.content) <= budget.chars
    marker = out.response_metadata["result_layer"]
    if fits and not layer.fence_results:
        assert out.content is msg.content  # the opt-out: byte-identical, the very same object
    else:
        # Text keeps the cap; media kept under a cap below their fixed cost add that cost.
        media = (
            [b for b in out.content if is_media_block(b)] if isinstance(out.content, list) else []
        )
        assert tokens <= budget.tokens + len(media) * (image_tokens + 4), (tokens, budget)
        assert chars <= budget.chars, (chars, budget)
        view = ResultView.from_artifact(out.artifact)
        assert view is not None
        assert view.shown_tokens == tokens
    if layer.fence_results:
        assert marker["fenced"] is True
        if marker["passed_through"] and isinstance(msg.content, str):
            assert unfence(str(out.content)) == Fence(nonce=fence_nonce(out)).neutralise(
                msg.content
            ).removesuffix("\n")
    assert marker["processed"] is True
    event(f"{'passed through' if marker['passed_through'] else 'cut'}: {marker['kind']}")
    # The raw result is stored and reads back exactly.
    assert marker["record_id"] is not None
    assert layer.store is not None
    got = layer.store.read(marker["record_id"], principal=Principal())
    assert Reference.parse(marker["ref"]).record_id == marker["record_id"]
    if marker["capped"]:
        # Over the store's size cap: a bounded head and tail are kept, and the view says so.
        assert got.meta.capped
        assert "[Store note:" in str(out.content)
    elif isinstance(msg.content, str):
        assert got.data == msg.content
    elif marker["kind"] == "blocks":
        assert got.data == to_json_text(msg.content)
    elif marker["kind"] == "json":
        assert isinstance(got.data, str)
        assert json.loads(got.data) == json.loads(to_json_text(msg.content))
    else:  # a view stored its own exact form of an object (rows as JSON lines, ...)
        assert got.data


@SETTINGS
@given(
    content=message_content,
    budget=layer_budgets,
    counter=counters,
    status=st.sampled_from(["success", "error"]),
    fence=st.booleans(),
)
def test_process_tool_message(
    content: Any, budget: Budget, counter: Any, status: str, fence: bool
) -> None:
    layer = _layer(budget, counter, fence=fence)
    msg = ToolMessage(content=content, tool_call_id="call-1", name="tool", id="m1", status=status)
    out = layer.process_tool_message(msg)
    _check(layer, msg, out, budget)
    again = layer.process_tool_message(out)
    assert again is out  # processing twice changes nothing


@SETTINGS
@given(content=message_content, budget=layer_budgets, counter=counters, fence=st.booleans())
def test_aprocess_tool_message(content: Any, budget: Budget, counter: Any, fence: bool) -> None:
    layer = _layer(budget, counter, fence=fence)
    msg = ToolMessage(content=content, tool_call_id="call-2", name="tool", id="m2")

    async def run() -> tuple[ToolMessage, ToolMessage]:
        out = await layer.aprocess_tool_message(msg)
        return out, await layer.aprocess_tool_message(out)

    out, again = asyncio.run(run())
    _check(layer, msg, out, budget)
    assert again is out


@settings(max_examples=40, deadline=None)
@given(
    value=st.recursive(
        st.one_of(
            st.none(),
            st.booleans(),
            st.integers(),
            st.floats(),
            st.text(max_size=30),
            st.binary(max_size=30),
        ),
        lambda inner: st.one_of(
            st.lists(inner, max_size=6), st.dictionaries(st.text(max_size=8), inner, max_size=6)
        ),
        max_leaves=40,
    ),
    budget=layer_budgets,
    fence=st.booleans(),
)
def test_any_tool_return_value_is_processed(value: Any, budget: Budget, fence: bool) -> None:
    # What a wrapped tool may return before LangChain turns it into message content.
    layer = _layer(budget, ApproximateTokenCounter(), fence=fence)
    outcome = layer.pipeline.process(value, tool_name="tool")
    assert outcome is not None
    if outcome.passed_through and not fence:
        assert outcome.content is value
    else:
        counter = layer.token_counter
        assert content_tokens(outcome.content, counter, image_tokens=1_600) <= budget.tokens
        assert content_chars(outcome.content) <= budget.chars
