"""The guard's cheap bounds of raw results never change a decision.

New large text is first bounded (ASCII text under `o200k_base` or `cl100k_base` by the
pre-token bound of `core.token_bounds`, anything else by its UTF-8 length: a tiktoken count
never exceeds it, and the approximate estimate is capped at it) and counted only when the
bounds say the request may pass the trigger. These tests hold that to account: the bound is a
bound, for any text, including text built to defeat its argument (contractions that cut
letter runs, case humps, prefixes after punctuation, digit runs, every kind of blank); and a
guard that bounds decides exactly what a guard that counts everything decides, on
conversations of raw results of every size around the trigger.
"""

from __future__ import annotations

import random
import string
import warnings
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langchain_result_layer import ResultLayer
from langchain_result_layer.adapters._messages import RequestCounter
from langchain_result_layer.core._approx import WEIGHTS, estimate_tokens
from langchain_result_layer.core.token_bounds import (
    EstimateBound,
    PretokenBound,
    estimate_bound,
    pretoken_bound_for,
)
from langchain_result_layer.core.tokens import (
    ApproximateTokenCounter,
    TiktokenCounter,
    load_offline_encoding,
)
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


ENCODINGS = [
    name
    for name in ("o200k_base", "cl100k_base")
    if load_offline_encoding(name) is not None  # cl100k_base needs the `encodings` extra
]

# Pieces that probe each step of the argument: contractions that cut a letter run ("'stuff",
# "don'tcha"), case humps ("fooBar"), prefixes after letters, digits and newlines (".abc",
# "1.abc", "\n.abc") and after blanks (" .abc", "\t.abc"), punctuation runs ("..foo"),
# digit runs of every length, blanks the pattern treats apart (\r, \x0b, \x1c-\x1f), and
# the letters that are not in the bound's set (g, j, q, x, z).
_PIECES = [
    "it's",
    "'s",
    "'stuff",
    "don'tcha",
    "'re",
    "'LL",
    "'d",
    "a.b",
    " (x",
    "(x",
    "aB",
    "ABc",
    "fooBar",
    "HTTPServer",
    " the",
    " qjxz",
    "gjqxz",
    "\n.abc",
    "x:\n.abc",
    "1.abc",
    " .abc",
    "\t.abc",
    "..foo",
    "./a",
    "_a",
    "=a",
    " [worker-3]",
    "'",
    "''s",
    "  ",
    "   ",
    "\t",
    "\n",
    "\r\n",
    "\x0b",
    "\x0c",
    "\x1c",
    "\x1f",
    "\x00",
    "\x7f",
    "0",
    "12",
    "123",
    "1234",
    "1234567",
    "2024-05-01 10:00:00",
    " 42",
    "a1b2",
    "\u00e9t\u00e9",
    "\U0001f600",
]
ascii_letters = st.text(alphabet=string.ascii_letters + " '.-_(\n", max_size=400)
adversarial = st.lists(st.sampled_from(_PIECES) | st.text(max_size=3), max_size=120).map("".join)
printable = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=127), max_size=400)


@pytest.mark.parametrize("name", ENCODINGS)
@settings(max_examples=300, deadline=None)
@given(text=st.one_of(adversarial, ascii_letters, printable))
def test_the_pretoken_bound_is_never_below_the_count(name: str, text: str) -> None:
    encoding = load_offline_encoding(name)
    assert encoding is not None
    bound = pretoken_bound_for(encoding)
    assert bound is not None
    exact = len(encoding.encode_ordinary(text))
    upper = bound.upper(text)
    assert exact <= upper <= len(text.encode("utf-8", "surrogatepass"))


@pytest.mark.parametrize("name", ENCODINGS)
def test_the_pretoken_bound_is_tighter_than_the_length_on_real_logs(name: str) -> None:
    encoding = load_offline_encoding(name)
    assert encoding is not None
    bound = pretoken_bound_for(encoding)
    assert bound is not None
    log = "".join(
        f"2024-05-01 10:{i % 60:02d}:{i % 59:02d} INFO [worker-{i % 7}] compiling "
        f"module_{i}.c with flags -O2 -Wall: ok\n"
        for i in range(400)
    )
    exact = len(encoding.encode_ordinary(log))
    assert exact <= bound.upper(log) <= 0.85 * len(log)  # the length is about 2.5x the count


def test_no_pretoken_bound_for_other_patterns_or_vocabularies() -> None:
    class OtherPattern:
        _pat_str = r"\S+|\s+"

        def encode_single_token(self, text: bytes) -> int:
            return 0

    assert PretokenBound.for_encoding(OtherPattern()) is None
    encoding = load_offline_encoding("o200k_base")
    assert encoding is not None

    class NoDigits:
        _pat_str = encoding._pat_str

        def encode_single_token(self, text: bytes) -> int:
            if text.isdigit() and len(text) == 3:
                raise KeyError(text)  # three-digit numbers are not single tokens here
            return 0

    assert PretokenBound.for_encoding(NoDigits()) is None


def test_a_bound_built_from_checked_sets_counts_runs_digits_and_prefixes() -> None:
    bound = PretokenBound(letters="abc", prefixes=".")
    # ".abc" after a letter and " abc" are runs with their prefix: 11 bytes, 3 runs, so
    # (2 * 11 + 3) // 3 = 8; digits: "1234" is two pre-tokens.
    assert bound.upper("abc.abc abc") == 8
    assert bound.upper("1234") == 2
    assert bound.upper("x'abc") == 1 + 1 + (2 * 3 + 1) // 3 + 1  # x, ', run abc, apostrophe
    assert bound.upper("h\u00e9llo") == len("h\u00e9llo".encode())  # not ASCII: the length
    spaced = PretokenBound(letters="abc", prefixes=".", blanks=9, openers="(", closers=":")
    # Nine inner spaces of a ten-space run: 1 + 2 * 9 // 10 = 2, the last one alone: 1.
    assert spaced.upper("1" + " " * 10 + "1") == 1 + 2 + 1 + 1
    assert spaced.upper("1 (1:\n") == 1 + 1 + 1 + 1  # " (" and ":\n" are one token each


# Text that reaches each count the estimate weighs: consonant clusters, vowel runs, capitals
# after letters and after punctuation, letter runs of 16 and more, digit runs, punctuation
# runs and pairs, runs of blanks, line breaks, and the "\x1f" and non-ASCII slow path.
_ESTIMATE_PIECES = [
    "strngth",
    "bcdfghjklmnpqrstvwxz" * 2,
    "aeiou",
    "AEIOU",
    "queueing",
    "fooBar",
    "HTTPServer",
    "ABCDEFGHIJKLMNOP",
    "x" * 40,
    "Qq" * 9,
    "0",
    "000",
    "1234567",
    "..",
    "...",
    "-->",
    "'s",
    '"',
    " ",
    "  ",
    "\t\t",
    " \t ",
    "\n",
    "\r\n",
    "\n  ",
    "\n\n\n",
    "\x00",
    "\x0b",
    "\x7f",
    "\x1f",
    "\u00e9",
    "\u4e2d",
]
estimate_texts = st.lists(
    st.sampled_from(_ESTIMATE_PIECES) | st.text(alphabet=string.printable, max_size=4),
    max_size=150,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(text=st.one_of(estimate_texts, printable, ascii_letters))
def test_the_estimate_bound_is_never_below_the_estimate(text: str) -> None:
    bound = estimate_bound()
    assert bound is not None  # the package's estimate has only features it knows
    assert estimate_tokens(text) <= bound.upper(text)
    assert bound.upper(text) <= max(1, len(text.encode("utf-8", "surrogatepass"))) or not text


def test_the_estimate_bound_follows_the_weights_it_is_given() -> None:
    constant = EstimateBound({"const": 4.5})  # every count weighs 0: the constant, rounded up
    assert constant.upper("a long line of text") == 5 + 1  # one token over the ceiling
    assert constant.upper("ab") == 2  # never more than the bytes
    full = EstimateBound(WEIGHTS)
    log = "2024-05-01 10:00:00 INFO worker started the build step\n" * 40
    assert estimate_tokens(log) <= full.upper(log) < 0.7 * len(log)


def test_lone_surrogates_are_bounded_too() -> None:
    text = "log line \ud800 with a lone surrogate\n" * 100
    for counter in (TIKTOKEN, APPROXIMATE):
        bound = RequestCounter(counter).upper_bound(text)
        assert bound is not None
        assert counter.count(text) <= bound


def test_the_guard_bounds_ascii_text_with_the_pretoken_bound() -> None:
    log = "".join(f"2024-05-01 10:00:{i % 60:02d} INFO step {i}: ok\n" for i in range(200))
    exact = TIKTOKEN.count(log)
    bound = RequestCounter(TIKTOKEN).upper_bound(log)
    assert bound is not None
    assert exact <= bound < 0.85 * len(log)  # not the byte length
    # The approximate estimate gets its own bound; a tiktoken subclass that counts
    # differently gets none at all.
    approximate = RequestCounter(APPROXIMATE).upper_bound(log)
    assert approximate is not None
    assert APPROXIMATE.count(log) <= approximate < 0.7 * len(log)

    class Shifted(TiktokenCounter):
        def count(self, text: str) -> int:
            return super().count(text)

    assert RequestCounter(Shifted()).upper_bound(log) is None


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
