"""`Fence.neutralise` finds the lines to neutralise in one search: same as line by line."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.core.render import IMITATION_NOTE, Fence, imitates_layer_markup

_FENCE = Fence(nonce="abcdefgh")
_WORDS = st.sampled_from(
    [
        *("\n", "\n", " ", "\t", "x", "İ", "Σ", "[", "]", ":", "ok", "INFO "),
        *("<<<", ">>>", "<<< end tool-output", "<<<tool-output", "tool-output", "End "),
        *("result layer", "Result_Layer", "result-layer", "layer", "REF://tool-result/", "ref://"),
        *("[tool result", "[Omitted", "[nothing omitted", "[store note", "[Full result"),
        *("[abcdefgh: lines 1-2]", "[zzzzzzzz: x]", "[ab2cd9ef:", "  [omitted", "[model-written"),
    ]
)


def _line_by_line(fence: Fence, body: str) -> str:
    """The definition: every line that imitates the markup, not the fence's own markers."""
    if not imitates_layer_markup(body):
        return body
    own, note = f"[{fence.nonce}: ", fence.marker(IMITATION_NOTE)
    lines = body.split("\n")
    for i, line in enumerate(lines):
        if not line.startswith(own) and imitates_layer_markup(line):
            lines[i] = f"{note} {line.replace('<<<', '<‹<').replace('>>>', '>›>')}"
    return "\n".join(lines)


@settings(max_examples=1_500, deadline=None)
@given(body=st.lists(_WORDS, max_size=60).map("".join))
def test_neutralise_matches_the_line_by_line_definition(body: str) -> None:
    assert _FENCE.neutralise(body) == _line_by_line(_FENCE, body)
