"""`is_continuation_line` skips the pattern only where no branch of it can match."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from langchain_result_layer.core.evidence import _CONTINUATION_RE, is_continuation_line

_PIECES = st.sampled_from(
    [
        " ",
        "  ",
        "\t",
        "\xa0",
        "\u2003",
        "\x1c",
        "at ",
        'File "x.py", line 3',
        "... 4 more",
        "#12 ",
        "0x1f",
        " in ",
        "from ",
        "x.rb:3",
        "E  ",
        ">  ",
        "Caused by:",
        "Also:",
        "^^",
        "~~^~",
        "|",
        "-",
        "+",
        "--- ",
        "+++ ",
        "@@ ",
        "Expected",
        "Actual",
        "Received",
        "expected",
        "actual",
        "(",
        ")",
        "a.py",
        ":",
        "7",
        ".",
        "x",
        "Z",
        "é",
        "\r",
        "java.lang",
    ]
)


@settings(max_examples=2_000, deadline=None)
@given(st.lists(_PIECES, max_size=8).map("".join) | st.text(max_size=40))
@example("")
@example("x" * 399 + ":1")
@example("x" * 400 + "a.py:1")
def test_the_quick_answer_is_the_patterns(line: str) -> None:
    assert is_continuation_line(line) == (_CONTINUATION_RE.match(line[:400]) is not None)
