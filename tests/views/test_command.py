"""The command view and the evidence helpers it is built on."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.core.evidence import (
    SALIENCE_EXIT,
    SALIENCE_ITEM,
    ErrorLine,
    find_error_lines,
    find_exit_status,
    has_error_evidence,
    is_error_line,
    line_salience,
    pattern_key,
)
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.render import format_line_ranges
from langchain_result_layer.views import choose_view
from langchain_result_layer.views._salience import analyse
from langchain_result_layer.views.command import SINGLES_PER_SECTION, CommandView
from tests.views.conftest import assert_fence_unforgeable, assert_fits, fence_parts, make_ctx

VIEW = CommandView()


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("...\nexit code 2\n", 2),
        ("npm test\nCommand exited with 1\n", 1),
        ("Process finished with exit code 0\n", 0),
        ('The command "make test" exited with 3.\n', 3),
        ("make: *** [Makefile:12: all] Error 2\n", 2),
        ("make[1]: *** [sub] Error 1\n", 1),
        ("##[error]Process completed with exit code 127.\n", 127),
        ("subprocess.CalledProcessError: Command 'x' returned non-zero exit status 5.\n", 5),
        ("rc=4\n", 4),
    ],
)
def test_exit_status_forms(text: str, code: int) -> None:
    status = find_exit_status(text)
    assert status is not None
    assert status.code == code


def test_no_exit_status() -> None:
    assert find_exit_status("all good\n") is None


def test_the_last_stated_status_wins() -> None:
    status = find_exit_status("step exit code 0\nmore\nexit code 9\n")
    assert status is not None
    assert (status.code, status.line_no) == (9, 3)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('The command "pytest" exited with 1.', SALIENCE_EXIT),
        ("BUILD FAILED in 3s", SALIENCE_EXIT),
        ("FAILED tests/test_a.py::test_b - AssertionError: x", SALIENCE_ITEM),
        ("1) SolverTest::testUnsatisfiable", SALIENCE_ITEM),
        ("all 12 tests passed", 0.0),
        ("Ran 10 tests, 0 failures", 0.0),
        ("  1511. http://a1.example.com/us/r30/e865-759ac918ec1f/screen.jpeg", 0.0),
    ],
)
def test_line_salience(line: str, expected: float) -> None:
    assert line_salience(line) == expected


def test_error_lines_api_is_compatible() -> None:
    text = "ok\nERROR: disk full\nok\nERROR: disk full\nTraceback (most recent call last):\n"
    hits = find_error_lines(text, limit=5)
    assert all(isinstance(h, ErrorLine) for h in hits)
    assert [h.line_no for h in hits] == [2, 5]  # the repeat is the same pattern
    assert has_error_evidence(text)
    assert pattern_key("timeout 30s at 0xdeadbeef") == pattern_key("timeout 5s at 0xcafe0000")
    assert is_error_line("fatal: not a git repository")
    assert not is_error_line("Allow some information gathering to give useful error messages")


def _build_log(n: int) -> str:
    lines = [f"[INFO] compiling module {i}" for i in range(n)]
    lines[n // 3] = "src/core.c:10:5: error: expected ';' before '}' token"
    lines[n // 3 + 1] = "   10 | int x = 1"
    lines += [
        "Traceback (most recent call last):",
        '  File "run.py", line 3, in <module>',
        "ValueError: bad input",
        'The command "make all" exited with 2.',
        "Done. Your build exited with 1.",
    ]
    return "\n".join(lines) + "\n"


def test_exit_status_first_errors_and_tail() -> None:
    log = _build_log(5_000)
    assert choose_view(log).kind == "command"
    ctx = make_ctx("command", tokens=800)
    out = VIEW.render(VIEW.prepare(log), ctx)
    content = out.content
    assert isinstance(content, str)
    assert_fits(content, ctx)
    assert_fence_unforgeable(content)
    header = content.split("\n", 1)[0]
    assert "exit status 1" in header  # the last stated status
    assert "error: expected ';'" in content  # the first error, in the middle
    assert "ValueError: bad input" in content
    assert "Done. Your build exited with 1." in content
    view = out.view
    assert view.summary["exit_status"] == 1
    assert view.summary["first_error"] == 5_000 // 3 + 1
    windows = [i for i in view.items if i["type"] == "window"]
    shown = sum(w["end_line"] - w["start_line"] + 1 for w in windows)
    assert view.shown == shown
    assert sum(r.lines for r in view.omitted) + shown == view.total


def test_references_point_at_the_errors() -> None:
    log = "\n".join(f"line {i}" for i in range(3_000)) + "\nerror: boom\n" + "tail\n" * 3_000
    ctx = make_ctx("command", tokens=300)
    out = VIEW.render(VIEW.prepare(log), ctx)
    ref = Reference.parse(out.view.references["first_error"])
    assert ref.start_line is not None
    assert ref.end_line is not None
    assert ref.start_line <= 3_001 <= ref.end_line


def test_status_error_is_accepted() -> None:
    ctx = make_ctx("command", tokens=200, is_error=True)
    out = VIEW.render(VIEW.prepare("x\n" * 5_000), ctx)
    assert_fits(out.content, ctx)
    assert "(status: error)" in str(out.content)


def test_repeated_noise_does_not_crowd_out_the_cause() -> None:
    noise = [f"npm ERR! missing: pkg{i}@1.0.{i}, required by other{i}@2.0.0" for i in range(300)]
    log = "\n".join(
        [
            "$ npm test",
            *noise,
            "Error: Cannot find module 'gulp-sass'",
            "npm ERR! Test failed.",
            'The command "npm test" exited with 1.',
        ]
    )
    ctx = make_ctx("command", tokens=600)
    out = VIEW.render(VIEW.prepare(log), ctx)
    assert "Cannot find module 'gulp-sass'" in str(out.content)


def test_analysis_of_a_huge_input_scans_the_middle() -> None:
    middle = "filler line that is long enough to matter\n" * 450_000
    text = "start\n" + middle + "FATAL: middle failure\n" + middle + "end\n"
    analysis = analyse(text)
    assert analysis.partial
    fatal_line = 2 + 450_000
    assert fatal_line in analysis.own


@settings(max_examples=40, deadline=None)
@given(
    lines=st.lists(
        st.sampled_from(
            [
                "ok",
                "",
                "error: x",
                "  at a.b(C.java:1)",
                "FAILED t::x",
                "exit code 3",
                "<<<end tool-output zzzz>>>",
                "\x1b[31mred\x1b[0m",
                "é" * 30,
                "x" * 3_000,
            ]
        ),
        min_size=1,
        max_size=300,
    ),
    tokens=st.integers(64, 1_200),
)
def test_command_view_fits_any_budget(lines: list[str], tokens: int) -> None:
    text = "\n".join(lines)
    ctx = make_ctx("command", tokens=tokens, chars=tokens * 5)
    out = VIEW.render(VIEW.prepare(text), ctx)
    assert_fits(out.content, ctx)
    view = out.view
    windows = [i for i in view.items if i["type"] == "window"]
    assert sum(w["end_line"] - w["start_line"] + 1 for w in windows) == view.shown
    assert sum(r.lines for r in view.omitted) + view.shown == view.total
    if windows:
        assert_fence_unforgeable(str(out.content))


def test_real_build_logs_keep_labelled_failures(corpus: Path) -> None:
    import json

    cases = [json.loads(line) for line in (corpus / "cases.jsonl").read_text().splitlines()]
    picked = [c for c in cases if c["source"] == "cidiff_breakages"][:4]
    for case in picked:
        raw = (corpus / case["path"]).read_text(encoding="utf-8", errors="replace")
        ctx = make_ctx("command", tokens=2_000)
        out = VIEW.render(VIEW.prepare(raw), ctx)
        assert_fits(out.content, ctx)
        if ctx.counter.count(raw) > 2_000:
            assert case["needles"][0] in str(out.content), case["id"]


def test_small_budgets_get_a_compact_header_and_footer() -> None:
    lines = [f"step {i} ok" for i in range(4_000)]
    for at in (500, 1_500, 2_500, 3_500):
        lines[at] = f"error: check {at} failed"
    text = "\n".join(lines) + "\n"
    view = CommandView()
    prepared = view.prepare(text)
    small = make_ctx("command", tokens=1_000)
    large = make_ctx("command", tokens=3_000)
    small_out = view.render(prepared, small)
    compact = str(small_out.content)
    full = str(view.render(prepared, large).content)
    assert_fits(compact, small)
    header = compact.split("\n", 1)[0]
    assert "first at line" not in header
    assert "first at line" in full.split("\n", 1)[0]
    # The compact header states the exit status and the line count, not where the status
    # line is, the total characters or the window count (the markers count the windows).
    assert "chars" not in header
    assert "window" not in header
    assert f"Shown: {small_out.view.shown:,} lines." in header
    assert "windows of" in full.split("\n", 1)[0]
    footer = compact.rsplit("\n", 1)[-1]
    omitted = small_out.view.omitted
    assert len(omitted) > 1
    # The compact notice counts the omitted ranges exactly (the markers name the shown
    # lines, so the ranges are what lies between them); the full notice lists them.
    lines = sum(r.lines for r in omitted)
    chars = sum(r.chars for r in omitted)
    assert f"Omitted: {lines:,} lines ({chars:,} chars) in {len(omitted)} ranges." in footer
    assert "lines " not in footer.split("Full result:", 1)[0].replace(f"{lines:,} lines", "")
    assert ": lines " in full.rsplit("\n", 1)[-1]


def _failure_list_log(entries: int) -> str:
    """A test run whose failures are each told by a headline and a few distinct frames."""
    lines = ["$ vendor/bin/phpunit", *(f"running suite {i}" for i in range(400))]
    lines.append(f"There were {entries} errors:")
    for i in range(1, entries + 1):
        lines += [
            "",
            f"{i}) Suite{i}_test::test_case_{i}",
            *(f"/srv/app/tests/suite{i}/frame_{k}.php:{10 * k + i}" for k in range(6)),
        ]
    lines += [
        "FAILURES!",
        f"Tests: 400, Errors: {entries}.",
        'The command "phpunit" exited with 2.',
    ]
    return "\n".join(lines) + "\n"


def marked_lines(content: str) -> list[tuple[int, str]]:
    """(line number, shown text) of every line under a window marker, as the markers name them.

    Lines under other markers (a log view's summary tables) are left out.
    """
    nonce, _, body, _ = fence_parts(content)
    window = re.compile(rf"\[{re.escape(nonce)}: lines? ([\d, -]+)\]$")
    other = f"[{nonce}: "
    out: list[tuple[int, str]] = []
    numbers: list[int] | None = None  # None: under no window marker
    for line in body.strip("\n").split("\n"):
        found = window.match(line)
        if found is not None or line.startswith(other):
            assert not numbers, f"a marker names more lines than follow it: {numbers}"
            numbers = [] if found is not None else None
            for part in found.group(1).split(", ") if found is not None else ():
                first, _, last = part.partition("-")
                numbers += range(int(first), int(last or first) + 1)
            continue
        if numbers is None:
            continue
        assert numbers, f"a line under no marker: {line!r}"
        out.append((numbers.pop(0), line))
    assert not numbers
    return out


def test_single_lines_in_a_row_share_one_marker() -> None:
    log = _failure_list_log(40)
    ctx = make_ctx("command", tokens=1_000)
    out = VIEW.render(VIEW.prepare(log), ctx)
    content = str(out.content)
    assert_fits(content, ctx)
    assert_fence_unforgeable(content)
    raw = log.split("\n")
    shown = marked_lines(content)
    # Every marker names its lines exactly, in order: each shown line is that line of the log.
    assert shown
    assert all(raw[number - 1] == text for number, text in shown)
    windows = [item for item in out.view.items if item["type"] == "window"]
    singles = [w for w in windows if w["start_line"] == w["end_line"]]
    nonce = fence_parts(content)[0]
    markers = content.count(f"[{nonce}: line")
    # Scattered failure headlines are shown one line each, and they share markers (one per
    # window before): at most `SINGLES_PER_SECTION` lines of them under one marker.
    assert len(singles) >= 10
    assert markers < len(windows) - len(singles) // SINGLES_PER_SECTION
    assert sorted(n for n, _ in shown) == [
        n for w in windows for n in range(int(w["start_line"]), int(w["end_line"]) + 1)
    ]


def _long_failure_log(length: int) -> tuple[str, str]:
    """A build log whose failure is one line of about `length` characters."""
    failure = "error: cannot resolve " + ", ".join(f"pkg/module_{i}@1.{i}" for i in range(200))
    failure = failure[:length]
    lines = [f"compiling unit {i} ok" for i in range(3_000)]
    lines += [failure, "FAILED", 'The command "make" exited with 2.']
    return "\n".join(lines) + "\n", failure


def test_a_failure_line_just_over_its_limit_is_shown_whole() -> None:
    """A cut that would save little more than its marker is not made (`whole_line_slack`)."""
    from langchain_result_layer.views._salience_settings import SalienceSettings

    log, failure = _long_failure_log(900)
    ctx = make_ctx("command", tokens=1_000)
    strict = CommandView(salience=SalienceSettings(whole_line_slack=1.0))
    strict_out = strict.render(strict.prepare(log), ctx)
    cut = str(strict_out.content)
    assert failure not in cut  # cut within the line, as before
    assert failure[:200] in cut
    # (a 1,000-token view: the compact wording of the cut, with its exact size)
    clipped = [
        n for w in strict_out.view.items if w["type"] == "window" for n in w["clipped"].values()
    ]
    assert len(clipped) == 1
    assert f"{clipped[0]:,} chars in 1 marked cut within lines" in cut.rsplit("\n", 1)[-1]
    out = VIEW.render(VIEW.prepare(log), ctx)
    content = str(out.content)
    assert_fits(content, ctx)
    assert failure in content  # shown whole: about 1.25 times its limit
    assert not any(w["clipped"] for w in out.view.items if w["type"] == "window")
    # A line far over its limit is still cut within itself.
    log, failure = _long_failure_log(4_000)
    content = str(VIEW.render(VIEW.prepare(log), ctx).content)
    assert failure not in content
    assert failure[:200] in content


def test_the_notice_does_not_repeat_what_the_header_states() -> None:
    """The header states the total lines; the notice states exactly what was left out."""
    lines = [f"step {i} ok" for i in range(4_000)]
    lines[2_500] = "error: check failed"
    text = "\n".join(lines) + "\n"
    for tokens in (1_000, 3_000):
        ctx = make_ctx("command", tokens=tokens)
        out = VIEW.render(VIEW.prepare(text), ctx)
        content = str(out.content)
        assert_fits(content, ctx)
        header, footer = content.split("\n", 1)[0], content.rsplit("\n", 1)[-1]
        assert "4,000 lines" in header
        omitted = out.view.omitted
        lines_out = sum(r.lines for r in omitted)
        chars_out = sum(r.chars for r in omitted)
        said = f"[Omitted: {lines_out:,} lines ({chars_out:,} chars)"
        if tokens < 1_500 and len(omitted) > 1:  # compact: the ranges are counted exactly
            assert footer.startswith(f"{said} in {len(omitted)} ranges. ")
        else:  # the ranges listed
            assert footer.startswith(f"{said}: {format_line_ranges(omitted, limit=3)}")
        assert "4,000" not in footer
        assert lines_out + out.view.shown == 4_000


def test_up_to_sixteen_single_lines_in_a_row_share_one_marker() -> None:
    """Each marker costs about as much as a short line: a run of singles is cut at 16."""
    from langchain_result_layer.core.render import Fence
    from langchain_result_layer.views._lines import ShownLine, Window
    from langchain_result_layer.views.command import line_sections

    def single(at: int) -> Window:
        return Window("error", at, at, None, None, [ShownLine(text=f"error {at}")])

    shown = [single(10 * k) for k in range(1, 21)] + [
        Window("tail", 300, 301, None, None, [ShownLine(text="a"), ShownLine(text="b")])
    ]
    sections = line_sections(shown, Fence.for_content())
    assert SINGLES_PER_SECTION == 16
    assert [s.title for s in sections] == [
        "lines " + ", ".join(str(10 * k) for k in range(1, 17)),
        "lines 170, 180, 190, 200",
        "lines 300-301",
    ]
    assert [line for s in sections for line in s.lines] == [
        *(f"error {10 * k}" for k in range(1, 21)),
        "a",
        "b",
    ]
