"""The guard's cheap bounds of raw results never change a decision.

New large text is first bounded by its UTF-8 length (a tiktoken count never exceeds it, and
the approximate estimate is capped at it) and counted only when the bounds say the request
may pass the trigger. These tests hold that to account: the bound is a bound, for any text;
and a guard that bounds decides exactly what a guard that counts everything decides, on
conversations of raw results of every size around the trigger.
"""

from __future__ import annotations

import random
import warnings
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langchain_result_layer import ResultLayer
from langchain_result_layer.adapters._messages import RequestCounter
from langchain_result_layer.core.tokens import ApproximateTokenCounter, TiktokenCounter
from tests.integration.helpers import RNG, seeded_secrets

TIKTOKEN = TiktokenCounter()
APPROXIMATE = ApproximateTokenCounter()

texts = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)) | st.sampled_from(" \n\t"),
    min_size=2_000,
    max_size=6_000,
)


@settings(max_examples=60, deadline=None)
@given(texts)
def test_the_bound_is_never_below_the_count(text: str) -> None:
    for counter in (TIKTOKEN, APPROXIMATE):
        bound = RequestCounter(counter).upper_bound(text)
        assert bound is not None
        assert counter.count(text) <= bound


def test_lone_surrogates_are_bounded_too() -> None:
    text = "log line \ud800 with a lone surrogate\n" * 100
    for counter in (TIKTOKEN, APPROXIMATE):
        bound = RequestCounter(counter).upper_bound(text)
        assert bound is not None
        assert counter.count(text) <= bound


def test_a_counter_that_is_not_capped_gets_no_bound() -> None:
    class Doubling(ApproximateTokenCounter):
        def count(self, text: str) -> int:
            return 2 * len(text)

    assert RequestCounter(Doubling()).upper_bound("x" * 5_000) is None
    assert RequestCounter(TIKTOKEN).upper_bound("short") is None


@pytest.fixture(autouse=True, scope="module")
def seeded() -> Iterator[None]:
    with seeded_secrets():
        yield


def _conversation(sizes: list[int], seed: int) -> list[BaseMessage]:
    messages: list[BaseMessage] = [HumanMessage("Why did the build fail?", id="h")]
    for k, size in enumerate(sizes):
        lines = [f"{seed}-{k}-{i}: compiling module_{i % 97}.c ok" for i in range(size // 30)]
        call = {"name": "read_log", "args": {"job": k}, "id": f"c{k}"}
        messages.append(AIMessage(f"step {k}", tool_calls=[call], id=f"a{k}"))
        messages.append(
            ToolMessage("\n".join(lines), tool_call_id=f"c{k}", name="read_log", id=f"t{k}")
        )
    return messages


def _decisions(counter: object, messages: list[BaseMessage]) -> list[tuple[int, list[str]]]:
    RNG.set(random.Random(7))  # the same nonces and record ids for both guards
    layer = ResultLayer(context_window=16_000, store="memory", token_counter=counter)
    state = list(messages[:1])
    decided = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k in range(1, len(messages), 2):
            state += messages[k : k + 2]
            result = layer.budget_guard.guard(state)
            by_id = {m.id: m for m in result.replacements}
            state = [by_id.get(m.id, m) for m in state]
            decided.append((result.tokens_after if result.changed else -1, result.cleared))
    return decided


@settings(max_examples=12, deadline=None)
@given(
    st.lists(st.integers(min_value=200, max_value=9_000), min_size=3, max_size=14),
    st.integers(0, 99),
)
def test_bounding_guard_decides_like_a_counting_guard(sizes: list[int], seed: int) -> None:
    messages = _conversation(sizes, seed)
    # A plain `str -> int` callable gets no bound: that guard counts every message exactly.
    for counter in (TIKTOKEN, APPROXIMATE):
        assert _decisions(counter, messages) == _decisions(counter.count, messages)


def test_calls_under_the_trigger_by_their_bounds_count_nothing_exactly() -> None:
    layer = ResultLayer(context_window=128_000, store="memory", token_counter="tiktoken")
    messages = _conversation([8_000] * 5, seed=1)
    result = layer.budget_guard.guard(messages)
    assert not result.changed
    assert layer.request_counter.exact_counts == 0  # 40 kB of raw results, bounded only
    exact = layer.request_counter.count(messages)  # counts them now
    assert result.tokens_before >= exact  # what the guard decided on was an upper bound
    assert result.tokens_before == result.tokens_after == exact  # the figures are exact


def test_a_bounded_run_counts_its_figures_exactly_when_they_are_read() -> None:
    layer = ResultLayer(context_window=128_000, store="memory", token_counter="tiktoken")
    messages = _conversation([8_000] * 5, seed=2)
    result = layer.budget_guard.guard(messages)
    counter = layer.request_counter
    assert not result.changed
    assert counter.exact_counts == 0  # deciding needed no exact count
    before = result.tokens_before  # reading the figure counts exactly, once
    assert counter.exact_counts == 5  # the five bounded results
    fresh = RequestCounter(TIKTOKEN, signer=layer.signer)  # counts everything, exactly
    assert before == result.tokens_after
    assert before == result.overhead + sum(fresh.message_tokens(m) for m in messages)
    assert counter.exact_counts == 5  # read again: nothing counted again
