r"""The timestamp a CI system writes before every line of a job's log, found by its shape.

GitHub Actions and Azure Pipelines write `2026-12-07T20:56:10.8045670Z ` before each line of
a raw job log, Jenkins' timestamper `[2026-12-07T20:56:18.502Z] `, other runners and loggers
their own forms. The tool's output follows it, so a rule that reads the start of a line (a
diagnostic's location, pytest's `E   `, a traceback's indentation) reads the timestamp
instead. `line_prefix` finds such a prefix without knowing any CI system: a leading stamp of
digits and date/time punctuation that holds a time (`12:34`) and ends in a blank, or a terminal
string command (Buildkite's `\x1b_bk;t=<ms>\x07`), with the same shape (digit runs folded) on
at least `SHARE` of the sampled lines. The analysis then reads
each line without it; the lines shown keep it.

Example:
    ```python
    from langchain_result_layer.views._line_prefix import line_prefix

    log = "".join(f"2026-12-07T20:56:{i:02}.1234567Z step {i}\n" for i in range(20))
    prefix = line_prefix(log)
    assert prefix is not None
    assert prefix.sub("", log).splitlines()[3] == "step 3"
    assert line_prefix("step 1\nstep 2\nstep 3\n") is None
    ```
"""

from __future__ import annotations

import re
from collections import Counter

__all__ = ["SHARE", "line_prefix"]

SHARE = 0.9
"""Share of the sampled non-blank lines that must carry the same stamp."""
_SAMPLE = 200
"""Non-blank lines sampled at each end of the text."""
_MIN_LINES = 10
"""Fewer sampled lines than this say nothing."""
_MIN_DIGITS = 8
"""A stamp holds a date or a long time: at least this many digits."""
_ESCAPE_STAMP_RE = re.compile(r"\x1b[_\]P^X][^\x07\x1b\n]{0,80}(?:\x07|\x1b\\)")
"""A terminal string command before the text (Buildkite's `\x1b_bk;t=<ms>\x07`): invisible on a
terminal, it is a stamp whatever it holds."""
_STAMP_RE = re.compile(
    r"[\[(]?\d[\d:.,/+TZ-]{0,40}(?: \d{1,2}:\d\d[\d:.,+Z-]{0,30})?[\])]?(?=[ \t\r]|$)"
)
"""A leading run of digits and date/time punctuation (one inner blank before a time:
`2026-12-07 20:56:10`), optionally bracketed, followed by a blank or the end of the line."""
_TIME_RE = re.compile(r"\d:\d\d")
_DIGIT_RUN_RE = re.compile(r"\d+")


def _shape(stamp: str) -> str | None:
    """The stamp with its digit runs folded to `0`, when it is a timestamp's."""
    if not _TIME_RE.search(stamp) or sum(c.isdigit() for c in stamp) < _MIN_DIGITS:
        return None
    return _DIGIT_RUN_RE.sub("0", stamp)


def _pattern(shape: str) -> re.Pattern[str]:
    """The line-start pattern of a folded shape (each `0` a run of digits) and its blank."""
    parts = [r"\d+" if part == "0" else re.escape(part) for part in re.split("(0)", shape)]
    end = "" if shape.startswith("\x1b") else r"(?:[ \t]|(?=\r?$))"
    return re.compile("^" + "".join(parts) + end, re.MULTILINE)


def _sample(text: str) -> list[str]:
    """The first and the last `_SAMPLE` non-blank lines (each line once)."""
    head: list[str] = []
    pos, size = 0, len(text)
    while pos < size and len(head) < _SAMPLE:
        newline = text.find("\n", pos)
        end = size if newline < 0 else newline
        if text[pos:end].strip():
            head.append(text[pos:end])
        pos = end + 1
    tail: list[str] = []
    end = size - 1 if text.endswith("\n") else size
    while end > pos and len(tail) < _SAMPLE:
        start = text.rfind("\n", pos, end) + 1 or pos
        if text[start:end].strip():
            tail.append(text[start:end])
        end = start - 1
    return head + tail


def line_prefix(text: str) -> re.Pattern[str] | None:
    r"""The pattern of the timestamp prefix of the text's lines, if they carry one.

    Args:
        text: A log or command output.

    Returns:
        A multiline pattern matching the prefix (with its blank) at the start of each line
        that carries it, or `None` when fewer than `SHARE` of the sampled non-blank lines (the
        first and last 200) carry a stamp of one shape.

    Example:
        ```python
        log = "".join(f"[2026-12-07T20:56:18.{i:03}Z] cc -c m{i}.c\n" for i in range(12))
        assert line_prefix(log).match(log).group() == "[2026-12-07T20:56:18.000Z] "
        ```
    """
    sample = _sample(text)
    if len(sample) < _MIN_LINES:
        return None
    shapes: Counter[str] = Counter()
    for line in sample:
        escape = _ESCAPE_STAMP_RE.match(line)
        if escape is not None:
            shape: str | None = _DIGIT_RUN_RE.sub("0", escape.group())
        else:
            match = _STAMP_RE.match(line)
            shape = _shape(match.group()) if match else None
        if shape is not None:
            shapes[shape] += 1
    if not shapes:
        return None
    shape, count = shapes.most_common(1)[0]
    if count < SHARE * len(sample):
        return None
    return _pattern(shape)
