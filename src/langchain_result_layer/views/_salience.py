r"""Which lines of a long command output or log explain what happened.

Every line gets a priority; a view shows the top-`k` lines for the largest `k` that fits its
budget, so evidence is given up last and in a fixed order. `analyse` is a pipeline of small
passes over typed records:

1. **regions** (`_regions`): the whole text, or for a huge one its head, its tail and small
   windows around the distinct errors of its middle (found with `find_error_lines`).
2. **scan** (`_scan`): one search of a combined pattern over each region finds the candidate
   lines (a cheap superset); only those are read, each once, and get their own salience
   (`core.evidence.line_salience`, optionally adjusted by a log level). Prompts (`$ cmd`)
   are noted on the way.
3. **steps** (`_steps`): the failure verdicts and the failed steps they end (from the last
   prompt before a verdict to the verdict).
4. **weights** (`_weigh`): each anchor's weight from its salience and its position: later
   lines weigh more, errors inside a failed step more, outside every failed step less; the
   first and last errors and the entries of a failure list are raised; a later copy of an
   error already seen is lowered.
5. **context** (`_spread`): one forward sweep gives the lines after an anchor a decaying
   share of its weight (continuation lines keep most of it), the bottom of a deep stack trace
   and its frames in test code are raised, and so are the header above an indented report
   and the few lines before an anchor.
6. **floors** (`_floors`): the last lines and the last output before each verdict always
   have a small priority.
7. **fill** (`_fill`): the lines around the strongest anchors and above the tail get a small,
   decaying priority, below every other line, so a view that has shown all its evidence
   widens its windows until its budget is full instead of stopping short.

Every pass does work proportional to the candidate lines and to the lines it gives a
priority, never to every line times every rule; every number that is a judgement call is a
field of `SalienceSettings` (`views._salience_settings`). The order in which a view shows the
lines, `Analysis.ranking`, is made in `views._ranking`.
"""

from __future__ import annotations

import bisect
import heapq
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from itertools import accumulate, repeat
from operator import add

from langchain_result_layer.core.evidence import (
    ALL_SIGNALS,
    CORE_SIGNALS,
    SALIENCE_ERROR,
    SALIENCE_EXIT,
    SALIENCE_ITEM,
    SALIENCE_SUMMARY,
    SALIENCE_WARNING,
    find_error_lines,
    is_continuation_line,
    lowers_like_ascii,
    salience_of,
    scanned_region,
)
from langchain_result_layer.core.normalize import clean_for_display
from langchain_result_layer.views._line_prefix import line_prefix
from langchain_result_layer.views._ranking import Ranking, _greedy_order, _group_key
from langchain_result_layer.views._salience_settings import DEFAULT_SETTINGS, SalienceSettings
from langchain_result_layer.views.text import utf8_length

__all__ = ["Analysis", "analyse"]

FULL_ANALYSIS_CHARS = 4_000_000
"""Inputs up to this size are analysed line by line in full."""

FULL_SCAN_CHARS = 256_000
"""The last this many characters of a text are searched for every kind of signal (warnings,
details, exit statuses); the rest for the core signals only (see `_candidate_lines`)."""


_DIGITS_TO_ZERO = str.maketrans("123456789", "000000000")
_DIGITS_TO_ZERO_BYTES = bytes.maketrans(b"123456789", b"000000000")
_DIGIT_BYTES = b"0123456789"
_ZEROS_RE = re.compile(r"0{2,}")


def _fold(text: str) -> str:
    """A line's text with its digits folded (`line 12 of 300` -> `line 0 of 0`), trimmed.

    The digits are replaced in the line's UTF-8 (no byte of a character past ASCII is an
    ASCII digit): `bytes.translate` with its table costs a fifth of `str.translate`, which
    looks every character up in a dict.
    """
    folded = (
        text.strip()[:200]
        .encode("utf-8", "surrogatepass")
        .translate(_DIGITS_TO_ZERO_BYTES)
        .decode("utf-8", "surrogatepass")
    )
    return _ZEROS_RE.sub("0", folded) if "00" in folded else folded


_PROMPT_RE = re.compile(
    r"^(?:"
    r"\s{0,40}(?:\$|>|#\#\[group\]Run|\+) \S"
    r")"
    # Travis prints a step's command after its fold and timing markers on the same line.
    r"|travis_(?:fold|time):[^$\n]{0,400}\$ \S"
)
# A line that starts a new step for sure: a shell prompt, a CI group (not `+ ` or `> `,
# which are also diff and quote lines).
_STEP_START_RE = re.compile(
    r"^(?:\s{0,40}(?:\$ \S|#\#\[group\]Run )|travis_(?:fold|time):[^$\n]{0,400}\$ \S)"
)
_GROUP_RUN = "##[group]Run "
"""Every match of `_STEP_START_RE` holds `$ ` or this."""

# A stack frame in test code: a test path or file (`/test/`, `_test.rb`, `test_x.py`), or a
# test class (`FooTest.bar(`). Two patterns, each searched only in a frame that holds its
# words: the class one has no literal start (the engine tries it at every character).
_TEST_PATH_RE = re.compile(
    r"[/\\](?:tests?|spec|specs|__tests__)[/\\]|_(?:test|spec)\.\w{1,8}[:(]|\btest_\w{1,200}\.py"
)
_TEST_CLASS_RE = re.compile(r"(?<![\w$])[\w$]{0,200}(?:Test|Tests|Spec|IT)\.\w{1,200}\(")
_NOISE_RE = re.compile(
    r"^(?:"
    r"\s{0,40}(?:travis_(?:fold|time)|Download(?:ing|ed)\b|\[INFO\] Download|Progress \(\d|"
    r"Receiving objects|Resolving deltas|remote: (?:Counting|Compressing)|\.{8})"
    r")"
)

Role = str
"""`exit`, `error`, `detail`, `context`, `tail` or `fill`."""


# --------------------------------------------------------------------------- records


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
            line = self.raw_lines[i]
            if line[-1:] == "\r":  # a CRLF line (most of a Windows or Travis log)
                line = line.rstrip("\r")
            # Most lines: nothing to clean.
            cached = line if line.isprintable() else clean_for_display(line).rstrip("\r")
            self._clean[i] = cached
        return cached


@dataclass(slots=True)
class _Lines:
    """Random access to the analysed lines of the text (by 1-based line number)."""

    regions: list[_Region]
    firsts: list[int]
    text: Callable[[int], str | None] = field(init=False, repr=False, compare=False)
    """Display text of a line (`None` outside the analysed lines): for the whole text, a
    closure over its one region (the passes read a few thousand lines through it)."""

    def __post_init__(self) -> None:
        regions = self.regions
        self.text = _whole_text(regions[0]) if len(regions) == 1 else self._text_of

    def locate(self, line_no: int) -> tuple[_Region, int] | None:
        regions = self.regions
        if len(regions) == 1:  # the whole text: no search
            region = regions[0]
            i = line_no - 1
            return (region, i) if 0 <= i < len(region.raw_lines) else None
        k = bisect.bisect_right(self.firsts, line_no) - 1
        if k < 0:
            return None
        region = regions[k]
        i = line_no - region.first_line
        if i < len(region.raw_lines):
            return region, i
        return None

    def _text_of(self, line_no: int) -> str | None:
        where = self.locate(line_no)
        return None if where is None else where[0].text(where[1])


def _whole_text(region: _Region) -> Callable[[int], str | None]:
    """`_Lines.text` for a text analysed whole (one region from line 1): no search."""
    clean, count, read = region._clean, len(region.raw_lines), region.text

    def text(line_no: int) -> str | None:
        i = line_no - 1
        if 0 <= i < count:
            cached = clean.get(i)
            return cached if cached is not None else read(i)
        return None

    return text


@dataclass(slots=True)
class _Scan:
    """What the scan found: each candidate line's own salience, its text, the prompts."""

    own: dict[int, float]
    texts: dict[int, str]
    prompts: list[int]
    """Lines that start a step: a shell prompt or CI group (`_STEP_START_RE`), and a `+ ` or
    `> ` line (a traced command) unless it reports something of its own (a PowerShell error
    record's `+ FullyQualifiedErrorId : ...`) or stands beside a `-` line (a diff)."""
    raw_bytes: int | None = None
    """The UTF-8 size of the whole text, when the candidate search encoded it whole."""
    rare: list[int] = field(default_factory=list)
    """Diagnostics whose code is printed once among many (`_rare_codes`)."""


@dataclass(frozen=True, slots=True)
class _Spans:
    """Sorted, merged `[first, last]` line spans with membership by bisection."""

    starts: list[int]
    ends: list[int]

    @classmethod
    def of(cls, spans: Iterable[tuple[int, int]]) -> _Spans:
        merged: list[list[int]] = []
        for a, b in sorted(spans):
            if merged and a <= merged[-1][1] + 1:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        return cls(starts=[a for a, _ in merged], ends=[b for _, b in merged])

    def __contains__(self, line_no: object) -> bool:
        if not isinstance(line_no, int):
            return False
        k = bisect.bisect_right(self.starts, line_no) - 1
        return k >= 0 and line_no <= self.ends[k]

    def __bool__(self) -> bool:
        return bool(self.starts)


@dataclass(frozen=True, slots=True)
class _Steps:
    """The failure verdicts of the output and the failed steps they end."""

    verdicts: list[int]
    failed: _Spans
    """Every failed step (from its prompt, or `unknown_step_lines` before its verdict)."""
    known: _Spans
    """The failed steps whose prompt was found."""


@dataclass(slots=True)
class _Weights:
    """Anchors with their weights, and the facts the views report about errors."""

    anchor: dict[int, float]
    error_lines: list[int]
    patterns: int
    repeats: set[int] = field(default_factory=set)
    """Later copies of an error already seen (lowered by `_lower_repeats`)."""
    group_keys: dict[str, str] = field(default_factory=dict)
    """`_group_key` of each text keyed so far (the ranking's `_grouped` reads it again)."""


@dataclass(slots=True)
class _Priorities:
    """Line number -> priority and the role that gave it (the highest offer wins)."""

    value: dict[int, float] = field(default_factory=dict)
    role: dict[int, Role] = field(default_factory=dict)

    def offer(self, line_no: int, value: float, role: Role) -> None:
        if value > self.value.get(line_no, 0.0):
            self.value[line_no] = value
            self.role[line_no] = role


# --------------------------------------------------------------------------- result


@dataclass(slots=True)
class Analysis:
    r"""Line priorities of one text.

    Attributes:
        total_lines: Lines of the text (split on `\n`).
        texts: Analysed text (cleaned, no line ending, without the timestamp prefix the
            lines share: `views._line_prefix`) of every line that has a priority for a reason
            of its own (the shown lines are read with `text`).
        priority: Line number -> priority (only lines worth showing).
        own: Line number -> the line's own salience (anchors only).
        roles: Line number -> `exit`, `error`, `detail`, `context`, `tail` or `fill`.
        error_lines: Line numbers of error anchors (salience >= error), in text order.
        verdict_lines: Line numbers of failing exit statuses and build verdicts.
        patterns: Distinct error patterns among `error_lines`.
        partial: Whether the middle of a huge input was only scanned for distinct errors.
        unscanned_chars: Characters of that middle not searched at all (past the part one
            error search reads, `core.evidence.MAX_SCAN_CHARS`).
        raw_chars: Characters of the text.
        is_error: Whether it was weighed for a result the tool reported as an error.
        settings: The settings it was made with.
        line_prefix: The stamp every line carries (`views._line_prefix.line_prefix`), which
            the passes read past, or `None`.
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
    unscanned_chars: int = 0
    raw_chars: int = 0
    is_error: bool = False
    settings: SalienceSettings = field(default_factory=lambda: DEFAULT_SETTINGS)
    line_prefix: re.Pattern[str] | None = None
    _lines: _Lines = field(default_factory=lambda: _Lines(regions=[], firsts=[]))
    _ranking: Ranking | None = None
    _raw_bytes: int | None = None
    _group_keys: dict[str, str] = field(default_factory=dict)
    """`_group_key` of each text keyed so far (by the weights pass, then by the ranking)."""

    def byte_size(self, raw: str) -> int:
        """UTF-8 size of the analysed text (computed once)."""
        if self._raw_bytes is None:
            self._raw_bytes = utf8_length(raw)
        return self._raw_bytes

    def text(self, line_no: int) -> str | None:
        """Display text of a line, when the analysis holds it."""
        return self._lines.text(line_no)

    def span(self, line_no: int) -> tuple[int, int] | None:
        """Raw `[start, end)` offsets of a line (end includes its newline)."""
        where = self._lines.locate(line_no)
        if where is None:
            return None
        region, i = where
        return region.starts[i], region.starts[i + 1]

    def raw_line(self, line_no: int) -> str | None:
        """The raw text of a line (no line ending, not cleaned), when the analysis holds it."""
        where = self._lines.locate(line_no)
        if where is None:
            return None
        return where[0].raw_lines[where[1]].rstrip("\r")

    def for_status(self, *, is_error: bool) -> Analysis:
        """This analysis for a result the tool reported as an error (or not).

        An error result's closing lines (its tail) weigh `error_tail_boost` times more;
        everything else is the same, so the analysis is made once, before the status is
        known, and adjusted here.

        Args:
            is_error: Whether the tool reported an error (`status="error"`).

        Returns:
            This analysis (no error) or an adjusted copy.
        """
        if not is_error or self.is_error:
            return self
        boost = self.settings.error_tail_boost
        priority = {
            ln: value * boost if self.roles.get(ln) == "tail" else value
            for ln, value in self.priority.items()
        }
        return replace(self, priority=priority, is_error=True, _ranking=None)

    def ranked(self) -> list[int]:
        """Line numbers by priority, with diminishing returns for repeated kinds of lines.

        Lines are taken greedily: a line whose group (its first words after the timestamp,
        numbers and paths folded) is already represented counts for less each time, so a
        block of a hundred similar lines does not crowd out everything else. Entries of
        failure lists decay slowly (each failed test matters); other lines quickly after the
        second of a group. Later lines come first on ties.
        """
        return self.ranking().head(len(self.priority))

    def ranking(self) -> Ranking:
        """`ranked`, made as far as it is read (a fit reads the top few thousand lines)."""
        if self._ranking is None:
            self._ranking = Ranking(_greedy_order(self, dict(self.priority)))
        return self._ranking

    @property
    def first_error(self) -> int | None:
        """Line of the first error anchor."""
        return self.error_lines[0] if self.error_lines else None

    @property
    def last_error(self) -> int | None:
        """Line of the last error anchor."""
        return self.error_lines[-1] if self.error_lines else None


# --------------------------------------------------------------------------- pass 1: regions


def _split_region(raw: str, start: int, end: int, first_line: int) -> _Region:
    part = raw[start:end]
    raw_lines = part.split("\n")
    if raw_lines and raw_lines[-1] == "":
        raw_lines.pop()  # the text ends with a newline: no line after it
    # Offsets with C-level iterators only: start, start + len(line 1) + 1, ...
    starts = list(accumulate(map(add, map(len, raw_lines), repeat(1)), initial=start))
    starts[-1] = min(starts[-1], end)
    return _Region(first_line=first_line, raw_lines=raw_lines, starts=starts, text_offset=start)


def _regions(
    raw: str, settings: SalienceSettings
) -> tuple[list[_Region], int, tuple[int, int] | None]:
    """Split the text into analysed regions (all of it, or head + tail of a huge text).

    Returns the regions, the number of lines, and for a huge text the raw character range
    of the middle that is only scanned.
    """
    n = len(raw)
    if n <= FULL_ANALYSIS_CHARS:
        region = _split_region(raw, 0, n, 1)
        return [region], len(region.raw_lines), None
    head_end = raw.rfind("\n", 0, settings.head_part_chars) + 1
    tail_start = raw.find("\n", n - settings.tail_part_chars) + 1
    head = _split_region(raw, 0, head_end, 1)
    tail_first = raw.count("\n", 0, tail_start) + 1
    tail = _split_region(raw, tail_start, n, tail_first)
    total = tail_first + len(tail.raw_lines) - 1
    return [head, tail], total, (head_end, tail_start)


def _unscanned(raw: str, middle: tuple[int, int] | None) -> int:
    """Characters of the middle that its error search (`_with_middle_windows`) does not read."""
    if middle is None:
        return 0
    lo, hi = scanned_region(raw, *middle)
    return (middle[1] - middle[0]) - (hi - lo)


def _with_middle_windows(
    raw: str, regions: list[_Region], middle: tuple[int, int], settings: SalienceSettings
) -> list[_Region]:
    """Head, small regions around the distinct errors of the middle, tail."""
    lo, hi = middle
    hits = find_error_lines(
        raw, start=lo, end=hi, limit=settings.middle_hits, max_candidates=settings.middle_candidates
    )
    windows: list[_Region] = []
    prev_end = lo
    span_chars = settings.middle_window_chars
    for hit in hits:
        if hit.start < prev_end:
            continue  # inside the previous window
        start = hit.start
        for _ in range(settings.middle_before):
            if start <= prev_end or hit.start - start > span_chars // 4:
                break
            start = raw.rfind("\n", prev_end, start - 1) + 1
        start = max(start, prev_end)
        end = hit.end
        for _ in range(settings.middle_after):
            if end >= hi or end - hit.end > span_chars:
                break
            nl = raw.find("\n", end, hi)
            end = hi if nl < 0 else nl + 1
        end = min(end, hi)
        first_line = hit.line_no - raw.count("\n", start, hit.start)
        windows.append(_split_region(raw, start, end, first_line))
        prev_end = end
    return [regions[0], *windows, *regions[1:]]


# --------------------------------------------------------------------------- pass 2: scan


def _candidate_lines(
    region: _Region,
    raw: str,
    extra: re.Pattern[str] | None,
    full_scan_chars: int = FULL_SCAN_CHARS,
    utf8_size: list[int] | None = None,
) -> list[int]:
    """Indices of the region's lines that may carry a signal (a cheap superset).

    Every part of the region is searched for the core signals (`CORE_SIGNALS`, in the text
    as printed, and `extra`); its last `full_scan_chars` characters, where verdicts,
    summaries and the failing step's details are, for every kind of signal (`ALL_SIGNALS`,
    in the lower-cased text). The lines the searches do not touch score 0 in
    `line_salience`. `utf8_size`, when given, receives the region's UTF-8 size when the
    word search encoded it whole (`Signals.word_lines`).
    """
    start = region.text_offset
    end = region.starts[-1]
    if end <= start:
        return []
    tail_at = max(start, end - full_scan_chars)
    if tail_at > start:
        tail_at = raw.rfind("\n", start, tail_at) + 1
    positions = CORE_SIGNALS.pattern_positions(raw, start, end)
    found = set(CORE_SIGNALS.word_lines(raw, start, end, utf8_size=utf8_size))
    starts, count = region.starts, len(region.raw_lines)
    line_start = tail_at == 0 or raw[tail_at - 1] == "\n"
    if line_start and lowers_like_ascii(raw, tail_at, end):
        # The lower-cased tail, without making it: its UTF-8 lower-cased as bytes, and the
        # patterns (case-blind) over the text itself, from the newline before the tail
        # (the line at `tail_at` is tried for the line-start patterns as at 0 of a copy).
        first = bisect.bisect_right(starts, tail_at) - 1
        found.update(first + i for i in ALL_SIGNALS.word_lines(raw, tail_at, end, lowered=True))
        # The shapes are the core ones, found in the whole region already (their matches
        # cannot overlap, so where a search starts does not change which it finds).
        positions.update(
            ALL_SIGNALS.pattern_positions(
                raw, max(0, tail_at - 1), end, shapes=ALL_SIGNALS.shapes != CORE_SIGNALS.shapes
            )
        )
    else:
        tail = raw[tail_at:end].lower()
        if len(tail) == end - tail_at:  # one character for each: the offsets are the text's
            first = bisect.bisect_right(starts, tail_at) - 1
            found.update(first + i for i in ALL_SIGNALS.word_lines(tail, 0, len(tail)))
            positions.update(tail_at + at for at in ALL_SIGNALS.pattern_positions(tail))
        else:
            positions.update(tail_at + at for at in ALL_SIGNALS.positions(tail))
    if extra is not None:
        positions.update(m.start() for m in extra.finditer(raw, start, end))
    found.update(bisect.bisect_right(starts, at) - 1 for at in positions)
    return sorted(i for i in found if 0 <= i < count)


def _beside_removed_line(region: _Region, i: int) -> bool:
    """Whether the line before or after the region's `i`-th line starts with `-`.

    A `+ ` line beside one is a diff's added line, not a traced command (`set -x`).
    """
    for j in (i - 1, i + 1):
        if 0 <= j < len(region.raw_lines) and region.text(j).lstrip().startswith("-"):
            return True
    return False


def _scan(
    regions: list[_Region],
    raw: str,
    extra: re.Pattern[str] | None,
    level_salience: Callable[[str, float], float] | None,
) -> _Scan:
    scan = _Scan(own={}, texts={}, prompts=[])
    own, texts, prompts = scan.own, scan.texts, scan.prompts
    prompt, step_start, noise = _PROMPT_RE.match, _STEP_START_RE.match, _NOISE_RE.match
    scores: dict[str, float] = {}  # a line printed again scores the same (a pure function)
    for region in regions:
        text_of, first = region.text, region.first_line
        # A region of the whole text: the word search's UTF-8 gives its size (no second
        # encoding of a megabyte for `Analysis.byte_size`).
        whole = region.text_offset == 0 and region.starts[-1] == len(raw)
        size: list[int] | None = [] if whole else None
        for i in _candidate_lines(region, raw, extra, utf8_size=size):
            text = text_of(i)
            if not text:
                continue
            line_no = first + i
            weak_prompt = False
            if prompt(text):
                if step_start(text):
                    prompts.append(line_no)
                else:
                    weak_prompt = not _beside_removed_line(region, i)
            if noise(text):
                if weak_prompt:
                    prompts.append(line_no)
                continue
            head = text[:600]
            score = scores.get(head)
            if score is None:
                score = scores[head] = salience_of(head, head.lower())
            if level_salience is not None:
                score = level_salience(text, score)
            if weak_prompt and not score:
                prompts.append(line_no)
            if score:
                own[line_no] = score
                texts[line_no] = text
        if size:
            scan.raw_bytes = size[0]
    return scan


_CODED_RE = re.compile(r"[^\s:]{1,400}\.\w{1,5}:\d+(?::\d+)?:? ?([A-Z]{1,4}\d{2,5})\b")
"""A diagnostic led by a location and a code: `src/a.py:3:1: F821`, `a.rb:4:1: W0611`."""


def _rare_codes(scan: _Scan, settings: SalienceSettings) -> None:
    """Raise a diagnostic whose code is printed once among many coded diagnostics.

    Vocabulary-free: a linter prints hundreds of findings of a few kinds and the one that
    fails the build may be the only one of its kind (`F821 undefined name` among 900 style
    codes), with no error word in it, deep in a list read from the top. When the candidate
    lines hold `rare_code_min_lines` coded diagnostics and at most `rare_code_max` codes are
    printed once, those lines are at least errors and weigh as the best error does
    (`_weigh`). Only candidate lines are read (a location-led finding is a failure-list
    entry), so the pass costs nothing on a log without them.
    """
    own, texts = scan.own, scan.texts
    if len(own) < settings.rare_code_min_lines:
        return
    match = _CODED_RE.match
    count: Counter[str] = Counter()
    first: dict[str, int] = {}
    for line_no in sorted(own):
        found = match(texts[line_no])
        if found is not None:
            code = found.group(1)
            count[code] += 1
            first.setdefault(code, line_no)
    if count.total() < settings.rare_code_min_lines:
        return
    once = [first[code] for code, n in count.items() if n == 1]
    if not once or len(once) > settings.rare_code_max:
        return
    for line_no in once:
        if own[line_no] < SALIENCE_EXIT:
            own[line_no] = max(own[line_no], SALIENCE_ERROR)
            scan.rare.append(line_no)


# --------------------------------------------------------------------------- pass 3: steps


def _steps(scan: _Scan, settings: SalienceSettings) -> _Steps:
    verdicts = sorted(ln for ln, s in scan.own.items() if s >= SALIENCE_EXIT)
    prompts = sorted(scan.prompts)
    failed: list[tuple[int, int]] = []
    known: list[tuple[int, int]] = []
    for v in verdicts:
        k = bisect.bisect_left(prompts, v) - 1
        if k >= 0 and v - prompts[k] <= settings.step_lookback:
            failed.append((prompts[k], v))
            known.append((prompts[k], v))
        else:
            failed.append((max(1, v - settings.unknown_step_lines), v))
    return _Steps(
        verdicts=verdicts,
        failed=_Spans.of(failed),
        known=_Spans.of(known),
    )


# --------------------------------------------------------------------------- pass 4: weights


def _weigh(
    scan: _Scan, steps: _Steps, lines: _Lines, total: int, settings: SalienceSettings
) -> _Weights:
    own, texts = scan.own, scan.texts
    seen: set[str] = set()
    anchor: dict[int, float] = {}
    lo = settings.recency_min
    for line_no in sorted(own):
        score = own[line_no]
        if SALIENCE_ERROR <= score < SALIENCE_EXIT:
            seen.add(_fold(texts[line_no]))
        if score < SALIENCE_EXIT:
            # Failures are reported near the end: later errors weigh more.
            score *= lo + (1 - lo) * (line_no / total) ** 2
        if line_no in steps.failed:
            score *= settings.failed_step_boost
        elif steps.known and own[line_no] < SALIENCE_EXIT:
            score *= settings.outside_failed_step
        anchor[line_no] = score
    error_lines = sorted(ln for ln, s in own.items() if SALIENCE_ERROR <= s < SALIENCE_EXIT)
    _raise_first(anchor, own, error_lines, steps, settings)
    _raise_item_runs(anchor, own, settings)
    if scan.rare:  # a kind of finding printed once (`_rare_codes`): as the best error does
        best = max(anchor[ln] for ln in error_lines)
        for line_no in scan.rare:
            anchor[line_no] = best * settings.first_error_boost
    keys: dict[str, str] = {}
    repeats = _lower_repeats(anchor, own, lines, texts, settings, keys=keys)
    if len(error_lines) > 1 and error_lines[-1] not in repeats:
        # The last error, like the first, gets its window when there is room.
        last = error_lines[-1]
        anchor[last] = max(anchor[last], own[last]) * settings.first_error_boost
    return _Weights(
        anchor=anchor,
        error_lines=error_lines,
        patterns=len(seen),
        repeats=repeats,
        group_keys=keys,
    )


def _raise_first(
    anchor: dict[int, float],
    own: dict[int, float],
    error_lines: list[int],
    steps: _Steps,
    settings: SalienceSettings,
) -> None:
    """The first strong error (in the failed step when known) gets its window first."""
    candidates = [ln for ln in error_lines if ln in steps.known] if steps.known else error_lines
    # When the failed step is known, an error outside it (an install step's) is not raised.
    firsts = [ln for ln in candidates if own[ln] >= SALIENCE_ITEM] or candidates
    if firsts:
        first = firsts[0]
        anchor[first] = max(anchor[first], own[first]) * settings.first_error_boost


def _raise_item_runs(
    anchor: dict[int, float], own: dict[int, float], settings: SalienceSettings
) -> None:
    """A failure list is read from the top: each entry weighs about as much as the best."""
    items = sorted(ln for ln, score in own.items() if score == SALIENCE_ITEM)
    run: list[int] = []
    for ln in [*items, None]:
        if ln is not None and run and ln - run[-1] <= settings.item_run_gap:
            run.append(ln)
            continue
        if len(run) > 1:
            top = max(anchor[x] for x in run)
            step, floor = settings.item_run_step, settings.item_run_floor
            for k, x in enumerate(run):
                anchor[x] = top * max(floor, 1 - step * k)
        run = [ln] if ln is not None else []


def _lower_repeats(
    anchor: dict[int, float],
    own: dict[int, float],
    lines: _Lines,
    texts: dict[int, str],
    settings: SalienceSettings,
    *,
    keys: dict[str, str] | None = None,
) -> set[int]:
    """A later copy of an error block weighs less than its first copy.

    Two blocks are copies when their first lines have the same shape (first words, digits
    and paths folded) and the line after each is the same: the same failure reported again
    (a second test run, a retry, the same message under another test's name). A line of the
    same shape within `repeat_sibling_gap` lines of the previous one is the next entry of
    that report (`Error Trace: x_test.go:126`, then `:142`): a copy only when it is.
    Each text's `_group_key` is made once, in `keys` (the ranking reads them again).
    """
    keys = {} if keys is None else keys
    first_copy: dict[tuple[str, str], float] = {}
    last_seen: dict[tuple[str, str], tuple[int, bool]] = {}
    repeats: set[int] = set()
    gap = settings.repeat_sibling_gap
    for line_no in sorted(anchor):
        if not SALIENCE_WARNING <= own[line_no] < SALIENCE_EXIT:
            continue
        text = texts[line_no]
        group = keys.get(text)
        if group is None:
            group = keys[text] = _group_key(text)
        key = (group, _next_text(lines, line_no))
        seen = last_seen.get(key)
        if seen is None:
            first_copy[key] = anchor[line_no]
            last_seen[key] = (line_no, False)
            continue
        # A sibling a few lines after the previous one (the next frame or assertion of one
        # report) is part of that report: a copy only when the report is.
        repeat = seen[1] if line_no - seen[0] <= gap else True
        last_seen[key] = (line_no, repeat)
        if repeat:
            anchor[line_no] = min(anchor[line_no], first_copy[key]) * settings.repeat_block
            repeats.add(line_no)
    return repeats


def _next_text(lines: _Lines, line_no: int) -> str:
    """The next non-blank line after `line_no` (digits folded), within a few lines."""
    for ln in range(line_no + 1, line_no + 4):
        text = lines.text(ln)
        if text is None:
            return ""
        if text.strip():
            return _fold(text)
    return ""


# --------------------------------------------------------------------------- pass 5: context


@dataclass(slots=True)
class _Work:
    """What the context, floor and fill passes read and write."""

    lines: _Lines
    own: dict[int, float]
    texts: dict[int, str]
    """Display texts of the lines given a priority so far (filled as they are read)."""
    settings: SalienceSettings
    out: _Priorities = field(default_factory=_Priorities)
    headed: dict[int, int] = field(default_factory=dict)
    """How many anchors each header line heads so far (`_header_above`)."""

    def show(self, line_no: int, value: float, role: Role, text: str | None = None) -> None:
        """Offer a priority to a line, keeping its text."""
        if text is None:
            text = self.lines.text(line_no) or ""
        self.texts.setdefault(line_no, text)
        self.out.offer(line_no, value, role)


def _spread(work: _Work, weights: _Weights) -> None:
    """Anchors and the context around them."""
    own, anchor = work.own, weights.anchor
    for line_no, score in anchor.items():
        role = (
            "exit"
            if own[line_no] >= SALIENCE_EXIT
            else ("error" if own[line_no] >= SALIENCE_ERROR else "detail")
        )
        work.out.offer(line_no, score, role)
    spreading = sorted(ln for ln in anchor if own[ln] >= SALIENCE_WARNING)
    # A verdict ends its step: what follows it is the next step's (its context is before it).
    _after(work, [ln for ln in spreading if own[ln] < SALIENCE_EXIT], weights)
    for line_no in spreading:
        score = anchor[line_no]
        _header_above(work, line_no, score)
        _before(work, line_no, score)


def _after(work: _Work, spreading: list[int], weights: _Weights) -> None:
    """Context after each anchor; a walk ends at an error that weighs more than it does.

    A walk that meets a weaker anchor (a warning, a detail) carries on with the larger of
    its own decayed weight and that anchor's. An error that weighs less than the walk has
    come to weigh is part of the report the walk reads (the `** (MatchError)` under
    `1) test ...`, the second error line of one message): the walk goes on through it and
    gives it its own decayed weight when that is more, so a report is read as one window
    with the weight of its strongest line. An error that weighs more, or a later copy of
    an error already seen, starts a walk of its own, so each line is read once. A failure
    list under a summary header is part of the summary.
    """
    own, settings = work.own, work.settings
    anchor, repeats = weights.anchor, weights.repeats
    # Bound once: this loop reads a few thousand lines.
    text_of, texts, offer = work.lines.text, work.texts, work.out.offer
    values, roles = work.out.value, work.out.role
    step_start, noise = _STEP_START_RE.match, _NOISE_RE.match
    span, plain, cont = settings.after_span, settings.plain_decay, settings.continuation_decay
    k, n = 0, len(spreading)
    while k < n:
        origin = spreading[k]
        k += 1
        score = value = anchor[origin]
        indent = _indent(texts.get(origin) or text_of(origin) or "")
        member = _listed_location(texts, text_of, origin)
        plain_run = blank_run = 0
        frames: list[int] = []
        ln = origin
        while ln - origin < span:
            ln += 1
            listed = ln in own and own[origin] >= SALIENCE_SUMMARY > own[ln] >= SALIENCE_ERROR
            inside = False  # a lighter error of the report this walk reads
            if k < n and spreading[k] == ln:
                heavier = anchor[ln] >= value
                if own[ln] >= SALIENCE_ERROR and not listed and (heavier or ln in repeats):
                    break  # a heavier error (or a later copy) carries its own weight
                k += 1  # a lighter anchor (or a listed entry): this walk goes on through it
                if not listed and heavier:
                    origin, score, value, plain_run = ln, anchor[ln], anchor[ln], 0
                    member = _listed_location(texts, text_of, origin)
                    continue
                inside = own[ln] >= SALIENCE_ERROR and not listed
            nearby = text_of(ln)
            if nearby is None or (("$ " in nearby or _GROUP_RUN in nearby) and step_start(nearby)):
                break  # the end of the text, or the next step (no prompt: no regex run)
            if not nearby.strip():
                blank_run += 1
                if blank_run > 1:
                    break
                value *= plain
                continue
            blank_run = 0
            if listed or (
                _continues(nearby, indent) and not (member and _LOCATION_RE.match(nearby))
            ):
                value *= cont
                plain_run = 0
                frames.append(ln)
            else:
                value *= plain
                plain_run += 1
                if plain_run > settings.plain_run:
                    break
            if listed or inside:
                offer(ln, max(anchor.get(ln, 0.0), value), "error")
            elif not noise(nearby):  # CI bookkeeping (`travis_time:end:`) is not context
                texts.setdefault(ln, nearby)  # `work.show`, inlined
                if value > values.get(ln, 0.0):
                    values[ln] = value
                    roles[ln] = "context"
        if len(frames) > settings.trace_tail_frames:
            _trace_tail(work, frames, score)


_LOCATION_RE = re.compile(r"[^\s:]{1,400}\.\w{1,5}:\d")
"""A line that starts with a location (`src/a.c:10:`, `tests/FooTest.php:118`): a grep hit, a
compiler diagnostic, a frame of some stacks."""


def _listed_location(
    texts: dict[int, str], text_of: Callable[[int], str | None], line_no: int
) -> bool:
    """Whether a line and the line above it both start with a location.

    Such a line is a member of a listing (grep hits, one diagnostic per line): the location
    lines after it are its siblings, not the trace of a report it heads.
    """
    here = texts.get(line_no) or text_of(line_no) or ""
    if _LOCATION_RE.match(here) is None:
        return False
    return _LOCATION_RE.match(texts.get(line_no - 1) or text_of(line_no - 1) or "") is not None


def _indent(text: str) -> int:
    """Columns of a line's leading blanks (a tab counts 8)."""
    head = text[: len(text) - len(text.lstrip(" \t"))]
    return len(head) + 7 * head.count("\t")


def _continues(line: str, indent: int) -> bool:
    """Whether a line continues a report whose first line is indented `indent` columns.

    A stack frame, a diff line, a caret, `Caused by:` continue a report wherever they stand;
    a line that is only indented continues it when it is indented deeper than the report
    (in output that indents everything, the next line at the same depth is the next
    report).
    """
    if not is_continuation_line(line):
        return False
    return _indent(line) > indent or is_continuation_line(line.lstrip(" \t"))


def _trace_tail(work: _Work, frames: list[int], score: float) -> None:
    """The bottom of a deep stack trace and its frames in test code (where it came from)."""
    settings = work.settings
    if len(frames) <= settings.trace_tail_frames:
        return
    keep = frames[-settings.trace_tail_frames :]
    texts = work.texts
    keep += [ln for ln in frames if _in_test_code(texts.get(ln) or "")]
    for ln in keep:
        work.show(ln, score * settings.trace_tail_share, "context")


def _in_test_code(frame: str) -> bool:
    """Whether a stack frame is in test code (`/test/`, `_test.rb`, `FooTest.bar(`)."""
    if ("test" in frame or "spec" in frame) and _TEST_PATH_RE.search(frame) is not None:
        return True
    hinted = "Test" in frame or "Spec" in frame or "IT." in frame
    return hinted and _TEST_CLASS_RE.search(frame) is not None


def _header_above(work: _Work, line_no: int, score: float) -> None:
    """The header of an indented report (`standard: ...` above its indented errors).

    The header is the nearest unindented line above the anchor. It gets `header_share` of
    the anchor's weight, and each further anchor of the block under it raises that share
    (`1 - (1 - share) ** n` for `n` anchors): the header of a long list of errors comes right
    after the list's first lines, not after all of them.
    """
    settings = work.settings
    text0 = work.texts.get(line_no) or work.lines.text(line_no) or ""
    if text0[:1] not in (" ", "\t"):
        return
    for ln in range(line_no - 1, max(0, line_no - settings.header_span), -1):
        nearby = work.lines.text(ln)
        if nearby is None:
            return
        if nearby.strip() and nearby[:1] not in (" ", "\t"):
            anchors = work.headed[ln] = work.headed.get(ln, 0) + 1
            value = score * (1.0 - (1.0 - settings.header_share) ** anchors)
            work.show(ln, value, "context", nearby)
            return


def _before(work: _Work, line_no: int, score: float) -> None:
    """The few lines just before an anchor (the command or the test that ran)."""
    value = score
    for d in range(1, work.settings.before_span + 1):
        nearby = work.lines.text(line_no - d)
        if nearby is None or not nearby.strip():
            return
        value *= work.settings.before_decay
        if not _NOISE_RE.match(nearby):
            work.show(line_no - d, value, "context", nearby)


# --------------------------------------------------------------------------- pass 6: floors


def _floors(work: _Work, steps: _Steps, total: int, *, is_error: bool) -> None:
    """The last output before each verdict and the tail always have a priority."""
    settings = work.settings
    previous = 0
    for v in steps.verdicts:
        before = _pre_verdict_lines(work, v, previous, last=v == steps.verdicts[-1])
        if before:
            _rare_before(work, v, previous)
        previous = v
        for rank, (line_no, nearby) in enumerate(before):
            value = settings.pre_verdict_floor * settings.pre_verdict_decay**rank
            work.show(line_no, value, "context", nearby)
    floor = settings.tail_floor * (settings.error_tail_boost if is_error else 1.0)
    for rank, line_no in enumerate(_non_blank(work, range(total, max(0, total - 400), -1))):
        value = floor * settings.tail_decay**rank
        if value < settings.tail_floor_min:
            break
        work.show(line_no, value, "tail")


def _pre_verdict_lines(
    work: _Work, verdict: int, previous: int, *, last: bool
) -> list[tuple[int, str]]:
    """The last output lines before a verdict (nearest first) that explain it.

    The lines between the last verdict and the one before it, with no error among them,
    are what ran after the failure (cleanup, cache uploads): they explain neither, so they
    get no floor (the tail floor still reaches the last of them).
    """
    settings = work.settings
    out: list[tuple[int, str]] = []
    text_of, own_of = work.lines.text, work.own.get
    for line_no in range(verdict - 1, max(previous - 1, verdict - settings.pre_verdict_reach), -1):
        nearby = text_of(line_no)
        own = own_of(line_no, 0.0)
        if nearby is None or own >= SALIENCE_EXIT:
            if (
                last
                and own >= SALIENCE_EXIT
                and previous
                and not any(work.own.get(ln, 0.0) >= SALIENCE_ERROR for ln, _ in out)
            ):
                return []  # the walk reached the previous verdict: cleanup lines only
            break
        if not nearby.strip() or _NOISE_RE.match(nearby):
            continue
        if len(out) < settings.pre_verdict_lines:
            out.append((line_no, nearby))
    return out


def _rare_before(work: _Work, verdict: int, previous: int) -> None:
    """Lines of a rare shape just before a failure verdict (vocabulary-free evidence).

    The output a failing step prints last, in lines whose shape (digits dropped, blanks
    trimmed) occurs once among the step's last `rare_context` lines, is what is particular
    to this failure: a message in words no rule knows. Each gets `rare_floor`, decaying per
    rare line up. Shapes are read from the raw lines (one C-level pass each); only the rare
    lines are cleaned for display.
    """
    settings = work.settings
    where = work.lines.locate(verdict)
    if where is None:
        return
    region, end = where
    first = region.first_line
    start = max(0, end - settings.rare_context, previous + 1 - first)
    # The shapes as UTF-8 (the same classes: digits are single bytes), digits dropped by one
    # `bytes.translate` over the joined lines (no line holds a "\n"): `str.translate` per
    # line cost seven times more.
    block = "\n".join([line[:200].strip() for line in region.raw_lines[start:end]])
    utf8 = block.encode("utf-8", "surrogatepass")
    shapes = utf8.translate(None, _DIGIT_BYTES).split(b"\n") if end > start else []
    # Only the last `rare_span` shapes are read: counted among themselves, and looked for
    # among the earlier ones (a set intersection, no count of every shape).
    last = max(0, len(shapes) - settings.rare_span)
    counts = Counter(shapes[last:])
    earlier = set(shapes[last:]).intersection(shapes[:last])
    rank = 0
    for i in range(len(shapes) - 1, last - 1, -1):
        shape = shapes[i]
        if not shape or counts[shape] > 1 or shape in earlier:
            continue
        line_no = first + start + i
        nearby = work.lines.text(line_no) or ""
        if _NOISE_RE.match(nearby):
            continue
        work.show(line_no, settings.rare_floor * settings.rare_decay**rank, "context", nearby)
        rank += 1


def _non_blank(work: _Work, numbers: Iterable[int]) -> Iterable[int]:
    """The lines among `numbers` that show something (not blank, not CI bookkeeping)."""
    for line_no in numbers:
        nearby = work.lines.text(line_no)
        if nearby is None:
            return
        if nearby.strip() and not _NOISE_RE.match(nearby):
            yield line_no


# --------------------------------------------------------------------------- pass 7: fill


def _fill(work: _Work, weights: _Weights, total: int) -> None:
    """Small, decaying priorities around the strongest anchors and above the tail."""
    settings = work.settings
    strongest = heapq.nlargest(
        settings.fill_anchors, weights.anchor.items(), key=lambda item: item[1]
    )
    share, decay = settings.fill_share, settings.fill_decay
    after = [decay**d for d in range(1, settings.fill_after + 1)]
    before = [decay ** (4 * d) for d in range(1, settings.fill_after // 4 + 1)]
    # Runs of offers (line numbers, values), in the order they are offered: no tuple per offer.
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
    if len(regions) == 1:  # the whole text (`total` is its line count): no search by region
        _fill_whole(values, roles, runs, regions[0].raw_lines)
        return
    locate = work.lines.locate
    for numbers, offered in runs:
        for line_no, value in zip(numbers, offered, strict=True):
            if not 1 <= line_no <= total or value <= values.get(line_no, 0.0):
                continue
            where = locate(line_no)
            line = None if where is None else where[0].raw_lines[where[1]]
            if line is not None and line.strip():
                values[line_no] = value  # its text is read only if it is shown
                roles[line_no] = "fill"


def _fill_whole(
    values: dict[int, float],
    roles: dict[int, Role],
    runs: list[tuple[range, list[float]]],
    raw_lines: list[str],
) -> None:
    """`_fill`'s offers to the lines of a text analysed whole, in the order they are offered.

    A line takes an offer above its priority so far when it holds more than blanks
    (`line.strip()` is not empty: the line is not empty and not all blanks, asked without
    making the stripped copy).
    """
    get, count = values.get, len(raw_lines)
    for numbers, offered in runs:
        for line_no, value in zip(numbers, offered, strict=True):
            if value > get(line_no, 0.0) and 0 < line_no <= count:
                line = raw_lines[line_no - 1]
                if line and not line.isspace():
                    values[line_no] = value  # its text is read only if it is shown
                    roles[line_no] = "fill"


# --------------------------------------------------------------------------- entry point


def analyse(
    raw: str,
    *,
    is_error: bool = False,
    level_salience: Callable[[str, float], float] | None = None,
    extra_signal: re.Pattern[str] | None = None,
    settings: SalienceSettings = DEFAULT_SETTINGS,
) -> Analysis:
    r"""Give every line worth showing a priority (the passes of the module docstring).

    Args:
        raw: The raw text.
        is_error: The tool reported an error (the tail then weighs more).
        level_salience: For logs: adjusts a line's salience by its level (an `E` or
            `ERROR` record is an error even without an error word; an `INFO` record that
            mentions an error weighs less).
        extra_signal: A pattern (searched in the raw text) that marks the other lines
            `level_salience` may raise above 0 (for logs: level names); lines matched
            neither by it nor by the built-in signal pattern are not looked at.
        settings: The numbers of the judgement-call rules.

    Returns:
        The analysis.

    Example:
        ```python
        a = analyse("step 1\nok\nerror: disk full\n  at x\ndone\n")
        assert a.ranked()[0] in (3, 5)
        ```
    """
    # A CI system's timestamp before every line: the passes read the lines without it (the
    # same lines, the same numbers); the lines shown, their offsets and sizes are the raw ones.
    n = len(raw)
    prefix = line_prefix(raw) if n <= FULL_ANALYSIS_CHARS else None
    shown, raw = raw, raw if prefix is None else prefix.sub("", raw)  # `raw`: what is read
    regions, total, middle = _regions(raw, settings)
    if middle is not None:
        regions = _with_middle_windows(raw, regions, middle, settings)
    lines = _Lines(regions=regions, firsts=[r.first_line for r in regions])
    result = Analysis(
        total_lines=total,
        partial=middle is not None,
        unscanned_chars=_unscanned(raw, middle),
        raw_chars=n,
        is_error=is_error,
        settings=settings,
        line_prefix=prefix,
        _lines=lines if prefix is None else _Lines([_split_region(shown, 0, n, 1)], [1]),
    )
    if total == 0:
        return result
    scan = _scan(regions, raw, extra_signal, level_salience)
    _rare_codes(scan, settings)
    if prefix is None:
        result._raw_bytes = scan.raw_bytes  # `byte_size` counts it when it is `None`
    steps = _steps(scan, settings)
    weights = _weigh(scan, steps, lines, total, settings)
    work = _Work(lines=lines, own=scan.own, texts=scan.texts, settings=settings)
    _spread(work, weights)
    _floors(work, steps, total, is_error=is_error)
    _fill(work, weights, total)
    texts = work.texts
    result.texts = {ln: texts[ln] for ln in work.out.value if ln in texts}
    result.priority = work.out.value
    result.roles = work.out.role
    result.own = scan.own
    result.error_lines = weights.error_lines
    result.verdict_lines = steps.verdicts
    result.patterns = weights.patterns
    result._group_keys = weights.group_keys
    return result
