"""Every regular expression of the package runs in linear time on adversarial lines.

The sweep (`_patterns.package_patterns`) finds every compiled pattern: module and class
attributes and every `re.*` call with a literal pattern in the source. Each runs over
adversarial lines of up to 20,000 characters built from its own literal characters, digit
runs, spaces, control characters, `\\r` and separators (`_patterns.adversarial_lines`). A
pattern fails when its slowest line takes over 50 ms *and* its time grows faster than the
line (8x the time for 4x the line): a quadratic pattern takes seconds there, a linear one
milliseconds, and load on a shared machine cannot fail a linear pattern.

Patterns in files other helpers are rewriting are listed in `STILL_QUADRATIC` as strict
xfails: once fixed, the test fails until the entry is removed.
"""

from __future__ import annotations

import re

import pytest

from tests.security._patterns import FoundPattern, package_patterns, worst_time

BUDGET_S = 0.05
LINE_CHARS = 20_000

# Quadratic today, in files other helpers are rewriting (none left).
STILL_QUADRATIC: dict[str, str] = {}

PATTERNS = package_patterns()


def _param(found: FoundPattern) -> object:
    marks = []
    if found.name in STILL_QUADRATIC:
        marks.append(pytest.mark.xfail(reason=STILL_QUADRATIC[found.name], strict=True))
    return pytest.param(found, id=found.name, marks=marks)


def test_the_sweep_finds_the_package_patterns() -> None:
    names = {p.name for p in PATTERNS}
    assert len(PATTERNS) > 80
    assert "langchain_result_layer.views.json_view:_PATH_TOKEN_RE" in names
    assert any(name.startswith("langchain_result_layer.views.files:line ") for name in names)
    assert set(STILL_QUADRATIC) <= names, "an xfail entry names a pattern that is gone"


def test_the_check_catches_a_quadratic_pattern() -> None:
    # Every start position scans the whole run of digits: about 16x the time for 4x the line.
    quadratic = FoundPattern("quadratic", re.compile(r"1+ x"))
    timing = worst_time(quadratic, LINE_CHARS, BUDGET_S)
    assert timing.slow(BUDGET_S), timing


@pytest.mark.timeout(300)
@pytest.mark.parametrize("found", [_param(p) for p in PATTERNS])
def test_pattern_is_linear_on_adversarial_lines(found: FoundPattern) -> None:
    timing = worst_time(found, LINE_CHARS, BUDGET_S)
    assert not timing.slow(BUDGET_S), (
        f"{found.name} ({found.pattern.pattern!r:.80}) took {timing.seconds * 1000:.0f} ms, "
        f"{timing.growth:.1f}x its time on a quarter of the line, on {timing.line}"
    )
