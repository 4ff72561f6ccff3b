"""1 MB adversarial results of each regex-DoS shape, and JSON bombs, through the layer.

No timing assertions (times are in `python -m benchmarks adversarial`): a quadratic pass on
these inputs takes minutes, so a regression shows as a test timeout. Each result comes out
bounded by the budget, stored exactly, and JSON bombs are shown as text instead of parsed.
"""

from __future__ import annotations

import pytest
from benchmarks.adversarial import cost_shapes, regex_shapes
from langchain_core.messages import ToolMessage

from langchain_result_layer import ResultLayer
from langchain_result_layer.core.view import ResultView

SHAPES = regex_shapes(1_000_000)


def _layer() -> ResultLayer:
    return ResultLayer(context_window=128_000, store="memory", token_counter="approximate")


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", list(SHAPES))
def test_one_megabyte_shape_through_the_layer(name: str) -> None:
    layer = _layer()
    text = SHAPES[name]
    out = layer.process_tool_message(ToolMessage(content=text, tool_call_id="c", name="t"))
    view = ResultView.from_artifact(out.artifact)
    assert view is not None
    assert len(str(out.content)) <= layer.result_budget.chars
    record = out.response_metadata["result_layer"]["record_id"]
    stored = layer.store.read(record, principal=layer.principal_for(None))
    assert stored.data == text  # the raw result is kept exactly


@pytest.mark.timeout(120)
def test_json_bombs_are_shown_as_text_not_parsed() -> None:
    layer = _layer()
    for name, build in cost_shapes(0.12).items():  # 600,000 empty objects, 120,000 keys, ...
        text = build()
        out = layer.process_tool_message(ToolMessage(content=text, tool_call_id="c", name="t"))
        kind = out.response_metadata["result_layer"]["kind"]
        if "empty objects" in name or "nesting" in name:
            assert kind == "text", name
        assert len(str(out.content)) <= layer.result_budget.chars, name
