"""Display cleaning, safe cuts, the fence and notices, JSON rendering, budgets, block plans."""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import enum
import uuid
from pathlib import PurePosixPath
from typing import Any

import pytest

from langchain_result_layer.core.budget import Budget, result_budget
from langchain_result_layer.core.jsonable import to_json_text, to_jsonable
from langchain_result_layer.core.normalize import (
    clean_for_display,
    count_lines,
    needs_cleaning,
    safe_cut,
)
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.render import (
    Fence,
    fetch_call,
    format_line_ranges,
    plural,
    range_text,
)
from langchain_result_layer.core.tokens import TiktokenCounter
from langchain_result_layer.core.view import OmittedRange
from langchain_result_layer.views.blocks import (
    BLOCK_OVERHEAD_TOKENS,
    block_text,
    content_tokens,
    is_content_block_list,
    plan_blocks,
)
from langchain_result_layer.views.text import utf8_length

EXACT = TiktokenCounter()

# --------------------------------------------------------------------------- cleaning


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b[31mred\x1b[0m\n", "red\n"),
        ("10%\r50%\r100%\n", "100%\n"),
        ("a\r\nb\r\n", "a\r\nb\r\n"),  # CRLF endings are kept
        ("50%\r\r\n", "50%\r\n"),
        ("a\x00b\x07", "a\u2400b\u2407"),
        ("x\x7f", "x\u2421"),
        ("lone \ud800 surrogate", "lone \ufffd surrogate"),
        ("pair \ud83d\ude00", "pair \U0001f600"),
        ("\x1b]0;window title\x07text\n", "text\n"),
        ("\x1b]8;;http://e.com\x1b\\link\x1b]8;;\x1b\\\n", "link\n"),
        ("stray \x1b\n", "stray \u241b\n"),
        ("\x9b31mc1\n", "c1\n"),
        # A string command ended by BEL (Buildkite's timestamps) goes whole, as an OSC does.
        ("\x1b_bk;t=1796676992954\x07KeyError: 'id'\n", "KeyError: 'id'\n"),
        ("\x1bPq#0\x07x\n", "x\n"),
    ],
)
def test_clean_for_display(raw: str, shown: str) -> None:
    assert clean_for_display(raw) == shown
    assert needs_cleaning(raw) == (raw != shown)


def test_escape_sequences_never_swallow_a_newline() -> None:
    raw = "a\x1b]0;title\nline2\nline3\x07x\n\x1bPdcs\nmore\x1b\\\n"
    shown = clean_for_display(raw)
    assert shown.count("\n") == raw.count("\n")


def test_count_lines() -> None:
    assert count_lines("") == 0
    assert count_lines("a") == 1
    assert count_lines("a\n") == 1
    assert count_lines("a\nb") == 2
    assert count_lines("\n\n") == 2
    assert count_lines(b"a\nb\n") == 2
    assert count_lines("a\nb\nc", 2, 4) == 1


@pytest.mark.parametrize(
    ("text", "pos", "backward", "expected"),
    [
        ("ab\r\ncd", 3, True, 2),
        ("ab\r\ncd", 3, False, 4),
        ("a\ud83d\ude00b", 2, True, 1),
        ("ae\u0301b", 2, True, 1),
        ("ae\u0301b", 2, False, 3),
        ("\U0001f44d\U0001f3fdx", 1, True, 0),
        ("\U0001f1eb\U0001f1f7x", 1, False, 2),
        ("abc", 10, True, 3),
        ("abc", -1, True, 0),
    ],
)
def test_safe_cut(text: str, pos: int, backward: bool, expected: int) -> None:
    assert safe_cut(text, pos, backward=backward) == expected


def test_utf8_length() -> None:
    for text in ("", "abc", "é", "\ud800", "😀" * 3, "a" * 3_000_000 + "é"):
        assert utf8_length(text) == len(text.encode("utf-8", "surrogatepass"))


# --------------------------------------------------------------------------- rendering


def test_fence_nonce_avoids_the_content() -> None:
    content = "".join(f"abcdefgh{i}" for i in range(100))
    fence = Fence.for_content(content)
    assert fence.nonce not in content
    wrapped = fence.wrap("body")
    assert wrapped == f"{fence.open_line}\nbody\n{fence.close_line}"
    assert fence.marker("x") == f"[{fence.nonce}: x]"


@pytest.mark.parametrize(
    ("r", "text"),
    [
        (OmittedRange(3, 9, 10, 80, 7), "lines 3-9"),
        (OmittedRange(4, 4, 10, 20, 1), "line 4"),
        (OmittedRange(4, 4, 12, 20, 0, partial_start=True), "part of line 4"),
        (OmittedRange(4, 5, 12, 40, 1, partial_start=True), "the rest of line 4 and line 5"),
        (
            OmittedRange(4, 9, 12, 90, 4, partial_start=True, partial_end=True),
            "the rest of line 4, lines 5-8 and the start of line 9",
        ),
        (
            OmittedRange(4, 5, 12, 40, 0, partial_start=True, partial_end=True),
            "the rest of line 4 and the start of line 5",
        ),
        (OmittedRange(1_000, 20_000, 0, 1, 19_001), "lines 1,000-20,000"),
    ],
)
def test_range_text_is_exact(r: OmittedRange, text: str) -> None:
    assert range_text(r) == text


def test_format_line_ranges_separates_ranges_unambiguously() -> None:
    ranges = [OmittedRange(i * 10, i * 10 + 5, 0, 1, 6) for i in range(1, 10)]
    text = format_line_ranges(ranges, limit=3)
    assert text == "lines 10-15; lines 20-25; lines 30-35; and 6 more ranges"


def test_plural_and_fetch_call() -> None:
    assert plural(1, "line") == "1 line"
    assert plural(1_234, "line") == "1,234 lines"
    assert plural(2, "entry", "entries") == "2 entries"
    ref = Reference(record_id="AbCdEfGhIjKlMnOpQrStUv", kind="log", start_line=3, end_line=9)
    assert fetch_call(ref) == (
        'fetch_tool_result(ref="ref://tool-result/AbCdEfGhIjKlMnOpQrStUv/log'
        '?start_line=3&end_line=9")'
    )


# --------------------------------------------------------------------------- JSON


class Color(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Point:
    x: int
    y: float


def test_to_json_text_is_deterministic_and_total() -> None:
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    value = {
        "when": dt.datetime(2024, 1, 2, 3, 4, 5),
        "day": dt.date(2024, 1, 2),
        "took": dt.timedelta(seconds=1.5),
        "price": decimal.Decimal("1.10"),
        "id": uuid.UUID(int=1),
        "path": PurePosixPath("/tmp/x"),
        "color": Color.RED,
        "point": Point(1, 2.5),
        "set": {3, 1, 2},
        "mixed": {1, "a"},
        "nan": float("nan"),
        "bytes": b"\x00\x01",
        1: "int key",
        "cyclic": cyclic,
        "obj": object,
    }
    text = to_json_text(value)
    assert text == to_json_text(value)
    assert '"set": [1, 2, 3]' in text
    assert '"nan": "nan"' in text
    assert '"bytes": "<binary: 2 bytes, base64 head AAE=>"' in text
    assert '"1": "int key"' in text
    # A cycle is named as one (it used to be cut at the depth limit, 64 levels down).
    assert '"cyclic": ["<cycle: this value contains itself>"]' in text
    deep: list[Any] = []
    for _ in range(100):
        deep = [deep]
    assert "<nested too deep>" in to_json_text(deep)
    assert to_jsonable((1, 2)) == [1, 2]
    assert to_json_text([1, "é"]) == '[1, "é"]'


# --------------------------------------------------------------------------- budgets


def test_result_budget_defaults_and_validation() -> None:
    assert result_budget(context_window=128_000) == Budget(tokens=38_400, chars=400_000)
    assert result_budget(context_window=16_000, max_result_tokens=2_000).tokens == 2_000
    with pytest.raises(ValueError, match="at least 64"):
        result_budget(context_window=100)
    with pytest.raises(ValueError, match="positive"):
        Budget(tokens=0, chars=10)
    assert Budget(tokens=10, chars=10).scaled(0.01) == Budget(tokens=1, chars=1)
    assert Budget(tokens=10, chars=10).minus(20, 5) == Budget(tokens=1, chars=5)


# --------------------------------------------------------------------------- blocks


def test_block_list_detection() -> None:
    assert is_content_block_list(["a", {"type": "text", "text": "b"}])
    assert is_content_block_list([{"type": "image_url", "image_url": {"url": "u"}}])
    assert not is_content_block_list([])
    assert not is_content_block_list([{"id": 1}, {"id": 2}])  # rows
    assert not is_content_block_list([{"type": "user", "id": 1}])  # rows with a type column
    assert not is_content_block_list([{"type": "text", "text": "a"}, {"id": 1}])
    assert not is_content_block_list("text")


def test_block_text_and_costs() -> None:
    assert block_text("s") == "s"
    assert block_text({"type": "text", "text": "t"}) == "t"
    assert block_text({"type": "text"}) == ""
    assert block_text({"type": "image", "url": "u"}) is None
    assert block_text({"type": "json", "json": {"a": 1}}) == '{"type": "json", "json": {"a": 1}}'
    content = ["hello", {"type": "image", "url": "u"}]
    assert content_tokens(content, EXACT, image_tokens=100) == (
        EXACT.count("hello") + 100 + 2 * BLOCK_OVERHEAD_TOKENS
    )


def test_plan_blocks_fits_and_floors() -> None:
    budget = Budget(tokens=1_000, chars=10_000)
    plan = plan_blocks(["a", "b"], budget=budget, counter=EXACT, image_tokens=100)
    assert plan.fits
    assert plan.keep == [0, 1]
    blocks = ["tiny"] + ["x " * 20_000] * 2
    plan = plan_blocks(blocks, budget=budget, counter=EXACT, image_tokens=100)
    assert not plan.fits
    assert plan.keep == [0]
    assert sorted(plan.cut) == [1, 2]
    assert all(b.tokens >= 128 for b in plan.cut.values())
    total = sum(b.tokens for b in plan.cut.values()) + EXACT.count("tiny")
    assert total + 3 * BLOCK_OVERHEAD_TOKENS <= budget.tokens
