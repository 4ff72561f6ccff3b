r"""Error evidence: finding the lines that explain a failure, fast, in any amount of text.

A line is error evidence when it names an error, exception, traceback, failure, fatal
condition, panic, errno, assertion, a non-zero exit status or similar. Scanning never lowers
or regex-scans a whole 50 MB input: it jumps between case-variant keyword hits with
`str.find` (C speed) and confirms each candidate line with a word-aware regex, stopping as
soon as it has enough distinct lines.

Example:
    ```python
    from langchain_result_layer.core.evidence import find_error_lines, is_error_line

    text = "ok\nok\nERROR: disk full\nok\n"
    assert [hit.line_text for hit in find_error_lines(text)] == ["ERROR: disk full"]
    assert is_error_line("Traceback (most recent call last):")
    ```
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "ErrorLine",
    "ExitStatus",
    "find_error_lines",
    "find_exit_status",
    "has_error_evidence",
    "is_continuation_line",
    "is_error_line",
    "is_step_failure",
    "line_salience",
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
    (?<![-.@/])\b(?:error|errors|exception|exceptions|traceback|failed|failure|failures|fail
       |fatal|panic|panicked|errno|abort|aborted|killed|segmentation\ fault|core\ dumped|denied
       |assert(?:ion)?(?:error)?|undefined\ reference|cannot|could\ not|not\ found)\b(?![-.@]\w)
       (?!\ v\d+\.\d)  # a package and its version (`Compiling errno v0.2.4`)
    | (?-i:(?<=[a-z0-9_])(?:Error|Exception|Failure)\b)
    | \bexit(?:ed)?\ (?:code|status|with)\W{0,3}(?!0\b)\d+
    | \bnon-zero\ exit
    | npm\ ERR!
    | (?-i:(?<![\w-])E\d{3,5}(?![\w-]))
    | ^\s*E\s{2,}
    | ^FAIL(?:ED)?\b
    """,
    re.IGNORECASE | re.VERBOSE,
)

# URLs and paths: a keyword inside them (`.../Asylum-Fail/...`) is a name, not a report.
_PATHS_RE = re.compile(r"(?<!\S)\S*[/\\]\S*")

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
    | \berror\s+(?:messages?|reporting|handling|handlers?|pages?|codes?\b(?!\s*[:=]))
    | \b\d+\s+assertions?\b
    | \bassertions?\s*[:=]\s*\d+
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
    "ATAL",
    "anic",
    "ANIC",
)
FULL_SCAN_MAX_CHARS = 8_000_000
"""Regions larger than this are scanned with the core keywords only."""

_MAX_LINE_FOR_CONFIRM = 2_000


@dataclass(frozen=True, slots=True)
class ErrorLine:
    r"""One confirmed error line.

    Attributes:
        start: Offset of the line's first character.
        end: Offset just past the line's `\n` (or the end of the text).
        line_no: 1-based line number.
        line_text: The line without its line ending (cut to 2,000 characters).
        strong: Whether it carries a strong failure marker (traceback, FATAL, `...Error:`).
        key: Its pattern key (digits and hex folded) for deduplication.

    Example:
        ```python
        hit = find_error_lines("x\nerror: bad\n")[0]
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
        a = pattern_key("timeout after 30s on 0xdeadbeef")
        assert a == pattern_key("timeout after 5s on 0xcafe0000")
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
    if "/" in probe or "\\" in probe:
        probe = _PATHS_RE.sub(" ", probe)
    first = _CONFIRM_RE.search(probe)
    if first is None:
        return False
    if _weak_match(probe, first) and all(
        _weak_match(probe, m) for m in _CONFIRM_RE.finditer(probe, first.end())
    ):
        return False
    if _BENIGN_RE.search(probe):
        # Benign phrase present: still evidence if a strong marker is there too.
        return bool(_STRONG_RE.search(_BENIGN_RE.sub(" ", probe)))
    return True


# A bare "exception" reports one when it starts the line or has a verb of failing near it;
# in prose ("under License Exception TSU of the ...") it is a word, not a report.
_EXCEPTION_CONTEXT_RE = re.compile(
    r"exceptions?\s*(?::|in\s+thread|was|were|is|are|has|have|occurred|raised|thrown|caught"
    r"|during|while|when)"
    r"|(?:unhandled|uncaught|unexpected|an|fatal|runtime|caught|raised|threw|throws?|thrown)"
    r"\s+exceptions?",
    re.IGNORECASE,
)
_IDENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$.")


def _weak_match(probe: str, match: re.Match[str]) -> bool:
    """A confirming match that names something rather than reports a failure.

    Two kinds: a lower-camel identifier ending in `Error`/`Exception` (`safeError`,
    `normalError`: a variable or function in echoed code, where a class name starts with a
    capital), and a bare "exception" inside prose.
    """
    word = match.group()
    start = match.start()
    if word[:1].isupper() and word in ("Error", "Exception", "Failure"):
        # The suffix of a longer token: look at the whole token.
        i = start
        while i > 0 and probe[i - 1] in _IDENT_CHARS:
            i -= 1
        token = probe[i : match.end()]
        if token != word:
            return token[:1].islower() and "." not in token
    if word.lower() in ("exception", "exceptions"):
        if not probe[:start].strip(" \t[]():*-#>"):
            return False  # it starts the line
        window = probe[max(0, start - 40) : match.end() + 40]
        return _EXCEPTION_CONTEXT_RE.search(window) is None
    return False


def has_error_evidence(text: str, *, max_chars: int = 200_000) -> bool:
    r"""Whether `text` (at most its last `max_chars` characters) holds error evidence.

    Args:
        text: Text to check.
        max_chars: How much of the end of `text` to inspect.

    Returns:
        `True` when at least one error line is found.

    Example:
        ```python
        assert has_error_evidence("step 1 ok\nfatal: not a git repository\n")
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
    r"""Find the first (or last) error lines in `text[start:end]`.

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
        lines = find_error_lines("E1 error\nok\nE2 error\n", limit=1, reverse=True)
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
        pos, _kw = max(live) if reverse else min(live)
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


# --------------------------------------------------------------------------- salience
#
# `line_salience` ranks lines for views that pick evidence line by line (command and log
# views). Weights are by kind of line, not by tool or project: a failure summary or an
# exit status outranks an exception line, which outranks a generic error mention, which
# outranks a warning.

SALIENCE_EXIT = 9.0
"""A failing exit status or a build's failure verdict."""

SALIENCE_SUMMARY = 8.5
"""A test runner's failure summary (`Tests run: 9, Failures: 2`, `=== FAILURES ===`)."""

SALIENCE_STRONG = 8.0
"""An exception, a compiler error, a failed test, a fatal message."""

SALIENCE_ITEM = 7.0
"""One entry of a test runner's failure list (`1) test_x`, `FAILED test_y`, `x ... ERROR`)."""

SALIENCE_ERROR = 5.0
"""Any other confirmed error line."""

SALIENCE_DETAIL = 3.0
"""Assertion details (`expected ... but was ...`), missing or invalid things, a test run's
incomplete verdict (`OK, but incomplete, skipped, or risky tests!`)."""

SALIENCE_WARNING = 2.0
"""Warnings (`warning:`, `npm WARN`, `[WARNING]`, `Deprecated`): shown when there is room,
without the context an error gets. A warning that mentions a failure stays a warning."""

_EXIT_RES: tuple[re.Pattern[str], ...] = (
    re.compile(r"\bexit(?:ed)?(?: with)? (?:code|status)\W{0,3}(-?\d+)", re.IGNORECASE),
    re.compile(r"\bexited with\W{0,3}(-?\d+)", re.IGNORECASE),
    re.compile(r"Process finished with exit code (-?\d+)"),
    re.compile(r"Process completed with exit code (-?\d+)"),
    re.compile(r"\bmake(?:\[\d+\])?: \*\*\* \[.*\] Error (\d+)"),
    re.compile(r"\breturned (?:non-zero )?(?:exit )?(?:status|code) (-?\d+)", re.IGNORECASE),
    re.compile(r"\bcommand failed with (?:exit )?(?:code|status) (-?\d+)", re.IGNORECASE),
    re.compile(r"\breturn ?code\W{0,3}(-?\d+)", re.IGNORECASE),
    re.compile(r"^\s*(?:\[[^\]]*\]\s*)?(?:exit|rc|status)\s*[:=]\s*(-?\d+)\s*$", re.IGNORECASE),
)

_STEP_END_RE = re.compile(
    r"""
    BUILD\ (?:FAILED|FAILURE)
    | \bFAILURE:\ Build\ failed
    | Build\ step\ .{1,80}\ marked\ build\ as\ failure
    | ^Finished:\ (?:FAILURE|ABORTED|UNSTABLE)
    | ^\#\#\[error\]
    | ^Error:\ Process\ completed
    | \bThe\ command\ ".{1,400}"\ (?:failed|exited\ with\ [1-9]\d*)
    | \bnpm\ ERR!\ code\ ELIFECYCLE
    | \berror:\ Recipe\ .{1,200}\ failed
    | \bCommand\ failed\b | \bcommand\ .{1,200}\ failed\ with\b
    """,
    re.VERBOSE,
)

_SUMMARY_VERDICT_RE = re.compile(
    r"""
    ^\s*(?:\[\w+\]\s*)?Tests?\ (?:run|result).{0,40}(?:Failures|Errors|failed):\ [1-9]
    | \b[1-9]\d*\ (?:failed|failures?|errors?)\b.{0,40}\b(?:passed|in\ [\d.]+\s*s)
    | ^=+\ (?:FAILURES|ERRORS|short\ test\ summary\ info)\ =+
    | ^FAILED\ \(.{0,60}(?:failures|errors)=\d+
    | ^There\ (?:was|were)\ \d+\ (?:failures?|errors?):
    | ^\s*Tests:\ \d+,\ Assertions:\ \d+,\ (?:Errors|Failures):\ [1-9]
    | ^\s*(?:\[\w+\]\s*)?(?:Failed\ tests|Tests\ in\ error|Failing\ tests|Failures|Errors
        |FAILURES!?|ERRORS!?)\s*:?\s*$
    """,
    re.VERBOSE,
)

_STRONG_LINE_RE = re.compile(
    r"""
    Traceback\ \(most\ recent\ call\ last\)
    | ^\s*(?:E\s+)?(?:[\w$]+\.)*[\w$]*(?:Error|Exception|Failure)\b(?::|\s*$|\ \()
    | ^\s*\*\*\ \(\w+(?:\.\w+)*\)
    | \bpanicked\ at\b | ^panic:
    | \bFATAL\b | ^fatal: | \bfatal\ error\b
    | (?:^|:\d+(?::\d+)?:\ )error(?:\[\w+\])?:
    | ^\s*ERROR\b | \[ERROR\] | \bERROR:
    | ^\s*FAIL(?:ED|URE)?\b[:!\s] | ^---\ FAIL\b | ^not\ ok\b
    | \bAssertionError\b | \bAssertion\ failed | \bassert(?:ion)?\ .{0,80}failed
    | CMake\ Error | Segmentation\ fault | core\ dumped | \bAborted\b
    | npm\ ERR! | ^\s*Caused\ by: | ^\s*Error:\ | \bUnhandled\ (?:exception|rejection)
    | ^Exception\ in\ thread\s
    | \bundefined\ reference\ to\b | \bcannot\ find\ symbol\b | \bNo\ space\ left\b
    | \bTimed?\ ?out\b.{0,40}\bexceeded\b | \btimeout\ of\ \d+m?s\ exceeded
    """,
    re.VERBOSE,
)

_ITEM_RE = re.compile(
    r"""
    ^\s*\d{1,5}\)\ \S
    | ^\s*\d{1,5}\.\ (?:Failure|Error)\b
    | ^\s*(?:FAIL|FAILED|ERROR|ERRORED)\ [\w./\\:-]+
    | \S\s{2,}(?:FAIL|FAILED|ERROR|failed|error)\s*$
    | \.\.\.\ *(?:FAIL|FAILED|ERROR)\s*$
    | ^\s*[✗✖×✘]\
    | ^\s*\d+\)\ \w
    | ^_{3,}\ +\S.{0,300}?\ +_{3,}\s*$
    """,
    re.VERBOSE,
)

_DETAIL_RE = re.compile(
    r"""
    \bexpected\b.{0,200}\b(?:but\ was|but\ got|got|actual|received|to\ (?:be|equal))\b
    | ^\s*(?:Expected|Actual|Received|expected|actual)\s*[:=(]
    | ^\s*[-+]{3}\ (?:Expected|Actual|expected|actual)
    | ^OK,\ but\ (?:incomplete|skipped|risky)
    | \bnot\ (?:found|defined|available|installed|supported)\b
    | \bunable\ to\b|\bUnable\ to\b|\bInvalid\b|\binvalid\b
    | \bmissing\b|\bMissing\b|\bUnexpected\b|\bunexpected\b
    | \bincompatible\b|\bIncompatible\b|\bconflict
    """,
    re.VERBOSE,
)

_WARNING_RE = re.compile(
    r"""
    \bwarning:|\bWarning:|\bWARN(?:ING)?\b|\bDeprecated\b|\bdeprecated\b
    """,
    re.VERBOSE,
)

# A line that is a warning report as a whole: it starts (after a timestamp) with a warning
# level, or a compiler diagnostic whose kind is `warning`.
_WARNING_LINE_RE = re.compile(
    r"""
    ^\s*(?:\[?[\d:.,/TZ+-]{6,}\]?\s+)?
    (?:npm\ WARN\b|\[WARN(?:ING)?\]|WARN(?:ING)?\b:?|[Ww]arning:|W:\ |w:\ |\[warn\])
    | ^\s*\S+?:\d+(?::\d+)?:\s*(?:\[?\w+\]?\s*)?warning\b
    """,
    re.VERBOSE,
)

# A tool's diagnostic `path:line:column: message` (compilers, linters, type checkers).
_DIAGNOSTIC_RE = re.compile(r"^\s*(?:[A-Za-z]:)?[\w./\\@+-]+\.\w{1,8}:\d+:\d+:\ \S")

# A check or test reported as passed (`... ok`, `checking for x... no`).
_PASSING_SUFFIX_RE = re.compile(
    r"(?:\.\.\.|…)\s*(?:OK|ok|Ok|PASSED|passed|PASS|pass|SKIPPED|skipped|done|DONE|yes|no)\b"
    r"[.!]?\s*$"
)

_CONTINUATION_RE = re.compile(
    r"""
    ^\s+at\ \S | ^\s*at\ [\w$.<]+\( | ^\s*File\ ".*",\ line\ \d+ | ^\s+\.\.\.\ \d+\ more
    | ^\s*\#\d+\ +(?:0x[0-9a-f]+|\S+\ in\ ) | ^\s*from\ \S+:\d+ | ^\s*(?:E|>)\ {2,}
    | ^\s*Caused\ by: | ^\s*Also: | ^\s*\^+\s*$ | ^\s*~+\^?~*\s*$ | ^\s*\|
    | ^\s*[-+]\ ?\S | ^\s*(?:Expected|Actual|Received|expected|actual)\b
    | ^\s*\(\S+\ [\d.\w-]+\)\ \S+:\d+ | ^\s*\S+\.\w{1,5}:\d+(?::\d+)?
    | ^\s{2,}\S | ^\t\S
    """,
    re.VERBOSE,
)


# Every line that `line_salience` scores above 0 matches this (a cheap first test).
_ANY_SIGNAL_RE = re.compile(
    r"rror|RROR|xception|XCEPTION|raceback|ail|AIL|atal|ATAL|anic|ANIC|rrno|xit|xited|ssert|SSERT"
    r"|non-zero|egmentation|ERR!|Killed|bort|BORT|denied|not |NOT |cannot|Cannot"
    r"|could not|Could not"
    r"|undefined|Undefined|arn|ARN|eprecat|nvalid|issing|xpected|nable to|ncompatible|onflict"
    r"|imed? ?out|imeout|BUILD|Build step|Finished:|##\[error|Tests? run|Tests? result"
    r"|[1-9]\d* (?:failed|errors?)"
    r"|^=+ |^\s*\d{1,5}[.)] |^\s*[✗✖×✘] |No space|ore dumped|Caused by|E\d{3}|^\s*E |rc\s*[:=]"
    r"|tatus\s*[:=]|eturn|Return|Recipe|ctual|eceived|^_{3,} |OK, but|:\d+:\d+: "
)
# Lower-case words one of which each pattern needs (gates for `line_salience`).
_STEP_WORDS = (
    "xit",
    "build",
    "finished:",
    "##[error]",
    "error: process",
    "the command",
    "npm err",
    "recipe",
    "failed",
    "error ",
    "eturn",
    "tatus",
    "code",
    "rc",
)
_SUMMARY_WORDS = ("test", "fail", "error", "===", "there w")
_ITEM_WORDS = ("fail", "error", "✗", "✖", "×", "✘", "___ ")
_STRONG_WORDS = (
    "error",
    "exception",
    "failure",
    "traceback",
    "panic",
    "fatal",
    "fail",
    "not ok",
    "assert",
    "segmentation",
    "core dumped",
    "aborted",
    "npm err",
    "caused by",
    "unhandled",
    "undefined reference",
    "cannot find symbol",
    "no space",
    "exceeded",
    "** (",
)
_DETAIL_WORDS = (
    "expected",
    "actual",
    "received",
    "warn",
    "deprecat",
    "not ",
    "unable",
    "invalid",
    "missing",
    "unexpected",
    "incompatible",
    "conflict",
    "ok, but",
)
_PASSING_RESULT_RE = re.compile(
    r"^\s*(?:SKIP|SKIPPED|XFAIL|XFAILED|PASS|PASSED|XPASS|OK)\b(?!:?\s*$)(?!,\s*but\b)"
    r"(?![^\n]{0,40}\bFAIL)"
)
_EXIT_HINT_RE = re.compile(r"xit|Error \d|eturn|tatus|code|\brc\b", re.IGNORECASE)
_HEAVY_PROBE = 600


def line_salience(line: str) -> float:
    """How much one line says about a failure: 0 (nothing) to `SALIENCE_EXIT`.

    Args:
        line: One line, cleaned for display (no ANSI codes), without its newline.

    Returns:
        A score: a failing exit status or build verdict, a strong error (exception,
        compiler error, failed test, fatal), an entry of a failure list, another error
        line, an assertion detail or warning, or 0.

    Example:
        ```python
        assert line_salience('The command "make test" exited with 2.') == SALIENCE_EXIT
        assert line_salience("src/app.c:10:5: error: expected ';'") == SALIENCE_STRONG
        assert line_salience("all good") == 0.0
        ```
    """
    probe = line[:_MAX_LINE_FOR_CONFIRM]
    if not _ANY_SIGNAL_RE.search(probe):
        return 0.0
    if _PASSING_RESULT_RE.match(probe):
        return 0.0  # a runner's SKIP/PASS/XFAIL line names a test, it reports no failure
    # The kind of a line shows in its first few hundred characters. Each pattern runs only
    # when one of its words is there (a substring test is far cheaper than the pattern).
    head = probe[:_HEAVY_PROBE]
    low = head.lower()
    if _has_any(low, _STEP_WORDS) and is_step_failure(head):
        return SALIENCE_EXIT
    if _PASSING_SUFFIX_RE.search(head):
        return 0.0  # `checking for syntax errors ... OK`: a check that passed
    warning = "arn" in low and _WARNING_LINE_RE.search(head) is not None
    score = _kind_of(head, low, probe)
    if warning:
        return min(score, SALIENCE_WARNING) if score else SALIENCE_WARNING
    return score


_WERROR_RE = re.compile(
    r"\bFailing due to -Werror|\bwarnings? (?:being |are |is )?treated as errors?", re.IGNORECASE
)


def _kind_of(head: str, low: str, probe: str) -> float:
    if ("treated as error" in low or "-werror" in low) and _WERROR_RE.search(head):
        return SALIENCE_STRONG  # the warnings above it failed the build
    if _has_any(low, _SUMMARY_WORDS) and _SUMMARY_VERDICT_RE.search(head):
        return SALIENCE_SUMMARY
    item_words = _has_any(low, _ITEM_WORDS) or ")" in head[:12]
    if item_words and _ITEM_RE.search(head) and not _benign_only(head):
        return SALIENCE_ITEM
    if _has_any(low, _STRONG_WORDS) and _STRONG_LINE_RE.search(head) and not _benign_only(head):
        return SALIENCE_STRONG
    if head.count(":") >= 3 and _DIAGNOSTIC_RE.match(head) and "warning" not in low:
        return SALIENCE_ITEM
    if is_error_line(probe):
        return SALIENCE_ERROR
    if _has_any(low, _DETAIL_WORDS) and _DETAIL_RE.search(head):
        return SALIENCE_DETAIL
    if ("warn" in low or "deprecat" in low) and _WARNING_RE.search(head):
        return SALIENCE_WARNING
    return 0.0


def _has_any(text: str, words: tuple[str, ...]) -> bool:
    return any(word in text for word in words)


def is_step_failure(line: str) -> bool:
    """Whether a line ends a failed step: a failing exit status or a build's failure verdict.

    Args:
        line: One cleaned line.

    Returns:
        `True` for `exit code 2`, `The command "make" exited with 2.`, `BUILD FAILED`, ...

    Example:
        ```python
        assert is_step_failure("Process finished with exit code 1")
        assert not is_step_failure("Process finished with exit code 0")
        ```
    """
    probe = line[:_MAX_LINE_FOR_CONFIRM]
    status = _exit_code_in(probe)
    return (status is not None and status != 0) or bool(_STEP_END_RE.search(probe))


def _benign_only(line: str) -> bool:
    """A strong word that only appears in a benign phrase (`0 errors`, `-Werror`)."""
    if not _BENIGN_RE.search(line):
        return False
    rest = _BENIGN_RE.sub(" ", line)
    return not (_STRONG_LINE_RE.search(rest) or _ITEM_RE.search(rest))


def is_continuation_line(line: str) -> bool:
    """Whether a line continues the report above it (stack frame, indented detail, diff).

    Args:
        line: One cleaned line.

    Returns:
        `True` for stack frames, `Caused by:`, pytest `E` lines, carets, diff lines and
        indented lines.

    Example:
        ```python
        assert is_continuation_line("    at com.acme.Main.run(Main.java:42)")
        assert not is_continuation_line("Downloading foo-1.2.jar")
        ```
    """
    return bool(_CONTINUATION_RE.search(line[:400]))


def _exit_code_in(line: str) -> int | None:
    if not _EXIT_HINT_RE.search(line):
        return None
    for pattern in _EXIT_RES:
        match = pattern.search(line)
        if match:
            try:
                return int(match.group(1))
            except ValueError:  # pragma: no cover - the patterns capture digits
                return None
    return None


@dataclass(frozen=True, slots=True)
class ExitStatus:
    r"""An exit status stated in command output.

    Attributes:
        code: The status (0 is success).
        line_no: 1-based line where it is stated.
        line_text: That line (cut to 2,000 characters).

    Example:
        ```python
        status = find_exit_status("ok\nmake: *** [all] Error 2\n")
        assert status is not None and status.code == 2
        ```
    """

    code: int
    line_no: int
    line_text: str


def find_exit_status(text: str, *, tail_chars: int = 64_000) -> ExitStatus | None:
    """The last exit status stated in the last `tail_chars` characters of `text`.

    Recognises `exit code N`, `exit status N`, `exited with N`, `Process finished with exit
    code N`, `Process completed with exit code N`, `make: *** [...] Error N`, `returned
    non-zero exit status N`, and a bare `exit: N` / `rc=N` line. A later failing status wins
    over an earlier success only when it is the last one stated.

    Args:
        text: Command output.
        tail_chars: How much of the end of `text` to search.

    Returns:
        The status, or `None` when none is stated.

    Example:
        ```python
        assert find_exit_status("Process finished with exit code 0").code == 0
        ```
    """
    start = max(0, len(text) - tail_chars)
    region = text[start:]
    lines = region.split("\n")
    for back, line in enumerate(reversed(lines)):
        if not line.strip():
            continue
        code = _exit_code_in(line)
        if code is not None:
            line_index = len(lines) - 1 - back
            line_no = text.count("\n", 0, start) + line_index + 1
            return ExitStatus(code=code, line_no=line_no, line_text=line.rstrip("\r")[:2_000])
    return None
