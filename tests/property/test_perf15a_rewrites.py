"""Session 15 (perf15a): byte-identical rewrites against the code they replaced.

The line-start patterns of the candidate search (`_ITEM_START`, `_ANY_START`) are possessive:
they match exactly where their backtracking forms do. `Signals.word_lines` reads a whole text
of up to `_WHOLE_TEXT_BLOCK` characters as one block: the lines are those the block-by-block
search finds. `clean_for_display` removes escapes with a pattern that skips to each ESC (when
the text holds no 8-bit CSI) and reads the last carriage-return overwrite back from the end:
it cleans every text as before. The label, shouted-level and summary patterns are searched
branch by branch, each branch only in a line that holds one of its literals (`_found`,
`_summary`): a line is found where the whole alternation (the pattern as it was) is found.
The fill pass offers to the lines of a text analysed whole in one tighter loop: the same
priorities and roles, in the same order.
"""

from __future__ import annotations

import heapq
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.core import evidence, normalize
from langchain_result_layer.core.evidence import ALL_SIGNALS, CORE_SIGNALS, Signals
from langchain_result_layer.views import _salience
from langchain_result_layer.views._salience_settings import DEFAULT_SETTINGS

_OLD_ANSI_PREFIX = r"(?:\x1b\[[0-?]{0,20}[ -/]{0,4}[@-~]|\r){0,8}[ \t]{0,40}"
_OLD_ITEM_START = re.compile("^" + _OLD_ANSI_PREFIX + r"\d{1,5}\) ")
_OLD_ANY_START = re.compile(
    "^" + _OLD_ANSI_PREFIX + r"(?:\d{1,5}[.)] |_{3,} |={3,} |\$ |> |\+ |##\[group\]run )",
    re.IGNORECASE,
)

# The pieces the patterns are made of, and their neighbours (an escape's classes, blanks,
# digits, the branch starts, letters and case variants, line breaks).
_PIECES = st.sampled_from(
    [
        "\x1b[",
        "\x1b[0m",
        "\x1b[1;31m",
        "\x1b[38:5:1m",
        "\x1b[ m",
        "\x1b",
        "\r",
        " ",
        "\t",
        "  ",
        "1",
        "12",
        "123456",
        ")",
        ".",
        ") ",
        ". ",
        "_",
        "___",
        "=",
        "===",
        "$",
        "$ ",
        "> ",
        "+ ",
        "##[group]Run ",
        "##[GROUP]run ",
        "a",
        "K",
        "\u212a",
        "\u0130",
        "x",
        ":",
        "\n",
        "é",
        "✗",
    ]
)
_TEXTS = st.lists(_PIECES, max_size=40).map("".join)


@settings(max_examples=1500, deadline=None)
@given(text=_TEXTS, start=st.integers(0, 6))
def test_possessive_line_starts_match_as_backtracking_ones(text: str, start: int) -> None:
    pairs = ((evidence._ITEM_START, _OLD_ITEM_START), (evidence._ANY_START, _OLD_ANY_START))
    for new, old in pairs:
        got, want = new.match(text, start), old.match(text, start)
        assert (got and got.span()) == (want and want.span())
        at_new, at_old = evidence._at_line_start(new), evidence._at_line_start(old)
        assert [m.span() for m in at_new.finditer(text)] == [
            m.span() for m in at_old.finditer(text)
        ]


_WORD_PIECES = st.sampled_from(
    [
        "error",
        "ERROR",
        "fail",
        "$ ",
        "rc=",
        "ok",
        " ",
        "\n",
        "\n\n",
        "é",
        "✗",
        "\ud800",
        "x" * 9,
        "\u212a",
        "Traceback",
    ]
)


@pytest.mark.parametrize("signals", [CORE_SIGNALS, ALL_SIGNALS])
@settings(max_examples=300, deadline=None)
@given(parts=st.lists(_WORD_PIECES, max_size=60), block=st.integers(4, 40))
def test_whole_text_block_finds_the_lines_of_small_blocks(
    signals: Signals, parts: list[str], block: int
) -> None:
    text = "".join(parts)
    lowered = signals is ALL_SIGNALS and evidence.lowers_like_ascii(text)
    whole = signals.word_lines(text, 0, len(text), lowered=lowered)
    saved = evidence._WORD_BLOCK, evidence._WHOLE_TEXT_BLOCK
    evidence._WORD_BLOCK, evidence._WHOLE_TEXT_BLOCK = block, 0  # the block-by-block search
    try:
        blocks = signals.word_lines(text, 0, len(text), lowered=lowered)
    finally:
        evidence._WORD_BLOCK, evidence._WHOLE_TEXT_BLOCK = saved
    assert whole == blocks


# --------------------------------------------------------------------------- cleaning

# The reference's escapes, as written before session 15; since session 25 a DCS/SOS/PM/APC
# string may also end with BEL (Buildkite's `\x1b_bk;t=<ms>\x07` timestamps do), as OSC may.
_OLD_ANSI_RE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\|(?=\n)|$)"
    r"|\x1b[PX^_][^\x07\x1b\n]*(?:\x07|\x1b\\)"
    r"|\x1b[ -/]*[0-~]"
    r"|\x9b[0-?]*[ -/]*[@-~]"
)


def _old_collapse_line(line: str) -> str:
    trailing_cr = line.endswith("\r")
    body = line[:-1] if trailing_cr else line
    if "\r" in body:
        body = next((p for p in reversed(body.split("\r")) if p), "")
    return body + ("\r" if trailing_cr else "")


def _old_collapse_bare_cr(text: str) -> str:
    pieces: list[str] = []
    done = 0
    cr = text.find("\r")
    while cr >= 0:
        start = max(done, text.rfind("\n", done, cr) + 1)
        end = text.find("\n", cr)
        end = len(text) if end < 0 else end
        pieces.append(text[done:start])
        pieces.append(_old_collapse_line(text[start:end]))
        done = end
        cr = text.find("\r", end)
    pieces.append(text[done:])
    return "".join(pieces)


def _old_clean_for_display(text: str) -> str:
    """`clean_for_display` as it was before session 15 (one `_ANSI_RE.sub`, a split per CR)."""
    if text.isprintable():
        return text
    if "\n" not in text and "\x1b" in text and "\r" not in text:
        plain = _OLD_ANSI_RE.sub("", text)
        if plain.isprintable():
            return plain
    if not normalize.needs_cleaning(text):
        return text
    if "\x1b" in text or "\x9b" in text:
        text = _OLD_ANSI_RE.sub("", text)
    if "\r" in text:
        text = _old_collapse_bare_cr(text)
    if normalize._REST_RE.search(text) is None:
        return text
    text = normalize._CONTROL_RE.sub(normalize._control_picture, text)
    if "\x1b" in text:
        text = text.replace("\x1b", "\u241b")
    if "\x9b" in text:
        text = text.replace("\x9b", "\ufffd")
    if normalize._SURROGATE_RE.search(text):
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        text = normalize._SURROGATE_RE.sub("\ufffd", text)
    return text


_CLEAN_PIECES = st.sampled_from(
    [
        "\x1b",
        "\x1b[",
        "\x1b[0m",
        "\x1b[1;31m",
        "\x1b[2K",
        "\x1b]0;title\x07",
        "\x1b]8;;http://x\x1b\\",
        "\x1b]",
        "\x1bP1$r\x1b\\",
        "\x1bX",
        "\x1b^",
        "\x1b_",
        "\x1b(B",
        "\x1b=",
        "\x1b\\",
        "\x9b",
        "\x9b1m",
        "\x9b[",
        "\x07",
        "\r",
        "\r\n",
        "\n",
        "\r\r",
        "\x00",
        "\x7f",
        "\t",
        " ",
        "a",
        "10%",
        "m",
        "1",
        ";",
        "é",
        "\ud83d",
        "\ude00",
        "\u2028",
    ]
)


@settings(max_examples=3000, deadline=None)
@given(parts=st.lists(_CLEAN_PIECES, max_size=30))
def test_clean_for_display_cleans_as_before(parts: list[str]) -> None:
    text = "".join(parts)
    assert normalize.clean_for_display(text) == _old_clean_for_display(text)


@settings(max_examples=1000, deadline=None)
@given(text=st.text(max_size=60))
def test_clean_for_display_cleans_any_text_as_before(text: str) -> None:
    assert normalize.clean_for_display(text) == _old_clean_for_display(text)


@settings(max_examples=3000, deadline=None)
@given(parts=st.lists(_CLEAN_PIECES, max_size=30))
def test_escape_patterns_match_as_the_reference(parts: list[str]) -> None:
    """`_ANSI_RE` (built from `_ESC_RE`) finds the reference's matches; `_ESC_RE` does too on
    a text without the 8-bit CSI."""
    text = "".join(parts)
    spans = [m.span() for m in _OLD_ANSI_RE.finditer(text)]
    assert [m.span() for m in normalize._ANSI_RE.finditer(text)] == spans
    if "\x9b" not in text:
        assert [m.span() for m in normalize._ESC_RE.finditer(text)] == spans


@settings(max_examples=2000, deadline=None)
@given(parts=st.lists(st.sampled_from(["\r", "a", "bc", "", "\x1b[0m"]), max_size=20))
def test_last_overwrite_is_the_last_non_empty_part(parts: list[str]) -> None:
    body = "".join(parts)
    want = next((p for p in reversed(body.split("\r")) if p), "")
    assert normalize._last_overwrite(body) == want


# --------------------------------------------------------------------------- label patterns

_OLD_LABEL_RE = re.compile(
    r"^\s{0,40}[^\w\s]{0,4}(?:error|fatal|panic|exception|err|failure)\b"
    r"|[:\]]\s{0,4}(?:error|fatal|panic|exception)(?:\[\w{1,12}\])?:"
    r"|\btraceback\b|\bsegmentation fault|\bcore dumped|\bpanicked at\b"
)
_OLD_SHOUTED_RE = re.compile(
    r"^\W{0,8}(?:ERROR|FATAL|FAILED|FAILURE|PANIC)\b"
    r"|[\[(<](?:ERROR|FATAL|FAILED|FAILURE|PANIC)[\])>]"
    r"|\b(?:ERROR|FATAL|FAILED|FAILURE|PANIC)(?::|!| \*\*\*)"
    r"|\bERR!"
)
_OLD_SUMMARY_RE = re.compile(
    r"(?<![\d.])[1-9]\d{0,8} (?:failed|failures?|errors?)\b"
    r"|\b(?:failures|errors)\b\W{0,3}[1-9]"
    r"|\bfailed:\s{0,8}[1-9]\d{0,8}(?=\s*(?:[,;|\])]|$))"
    r"|^\W{0,8}(?:failed tests|tests in error|failing tests|failures!?|errors!?|"
    r"=+ (?:failures|errors|short test summary info) =+)\W{0,8}$",
    re.IGNORECASE,
)

_LABEL_PIECES = st.sampled_from(
    [
        "error",
        "ERROR",
        "Error",
        "err",
        "ERR!",
        "fatal",
        "FATAL",
        "panic",
        "PANIC",
        "panicked at",
        "exception",
        "failure",
        "FAILURE",
        "failures",
        "Failures",
        "failed",
        "FAILED",
        "failed:",
        "Failed:",
        "fa\u0130led",
        "fa\u0131led",
        "error\u017f",
        "errors",
        "ERRORS",
        "traceback",
        "segmentation fault",
        "core dumped",
        "tests in error",
        "failing tests",
        "short test summary info",
        "=",
        "===",
        " ",
        "  ",
        "\t",
        ":",
        "]",
        "[",
        "(",
        ")",
        "<",
        ">",
        "!",
        " ***",
        ",",
        ";",
        "|",
        ".",
        "0",
        "1",
        "2",
        "12",
        "x",
        "_",
        "/",
        "\u00e9",
        "\u2713",
    ]
)
_LABEL_TEXTS = st.lists(_LABEL_PIECES, max_size=14).map("".join)


def _check_label_patterns(head: str) -> None:
    low = head.lower()
    assert evidence._found(evidence._LABEL_PARTS, low, low) == bool(_OLD_LABEL_RE.search(low))
    assert evidence._found(evidence._SHOUTED_PARTS, head, head) == bool(
        _OLD_SHOUTED_RE.search(head)
    )
    assert evidence._summary(head, low) == bool(_OLD_SUMMARY_RE.search(head))
    assert evidence._LABEL_RE.pattern == _OLD_LABEL_RE.pattern
    assert evidence._SHOUTED_RE.pattern == _OLD_SHOUTED_RE.pattern
    assert evidence._SUMMARY_RE.pattern == _OLD_SUMMARY_RE.pattern


@settings(max_examples=4000, deadline=None)
@given(head=_LABEL_TEXTS)
def test_label_patterns_branch_by_branch_find_what_the_alternation_finds(head: str) -> None:
    _check_label_patterns(head)


@settings(max_examples=500, deadline=None)
@given(head=st.text(max_size=80))
def test_label_patterns_on_any_text(head: str) -> None:
    _check_label_patterns(head)


# --------------------------------------------------------------------------- fill pass


def _old_fill(work: _salience._Work, weights: _salience._Weights, total: int) -> None:
    """`_fill` as it was before session 15 (one loop for every layout of regions)."""
    settings = work.settings
    strongest = heapq.nlargest(
        settings.fill_anchors, weights.anchor.items(), key=lambda item: item[1]
    )
    share, decay = settings.fill_share, settings.fill_decay
    after = [decay**d for d in range(1, settings.fill_after + 1)]
    before = [decay ** (4 * d) for d in range(1, settings.fill_after // 4 + 1)]
    runs: list[tuple[range, list[float]]] = []
    for line_no, weight in strongest:
        base = weight * share
        runs.append((range(line_no + 1, line_no + 1 + len(after)), [base * f for f in after]))
        runs.append((range(line_no - 1, line_no - 1 - len(before), -1), [base * f for f in before]))
    tail_base = settings.tail_floor * share
    tail = [tail_base * decay**d for d in range(settings.fill_tail)]
    runs.append((range(total, total - settings.fill_tail, -1), tail))
    values, roles = work.out.value, work.out.role
    regions = work.lines.regions
    whole = regions[0].raw_lines if len(regions) == 1 else None
    locate = work.lines.locate
    for numbers, offered in runs:
        for line_no, value in zip(numbers, offered, strict=True):
            if not 1 <= line_no <= total or value <= values.get(line_no, 0.0):
                continue
            if whole is not None:
                line: str | None = whole[line_no - 1] if line_no <= len(whole) else None
            else:
                where = locate(line_no)
                line = None if where is None else where[0].raw_lines[where[1]]
            if line is not None and line.strip():
                values[line_no] = value
                roles[line_no] = "fill"


def _work_before_fill(raw: str) -> tuple[_salience._Work, _salience._Weights, int]:
    settings = DEFAULT_SETTINGS
    regions, total, _ = _salience._regions(raw, settings)
    lines = _salience._Lines(regions=regions, firsts=[r.first_line for r in regions])
    scan = _salience._scan(regions, raw, None, None)
    steps = _salience._steps(scan, settings)
    weights = _salience._weigh(scan, steps, lines, total, settings)
    work = _salience._Work(lines=lines, own=scan.own, texts=scan.texts, settings=settings)
    _salience._spread(work, weights)
    _salience._floors(work, steps, total, is_error=False)
    return work, weights, total


_FILL_LINES = st.lists(
    st.sampled_from(
        [
            "error: boom",
            "FAILED test_x",
            "  at a.b(C.java:1)",
            "ok",
            "",
            " ",
            "\t \r",
            "x\r",
            "\x1c",
            "\u2028",
            "$ make test",
            'The command "make" exited with 2.',
            "warning: deprecated",
        ]
    ),
    min_size=1,
    max_size=400,
)


@settings(max_examples=300, deadline=None)
@given(lines=_FILL_LINES, trailing=st.booleans())
def test_fill_offers_as_before(lines: list[str], trailing: bool) -> None:
    raw = "\n".join(lines) + ("\n" if trailing else "")
    new, weights, total = _work_before_fill(raw)
    old, _, _ = _work_before_fill(raw)
    if total == 0:
        return
    _salience._fill(new, weights, total)
    _old_fill(old, weights, total)
    assert list(new.out.value.items()) == list(old.out.value.items())
    assert list(new.out.role.items()) == list(old.out.role.items())


_SPARSE_LOGS = st.lists(
    st.tuples(st.integers(0, 150), _FILL_LINES.map(lambda ls: ls[:3])),
    min_size=1,
    max_size=12,
).map(lambda runs: [line for n, special in runs for line in ["compiling x"] * n + special])


@settings(max_examples=200, deadline=None)
@given(lines=_SPARSE_LOGS)
def test_fill_offers_as_before_in_long_plain_runs(lines: list[str]) -> None:
    test_fill_offers_as_before.hypothesis.inner_test(lines, True)  # type: ignore[attr-defined]
