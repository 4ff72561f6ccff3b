"""The view benchmarks run (quick mode) on the real corpus and report what they measured."""

from __future__ import annotations

from pathlib import Path

from benchmarks import evidence_recall, log_templates, view_speed


def test_evidence_recall_quick(corpus: Path) -> None:
    result = evidence_recall.run(corpus=corpus, quick=True)
    titles = [t.title for t in result.tables]
    assert any(t.startswith("evidence target") for t in titles)
    assert any(t.startswith("system logs") for t in titles)
    assert any(t.startswith("cross-validation") for t in titles)
    target = result.tables[0]
    names = [row[0] for row in target.rows]
    assert names == [
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
    for row in target.rows:
        assert 0.0 <= row[2] <= 1.0
        assert 0.0 <= row[3] <= 1.0
    assert result.tables[1].title.startswith("evidence target: chosen view vs")
    cv = result.data["cross_validation"]
    assert 0.0 <= cv["held_out_rate"] <= 1.0
    assert len(cv["folds"]) == 2


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
