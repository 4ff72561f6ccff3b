"""The fresh-logs benchmark: its labels hold, its tables have their shape, no view overshoots."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest
from benchmarks import fresh_logs
from benchmarks.evidence_recall import BUDGETS, _strategies

from langchain_result_layer.core.tokens import TiktokenCounter


def test_every_label_is_a_line_of_its_log_picked_by_its_rule() -> None:
    rows = fresh_logs.load_rows(fresh_logs.fresh_dir())
    assert len(rows) >= 30
    assert len({r["ecosystem"] for r in rows}) >= 8
    for row in rows:
        assert row["fault"], row["id"]
        assert 1 <= len(row["needles"]) <= 3, row["id"]
        assert len(row["needle_rules"]) == len(row["needles"])
        text = fresh_logs.read_log(fresh_logs.fresh_dir() / row["path"])
        assert len(text.encode("utf-8")) >= 20_000, row["id"]
        lines = text.split("\n")
        for needle, rule, number in zip(
            row["needles"], row["needle_rules"], row["needle_lines"], strict=True
        ):
            assert needle in text, (row["id"], needle)
            assert re.search(rule, lines[number - 1]), (row["id"], rule)
            assert needle in lines[number - 1]


def test_gzipped_logs_read_exactly(tmp_path: Path) -> None:
    raw = "line one\r\nline two\n\x1b[31mred\x1b[0m caf\u00e9\n"
    with gzip.open(tmp_path / "a.log.gz", "wb") as fh:
        fh.write(raw.encode("utf-8") + b"\xff")
    (tmp_path / "a.log").write_bytes(raw.encode("utf-8") + b"\xff")
    assert fresh_logs.read_log(tmp_path / "a.log.gz") == raw + "\ufffd"
    assert fresh_logs.read_log(tmp_path / "a.log") == raw + "\ufffd"


def test_quick_run_tables_and_budgets() -> None:
    result = fresh_logs.run(corpus=None, quick=True)
    assert result.data["cases"] == fresh_logs.QUICK_CASES
    overall, per_ecosystem = result.tables
    names = list(_strategies(TiktokenCounter(encoding="o200k_base")))
    assert names[0] == fresh_logs.OURS
    assert {"head only", "tail only", "head+tail 50/50", "deepagents eviction"} <= set(names)
    assert [(r[0], r[1]) for r in overall.rows] == [(s, b) for s in names for b in BUDGETS]
    for name, _budget, logs, kept, recall, over, fill in overall.rows:
        assert logs == fresh_logs.QUICK_CASES
        assert 0.0 <= kept <= 1.0
        assert 0.0 <= recall <= 1.0
        assert fill >= 0.0
        if name != "deepagents eviction":  # its preview is not cut to the budget
            assert over == 0, name
            assert fill <= 1.0, name
    ecosystems = result.data["ecosystems"]
    assert [r[0] for r in per_ecosystem.rows] == [*ecosystems, "all"]
    assert per_ecosystem.rows[-1][1] == fresh_logs.QUICK_CASES
    assert len(per_ecosystem.columns) == 3 + len(BUDGETS) + 5


def test_without_cases_nothing_is_measured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LRL_FRESH_LOGS", str(tmp_path))
    result = fresh_logs.run(corpus=None, quick=True)
    assert not result.tables
    assert any("not found" in n for n in result.notes)
