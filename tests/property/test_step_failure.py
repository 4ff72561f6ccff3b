"""Exit statuses and step verdicts read from a line's lower-cased head given once.

`salience_of` gets a line's head and its lower-cased head; the exit-status and verdict
checks it starts with used to lower-case the head twice more and test their hints with a
generator per line. They now share the lower-cased head (`_step_failure`, `_exit_code`).
A line that is a warning report as a whole is scored a warning before its other kinds are
looked for (they could only be kept below a warning). The answers must be those of the
code they replaced, kept here as the reference.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.core import evidence
from langchain_result_layer.core.evidence import (
    SALIENCE_EXIT,
    SALIENCE_WARNING,
    exit_code_in,
    is_step_failure,
    line_salience,
    salience_of,
)

_PIECES = [
    *("exit code ", "Exit Status ", "exited with ", "exit with code: ", "EXITED WITH CODE "),
    *("make[2]: *** [all] Error ", "make: *** [x] error ", "returned non-zero exit status "),
    *("return code ", "returncode=", "rc=", "RC: ", "status: ", "[step] exit = "),
    *("command failed with exit code ", "Command failed", "BUILD FAILED", "BUILD FAILURE"),
    *("FAILURE: Build failed", "Finished: FAILURE", "Finished: ABORTED", "##[error]"),
    *('The command "make test" ', "failed", "exited with 2.", "npm ERR! code ELIFECYCLE"),
    *("error: Recipe `x` failed", "0", "1", "2", "-1", "137", " ", "  ", "x", ":", "=", "\t"),
    *("İ", "\u212a", "É", "a" * 300),
    *("build ", "Build Failed", "BUILD F", "the command ", 'Command "x" ', "finished: failure"),
    *("Recipe ", "elifecycle", "command failed", "COMMAND FAILED", "\n", "FINISHED: "),
]
_LINES = st.lists(st.sampled_from(_PIECES), max_size=30).map("".join)


_OLD_STEP_HINTS = (
    *("build", "finished:", "##[error]", "the command", "elifecycle", "recipe", "command"),
)
"""The verdict hints `_step_failure` tested before its literals (`_STEP_LITERALS`)."""


def _old_exit_code_in(line: str) -> int | None:
    low = line[: evidence._PROBE].lower()
    if not any(hint in low for hint in evidence._EXIT_HINTS):
        return None
    match = evidence._EXIT_RE.search(low) or evidence._BARE_EXIT_RE.match(low)
    if match is None:
        return None
    return int(next(g for g in match.groups() if g is not None))


def _old_is_step_failure(line: str) -> bool:
    status = _old_exit_code_in(line)
    if status is not None:
        return status != 0
    probe = line[: evidence._PROBE]
    low = probe.lower()
    if not any(h in low for h in _OLD_STEP_HINTS):
        return False
    return bool(evidence._STEP_END_RE.search(probe) or evidence._STEP_START_RE.match(probe))


@settings(max_examples=500, deadline=None)
@given(line=_LINES)
def test_exit_status_and_verdict_are_those_of_the_replaced_code(line: str) -> None:
    assert exit_code_in(line) == _old_exit_code_in(line)
    assert is_step_failure(line) == _old_is_step_failure(line)
    head = line[: evidence._PROBE]
    assert evidence._step_failure(head, head.lower()) == _old_is_step_failure(line)
    if _old_is_step_failure(line) and evidence.ALL_SIGNALS.in_line(head.lower()):
        assert line_salience(line) == SALIENCE_EXIT


_WARNED = st.lists(
    st.sampled_from(
        [
            *("[warn] ", "warning: ", "WARNING ", "npm WARN ", "W: ", "a.c:1:2: warning: "),
            *("error", "Error: ", "FAILED ", "1) ", "2 failed", "Exception in thread ", "x"),
            *("deprecated ", "missing ", "expected 1 but was 2", "ValueError: ", " ", ":"),
            *("exit code 1", "[ERROR] ", "not found", "  at a.b(C.java:1)", "✗ ", "İ"),
        ]
    ),
    max_size=12,
).map("".join)


def _old_salience_of(head: str, low: str) -> float:
    if _old_is_step_failure(head):
        return SALIENCE_EXIT
    if evidence._passing(head) or evidence._passing_suffix(head):
        return 0.0
    words = evidence._words(low)
    score = evidence._kind_of(head, low, words)
    if words & evidence._WARNING_WORDS and evidence._WARNING_LINE_RE.match(head):
        return min(score, SALIENCE_WARNING) if score else SALIENCE_WARNING
    return score


@settings(max_examples=600, deadline=None)
@given(line=st.one_of(_WARNED, _LINES))
def test_scores_are_those_of_the_replaced_code(line: str) -> None:
    head = line[: evidence._PROBE]
    assert salience_of(head, head.lower()) == _old_salience_of(head, head.lower())
