"""Line priorities: the cheap candidate filter, huge inputs, and the failure-report rules."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.core.evidence import (
    SALIENCE_DETAIL,
    SALIENCE_ERROR,
    SALIENCE_ITEM,
    SALIENCE_STRONG,
    SALIENCE_SUMMARY,
    SALIENCE_WARNING,
    is_error_line,
    line_salience,
)
from langchain_result_layer.core.normalize import clean_for_display
from langchain_result_layer.views import choose_view
from langchain_result_layer.views._salience import (
    FULL_ANALYSIS_CHARS,
    _candidate_lines,
    _split_region,
    analyse,
)
from langchain_result_layer.views._salience_settings import SalienceSettings
from langchain_result_layer.views.command import CommandView
from tests.views.conftest import assert_fits, make_ctx

_WORDS = [
    "ERROR",
    "error:",
    "Exception",
    "Traceback (most recent call last):",
    "FAILED",
    "failed",
    "exit code 2",
    "exited with 1",
    "warning:",
    "WARN",
    "Assertion",
    "expected 1 but was 2",
    "panic:",
    "=====",
    "E  ",
    "1)",
    "$",
    ">",
    "+",
    "ok",
    "done",
    "build",
    "Tests run: 3, Failures: 1",
    "not found",
    "\x1b[31m",
    "\x1b[0m",
    "\r",
    "   ",
    "x",
    "42",
    "✗",
    "___",
    "rc=3",
    "status: 4",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_WORDS), max_size=6), min_size=1, max_size=30))
def test_candidate_filter_misses_no_salient_line(rows: list[list[str]]) -> None:
    lines = [" ".join(words) if i % 2 else "".join(words) for i, words in enumerate(rows)]
    text = "\n".join(lines) + "\n"
    region = _split_region(text, 0, len(text), 1)
    candidates = set(_candidate_lines(region, text, None))
    for i, line in enumerate(lines):
        shown = clean_for_display(line.rstrip("\r")).rstrip("\r")
        if shown and line_salience(shown) > 0:
            assert i in candidates, (line, shown)


def _huge_log(middle_error: str) -> str:
    filler = "".join(f"[INFO] compiling module {i} of the project\n" for i in range(60_000))
    block = (
        f"{middle_error}\n"
        "\tat com.acme.Parser.parse(Parser.java:42)\n"
        "\tat com.acme.Main.main(Main.java:7)\n"
    )
    body = filler * (FULL_ANALYSIS_CHARS // len(filler) + 1)
    tail = "".join(f"[INFO] packaging {i}\n" for i in range(2_000))
    return body + block + body + tail + "[INFO] BUILD FAILURE\nexit code 1\n"


def test_huge_input_keeps_the_middle_error_with_its_frames() -> None:
    raw = _huge_log("java.lang.IllegalStateException: parser lost its place")
    assert len(raw) > 2 * FULL_ANALYSIS_CHARS
    analysis = analyse(raw)
    assert analysis.partial
    error_line = raw.count("\n", 0, raw.index("java.lang.IllegalStateException")) + 1
    assert error_line in analysis.priority
    assert analysis.text(error_line + 1) == "\tat com.acme.Parser.parse(Parser.java:42)"
    start, end = analysis.span(error_line) or (0, 0)
    assert raw[start:end].startswith("java.lang.IllegalStateException")
    view = CommandView()
    ctx = make_ctx("command", tokens=1_000)
    out = view.render(view.prepare(raw), ctx)
    assert_fits(out.content, ctx)
    content = str(out.content)
    assert "parser lost its place" in content
    assert "Parser.java:42" in content
    assert "exit status 1" in content.split("\n", 1)[0]
    assert out.view.summary["partial_scan"] is True


# --------------------------------------------------------------------------- line kinds


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # prose and names are not reports
        ("\tthe USA under License Exception TSU of the U.S. Export", 0.0),
        ("├── less@2.7.1 (graceful-fs@4.1.11, errno@0.1.4, promise@7.1.1)", 0.0),
        ("   Compiling errno v0.2.4", 0.0),
        ("+   output$safeError <- renderText({", 0.0),
        ("* checking R files for syntax errors ... OK", 0.0),
        ("checking whether errno is defined... no", 0.0),
        # warnings stay warnings, even when they mention a failure
        ("npm WARN optional dep failed, continuing fsevents@1.0.17", SALIENCE_WARNING),
        ("[WARNING] Tests run: 3, Failures: 0, Errors: 0, Skipped: 1", SALIENCE_WARNING),
        ("src/a.c:3:1: warning: unused variable 'x'", SALIENCE_WARNING),
        # failures keep their weight
        ('Exception in thread "main" java.lang.NullPointerException', SALIENCE_STRONG),
        ("An exception occurred while parsing the manifest", SALIENCE_ERROR),
        ("lib/a.js:0:0: Parsing error: Unexpected token", SALIENCE_ITEM),
        ("Failing due to -Werror.", SALIENCE_STRONG),
        ("Failure:", SALIENCE_STRONG),  # labelled like `Error:` (minitest's report header)
        ("Failure: expected 3, got 4", SALIENCE_STRONG),
        ("cc1: all warnings being treated as errors", SALIENCE_STRONG),
        ("Tests: 12, Assertions: 30, Failures: 2.", SALIENCE_SUMMARY),
        ("OK, but incomplete, skipped, or risky tests!", SALIENCE_DETAIL),
        ("OK (231 tests, 679 assertions)", 0.0),
        # a test's name with its verdict padded to a column of the terminal, however wide
        ("  'Whitespace1.purs' should fail with 'ErrorParsingModule':" + " " * 150 + "OK", 0.0),
        ("  'Case.purs' should fail with 'Error':" + " " * 90 + "OK (0.01s)", 0.0),
        ("  'Case.purs' should fail with 'Error': KO", SALIENCE_ERROR),
        # a tally of outcomes counts its failures; a status after `failed:` is no count
        ("Tests Passed: 5986, Failed: 2, Skipped: 631, Pending: 169", SALIENCE_SUMMARY),
        ("Failed!  - Failed:     1, Passed:    10, Skipped:     0, Total:    11", SALIENCE_SUMMARY),
        ("  *  External link http://example.com/a.pdf failed: 404 No error", SALIENCE_ERROR),
        ("Tests Passed: 12, Failed: 0, Skipped: 1", 0.0),
    ],
)
def test_line_kinds(line: str, expected: float) -> None:
    assert line_salience(line) == expected


def test_a_repeated_error_block_gives_way_to_distinct_failures() -> None:
    block = [
        "[ERROR] No space left on device",
        "java.io.IOException: No space left on device",
        *[f"    at com.acme.Writer.write{i}(Writer.java:{i})" for i in range(8)],
    ]
    lines = ["$ mvn package"]
    for _ in range(6):
        lines += [f"[INFO] step {i}" for i in range(30)] + block
    lines += ["[ERROR] Failed to execute goal spoon:generate: no tag class", "exit code 1"]
    analysis = analyse("\n".join(lines) + "\n")
    errors = [ln for ln, t in analysis.texts.items() if t == "[ERROR] No space left on device"]
    first, *later = sorted(errors)
    assert all(analysis.priority[first] > analysis.priority[ln] for ln in later)
    top = analysis.ranked()[:20]
    texts = [analysis.text(ln) or "" for ln in top]
    # One copy of the block, whole (its error, its exception and every frame), and no frame
    # of a later copy, but for the line just before the final error (the `_before` context
    # of that error, which happens to be the last copy's last frame).
    block_lines = range(first, first + len(block))
    assert set(block_lines) <= set(top)
    final = next(ln for ln, t in analysis.texts.items() if t.startswith("[ERROR] Failed"))
    later_frames = [
        ln
        for ln in top
        if ln not in block_lines and ln != final - 1 and "at com.acme" in (analysis.text(ln) or "")
    ]
    assert later_frames == []
    assert "[ERROR] Failed to execute goal spoon:generate: no tag class" in texts


def test_the_bottom_of_a_deep_stack_trace_is_kept() -> None:
    frames = [f"\tat org.lib.Layer{i}.call(Layer{i}.java:{i + 1})" for i in range(60)]
    lines = [
        "$ mvn test",
        *[f"Running test {i}" for i in range(200)],
        "testParse(com.acme.ParserTest)  Time elapsed: 0.02 sec  <<< FAILURE!",
        "java.lang.AssertionError: expected:<1> but was:<2>",
        *frames,
        "\tat org.apache.maven.surefire.booter.ForkedBooter.main(ForkedBooter.java:75)",
        "",
        *[f"Running other test {i}" for i in range(200)],
        "BUILD FAILURE",
    ]
    analysis = analyse("\n".join(lines) + "\n")
    bottom = next(ln for ln, t in analysis.texts.items() if "ForkedBooter.main" in t)
    middle = next(ln for ln, t in analysis.texts.items() if "Layer40.call" in t)
    assert analysis.priority[bottom] > analysis.priority[middle]


def test_errors_outside_the_failed_step_weigh_less() -> None:
    lines = [
        "travis_fold:start:install",
        "travis_time:start:1$ npm install",
        "npm ERR! peer dependency missing: left-pad@1.0.0",
        *[f"added package {i}" for i in range(50)],
        "travis_time:end:1travis_fold:end:installtravis_time:start:2$ npm test",
        *[f"  ok {i} renders" for i in range(50)],
        "  not ok 51 renders the header",
        "Error: expected header to be visible",
        *[f"  ok {i} renders" for i in range(52, 80)],
        'The command "npm test" exited with 1.',
    ]
    text = "\n".join(lines) + "\n"
    focused = analyse(text)
    flat = analyse(text, settings=SalienceSettings(outside_failed_step=1.0))
    install = next(ln for ln, t in focused.texts.items() if t.startswith("npm ERR! peer"))
    assert focused.priority[install] < flat.priority[install]
    failing = next(ln for ln, t in focused.texts.items() if t.startswith("Error: expected"))
    assert focused.priority[failing] > focused.priority[install]


def _traced_step(traced: list[str]) -> str:
    """A test step whose failure is followed by `+ ` lines just above its verdict.

    The failure is one error line (no TAP `not ok` entry, itself a failure item): whether a
    `+ ` line starts a step after it is the one thing that moves its weight.
    """
    lines = [
        "$ ./build.sh test",
        *[f"  ok {i} renders" for i in range(50)],
        "  51 renders the header",
        "Error: expected header to be visible",
        *[f"  ok {i} renders" for i in range(52, 80)],
        *traced,
        'The command "./build.sh test" exited with 1.',
    ]
    return "\n".join(lines) + "\n"


def _failing_priority(text: str) -> float:
    analysis = analyse(text)
    return analysis.priority[
        next(ln for ln, t in analysis.texts.items() if t.startswith("Error: expected"))
    ]


def test_a_plus_line_that_reports_an_error_starts_no_step() -> None:
    """A PowerShell error record's `+ ` lines are not traced commands: the step goes on."""
    traced = _failing_priority(_traced_step(["+ ./publish-results.sh"]))
    record = _failing_priority(_traced_step(["+ FullyQualifiedErrorId : 1 tests failed"]))
    assert record > traced  # inside the failed step, not outside it


def test_a_plus_line_beside_a_minus_line_starts_no_step() -> None:
    """A diff's added line is not a traced command."""
    traced = _failing_priority(_traced_step(["+ ./publish-results.sh"]))
    diff = _failing_priority(_traced_step(["- visible header", "+ hidden header"]))
    assert diff > traced


def test_a_group_of_repeated_errors_is_read_from_its_first_lines() -> None:
    """After a group's best (latest) line, its first lines come next, not its other last ones."""
    raw = "".join(f"step {i} ok\n" for i in range(200))
    wait = "[wait] Upload failed (no key). Trying again in {} seconds.\n"
    raw += "".join(wait.format(i) for i in range(1, 7))
    raw += "Done. Your build exited with 1.\n"
    analysis = analyse(raw)
    waits = [ln for ln in analysis.ranked() if "Trying again" in (analysis.texts.get(ln) or "")]
    assert waits[:4] == [206, 201, 202, 203]


def test_ci_logs_are_command_output() -> None:
    log = "\n".join(
        [
            "2024-01-02T10:00:00.0000000Z ##[group]Run actions/checkout@v4",
            "2024-01-02T10:00:01.0000000Z ##[endgroup]",
            *[f"2024-01-02T10:00:{i % 60:02d}.0000000Z compiling {i}" for i in range(300)],
        ]
    )
    assert choose_view(log).kind == "command"


def test_frames_in_test_code_are_kept_inside_a_deep_trace() -> None:
    frames = [f"    /app/lib/render/layer{i}.rb:{i}:in `call'" for i in range(70)]
    frames[45] = "    /app/test/fixtures/_helper.erb:1:in `render_helper'"
    lines = [
        "$ rake test",
        *["." * 60 for _ in range(300)],
        "Error:",
        "HelperTest#test_helper_is_included:",
        "ActionView::Template::Error: undefined method `helper'",
        *frames,
        "",
        "2048 runs, 4644 assertions, 0 failures, 1 errors, 0 skips",
        "rake aborted!",
        'The command "rake test" exited with 1.',
    ]
    analysis = analyse("\n".join(lines) + "\n")
    helper = next(ln for ln, t in analysis.texts.items() if "_helper.erb" in t)
    neighbour = next(ln for ln, t in analysis.texts.items() if "layer44.rb" in t)
    assert analysis.priority[helper] > analysis.priority[neighbour]


def _step_log(last_lines: list[str]) -> str:
    return (
        "\n".join(
            [
                "$ make spec",
                *[f"compiling module {i} of 400" for i in range(400)],
                *last_lines,
                'The command "make spec" exited with 1.',
                "",
                "Done. Your build exited with 1.",
            ]
        )
        + "\n"
    )


def test_a_rare_line_before_the_verdict_is_evidence_without_an_error_word() -> None:
    """No error word, no known vocabulary: its shape is unique just before the verdict."""
    # Above the lines the pre-verdict floor reaches (15), within `rare_span` (30).
    trailing = [f"linking object {i} of 20" for i in range(20)]
    text = _step_log(["None of your spec sources contain a single example.", *trailing])
    analysis = analyse(text)
    rare = next(ln for ln, t in analysis.texts.items() if t.startswith("None of your spec"))
    assert analysis.priority[rare] >= SalienceSettings().rare_floor * 0.9
    above = analysis.priority.get(rare - 1, 0.0)  # a routine line of the step: no floor
    assert analysis.priority[rare] > 2 * above
    off = analyse(text, settings=SalienceSettings(rare_floor=0.0))
    assert analysis.priority[rare] > off.priority.get(rare, 0.0)
    shown = _command_view_text(text, tokens=400)
    assert "None of your spec sources contain a single example." in shown


def _command_view_text(text: str, *, tokens: int) -> str:
    view, ctx = CommandView(), make_ctx("command", tokens=tokens)
    content = view.render(view.prepare(text), ctx).content
    assert_fits(content, ctx)
    return str(content)


def test_lines_of_a_common_shape_before_the_verdict_get_no_rare_floor() -> None:
    text = _step_log([])
    analysis = analyse(text, settings=SalienceSettings(pre_verdict_lines=0))
    # Ten lines above the verdict: past the few lines just before it (`before_span`).
    line = text.split("\n").index("compiling module 390 of 400") + 1
    assert analysis.priority.get(line, 0.0) < SalienceSettings().rare_floor * 0.5


def test_cleanup_between_the_last_two_verdicts_gets_no_pre_verdict_floor() -> None:
    lines = [
        "$ make test",
        *[f"test {i} ok" for i in range(200)],
        "test_parser FAILED: expected 3 tokens",
        'The command "make test" exited with 1.',
        *[f"uploading cache part {i}" for i in range(8)],
        "Done. Your build exited with 1.",
    ]
    analysis = analyse("\n".join(lines) + "\n")
    upload = lines.index("uploading cache part 2") + 1  # with a priority or not
    failed = next(ln for ln, t in analysis.texts.items() if t.startswith("test_parser FAILED"))
    assert analysis.priority.get(upload, 0.0) < SalienceSettings().pre_verdict_floor * 0.5
    assert analysis.priority[failed] > analysis.priority.get(upload, 0.0)


def test_the_failed_steps_last_output_outranks_the_closing_lines_after_its_verdict() -> None:
    """The tail floor is a fallback: the output before the verdict comes first."""
    lines = [
        "$ make spec",
        *[f"compiling module {i} of 400" for i in range(400)],
        "None of your spec sources contain a single example.",
        'The command "make spec" exited with 1.',
        *[f"uploading cache part {i}" for i in range(6)],
        "cache uploaded",
    ]
    ranked = analyse("\n".join(lines) + "\n").ranked()
    last = len(lines)
    before_verdict = [lines.index(t) + 1 for t in lines[399:402]]  # the step's last 3 lines
    assert ranked[0] == lines.index(lines[402]) + 1  # the verdict
    assert all(ranked.index(ln) < ranked.index(last) for ln in before_verdict)


def test_the_first_error_outside_a_known_failed_step_is_not_raised() -> None:
    install = "$ apt-get install tools\nE: Failed to fetch http://mirror/tools.deb\n"
    text = install + "installed\n" * 300 + _step_log(["  not ok 301 renders the header"])
    analysis = analyse(text)
    fetch = next(ln for ln, t in analysis.texts.items() if t.startswith("E: Failed to fetch"))
    own = analysis.own[fetch]
    assert analysis.priority[fetch] < own  # damped as outside the failed step, not re-raised


def _lint_log(banner: list[str]) -> str:
    """A lint step: a banner above twenty indented errors, then the verdict."""
    lines = [
        "$ npm test",
        *[f"compiling module {i} of 200" for i in range(200)],
        "",
        *banner,
        *[f"  /src/lib/file{i}.js:{i + 3}:7: Missing semicolon." for i in range(20)],
        "npm ERR! Test failed.  See above for more details.",
        'The command "npm test" exited with 1.',
    ]
    return "\n".join(lines) + "\n"


def test_the_header_above_a_long_list_of_errors_ranks_with_its_first_lines() -> None:
    """The banner's last line heads the list and ranks right after its first entries."""
    banner = [
        "lint: Use Lint Style (https://lint.example)",
        "lint: Run `lint --fix` to automatically fix some problems.",
    ]
    text = _lint_log(banner)
    analysis = analyse(text)
    ranked = analysis.ranked()
    entries = [ln for ln, t in analysis.texts.items() if "Missing semicolon" in t]
    assert len(entries) == 20
    line = next(ln for ln, t in analysis.texts.items() if t == banner[-1])
    assert ranked.index(line) < 10
    assert banner[-1] in _command_view_text(text, tokens=500)


def test_a_long_unindented_run_above_a_block_is_not_its_header() -> None:
    """Only the last line of a run of passed steps heads the indented errors under it."""
    steps = [f"* checking part {i} ... OK" for i in range(6)]
    text = _lint_log([*steps, "* checking lint ..."])
    analysis = analyse(text)
    header = next(ln for ln, t in analysis.texts.items() if t == "* checking lint ...")
    above = header - 1
    assert analysis.text(above) == "* checking part 5 ... OK"
    assert analysis.priority.get(above, 0.0) < 0.5 * analysis.priority[header]


# --------------------------------------------------------------------------- listings


def _grep_hits(n: int, start: int = 0) -> list[str]:
    return [f"pkg/mod_{i % 7}.py:{10 * i + 3}:    def handler_{i}(self):" for i in range(start, n)]


def test_location_lines_after_a_listed_error_word_are_its_siblings_not_its_trace() -> None:
    # A build that failed, then grep output whose one hit holds an error class name: the hits
    # after it are the listing's next members, read with plain decay, not as its trace.
    lines = [
        "$ make",
        *[f"cc -c src/unit_{i}.c" for i in range(120)],
        "src/unit_77.c:14:9: error: 'offset' undeclared (first use in this function)",
        "make: *** [Makefile:12: all] Error 1",
        "$ grep -rn 'def ' pkg/",
        *_grep_hits(60),
        "pkg/mod_3.py:611:    def check(self) -> Output | Exception:",
        *_grep_hits(400, start=60),
    ]
    analysis = analyse("\n".join(lines) + "\n")
    listed = next(ln for ln, t in analysis.texts.items() if "Output | Exception" in t)
    read_as_context = [
        ln for ln in range(listed + 1, listed + 40) if analysis.roles.get(ln) == "context"
    ]
    assert len(read_as_context) <= analysis.settings.plain_run  # before: all 39
    compile_error = next(ln for ln, t in analysis.texts.items() if "'offset' undeclared" in t)
    assert analysis.ranked().index(compile_error) < 10


def test_location_frames_under_a_report_are_still_its_trace() -> None:
    # PHPUnit: the report's head is not a location, so the location lines under it are its
    # frames (continuation decay), however many.
    frames = [f"/home/ci/build/tests/Unit/Case{i}Test.php:{20 + i}" for i in range(12)]
    lines = [
        "$ vendor/bin/phpunit",
        *[f"ok {i} - test_{i}" for i in range(150)],
        "1) Acme\\Tests\\ParserTest::testReadsHeader",
        "Failed asserting that false is true.",
        "",
        *frames,
        "",
        *[f"ok {i} - later_{i}" for i in range(150)],
        "FAILURES! Tests: 301, Assertions: 904, Failures: 1.",
    ]
    analysis = analyse("\n".join(lines) + "\n")
    roles = analysis.roles
    read_as_context = [ln for ln, t in analysis.texts.items() if t in frames]
    assert [roles.get(ln) for ln in read_as_context] == ["context"] * len(frames)


# --------------------------------------------------------------------------- coded findings


def _lint_run(n: int, rare_at: int | None) -> list[str]:
    codes = [("F401", "'os' imported but unused"), ("E501", "line too long (120 > 100)")]
    lines = []
    for i in range(n):
        code, message = codes[i % 2]
        if i == rare_at:
            code, message = "F821", "undefined name 'offset'"
        lines.append(f"src/acme/mod_{i // 10:03d}.py:{i % 10 + 2}:1: {code} {message}")
    return lines


def test_a_code_printed_once_among_many_findings_is_read_first() -> None:
    lines = ["$ flake8 src", *_lint_run(900, rare_at=700), "lint finished", "$ upload", "done"]
    analysis = analyse("\n".join(lines) + "\n")
    rare = next(ln for ln, t in analysis.texts.items() if "F821" in t)
    assert analysis.ranked().index(rare) < 5


def _with_singletons(n: int) -> list[str]:
    lines = _lint_run(300, rare_at=None)
    kinds = ["B950 blind", "C901 complex", "W605 escape", "N802 naming", "D403 capital"]
    kinds += ["A003 shadow", "S101 assert"]
    for k in range(n):  # codes printed once, spread through the list
        lines[100 + 30 * k] = f"src/acme/odd_{k}.py:3:1: {kinds[k]}: of its own kind"
    return ["$ lint", *lines, "done"]


def test_at_most_a_few_codes_printed_once_are_rare() -> None:
    settings = SalienceSettings()
    few = analyse("\n".join(_with_singletons(settings.rare_code_max)) + "\n")
    odd = [ln for ln, t in few.texts.items() if "of its own kind" in t]
    assert set(few.ranked()[: len(odd)]) == set(odd)
    many = analyse("\n".join(_with_singletons(settings.rare_code_max + 1)) + "\n")
    odd = {ln for ln, t in many.texts.items() if "of its own kind" in t}
    assert not odd & set(many.ranked()[:3])  # once is not rare: the list is read from the top


def test_every_entry_of_a_long_failure_list_keeps_some_weight() -> None:
    lines = ["$ lint", *_lint_run(900, rare_at=None), "done"]
    analysis = analyse("\n".join(lines) + "\n")
    entries = [ln for ln, t in analysis.texts.items() if ": F401 " in t or ": E501 " in t]
    assert len(entries) == 900
    assert all(analysis.priority.get(ln, 0.0) > 0.0 for ln in entries)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # the mark alone reports a failure: no error word is needed
        ("not ok 22 - parses header field 21", SALIENCE_ITEM),
        ("    not ok 3 - nested subtest", SALIENCE_ITEM),
        ("  ✗ renders the header", SALIENCE_ITEM),
        ("✖ Should render the header", SALIENCE_ITEM),
        # a TAP directive says the failure is expected; a passing entry reports nothing
        ("not ok 4 - connects # TODO no database here", 0.0),
        ("not ok 5 # SKIP network", 0.0),
        ("ok 22 - parses header field 21", 0.0),
        ("this is not ok at all", 0.0),
    ],
)
def test_a_failure_mark_reports_without_an_error_word(line: str, expected: float) -> None:
    assert line_salience(line) == expected


def test_a_tap_failure_among_passing_entries_is_an_error_line() -> None:
    lines = [
        "t/013_header.t .. ",
        *[f"ok {i} - parses header field {i - 1}" for i in range(1, 22)],
        "not ok 22 - parses header field 21",
        *[f"ok {i} - parses header field {i - 1}" for i in range(23, 31)],
        "1..30",
        *[f"t/{n:03d}_header.t .. ok" for n in range(14, 60)],
    ]
    analysis = analyse("\n".join(lines) + "\n")
    assert analysis.error_lines == [23]


@pytest.mark.parametrize(
    "line",
    [
        "unittest/runner.py:97:    def addError(self, test, err):",
        "unittest/result.py:173:    def _exc_info_to_string(self, err, test):",
        "lib/check.py:12:    def fail(self, msg=None):",
        "   |     let x = err();",
        "src/report.py:40:        return summarize(rows, errors)",
    ],
)
def test_an_error_word_that_names_code_reports_nothing(line: str) -> None:
    """Printed source (grep hits, echoed code) calls or passes error words as identifiers."""
    assert line_salience(line) == 0.0
    assert not is_error_line(line)


@pytest.mark.parametrize(
    "line",
    [
        "Build FAILED. 0 Warning(s) 1 Error(s)",
        "error: call to foo(x) failed",
        "test_parse (failed)",
        "FAILED (failures=1)",
        "3 passed, 1 failed (exit status 1)",
        "unittest/runner.py:97: error: Name 'err' is not defined",
    ],
)
def test_an_error_word_beside_parentheses_still_reports(line: str) -> None:
    assert line_salience(line) > 0.0
    assert is_error_line(line)


@settings(max_examples=60, deadline=None)
@given(
    word=st.sampled_from(["err", "error", "errors", "fail", "failure"]),
    args=st.lists(st.from_regex(r"[a-z]{1,8}", fullmatch=True), min_size=1, max_size=4),
    at=st.integers(min_value=0, max_value=4),
)
def test_an_error_word_among_arguments_is_code(word: str, args: list[str], at: int) -> None:
    params = [*args[:at], word, *args[at:]]
    line = f"src/mod.py:{len(args)}:    def handle({', '.join(params)}):"
    assert not is_error_line(line)
