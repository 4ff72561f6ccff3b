"""The scripted model's reference finder reads references as the layer writes them."""

from __future__ import annotations

from langchain_core.messages import AIMessage, ToolMessage

from langchain_result_layer.core.reference import Reference
from langchain_result_layer.scripted import find_references

RID = "AbCdEfGhIjKlMnOpQrStUv"


def test_sentence_punctuation_after_a_reference_is_not_part_of_it() -> None:
    text = (
        f"[Full result: ref://tool-result/{RID}/log?page=2.] "
        f'Next: fetch_tool_result(ref="ref://tool-result/{RID}/rows?page=3&page_size=50"), '
        f"or ref://tool-result/{RID}/text; then ref://tool-result/{RID}/text?start_line=5:"
    )
    refs = find_references([ToolMessage(text, tool_call_id="c1"), AIMessage("no refs here")])
    assert refs == [
        f"ref://tool-result/{RID}/log?page=2",
        f"ref://tool-result/{RID}/rows?page=3&page_size=50",
        f"ref://tool-result/{RID}/text",
        f"ref://tool-result/{RID}/text?start_line=5",
    ]
    for ref in refs:
        assert str(Reference.parse(ref)) == ref
