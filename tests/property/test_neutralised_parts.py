"""`NeutralisedParts`: a fit's renders neutralised part by part equal `Fence.neutralise`."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.core.render import Fence
from langchain_result_layer.views._layout import Layout, NeutralisedParts, Section

_NONCES = ("abcdefgh", "ihw2sy5r", "zzzzzzzz")
_WORDS = st.sampled_from(
    [
        *("\n", " ", "\t", "x", "İ", "Σ", "[", "]", ":", "ok", "INFO "),
        *("<<<", ">>>", "<<< end tool-output", "<<<tool-output", "tool-output", "End "),
        *("result layer", "Result_Layer", "layer", "REF://tool-result/", "ref://"),
        *("[tool result", "[Omitted", "[store note", "  [omitted", "[model-written"),
        *("[abcdefgh: lines 1-2]", "[ihw2sy5r: x]", "[zzzzzzzz: ", "abcdefgh", "ihw2sy5r"),
    ]
)
_PART = st.lists(_WORDS, max_size=8).map("".join)
# One fit: several renders of bodies drawn from a small pool of parts, under a few fences.
_RENDERS = st.lists(
    st.tuples(st.sampled_from(_NONCES), st.lists(st.integers(0, 11), max_size=25)),
    min_size=1,
    max_size=6,
)


@settings(max_examples=600, deadline=None)
@given(pool=st.lists(_PART, min_size=12, max_size=12), renders=_RENDERS)
def test_parts_neutralised_once_equal_the_whole_body_neutralised(
    pool: list[str], renders: list[tuple[str, list[int]]]
) -> None:
    memo = NeutralisedParts()
    for nonce, picks in renders:
        fence = Fence(nonce=nonce)
        parts = [pool[i] for i in picks]
        assert "\n".join(memo.neutralised(parts, fence)) == fence.neutralise("\n".join(parts))


@settings(max_examples=300, deadline=None)
@given(
    pool=st.lists(_PART, min_size=12, max_size=12),
    renders=_RENDERS,
    header=st.sampled_from(["", "[Tool result `x`: 3 lines.]"]),
)
def test_a_layout_renders_the_same_text_with_the_memo(
    pool: list[str], renders: list[tuple[str, list[int]]], header: str
) -> None:
    memo = NeutralisedParts()
    for nonce, picks in renders:
        fence = Fence(nonce=nonce)
        sections = [
            Section(title=f"lines {i}-{i + 2}", lines=[pool[j] for j in picks[i::3]])
            for i in range(3)
        ]
        layout = Layout(header=header, sections=sections, footer="[Omitted: x.]")
        assert layout.render(fence, memo) == layout.render(fence)
