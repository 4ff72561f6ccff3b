"""The view benchmarks run (quick mode) on the real corpus and report what they measured."""

from __future__ import annotations

from pathlib import Path

import pytest
from benchmarks import evidence_recall, log_templates, view_speed


def test_evidence_recall_quick(corpus: Path) -> None:
    result = evidence_recall.run(corpus=corpus, quick=True)
    titles = [t.title for t in result.tables]
    assert titles[0].startswith("build-log evidence by protocol set")
    assert any(t.startswith("validation set: every strategy") for t in titles)
    assert any(t.startswith("public sample") for t in titles)
    assert any(t.startswith("system logs") for t in titles)
    assert any(t.startswith("tuned set in") for t in titles)
    protocol = result.tables[0]
    sets = [row[0] for row in protocol.rows]
    # The headline comes first, at every budget, and the gap is reported at every budget.
    assert sets[: len(evidence_recall.BUDGETS)] == ["validation (headline)"] * len(
        evidence_recall.BUDGETS
    )
    assert [row[3] for row in protocol.rows if row[0] == "validation (headline)"] == list(
        evidence_recall.BUDGETS
    )
    assert sets.count("gap (tuned - validation)") == len(evidence_recall.BUDGETS)
    for row in protocol.rows:
        if row[0].startswith("gap"):
            continue
        assert 0.0 <= row[4] <= 1.0
        assert 0.0 <= row[5] <= 1.0
        assert row[7] == 0  # no view over budget
    strategies = next(t for t in result.tables if t.title.startswith("validation set: every"))
    assert [row[0] for row in strategies.rows] == [
        "chosen view",
        "log view",
        "command view",
        "text view",
        "head only",
        "tail only",
        "head+tail 50/50",
        "reference rule",
        "deepagents eviction",
    ]
    assert "protocol" in result.data
    assert "gap" in result.data["protocol"]


def test_protocol_split_is_by_repository_and_fixed() -> None:
    def case(source: str, group: str, case_id: str) -> evidence_recall.Case:
        return evidence_recall.Case(case_id=case_id, source=source, group=group, raw="", needles=[])

    # Every log of a repository is on the same side, whatever its case id or origin.
    for group in ("logchunks:vim@vim", "logchunks:php@php-src", "logchunks:jgm@pandoc"):
        sides = {
            evidence_recall.is_validation(case(source, group, f"{source}/{group}/{i}"))
            for source in ("logchunks", "logchunks_train")
            for i in range(5)
        }
        assert len(sides) == 1
    # Other CI systems are validation as a whole.
    assert evidence_recall.is_validation(case("cidiff_breakages", "cidiff:jimfs", "x"))


def test_tuned_folds_hold_whole_tuned_repositories() -> None:
    groups = [f"logchunks:owner{i}@repo{i}" for i in range(40)]
    cases = [
        evidence_recall.Case(case_id=f"{g}/{k}", source="logchunks", group=g, raw="", needles=[])
        for g in groups
        for k in range(3)
    ]
    folds = evidence_recall.tuned_folds(cases)
    assert len(folds) == evidence_recall.TUNED_FOLDS
    tuned = [c for c in cases if not evidence_recall.is_validation(c)]
    assert sorted(c.case_id for fold in folds for c in fold) == sorted(c.case_id for c in tuned)
    repos = [{c.group for c in fold} for fold in folds]
    for i, a in enumerate(repos):
        assert a  # 40 repositories: every fold has some
        for b in repos[i + 1 :]:
            assert not a & b  # a repository lies in one fold only
    assert max(map(len, repos)) - min(map(len, repos)) <= 1  # dealt evenly


def test_deepagents_preview_follows_its_documented_shape() -> None:
    raw = "\n".join(f"line {i} " + "x" * (1_200 if i == 2 else 10) for i in range(1, 101))
    preview = evidence_recall._deepagents_preview(raw, budget_tokens=100)
    assert "saved in the filesystem at this path: /large_tool_results/call_bench" in preview
    assert "     1\tline 1 " in preview
    assert "   100\tline 100 " in preview
    assert "line 6 " not in preview
    assert "line 95 " not in preview
    assert "... [90 lines truncated] ..." in preview
    assert "x" * 1_001 not in preview  # lines are clipped at 1,000 characters
    assert evidence_recall._deepagents_preview("short", budget_tokens=100) == "short"


def test_view_speed_quick(corpus: Path) -> None:
    result = view_speed.run(corpus=corpus, quick=True)
    table = result.tables[0]
    variants = {row[1] for row in table.rows}
    assert variants == {"default views", "log view", "command view", "text engine"}
    for row in table.rows:
        assert row[3] > 0
        assert row[8] <= view_speed.BUDGET_TOKENS


def test_log_templates_quick(corpus: Path) -> None:
    result = log_templates.run(corpus=corpus, quick=True)
    table = result.tables[0]
    means = next(row for row in table.rows if row[0] == "mean")
    assert means[4] >= 0.9  # ours on raw lines, Zookeeper + HealthApp
    assert any("0.865" in note for note in result.notes)
    assert log_templates.grouping_accuracy([1, 1, 2], ["a", "a", "b"]) == 1.0
    assert log_templates.grouping_accuracy([1, 1, 1], ["a", "a", "b"]) == 0.0


def test_evidence_recall_protocol_loop(corpus: Path) -> None:
    overrides = evidence_recall.parse_settings(["plain_run=4", "exact_repeat=0.5"])
    assert overrides == {"plain_run": 4, "exact_repeat": 0.5}
    with pytest.raises(AttributeError):
        evidence_recall.parse_settings(["no_such_setting=1"])
    report = evidence_recall.protocol_run(corpus, overrides, limit=3).splitlines()
    assert report[0] == f"settings changed: {overrides}"
    rows = report[1:]
    assert [row.split()[0] for row in rows] == ["default"] * 3 + ["changed"] * 3
    assert all("over budget 0" in row and "validation" in row for row in rows)
    # Validation is reported as totals only: no case id is named.
    assert not any("logchunks" in row or "cidiff" in row for row in report)


def test_needle_depth_is_the_rank_that_holds_every_needle() -> None:
    raw = "".join(f"step {i}\n" for i in range(500)) + "error: disk full\nexit code 1\n"

    def case(*needles: str) -> evidence_recall.Case:
        return evidence_recall.Case("c", "logchunks", "g", raw, [[n] for n in needles])

    # The error ranks first (the exit status second: a failure is explained by its error).
    assert evidence_recall.needle_depth(case("disk full")) == 1
    assert evidence_recall.needle_depth(case("disk full", "exit code 1")) == 2
    # A step far above the error is reached only by the fill, deep in the ranking.
    deep = evidence_recall.needle_depth(case("disk full", "step 250"))
    assert deep is not None
    assert deep > 100
    # A needle in no line of the log: no depth holds it.
    assert evidence_recall.needle_depth(case("disk full", "no such line")) is None


def test_evidence_recall_depth_loop(corpus: Path) -> None:
    overrides = {"other_repeat": 0.85}
    report = evidence_recall.depth_run(corpus, overrides, limit=3).splitlines()
    assert report[0] == f"settings changed: {overrides} (tuned folds only)"
    rows = report[1:]
    depths = evidence_recall.DEPTHS
    assert [row.split()[0] for row in rows] == ["default"] * len(depths) + ["changed"] * len(depths)
    assert [int(row.split()[2].rstrip(":")) for row in rows] == [*depths, *depths]
    kept = [int(row.rsplit("= ", 1)[1].split("/")[0]) for row in rows]
    # A deeper top-k holds at least the logs a shallower one does.
    assert kept[: len(depths)] == sorted(kept[: len(depths)])
    # Only tuned logs are read: no validation total, no case id.
    assert not any("validation" in row or "logchunks" in row for row in report)


def test_evidence_recall_tuned_loop(corpus: Path) -> None:
    overrides = {"other_repeat": 0.85}
    report = evidence_recall.tuned_run(corpus, overrides, limit=3).splitlines()
    assert report[0] == f"settings changed: {overrides} (tuned folds only)"
    rows = report[1:]
    assert [row.split()[0] for row in rows] == ["default"] * 3 + ["changed"] * 3
    assert all("change" in row for row in rows[3:])
    # Only tuned logs are read: no validation total, no case id.
    assert not any("validation" in row or "logchunks" in row for row in report)


def test_ranking_fit_quick(corpus: Path) -> None:
    from benchmarks import ranking_fit

    items = ranking_fit.load(corpus, limit=3)
    assert items
    assert all(not evidence_recall.is_validation(item.case) for item in items)  # tuned only
    for item in items:
        assert len(item.x) == len(item.lines)
        assert all(len(row) == len(ranking_fit.FEATURES) for row in item.x)
    # No weight is today's ranking: the depth is `needle_depth`'s.
    for item in items:
        assert ranking_fit.depth_of(item, {}) == evidence_recall.needle_depth(item.case)
    report = ranking_fit.report(corpus, {}, limit=3)
    assert "today's ranking (w = 0)" in report
    assert "coordinate ascent" in report
    assert "single role_tail" in report
