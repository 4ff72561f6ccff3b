"""Session 12 (perf12): byte-identical rewrites against the code they replaced.

`_Region.text` strips a CRLF line's carriage returns before its one printable test (the
old code tested the raw line, which a trailing `\\r` never lets pass, then cleaned it).
The in-memory store cuts a record into chunks when it is first read, not when it is written:
every read gives what the chunks made at once gave.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.core.evidence import find_exit_status
from langchain_result_layer.core.normalize import clean_for_display
from langchain_result_layer.stores.base import Principal
from langchain_result_layer.stores.memory import InMemoryResultStore
from langchain_result_layer.views import _salience
from langchain_result_layer.views._salience import _split_region, analyse
from langchain_result_layer.views._salience_settings import SalienceSettings
from langchain_result_layer.views.command import _newlines

_ALPHABET = st.sampled_from(
    [
        "a",
        "Z",
        " ",
        "\t",
        "\r",
        "\r\n",
        "\n",
        "\x1b[31m",
        "\x1b]0;t\x07",
        "\x1b",
        "\x00",
        "\x9b",
        "é",
        "\u212a",
        "\ud800",
        "😀",
        "1",
        ":",
        "\x7f",
        "\x0c",
    ]
)
_TEXT = st.lists(_ALPHABET, max_size=60).map("".join)


def _old_text(line: str) -> str:
    """`_Region.text` of one raw line before session 12."""
    if line.isprintable():
        return line
    line = line.rstrip("\r")
    return clean_for_display(line).rstrip("\r") if line else line


@settings(max_examples=400, deadline=None)
@given(_TEXT)
def test_region_text_is_the_old_text(text: str) -> None:
    region = _split_region(text, 0, len(text), 1)
    for i, line in enumerate(region.raw_lines):
        assert region.text(i) == _old_text(line)


@settings(max_examples=150, deadline=None)
@given(
    _TEXT,
    st.integers(min_value=1, max_value=7),
    st.integers(min_value=1, max_value=12),
    st.integers(min_value=1, max_value=12),
    st.none() | st.integers(min_value=4, max_value=40),
)
def test_lazy_chunks_read_as_eager_ones(
    text: str, chunk: int, start: int, end: int, cap: int | None
) -> None:
    who = Principal(tenant="t")
    lazy = InMemoryResultStore(chunk_size=chunk, max_record_size=cap, min_capped_size=1)
    meta = lazy.put(text, principal=who)
    eager = InMemoryResultStore(chunk_size=chunk, max_record_size=cap, min_capped_size=1)
    other = eager.put(text, principal=who)
    eager._records[other.record_id].layout()  # cut at once, as before
    for kwargs in ({}, {"start_line": start}, {"start_line": start, "end_line": start + end}):
        got = lazy.read(meta.record_id, principal=who, **kwargs)
        want = eager.read(other.record_id, principal=who, **kwargs)
        assert (got.data, got.start_line, got.end_line) == (
            want.data,
            want.start_line,
            want.end_line,
        )
    assert (
        lazy.read(meta.record_id, principal=who).data
        == eager.read(other.record_id, principal=who).data
    )
    if cap is None:
        assert lazy.read(meta.record_id, principal=who).data == text


_STATUS = st.sampled_from(["exit code 1", "ok", "", "make: *** [all] Error 2", "rc=0", "x" * 30])


@settings(max_examples=300, deadline=None)
@given(st.lists(_STATUS | _TEXT, max_size=40), st.booleans(), st.integers(1, 60))
def test_exit_status_with_known_newlines(parts: list[str], small: bool, tail: int) -> None:
    raw = "\n".join(parts)
    if small:  # a "huge" text: head, middle windows, tail
        full, _salience.FULL_ANALYSIS_CHARS = _salience.FULL_ANALYSIS_CHARS, 50
        try:
            analysis = analyse(
                raw, settings=SalienceSettings(head_part_chars=20, tail_part_chars=20)
            )
        finally:
            _salience.FULL_ANALYSIS_CHARS = full
    else:
        analysis = analyse(raw)
    newlines = _newlines(analysis, raw)
    assert newlines == raw.count("\n")
    assert find_exit_status(raw, tail_chars=tail, newlines=newlines) == find_exit_status(
        raw, tail_chars=tail
    )
