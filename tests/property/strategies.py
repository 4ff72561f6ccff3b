"""Hypothesis strategies for tool output: random and adversarial text, budgets, blocks."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from langchain_result_layer.core.budget import Budget
from langchain_result_layer.views._salience import Analysis, analyse

# Every kind of character, lone surrogates included (broken UTF-16 from a bad decode).
any_char = st.one_of(
    st.characters(exclude_categories=()),
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF, exclude_categories=()),
    st.sampled_from(["\n", "\r", "\n", "\x00", "\x1b", "\t", "\u0301", "\u200d"]),
)

PIECES = [
    "hello world\n",
    "INFO step ok\n",
    "ERROR: disk full\n",
    "Traceback (most recent call last):\n",
    '  File "x.py", line 3, in <module>\n',
    "ValueError: bad value 42\n",
    "FAILED tests/test_x.py::test_y - AssertionError\n",
    "exit code 1\n",
    "\r\n",
    "\n",
    "x" * 300,
    "10%\r50%\r100%\n",
    "\x1b[31mred\x1b[0m\n",
    "\x1b]0;title\x07",
    "\x1b]8;;http://e.com\x1b\\link\x1b]8;;\x1b\\\n",
    "\x00\x01\x7f",
    "\ud800",
    "\udc00",
    "\ud83d\ude00",
    "\U0001f600",
    "e\u0301",
    "\U0001f44d\U0001f3fd",
    "中文字符的输出",
    "\t  indented\n",
    "   ",
    '{"id": 1, "name": "x"}\n',
]

lines_text = st.builds(
    lambda parts, times: "".join(parts) * times,
    st.lists(st.sampled_from(PIECES), max_size=60),
    st.sampled_from([1, 1, 1, 5, 50, 400]),
)
random_text = st.text(alphabet=any_char, max_size=400)
only_newlines = st.integers(min_value=0, max_value=50_000).map(lambda n: "\n" * n)
long_line = st.builds(
    lambda unit, times: unit * times,
    st.sampled_from(["a", "ab ", "é", "\U0001f600", "\r\n", "\x1b[1m"]),
    st.integers(min_value=1, max_value=200_000),
)

tool_text = st.one_of(lines_text, random_text, only_newlines, long_line, st.just(""))

budgets = st.builds(
    Budget,
    tokens=st.one_of(st.integers(1, 100), st.integers(64, 4_000)),
    chars=st.one_of(st.integers(1, 500), st.integers(256, 30_000)),
)
layer_budgets = st.builds(Budget, tokens=st.integers(64, 3_000), chars=st.integers(256, 30_000))


def _text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


block = st.one_of(
    tool_text.map(_text_block),
    random_text,
    st.builds(
        lambda n: {"type": "image", "base64": "A" * n, "mime_type": "image/png"},
        st.integers(0, 5_000),
    ),
    st.just({"type": "image_url", "image_url": {"url": "https://example.com/x.png"}}),
    st.builds(
        lambda v: {"type": "json", "json": v}, st.dictionaries(st.text(max_size=5), st.integers())
    ),
    st.just({"type": "text"}),  # text block without text
    st.just({"type": "text", "text": None}),
    st.builds(lambda v: {"type": "text", "text": v}, st.integers()),  # weird text value
    st.just({"type": "search_result", "title": "t", "content": [{"type": "text", "text": "c"}]}),
    st.just({"type": "text-plain", "mime_type": "text/plain", "base64": "aGk="}),
)

block_lists = st.one_of(
    st.lists(block, min_size=1, max_size=12),
    st.builds(
        lambda blocks, times: blocks * times,
        st.lists(block, min_size=1, max_size=4),
        st.integers(100, 3_000),
    ),
)

# Lists a tool returned that are not content blocks: rows (LangChain passes such lists on).
row_lists = st.lists(
    st.fixed_dictionaries(
        {"id": st.integers(), "name": st.text(max_size=20)},
        optional={"type": st.sampled_from(["user", "admin"])},
    ),
    min_size=1,
    max_size=30,
).map(lambda rows: rows * 200)

message_content = st.one_of(tool_text, block_lists, row_lists)


# The characters at which tiktoken's pre-tokenizers change their mind: newlines, blanks of every
# kind, `/` (o200k's punctuation runs take `[\r\n/]*`), punctuation, apostrophes, digits, letters
# of both cases, marks, CJK, emoji, a lone surrogate; and short pieces where one piece ends and the
# next begins (contractions, indented lines, paths after a newline, a stack frame).
PRETOKEN_PIECES = st.sampled_from(
    [
        *"\n\n\n\n\r\t  /./'-_:;,()[]{}$#=+*09aZé",
        *("\u0301", "\u00a0", "\u2028", "\u3000", "\x0b", "\x1c", "\x85"),
        *("中", "文", "中文", "😀", "\ud800"),
        *("'s", "'ll", "error", "Error", "error: ", " at ", "word "),
        *("\n  ", "\n/", "\n\n", ".\n", "\r\n", "http://x/", "//comment"),
        *("\n/usr/bin", "\n  indented", "    at x.y(Z.java:1)"),
    ]
)


def pretoken_texts(max_size: int) -> st.SearchStrategy[str]:
    """Texts of up to `max_size` pieces cut where a pre-tokenizer would start a new piece."""
    return st.lists(PRETOKEN_PIECES, max_size=max_size).map("".join)


# Logs for the line-selection properties, analysed: short signal lines, blanks, and runs of
# `x` from empty to longer than any line limit (cut within the line).
def log_analyses(longest: int) -> st.SearchStrategy[Analysis]:
    """Analyses of logs of 1-60 such lines, the `x` runs up to `longest` characters."""
    lines = st.lists(
        st.one_of(
            st.sampled_from(["ok", "", "error: boom", "FAILED test_x", "  at a.b(C.java:1)"]),
            st.integers(0, longest).map(lambda n: "x" * n),
        ),
        min_size=1,
        max_size=60,
    )
    return lines.map(lambda ls: analyse("\n".join(ls) + "\n"))
