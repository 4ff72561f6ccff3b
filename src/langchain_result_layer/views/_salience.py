"""Which lines of a long command output or log explain what happened.

Every line gets a priority; a view shows the top-`k` lines for the largest `k` that fits its
budget, so evidence is given up last and in a fixed order. Priorities come from

- the line's own salience (`core.evidence.line_salience`): failing exit status and build
  verdicts, exceptions and compiler errors, failure-list entries, other errors, assertion
  details and warnings;
- context: lines after an error that continue it (stack frames, `Caused by:`, indented
  detail, diff lines) inherit a decaying share of its priority, and the lines just before it
  a smaller one;
- position: the last lines of a command's output (exit status, summary) and its first lines
  (what ran) have a floor; errors inside the output of a step that failed (the lines between
  a `$ command` prompt and the failure verdict that ends it) weigh more, and errors after the
  last verdict (cleanup steps) less;
- repetition: the third and later occurrences of the same error pattern weigh less, so one
  error repeated a thousand times does not crowd out the others.

Speed: a line is looked at only when a cheap filter (a few literal-heavy patterns searched
over the lower-cased raw text at C speed) says it may carry a signal, and it is cleaned for
display only when looked at. Inputs are analysed in full up to `FULL_ANALYSIS_CHARS`;
beyond that the first 256 kB and the last 1 MB are analysed in full, and the middle is
scanned with `core.evidence.find_error_lines` (C-speed keyword jumps) for its distinct
error lines, each analysed in a small window of the lines around it (its stack frames).
No per-line Python work runs over the whole of a huge input.
"""

from __future__ import annotations

import bisect
import heapq
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import accumulate, repeat
from operator import add

from langchain_result_layer.core.evidence import (
    SALIENCE_ERROR,
    SALIENCE_EXIT,
    SALIENCE_ITEM,
    SALIENCE_SUMMARY,
    SALIENCE_WARNING,
    find_error_lines,
    is_continuation_line,
    line_salience,
    pattern_key,
)
from langchain_result_layer.core.normalize import clean_for_display
from langchain_result_layer.views.text import utf8_length

__all__ = ["DEFAULT_SETTINGS", "Analysis", "SalienceSettings", "analyse", "windows_of"]

FULL_ANALYSIS_CHARS = 4_000_000
"""Inputs up to this size are analysed line by line in full."""

_HEAD_PART_CHARS = 256_000
_TAIL_PART_CHARS = 1_000_000
_MIDDLE_HITS = 48
_MIDDLE_CANDIDATES = 1_200

_AFTER_SPAN = 150
_DELIMITED_SPAN = 40
_DELIMITED_SHARE = 0.7
_BEFORE_SPAN = 3
_CONT_DECAY = 0.99
_PLAIN_DECAY = 0.8
_BEFORE_DECAY = 0.55
_TAIL_FLOOR = 6.5
_TAIL_DECAY = 0.6
_HEAD_FLOOR = 1.0
_FAILED_STEP_BOOST = 1.4
_AFTER_VERDICT_DAMP = 0.6
_FIRST_ERROR_BOOST = 1.25
_ITEM_REPEAT = 0.97
_OTHER_REPEAT = 0.75
_PRE_VERDICT_FLOOR = 6.0
_PRE_VERDICT_LINES = 15
_PRE_VERDICT_DECAY = 0.88
_HEADER_SPAN = 40
_ITEM_RUN_GAP = 3
_ITEM_RUN_STEP = 0.002
_HEADER_SHARE = 0.7
_RECENCY_MIN = 0.55
_GROUP_DIGITS_RE = re.compile(r"\d+")
_STAMP_TOKEN_RE = re.compile(
    r"^(?:[\d:.,/+\-TZ\[\]()]+|Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec|-)$"
)
_LOG_RECORD_RE = re.compile(
    r"^\s*(?:\[?\d{4}-\d\d-\d\d[T ]\d|\w{3} +\d+ \d\d:\d\d:\d\d|\[?\d\d:\d\d:\d\d[.,]\d"
    r"|\[?(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|SEVERE)\]?\s+[\w.$-]+:\s)"
)
_LOG_RECORD_DAMP = 0.65


@dataclass(frozen=True, slots=True)
class SalienceSettings:
    r"""The weights of the rules that are a judgement call (tuned on held-out logs).

    Example:
        ```python
        analyse("error: x\n", settings=SalienceSettings(repeat_block=0.4))
        ```
    """

    outside_failed_step: float = 0.7
    """Weight of an error outside every step known to have failed (a `$ command` prompt
    to its failure verdict), when such steps exist: an install step's warnings and a
    license text's words are rarely the cause."""

    repeat_block: float = 0.5
    """Weight of a later copy of an error block already seen (same error line and next
    line, numbers folded): the first copy carries the block, the copies its count."""

    exact_repeat: float = 0.3
    """Factor, per copy already shown, for a line identical (numbers folded) to a shown
    one: a recursion's repeated frames and a repeated message add nothing."""

    trace_tail_frames: int = 4
    """How many of the last lines of a stack trace (the entry point: the test method,
    the runner) keep most of the error's weight however deep the trace is."""

    trace_tail_share: float = 0.75
    """The share of the error's weight those last lines keep."""


DEFAULT_SETTINGS = SalienceSettings()


def _copy_key(text: str) -> str:
    """What makes two lines copies of each other: the same text.

    Numbers count: two compiler errors at different lines, or two assertions at different
    lines, are two failures.
    """
    return text.strip()


def _group_key(text: str) -> str:
    """The first three words of a line after its timestamp; numbers folded, paths as `*`."""
    words: list[str] = []
    for token in text.split(None, 12):
        if not words and _STAMP_TOKEN_RE.match(token):
            continue  # timestamps and other leading numbers
        words.append("*" if ("/" in token or "\\" in token) else _GROUP_DIGITS_RE.sub("0", token))
        if len(words) == 3:
            break
    return " ".join(words)


_PROMPT_RE = re.compile(
    r"^\s*(?:\$|>|#\#\[group\]Run|\+) \S"
    # Travis prints a step's command after its fold and timing markers on the same line.
    r"|^travis_(?:fold|time):\S*?\$ \S"
)
# A stack frame in test code (`/test/`, `_test.rb`, `FooTest.bar(`, `test_x.py`).
_TEST_FRAME_RE = re.compile(
    r"[/\\](?:tests?|spec|specs|__tests__)[/\\]|_(?:test|spec)\.\w+[:(]|\btest_\w+\.py"
    r"|\w(?:Test|Tests|Spec|IT)\.\w+\("
)
# A labelled separator line (`========DIFF========`, `----- END -----`): it delimits a block.
_SEPARATOR_RE = re.compile(r"^\s*([=\-_*#~+])\1{3,}\s*[A-Za-z0-9][A-Za-z0-9 ]{0,30}?\s*\1{4,}\s*$")
_NOISE_RE = re.compile(
    r"^\s*(?:travis_(?:fold|time)|Download(?:ing|ed)\b|\[INFO\] Download|Progress \(\d|"
    r"Receiving objects|Resolving deltas|remote: (?:Counting|Compressing)|\.{8,})"
)


# A cheap superset of the lines `line_salience` scores above 0 or that are prompts, found in
# the lower-cased raw text. Written as a trie (one branch per first letter) so that the
# regex engine tries one branch per position, not forty: about 12 ms per MB.
_SIGNAL_WORDS_RE = re.compile(
    r"\$ "
    r"|:\d+:\d+: "
    r"|a(?:il|nic|rn|tal)"
    r"|b(?:ort|uild)"
    r"|c(?:annot|aused by|ould not|tual)"
    r"|denied"
    r"|e(?:ceived|gmentation|precat|rr!|turn|\d{3})"
    r"|finished:"
    r"|i(?:med out|medout|me out|meout|ssing)"
    r"|killed"
    r"|n(?:able to|compatible|o space|on-zero|ot |valid)"
    r"|o(?:k, but|nflict|re dumped)"
    r"|r(?:aceback|c[ :=]|ecipe|rno|ror)"
    r"|ssert"
    r"|t(?:atus|ests? r(?:un|esult))"
    r"|undefined"
    r"|x(?:ception|it|pected)"
)
# Signals that must start a line (after escape codes and blanks).
_SIGNAL_LINE_START_RE = re.compile(
    r"[\n\r](?:\x1b\[[0-?]*[ -/]*[@-~])*[ \t]*"
    r"(?:=+ |\d{1,5}[.)] |[✗✖×✘] |e |_{3,} |[>+] \S|##\[group\]run )"
)
_MIDDLE_BEFORE = 5
_MIDDLE_AFTER = 40
_MIDDLE_WINDOW_CHARS = 16_000


def _with_middle_windows(
    raw: str, regions: list[_Region], middle: tuple[int, int]
) -> list[_Region]:
    """Head, small regions around the distinct errors of the middle, tail."""
    lo, hi = middle
    hits = find_error_lines(
        raw, start=lo, end=hi, limit=_MIDDLE_HITS, max_candidates=_MIDDLE_CANDIDATES
    )
    windows: list[_Region] = []
    prev_end = lo
    for hit in hits:
        if hit.start < prev_end:
            continue  # inside the previous window
        start = hit.start
        for _ in range(_MIDDLE_BEFORE):
            if start <= prev_end or hit.start - start > _MIDDLE_WINDOW_CHARS // 4:
                break
            start = raw.rfind("\n", prev_end, start - 1) + 1
        start = max(start, prev_end)
        end = hit.end
        for _ in range(_MIDDLE_AFTER):
            if end >= hi or end - hit.end > _MIDDLE_WINDOW_CHARS:
                break
            nl = raw.find("\n", end, hi)
            end = hi if nl < 0 else nl + 1
        end = min(end, hi)
        first_line = hit.line_no - raw.count("\n", start, hit.start)
        windows.append(_split_region(raw, start, end, first_line))
        prev_end = end
    return [regions[0], *windows, *regions[1:]]


@dataclass(slots=True)
class Analysis:
    r"""Line priorities of one text.

    Attributes:
        total_lines: Lines of the text (split on `\n`).
        texts: Display text (cleaned, no line ending) of every line that has a priority.
        priority: Line number -> priority (only lines worth showing).
        own: Line number -> the line's own salience (anchors only).
        roles: Line number -> `exit`, `error`, `context`, `tail` or `head`.
        error_lines: Line numbers of error anchors (salience >= error), in text order.
        verdict_lines: Line numbers of failing exit statuses and build verdicts.
        patterns: Distinct error patterns among `error_lines`.
        partial: Whether the middle of a huge input was only scanned for distinct errors.
    """

    total_lines: int
    texts: dict[int, str] = field(default_factory=dict)
    priority: dict[int, float] = field(default_factory=dict)
    own: dict[int, float] = field(default_factory=dict)
    roles: dict[int, str] = field(default_factory=dict)
    error_lines: list[int] = field(default_factory=list)
    verdict_lines: list[int] = field(default_factory=list)
    patterns: int = 0
    partial: bool = False
    raw_chars: int = 0
    _ranked: list[int] | None = None
    _regions: list[_Region] = field(default_factory=list)
    _firsts: list[int] = field(default_factory=list)
    _raw_bytes: int | None = None
    settings: SalienceSettings = field(default_factory=lambda: DEFAULT_SETTINGS)

    def byte_size(self, raw: str) -> int:
        """UTF-8 size of the analysed text (computed once)."""
        if self._raw_bytes is None:
            self._raw_bytes = utf8_length(raw)
        return self._raw_bytes

    def _locate(self, line_no: int) -> tuple[_Region, int] | None:
        regions = self._regions
        k = bisect.bisect_right(self._firsts, line_no) - 1
        if k < 0:
            return None
        region = regions[k]
        i = line_no - region.first_line
        if i < len(region.raw_lines):
            return region, i
        return None

    def text(self, line_no: int) -> str | None:
        """Display text of a line, when the analysis holds it."""
        where = self._locate(line_no)
        if where is None:
            return None
        return where[0].text(where[1])

    def span(self, line_no: int) -> tuple[int, int] | None:
        """Raw `[start, end)` offsets of a line (end includes its newline)."""
        where = self._locate(line_no)
        if where is None:
            return None
        region, i = where
        return region.starts[i], region.starts[i + 1]

    def ranked(self) -> list[int]:
        """Line numbers by priority, with diminishing returns for repeated kinds of lines.

        Lines are taken greedily: a line whose group (its first words after the timestamp,
        numbers and paths folded) is already represented counts for less each time, so a
        block of a hundred similar lines does not crowd out everything else. Entries of
        failure lists decay slowly (each failed test matters); other lines quickly after the
        second of a group. Later lines come first on ties.
        """
        if self._ranked is None:
            self._ranked = self._greedy(dict(self.priority))
        return self._ranked

    def _greedy(self, effective: dict[int, float]) -> list[int]:
        """Lazy-greedy order with a repetition factor per group and per identical line.

        One heap entry per group holds the group's best remaining line, valued with the
        group's current factor (equivalent to lazy greedy, in O(n log n)). A line identical
        (numbers folded) to lines already taken is pushed back with a lower value before
        it is taken (values only ever go down, so the lazy order stays exact).
        """
        exact_repeat = self.settings.exact_repeat
        by_group: dict[str, list[int]] = {}
        solo: list[int] = []
        for ln in effective:
            if self.roles.get(ln, "context") in ("tail", "head", "exit"):
                solo.append(ln)
            else:
                by_group.setdefault(_group_key(self.texts.get(ln, "")), []).append(ln)
        # (-value, -line, taken from group (-1: solo), group key, identical copies applied)
        heap: list[tuple[float, int, int, str, int]] = []
        for key, lines in by_group.items():
            lines.sort(key=lambda ln: (effective[ln], ln))  # best last
            heap.append((-effective[lines[-1]], -lines[-1], 0, key, 0))
        heap.extend((-effective[ln], -ln, -1, "", 0) for ln in solo)
        heapq.heapify(heap)
        copies: dict[str, int] = {}
        order: list[int] = []
        while heap:
            neg_value, neg_ln, taken, key, applied = heapq.heappop(heap)
            line = -neg_ln
            exact = _copy_key(self.texts.get(line, ""))
            seen = copies.get(exact, 0) if exact else 0
            if seen > applied:
                factor = exact_repeat ** (seen - applied)
                heapq.heappush(heap, (neg_value * factor, neg_ln, taken, key, seen))
                continue
            order.append(line)
            if exact:
                copies[exact] = seen + 1
            if taken < 0:
                continue
            lines = by_group[key]
            lines.pop()
            if not lines:
                continue
            taken += 1
            nxt = lines[-1]
            item = self.own.get(nxt) == SALIENCE_ITEM
            line_factor = (
                _ITEM_REPEAT ** max(0, taken - 5) if item else _OTHER_REPEAT ** max(0, taken - 2)
            )
            heapq.heappush(heap, (-effective[nxt] * line_factor, -nxt, taken, key, 0))
        return order

    @property
    def first_error(self) -> int | None:
        """Line of the first error anchor."""
        return self.error_lines[0] if self.error_lines else None

    @property
    def last_error(self) -> int | None:
        """Line of the last error anchor."""
        return self.error_lines[-1] if self.error_lines else None


@dataclass(slots=True)
class _Region:
    """A run of consecutive lines that is analysed line by line.

    Lines are kept raw and cleaned for display only when looked at (most never are).
    """

    first_line: int
    raw_lines: list[str]
    starts: list[int]
    """Raw offset of each line's first character, plus the region's end offset."""
    text_offset: int
    _clean: dict[int, str] = field(default_factory=dict)

    def text(self, i: int) -> str:
        """Display text of the region's `i`-th line (cleaned, no line ending)."""
        cached = self._clean.get(i)
        if cached is None:
            line = self.raw_lines[i].rstrip("\r")
            cached = clean_for_display(line).rstrip("\r") if line else line
            self._clean[i] = cached
        return cached


def _split_region(raw: str, start: int, end: int, first_line: int) -> _Region:
    part = raw[start:end]
    raw_lines = part.split("\n")
    if raw_lines and raw_lines[-1] == "":
        raw_lines.pop()  # the text ends with a newline: no line after it
    # Offsets with C-level iterators only: start, start + len(line 1) + 1, ...
    starts = list(accumulate(map(add, map(len, raw_lines), repeat(1)), initial=start))
    starts[-1] = min(starts[-1], end)
    return _Region(first_line=first_line, raw_lines=raw_lines, starts=starts, text_offset=start)


def _candidate_lines(region: _Region, raw: str, extra: re.Pattern[str] | None) -> list[int]:
    """Indices of the region's lines that may carry a signal (a cheap superset).

    A few passes of literal-heavy patterns over the region (C speed) instead of patterns
    per line; lines they do not touch score 0 in `line_salience`.
    """
    start = region.text_offset
    end = region.starts[-1]
    if end <= start:
        return []
    part = raw[start:end]
    low = part.lower()
    found: set[int] = {0}  # the first line has no newline before it
    starts = region.starts
    count = len(region.raw_lines)
    passes: list[tuple[str, re.Pattern[str] | None]] = [
        (low, _SIGNAL_WORDS_RE),
        (low, _SIGNAL_LINE_START_RE),
        (part, extra),
    ]
    for text, pattern in passes:
        if pattern is None:
            continue
        pos = 0
        n = len(text)
        while pos < n:
            match = pattern.search(text, pos)
            if match is None:
                break
            # A line-start match begins at the newline before the line.
            line_start = pattern is _SIGNAL_LINE_START_RE
            at = match.start() + (1 if line_start else 0)
            i = bisect.bisect_right(starts, start + at) - 1
            if i >= count:
                break
            found.add(i)
            # On to the next line (line-start patterns begin at the newline before it).
            pos = starts[i + 1] - start - (1 if line_start else 0)
    return sorted(found)


def _regions(raw: str) -> tuple[list[_Region], int, tuple[int, int] | None]:
    """Split the text into analysed regions (all of it, or head + tail of a huge text).

    Returns the regions, the number of lines, and for a huge text the raw character range
    of the middle that is only scanned.
    """
    n = len(raw)
    if n <= FULL_ANALYSIS_CHARS:
        region = _split_region(raw, 0, n, 1)
        return [region], len(region.raw_lines), None
    head_end = raw.rfind("\n", 0, _HEAD_PART_CHARS) + 1
    tail_start = raw.find("\n", n - _TAIL_PART_CHARS) + 1
    head = _split_region(raw, 0, head_end, 1)
    tail_first = raw.count("\n", 0, tail_start) + 1
    tail = _split_region(raw, tail_start, n, tail_first)
    total = tail_first + len(tail.raw_lines) - 1
    return [head, tail], total, (head_end, tail_start)


def analyse(
    raw: str,
    *,
    is_error: bool = False,
    level_salience: Callable[[str, float], float] | None = None,
    extra_signal: re.Pattern[str] | None = None,
    settings: SalienceSettings = DEFAULT_SETTINGS,
) -> Analysis:
    r"""Give every line worth showing a priority.

    Args:
        raw: The raw text.
        is_error: The tool reported an error (the tail then weighs more).
        level_salience: For logs: adjusts a line's salience by its level (an `E` or
            `ERROR` record is an error even without an error word; an `INFO` record that
            mentions an error weighs less).
        extra_signal: A pattern (searched in the raw text) that marks the other lines
            `level_salience` may raise above 0 (for logs: level names); lines matched
            neither by it nor by the built-in signal words are not looked at.
        settings: The weights of the judgement-call rules.

    Returns:
        The analysis.

    Example:
        ```python
        a = analyse("step 1\nok\nerror: disk full\n  at x\ndone\n")
        assert a.ranked()[0] in (3, 5)
        ```
    """
    regions, total, middle = _regions(raw)
    if middle is not None:
        regions = _with_middle_windows(raw, regions, middle)
    result = Analysis(
        total_lines=total,
        partial=middle is not None,
        raw_chars=len(raw),
        _regions=regions,
        _firsts=[r.first_line for r in regions],
        settings=settings,
    )
    if total == 0:
        return result
    texts: dict[int, str] = {}
    own: dict[int, float] = {}
    prompts: list[int] = []
    for region in regions:
        for i in _candidate_lines(region, raw, extra_signal):
            text = region.text(i)
            line_no = region.first_line + i
            if not text:
                continue
            if _PROMPT_RE.match(text):
                prompts.append(line_no)
            if _NOISE_RE.match(text):
                continue
            score = line_salience(text)
            if level_salience is not None:
                score = level_salience(text, score)
            if score:
                own[line_no] = score
                texts[line_no] = text
    text_at = result.text

    verdicts = sorted(ln for ln, s in own.items() if s >= SALIENCE_EXIT)
    result.verdict_lines = verdicts

    # Steps that failed: from the last prompt before a verdict to the verdict.
    failed_spans: list[tuple[int, int]] = []
    known_spans: list[tuple[int, int]] = []  # those that start at a prompt
    for v in verdicts:
        before = [p for p in prompts if p < v]
        if before and v - before[-1] <= 5_000:
            failed_spans.append((before[-1], v))
            known_spans.append((before[-1], v))
        else:
            failed_spans.append((max(1, v - 400), v))
    last_verdict = verdicts[-1] if verdicts else None
    tail_zone = _tail_zone(regions[-1], total)

    # Position adjustments of the anchors (repetition is handled when ranking).
    seen: set[str] = set()
    anchor: dict[int, float] = {}
    for line_no in sorted(own):
        score = own[line_no]
        is_error_anchor = SALIENCE_ERROR <= score < SALIENCE_EXIT
        if is_error_anchor:
            seen.add(pattern_key(texts[line_no]))
        if score < SALIENCE_EXIT:
            # Failures are reported near the end: later errors weigh more.
            score *= _RECENCY_MIN + (1 - _RECENCY_MIN) * (line_no / total) ** 2
            # A program's own log records (timestamped, `LEVEL logger:`) weigh less than a
            # runner's report, unless they are fatal.
            if score < SALIENCE_SUMMARY and _LOG_RECORD_RE.match(texts[line_no]):
                score *= _LOG_RECORD_DAMP
        if any(a <= line_no <= b for a, b in failed_spans):
            score *= _FAILED_STEP_BOOST
        elif last_verdict is not None and line_no > last_verdict and line_no < tail_zone:
            score *= _AFTER_VERDICT_DAMP
        elif known_spans and own[line_no] < SALIENCE_EXIT:
            score *= settings.outside_failed_step
        anchor[line_no] = score
    result.patterns = len(seen)
    result.error_lines = sorted(ln for ln, s in own.items() if SALIENCE_ERROR <= s < SALIENCE_EXIT)
    # The first error (the first strong one when there is one: an exception, a failed test,
    # a compiler error; in the step that failed when that is known) always gets its window
    # when there is room: the first error is often the cause of the others.
    strong = [ln for ln in result.error_lines if own[ln] >= SALIENCE_ITEM]
    in_failed = [ln for ln in strong if any(a <= ln <= b for a, b in known_spans)]
    firsts = in_failed or strong or result.error_lines
    if firsts:
        first = firsts[0]
        anchor[first] = max(anchor[first], own[first]) * _FIRST_ERROR_BOOST
    # A list of failure entries is read from the top: every entry of a run gets the weight
    # of the run's first entry, a little less the further down it is.
    items = sorted(ln for ln, score in own.items() if score == SALIENCE_ITEM)
    run: list[int] = []
    for ln in [*items, None]:
        if ln is not None and run and ln - run[-1] <= _ITEM_RUN_GAP:
            run.append(ln)
            continue
        if len(run) > 1:
            top = max(anchor[x] for x in run)
            for k, x in enumerate(run):
                anchor[x] = top * (1 - _ITEM_RUN_STEP * k)
        run = [ln] if ln is not None else []
    # An error line that repeats one seen before (the same text) weighs less than its
    # first copy, and so does the block under it: the budget goes to distinct failures.
    first_copy: dict[str, float] = {}
    repeats: set[int] = set()
    for line_no in sorted(anchor):
        if not SALIENCE_WARNING <= own[line_no] < SALIENCE_EXIT:
            continue
        sig = _copy_key(texts[line_no])
        if sig in first_copy:
            anchor[line_no] = min(anchor[line_no], first_copy[sig]) * settings.repeat_block
            repeats.add(line_no)
        else:
            first_copy[sig] = anchor[line_no]
    if len(result.error_lines) > 1:
        # The last error, like the first, gets its window when there is room (unless it
        # only repeats an earlier one).
        last = result.error_lines[-1]
        if last not in repeats:
            anchor[last] = max(anchor[last], own[last]) * _FIRST_ERROR_BOOST

    priority: dict[int, float] = {}
    roles: dict[int, str] = {}

    def offer(line_no: int, value: float, role: str) -> None:
        if value > priority.get(line_no, 0.0):
            priority[line_no] = value
            roles[line_no] = role

    for line_no, score in anchor.items():
        role = (
            "exit"
            if own[line_no] >= SALIENCE_EXIT
            else ("error" if own[line_no] >= SALIENCE_ERROR else "detail")
        )
        offer(line_no, score, role)
        if own[line_no] < SALIENCE_WARNING:
            continue
        # Context after: continuation lines keep most of the weight.
        value = score
        plain_run = 0
        blank_run = 0
        frames: list[int] = []
        for d in range(1, _AFTER_SPAN + 1):
            ln = line_no + d
            nearby = text_at(ln)
            if nearby is None:
                break
            if not nearby.strip():
                blank_run += 1
                if blank_run > 1:
                    break
                value *= _PLAIN_DECAY
                continue
            blank_run = 0
            listed = ln in own and own[line_no] >= SALIENCE_SUMMARY > own[ln] >= SALIENCE_ERROR
            if listed or is_continuation_line(nearby):
                value *= _CONT_DECAY
                plain_run = 0
                frames.append(ln)
            else:
                value *= _PLAIN_DECAY
                plain_run += 1
                if plain_run > 3:
                    break
            if listed:
                # The list under a summary header (`=== short test summary info ===` then
                # `FAILED ...` lines) is part of the summary.
                offer(ln, max(anchor.get(ln, 0.0), value), "error")
                continue
            if ln in own and own[ln] >= SALIENCE_ERROR:
                break  # the next anchor carries its own weight
            if _NOISE_RE.match(nearby):
                continue  # CI bookkeeping (`travis_time:end:...`) is not context
            texts.setdefault(ln, nearby)
            offer(ln, value, "context")
        # The bottom of a stack trace (the entry point: the test that ran, the runner) and
        # its frames in test code tell where the failure came from however deep they are.
        if len(frames) > settings.trace_tail_frames:
            keep = frames[-settings.trace_tail_frames :]
            keep += [ln for ln in frames if _TEST_FRAME_RE.search(texts.get(ln) or "")]
            for ln in keep:
                texts.setdefault(ln, text_at(ln) or "")
                offer(ln, score * settings.trace_tail_share, "context")
        # The header of an indented report (`standard: ...` above its indented errors).
        text0 = texts.get(line_no) or text_at(line_no) or ""
        if text0[:1] in (" ", "\t"):
            for ln in range(line_no - 1, max(0, line_no - _HEADER_SPAN), -1):
                nearby = text_at(ln)
                if nearby is None:
                    break
                if not nearby.strip() or nearby[:1] in (" ", "\t"):
                    continue
                texts.setdefault(ln, nearby)
                offer(ln, score * _HEADER_SHARE, "context")
                break
        # A delimited block just above a failure entry (`========DIFF========` ...
        # `========DONE========` then `FAIL test`) is that failure's detail.
        if own[line_no] >= SALIENCE_ITEM:
            above = text_at(line_no - 1)
            if above is not None and _SEPARATOR_RE.match(above):
                value = score * _DELIMITED_SHARE
                for ln in range(line_no - 1, max(0, line_no - _DELIMITED_SPAN), -1):
                    nearby = text_at(ln)
                    if nearby is None:
                        break
                    texts.setdefault(ln, nearby)
                    offer(ln, value, "context")
                    value *= _CONT_DECAY
                    if ln < line_no - 1 and _SEPARATOR_RE.match(nearby):
                        break  # the block's opening separator
        # Context before.
        value = score
        for d in range(1, _BEFORE_SPAN + 1):
            ln = line_no - d
            nearby = text_at(ln)
            if nearby is None or not nearby.strip():
                break
            value *= _BEFORE_DECAY
            if _NOISE_RE.match(nearby):
                continue
            texts.setdefault(ln, nearby)
            offer(ln, value, "context")

    # The last output of a failed step, just before its verdict.
    for v in verdicts:
        rank = 0
        for line_no in range(v - 1, max(0, v - 60), -1):
            nearby = text_at(line_no)
            if nearby is None:
                break
            if not nearby.strip() or _NOISE_RE.match(nearby):
                continue
            if own.get(line_no, 0.0) >= SALIENCE_EXIT:
                break
            texts.setdefault(line_no, nearby)
            offer(line_no, _PRE_VERDICT_FLOOR * (_PRE_VERDICT_DECAY**rank), "context")
            rank += 1
            if rank >= _PRE_VERDICT_LINES:
                break

    # The tail: the last non-blank lines always have a floor.
    floor = _TAIL_FLOOR * (1.3 if is_error else 1.0)
    rank = 0
    for line_no in range(total, max(0, total - 400), -1):
        nearby = text_at(line_no)
        if nearby is None:
            break
        if not nearby.strip() or _NOISE_RE.match(nearby):
            continue
        value = floor * (_TAIL_DECAY**rank)
        if value < 0.3:
            break
        texts.setdefault(line_no, nearby)
        offer(line_no, value, "tail")
        rank += 1
    # The head: what ran.
    rank = 0
    for line_no in range(1, min(total, 40) + 1):
        nearby = text_at(line_no)
        if nearby is None:
            break
        if not nearby.strip() or _NOISE_RE.match(nearby):
            continue
        texts.setdefault(line_no, nearby)
        offer(line_no, _HEAD_FLOOR * (0.7**rank), "head")
        rank += 1
        if rank >= 2:
            break

    result.texts = {ln: texts[ln] for ln in priority}
    result.priority = priority
    result.own = own
    result.roles = roles
    return result


def _tail_zone(region: _Region, total: int) -> int:
    """First line of the closing part (the last 30 non-blank lines)."""
    count = 0
    for i in range(len(region.raw_lines) - 1, -1, -1):
        if region.text(i).strip():
            count += 1
            if count >= 30:
                return region.first_line + i
    return region.first_line


def windows_of(lines: Iterable[int]) -> list[tuple[int, int]]:
    """Maximal runs of consecutive line numbers.

    Args:
        lines: Line numbers (any order, duplicates allowed).

    Returns:
        `(first, last)` pairs in order.

    Example:
        ```python
        assert windows_of([5, 1, 2, 3, 7]) == [(1, 3), (5, 5), (7, 7)]
        ```
    """
    out: list[tuple[int, int]] = []
    for ln in sorted(set(lines)):
        if out and ln == out[-1][1] + 1:
            out[-1] = (out[-1][0], ln)
        else:
            out.append((ln, ln))
    return out
