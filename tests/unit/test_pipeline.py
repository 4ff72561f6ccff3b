"""The per-result pipeline, through `ResultLayer.process_tool_message` and its async twin."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from langchain_core.messages import ToolMessage

from langchain_result_layer import ResultLayer, ToolPolicy
from langchain_result_layer.core.budget import Budget
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.tokens import ApproximateTokenCounter, TiktokenCounter
from langchain_result_layer.core.view import ResultView
from langchain_result_layer.errors import StoreQuotaExceededError, StoreUnavailableError
from langchain_result_layer.pipeline import META_KEY, ResultPipeline, headline_of
from langchain_result_layer.stores.base import Principal, RecordMeta
from langchain_result_layer.stores.memory import InMemoryResultStore
from langchain_result_layer.views import registry as views_registry
from langchain_result_layer.views.binary import BinaryNoticeView
from langchain_result_layer.views.blocks import content_chars, content_tokens
from tests.doubles import DownStore
from tests.fenced import unfence

EXACT = TiktokenCounter()
BIG_LOG = "".join(f"2024-01-01 12:00:{i % 60:02d} INFO step {i} ok\n" for i in range(20_000))


def layer(**kw: Any) -> ResultLayer:
    kw.setdefault("context_window", 10_000)
    kw.setdefault("max_result_tokens", 1_000)
    kw.setdefault("store", "memory")
    return ResultLayer(**kw)


def msg(content: Any, **kw: Any) -> ToolMessage:
    kw.setdefault("tool_call_id", "call-1")
    kw.setdefault("name", "shell")
    kw.setdefault("id", "msg-1")
    return ToolMessage(content=content, **kw)


def fits(out: ToolMessage, lay: ResultLayer) -> bool:
    budget = lay.result_budget
    tokens = content_tokens(out.content, lay.token_counter, image_tokens=lay.image_tokens)
    return tokens <= budget.tokens and content_chars(out.content) <= budget.chars


# --------------------------------------------------------------------------- pass-through


@pytest.mark.parametrize(
    "content",
    ["small result", "", [{"type": "text", "text": "a"}, "b"], [], [{"id": 1}, {"id": 2}]],
)
def test_under_budget_passes_through_as_the_same_object(content: Any) -> None:
    """With fencing off (the opt-out), a result within budget is the same object."""
    lay = layer(fence_results=False)
    original = msg(content, artifact={"mine": 1})
    out = lay.process_tool_message(original)
    assert out.content is original.content
    # One artifact shape: the view, with the tool's own artifact in `original_artifact`.
    assert isinstance(out.artifact, ResultView)
    assert ResultLayer.tool_artifact(out) == {"mine": 1}
    assert out.response_metadata[META_KEY]["passed_through"] is True
    assert out.response_metadata[META_KEY]["fenced"] is False
    # Stored anyway, so the guard can restore it later.
    assert out.response_metadata[META_KEY]["stored"] is True
    # The same opt-out per tool.
    lay = layer(tool_policies={"shell": ToolPolicy(fence=False)})
    again = msg(content)
    assert lay.process_tool_message(again).content is again.content


@pytest.mark.parametrize("content", ["small result", "", "two\nlines"])
def test_under_budget_is_shown_whole_inside_a_fence(content: str) -> None:
    """By default a result within budget is fenced as untrusted data, small ones too."""
    lay = layer()
    out = lay.process_tool_message(msg(content, artifact={"mine": 1}))
    assert isinstance(out.content, str)
    assert unfence(out.content) == content
    assert ResultLayer.tool_artifact(out) == {"mine": 1}
    marker = out.response_metadata[META_KEY]
    assert marker["passed_through"] is True
    assert marker["fenced"] is True
    assert marker["tokens"] == EXACT.count(out.content)
    assert marker["shown_chars"] == len(out.content)


def test_small_blocks_are_fenced_one_by_one() -> None:
    lay = layer()
    out = lay.process_tool_message(msg([{"type": "text", "text": "a"}, "b"]))
    assert isinstance(out.content, list)
    assert unfence(out.content[0]["text"]) == "a"
    assert unfence(out.content[1]) == "b"
    assert fits(out, lay)


def test_large_result_is_cut_and_keeps_identity_fields() -> None:
    lay = layer()
    original = msg(BIG_LOG, status="error", artifact={"exit": 1})
    out = lay.process_tool_message(original)
    assert (out.id, out.tool_call_id, out.name, out.status) == (
        "msg-1",
        "call-1",
        "shell",
        "error",
    )
    assert isinstance(out.content, str)
    assert fits(out, lay)
    view = ResultLayer.view_of(out)
    assert view is not None
    assert view.truncated
    assert view.original_artifact == {"exit": 1}
    assert view.shown_tokens == EXACT.count(out.content)
    assert view.status == "error"
    marker = out.response_metadata[META_KEY]
    assert marker["processed"] is True
    assert marker["ref"] in out.content
    assert Reference.parse(marker["ref"]).record_id == view.record_id


def test_processing_twice_changes_nothing() -> None:
    lay = layer()
    once = lay.process_tool_message(msg(BIG_LOG))
    twice = lay.process_tool_message(once)
    assert twice is once


async def test_async_processing_twice_changes_nothing() -> None:
    lay = layer()
    once = await lay.aprocess_tool_message(msg(BIG_LOG))
    twice = await lay.aprocess_tool_message(once)
    assert twice is once
    assert fits(once, lay)


async def test_sync_and_async_render_the_same_view() -> None:
    lay = layer()
    sync = lay.process_tool_message(msg(BIG_LOG))
    asy = await lay.aprocess_tool_message(msg(BIG_LOG))
    marker_s, marker_a = sync.response_metadata[META_KEY], asy.response_metadata[META_KEY]
    # Same text apart from the record id and the random fence nonce.
    assert marker_s["tokens"] > 0
    assert marker_s["original_chars"] == marker_a["original_chars"]
    assert marker_s["omitted_chars"] == marker_a["omitted_chars"]


class ThreadRecordingCounter:
    """A real counter (tiktoken) that remembers which threads counted."""

    name = "recording"
    exact = True

    def __init__(self) -> None:
        self.threads: set[int] = set()

    def count(self, text: str) -> int:
        self.threads.add(threading.get_ident())
        return EXACT.count(text)


async def test_large_inputs_are_processed_off_the_event_loop() -> None:
    counter = ThreadRecordingCounter()
    lay = layer(token_counter=counter)
    loop_thread = threading.get_ident()
    out = await lay.aprocess_tool_message(msg(BIG_LOG))
    threads = set(counter.threads)  # before this test counts anything itself
    assert fits(out, lay)
    assert threads
    assert loop_thread not in threads


async def test_small_inputs_stay_on_the_loop() -> None:
    counter = ThreadRecordingCounter()
    lay = layer(token_counter=counter)
    await lay.aprocess_tool_message(msg("tiny"))
    assert counter.threads == {threading.get_ident()}


# --------------------------------------------------------------------------- content kinds


def test_bytes_become_a_binary_notice_without_a_binary_view(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(
        views_registry, "_DEFAULT", views_registry.registered_views().without("binary")
    )
    store = InMemoryResultStore()
    pipe = ResultPipeline(budget=Budget(tokens=500, chars=4_000), counter=EXACT, store=store)
    data = bytes(range(256)) * 100
    plan = pipe._plan(data, tool_name="fetch", status="success")
    assert plan is not None
    assert plan.binary
    assert isinstance(plan.view, BinaryNoticeView)  # the notice is a view like the others
    outcome = pipe.process(data, tool_name="fetch")
    assert outcome is not None
    assert isinstance(outcome.content, str)
    assert outcome.content.startswith("[Binary tool result `fetch`: 25,600 bytes")
    assert "00 01 02 03" in outcome.content
    assert outcome.view.kind == "binary"
    got = store.read(outcome.view.record_id or "", principal=Principal())
    assert got.data == data  # stored as bytes, exactly


def test_bytes_use_the_binary_view_when_registered() -> None:
    if views_registry.get_view("binary") is None:
        pytest.skip("no binary view registered")
    pipe = ResultPipeline(budget=Budget(tokens=500, chars=4_000), counter=EXACT, store=None)
    outcome = pipe.process(b"\x00\x01hello world\x02" * 1_000, tool_name="fetch")
    assert outcome is not None
    assert outcome.view.kind == "binary"
    assert EXACT.count(outcome.content) <= 500


def test_objects_are_rendered_as_deterministic_json() -> None:
    pipe = ResultPipeline(budget=Budget(tokens=500, chars=4_000), counter=EXACT, store=None)
    value = {"b": 1, "a": [1.5, None, True], "set": {3, 1}}
    outcome = pipe.process(value, tool_name="t")
    assert outcome is not None
    assert outcome.passed_through
    assert outcome.view.original_chars == len('{"b": 1, "a": [1.5, null, true], "set": [1, 3]}')
    big = {"rows": [{"id": i, "name": f"n{i}"} for i in range(5_000)]}
    outcome = pipe.process(big, tool_name="t")
    assert outcome is not None
    assert not outcome.passed_through
    assert EXACT.count(outcome.content) <= 500


def test_rows_are_not_treated_as_content_blocks() -> None:
    lay = layer(max_result_tokens=300)
    rows = [{"id": i, "type": "user", "name": f"user {i}"} for i in range(2_000)]
    out = lay.process_tool_message(msg(rows))
    assert isinstance(out.content, str)
    assert fits(out, lay)
    assert out.response_metadata[META_KEY]["kind"] != "blocks"


# --------------------------------------------------------------------------- blocks


def test_thousands_of_tiny_blocks_never_exceed_the_budget() -> None:
    lay = layer(max_result_tokens=500)
    blocks = [{"type": "text", "text": f"item {i}"} for i in range(5_000)]
    out = lay.process_tool_message(msg(blocks))
    assert fits(out, lay)
    last = out.content[-1]
    assert "more blocks" in last["text"]
    assert "omitted" in last["text"]


def test_text_blocks_share_the_budget_in_proportion() -> None:
    lay = layer(max_result_tokens=3_000, max_result_chars=400_000)
    small = "small block\n" * 20
    big = "".join(f"big line {i}\n" for i in range(20_000))
    medium = "".join(f"medium line {i}\n" for i in range(5_000))
    out = lay.process_tool_message(msg([small, {"type": "text", "text": big}, medium]))
    assert fits(out, lay)
    texts = [b if isinstance(b, str) else b["text"] for b in out.content]
    assert unfence(texts[0]) == small.rstrip("\n")  # under its share: whole (fenced)
    big_tokens, medium_tokens = EXACT.count(texts[1]), EXACT.count(texts[2])
    assert big_tokens > medium_tokens  # proportional to size
    view = ResultLayer.view_of(out)
    assert view is not None
    assert [item["action"] for item in view.items] == ["kept", "cut", "cut"]
    # Each cut block is stored on its own: its line ranges are fetchable.
    assert "block_2" in view.references
    assert "block_3" in view.references


def test_images_are_kept_at_a_fixed_cost_or_replaced_when_they_alone_exceed() -> None:
    image = {"type": "image", "base64": "iVBORw0KGgo" * 1_000, "mime_type": "image/png"}
    text = {"type": "text", "text": BIG_LOG}
    lay = layer(max_result_tokens=4_000, image_tokens=1_000)
    out = lay.process_tool_message(msg([image, text]))
    assert out.content[0] == image
    assert fits(out, lay)
    # Images that alone exceed what the turn allows this result become notices.
    lay = layer(context_window=4_000, max_result_tokens=1_500, image_tokens=1_000)
    out = lay.process_tool_message(msg([image, image, text]))
    assert fits(out, lay)
    assert out.content[0]["type"] == "text"
    assert out.content[0]["text"].startswith("[image block omitted")


def test_an_image_is_kept_when_the_cap_is_below_its_fixed_cost() -> None:
    """A per-result cap under the image cost does not drop every image: media get their fixed
    cost on top of the text budget, within the result's share of the turn budget."""
    image = {"type": "image", "base64": "iVBORw0KGgo" * 1_000, "mime_type": "image/png"}
    lay = layer(context_window=16_000, max_result_tokens=1_000, image_tokens=1_600)
    out = lay.process_tool_message(msg([image, {"type": "text", "text": BIG_LOG}]))
    assert out.content[0] == image
    tokens = content_tokens(out.content, lay.token_counter, image_tokens=1_600)
    assert tokens <= 1_000 + 1_600 + 4  # the text keeps its cap, the image adds its cost
    assert tokens <= 16_000 // 2  # within the turn share
    assert tokens - 1_600 - 4 > 300  # the text is not squeezed to make room


def test_a_media_allowance_is_not_spent_when_no_media_is_shown() -> None:
    """The media allowance raises the cap only for media actually shown: a list whose image
    is dropped with everything else (hypothesis found it) keeps the per-result cap."""
    blocks = [
        {"type": "text", "text": ""},
        {"type": "text", "text": ""},
        {"type": "image", "base64": "", "mime_type": "image/png"},
    ]
    lay = layer(
        context_window=100_000,
        max_result_tokens=64,
        max_result_chars=256,
        token_counter=ApproximateTokenCounter(),
    )
    out = lay.process_tool_message(msg(blocks))
    assert not any(b.get("type") == "image" for b in out.content if isinstance(b, dict))
    assert fits(out, lay)
    view = ResultView.from_artifact(out.artifact)
    assert view is not None
    assert view.shown_tokens <= 64


@pytest.mark.parametrize(
    "content",
    [
        [{"type": "text"}],
        [{"type": "text", "text": None}] * 3_000,
        [{"type": "text", "text": 12}],
        [{"type": "image"}] * 500,
        [{"type": "json", "json": {"k": list(range(5_000))}}],
        [{"type": "search_result", "content": [{"type": "text", "text": "x" * 50_000}]}],
        ["\ud800" * 10_000, "\x00" * 10_000],
    ],
)
def test_weird_blocks_never_raise(content: list[Any]) -> None:
    lay = layer(max_result_tokens=200)
    out = lay.process_tool_message(msg(content))
    assert fits(out, lay)


# --------------------------------------------------------------------------- stores


@pytest.mark.parametrize(
    ("exc", "phrase"),
    [
        (StoreUnavailableError("db is down"), "result store unavailable"),
        (StoreQuotaExceededError("tenant over quota"), "storage quota exceeded"),
    ],
)
async def test_a_store_that_is_down_never_loses_the_view(exc: Exception, phrase: str) -> None:
    lay = layer(store=DownStore(exc))
    for out in (
        lay.process_tool_message(msg(BIG_LOG)),
        await lay.aprocess_tool_message(msg(BIG_LOG)),
    ):
        assert fits(out, lay)
        assert phrase in out.content
        assert "cannot be fetched" in out.content
        marker = out.response_metadata[META_KEY]
        assert marker["stored"] is False
        assert phrase in marker["store_error"]


def test_without_a_store_the_notice_says_nothing_can_be_fetched() -> None:
    lay = layer(store=False)
    out = lay.process_tool_message(msg(BIG_LOG))
    assert "not saved" in out.content
    assert out.response_metadata[META_KEY]["ref"] is None


# --------------------------------------------------------------------------- policies


def test_disabled_policy_passes_untouched() -> None:
    lay = layer(tool_policies={"shell": ToolPolicy(enabled=False)})
    original = msg(BIG_LOG)
    assert lay.process_tool_message(original) is original


def test_per_tool_caps_and_split() -> None:
    lay = layer(tool_policies={"shell": ToolPolicy(max_tokens=300, head_fraction=0.9)})
    out = lay.process_tool_message(msg(BIG_LOG))
    assert EXACT.count(out.content) <= 300
    view = ResultLayer.view_of(out)
    assert view is not None
    assert view.budget_tokens == 300


def test_unknown_declared_kind_is_refused_by_the_layer() -> None:
    with pytest.raises(ValueError, match="unknown view kind 'no-such-kind'"):
        layer(tool_policies={"shell": ToolPolicy(kind="no-such-kind")})


def test_unknown_declared_kind_falls_back_to_text_in_the_pipeline() -> None:
    lay = layer()
    lay.pipeline.policies["shell"] = ToolPolicy(kind="no-such-kind")  # e.g. a view unregistered
    out = lay.process_tool_message(msg(BIG_LOG))
    assert fits(out, lay)
    assert "<<<tool-output" in out.content


def test_approximate_counter_bounds_hold() -> None:
    lay = layer(token_counter="approximate")
    out = lay.process_tool_message(msg(BIG_LOG))
    assert ApproximateTokenCounter().count(out.content) <= lay.result_budget.tokens


def test_headline_of_prefers_the_first_error_shown() -> None:
    view = ResultView(
        kind="text",
        original_chars=10,
        original_lines=2,
        items=[{"role": "error", "text": "\nERROR: boom\nmore"}],
    )
    assert headline_of(view) == "text, 10 chars, 2 lines; first error shown: ERROR: boom"
    assert headline_of(ResultView(kind="log", summary={"headline": "3 errors"})) == "3 errors"


def test_async_store_is_awaited_not_blocking() -> None:
    # The async path calls `aput`; a store whose `put` is unusable still works.
    class AsyncOnlyStore(InMemoryResultStore):
        def put(self, data: str | bytes, **kwargs: Any) -> RecordMeta:
            raise AssertionError("sync put on the async path")

        async def aput(self, data: str | bytes, **kwargs: Any) -> RecordMeta:
            return InMemoryResultStore.put(self, data, **kwargs)

    lay = layer(store=AsyncOnlyStore())
    out = asyncio.run(lay.aprocess_tool_message(msg(BIG_LOG)))
    assert out.response_metadata[META_KEY]["stored"] is True


def test_a_sqlalchemy_result_is_not_consumed_before_the_rows_view() -> None:
    from sqlalchemy import create_engine, text

    engine = create_engine("sqlite://")
    with engine.begin() as conn:
        conn.execute(text("create table t (id integer, name text)"))
        conn.execute(
            text("insert into t values " + ",".join(f"({i}, 'n{i}')" for i in range(3_000)))
        )
    lay = layer()
    with engine.connect() as conn:
        outcome = lay.pipeline.process(conn.execute(text("select * from t")), tool_name="q")
    assert outcome is not None
    assert outcome.view.kind == "rows"
    assert outcome.view.total == 3_000


SHAPES = {
    "string": BIG_LOG,
    "block list": [{"type": "text", "text": BIG_LOG}, {"type": "text", "text": "tail note"}],
    "json": {"rows": [{"id": i, "line": f"step {i} ok"} for i in range(5_000)]},
    "binary": b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 400,
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize(
    ("exc", "phrase"),
    [
        (StoreUnavailableError("db is down"), "result store unavailable"),
        (StoreQuotaExceededError("tenant over quota"), "storage quota exceeded"),
    ],
)
async def test_the_store_down_reason_survives_for_every_content_shape(
    shape: str, exc: Exception, phrase: str
) -> None:
    """The model and the marker get the store's reason, whatever the result's shape."""
    lay = layer(store=DownStore(exc))
    content = SHAPES[shape]
    for out in (
        lay.process_tool_message(msg(content)),
        await lay.aprocess_tool_message(msg(content)),
    ):
        assert fits(out, lay)
        marker = out.response_metadata[META_KEY]
        assert marker["stored"] is False
        assert marker["truncated"] is True
        assert phrase in marker["store_error"]
        assert str(exc) in marker["store_error"]
        shown = out.content if isinstance(out.content, str) else repr(out.content)
        assert phrase in shown
