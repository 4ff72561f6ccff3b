"""The showing order of an analysis: lines by priority, with diminishing returns per kind.

`Analysis.ranking` reads `_greedy_order` lazily through a `Ranking`: lines of one group
(`_group_key`: a line's first words after its timestamp, numbers and paths folded) count
for less each time one is taken, so a block of a hundred similar lines does not crowd out
everything else. `windows_of` turns shown lines into runs of consecutive lines.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterable, Iterator
from itertools import compress, islice, repeat
from operator import ge, ne, neg, sub
from typing import TYPE_CHECKING

from langchain_result_layer.core.evidence import SALIENCE_ITEM

if TYPE_CHECKING:
    from langchain_result_layer.views._salience import Analysis

__all__ = ["Ranking", "windows_of"]

_STAMP_TOKEN_RE = re.compile(
    r"^(?:(?:[\d:.,/+\-TZ\[\]()]{1,64}|Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec|-)$)"
)


_DIGIT_RUN_RE = re.compile(r"[0-9]+")
"""A run of ASCII digits (`_group_key` folds it to `0` in one pass)."""
_DIGITS = frozenset("0123456789")
"""What `_DIGIT_RUN_RE` matches: a word with none of them is not searched (a set test per
character costs a third of a regex call)."""


def _group_key(text: str) -> str:
    """The first three words of a line after its timestamp; numbers folded, paths as `*`."""
    words: list[str] = []
    for token in text.split(None, 12):
        if not words and _STAMP_TOKEN_RE.match(token):
            continue  # timestamps and other leading numbers
        if "/" in token or "\\" in token:
            words.append("*")
        elif token.isalpha() or _DIGITS.isdisjoint(token):  # no digit to fold (most words)
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

    The first entries (every group's best line, every line ranked on its own) are sorted
    once (a C-level sort, best last) and read from the end; only the entries pushed later
    (a group's next line, a copy pushed back) go to the heap, and each step takes the better
    of the two fronts. No two live entries share a line, so entries never tie, and this is
    the order one heap of all the entries gives, with a small heap.
    """
    settings = analysis.settings
    texts, roles, own = analysis.texts, analysis.roles, analysis.own
    by_group, solo = _grouped(effective, texts, roles, analysis._group_keys)
    # (-value, -line, taken from group (-1: solo), group key, identical copies applied)
    first: list[tuple[float, int, int, str, int]] = []
    for key, members in by_group.items():
        _best_last(members, effective)
        first.append((-effective[members[-1]], -members[-1], 0, key, 0))
    first.extend(
        zip(
            map(neg, map(effective.__getitem__, solo)),
            map(neg, solo),
            repeat(-1),
            repeat(""),
            repeat(0),
        )
    )
    first.sort(reverse=True)  # the best entry last (`pop`)
    heap: list[tuple[float, int, int, str, int]] = []
    heappush, heappop = heapq.heappush, heapq.heappop
    copies: dict[str, int] = {}
    while first or heap:
        if heap and (not first or heap[0] < first[-1]):
            neg_value, neg_ln, taken, key, applied = heappop(heap)
        else:
            neg_value, neg_ln, taken, key, applied = first.pop()
        line = -neg_ln
        exact = texts.get(line, "").strip()
        seen = copies.get(exact, 0) if exact else 0
        if seen > applied:
            factor = settings.exact_repeat ** (seen - applied)
            heappush(heap, (neg_value * factor, neg_ln, taken, key, seen))
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
        heappush(heap, (-effective[nxt] * line_factor, -nxt, taken, key, 0))


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
