"""Session 17 (perf17): byte-identical rewrites of the ranking against the replaced code.

The greedy ranking takes its first entries (every group's best line, every line ranked on its
own) from one sorted list and keeps only the entries pushed later in its heap; `_group_key`
folds the digits of a word only when it holds one. Each gives what the replaced code gives:
the ranking on analyses whose lines tie in value and repeat one another's text (the
exact-copy push-back), the key on any text.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.views._ranking import _STAMP_TOKEN_RE, _group_key
from langchain_result_layer.views._salience import analyse
from tests.property.test_lazy_ranking import _reference as _one_heap_order

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
