"""Showing chosen lines of a long text: windows, clipping, omitted ranges, references.

Shared by the command and log views. A selection is the top-`k` lines of an `Analysis`
(plus one-line gaps filled when that is cheaper than an omission marker); it becomes
windows of consecutive lines, each rendered under a fence marker that names its line range,
so the model always knows where it is and what is missing. A line too long for its limit is
cut *within* the line: it keeps its start, the part around its first failure word and its
end, and each cut is marked with the exact raw character range it leaves out (which a fetch
by offset returns byte for byte). `fit_windows` finds the largest top-`k` that fits a budget
from the lines' sizes, counting tokens exactly only a few times.

Also here: `sample_lines` and `spread`, which take evenly spread windows of consecutive lines
from a long text without splitting all of it (log facts and templates of huge logs).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, compress, count, repeat
from operator import attrgetter
from typing import TypeVar, cast

from langchain_result_layer.core.budget import Budget
from langchain_result_layer.core.evidence import SALIENCE_ITEM
from langchain_result_layer.core.normalize import clean_for_display
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.render import CANONICAL_FENCE, Fence
from langchain_result_layer.core.token_memo import LineMemoCounter
from langchain_result_layer.core.tokens import TokenCounter
from langchain_result_layer.core.view import OmittedRange
from langchain_result_layer.views._layout import ELLIPSIS, Section
from langchain_result_layer.views._long_lines import Cut, cut_marker, keep_spans
from langchain_result_layer.views._ranking import Ranking, windows_of
from langchain_result_layer.views._salience import Analysis

__all__ = [
    "Cut",
    "LineLimits",
    "LineSample",
    "LineTexts",
    "ShownLine",
    "Window",
    "clip_line",
    "cut_marker",
    "error_reference",
    "fit_windows",
    "omitted_line_ranges",
    "range_phrase",
    "sample_lines",
    "showing_order",
    "spread",
    "window_sections",
    "windows",
]

T = TypeVar("T")

_ROLE_ORDER = ("exit", "error", "detail", "context", "tail", "fill")
_MIN_CUT = 120
"""A line that does not fit is cut down to this many characters at most (its start and
its salient span stay readable)."""
_WINDOW_MARKER_COST = 26
"""Characters of a window's title marker line (`[nonce: lines 1,234-1,240]`)."""
_MARKER_COST = 44
"""Characters a cut's marker adds to a shown line (`[nonce: chars 1,234-5,678 omitted]`)."""
_ORDER_STEP = 256
"""Lines of the showing order made at a time, as the fit reads it (`_ShowingOrder`)."""
_LEAST_CHARS_PER_TOKEN = 3
"""Characters per token of dense log text (logs run at 3.3-3.6 under `o200k_base`): the
lines counted to reach a number of tokens are at most about what is needed."""


@dataclass(frozen=True, slots=True)
class LineLimits:
    """How long a shown line may be.

    Attributes:
        normal: Limit for most lines.
        error: Limit for error lines.
        anchor: Limit for the highest-priority lines (the error itself).
        anchors: How many of the top lines get the anchor limit.
        slack: A line at most this many times its limit is shown whole (unless the fit
            shortened it): a cut would save little more than its own marker costs.
    """

    normal: int = 500
    error: int = 1_500
    anchor: int = 3_000
    anchors: int = 3
    slack: float = 1.0


@dataclass(frozen=True, slots=True)
class ShownLine:
    """One line as the view shows it: its display text and the parts cut out of it."""

    text: str
    cuts: tuple[Cut, ...] = ()


_TEXT_OF = attrgetter("text")
_CUTS_OF = attrgetter("cuts")
_NEW = object.__new__
_SET = object.__setattr__


def _whole_line(text: str) -> ShownLine:
    """`ShownLine(text=text)`, made without the frozen dataclass's `__init__` (most lines)."""
    line: ShownLine = _NEW(ShownLine)
    _SET(line, "text", text)
    _SET(line, "cuts", ())
    return line


@dataclass(slots=True)
class Window:
    """A run of consecutive shown lines.

    Attributes:
        role: The strongest reason lines of it are shown (`exit`, `error`, `context`, `tail`,
            `fill`).
        start_line: First line (1-based).
        end_line: Last line.
        start_char: Raw offset of its first character.
        end_char: Raw offset just past its last line's newline.
        lines: The shown lines.
    """

    role: str
    start_line: int
    end_line: int
    start_char: int | None
    end_char: int | None
    lines: list[ShownLine]
    _item: dict[str, object] | None = field(default=None, init=False, repr=False, compare=False)
    _texts: list[str] | None = field(default=None, init=False, repr=False, compare=False)
    _cut_rows: tuple[int, ...] = field(default=(), init=False, repr=False, compare=False)

    @property
    def size(self) -> int:
        """Number of lines."""
        return self.end_line - self.start_line + 1

    def holds(self, line_no: int) -> bool:
        """Whether `line_no` is one of its lines."""
        return self.start_line <= line_no <= self.end_line

    def has_cuts(self) -> bool:
        """Whether a line of it is cut within the line (from its line texts, made once)."""
        return bool(self._line_texts()[1])

    def line_texts(self) -> list[str]:
        """The shown lines' texts, in order (made once; do not change the list)."""
        return self._line_texts()[0]

    def all_cuts(self) -> list[Cut]:
        """The cuts of its lines, in line order (only the lines that have cuts are read)."""
        lines = self.lines
        return [cut for row in self._line_texts()[1] for cut in lines[row].cuts]

    def as_item(self) -> dict[str, object]:
        """The JSON-ready `ResultView.items` entry (`type` `window`).

        `clipped` maps a line number to the characters cut out of it; `cuts` maps it to
        `[position in the shown line, raw start offset, raw end offset]` per cut, each
        marked `…` in `text`. Made once per window (a fit's probes reuse their windows);
        each call returns a new dict.
        """
        if self._item is None:
            self._item = self._make_item()
        return dict(self._item)

    def _line_texts(self) -> tuple[list[str], tuple[int, ...]]:
        """The shown lines' texts and the positions of the lines that have cuts (made once)."""
        if self._texts is None:
            lines = self.lines
            self._texts = list(map(_TEXT_OF, lines))
            self._cut_rows = tuple(compress(count(), map(_CUTS_OF, lines)))  # lines with cuts
        return self._texts, self._cut_rows

    def _make_item(self) -> dict[str, object]:
        shown, cut_rows = self._line_texts()
        texts = list(shown)
        clipped: dict[str, int] = {}
        cuts: dict[str, list[list[int]]] = {}
        for offset in cut_rows:
            line = self.lines[offset]
            key = str(self.start_line + offset)
            clipped[key] = sum(c.chars for c in line.cuts)
            cuts[key] = [[c.at, c.start, c.end] for c in line.cuts]
        return {
            "type": "window",
            "role": self.role,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "start_char": self.start_char,
            "end_char": self.end_char,
            "lines": texts,
            "text": "\n".join(texts),
            "clipped": clipped,
            "cuts": cuts,
        }


def showing_order(analysis: Analysis, ranked: Iterable[int], texts: LineTexts) -> list[int]:
    """`ranked` with each short one-line gap taken as soon as both its neighbours are.

    A one-line gap between two shown lines costs a marker; when the line is short it is
    cheaper to show it. Taking it in the order itself (right after the line that closes
    the gap) keeps the size of the top-`k` lines a sum over the order, which the fitting
    needs. (The fit reads the order as far as it needs: `_ShowingOrder`.)

    Args:
        analysis: The analysis.
        ranked: Lines by priority.
        texts: The shown form of each line.

    Returns:
        The lines in the order they are taken.
    """
    order = _ShowingOrder(analysis, ranked, texts)
    order.extend(math.inf)
    return order.lines


class _ShowingOrder:
    """`showing_order`, made as far as it is read (a fit reads the top few thousand lines).

    `lines` is the order so far; `extend(n)` makes it at least `n` lines long (or whole).
    Which line comes next depends only on the ranking and on the shown form of lines not
    taken yet (a gap's length), which nothing changes (a fit shortens or drops only lines
    already taken), so the order is the same however far and whenever it is made; a line
    deleted from `lines` stays taken.
    """

    __slots__ = ("_ranked", "_reach", "_taken", "_texts", "_total", "lines")

    def __init__(self, analysis: Analysis, ranked: Iterable[int], texts: LineTexts) -> None:
        self.lines: list[int] = []
        """The order so far."""
        self._ranked = iter(ranked)
        self._taken: set[int] = set()
        self._texts = texts
        self._total = analysis.total_lines
        self._reach = texts.analysis.settings.gap_fill_lines + 2

    def extend(self, n: float) -> bool:
        """Make the order at least `n` lines long, if it has that many (`inf`: whole).

        Returns:
            Whether it has at least `n` lines.
        """
        order, taken = self.lines, self._taken
        texts, total, reach = self._texts, self._total, self._reach
        take, add = order.append, taken.add
        for ln in self._ranked:
            if ln in taken:
                continue
            add(ln)
            take(ln)
            # Each side in turn (below first): a gap only when the next line is not taken and
            # a taken line is near enough; most lines have neither side to fill.
            if ln - 1 not in taken and not taken.isdisjoint(range(ln - 2, ln - reach, -1)):
                gap = _short_gap(ln, -1, taken, texts, total)
                taken.update(gap)
                order.extend(gap)
            if ln + 1 not in taken and not taken.isdisjoint(range(ln + 2, ln + reach)):
                gap = _short_gap(ln, 1, taken, texts, total)
                taken.update(gap)
                order.extend(gap)
            if len(order) >= n:
                return True
        return len(order) >= n


def _short_gap(ln: int, step: int, taken: set[int], texts: LineTexts, total: int) -> list[int]:
    """The lines between `ln` and the nearest taken line in direction `step`, when short.

    At most `gap_fill_lines` lines of at most `gap_fill_chars` characters together (the
    analysis's settings): showing them costs about what the window marker they save does.
    """
    settings = texts.analysis.settings
    # The nearest taken line, if it is near enough, first (set lookups only): most lines
    # have none, and their neighbours' shown forms are then never made.
    most = settings.gap_fill_lines
    other = ln + step
    size = 0
    while size <= most and 1 <= other <= total and other not in taken:
        other += step
        size += 1
    if size > most or not 1 <= other <= total:
        return []
    gap = [ln + step * k for k in range(1, size + 1)]
    chars = 0
    for line_no in gap:
        chars += len(texts.shown(line_no).text)
        if chars > settings.gap_fill_chars:
            return []
    return gap


class _OrderCosts:
    """Sizes of the lines of `order[:k]` and how many windows they make, for each `k`.

    Each line costs its shown text, its cut markers and its newline; a line that joins two
    windows removes one, a line on its own adds one (each window costs a title marker).
    Sizes are in characters (`chars`) and, when the counter can count lines as pieces of a
    longer text (`LineMemoCounter.count_lines`), in exact tokens (`tokens`: each line with
    its newline, each cut marker `cut_tokens`). Computed lazily, as far as the search asks
    (`reach`), never past `room` characters; `more(n)`, when given, makes `order` (a list
    made as far as it is read, `_ShowingOrder`) at least `n` lines long if it can.
    """

    def __init__(
        self,
        order: Sequence[int],
        texts: LineTexts,
        room: int,
        count_lines: Callable[[list[str]], list[int] | None] | None = None,
        cut_tokens: int = 0,
        *,
        more: Callable[[int], bool] | None = None,
    ) -> None:
        self.order, self.texts, self.room = order, texts, room
        self._more = more
        self.chars = [0]
        self.count = [0]
        self.singles = [0]
        """Of the windows, how many are a single line (they share section markers)."""
        self.tokens: list[int] | None = [0] if count_lines is not None else None
        self._count_lines, self._cut_tokens = count_lines, cut_tokens
        self._taken: set[int] = set()

    @property
    def top(self) -> int:
        """The last level computed."""
        return len(self.chars) - 1

    @property
    def done(self) -> bool:
        """Whether every level there is has been computed."""
        if self.chars[-1] > self.room:
            return True
        return self.top >= len(self.order) and (self._more is None or not self._more(self.top + 1))

    @property
    def units(self) -> list[int]:
        """The sizes the fit predicts from: tokens when known, else characters."""
        return self.chars if self.tokens is None else self.tokens

    def reset(self, level: int) -> None:
        """Forget the levels above `level` (the order or a line's shown form changed there)."""
        del self.chars[level + 1 :], self.count[level + 1 :], self.singles[level + 1 :]
        if self.tokens is not None:
            del self.tokens[level + 1 :]
        self._taken = set(self.order[:level])

    def reach(self, size: float) -> None:
        """Compute levels until their lines take `size` units (or all are done)."""
        tokens = self.tokens
        if tokens is None:
            self._reach_chars(size)
            return
        count_lines = cast("Callable[[list[str]], list[int]]", self._count_lines)
        while tokens[-1] < size and not self.done:
            # Lines of about `_LEAST_CHARS_PER_TOKEN` characters per token missing, at least
            # one (denser text takes another round, not lines counted in vain); then the new
            # lines are counted at once.
            top = self.top
            self._reach_chars(
                self.chars[-1] + max(1.0, (size - tokens[-1]) * _LEAST_CHARS_PER_TOKEN)
            )
            # Each line's shown form was made just now (`_reach_chars`): looked up, not made.
            shown = list(map(self.texts._shown.__getitem__, self.order[top : self.top]))
            counts = count_lines(list(map(_TEXT_OF, shown)))
            cuts = list(map(len, map(_CUTS_OF, shown)))
            if any(cuts):  # each cut's marker too
                cut = self._cut_tokens
                counts = [n + cut * c for n, c in zip(counts, cuts, strict=True)]
            sums = accumulate(counts, initial=tokens[-1])
            next(sums)  # the level already known
            tokens.extend(sums)

    def _reach_chars(self, chars: float) -> None:
        """Compute levels until their lines take `chars` characters (or all are done)."""
        taken, order, more = self._taken, self.order, self._more
        texts = self.texts
        made, shown = texts._shown, texts.shown  # `LineTexts.cost`, inlined
        known, line_text, whole, limited = made.get, texts._text, texts._whole, texts._limit
        sums, counts, single = self.chars, self.count, self.singles
        total, room = len(order), self.room
        top = len(sums) - 1
        size, windows, singles = sums[-1], counts[-1], single[-1]
        while size <= room and size < chars:
            if top >= total:  # the order made so far is costed: make more of it, if any
                if more is not None:
                    more(top + _ORDER_STEP)
                total = len(order)
                if top >= total:
                    break
            ln = order[top]
            line = known(ln)
            if line is not None:
                size += len(line.text) + 1 + _MARKER_COST * len(line.cuts)
            else:
                # `LineTexts.shown` of a line not made yet, its common case inlined: a short
                # line shown whole (no cuts); any other line is made by `shown` itself.
                text = line_text(ln) or ""
                if len(text) <= whole and ln not in limited:
                    line = _NEW(ShownLine)
                    _SET(line, "text", text)
                    _SET(line, "cuts", ())
                    made[ln] = line
                    size += len(text) + 1
                else:
                    line = shown(ln)
                    size += len(line.text) + 1 + _MARKER_COST * len(line.cuts)
            before, after = ln - 1 in taken, ln + 1 in taken
            windows += 1 - before - after
            if before or after:  # a window of one line next to it is one no more
                singles -= (before and ln - 2 not in taken) + (after and ln + 2 not in taken)
            else:
                singles += 1
            taken.add(ln)
            sums.append(size)
            counts.append(windows)
            single.append(singles)
            top += 1


def clip_line(raw: str, shown: str, limit: int, offset: int | None) -> ShownLine:
    """A line cut *within* itself to about `limit` characters, each cut exactly accounted for.

    The cut is made on the raw line (so the omitted parts are exact raw ranges that a fetch
    returns byte for byte) and each kept part is cleaned for display on its own.

    Args:
        raw: The raw line (no line ending).
        shown: Its display text (`clean_for_display(raw)`).
        limit: Characters it may take.
        offset: Raw offset of the line's first character in the result (`None`: unknown;
            the cuts then count from the line's start).

    Returns:
        The shown line with its cuts.

    Example:
        ```python
        line = clip_line("x" * 5_000, "x" * 5_000, 300, 1_000)
        assert line.cuts[0].start > 1_000 and len(line.text) < 400
        ```
    """
    if len(shown) <= limit:
        return ShownLine(text=shown)
    base = offset or 0
    visible = raw
    cr = raw.rfind("\r")
    if cr >= 0 and cr < len(raw) - 1:  # a progress redraw: what a terminal shows is the end
        visible = raw[cr + 1 :]
        base += cr + 1
    spans = keep_spans(visible, limit)
    clean = visible == shown
    parts: list[str] = []
    cuts: list[Cut] = []
    pos = 0
    for lo, hi in spans:
        if lo > pos:
            parts.append(ELLIPSIS)
            cuts.append(Cut(at=sum(map(len, parts)), start=base + pos, end=base + lo))
        parts.append(visible[lo:hi] if clean else clean_for_display(visible[lo:hi]))
        pos = hi
    if pos < len(visible):
        parts.append(ELLIPSIS)
        cuts.append(Cut(at=sum(map(len, parts)), start=base + pos, end=base + len(visible)))
    return ShownLine(text="".join(parts), cuts=tuple(cuts))


class LineTexts:
    """The shown form of each line of an analysis, computed once per line and limit."""

    def __init__(
        self,
        analysis: Analysis,
        limits: LineLimits,
        anchors: Iterable[int],
        near: Iterable[int] = (),
    ) -> None:
        """Create the cache.

        Args:
            analysis: The analysis.
            limits: Line length limits.
            anchors: The lines that get the anchor limit.
            near: Other lines that get the error limit (the top of the ranking: the lines
                of the strongest blocks).
        """
        self.analysis = analysis
        self.limits = limits
        self.anchors = frozenset(anchors)
        self.near = frozenset(near)
        self._shown: dict[int, ShownLine] = {}
        self._limit: dict[int, int] = {}
        self._text = analysis._lines.text  # `Analysis.text`, one call less per line
        self._whole = min(limits.normal, limits.error, limits.anchor)
        """A line at most this long is shown whole whatever its limit (unless shortened)."""
        self.windows: dict[tuple[int, int], Window] = {}
        """The windows made of these shown forms (by first and last line), for reuse."""

    def limit(self, line_no: int) -> int:
        """How long `line_no` may be shown."""
        shortened = self._limit.get(line_no)
        if shortened is not None:
            return shortened
        if line_no in self.anchors:
            return self.limits.anchor
        if line_no in self.near or self.analysis.own.get(line_no, 0.0) >= SALIENCE_ITEM:
            return self.limits.error
        return self.limits.normal

    def shown(self, line_no: int) -> ShownLine:
        """The shown form of a line."""
        cached = self._shown.get(line_no)
        if cached is None:
            text = self._text(line_no) or ""
            if len(text) <= self._whole and line_no not in self._limit:
                cached = _whole_line(text)  # most lines: short, whatever their limit
            else:
                limit = self.limit(line_no)
                whole = limit if line_no in self._limit else limit * self.limits.slack
                if len(text) <= whole:  # short enough, or a cut would save little
                    cached = ShownLine(text=text)
                else:
                    span = self.analysis.span(line_no)
                    raw = self.analysis.raw_line(line_no) or text
                    cached = clip_line(raw, text, limit, span[0] if span else None)
            self._shown[line_no] = cached
        return cached

    def shorten(self, line_no: int) -> bool:
        """Halve the room of a line that does not fit (down to `_MIN_CUT` characters).

        Returns:
            Whether it got shorter (`False`: it is short already).
        """
        length = len(self.shown(line_no).text)
        if length <= _MIN_CUT:
            return False
        self._limit[line_no] = max(_MIN_CUT, min(self.limit(line_no), length) // 2)
        del self._shown[line_no]
        self.windows.clear()
        return True

    def cost(self, line_no: int) -> int:
        """Characters the line adds to a view (its text, its cut markers, its newline)."""
        line = self.shown(line_no)
        return len(line.text) + 1 + _MARKER_COST * len(line.cuts)


def windows(analysis: Analysis, lines: Sequence[int], texts: LineTexts) -> list[Window]:
    """One `Window` per run of consecutive selected lines.

    Args:
        analysis: The analysis.
        lines: Selected line numbers (sorted).
        texts: The shown form of each line.

    Returns:
        The windows, in order.
    """
    out: list[Window] = []
    roles = analysis.roles
    made = texts.windows if texts.analysis is analysis else {}
    line_of, make = texts._shown.get, texts.shown  # most lines' shown forms are made already
    for first, last in windows_of(lines):
        known = made.get((first, last))
        if known is not None:  # the same lines, shown the same way
            out.append(known)
            continue
        seen = set(map(roles.get, range(first, last + 1), repeat("context", last - first + 1)))
        role = next((r for r in _ROLE_ORDER if r in seen), "context")
        if role in ("context", "detail", "fill") and last == analysis.total_lines:
            role = "tail"
        if role in ("detail", "fill"):
            role = "error" if role == "detail" else "context"
        span_first = analysis.span(first)
        span_last = analysis.span(last)
        window = Window(
            role=role,
            start_line=first,
            end_line=last,
            start_char=span_first[0] if span_first else None,
            end_char=span_last[1] if span_last else None,
            lines=_shown_lines(line_of, make, first, last),
        )
        made[first, last] = window
        out.append(window)
    return out


def _shown_lines(
    line_of: Callable[[int], ShownLine | None],
    make: Callable[[int], ShownLine],
    first: int,
    last: int,
) -> list[ShownLine]:
    """The shown forms of lines `first` to `last`: looked up (one C-level map), made if not."""
    found = list(map(line_of, range(first, last + 1)))
    if all(found):  # (a shown line is true; `None in` would call `__eq__` per line)
        return cast("list[ShownLine]", found)
    return [line or make(first + i) for i, line in enumerate(found)]


_FIT_TARGET = 0.98
_MAX_CHARS_PER_TOKEN = 6
_MAX_PROBES = 8
_MAX_STUCK = 6
"""How many times a line that does not fit is cut shorter or passed over to fill on."""
_SAMPLE_CHARS = 16_000


def fit_windows(
    analysis: Analysis,
    ranked: Sequence[int] | Ranking,
    *,
    texts: LineTexts,
    render: Callable[[list[Window]], str],
    budget: Budget,
    counter: TokenCounter,
) -> tuple[list[Window], str] | None:
    """The windows of the largest top-`k` of `ranked` whose rendered view fits `budget`.

    The size of a view grows with `k` by the sizes of the lines it adds, so `k` is chosen
    from those sizes: their exact tokens when the counter counts lines as pieces of the
    view (`LineMemoCounter.count_lines`: the view's count then finds most of its pieces
    counted already), else their characters and a characters-per-token ratio read from a
    sample. Each probe renders and counts the view exactly and corrects the scale of the
    prediction, so a probe or two suffice. The view stops once it uses `_FIT_TARGET` of its
    token budget (or shows every line); an overflowing probe and a fitting one bracket the
    answer, and the next probe interpolates between their counts.

    Args:
        analysis: The analysis.
        ranked: Lines by priority.
        texts: The shown form of each line.
        render: Renders the whole view for some windows.
        budget: The budget.
        counter: The token counter.

    Returns:
        The windows and the text, or `None` when not even the view without lines fits.
    """

    def attempt(k: int) -> tuple[list[Window], str, int | None]:
        shown = windows(analysis, sorted(order[:k]), texts)
        text = render(shown)
        if len(text) > budget.chars:
            return shown, text, None
        tokens = counter.count(text)
        return shown, text, tokens if tokens <= budget.tokens else None

    order: list[int] = []  # the showing order, made as far as the fit reads it
    empty, base_text, base_tokens = attempt(0)
    if base_tokens is None:
        return None
    good = (0, empty, base_text, base_tokens)
    if not ranked:
        return good[1], good[2]
    # Lines are costed only as far as the budget could reach (at most `_MAX_CHARS_PER_TOKEN`
    # characters per token): the rest of a long ranking is never read.
    room_chars = min(budget.chars - len(base_text), budget.tokens * _MAX_CHARS_PER_TOKEN)
    showing = _ShowingOrder(analysis, ranked, texts)
    order = showing.lines
    count_lines = counter.count_lines if isinstance(counter, LineMemoCounter) else None
    if count_lines is not None and count_lines([]) is None:
        count_lines = None  # not an additive counter: characters and a ratio
    # What a window's title, a one-line window in a run of them (`lines 3, 9, 14`) and a
    # cut's marker cost, with the fence views are fitted with and numbers of this text's size.
    n, fence = analysis.total_lines, CANONICAL_FENCE
    at = analysis.raw_chars
    cut_tokens = counter.count(fence.marker(cut_marker(Cut(at=0, start=at // 2, end=at))))
    costs = _OrderCosts(order, texts, room_chars, count_lines, cut_tokens, more=showing.extend)
    marker = counter.count(fence.marker(f"lines {n // 2}-{n}") + "\n")
    single = counter.count(f", {n}")
    scale = 1.0  # tokens per unit of `costs.units` (per character: 1 / the ratio)
    offset = 0.0  # tokens the exact prediction missed at the last probe (markers, notices)

    def predicted(level: int) -> float:
        """Tokens the lines and window titles of `level` are predicted to take."""
        windows, singles = costs.count[level], costs.singles[level]
        return costs.units[level] * scale + (windows - singles) * marker + singles * single

    def level_for(tokens: float) -> int:
        """The largest level predicted to take at most `tokens` (lines and markers)."""
        tokens -= offset
        if costs.tokens is None:
            costs.reach(tokens / scale * 1.25)  # a ratio's guess needs a margin
        else:  # exact line tokens: up to the first level predicted to take more
            while not costs.done and predicted(costs.top) <= tokens:
                costs.reach(costs.tokens[-1] + tokens - predicted(costs.top) + 1)
        lo, hi = 0, costs.top
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if predicted(mid) <= tokens:
                lo = mid
            else:
                hi = mid - 1
        return lo

    target = budget.tokens * (_FIT_TARGET + 1) / 2
    full = budget.tokens * _FIT_TARGET
    if costs.tokens is None:
        # The ratio of the lines the view will show: a spread sample of the levels up to a
        # first guess (the top lines are not like the rest: errors are denser in tokens).
        scale = 1 / 3.5
        top = max(1, level_for(target - base_tokens))
        scale = 1 / _sample_ratio(order, texts, counter, costs, top)
    for stuck_round in range(_MAX_STUCK + 1):
        bad: int | None = None  # a level known not to fit
        for probe in range(_MAX_PROBES):
            k = level_for(target - base_tokens)
            ceiling = bad if bad is not None else (costs.top + 1 if costs.done else None)
            if ceiling is not None and (k <= good[0] or k >= ceiling):
                k = (good[0] + ceiling) // 2
            if k <= good[0] and stuck_round and not probe:
                # The line was cut shorter or passed over: try the next level, if any.
                costs.reach(costs.units[good[0]] + 1)
                if costs.top > good[0]:
                    k = good[0] + 1
            if k <= good[0]:
                break
            shown, text, tokens = attempt(k)
            if tokens is None:
                used = counter.count(text) if len(text) <= budget.chars else budget.tokens * 2
                bad = k
            else:
                good = (k, shown, text, tokens)
                used = tokens
                if tokens >= full or (costs.done and k >= costs.top):
                    break
            if costs.tokens is None:
                body = used - base_tokens - (predicted(k) - costs.units[k] * scale)
                scale = min(2.0, max(1, body) / max(1, costs.units[k]))
            else:  # the lines' tokens are exact: what is missed is about constant
                offset = used - base_tokens - predicted(k)
            if bad is not None and bad - good[0] <= 1:
                break
        if good[3] >= full or bad is None or bad - good[0] > 1:
            break
        # The next line in the order is what does not fit: cut it shorter within the line
        # (or, when it is short already, pass over it) and fill on with the lines after it.
        stuck = good[0]
        if not texts.shorten(order[stuck]):
            del order[stuck]
        costs.reset(stuck)
    return good[1], good[2]


def _sample_ratio(
    order: Sequence[int], texts: LineTexts, counter: TokenCounter, costs: _OrderCosts, top: int
) -> float:
    """Characters per token of the lines a view would show, from a spread sample of them."""
    top = min(top, costs.top)
    if top <= 0:
        return 3.5
    step = max(1, costs.chars[top] // _SAMPLE_CHARS)
    sample = "\n".join(texts.shown(order[i]).text for i in range(0, top, step))
    return max(1.0, len(sample) / max(1, counter.count(sample)))


def window_sections(items: Sequence[Window], fence: Fence) -> list[Section]:
    """Fenced sections for windows, long lines cut within with exact markers.

    Args:
        items: The windows.
        fence: The fence (its nonce marks the cuts).

    Returns:
        One section per window.
    """
    sections: list[Section] = []
    for item in items:
        texts, cut_rows = item._line_texts()
        out = list(texts)
        for row in cut_rows:  # most lines are whole
            line = item.lines[row]
            shown = line.text
            # Markers go in from the last cut backwards so positions stay valid.
            for cut in sorted(line.cuts, key=lambda c: c.at, reverse=True):
                shown = shown[: cut.at] + fence.marker(cut_marker(cut)) + shown[cut.at :]
            out[row] = shown
        first, last = item.start_line, item.end_line
        title = f"line {first}" if first == last else f"lines {first}-{last}"
        sections.append(Section(title=title, lines=out))
    return sections


def range_phrase(first: int, last: int) -> str:
    """`line 7` or `lines 7-9`.

    Args:
        first: First line.
        last: Last line.

    Returns:
        The phrase.
    """
    return f"line {first:,}" if first == last else f"lines {first:,}-{last:,}"


def omitted_line_ranges(analysis: Analysis, items: Sequence[Window]) -> list[OmittedRange]:
    """The whole lines between and around the shown windows, with raw character offsets.

    Args:
        analysis: The analysis.
        items: The shown windows.

    Returns:
        Omitted ranges in text order.
    """
    ranges: list[OmittedRange] = []
    prev_line = 0
    prev_char = 0
    for item in items:
        first = item.start_line
        if first > prev_line + 1:
            end_char = item.start_char if item.start_char is not None else prev_char
            ranges.append(
                OmittedRange(
                    start_line=prev_line + 1,
                    end_line=first - 1,
                    start_char=prev_char,
                    end_char=max(prev_char, end_char),
                    lines=first - 1 - prev_line,
                )
            )
        prev_line = item.end_line
        prev_char = item.end_char if item.end_char is not None else prev_char
    if prev_line < analysis.total_lines:
        ranges.append(
            OmittedRange(
                start_line=prev_line + 1,
                end_line=analysis.total_lines,
                start_char=prev_char,
                end_char=max(prev_char, analysis.raw_chars),
                lines=analysis.total_lines - prev_line,
            )
        )
    return ranges


def error_reference(base: Reference, line_no: int, total: int) -> Reference:
    """A reference to the lines around an error (5 before, 40 after).

    Args:
        base: The record's reference.
        line_no: The error line.
        total: Lines of the record.

    Returns:
        The reference.
    """
    start = max(1, line_no - 5)
    end = max(start, min(total, line_no + 40))
    return base.with_lines(start, end)


@dataclass(frozen=True, slots=True)
class LineSample:
    r"""Lines of a text: all of them, or windows of consecutive lines spread over it.

    Attributes:
        total_lines: Lines of the whole text (split on `\n`).
        numbered: `(line number, line)` pairs in line order (without line endings).
        sampled: Whether `numbered` is a sample rather than every line.

    Example:
        ```python
        sample = sample_lines("a\nb\nc\n", max_lines=10)
        assert sample.numbered == [(1, "a"), (2, "b"), (3, "c")] and not sample.sampled
        ```
    """

    total_lines: int
    numbered: list[tuple[int, str]]
    sampled: bool


def _strip_cr(line: str) -> str:
    return line[:-1] if line.endswith("\r") else line


def sample_lines(
    text: str, *, max_lines: int, windows: int = 40, total_lines: int | None = None
) -> LineSample:
    r"""Every line of `text`, or `max_lines` lines in `windows` evenly spread windows.

    A long text is never split as a whole: windows start at evenly spaced character
    offsets (the first at the start, the last ending at the end), and line numbers are
    counted with `str.count` (C speed), so the cost depends on `max_lines`, not on the
    size of the text.

    Args:
        text: The text.
        max_lines: How many lines at most.
        windows: How many windows of consecutive lines a sample has.
        total_lines: The number of lines of `text`, when the caller knows it already.

    Returns:
        The lines with their numbers.

    Example:
        ```python
        text = "".join(f"line {i}\n" for i in range(1, 10_001))
        sample = sample_lines(text, max_lines=100, windows=4)
        assert sample.sampled and len(sample.numbered) == 100
        assert sample.numbered[0] == (1, "line 1") and sample.numbered[-1] == (10_000, "line 10000")
        ```
    """
    if total_lines is None:
        total = text.count("\n") + (0 if not text or text.endswith("\n") else 1)
    else:
        total = total_lines
    if total <= max_lines:
        lines = text.split("\n")
        if lines and lines[-1] == "" and text.endswith("\n"):
            lines.pop()
        if not text:
            lines = []
        return LineSample(
            total_lines=total,
            numbered=[(i + 1, _strip_cr(ln)) for i, ln in enumerate(lines)],
            sampled=False,
        )
    windows = max(2, min(windows, max_lines)) if max_lines >= 2 else 1
    per = max(1, max_lines // windows)
    n = len(text)
    out: list[tuple[int, str]] = []
    pos = 0  # first offset not yet sampled (a line start)
    line_at_pos = 1
    for k in range(windows):
        if k == windows - 1 and windows > 1:
            # The last window ends at the end of the text: find its first line backwards.
            cut = n - 1 if text.endswith("\n") else n
            start = -1
            for _ in range(per):
                prev = text.rfind("\n", pos, cut)
                if prev < 0:
                    start = pos
                    break
                cut = prev
            if start < 0:
                start = cut + 1
        elif k == 0:
            start = 0
        else:
            target = (n * k) // windows
            if target <= pos:
                start = pos
            else:
                nl = text.find("\n", target - 1)
                start = n if nl < 0 else nl + 1
        if start >= n:
            if k < windows - 1:
                continue  # past the last line: the last window still ends there
            break
        line_no = line_at_pos + text.count("\n", pos, start)
        end = start
        for _ in range(per):
            nl = text.find("\n", end)
            if nl < 0:
                end = n
                break
            end = nl + 1
        chunk = text[start:end].split("\n")
        if chunk and chunk[-1] == "":
            chunk.pop()
        out.extend((line_no + i, _strip_cr(ln)) for i, ln in enumerate(chunk))
        line_at_pos = line_no + text.count("\n", start, end)
        pos = end
        if pos >= n:
            break
    return LineSample(total_lines=total, numbered=out, sampled=True)


def spread(items: Sequence[T], limit: int, *, windows: int = 40) -> list[T]:
    """At most `limit` items: all of them, or `windows` evenly spread runs of consecutive ones.

    The first run starts at the first item and the last run ends at the last one.

    Args:
        items: Items in order.
        limit: How many at most.
        windows: How many runs.

    Returns:
        The chosen items, in order.

    Example:
        ```python
        assert spread(list(range(10)), 4, windows=2) == [0, 1, 8, 9]
        ```
    """
    n = len(items)
    if n <= limit:
        return list(items)
    windows = max(1, min(windows, limit))
    per = max(1, limit // windows)
    out: list[T] = []
    taken = 0
    for k in range(windows):
        start = 0 if windows == 1 else ((n - per) * k) // (windows - 1)
        start = max(start, taken)
        stop = min(n, start + per)
        out.extend(items[start:stop])
        taken = stop
    return out
