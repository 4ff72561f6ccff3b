"""The evidence engine: filled budgets, within-line cuts, the error status, the train corpus."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from langchain_result_layer.core.reference import Reference
from langchain_result_layer.views._salience import analyse
from langchain_result_layer.views.command import CommandView
from langchain_result_layer.views.logs import LogView
from tests.views.conftest import COUNTER, assert_fence_unforgeable, assert_fits, make_ctx

VIEW = CommandView()
_MARKER_RE = re.compile(r"\[(\w+): chars ([\d,]+)-([\d,]+) omitted\]")


def _build_log(lines: int = 4_000) -> str:
    body = [f"[INFO] compiling module {i} of the project" for i in range(lines)]
    body[lines // 2] = "src/core.c:10:5: error: expected ';' before '}' token"
    return "\n".join([*body, "Tests run: 9, Failures: 2", "exit code 1"]) + "\n"


@pytest.mark.parametrize("tokens", [600, 1_000, 2_000, 4_000])
def test_a_view_that_leaves_lines_out_fills_its_budget(tokens: int) -> None:
    raw = _build_log()
    ctx = make_ctx("command", tokens=tokens)
    out = VIEW.render(VIEW.prepare(raw), ctx)
    assert_fits(out.content, ctx)
    assert out.view.omitted  # lines were left out ...
    assert COUNTER.count(str(out.content)) >= 0.9 * tokens  # ... so the budget is used


def test_a_long_error_line_is_cut_within_with_exact_ranges() -> None:
    long_line = "x" * 20_000 + " FATAL: cannot allocate 4096 bytes " + "y" * 20_000
    raw = "\n".join([*(f"step {i}" for i in range(300)), long_line, "exit code 1"]) + "\n"
    ctx = make_ctx("command", tokens=1_500)
    out = VIEW.render(VIEW.prepare(raw), ctx)
    content = str(out.content)
    assert_fits(content, ctx)
    assert_fence_unforgeable(content)
    assert "FATAL: cannot allocate 4096 bytes" in content  # the salient span of the line
    line_start = raw.index(long_line)
    markers = _MARKER_RE.findall(content)
    assert markers
    covered = 0
    for _, a, b in markers:
        start, end = int(a.replace(",", "")), int(b.replace(",", ""))
        assert line_start <= start < end <= line_start + len(long_line)
        assert set(raw[start:end]) <= {"x", "y", " "}  # only the filler was cut
        covered += end - start
    # The view and its record state the same cuts, and a fetch by offset reads each one.
    window = next(i for i in out.view.items if i["type"] == "window" and i["cuts"])
    cuts = [c for per_line in window["cuts"].values() for c in per_line]
    assert sum(end - start for _, start, end in cuts) == covered
    assert "A cut part: fetch_tool_result(" in content
    ref = Reference.parse(content.split("A cut part: fetch_tool_result(ref=")[1].split('"')[1])
    assert ref.offset is not None
    assert ref.limit is not None
    assert any(ref.offset == start and ref.limit == end - start for _, start, end in cuts)


def test_the_log_view_honours_an_error_status() -> None:
    log = "\n".join(
        [f"2024-01-02 10:00:{i % 60:02d} INFO worker {i} done" for i in range(3_000)]
        + ["2024-01-02 10:59:59 INFO shutting down"]
    )
    view = LogView()
    prepared = view.prepare(log)
    ok = view.render(prepared, make_ctx("log", tokens=800))
    failed = view.render(prepared, make_ctx("log", tokens=800, is_error=True))
    assert_fits(failed.content, make_ctx("log", tokens=800, is_error=True))
    assert "(status: error)" in str(failed.content).split("\n", 1)[0]
    assert "(status: error)" not in str(ok.content).split("\n", 1)[0]
    assert failed.view.status == "error"
    # The tail of an error result weighs more: its last line ranks at least as high.
    plain = prepared.data.analysis
    weighted = plain.for_status(is_error=True)
    last = plain.total_lines
    assert weighted.priority[last] > plain.priority[last]
    assert weighted.ranked().index(last) <= plain.ranked().index(last)


def test_the_first_copy_of_a_repeated_failure_outranks_the_later_ones() -> None:
    block = ["1) FooTest::testBar", "Function x() is deprecated", "", "/app/tests/FooTest.php:12"]
    lines = ["$ phpunit"]
    for run in range(4):
        lines += [f"Running suite {run}", *(f"ok {i}" for i in range(200)), *block]
    lines += [
        "FAILURES!",
        "Tests: 400, Assertions: 12, Errors: 4.",
        'The command "phpunit" exited with 1.',
    ]
    analysis = analyse("\n".join(lines) + "\n")
    copies = [ln for ln, text in analysis.texts.items() if text == "1) FooTest::testBar"]
    first, *later = sorted(copies)
    assert all(analysis.priority[first] > analysis.priority[ln] for ln in later)


def test_sibling_assertions_of_one_report_are_not_copies() -> None:
    # One failure reports three assertions of one shape (only their line numbers differ);
    # a second test fails with the same three later. The first report's siblings keep the
    # weight of its first assertion; the second report's are lowered as a copy.
    def report(test: str) -> list[str]:
        out = [f"--- FAIL: {test} (2.62s)"]
        for at in (126, 142, 158):
            out += [f"\tError Trace:\tproxied_test.go:{at}", "\t\t\tproxied_test.go:78", ""]
        return out

    lines = ["$ go test ./..."]
    lines += [f"DEBUG step {i}" for i in range(300)]
    lines += report("TestFirst")
    lines += [f"DEBUG step {i}" for i in range(40)]
    lines += report("TestSecond")
    lines += ["FAIL", "exit status 1"]
    analysis = analyse("\n".join(lines) + "\n")
    traces = sorted(ln for ln, text in analysis.texts.items() if "Error Trace:" in text)
    first_report, second_report = traces[:3], traces[3:]
    top = analysis.priority[first_report[0]]
    assert all(analysis.priority[ln] >= 0.9 * top for ln in first_report[1:])
    assert all(analysis.priority[ln] < 0.6 * top for ln in second_report)


def _train_cases(corpus: Path) -> list[dict[str, object]]:
    path = corpus / "train" / "cases.jsonl"
    if not path.is_file():
        pytest.skip("no train/ folder in the corpus")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("tokens", [1_000, 2_000])
def test_train_logs_fit_and_state_what_they_leave_out(corpus: Path, tokens: int) -> None:
    cases = _train_cases(corpus)
    step = 1 if tokens == 2_000 else 4
    for case in cases[::step]:
        raw = (corpus / "train" / str(case["path"])).read_text(encoding="utf-8", errors="replace")
        ctx = make_ctx("command", tokens=tokens)
        out = VIEW.render(VIEW.prepare(raw), ctx)
        content = str(out.content)
        assert_fits(content, ctx)
        assert_fence_unforgeable(content)
        view = out.view
        windows = [i for i in view.items if i["type"] == "window"]
        assert sum(w["end_line"] - w["start_line"] + 1 for w in windows) == view.shown
        assert sum(r.lines for r in view.omitted) + view.shown == view.total, case["id"]
        if view.omitted:
            omitted_chars = sum(r.chars for r in view.omitted)
            assert f"({omitted_chars:,} char" in content, case["id"]  # the exact notice
            assert "Full result: ref://tool-result/" in content
        for ref in view.references.values():
            Reference.parse(ref)


def test_a_line_that_does_not_fit_is_cut_shorter_and_the_fill_goes_on() -> None:
    # A token-dense long line high in the ranking does not fit the room the lines above it
    # leave; the view cuts it shorter within the line instead of stopping there.
    dense = "\tfunction Run[40]..Verify line 55: " + "|t+0#0000001#ffd7ff255|2@1|3" * 60
    found = [
        f"\tFound errors in Test_popup_{i}(): the screen dump differs from the expected one"
        f" at row {i}, column {i * 3}; see testdir/failed/Test_popup_{i}.dump"
        for i in range(6)
    ]
    report = ["Failures: ", *found, "\tRun 1:", dense]
    report += [f"\tFlaky test {i} failed too often, giving up" for i in range(12)]
    lines = [f"step {i} of the build" for i in range(3_000)]
    lines += [*report, "TEST FAILURE", "make: *** [test] Error 2"]
    raw = "\n".join(lines) + "\n"
    ctx = make_ctx("command", tokens=600)
    view = CommandView()
    out = view.render(view.prepare(raw), ctx)
    assert_fits(out.content, ctx)
    text = str(out.content)
    assert "\tfunction Run[40]..Verify line 55: |t+0" in text
    assert len(_MARKER_RE.findall(text)) == 1  # cut within the line, the cut stated
    assert COUNTER.count(text) >= 0.9 * 600


def test_lines_at_the_depth_of_an_error_are_not_its_continuation() -> None:
    # A runner indents every line; the lines after an error at its own depth are the next
    # tests, not the error's detail, and get no context weight; deeper lines are detail.
    lines = ["$ run-tests"]
    lines += [f"      test {i} passes: ok" for i in range(200)]
    lines += ["      parses the config: error: unexpected token", "          at line 3 of a.cfg"]
    lines += [f"      test {i} passes: ok" for i in range(200, 260)]
    lines += ["Tests: 260, Failures: 1", "exit code 1"]
    analysis = analyse("\n".join(lines) + "\n")
    error = lines.index("      parses the config: error: unexpected token") + 1
    assert analysis.roles[error + 1] == "context"
    detail = analysis.priority[error + 1]
    # Read as plain lines, the walk stops after a few; read as detail, it went on for 150.
    after = [analysis.priority.get(ln, 0.0) for ln in range(error + 6, error + 40)]
    assert all(p < 0.1 * detail for p in after)


def test_status_lines_that_start_with_two_dashes_are_not_diff_lines() -> None:
    # A configure step prints `-- Found x` status lines; a diff's lines start with one sign
    # (`-a`, `+ b`) or are its headers (`--- expected`, `+++ actual`, `@@ ... @@`). A walk
    # from an error through status lines stops after a few plain lines, as on any output.
    from langchain_result_layer.core.evidence import is_continuation_line

    assert is_continuation_line("- expected line")
    assert is_continuation_line("+actual line")
    assert is_continuation_line("--- Expected")
    assert is_continuation_line("+++ Actual")
    assert is_continuation_line("@@ -1,3 +1,3 @@")
    assert not is_continuation_line("-- Found Threads: TRUE")
    lines = ["$ cmake ..", "-- Looking for pthread_create - not found"]
    lines += [f"-- Found package{i}: /usr/include" for i in range(60)]
    lines += ["CMake Error at CMakeLists.txt:4 (message):", "  Could NOT find Halide", ""]
    lines += ["-- Configuring incomplete, errors occurred!"]
    analysis = analyse("\n".join(lines) + "\n")
    after = [analysis.priority.get(ln, 0.0) for ln in range(10, 50)]
    assert max(after) < 0.1 * analysis.priority[2]
