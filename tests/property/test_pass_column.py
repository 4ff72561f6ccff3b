"""A pass verdict after a gap of blanks is a pass however wide the gap.

`_passing_suffix` read `name:  OK` with a regex that allowed at most 80 blanks of padding; a
runner that pads its verdicts to a column of a wide terminal (hspec: 150 blanks) printed
every passing test as an error mention (`'x.purs' should fail with 'E':` ... `OK`). The gap is
now read back from the verdict (`_in_pass_column`): every line the old pattern called a pass
is still one, and a wider gap changes nothing else.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.core import evidence

_OLD_BRANCH = re.compile(
    r"(?<=\S)(?::\s|\s\s)\s{0,80}(?:OK|PASS|PASSED|passed)\b(?: \([\d.]{1,12}m?s\))?[.!]?\s*$",
    re.IGNORECASE,
)
"""The branch of `_PASSING_SUFFIX_RE` that `_in_pass_column` replaced (searched in the last
200 characters)."""

_PIECES = [
    *("name", "x", "'a.purs' should fail with 'E'", ":", " ", "  ", "\t", "   " * 30),
    *("OK", "ok", "PASS", "passed", "PASSED", " (0.01s)", " (12ms)", ".", "!", "KO", "fail"),
    *("okay", "OKAY", "É", "İ", "-", "…", "..."),
]
_LINES = st.lists(st.sampled_from(_PIECES), max_size=16).map("".join)


@settings(max_examples=800, deadline=None)
@given(line=_LINES)
def test_every_line_the_old_pattern_passed_still_passes(line: str) -> None:
    head = line[: evidence._PROBE]
    if _OLD_BRANCH.search(head[-200:]):
        assert evidence._in_pass_column(head)


@settings(max_examples=300, deadline=None)
@given(
    name=st.sampled_from(["'a.purs' should fail with 'E':", "test_x", "b failed:"]),
    gap=st.integers(min_value=2, max_value=400),
    verdict=st.sampled_from(["OK", "PASSED", "ok (0.5s)", "OK (0.01s)."]),
)
def test_a_verdict_after_any_gap_is_a_pass(name: str, gap: int, verdict: str) -> None:
    assert evidence._in_pass_column("  " + name + " " * gap + verdict)
