"""The literal keyword search finds exactly the lines the keyword regex finds, in order.

The reference is the regex over the same region (one `search` per candidate line forward,
every match's line backward): the literal scan must yield the same line spans in the same
order, with the same candidate bound, on any text and any region.
"""

from __future__ import annotations

from collections.abc import Iterator

from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.core import evidence
from langchain_result_layer.core.evidence import find_error_lines
from langchain_result_layer.views.command import CommandView
from tests.views.conftest import make_ctx

_PIECES = [
    *evidence._KEYWORD_LITERALS,
    "fail",
    "fail_",
    "failé",
    "FAILED",
    "x",
    "xxxx",
    "e",
    "r",
    " ",
    "\n",
    "\r\n",
    ":",
    "_",
    "1",
    "é",
    "error: ",
]
_TEXTS = st.lists(st.sampled_from(_PIECES), max_size=80).map("".join)


def _reference(text: str, lo: int, hi: int, reverse: bool, limit: int) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for match in evidence._KEYWORD_RE.finditer(text, lo, hi):
        if spans and match.start() < spans[-1][1]:
            continue
        spans.append(evidence._line_span(text, match.start(), lo, hi))
    return (spans[::-1] if reverse else spans)[:limit]


def _spans(text: str, lo: int, hi: int, reverse: bool, limit: int) -> list[tuple[int, int]]:
    found: Iterator[tuple[int, int]] = evidence._candidate_spans(text, lo, hi, reverse, limit)
    return list(found)


@settings(max_examples=400, deadline=None)
@given(
    text=_TEXTS,
    cut=st.tuples(st.integers(0, 400), st.integers(0, 400)),
    reverse=st.booleans(),
    limit=st.integers(1, 6),
)
def test_literal_search_matches_the_keyword_regex(
    text: str, cut: tuple[int, int], reverse: bool, limit: int
) -> None:
    lo, hi = sorted((min(cut[0], len(text)), min(cut[1], len(text))))
    assert _spans(text, lo, hi, reverse, limit) == _reference(text, lo, hi, reverse, limit)


def test_a_word_end_keyword_counts_only_at_a_word_end() -> None:
    text = "failover done\nfail_fast\nfailure\nfail\nthen fail."
    assert [s for s, _ in _spans(text, 0, len(text), False, 10)] == [24, 32, 37]
    assert _spans(text, 0, 4, False, 10) == [(0, 4)]  # the region's end ends the word


def test_a_huge_run_of_a_keyword_start_is_scanned_once_per_literal() -> None:
    # Windows of literal scans: a keyword past several windows of `x` is still found.
    text = "x" * (3 * evidence._SCAN_WINDOW + 7) + "\nexception: boom\n" + "x" * 10
    assert _spans(text, 0, len(text), False, 9) == _reference(text, 0, len(text), False, 9)
    hits = find_error_lines(text, limit=1)
    assert hits
    assert hits[0].line_text.endswith("exception: boom")
    assert find_error_lines(text, limit=1, reverse=True)[0].start == hits[0].start


def test_a_search_reads_at_most_its_scan_bound_and_the_command_view_says_so() -> None:
    line = "step ok, nothing to see in this part of the build output\n"
    filler = line * ((evidence.MAX_SCAN_CHARS + 1_000_000) // len(line))
    early = "src/a.c:1:1: error: found in the part that is read\n"
    late = "src/b.c:2:2: error: past the scan bound of the middle\n"
    raw = line * 10 + early + filler + late + line * 40_000 + "exit code 1\n"
    lo, hi = evidence.scanned_region(raw, 0, len(raw))
    assert lo == 0
    assert hi <= evidence.MAX_SCAN_CHARS
    assert raw[hi - 1] == "\n"
    found = [hit.line_text for hit in find_error_lines(raw, limit=4)]
    assert found == [early.rstrip("\n")]
    assert find_error_lines(raw, limit=4, max_scan=len(raw))[1].line_text == late.rstrip("\n")
    view = CommandView()
    ctx = make_ctx("command", tokens=1_000)
    out = view.render(view.prepare(raw), ctx)
    unscanned = out.view.summary["unscanned_chars"]
    assert unscanned > 0
    assert f"({unscanned:,} chars of it not searched)" in str(out.content).split("\n", 1)[0]
