"""Line priorities: the cheap candidate filter, huge inputs, and the failure-report rules."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.core.evidence import line_salience
from langchain_result_layer.core.normalize import clean_for_display
from langchain_result_layer.views._salience import (
    FULL_ANALYSIS_CHARS,
    _candidate_lines,
    _split_region,
    analyse,
)
from langchain_result_layer.views.command import CommandView
from tests.views.conftest import assert_fits, make_ctx

_WORDS = [
    "ERROR",
    "error:",
    "Exception",
    "Traceback (most recent call last):",
    "FAILED",
    "failed",
    "exit code 2",
    "exited with 1",
    "warning:",
    "WARN",
    "Assertion",
    "expected 1 but was 2",
    "panic:",
    "=====",
    "E  ",
    "1)",
    "$",
    ">",
    "+",
    "ok",
    "done",
    "build",
    "Tests run: 3, Failures: 1",
    "not found",
    "\x1b[31m",
    "\x1b[0m",
    "\r",
    "   ",
    "x",
    "42",
    "✗",
    "___",
    "rc=3",
    "status: 4",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_WORDS), max_size=6), min_size=1, max_size=30))
def test_candidate_filter_misses_no_salient_line(rows: list[list[str]]) -> None:
    lines = [" ".join(words) if i % 2 else "".join(words) for i, words in enumerate(rows)]
    text = "\n".join(lines) + "\n"
    region = _split_region(text, 0, len(text), 1)
    candidates = set(_candidate_lines(region, text, None))
    for i, line in enumerate(lines):
        shown = clean_for_display(line.rstrip("\r")).rstrip("\r")
        if shown and line_salience(shown) > 0:
            assert i in candidates, (line, shown)


def _huge_log(middle_error: str) -> str:
    filler = "".join(f"[INFO] compiling module {i} of the project\n" for i in range(60_000))
    block = (
        f"{middle_error}\n"
        "\tat com.acme.Parser.parse(Parser.java:42)\n"
        "\tat com.acme.Main.main(Main.java:7)\n"
    )
    body = filler * (FULL_ANALYSIS_CHARS // len(filler) + 1)
    tail = "".join(f"[INFO] packaging {i}\n" for i in range(2_000))
    return body + block + body + tail + "[INFO] BUILD FAILURE\nexit code 1\n"


def test_huge_input_keeps_the_middle_error_with_its_frames() -> None:
    raw = _huge_log("java.lang.IllegalStateException: parser lost its place")
    assert len(raw) > 2 * FULL_ANALYSIS_CHARS
    analysis = analyse(raw)
    assert analysis.partial
    error_line = raw.count("\n", 0, raw.index("java.lang.IllegalStateException")) + 1
    assert error_line in analysis.priority
    assert analysis.text(error_line + 1) == "\tat com.acme.Parser.parse(Parser.java:42)"
    start, end = analysis.span(error_line) or (0, 0)
    assert raw[start:end].startswith("java.lang.IllegalStateException")
    view = CommandView()
    ctx = make_ctx("command", tokens=1_000)
    out = view.render(view.prepare(raw), ctx)
    assert_fits(out.content, ctx)
    content = str(out.content)
    assert "parser lost its place" in content
    assert "Parser.java:42" in content
    assert "exit status 1" in content.split("\n", 1)[0]
    assert out.view.summary["partial_scan"] is True
