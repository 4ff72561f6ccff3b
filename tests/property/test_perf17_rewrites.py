"""Session 17 (perf17): byte-identical rewrites of the ranking against the replaced code.

The greedy ranking takes its first entries (every group's best line, every line ranked on its
own) from one sorted list and keeps only the entries pushed later in its heap; `_group_key`
folds the digits of a word only when it holds one. Each gives what the replaced code gives:
the ranking on analyses whose lines tie in value and repeat one another's text (the
exact-copy push-back), the key on any text.
"""

from __future__ import annotations

import heapq
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.core.evidence import SALIENCE_ITEM
from langchain_result_layer.views._ranking import _STAMP_TOKEN_RE, _best_last, _group_key, _grouped
from langchain_result_layer.views._salience import Analysis, analyse

_OLD_DIGIT_RUN_RE = re.compile(r"[0-9]+")


def _old_group_key(text: str) -> str:
    """`_group_key` as it was: every word that is not all letters searched for digits."""
    words: list[str] = []
    for token in text.split(None, 12):
        if not words and _STAMP_TOKEN_RE.match(token):
            continue
        if "/" in token or "\\" in token:
            words.append("*")
        elif token.isalpha():
            words.append(token)
        else:
            words.append(_OLD_DIGIT_RUN_RE.sub("0", token))
        if len(words) == 3:
            break
    return " ".join(words)


def _one_heap_order(analysis: Analysis) -> list[int]:
    """The greedy order as it was made: one heap of every entry."""
    settings = analysis.settings
    effective = dict(analysis.priority)
    texts, roles, own = analysis.texts, analysis.roles, analysis.own
    by_group, solo = _grouped(effective, texts, roles)
    heap: list[tuple[float, int, int, str, int]] = []
    for key, members in by_group.items():
        _best_last(members, effective)
        heap.append((-effective[members[-1]], -members[-1], 0, key, 0))
    heap.extend((-effective[ln], -ln, -1, "", 0) for ln in solo)
    heapq.heapify(heap)
    copies: dict[str, int] = {}
    order: list[int] = []
    while heap:
        neg_value, neg_ln, taken, key, applied = heapq.heappop(heap)
        line = -neg_ln
        exact = texts.get(line, "").strip()
        seen = copies.get(exact, 0) if exact else 0
        if seen > applied:
            factor = settings.exact_repeat ** (seen - applied)
            heapq.heappush(heap, (neg_value * factor, neg_ln, taken, key, seen))
            continue
        order.append(line)
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
            members.sort(reverse=True)
        taken += 1
        nxt = members[-1]
        if own.get(nxt, 0.0) >= SALIENCE_ITEM:
            line_factor = settings.item_repeat ** max(0, taken - 5)
        else:
            line_factor = settings.other_repeat ** max(0, taken - 2)
        heapq.heappush(heap, (-effective[nxt] * line_factor, -nxt, taken, key, 0))
    return order


_LINES = st.sampled_from(
    [
        "error: boom",
        "error: boom 2",
        "FAILED test_x",
        "  at a.b(C.java:1)",
        "ok",
        "",
        "warning: w",
        "1) test fails",
        "$ make",
        "Error 12 at 3",
        "x" * 30,
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(_LINES, min_size=1, max_size=120),
    ties=st.lists(st.sampled_from([0.5, 1.0, 2.0, 3.0]), max_size=120),
    is_error=st.booleans(),
)
def test_ranking_is_the_one_heap_order(lines: list[str], ties: list[float], is_error: bool) -> None:
    """Repeated texts push copies back; equal values (set below) make entries tie in value."""
    analysis = analyse("\n".join(lines) + "\n").for_status(is_error=is_error)
    for ln, value in zip(sorted(analysis.priority), ties, strict=False):
        analysis.priority[ln] = value
    assert analysis.ranked() == _one_heap_order(analysis)


@given(text=st.text(st.sampled_from("ab1290/\\:.-T \t[]()é٣Jan"), max_size=60))
def test_group_key_is_the_old_key(text: str) -> None:
    assert _group_key(text) == _old_group_key(text)
