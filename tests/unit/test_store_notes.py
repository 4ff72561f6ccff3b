"""The first view tells the model when the store could keep only part of a result."""

from __future__ import annotations

from langchain_core.messages import ToolMessage

from langchain_result_layer import InMemoryResultStore, ResultLayer


def test_capped_record_is_announced_in_the_view_within_budget() -> None:
    store = InMemoryResultStore(max_record_size=20_000, min_capped_size=1_000)
    layer = ResultLayer(
        context_window=16_000, max_result_tokens=1_000, store=store, token_counter="tiktoken"
    )
    text = "".join(f"line {i} of a long build log\n" for i in range(20_000))
    msg = layer.process_tool_message(ToolMessage(text, tool_call_id="c1", name="build", id="t"))
    content = str(msg.content)
    assert "[Store note: because of the size cap" in content
    assert "cannot be fetched" in content
    assert layer.token_counter.count(content) <= 1_000
    assert msg.response_metadata["result_layer"]["capped"] is True


def test_uncapped_record_has_no_store_note() -> None:
    layer = ResultLayer(context_window=16_000, max_result_tokens=1_000, store="memory")
    text = "".join(f"line {i}\n" for i in range(20_000))
    msg = layer.process_tool_message(ToolMessage(text, tool_call_id="c1", name="build", id="t"))
    assert "Store note" not in str(msg.content)
    assert msg.response_metadata["result_layer"]["capped"] is False


def test_capped_block_list_is_announced_even_at_the_smallest_budget() -> None:
    """At 64 tokens a capped list of blocks still says what was not stored (a short note)."""
    store = InMemoryResultStore(max_record_size=20_000, min_capped_size=1_000)
    layer = ResultLayer(
        context_window=16_000,
        max_result_tokens=64,
        max_result_chars=256,
        store=store,
        token_counter="tiktoken",
    )
    blocks = [{"type": "text", "text": "😀" * 500} for _ in range(200)]
    msg = layer.process_tool_message(ToolMessage(blocks, tool_call_id="c1", name="t", id="t"))
    content = str(msg.content)
    assert msg.response_metadata["result_layer"]["capped"] is True
    assert "[Store note: chars " in content
    assert "were not stored (size cap).]" in content
    view = ResultLayer.view_of(msg)
    assert view is not None
    assert view.shown_tokens <= 64
