"""The shape patterns' matches cannot overlap, so a search's start does not change them.

`_candidate_lines` searches the shapes once over a whole region and not again over its
tail (the tail's every-signal search asks for the line-start patterns only); that is exact
because every match a search from a later offset finds, the search from the start finds.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.core.evidence import ALL_SIGNALS, CORE_SIGNALS

_TEXTS = st.lists(
    st.sampled_from([":", "1", "22", "1234567890", " ", "\n", "a", ": ", ":1:2: ", "x.c"]),
    max_size=30,
).map("".join)


@settings(max_examples=600, deadline=None)
@given(text=_TEXTS, data=st.data())
def test_a_later_start_finds_no_other_shape(text: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(text)))
    for pattern in CORE_SIGNALS.shapes:
        whole = {m.start() for m in pattern.finditer(text)}
        later = {m.start() for m in pattern.finditer(text, start)}
        assert later == {p for p in whole if p >= start}


def test_the_tail_search_shares_the_core_shapes() -> None:
    assert ALL_SIGNALS.shapes == CORE_SIGNALS.shapes
    text = "a.c:1:2: x\nb\n"
    assert ALL_SIGNALS.pattern_positions(text, 0, len(text), shapes=False) == set()
    assert ALL_SIGNALS.pattern_positions(text) == {3}
