"""Invariants of the text engine (issue 2), for any input, budget and counter.

For any text (random Unicode with lone surrogates, CRLF, NUL bytes, ANSI and carriage-return
progress noise, only newlines, one very long line, empty): the view fits the budget under the
counter; every kept segment is an exact slice of the raw text shown through
`clean_for_display`; the head starts at 0 and the tail ends at the end; the omitted ranges
are exactly the complement; every number the header, markers and notice state is exact
(parsed back from the text); no exception escapes.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langchain_result_layer.core.budget import Budget
from langchain_result_layer.core.normalize import clean_for_display, safe_cut
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.render import NoticeFacts
from langchain_result_layer.core.tokens import ApproximateTokenCounter, TiktokenCounter
from langchain_result_layer.core.truncate import TruncationProfile, truncate_text
from tests.property._invariants import check_truncation
from tests.property.strategies import budgets, random_text, tool_text

EXACT = TiktokenCounter()
APPROX = ApproximateTokenCounter()
counters = st.sampled_from([EXACT, APPROX])
references = st.one_of(st.none(), st.just(Reference(record_id="AbCdEfGhIjKlMnOpQrStUv")))
SETTINGS = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@SETTINGS
@given(
    raw=tool_text,
    budget=budgets,
    counter=counters,
    reference=references,
    profile=st.builds(
        TruncationProfile, head_fraction=st.floats(0, 1), error_evidence=st.booleans()
    ),
    is_error=st.booleans(),
    head_fraction=st.one_of(st.none(), st.floats(0, 1)),
)
def test_every_view_is_exact_and_fits(
    raw: str,
    budget: Budget,
    counter: TiktokenCounter | ApproximateTokenCounter,
    reference: Reference | None,
    profile: TruncationProfile,
    is_error: bool,
    head_fraction: float | None,
) -> None:
    cut = truncate_text(
        raw,
        budget=budget,
        counter=counter,
        profile=profile,
        head_fraction=head_fraction,
        facts=NoticeFacts(tool_name="tool", is_error=is_error, reference=reference),
    )
    check_truncation(raw, cut, budget=budget, counter=counter, reference=reference)


@settings(max_examples=6, deadline=None)
@given(budget=budgets, counter=counters, unit=st.sampled_from(["a", "ab c", "é", "\U0001f600"]))
def test_a_single_10_mb_line(
    budget: Budget, counter: TiktokenCounter | ApproximateTokenCounter, unit: str
) -> None:
    raw = unit * (10_000_000 // len(unit))
    cut = truncate_text(raw, budget=budget, counter=counter)
    check_truncation(raw, cut, budget=budget, counter=counter)


@settings(max_examples=200, deadline=None)
@given(text=st.one_of(random_text, tool_text))
def test_cleaning_keeps_every_line_and_works_line_by_line(text: str) -> None:
    shown = clean_for_display(text)
    assert shown.count("\n") == text.count("\n")
    assert len(shown) <= len(text)
    assert clean_for_display(shown) == shown
    assert not any("\ud800" <= ch <= "\udfff" for ch in shown)
    # Line-local: cleaning a prefix that ends a line and the rest gives the same text.
    cut = text.find("\n") + 1
    if cut:
        assert clean_for_display(text[:cut]) + clean_for_display(text[cut:]) == shown


@settings(max_examples=300, deadline=None)
@given(text=random_text, pos=st.integers(0, 400), backward=st.booleans())
def test_safe_cut_never_splits_a_pair(text: str, pos: int, backward: bool) -> None:
    cut = safe_cut(text, pos, backward=backward)
    assert 0 <= cut <= len(text)
    if 0 < cut < len(text):
        assert not (text[cut - 1] == "\r" and text[cut] == "\n")
        assert not ("\ud800" <= text[cut - 1] <= "\udbff" and "\udc00" <= text[cut] <= "\udfff")
