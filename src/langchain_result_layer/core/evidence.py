r"""Error evidence: which lines of a text report a failure, found fast in any amount of text.

Two questions are answered here, both without a per-tool vocabulary:

- **What kind of line is this?** (`line_salience`): a failing exit status or build verdict, a
  failure count, an entry of a failure list, an error labelled as such (`error:`, `FATAL`, an
  exception class), another error mention, a detail (expected/actual, missing, invalid), a
  warning, or nothing. A line is read through the small set of words that failures are
  reported with in every ecosystem (*error*, *fail*, *fatal*, *exception*, *panic*, ...) and
  through its shape (a `path:line:col:` diagnostic, a numbered list entry, a label at the
  start of the line, an exception class name), not through any one tool's messages.
- **Where are the error lines of a huge text?** (`find_error_lines`): one compiled pattern of
  the words' case variants is searched over the text at C speed, and only the lines it lands
  on are looked at; the scan stops as soon as it has enough distinct lines.

Every pattern here runs in time linear in the length of the line or text it is applied to
(no unbounded run can be re-entered from another start position).

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
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

try:
    from ahocorasick_rs import AhoCorasick, BytesAhoCorasick, MatchKind
except ImportError:  # no wheel for this platform: `Signals.word_lines` uses `str.find` per word
    _AUTOMATON = False
else:
    _AUTOMATON = True

__all__ = [
    "ALL_SIGNALS",
    "CORE_SIGNALS",
    "ErrorLine",
    "ExitStatus",
    "Signals",
    "exit_code_in",
    "find_error_lines",
    "find_exit_status",
    "has_error_evidence",
    "is_continuation_line",
    "is_error_line",
    "is_step_failure",
    "line_salience",
    "lowers_like_ascii",
    "pattern_key",
    "salience_of",
]

SALIENCE_EXIT = 9.0
"""A failing exit status or a build's failure verdict."""

SALIENCE_SUMMARY = 8.5
"""A failure count or the header of a failure report (`Tests run: 9, Failures: 2`)."""

SALIENCE_STRONG = 8.0
"""An error labelled as such: `error:`, `FATAL`, an exception class, a traceback, a panic."""

SALIENCE_ITEM = 7.0
"""One entry of a failure list (`1) test_x`, `FAILED test_y`) or a `path:line:col:` diagnostic."""

SALIENCE_ERROR = 5.0
"""Any other line that mentions an error."""

SALIENCE_DETAIL = 3.0
"""Details of a failure (`expected ... but was ...`, missing or invalid things)."""

SALIENCE_WARNING = 2.0
"""Warnings: shown when there is room, without the context an error gets. A line that is a
warning report as a whole stays a warning even when it mentions a failure."""

# --------------------------------------------------------------------------- vocabulary
#
# The words failures are reported with, lower-cased. Few on purpose: every other kind of
# evidence comes from position, structure and rarity (see `views._salience`).
_ERROR_WORDS = frozenset(
    {
        "error",
        "errors",
        "err",
        "fail",
        "failed",
        "failure",
        "failures",
        "fatal",
        "exception",
        "exceptions",
        "traceback",
        "panic",
        "panicked",
        "abort",
        "aborted",
        "aborting",
        "denied",
        "cannot",
        "segmentation",
        "killed",
    }
)
_DETAIL_WORDS = frozenset(
    {"unable", "invalid", "missing", "unexpected", "incompatible", "undefined", "unresolved"}
)
_DETAIL_STEMS = ("conflict", "not installed", "not available", "not defined", "not supported")
_ERROR_PHRASES = ("not found", "could not", "no such file", "timed out")
"""Phrases that report a failure as plainly as an error word (lower-cased substrings)."""
_WARNING_WORDS = frozenset({"warning", "warnings", "warn", "deprecated", "deprecation"})
# Expected and actual values: `expected 1 but was 2`, `Expected: 3`, `actual: 4`.
_EXPECTED_RE = re.compile(
    r"\bexpected\b[^\n]{0,200}?\b(?:but (?:was|got)|got|actual|received|to (?:be|equal))\b"
    r"|^\s{0,40}(?:[-+]{3} )?(?:expected|actual|received)\s{0,4}[:=(]",
)
# A bare `exception` reports one when it starts the line or has a verb of failing near it;
# in prose (`under License Exception TSU of ...`, `Dependency exceptions ==0.10`) it is a
# word, not a report.
_EXCEPTION_CONTEXT_RE = re.compile(
    r"exceptions? ?(?::|in thread|was|were|is|are|has|have|occurred|raised|thrown|caught"
    r"|during|while|when)"
    r"|(?:unhandled|uncaught|unexpected|an|fatal|runtime|caught|raised|threw|throws?|thrown) "
    r"exceptions?",
)


@dataclass(frozen=True, slots=True)
class Signals:
    r"""Substrings and shapes that mark the lines worth reading: a cheap superset, found fast.

    The words are looked for all at once (`word_lines`: one Aho-Corasick pass over the
    text's UTF-8, at about a gigabyte a second), each shape with a pattern that starts with
    a literal character (the regex engine skips to it), so finding the candidate lines of a
    megabyte costs a few milliseconds, not a search per word or a regex alternation per
    position.

    Attributes:
        words: Substrings (in the case the searched text has).
        shapes: Patterns searched anywhere (each starts with a literal character).
        line_starts: Patterns matched at the start of a line (each anchored with `^`).

    Example:
        ```python
        assert ALL_SIGNALS.in_line("error: x") and not ALL_SIGNALS.in_line("all good")
        ```
    """

    words: tuple[str, ...]
    shapes: tuple[re.Pattern[str], ...]
    line_starts: tuple[re.Pattern[str], ...]

    def in_line(self, line: str) -> bool:
        """Whether one line (in the case of `words`) holds a signal."""
        return (
            any(word in line for word in self.words)
            or any(p.search(line) for p in self.shapes)
            or any(p.match(line) for p in self.line_starts)
        )

    def positions(self, text: str, lo: int = 0, hi: int | None = None) -> set[int]:
        """Offsets in `text[lo:hi]` where a signal starts (line-start ones at their line).

        Each word is looked for with `str.find`; after a hit, only from the next line on,
        so the cost is proportional to the text times the words and to the candidate lines,
        not to the hits. `word_lines` and `pattern_positions` find the same lines faster.
        """
        end = len(text) if hi is None else hi
        out = self._word_offsets(text, lo, end)
        out.update(self.pattern_positions(text, lo, end))
        return out

    def _word_offsets(self, text: str, lo: int, hi: int) -> set[int]:
        out: set[int] = set()
        for word in self.words:
            at = text.find(word, lo, hi)
            while at >= 0:
                out.add(at)
                nl = text.find("\n", at, hi)
                if nl < 0:
                    break
                at = text.find(word, nl, hi)
        return out

    def word_lines(
        self,
        text: str,
        lo: int,
        hi: int,
        *,
        lowered: bool = False,
        utf8_size: list[int] | None = None,
    ) -> list[int]:
        r"""The lines of `text[lo:hi]` that hold a word, as indices (0: the line at `lo`).

        Exactly the lines `positions` finds a word in (`lo` starts a line): one pass of an
        Aho-Corasick automaton of every word over the UTF-8 of line-aligned blocks (no
        word holds a `\n`, so every line that holds a word holds a reported match), and a
        line longer than a block is read in overlapping chunks until a word is found in it.
        Without `ahocorasick_rs` (a platform without its wheel), the lines of `positions`'s
        per-word search.

        Args:
            text: The text.
            lo: Where the lines start (a line start).
            hi: Where they end (exclusive).
            lowered: Find the words (lower-case ASCII, or symbols without case) in
                `text[lo:hi].lower()` instead, for a text that `lowers_like_ascii`: its UTF-8
                is lower-cased as bytes (no lower-cased copy of the text is made).
            utf8_size: When given, the UTF-8 size of `text[lo:hi]` is appended to it when
                the search encoded that part whole (one block), so a caller that needs the
                size does not encode the text again; nothing is appended otherwise.

        Returns:
            Line indices, ascending, each once.

        Example:
            ```python
            assert CORE_SIGNALS.word_lines("ok\nan error\nok\nfailed\n", 0, 22) == [1, 3]
            ```
        """
        out: list[int] = []
        if lowered and not _AUTOMATON:
            return self.word_lines(text[lo:hi].lower(), 0, hi - lo)
        if not _AUTOMATON:
            line, pos = 0, lo
            for at in sorted(self._word_offsets(text, lo, hi)):
                line += text.count("\n", pos, at)
                pos = at
                if not out or out[-1] != line:
                    out.append(line)
            return out
        automaton = _automaton(self.words)
        # A whole text of up to `_WHOLE_TEXT_BLOCK` characters is one block: `text[0:hi]` is
        # the text itself (no copy of a quarter megabyte per block).
        whole = lo == 0 and hi == len(text) and hi <= _WHOLE_TEXT_BLOCK
        block = hi if whole else _WORD_BLOCK
        line = 0  # the index of the line at `pos`
        pos = lo
        while pos < hi:
            end = min(hi, pos + block)
            if end < hi:
                nl = text.rfind("\n", pos, end)
                if nl < 0:  # one line longer than a block
                    nl = text.find("\n", end, hi)
                    end = hi if nl < 0 else nl
                    if _long_line_holds(automaton, self.words, text, pos, end, lowered=lowered):
                        out.append(line)
                    if nl < 0:
                        break
                    pos, line = nl + 1, line + 1
                    continue
                end = nl + 1
            data = text[pos:end].encode("utf-8", "surrogatepass")
            if utf8_size is not None and pos == lo and end == hi:
                utf8_size.append(len(data))  # the whole part in one block
            if lowered:
                data = data.lower()
            counted, at_line, line_end = 0, line, -1
            for _, start, _ in automaton.find_matches_as_indexes(data):
                if start < line_end:
                    continue  # this line is found already
                at_line += data.count(b"\n", counted, start)
                counted = start
                out.append(at_line)
                nl_at = data.find(b"\n", start)
                line_end = len(data) if nl_at < 0 else nl_at + 1
            # The block's newlines are its UTF-8's `\n` bytes (no other character's bytes
            # hold one): those before the last match are counted already.
            line = at_line + data.count(b"\n", counted)
            pos = end
        return out

    def pattern_positions(
        self, text: str, lo: int = 0, hi: int | None = None, *, shapes: bool = True
    ) -> set[int]:
        r"""Offsets in `text[lo:hi]` where a shape or a line-start pattern matches.

        Args:
            text: The text.
            lo: Where the search starts.
            hi: Where it ends (exclusive).
            shapes: Whether to search the shapes too (`False`: the line-start patterns
                only, for a part whose shapes were searched already).

        Returns:
            The offsets (line-start patterns at their line's first character; the line at
            `lo` only when `lo` is 0).

        Example:
            ```python
            assert CORE_SIGNALS.pattern_positions("a.c:1:2: x\n") == {3}
            ```
        """
        end = len(text) if hi is None else hi
        out: set[int] = set()
        for pattern in self.shapes if shapes else ():
            out.update(m.start() for m in pattern.finditer(text, lo, end))
        for pattern in self.line_starts:
            if lo == 0 and pattern.match(text, 0, end):
                out.add(0)
            out.update(m.start() + 1 for m in _at_line_start(pattern).finditer(text, lo, end))
        return out


_WORD_BLOCK = 1 << 18
"""Characters of text encoded and searched at once by `Signals.word_lines`."""
_WHOLE_TEXT_BLOCK = 1 << 22
"""`Signals.word_lines` reads a whole text of up to this many characters as one block."""


@lru_cache(maxsize=16)
def _automaton(words: tuple[str, ...]) -> BytesAhoCorasick:
    """One automaton of every word's UTF-8 (built once per set of words)."""
    return BytesAhoCorasick(
        [word.encode("utf-8", "surrogatepass") for word in words],
        matchkind=MatchKind.LeftmostFirst,
    )


def _long_line_holds(
    automaton: BytesAhoCorasick,
    words: tuple[str, ...],
    text: str,
    lo: int,
    hi: int,
    *,
    lowered: bool = False,
) -> bool:
    """Whether the line `text[lo:hi]` (longer than a block) holds a word: chunk by chunk."""
    overlap = max(map(len, words), default=1) - 1
    for at in range(lo, hi, _WORD_BLOCK):
        data = text[at : min(hi, at + _WORD_BLOCK + overlap)].encode("utf-8", "surrogatepass")
        if automaton.find_matches_as_indexes(data.lower() if lowered else data):
            return True
    return False


_LOWERS_TO_ASCII = ("\u0130", "\u212a")
"""The only characters past ASCII whose `str.lower` holds an ASCII character (`İ` -> `i̇`,
the Kelvin sign -> `k`; `tests/property/test_signal_lines.py` checks every code point)."""


def lowers_like_ascii(text: str, lo: int = 0, hi: int | None = None) -> bool:
    """Whether `text[lo:hi].lower()` differs from it only where an ASCII letter is lowered.

    Then the lower-cased text has the same length, and in its UTF-8 every ASCII byte is
    that of the text's UTF-8 lower-cased as bytes (the other characters, lowered or not,
    stay bytes past ASCII), so the words of `ALL_SIGNALS` (lower-case ASCII, or symbols
    without case) are found in either alike; and its patterns (ASCII, compiled with
    `re.IGNORECASE` or without letters) match the text where they match the lowered text.

    Args:
        text: Any text.
        lo: Where the part to ask about starts.
        hi: Where it ends (exclusive; `None`: the end of the text). No copy of it is made.

    Returns:
        `False` when it holds `İ` or the Kelvin sign.

    Example:
        ```python
        assert lowers_like_ascii("ÉRROR: x") and not lowers_like_ascii("\u212aILLED")
        assert lowers_like_ascii("\u212aILLED x", 1)
        ```
    """
    end = len(text) if hi is None else hi
    return all(text.find(c, lo, end) < 0 for c in _LOWERS_TO_ASCII)


_LINE_START_PATTERNS: dict[str, re.Pattern[str]] = {}


def _at_line_start(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """`pattern` (anchored with `^`) after a newline, which the engine skips to."""
    found = _LINE_START_PATTERNS.get(pattern.pattern)
    if found is None:
        found = re.compile("\n(?:" + pattern.pattern.removeprefix("^") + ")", pattern.flags)
        _LINE_START_PATTERNS[pattern.pattern] = found
    return found


_DIAGNOSTIC_SHAPE = re.compile(r":\d{1,9}:\d{1,9}: ")
# Possessive (`{m,n}+`: no backtracking into a run): what follows each run cannot start
# inside it (an escape's parameter, intermediate and final bytes are disjoint classes; no
# branch after the prefix starts with an escape, a `\r` or a blank; a `)`, `.` or blank is
# not a digit), so giving a character back never finds a match, and the patterns match
# exactly where their backtracking forms do, without trying every shorter run at each line
# start (`tests/property/test_perf15a_rewrites.py` holds them against those forms).
_ANSI_PREFIX = r"(?:\x1b\[[0-?]{0,20}+[ -/]{0,4}+[@-~]|\r){0,8}+[ \t]{0,40}+"
_ITEM_START = re.compile("^" + _ANSI_PREFIX + r"\d{1,5}+\) ")
_ANY_START = re.compile(
    "^" + _ANSI_PREFIX + r"(?:\d{1,5}+[.)] |_{3,}+ |={3,}+ |\$ |> |\+ |##\[group\]run )",
    re.IGNORECASE,
)

ALL_SIGNALS = Signals(
    words=(
        *("abort", "actual", "arn", "cannot", "conflict", "could not", "denied", "deprecat"),
        *("err", "except", "exit", "expect", "fail", "fatal", "finished:", "incompatible"),
        *("invalid", "killed", "missing", "non-zero", "not found", "no such", "not ok"),
        *("ok, but", "panic", "received", "refused", "return", "segmentation", "status"),
        *("timeout", "timed out", "traceback", "unable", "undefined", "unexpected"),
        *("unresolved", "rc ", "rc:", "rc=", "$ ", "✗", "✖", "×", "✘"),
    ),
    shapes=(_DIAGNOSTIC_SHAPE,),
    line_starts=(_ANY_START,),
)
"""Every kind of signal `line_salience` reads, in lower-cased text."""

CORE_SIGNALS = Signals(
    words=(
        *("rror", "RROR", "xcept", "XCEPT", "raceback", "fail", "Fail", "FAIL", "atal", "ATAL"),
        *("anic", "ERR!", "bort", "enied", "annot", "egmentation", "illed", "xit", "non-zero"),
        "$ ",
    ),
    shapes=(_DIAGNOSTIC_SHAPE,),
    line_starts=(_ITEM_START,),
)
"""The signals worth finding in every part of a long text however far from its end (error
words, exit statuses, prompts, numbered failure entries, diagnostics), in the text as
printed (no lower-cased copy of a huge text is made)."""

_PROBE = 600
"""The kind of a line shows in its first characters; longer lines are read that far."""

# `[a-z]+` words that stand alone: not part of an identifier, a path, a file name or a
# flag (`test_failed`, `src/errors/x.go`, `errors.go`, `--fail-fast`, `e2e-failed`).
_WORD_RE = re.compile(r"(?<![\w/\\.@$-])[a-z]+(?![\w/\\@$]|[.-][a-z0-9])")
# An exception or error class that reports: `ValueError: x`, a line that is or starts with a
# class name (`java.lang.IllegalStateException`), `Caused by: java.io.IOException: x`.
_CLASS_SUFFIXES = ("Error", "Exception", "Failure")
_IDENT = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$.")
# Error words that report nothing (`0 errors`, `errors: 0`, `no failures`, `error messages`).
_BENIGN_RE = re.compile(
    r"\b(?:0|no|zero|without)\s+(?:errors?|failures?|failed)\b"
    r"|\b(?:errors?|failures?|failed)\s*[:=]\s*0\b"
    r"|\berrors?\s+(?:messages?|reporting|handling|handlers?|pages?|codes?\b(?!\s*[:=]))"
    r"|\bon[ _-](?:error|failure)\b|\bif\s+(?:error|failed)\b",
)
# An error *labelled* as such, in the label forms every ecosystem uses: the word starts the
# line or the message (after `path:line:col: ` or `[tag] `) and ends in a colon, or it is
# shouted (searched in the lower-cased line; `_SHOUTED_PARTS` in the line as printed).
_LABEL_PARTS = (
    ((), re.compile(r"^\s{0,40}[^\w\s]{0,4}(?:error|fatal|panic|exception|err|failure)\b")),
    (
        ("error", "fatal", "panic", "exception"),
        re.compile(r"[:\]]\s{0,4}(?:error|fatal|panic|exception)(?:\[\w{1,12}\])?:"),
    ),
    (("traceback",), re.compile(r"\btraceback\b")),
    (("segmentation fault",), re.compile(r"\bsegmentation fault")),
    (("core dumped",), re.compile(r"\bcore dumped")),
    (("panicked at",), re.compile(r"\bpanicked at\b")),
)
_SHOUTED_WORDS = ("ERROR", "FATAL", "FAIL", "PANIC")
_SHOUTED_PARTS = (
    ((), re.compile(r"^\W{0,8}(?:ERROR|FATAL|FAILED|FAILURE|PANIC)\b")),  # starts the line
    (_SHOUTED_WORDS, re.compile(r"[\[(<](?:ERROR|FATAL|FAILED|FAILURE|PANIC)[\])>]")),  # a level
    (_SHOUTED_WORDS, re.compile(r"\b(?:ERROR|FATAL|FAILED|FAILURE|PANIC)(?::|!| \*\*\*)")),
    (("ERR!",), re.compile(r"\bERR!")),
)
_Parts = tuple[tuple[tuple[str, ...], re.Pattern[str]], ...]
"""The branches of an alternation, each with literals one of which every match of it holds
(none: an anchored branch, tried at the start only)."""


def _alternation(parts: _Parts) -> re.Pattern[str]:
    """The branches as one pattern (what `_found` answers for; the tests read it)."""
    return re.compile("|".join(p.pattern for _, p in parts), parts[0][1].flags)


def _found(parts: _Parts, text: str, guard: str) -> bool:
    """Whether `_alternation(parts)` is found in `text`, searched branch by branch.

    Each branch is searched only when `guard` (the text, or its lower case for a case-blind
    ASCII one) holds one of its literals. Most lines hold none, so most branches are not
    searched: one search of the alternation tries every branch at every character.
    """
    for literals, pattern in parts:
        if literals and not any(map(guard.__contains__, literals)):
            continue
        if pattern.search(text) is not None:
            return True
    return False


_LABEL_RE = _alternation(_LABEL_PARTS)
_SHOUTED_RE = _alternation(_SHOUTED_PARTS)
# A warning reported as such (a label), not the word in prose (`1 warning`, `warn uplevel`).
_WARNING_LABEL_RE = re.compile(
    r"(?i:\bwarn(?:ing)?s?\b\s{0,2}[:!\]]|\[warn(?:ing)?\])|\bWARN(?:ING)?\b|\bDEPRECATED\b"
    r"|^\W{0,8}(?i:warn(?:ing)?|deprecat)|(?i:\bdeprecated\b)"
)
_WERROR_RE = re.compile(
    r"\bFailing due to -Werror|\bwarnings? (?:being |are |is )?treated as errors?", re.IGNORECASE
)
# A count of failures, or the header of a failure report. A tally's `Failed: 2` counts when
# the number ends its item (`Passed: 5986, Failed: 2, Skipped: 631`, `| FAILED: 1 ]`), not
# when a status or a code follows (`failed: 404 No error`). Case-blind: its literals are
# looked for in the lower-cased line when that is ASCII (`İ` and `ſ` match `i` and `s`).
_SUMMARY_PARTS = (
    (
        (" fail", " error"),
        re.compile(r"(?<![\d.])[1-9]\d{0,8} (?:failed|failures?|errors?)\b", re.IGNORECASE),
    ),
    (("failures", "errors"), re.compile(r"\b(?:failures|errors)\b\W{0,3}[1-9]", re.IGNORECASE)),
    (
        ("failed:",),
        re.compile(r"\bfailed:\s{0,8}[1-9]\d{0,8}(?=\s*(?:[,;|\])]|$))", re.IGNORECASE),
    ),
    (
        (),
        re.compile(
            r"^\W{0,8}(?:failed tests|tests in error|failing tests|failures!?|errors!?|"
            r"=+ (?:failures|errors|short test summary info) =+)\W{0,8}$",
            re.IGNORECASE,
        ),
    ),
)
_SUMMARY_RE = _alternation(_SUMMARY_PARTS)


def _summary(head: str, low: str) -> bool:
    """Whether `_SUMMARY_RE` is found in a line's head (`low`: its lower case)."""
    if head.isascii():
        return _found(_SUMMARY_PARTS, head, low)
    return _SUMMARY_RE.search(head) is not None


# Marks that alone report a failed entry: a test runner's cross, TAP's `not ok`.
_FAILURE_MARKS = r"[✗✖×✘]\ |not\ ok\b"
# An entry of a failure list, or a diagnostic: the shape of the line, not its words.
_ITEM_RE = re.compile(
    r"^\s{0,40}(?:\d{1,5}\)\ \S"  # `1) SolverTest::testX`
    r"|\d{1,5}\.\ (?:Failure|Error)\b"
    r"|(?:FAIL|FAILED|ERROR|ERRORED)\ [\w./\\:\[-]"  # `FAILED tests/x.py::y`
    r"|" + _FAILURE_MARKS + r"|---\ FAIL\b"
    r"|_{3,}\ [^\n]{1,300}\ _{3,}\s*$)",  # pytest's `____ test_x ____`
)
_ITEM_SUFFIXES = (" FAIL", " FAILED", " ERROR", "...FAIL", "...FAILED", "...ERROR")
# An entry whose mark alone reports a failure, with no error word; a TAP entry whose
# directive (todo, skip) says the failure is expected reports none.
_FAILURE_MARK_RE = re.compile(r"^\s{0,40}(?:" + _FAILURE_MARKS + r")(?!.*\#\s*(?i:todo|skip))")
# A tool's diagnostic `path:line:column: message` (compilers, linters, type checkers).
_DIAGNOSTIC_RE = re.compile(r"^(?:\s{0,40}(?:[A-Za-z]:)?[\w./\\@+-]{1,400}:\d{1,9}:\d{1,9}:\ \S)")
# A line that is a warning report as a whole (a leading level, or a diagnostic's kind).
_WARNING_LINE_RE = re.compile(
    r"^(?:"
    r"\s{0,40}(?:\[?[\d:.,/TZ+-]{6,40}\]?\s{1,4})?"
    r"(?:npm\ WARN\b|\[WARN(?:ING)?\]|WARN(?:ING)?\b:?|[Ww]arning:|W:\ |w:\ |\[warn\])"
    r"|\s{0,40}\S{1,400}?:\d{1,9}(?::\d{1,9})?:\s{0,4}(?:\[?\w{1,20}\]?\s{0,4})?warning\b"
    r")",
)
# A check or test reported as passed (`... ok`, `checking for x... no`), or a runner's
# SKIP/PASS line (it names a test; it reports no failure).
_PASSING_SUFFIX_RE = re.compile(
    r"(?:\.\.\.|…)\s{0,8}(?:ok|passed|pass|skipped|done|yes|no)\b[.!]?\s*$"
    r"|(?<=\S)\s(?:PASSED|ok)\s{1,4}\[\s{0,3}\d{1,3}%\]\s*$",
    re.IGNORECASE,
)
# A pass verdict in a column of its own at the end of the line (`name:   OK (0.01s)`,
# `name      PASSED`): `_in_pass_column` reads the gap before it, however wide.
_PASS_COLUMN_RE = re.compile(
    r"(?<!\S)(?:OK|PASS|PASSED|passed)(?: \([\d.]{1,12}m?s\))?[.!]?$", re.IGNORECASE
)
_PASS_COLUMN_CHARS = 24
"""The longest verdict `_PASS_COLUMN_RE` matches (`PASSED (123456789.12ms).`)."""
_PASSING_START_RE = re.compile(
    r"^(?:"
    r"\s{0,40}(?:(?:SKIP|SKIPPED|XFAIL|XFAILED|PASS|PASSED|XPASS|OK)\b(?!:?\s*$)(?!,\s*but\b)"
    r"|[✓✔] )"
    r")"
)
_FAIL_AFTER_RE = re.compile(r"(?<![X\w])FAIL")

# --------------------------------------------------------------------------- exit status

# Exit statuses, searched in the lower-cased line (each branch starts with a literal).
_EXIT_RE = re.compile(
    r"exit(?:ed)?(?: with)? (?:code|status)\W{0,3}(-?\d{1,9})"
    r"|exited with\W{0,3}(-?\d{1,9})"
    r"|make(?:\[\d{1,4}\])?: \*\*\* \[[^\]\n]{0,400}\] error (\d{1,9})"
    r"|returned (?:non-zero )?(?:exit )?(?:status|code) (-?\d{1,9})"
    r"|command failed with (?:exit )?(?:code|status) (-?\d{1,9})"
    r"|return ?code\W{0,3}(-?\d{1,9})"
)
_BARE_EXIT_RE = re.compile(
    r"^(?:"
    r"\s{0,40}(?:\[[^\]\n]{0,80}\]\s{0,8})?(?:exit|rc|status)\s{0,4}[:=]\s{0,4}(-?\d{1,9})\s*$"
    r")"
)
_EXIT_HINTS = ("exit", "error ", "return", "status", "rc")
# A build's or a step's failure verdict (CI systems and build tools).
_STEP_END_RE = re.compile(
    r"BUILD (?:FAILED|FAILURE)"
    r"|FAILURE: Build failed"
    r"|The command \"[^\"\n]{1,400}\" (?:failed|exited with [1-9])"
    r"|npm ERR! code ELIFECYCLE"
    r"|error: Recipe [^\n]{1,200} failed"
    r"|Command failed\b"
)
_STEP_START_RE = re.compile(r"^(?:Finished: (?:FAILURE|ABORTED|UNSTABLE)|##\[error\])")
_STEP_LITERALS = (
    "BUILD F",
    "Build failed",
    'command "',
    "ELIFECYCLE",
    "error: Recipe ",
    "Command failed",
)
"""Every match of `_STEP_END_RE` holds one of these (each branch one), in the line as printed."""
_STEP_STARTS = ("Finished: ", "##[error]")
"""Every match of `_STEP_START_RE` starts with one of these."""

# --------------------------------------------------------------------------- continuation

_CONTINUATION_RE = re.compile(
    r"""
    ^(?:
    \s+at\ \S | \s*at\ [\w$.<]{1,400}\( | \s*File\ "[^"\n]{0,400}",\ line\ \d | \s+\.\.\.\ \d+\ more
    | \s*\#\d{1,4}\ +(?:0x[0-9a-f]|\S{1,400}\ in\ ) | \s*from\ \S{1,400}:\d | \s*(?:E|>)\ {2}
    | \s*Caused\ by: | \s*Also: | \s*\^+\s*$ | \s*~+(?:\^~*)?\s*$ | \s*\|
    | \s*[-+](?![-+])\ ?\S | \s*(?:---|\+\+\+)\ \S | \s*@@[ ]
    | \s*(?:Expected|Actual|Received|expected|actual)\b
    | \s*\(\S{1,400}\ [\d.\w-]{1,80}\)\ \S{1,400}:\d | \s*\S{1,400}\.\w{1,5}:\d
    | \s{2,}\S | \t\S
    )
    """,
    re.VERBOSE,
)

_CONTINUATION_STARTS = "aFfE>CA^~|-+@eR(#"
"""The characters a line that `_CONTINUATION_RE` matches can start with, when it starts with
no blank and holds no `:` (the `path.ext:12` branch reads anything up to its `:`; every other
branch starts with a blank or, after none, with one of these)."""


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
    head = line[:400]
    first = head[:1]
    if first in _CONTINUATION_STARTS or first.isspace() or ":" in head:
        return _CONTINUATION_RE.match(head) is not None
    return False  # most lines: no branch of the pattern can start here (no regex run)


# --------------------------------------------------------------------------- line kinds


def _words(low: str) -> set[str]:
    return set(_WORD_RE.findall(low))


def _class_named(head: str) -> bool:
    """Whether an exception or error class reports (`ValueError: x`, `java.lang.FooException`).

    The class name ends in `Error`, `Exception` or `Failure`; it reports when it starts the
    line (after blanks, pytest's `E`, `Caused by:`), or stands in parentheses (`**
    (MatchError)`). A lower-camel name (`safeError`: a variable in echoed code), a class
    inside a sentence and the bare word (prose) are not reports.
    """
    for suffix in _CLASS_SUFFIXES:
        at = head.find(suffix)
        while at >= 0:
            end = at + len(suffix)
            start = at
            while start > 0 and head[start - 1] in _IDENT:
                start -= 1
            token = head[start:end].lstrip(".")
            after = head[end : end + 2]
            ends_word = end >= len(head) or head[end] not in _IDENT
            is_class = token != suffix and (token[:1].isupper() or "." in token)
            if ends_word and is_class:
                before = head[:start].strip()
                reports = (
                    (head[start - 1 : start] == "(" and after[:1] == ")")
                    or before in ("", "E")
                    or before.endswith(("Caused by:", "Exception in thread"))
                )
                if reports:
                    return True
            at = head.find(suffix, end)
    return False


def _error_words(head: str, low: str, words: set[str]) -> set[str]:
    """The error words of a line that report something (benign phrases and prose removed)."""
    found = words & _ERROR_WORDS
    if any(map(low.__contains__, _ERROR_PHRASES)):
        found = found | {"not found"}
    if not found:
        return found
    if _BENIGN_RE.search(low):
        found = _words(_BENIGN_RE.sub(" ", low)) & _ERROR_WORDS
    if found <= {"exception", "exceptions"} and not (
        low.lstrip(" \t[]():*-#>").startswith("exception") or _EXCEPTION_CONTEXT_RE.search(low)
    ):
        return set()
    if "(" in low:
        found = {word for word in found if not _only_code_uses(low, word)}
    return found


def _only_code_uses(low: str, word: str) -> bool:
    """Whether every use of an error word in a line names code, not a failure.

    A word that is called or defined (`fail(`, `def err(`) or is an element of an argument
    list (`(self, test, err)`, `(err, msg)`) is an identifier in printed source code (grep
    hits, echoed source lines); `Error(s)` and `failed (exit 1)` still report.
    """
    uses = [m.span() for m in _WORD_RE.finditer(low) if m.group() == word]
    return bool(uses) and all(_code_use(low, start, end) for start, end in uses)


def _code_use(low: str, start: int, end: int) -> bool:
    if low[end : end + 1] == "(":
        return low[end : end + 3] != "(s)"
    before = low[max(0, start - 2) : start].rstrip(" ")
    after = low[end : end + 8].lstrip(" ")[:1]
    if before.endswith(","):
        return after in (",", ")")
    return before.endswith("(") and after == ","


def exit_code_in(line: str) -> int | None:
    """The exit status a line states, if any.

    Args:
        line: One line.

    Returns:
        The status, or `None`.

    Example:
        ```python
        assert exit_code_in("make: *** [all] Error 2") == 2
        ```
    """
    return _exit_code(line[:_PROBE].lower())


def _exit_code(low: str) -> int | None:
    """`exit_code_in` of a line's lower-cased head."""
    if not any(map(low.__contains__, _EXIT_HINTS)):
        return None
    match = _EXIT_RE.search(low) or _BARE_EXIT_RE.match(low)
    if match is None:
        return None
    return int(next(g for g in match.groups() if g is not None))


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
    probe = line[:_PROBE]
    return _step_failure(probe, probe.lower())


def _step_failure(probe: str, low: str) -> bool:
    """`is_step_failure` of a line's head and its lower-cased head."""
    status = _exit_code(low)
    if status is not None:
        return status != 0
    if probe.startswith(_STEP_STARTS):
        return bool(_STEP_END_RE.search(probe) or _STEP_START_RE.match(probe))
    return any(map(probe.__contains__, _STEP_LITERALS)) and _STEP_END_RE.search(probe) is not None


def _passing(head: str) -> bool:
    """A runner's SKIP/PASS/XFAIL/OK line or a checked one (`✓ name`), unless it fails."""
    match = _PASSING_START_RE.match(head)
    return match is not None and _FAIL_AFTER_RE.search(head, match.end(), 80) is None


def _passing_suffix(head: str) -> bool:
    """`checking for syntax errors ... OK`, `name cannot include newline:    OK`: a pass."""
    tail = head.rstrip()[-16:].lower()
    if not ("ok" in tail or "pass" in tail or "..." in head or "…" in head):
        return False
    return _PASSING_SUFFIX_RE.search(head[-200:]) is not None or _in_pass_column(head)


def _in_pass_column(head: str) -> bool:
    """A pass verdict after a gap: two blanks or more, or `: ` (`name:` + padding + `OK`).

    A runner that pads its verdicts to a column of the terminal (hspec's `'x.purs' should
    fail with 'E':` + 150 blanks + `OK`) leaves a gap of any width: the gap is read back from
    the verdict (one `rstrip`), so its width costs no regex backtracking.
    """
    line = head.rstrip()
    verdict = _PASS_COLUMN_RE.search(line, max(0, len(line) - _PASS_COLUMN_CHARS))
    if verdict is None:
        return False
    before = line[: verdict.start()]
    name = before.rstrip()
    gap = len(before) - len(name)
    if gap >= 2:
        return bool(name)
    return gap == 1 and name.endswith(":") and not name[-2:-1].isspace() and len(name) > 1


def _is_item(head: str) -> bool:
    if _ITEM_RE.match(head):
        return True
    tail = head.rstrip()
    return tail.endswith(_ITEM_SUFFIXES) and ("  " in tail or "..." in tail)


def line_salience(line: str) -> float:
    """How much one line says about a failure: 0 (nothing) to `SALIENCE_EXIT`.

    Args:
        line: One line, cleaned for display (no ANSI codes), without its newline.

    Returns:
        A score: a failing exit status or build verdict, a failure count, an entry of a
        failure list, a labelled error, another error mention, a detail, a warning, or 0.

    Example:
        ```python
        assert line_salience('The command "make test" exited with 2.') == SALIENCE_EXIT
        assert line_salience("src/app.c:10:5: error: expected ';'") == SALIENCE_STRONG
        assert line_salience("all good") == 0.0
        ```
    """
    head = line[:_PROBE]
    low = head.lower()
    if not ALL_SIGNALS.in_line(low):
        return 0.0
    return salience_of(head, low)


def salience_of(head: str, low: str) -> float:
    """`line_salience` of a line known to hold a signal (its head and lower-cased head).

    Args:
        head: The line's first 600 characters.
        low: `head.lower()`.

    Returns:
        The score.

    Example:
        ```python
        assert salience_of("FATAL: x", "fatal: x") == SALIENCE_STRONG
        ```
    """
    if _step_failure(head, low):
        return SALIENCE_EXIT
    if _passing(head):
        return 0.0  # a runner's SKIP/PASS/XFAIL line names a test; it reports no failure
    if _passing_suffix(head):
        return 0.0  # `checking for syntax errors ... OK`: a check that passed
    words = _words(low)
    if words & _WARNING_WORDS and _WARNING_LINE_RE.match(head):
        # A warning report as a whole is a warning whatever else it mentions: `_kind_of`
        # gives no score between 0 and a warning's, so it need not be asked.
        return SALIENCE_WARNING
    return _kind_of(head, low, words)


def _kind_of(head: str, low: str, words: set[str]) -> float:
    errors = _error_words(head, low, words)
    if ("treated as error" in low or "-werror" in low) and _WERROR_RE.search(head):
        return SALIENCE_STRONG  # the warnings above it failed the build
    if errors and _summary(head, low):
        return SALIENCE_SUMMARY
    if _is_item(head) and (
        errors or head.lstrip()[:1].isdigit() or _FAILURE_MARK_RE.match(head) is not None
    ):
        return SALIENCE_ITEM
    if (errors or "rror" in head or "xception" in head) and (
        (errors and (_found(_LABEL_PARTS, low, low) or _found(_SHOUTED_PARTS, head, head)))
        or _class_named(head)
    ):
        return SALIENCE_STRONG
    if ":" in head and _DIAGNOSTIC_RE.match(head) and "warning" not in words:
        return SALIENCE_ITEM
    if errors:
        return SALIENCE_ERROR
    if (
        words & _DETAIL_WORDS
        or any(map(low.__contains__, _DETAIL_STEMS))
        or low.startswith("ok, but ")
        or (("expect" in low or "actual" in low or "received" in low) and _EXPECTED_RE.search(low))
    ):
        return SALIENCE_DETAIL
    if words & _WARNING_WORDS and _WARNING_LABEL_RE.search(head):
        return SALIENCE_WARNING
    return 0.0


def is_error_line(line: str) -> bool:
    """Whether one line is error evidence (an error word that reports, or a failing status).

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
    head = line[:_PROBE]
    low = head.lower()
    if _error_words(head, low, _words(low)):
        return not _passing(head)
    return _class_named(head) or is_step_failure(head)


# --------------------------------------------------------------------------- finding lines

# Case variants of the error words' stems, as tools print them. They are literals, found with
# `str.find` (C speed, linear on any text: no per-position regex attempt on runs of `x`, which
# starts several of them); `fail` counts only at a word's end. No lower-cased copy is made.
_KEYWORD_LITERALS = (
    "rror", "RROR", "xception", "XCEPTION", "raceback", "ailed", "ailure", "ailing",
    "FAIL", "Fail", "fail", "atal", "ATAL", "anic", "ANIC", "ERR!", "bort", "BORT",
    "denied", "annot", "egmentation", "Killed", "xit code", "xit status", "xited with",
    "non-zero",
)  # fmt: skip
_WORD_END_LITERAL = "fail"
# The same set as one regex (reference for the tests; the search does not use it).
_KEYWORD_RE = re.compile(
    "|".join(
        re.escape(lit) + (r"\b" if lit == _WORD_END_LITERAL else "") for lit in _KEYWORD_LITERALS
    )
)
_SCAN_WINDOW = 1 << 20
MAX_SCAN_CHARS = 24_000_000
"""One search reads at most this many characters of its region (from its start, or from its
end when searching backwards): each literal is then read over at most 24 MB, so the cost of a
search is bounded on any input (a huge text's middle past it is not searched)."""
_MAX_LINE_FOR_CONFIRM = 2_000


@dataclass(frozen=True, slots=True)
class ErrorLine:
    r"""One confirmed error line.

    Attributes:
        start: Offset of the line's first character.
        end: Offset just past the line's `\n` (or the end of the text).
        line_no: 1-based line number.
        line_text: The line without its line ending (cut to 2,000 characters).
        strong: Whether it labels its error (`error:`, `FATAL`, an exception class).
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


_KEY_HEX_RE = re.compile(r"(?<![0-9a-fA-Fx])(?:0x)?[0-9a-fA-F]{6,}\b")
_KEY_NUM_RE = re.compile(r"\d+")
_KEY_WS_RE = re.compile(r"\s+")
_KEY_QUOTED_RE = re.compile(r"'[^'\n]{0,200}'|\"[^\"\n]{0,200}\"")


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


def find_error_lines(
    text: str,
    *,
    start: int = 0,
    end: int | None = None,
    limit: int = 8,
    distinct: bool = True,
    reverse: bool = False,
    max_candidates: int = 4_000,
    max_scan: int = MAX_SCAN_CHARS,
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
        max_scan: Upper bound on the characters of the region searched: its first
            `max_scan` (its last when `reverse`), cut at a line boundary when there is one
            (see `scanned_region`).

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
    lo, hi = scanned_region(text, lo, hi, max_scan=max_scan, reverse=reverse)
    found: list[ErrorLine] = []
    seen_keys: set[str] = set()
    for line_start, line_end in _candidate_spans(text, lo, hi, reverse, max_candidates):
        line = text[line_start : min(line_end, line_start + _MAX_LINE_FOR_CONFIRM)]
        line = line.rstrip("\r\n")
        if not is_error_line(line):
            continue
        key = pattern_key(line)
        if distinct and key in seen_keys:
            continue
        seen_keys.add(key)
        found.append(
            ErrorLine(
                start=line_start,
                end=line_end,
                line_no=0,
                line_text=line,
                strong=_is_strong(line),
                key=key,
            )
        )
        if len(found) >= limit:
            break
    return _numbered(text, found)


def scanned_region(
    text: str, lo: int, hi: int, *, max_scan: int = MAX_SCAN_CHARS, reverse: bool = False
) -> tuple[int, int]:
    r"""The part of `text[lo:hi]` an error search reads: all of it, or at most `max_scan` chars.

    Args:
        text: The text.
        lo: Where the region starts.
        hi: Where it ends (exclusive).
        max_scan: How many characters a search reads at most.
        reverse: Keep the end of the region (a backward search) instead of its start.

    Returns:
        `(lo, hi)` of the part read, cut at a line start when one falls in the last
        (first, backwards) half of the allowance.

    Example:
        ```python
        assert scanned_region("abcd\nefgh\n", 0, 10, max_scan=6) == (0, 5)
        assert scanned_region("abcd\nefgh\n", 0, 10, max_scan=6, reverse=True) == (5, 10)
        ```
    """
    if hi - lo <= max_scan:
        return lo, hi
    if reverse:
        cut = hi - max_scan
        nl = text.find("\n", cut, hi - max_scan // 2)
        return (cut if nl < 0 else nl + 1), hi
    cut = lo + max_scan
    nl = text.rfind("\n", cut - max_scan // 2, cut)
    return lo, (cut if nl < 0 else nl + 1)


def _is_strong(line: str) -> bool:
    head = line[:_PROBE]
    low = head.lower()
    return (
        _found(_LABEL_PARTS, low, low) or _found(_SHOUTED_PARTS, head, head) or _class_named(head)
    )


_BACKWARD_BLOCK = 1 << 16


def _line_span(text: str, at: int, lo: int, hi: int) -> tuple[int, int]:
    start = max(lo, text.rfind("\n", lo, at) + 1)
    nl = text.find("\n", at, hi)
    return start, (hi if nl < 0 else nl + 1)


def _candidate_spans(
    text: str, lo: int, hi: int, reverse: bool, limit: int
) -> Iterator[tuple[int, int]]:
    """The `[start, end)` spans of the lines holding a keyword hit, each once, in order.

    Forward: one literal scan (`_forward_spans`). Backward: the region is read in line-aligned
    blocks from its end (one forward scan per block), so the cost is proportional to the part
    read.
    """
    count = 0
    if not reverse:
        for span in _forward_spans(text, lo, hi):
            if count >= limit:
                return
            yield span
            count += 1
        return
    pos = hi
    while pos > lo and count < limit:
        block_lo = max(lo, pos - _BACKWARD_BLOCK)
        if block_lo > lo:  # start the block at a line start: no line is split between blocks
            block_lo = max(lo, text.rfind("\n", lo, block_lo) + 1)
        spans = list(_forward_spans(text, block_lo, pos))
        for span in reversed(spans):
            if count >= limit:
                return
            yield span
            count += 1
        pos = block_lo


def _forward_spans(text: str, lo: int, hi: int) -> Iterator[tuple[int, int]]:
    """The spans of the lines of `text[lo:hi]` holding a keyword literal, in text order.

    With `ahocorasick_rs`, one automaton pass per window (`_automaton_spans`); without it,
    one `str.find` per literal and window (`_literal_spans`): the same spans.
    """
    if _AUTOMATON:
        return _automaton_spans(text, lo, hi)
    return _literal_spans(text, lo, hi)


_AUTOMATON_WINDOW = 1 << 18
"""Characters `_automaton_spans` reads at once (its copy of them, and their UTF-8, is the
memory it needs)."""
_SURROGATE_RE = re.compile(r"[\ud800-\udfff]")
_LONGEST_LITERAL = max(map(len, _KEYWORD_LITERALS))


@lru_cache(maxsize=1)
def _keyword_automaton() -> AhoCorasick:
    return AhoCorasick(_KEYWORD_LITERALS)


def _automaton_spans(text: str, lo: int, hi: int) -> Iterator[tuple[int, int]]:
    """`_literal_spans` in one Aho-Corasick pass (every occurrence) over each window.

    A window ends at its last newline (no literal holds one), or, inside a line longer than
    a window, reads the longest literal's length minus one past its end so that no
    occurrence is cut; lone surrogates (which the automaton cannot read) become U+FFFD in
    its copy, which no literal holds. Windows are read only as far as the lines asked for.
    """
    automaton = _keyword_automaton()
    pos, line_end = lo, lo
    while pos < hi:
        end = min(hi, pos + _AUTOMATON_WINDOW)
        cut = end
        if end < hi:
            nl = text.rfind("\n", pos, end)
            cut = nl + 1 if nl >= 0 else end
        read_end = (
            cut if cut == hi or text[cut - 1] == "\n" else min(hi, cut + _LONGEST_LITERAL - 1)
        )
        window = text[pos:read_end]
        try:
            matches = automaton.find_matches_as_indexes(window, overlapping=True)
        except UnicodeEncodeError:
            window = _SURROGATE_RE.sub("\ufffd", window)
            matches = automaton.find_matches_as_indexes(window, overlapping=True)
        starts = sorted(
            pos + start
            for i, start, stop in matches
            if pos + start < cut
            and (_KEYWORD_LITERALS[i] != _WORD_END_LITERAL or _word_ends(text, pos + stop, hi))
        )
        for at in starts:
            if at < line_end:
                continue  # this line is yielded already
            span = _line_span(text, at, lo, hi)
            yield span
            line_end = span[1]
        pos = max(cut, line_end)


def _literal_spans(text: str, lo: int, hi: int) -> Iterator[tuple[int, int]]:
    """The spans of the lines of `text[lo:hi]` holding a keyword literal, in text order.

    Each literal keeps its next occurrence (or how far it is known absent), so every literal
    reads each part of the text at most once, in windows of `_SCAN_WINDOW` characters: the
    scan stops soon after the last line it yields, and its cost is linear in what it read.
    """
    # known[i]: the next start of literal i at or after pos when hit[i], else the first
    # position from which literal i is not yet searched (no start in [pos, known[i])).
    n = len(_KEYWORD_LITERALS)
    known = [lo] * n
    hit = [False] * n
    pos = lo
    while pos < hi:
        for i in range(n):
            if known[i] < pos:
                known[i], hit[i] = pos, False
        at = min(known)
        if at >= hi:
            return
        i = known.index(at)
        literal = _KEYWORD_LITERALS[i]
        if not hit[i]:
            stop = min(hi, at + _SCAN_WINDOW + len(literal) - 1)
            found = text.find(literal, at, stop)
            if found >= 0:
                known[i], hit[i] = found, True
            else:
                known[i] = hi if stop >= hi else stop - len(literal) + 1
            continue
        if literal == _WORD_END_LITERAL and not _word_ends(text, at + len(literal), hi):
            known[i], hit[i] = at + 1, False
            continue
        span = _line_span(text, at, lo, hi)
        yield span
        pos = span[1]


def _word_ends(text: str, at: int, hi: int) -> bool:
    r"""Whether a word ends just before `at` (`\b` after a word character; `hi` ends the text)."""
    return at >= hi or not (text[at].isalnum() or text[at] == "_")


def _numbered(text: str, found: list[ErrorLine]) -> list[ErrorLine]:
    """The hits with their 1-based line numbers (newlines counted once, in offset order)."""
    if not found:
        return found
    numbers: dict[int, int] = {}
    pos = count = 0
    for start in sorted({hit.start for hit in found}):
        count += text.count("\n", pos, start)
        pos = start
        numbers[start] = count + 1
    return [
        ErrorLine(
            start=h.start,
            end=h.end,
            line_no=numbers[h.start],
            line_text=h.line_text,
            strong=h.strong,
            key=h.key,
        )
        for h in found
    ]


# --------------------------------------------------------------------------- exit status


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


def find_exit_status(
    text: str, *, tail_chars: int = 64_000, newlines: int | None = None
) -> ExitStatus | None:
    r"""The last exit status stated in the last `tail_chars` characters of `text`.

    Recognises `exit code N`, `exit status N`, `exited with N`, `Process finished with exit
    code N`, `Process completed with exit code N`, `make: *** [...] Error N`, `returned
    non-zero exit status N`, and a bare `exit: N` / `rc=N` line. A later failing status wins
    over an earlier success only when it is the last one stated.

    Args:
        text: Command output.
        tail_chars: How much of the end of `text` to search.
        newlines: The number of `\n` in `text`, when the caller knows it (the line number
            of a status far from the start is then found without counting them again).

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
        code = exit_code_in(line)
        if code is not None:
            line_index = len(lines) - 1 - back
            before = (
                text.count("\n", 0, start) if newlines is None else newlines - region.count("\n")
            )
            line_no = before + line_index + 1
            return ExitStatus(code=code, line_no=line_no, line_text=line.rstrip("\r")[:2_000])
    return None
