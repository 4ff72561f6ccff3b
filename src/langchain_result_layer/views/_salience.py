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
field of `SalienceSettings`.
"""

from __future__ import annotations

import bisect
import heapq
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from itertools import accumulate, compress, islice, repeat
from operator import add, ge, ne, sub

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
from langchain_result_layer.views.text import utf8_length

__all__ = ["DEFAULT_SETTINGS", "Analysis", "Ranking", "SalienceSettings", "analyse", "windows_of"]

FULL_ANALYSIS_CHARS = 4_000_000
"""Inputs up to this size are analysed line by line in full."""

FULL_SCAN_CHARS = 256_000
"""The last this many characters of a text are searched for every kind of signal (warnings,
details, exit statuses); the rest for the core signals only (see `_candidate_lines`)."""


@dataclass(frozen=True, slots=True)
class SalienceSettings:
    r"""Every number of the line ranking that is a judgement call, with what it trades.

    Weights multiply a line's salience (see `core.evidence`: 2 warning ... 9 failing exit
    status); shares are the part of an anchor's weight that a line near it gets; spans are
    counted in lines. The defaults were chosen on the tuned repositories of the evidence
    benchmark (`benchmarks/evidence_recall.py`) and are reported on the others.

    Example:
        ```python
        analyse("error: x\n", settings=SalienceSettings(repeat_block=0.4))
        ```
    """

    # --- position
    recency_min: float = 0.55
    """Weight of an error at the very start of the output (1.0 at its end, growing with
    the square of the position): failures are reported late, but a high floor keeps an
    early cause in play."""

    failed_step_boost: float = 1.4
    """Weight of an error inside a step known to have failed (its prompt to its verdict):
    that step's output is where its failure is explained."""

    outside_failed_step: float = 0.7
    """Weight of an error outside every step known to have failed, when such steps exist:
    an install step's warnings are rarely the cause. Lower hides more of a cause printed
    before the step's prompt."""

    step_lookback: int = 5_000
    """How far (lines) before a verdict its step's prompt may be; farther, the step is
    taken to start `unknown_step_lines` before the verdict."""

    unknown_step_lines: int = 400
    """Length of a failed step whose prompt was not found."""

    # --- anchors
    first_error_boost: float = 1.25
    """Factor for the first strong error (in the failed step when known) and the last
    distinct error: the first is often the cause of the others, the last the verdict."""

    item_run_gap: int = 3
    """Entries of a failure list at most this many lines apart form one list."""

    item_run_step: float = 0.002
    """How much less each later entry of one list weighs than the list's best (a list is
    read from the top)."""

    repeat_block: float = 0.5
    """Weight of a later copy of an error line already seen (the same text): the first copy
    carries the block, the copies its count. Lower gives distinct failures more room."""

    repeat_sibling_gap: int = 6
    """A line of the same shape at most this many lines after the previous one is the next
    entry of one list (a sibling), not a copy: it is lowered only when that list is a copy.
    """

    # --- context
    after_span: int = 150
    """How many lines after an anchor its context may reach."""

    continuation_decay: float = 0.99
    """Per-line factor of the context weight along continuation lines (stack frames,
    indented detail, diff lines): a long trace keeps most of its weight."""

    plain_decay: float = 0.8
    """Per-line factor along other lines (and per blank line)."""

    plain_run: int = 3
    """Context stops after this many consecutive plain lines (or two blank lines)."""

    before_span: int = 3
    """How many lines before an anchor get context (the command or test that ran)."""

    before_decay: float = 0.55
    """Per-line factor of the context before an anchor."""

    trace_tail_frames: int = 4
    """How many of the last lines of a stack trace (the entry point: the test method,
    the runner) keep most of the error's weight however deep the trace is."""

    trace_tail_share: float = 0.75
    """The share of the error's weight those last lines keep."""

    header_span: int = 40
    """How far above an indented anchor its unindented header is looked for."""

    header_share: float = 0.7
    """Share of the anchor's weight the header above an indented report gets; `n` anchors
    of one block give it `1 - (1 - share) ** n` of the latest one's (a header over a long
    list ranks near the list's first line, one over a single error below its context)."""

    # --- floors
    tail_floor: float = 2.5
    """Priority of the last non-blank line (exit status, summary); each line above it gets
    `tail_decay` of the one below. An error result raises it by `error_tail_boost`. Below
    the pre-verdict and rare-line floors, above the fill: the closing lines are a fallback
    that every line with a reason of its own outranks. Chosen by the ranking fit
    (`python -m benchmarks.ranking_fit`): a factor on the tail's priority, fitted on three
    folds of tuned repositories and tested on the fourth, came out at about 1/e of the old
    6.5 in every fold (1.5 to 3.0 rank the same)."""

    tail_decay: float = 0.6
    """Per-line factor of the tail floor."""

    error_tail_boost: float = 1.3
    """Factor on the tail floor when the tool reported an error (`status="error"`)."""

    tail_floor_min: float = 0.3
    """The tail floor stops at the line it would give less than this."""

    pre_verdict_floor: float = 6.0
    """Priority of the last line of output before a failure verdict; the lines above it
    get `pre_verdict_decay` each, for at most `pre_verdict_lines` lines."""

    pre_verdict_decay: float = 0.88
    """Per-line factor of the pre-verdict floor."""

    pre_verdict_lines: int = 15
    """How many lines before a verdict get the pre-verdict floor."""

    pre_verdict_reach: int = 60
    """How far (lines) above a verdict those lines are looked for."""

    rare_span: int = 30
    """How many lines before a failure verdict are looked at for lines of a rare shape."""

    rare_context: int = 2_000
    """Over how many lines before the verdict a shape's rarity is counted."""

    rare_floor: float = 4.0
    """Priority of the rare line nearest the verdict: below a labelled error, above the
    fill, so a failure told in unknown words is shown once the known evidence is."""

    rare_decay: float = 0.97
    """Per-line factor of that priority, from the verdict up."""

    # --- ranking
    exact_repeat: float = 0.3
    """Factor, per copy already shown, for a line identical to a shown one: a recursion's
    repeated frames and a repeated message add nothing."""

    item_repeat: float = 0.97
    """Per-line factor for the sixth and later lines of one group of failure entries (each
    failed test matters)."""

    other_repeat: float = 0.75
    """Per-line factor for the third and later lines of any other group (a block of similar
    lines does not crowd out everything else)."""

    # --- fill
    fill_anchors: int = 24
    """How many of the strongest anchors get fill around them."""

    fill_after: int = 120
    """Lines of fill after each of those anchors (before it: a quarter as many)."""

    fill_tail: int = 600
    """Lines of fill above the tail."""

    fill_share: float = 0.02
    """Priority of fill as a share of its anchor's weight: below every line that has a
    reason of its own, so fill only widens windows once all evidence is shown."""

    fill_decay: float = 0.995
    """Per-line factor of fill with its distance from the anchor."""

    # --- shown line lengths (characters; the body is the budget's tokens times the
    # characters per token of the top lines, at most the budget's characters)
    line_share: float = 1 / 14
    """Most lines may take this share of the body ..."""

    line_min: int = 160
    """... at least this many characters ..."""

    line_max: int = 500
    """... and at most this many: a long context line is cut within itself."""

    error_line_share: float = 0.25
    """An error line (and the lines of the strongest blocks) may take this share."""

    anchor_line_share: float = 0.45
    """Each of the `anchor_lines` top lines may take this share: the line that explains the
    failure is shown whole up to here, however long (a JSON error response, a Maven goal)."""

    anchor_lines: int = 3
    """How many of the top lines get the anchor share."""

    whole_line_slack: float = 1.5
    """A line at most this many times its limit is shown whole: a cut would save at most a
    third of it, less its own marker (about 15 tokens), and the line would no longer be
    readable as it stands (a long labelled failure line just over its limit)."""

    compact_budget_tokens: int = 1_500
    """Below this budget the error and anchor shares are `compact_line_factor` of the above,
    and the header and footer are shorter (one omitted range listed, not three): their fixed
    cost would otherwise take a fifth of the view."""

    compact_line_factor: float = 0.6
    """Factor on the error and anchor shares below `compact_budget_tokens`."""

    gap_fill_lines: int = 3
    """A gap of at most this many lines between two shown lines is shown ..."""

    gap_fill_chars: int = 200
    """... when its lines take at most this many characters together: about what the window
    marker it saves costs, and the lines around evidence come with it."""

    # --- huge inputs
    head_part_chars: int = 256_000
    """Of an input over `FULL_ANALYSIS_CHARS`, its first this many characters are analysed
    in full."""

    tail_part_chars: int = 1_000_000
    """... and its last this many."""

    middle_hits: int = 48
    """Distinct error lines looked for in the middle (each analysed in a small window)."""

    middle_candidates: int = 1_200
    """Candidate lines examined in the middle at most."""

    middle_before: int = 5
    """Lines before a middle error in its window."""

    middle_after: int = 40
    """Lines after a middle error in its window."""

    middle_window_chars: int = 16_000
    """Characters of a middle window at most."""


DEFAULT_SETTINGS = SalienceSettings()

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


_STAMP_TOKEN_RE = re.compile(
    r"^(?:(?:[\d:.,/+\-TZ\[\]()]{1,64}|Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec|-)$)"
)
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
        texts: Display text (cleaned, no line ending) of every line that has a priority for
            a reason of its own (fill lines are read with `text` when shown).
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
) -> list[int]:
    """Indices of the region's lines that may carry a signal (a cheap superset).

    Every part of the region is searched for the core signals (`CORE_SIGNALS`, in the text
    as printed, and `extra`); its last `full_scan_chars` characters, where verdicts,
    summaries and the failing step's details are, for every kind of signal (`ALL_SIGNALS`,
    in the lower-cased text). The lines the searches do not touch score 0 in
    `line_salience`.
    """
    start = region.text_offset
    end = region.starts[-1]
    if end <= start:
        return []
    tail_at = max(start, end - full_scan_chars)
    if tail_at > start:
        tail_at = raw.rfind("\n", start, tail_at) + 1
    positions = CORE_SIGNALS.pattern_positions(raw, start, end)
    found = set(CORE_SIGNALS.word_lines(raw, start, end))
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
        for i in _candidate_lines(region, raw, extra):
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
    return scan


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
            for k, x in enumerate(run):
                anchor[x] = top * (1 - settings.item_run_step * k)
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
            if listed or _continues(nearby, indent):
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
    counts = Counter(shapes)
    rank = 0
    for i in range(len(shapes) - 1, max(-1, len(shapes) - 1 - settings.rare_span), -1):
        shape = shapes[i]
        if not shape or counts[shape] > 1:
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
    regions, total, middle = _regions(raw, settings)
    if middle is not None:
        regions = _with_middle_windows(raw, regions, middle, settings)
    lines = _Lines(regions=regions, firsts=[r.first_line for r in regions])
    result = Analysis(
        total_lines=total,
        partial=middle is not None,
        unscanned_chars=_unscanned(raw, middle),
        raw_chars=len(raw),
        is_error=is_error,
        settings=settings,
        _lines=lines,
    )
    if total == 0:
        return result
    scan = _scan(regions, raw, extra_signal, level_salience)
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


# --------------------------------------------------------------------------- ranking


_DIGIT_RUN_RE = re.compile(r"[0-9]+")
"""A run of ASCII digits (`_group_key` folds it to `0` in one pass)."""


def _group_key(text: str) -> str:
    """The first three words of a line after its timestamp; numbers folded, paths as `*`."""
    words: list[str] = []
    for token in text.split(None, 12):
        if not words and _STAMP_TOKEN_RE.match(token):
            continue  # timestamps and other leading numbers
        if "/" in token or "\\" in token:
            words.append("*")
        elif token.isalpha():  # no digit to fold (most words)
            words.append(token)
        else:  # each run of digits as one `0` (what `_fold` makes of it)
            words.append(_DIGIT_RUN_RE.sub("0", token))
        if len(words) == 3:
            break
    return " ".join(words)


def _grouped(
    lines: Iterable[int],
    texts: dict[int, str],
    roles: dict[int, str],
    keys: dict[str, str] | None = None,
) -> tuple[dict[str, list[int]], list[int]]:
    """The lines by `_group_key` of their texts, in order, and the lines ranked on their own.

    Lines of the tail, exit and fill roles are ranked on their own. A text printed
    again has the same key: each distinct text's key is made once (in `keys`, which may
    hold the keys the weights pass made already).
    """
    by_group: dict[str, list[int]] = {}
    solo: list[int] = []
    keys = {} if keys is None else keys
    for ln in lines:
        if roles.get(ln, "context") in ("tail", "exit", "fill"):
            solo.append(ln)
        else:
            text = texts.get(ln, "")
            key = keys.get(text)
            if key is None:
                key = keys[text] = _group_key(text)
            by_group.setdefault(key, []).append(ln)
    return by_group, solo


def _best_last(members: list[int], effective: dict[int, float]) -> None:
    """Sort lines by value, then by line number (best last): two C-level sorts, no key tuples.

    The second sort is stable, so lines of equal value stay in line order.
    """
    members.sort()
    members.sort(key=effective.__getitem__)


def _greedy(analysis: Analysis, effective: dict[int, float]) -> list[int]:
    """`_greedy_order` whole."""
    return list(_greedy_order(analysis, effective))


def _greedy_order(analysis: Analysis, effective: dict[int, float]) -> Iterator[int]:
    """Lazy-greedy order with a repetition factor per group and per identical line.

    One heap entry per group holds the group's next line, valued with the group's current
    factor (in O(n log n)). A group's lines are taken best first, except that once the best
    line of a group made only of error or warning lines (anchors below a failure entry's
    salience) is taken, the rest of that group is taken from the top: the first lines of a
    block printed again and again (a retried step's first attempt, the first entries of a lint
    run) are where it started, and recency alone would take its last copies first. A failure
    list has its own order (`_raise_item_runs`); a group with other lines in it (stack frames,
    a system log's lines of one service) stays best first. A line identical to lines already
    taken is pushed back with a lower value before it is taken. Each line is yielded as it is
    taken: a reader that stops early never pays for the rest.
    """
    settings = analysis.settings
    texts, roles, own = analysis.texts, analysis.roles, analysis.own
    by_group, solo = _grouped(effective, texts, roles, analysis._group_keys)
    # (-value, -line, taken from group (-1: solo), group key, identical copies applied)
    heap: list[tuple[float, int, int, str, int]] = []
    for key, members in by_group.items():
        _best_last(members, effective)
        heap.append((-effective[members[-1]], -members[-1], 0, key, 0))
    heap.extend((-effective[ln], -ln, -1, "", 0) for ln in solo)
    heapq.heapify(heap)
    copies: dict[str, int] = {}
    while heap:
        neg_value, neg_ln, taken, key, applied = heapq.heappop(heap)
        line = -neg_ln
        exact = texts.get(line, "").strip()
        seen = copies.get(exact, 0) if exact else 0
        if seen > applied:
            factor = settings.exact_repeat ** (seen - applied)
            heapq.heappush(heap, (neg_value * factor, neg_ln, taken, key, seen))
            continue
        yield line
        if exact:
            copies[exact] = seen + 1
        if taken < 0:
            continue
        members = by_group[key]
        members.pop()
        if not members:
            continue
        if (
            taken == 0
            and 0.0 < own.get(line, 0.0) < SALIENCE_ITEM
            and all(m in own for m in members)
        ):
            members.sort(reverse=True)  # a block of error lines of one shape: from the top
        taken += 1
        nxt = members[-1]
        if own.get(nxt, 0.0) >= SALIENCE_ITEM:
            line_factor = settings.item_repeat ** max(0, taken - 5)
        else:
            line_factor = settings.other_repeat ** max(0, taken - 2)
        heapq.heappush(heap, (-effective[nxt] * line_factor, -nxt, taken, key, 0))


_CHUNK = 64
"""Lines a `Ranking` makes at once when read past its end: a reader that stops early has paid
for at most this many lines more than it read, and reading costs less per line."""


class Ranking:
    """Lines by priority (`Analysis.ranked`), made as far as they are read.

    The order comes from an iterator (`_greedy_order`) and is kept as it is made, so every
    reader (and every `capped` view of it) sees the same lines in the same order, however
    far and whenever it reads.

    Example:
        ```python
        ranking = Ranking(iter([3, 1, 2]))
        assert ranking.head(2) == [3, 1] and ranking.lines == [3, 1]
        assert list(ranking.capped(2)) == [3, 1] and list(ranking) == [3, 1, 2]
        assert ranking and not Ranking(iter([]))
        ```
    """

    __slots__ = ("_limit", "_more", "lines")

    def __init__(self, order: Iterator[int], limit: int | None = None) -> None:
        """Read `order` as far as needed, at most `limit` lines (`None`: all)."""
        self.lines: list[int] = []
        """The lines made so far."""
        self._more = order
        self._limit = limit

    def capped(self, limit: int) -> Ranking:
        """The same ranking (sharing the lines made) read at most `limit` lines far."""
        capped = Ranking(self._more, limit)
        capped.lines = self.lines
        return capped

    def head(self, n: int) -> list[int]:
        """The top `n` lines (fewer when there are fewer)."""
        if self._limit is not None:
            n = min(n, self._limit)
        lines = self.lines
        if len(lines) < n:
            lines.extend(islice(self._more, n - len(lines)))
        return lines[:n]

    def __iter__(self) -> Iterator[int]:
        """The lines in order, made `_CHUNK` at a time as they are read."""
        lines, more, limit = self.lines, self._more, self._limit
        i = 0
        while True:
            if i == len(lines):
                lines.extend(islice(more, _CHUNK))
                if i == len(lines):
                    return  # no more lines
            stop = len(lines) if limit is None else min(len(lines), limit)
            yield from islice(lines, i, stop)
            if stop == limit:
                return
            i = stop

    def __bool__(self) -> bool:
        """Whether it has a line."""
        return bool(self.head(1))


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
    # C-level maps, no loop per line: a run ends where the next line is not one more.
    ordered = lines if isinstance(lines, list) else list(lines)
    if not ordered:
        return []
    if any(map(ge, ordered, ordered[1:])):  # not strictly increasing: sort, drop repeats
        ordered = sorted(set(ordered))
    breaks = list(map(ne, map(sub, ordered[1:], ordered), repeat(1)))
    ends = list(compress(ordered, breaks))
    starts = list(compress(ordered[1:], breaks))
    return list(zip([ordered[0], *starts], [*ends, ordered[-1]], strict=True))
