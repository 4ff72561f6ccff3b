"""Error evidence: finding the lines that explain a failure, fast, in any amount of text.

A line is error evidence when it names an error, exception, traceback, failure, fatal
condition, panic, errno, assertion, a non-zero exit status or similar. Scanning never lowers
or regex-scans a whole 50 MB input: it jumps between case-variant keyword hits with
`str.find` (C speed) and confirms each candidate line with a word-aware regex, stopping as
soon as it has enough distinct lines.

Example:
    ```python
    from langchain_result_layer.core.evidence import find_error_lines, is_error_line

    text = "ok\\nok\\nERROR: disk full\\nok\\n"
    assert [hit.line_text for hit in find_error_lines(text)] == ["ERROR: disk full"]
    assert is_error_line("Traceback (most recent call last):")
    ```
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "ErrorLine",
    "find_error_lines",
    "has_error_evidence",
    "is_error_line",
    "pattern_key",
]

# Substrings that every evidence word contains, in the casings tools print. Short, so one
# `find` covers several words ("rror" -> error, Error, stderror...; confirmed by the regex).
_KEYWORDS: tuple[str, ...] = (
    "rror",
    "RROR",
    "xception",
    "XCEPTION",
    "raceback",
    "ailed",
    "ailure",
    "FAIL",
    "Fail",
    "atal",
    "ATAL",
    "anic",
    "ANIC",
    "rrno",
    "xit code",
    "xit status",
    "xited with",
    "ssert",
    "non-zero",
    "egmentation fault",
    "ERR!",
    "Killed",
    "Aborted",
    "ABORT",
    "denied",
    "not found",
    "cannot",
    "Cannot",
    "could not",
    "Could not",
    "undefined reference",
)

_CONFIRM_RE = re.compile(
    r"""
    \b(?:error|errors|exception|traceback|failed|failure|failures|fail|fatal|panic|panicked
       |errno|abort|aborted|killed|segmentation\ fault|core\ dumped|denied
       |assert(?:ion)?(?:error)?|undefined\ reference|cannot|could\ not|not\ found)\b
    | \w+(?:Error|Exception|Failure)\b
    | \bexit(?:ed)?\ (?:code|status|with)\W{0,3}(?!0\b)\d+
    | \bnon-zero\ exit
    | npm\ ERR!
    | \bE\d{3,5}\b
    | ^\s*E\s{2,}
    | ^FAIL(?:ED)?\b
    """,
    re.IGNORECASE | re.VERBOSE,
)

# Phrases that mention an error word without reporting a failure.
_BENIGN_RE = re.compile(
    r"""
    \b(?:0|no|zero|without)\s+(?:errors?|failures?|failed)\b
    | \b(?:errors?|failures?|failed)\s*[:=]\s*0\b
    | -W(?:no-)?error
    | \b(?:error|exception)_(?:log|reporting|handler|page|message|code)
    | \bignore[_ -]?errors?\b
    | \ballow[_ -]?failures?\b
    | \bfail[_ -]?fast\b
    | \bon[_ -]?(?:error|failure)\b
    | \bif\s+(?:error|failed)\b
    """,
    re.IGNORECASE | re.VERBOSE,
)

# Strong markers rank a line above generic mentions.
_STRONG_RE = re.compile(
    r"Traceback \(most recent call last\)|^\s*\w+(?:\.\w+)*(?:Error|Exception)\b|FAILED|FAILURE"
    r"|\bFATAL\b|\bpanic:|npm ERR!|BUILD FAILED|error:|ERROR\b|Caused by:|\bE\s{3}",
)

# For very large regions only the strongest words are scanned: every keyword costs one
# pass over the region at memory speed (about 25 ms per 50 MB).
_CORE_KEYWORDS: tuple[str, ...] = (
    "rror",
    "RROR",
    "xception",
    "raceback",
    "FAIL",
    "ailed",
    "atal",
    "anic",
)
FULL_SCAN_MAX_CHARS = 8_000_000
"""Regions larger than this are scanned with the core keywords only."""

_MAX_LINE_FOR_CONFIRM = 2_000


@dataclass(frozen=True, slots=True)
class ErrorLine:
    """One confirmed error line.

    Attributes:
        start: Offset of the line's first character.
        end: Offset just past the line's `\\n` (or the end of the text).
        line_no: 1-based line number.
        line_text: The line without its line ending (cut to 2,000 characters).
        strong: Whether it carries a strong failure marker (traceback, FATAL, `...Error:`).
        key: Its pattern key (digits and hex folded) for deduplication.

    Example:
        ```python
        hit = find_error_lines("x\\nerror: bad\\n")[0]
        assert hit.line_no == 2
        ```
    """

    start: int
    end: int
    line_no: int
    line_text: str
    strong: bool
    key: str


_KEY_HEX_RE = re.compile(r"\b(?:0x)?[0-9a-fA-F]{6,}\b")
_KEY_NUM_RE = re.compile(r"\d+")
_KEY_WS_RE = re.compile(r"\s+")
_KEY_QUOTED_RE = re.compile(r"'[^']{0,200}'|\"[^\"]{0,200}\"")


def pattern_key(line: str) -> str:
    """Fold a line to a pattern: numbers, hex ids and quoted values become placeholders.

    Args:
        line: One line of text.

    Returns:
        A short key; lines with the same key are "the same error" for deduplication.

    Example:
        ```python
        assert pattern_key("timeout after 30s on 0xdeadbeef") == pattern_key("timeout after 5s on 0xcafe0000")
        ```
    """
    key = _KEY_HEX_RE.sub("#", line[:400])
    key = _KEY_QUOTED_RE.sub("'*'", key)
    key = _KEY_NUM_RE.sub("0", key)
    return _KEY_WS_RE.sub(" ", key).strip()[:160]


def is_error_line(line: str) -> bool:
    """Whether one line is error evidence.

    Args:
        line: A single line (without newline).

    Returns:
        `True` for lines that report an error or failure.

    Example:
        ```python
        assert is_error_line("FAILED tests/test_x.py::test_y - AssertionError")
        assert not is_error_line("Ran 10 tests, 0 failures")
        ```
    """
    probe = line[:_MAX_LINE_FOR_CONFIRM]
    if not _CONFIRM_RE.search(probe):
        return False
    if _BENIGN_RE.search(probe):
        # Benign phrase present: still evidence if a strong marker is there too.
        return bool(_STRONG_RE.search(_BENIGN_RE.sub(" ", probe)))
    return True


def has_error_evidence(text: str, *, max_chars: int = 200_000) -> bool:
    """Whether `text` (at most its last `max_chars` characters) holds error evidence.

    Args:
        text: Text to check.
        max_chars: How much of the end of `text` to inspect.

    Returns:
        `True` when at least one error line is found.

    Example:
        ```python
        assert has_error_evidence("step 1 ok\\nfatal: not a git repository\\n")
        ```
    """
    start = max(0, len(text) - max_chars)
    return bool(find_error_lines(text, start=start, limit=1))


def _line_bounds(text: str, pos: int, lo: int, hi: int) -> tuple[int, int]:
    start = text.rfind("\n", lo, pos) + 1
    start = max(start, lo)
    nl = text.find("\n", pos, hi)
    end = hi if nl < 0 else nl + 1
    return start, end


def find_error_lines(
    text: str,
    *,
    start: int = 0,
    end: int | None = None,
    limit: int = 8,
    distinct: bool = True,
    reverse: bool = False,
    max_candidates: int = 4_000,
) -> list[ErrorLine]:
    """Find the first (or last) error lines in `text[start:end]`.

    Args:
        text: The text.
        start: Where the search region starts.
        end: Where it ends (exclusive); defaults to the end of `text`.
        limit: How many lines to return.
        distinct: Return only one line per pattern key.
        reverse: Search from the end backwards (the last errors first).
        max_candidates: Upper bound on candidate lines examined, to bound the cost on
            text full of false positives; the search reports what it found so far.

    Returns:
        Confirmed error lines in the order they were found (text order unless `reverse`).

    Example:
        ```python
        lines = find_error_lines("E1 error\\nok\\nE2 error\\n", limit=1, reverse=True)
        assert lines[0].line_text == "E2 error"
        ```
    """
    hi = len(text) if end is None else min(end, len(text))
    lo = max(0, start)
    if hi <= lo or limit <= 0:
        return []
    found: list[ErrorLine] = []
    seen_keys: set[str] = set()
    seen_lines: set[int] = set()
    # Next hit per keyword; -1 when exhausted.
    keywords = _KEYWORDS if hi - lo <= FULL_SCAN_MAX_CHARS else _CORE_KEYWORDS
    if reverse:
        nxt = {kw: text.rfind(kw, lo, hi) for kw in keywords}
    else:
        nxt = {kw: text.find(kw, lo, hi) for kw in keywords}
    # Incremental line numbering: (offset, number of newlines before offset).
    mark_pos, mark_nl = 0, 0
    candidates = 0
    while candidates < max_candidates:
        live = [(pos, kw) for kw, pos in nxt.items() if pos >= 0]
        if not live:
            break
        pos, kw = max(live) if reverse else min(live)
        line_start, line_end = _line_bounds(text, pos, lo, hi)
        candidates += 1
        # Advance every keyword that points into this line past it.
        for other, opos in list(nxt.items()):
            if opos >= 0 and line_start <= opos < line_end:
                if reverse:
                    nxt[other] = text.rfind(other, lo, line_start) if line_start > lo else -1
                else:
                    nxt[other] = text.find(other, line_end, hi) if line_end < hi else -1
        if line_start in seen_lines:
            continue
        seen_lines.add(line_start)
        line = text[line_start : min(line_end, line_start + _MAX_LINE_FOR_CONFIRM)]
        line = line.rstrip("\r\n")
        if not is_error_line(line):
            continue
        key = pattern_key(line)
        if distinct and key in seen_keys:
            continue
        seen_keys.add(key)
        if line_start >= mark_pos:
            mark_nl += text.count("\n", mark_pos, line_start)
        else:
            mark_nl -= text.count("\n", line_start, mark_pos)
        mark_pos = line_start
        line_no = mark_nl + 1
        found.append(
            ErrorLine(
                start=line_start,
                end=line_end,
                line_no=line_no,
                line_text=line,
                strong=bool(_STRONG_RE.search(line)),
                key=key,
            )
        )
        if len(found) >= limit:
            break
    return found
