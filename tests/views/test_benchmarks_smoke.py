"""The view benchmarks run (quick mode) on the real corpus and report what they measured."""

from __future__ import annotations

from pathlib import Path

from benchmarks import evidence_recall, log_templates


def test_evidence_recall_quick(corpus: Path) -> None:
    result = evidence_recall.run(corpus=corpus, quick=True)
    titles = [t.title for t in result.tables]
    assert any(t.startswith("evidence target") for t in titles)
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
    ]
    for row in target.rows:
        assert 0.0 <= row[2] <= 1.0
        assert 0.0 <= row[3] <= 1.0


def test_log_templates_quick(corpus: Path) -> None:
    result = log_templates.run(corpus=corpus, quick=True)
    table = result.tables[0]
    means = next(row for row in table.rows if row[0] == "mean")
    assert means[4] >= 0.9  # ours on raw lines, Zookeeper + HealthApp
    assert any("0.865" in note for note in result.notes)
    assert log_templates.grouping_accuracy([1, 1, 2], ["a", "a", "b"]) == 1.0
    assert log_templates.grouping_accuracy([1, 1, 1], ["a", "a", "b"]) == 0.0
