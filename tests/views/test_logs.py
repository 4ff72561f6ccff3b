"""The log view, timestamps and the template miner."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

import pytest

from langchain_result_layer.views import choose_view
from langchain_result_layer.views._templates import mask_line, message_offset, mine_templates
from langchain_result_layer.views._timestamps import detect_format, time_range, time_range_of_parts
from langchain_result_layer.views.command import SINGLES_PER_SECTION
from langchain_result_layer.views.logs import (
    EXACT_FACTS_LINES,
    TEMPLATE_SAMPLE_LINES,
    LogView,
    level_of,
)
from tests.views.conftest import assert_fence_unforgeable, assert_fits, fence_parts, make_ctx
from tests.views.test_command import marked_lines

VIEW = LogView()


@pytest.mark.parametrize(
    ("line", "fmt"),
    [
        ("2015-10-18 18:01:47,978 INFO main: started", "iso"),
        ("2017-05-16T00:00:00.008Z worker ready", "iso"),
        ("Jun 14 15:16:01 combo sshd[19939]: auth", "syslog"),
        ("[Sun Dec 04 04:47:44 2005] [notice] workerEnv.init() ok", "ctime"),
        ('127.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.0" 200', "apache"),
        ("03-17 16:13:38.811  1702  2395 D WindowManager: x", "android"),
        ("20171223-22:15:29:606|Step_LSC|30002312|onStandStepChanged 3579", "healthapp"),
        ("17/06/09 20:10:40 INFO executor.Backend: Registered", "slash-date"),
        ("081109 203615 148 INFO dfs.DataNode$PacketResponder: x", "hdfs"),
        ("- 1117838570 2005.06.03 R02-M1-N0-C:J12-U11 RAS KERNEL INFO x", "epoch"),
    ],
)
def test_timestamp_formats(line: str, fmt: str) -> None:
    found = detect_format([line, line])
    assert found is not None
    assert found.name == fmt


def test_time_range_and_span() -> None:
    lines = ["2024-01-02 10:00:00 a", "2024-01-02 09:59:00 b", "2024-01-02 10:00:30 c"]
    r = time_range(lines)
    assert r is not None
    assert (r.first, r.last) == (("2024-01-02 10:00:00", 1), ("2024-01-02 10:00:30", 3))
    assert (r.earliest, r.latest) == ("2024-01-02 09:59:00", "2024-01-02 10:00:30")
    assert r.span_seconds == 90


def test_no_timestamps() -> None:
    assert time_range(["hello", "world"]) is None


@pytest.mark.parametrize(
    ("line", "level"),
    [
        ("2024-01-02 10:00:00,123 - WARNING [main] - disk", "WARN"),
        ("03-17 16:13:38.811  1702  2395 E AndroidRuntime: crash", "ERROR"),
        ("[Sun Dec 04 04:47:44 2005] [error] mod_jk child", "ERROR"),
        ("17/06/09 20:10:40 INFO executor: ok", "INFO"),
        ("nothing here", None),
    ],
)
def test_levels(line: str, level: str | None) -> None:
    assert level_of(line) == level


def test_masking_and_message_offset() -> None:
    assert (
        mask_line("uid=0 rhost=10.0.0.1 took 35ms id 9f4ef63a")
        == "uid=<*> rhost=<*> took <*> id <*>"
    )
    line = "2015-07-29 17:41:44,747 - INFO  [main:Quorum@774] - Notification time out: 3200"
    assert line[message_offset(line) :] == "Notification time out: 3200"
    syslog = "Jun 14 15:16:01 combo sshd(pam_unix)[19939]: check pass; user unknown"
    assert syslog[message_offset(syslog) :] == "check pass; user unknown"


def test_miner_groups_and_separates() -> None:
    lines = [f"session opened for user u{i} by (uid={i})" for i in range(20)]
    lines += ["VM Started (Lifecycle Event)"] * 10 + ["VM Stopped (Lifecycle Event)"] * 10
    result = mine_templates(lines)
    groups = {result.assignments[i] for i in range(20)}
    assert len(groups) == 1
    assert result.assignments[20] != result.assignments[30]
    top = result.by_count()[0]
    assert top.count == 20
    assert "<*>" in top.text


def _grouping_accuracy(pred: list[int], truth: list[str]) -> float:
    true_groups: dict[str, set[int]] = defaultdict(set)
    pred_groups: dict[int, set[int]] = defaultdict(set)
    for i, (p, t) in enumerate(zip(pred, truth, strict=False)):
        true_groups[t].add(i)
        pred_groups[p].add(i)
    ok = sum(len(g) for g in true_groups.values() if pred_groups[pred[next(iter(g))]] == g)
    return ok / len(truth)


def test_grouping_accuracy_on_real_logs(corpus: Path) -> None:
    """A regression guard on real labelled logs (raw lines, header found automatically)."""
    accuracies = []
    for name in ("Zookeeper", "Spark", "HealthApp", "BGL"):
        raw = (corpus / "loghub" / name / f"{name}_2k.log").read_text(encoding="utf-8").splitlines()
        with open(
            corpus / "loghub2_2k" / name / f"{name}_2k.log_structured_corrected.csv",
            newline="",
            encoding="utf-8",
        ) as fh:
            truth = [row["EventId"] for row in csv.DictReader(fh)]
        pred = mine_templates(raw, strip_header=True).assignments
        accuracies.append(_grouping_accuracy(pred, truth))
    assert min(accuracies) >= 0.9, accuracies


def _log(n: int) -> str:
    out = []
    for i in range(n):
        level = "INFO"
        msg = f"worker {i % 7} finished job {i} in {i % 50}ms"
        if i == n // 4:
            level, msg = "ERROR", "database connection refused: db01:5432"
        if i == n - 10:
            level, msg = "ERROR", "job 99 failed: disk quota exceeded"
        out.append(
            f"2024-03-01 10:{(i // 60) % 60:02d}:{i % 60:02d},{i % 1000:03d} {level} "
            f"[pool-{i % 3}] app.Worker - {msg}"
        )
    return "\n".join(out) + "\n"


def test_log_view_facts_templates_and_error_windows() -> None:
    log = _log(6_000)
    assert choose_view(log).kind == "log"
    ctx = make_ctx("log", tokens=1_500)
    out = VIEW.render(VIEW.prepare(log), ctx)
    content = out.content
    assert isinstance(content, str)
    assert_fits(content, ctx)
    assert_fence_unforgeable(content)
    header = content.split("\n", 1)[0]
    assert "6,000 lines" in header
    assert "levels ERROR 2 · INFO 5,998" in header
    assert "time 2024-03-01 10:00:00,000 to" in header
    assert "database connection refused" in content
    assert "disk quota exceeded" in content
    templates = [i for i in out.view.items if i["type"] == "template"]
    assert templates
    # 6,000 lines: templates are counted in a sample of TEMPLATE_SAMPLE_LINES lines, and
    # the view says so; levels and the time range are exact.
    summary = out.view.summary
    assert summary["templates_sampled"] is True
    assert summary["template_sample"] == TEMPLATE_SAMPLE_LINES
    assert summary["levels_sampled"] is False
    assert templates[0]["count"] >= 0.9 * TEMPLATE_SAMPLE_LINES
    assert "in a sample" in header
    assert "worker <*> finished job <*> in <*>" in content
    assert out.view.summary["first_error"] == 6_000 // 4 + 1
    assert "first_error" in out.view.references


@pytest.mark.parametrize("tokens", [64, 150, 600])
def test_log_view_tight_budgets(tokens: int) -> None:
    ctx = make_ctx("log", tokens=tokens, chars=tokens * 5)
    out = VIEW.render(VIEW.prepare(_log(3_000)), ctx)
    assert_fits(out.content, ctx)


def test_log_view_on_real_system_logs(corpus: Path) -> None:
    for name in ("Linux", "Android"):
        raw = (corpus / "loghub" / name / f"{name}_2k.log").read_text(encoding="utf-8")
        assert choose_view(raw).kind == "log"
        ctx = make_ctx("log", tokens=2_000)
        out = VIEW.render(VIEW.prepare(raw), ctx)
        assert_fits(out.content, ctx)
        assert out.view.summary["time"]["stamped_lines"] == 2_000
        assert out.view.summary["template_count"] > 10


def test_huge_log_facts_are_sampled_and_say_so() -> None:
    log = _log(EXACT_FACTS_LINES + 20_000)
    out = VIEW.render(VIEW.prepare(log), make_ctx("log", tokens=1_500))
    summary = out.view.summary
    assert summary["lines"] == EXACT_FACTS_LINES + 20_000
    assert summary["levels_sampled"] is True
    assert 0 < summary["level_sample"] < summary["lines"]
    header = str(out.content).split("\n", 1)[0]
    assert f"levels in a sample of {summary['level_sample']:,} lines" in header
    # The first and last timestamps come from the first and last lines.
    assert summary["time"]["first_line"] == 1
    assert summary["time"]["last_line"] == summary["lines"]


def test_time_range_of_parts_matches_the_whole() -> None:
    lines = [f"2024-03-01 10:{i // 60 % 60:02d}:{i % 60:02d} x" for i in range(500)]
    whole = time_range(lines)
    parts = time_range_of_parts(list(enumerate(lines, start=1)))
    assert whole == parts
    sparse = time_range_of_parts([(1, lines[0]), (500, lines[-1])])
    assert sparse is not None
    assert sparse.first == whole.first if whole else False
    assert sparse.last == ("2024-03-01 10:08:19", 500)
    assert time_range_of_parts([(1, "no stamp"), (2, "none here")]) is None


def test_log_view_scattered_errors_share_markers() -> None:
    """Errors far apart are single-line windows; in a row, they share one section marker."""
    lines = [
        f"2024-05-01 10:{i // 60:02d}:{i % 60:02d} INFO worker {i % 7} heartbeat ok"
        for i in range(3_000)
    ]
    for k in range(40):
        at = 200 + 70 * k
        lines[at] = f"2024-05-01 11:00:{k:02d} ERROR store{k}: write of block {k} failed (disk {k})"
    log = "\n".join(lines) + "\n"
    assert choose_view(log).kind == "log"
    ctx = make_ctx("log", tokens=1_500)
    out = VIEW.render(VIEW.prepare(log), ctx)
    content = str(out.content)
    assert_fits(content, ctx)
    assert_fence_unforgeable(content)
    shown = marked_lines(content)
    assert shown
    raw = log.split("\n")
    assert all(raw[number - 1] == text for number, text in shown)
    windows = [item for item in out.view.items if item["type"] == "window"]
    singles = [w for w in windows if w["start_line"] == w["end_line"]]
    assert len(singles) >= 10
    nonce = fence_parts(content)[0]
    assert content.count(f"[{nonce}: line") < len(windows) - len(singles) // SINGLES_PER_SECTION


def test_a_small_budget_gets_a_compact_log_header() -> None:
    """Below `compact_budget_tokens` the header keeps the facts, not the totals the notice has."""
    raw = "".join(
        f"2024-03-01 10:{i // 60 % 60:02d}:{i % 60:02d},000 INFO worker {i} done\n"
        for i in range(3_000)
    )
    raw += "2024-03-01 11:00:00,000 ERROR database connection refused\n"
    raw += "2024-03-01 11:00:01,000 INFO worker 9 done\n"
    small, large = make_ctx("log", tokens=1_000), make_ctx("log", tokens=3_000)
    compact_out = VIEW.render(VIEW.prepare(raw), small)
    full_out = VIEW.render(VIEW.prepare(raw), large)
    compact, full = str(compact_out.content), str(full_out.content)
    assert_fits(compact, small)
    assert_fence_unforgeable(compact)
    head, full_head = compact.split("\n", 1)[0], full.split("\n", 1)[0]
    for header in (head, full_head):  # the facts, at every budget
        assert "3,002 lines" in header
        assert "levels ERROR 1 · INFO 3,001" in header
        assert "time 2024-03-01 10:00:00,000 to 2024-03-01 11:00:01,000" in header
        assert "1 error line" in header
    assert "database connection refused" in compact
    # Compact: no total characters, no first/last error lines, no window count.
    assert " chars" not in head
    assert "first at line" not in head
    assert "window" not in head
    assert f"{compact_out.view.shown:,} lines.]" in head
    assert f"{len(raw):,} chars" in full_head
    assert "first at line 3,001, last at line 3,001" in full_head
    assert "windows of" in full_head or "window of" in full_head
    # The exact account is in the notice at every budget.
    for out, text in ((compact_out, compact), (full_out, full)):
        chars = sum(r.chars for r in out.view.omitted)
        lines = sum(r.lines for r in out.view.omitted)
        assert f"[Omitted: {lines:,} lines ({chars:,} chars)" in text.rsplit("\n", 1)[-1]
        assert lines + out.view.shown == 3_002
