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
    assert len(rows) >= 60
    assert len({r["id"] for r in rows}) == len(rows)
    for batch, least in (
        ("1", 25),
        ("2", 25),
        ("3", 12),
        ("4", 14),
        ("5", 18),
        ("6", 12),
        ("7", 14),
    ):
        mine = [r for r in rows if r["batch"] == batch]
        assert len(mine) >= least, batch
        assert len({r["ecosystem"] for r in mine}) >= (6 if batch in ("6", "7") else 8), batch
    batch1 = {r["ecosystem"] for r in rows if r["batch"] == "1"}
    batch2 = {r["ecosystem"] for r in rows if r["batch"] == "2"}
    batch3 = {r["ecosystem"] for r in rows if r["batch"] == "3"}
    batch4 = {r["ecosystem"] for r in rows if r["batch"] == "4"}
    batch5 = {r["ecosystem"] for r in rows if r["batch"] == "5"}
    assert len(batch2 - batch1) >= 8  # batch 2's ecosystems are new but (at most) a few
    assert len(batch3 - batch1 - batch2) >= 6
    assert len(batch4 - batch1 - batch2 - batch3) >= 8
    assert len(batch5 - batch1 - batch2 - batch3 - batch4) >= 8
    small = [r for r in rows if r["batch"] == "5" and r["bytes"] < 20_000]
    assert len(small) <= 5
    # Batch 6 is the same toolchains in the layouts of five CI systems.
    layouts = {r["ci_layout"] for r in rows if r["batch"] == "6"}
    assert {"github-actions", "gitlab-ci", "azure-pipelines", "buildkite"} <= layouts
    assert {"jenkins", "jenkins-timestamps"} & layouts
    small6 = [r for r in rows if r["batch"] == "6" and r["bytes"] < 20_000]
    assert len(small6) <= 1
    # Batch 7 is the hard shapes of logs (long lines, carriage returns, interleaving, CRLF).
    small7 = [r for r in rows if r["batch"] == "7" and r["bytes"] < 20_000]
    assert len(small7) <= 2
    for row in rows:
        assert row["fault"], row["id"]
        assert 1 <= len(row["needles"]) <= 3, row["id"]
        assert len(row["needle_rules"]) == len(row["needles"])
        text = fresh_logs.read_log(fresh_logs.fresh_dir() / row["path"])
        # Batches 5 and 6 hold a few small logs on purpose (a tool that prints little, an install
        # that fails at once); the rest are larger than every budget measured.
        least_bytes = (
            4_000 if row["batch"] == "5" else 3_000 if row["batch"] in ("6", "7") else 20_000
        )
        assert len(text.encode("utf-8")) >= least_bytes, row["id"]
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
    quick = fresh_logs.QUICK_PER_BATCH
    assert result.data["batches"] == dict.fromkeys(fresh_logs.BATCH_DIRS, quick)
    overall, per_batch, per_ecosystem = result.tables
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
    assert [(r[0], r[1]) for r in per_batch.rows] == [(s, b) for s in names for b in BUDGETS]
    q = fresh_logs.QUICK_PER_BATCH
    for row in per_batch.rows:
        assert row[2::3] == [*(q for _ in fresh_logs.BATCH_DIRS), fresh_logs.QUICK_CASES]
        for kept, recall in zip(row[3::3], row[4::3], strict=True):
            assert 0.0 <= kept <= 1.0
            assert 0.0 <= recall <= 1.0
    keys = [(r[0], r[1]) for r in per_ecosystem.rows]
    totals = [(b, "all") for b in (*fresh_logs.BATCH_DIRS, "all")]
    assert keys[-len(totals) :] == totals
    assert {g for _b, g in keys[: -len(totals)]} == set(result.data["ecosystems"])
    assert [r[2] for r in per_ecosystem.rows[-len(totals) :]] == [
        *(q for _ in fresh_logs.BATCH_DIRS),
        fresh_logs.QUICK_CASES,
    ]
    assert len(per_ecosystem.columns) == 4 + len(BUDGETS) + 5


def test_without_cases_nothing_is_measured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LRL_FRESH_LOGS", str(tmp_path))
    result = fresh_logs.run(corpus=None, quick=True)
    assert not result.tables
    assert any("not found" in n for n in result.notes)


@pytest.mark.parametrize(
    ("batch", "script"),
    [
        ("2", "generate2.py"),
        ("3", "generate3.py"),
        ("4", "generate4.py"),
        ("5", "generate5.py"),
        ("6", "generate6.py"),
        ("7", "generate7.py"),
    ],
)
def test_batch_rows_are_the_generator_s_cases_with_its_rules(batch: str, script: str) -> None:
    import importlib.util
    import sys

    path = fresh_logs.FRESH_DIR / script
    spec = importlib.util.spec_from_file_location(f"fresh_logs_{path.stem}", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    saved = list(sys.path)
    try:
        spec.loader.exec_module(module)  # defines the cases; runs no tool
    finally:
        sys.path[:] = saved
    by_id = {module.PREFIX + sc.case_id: sc for sc in module.scenarios()}
    rows = [r for r in fresh_logs.load_rows(fresh_logs.FRESH_DIR) if r["batch"] == batch]
    assert [r["id"] for r in rows] == list(by_id)
    for row in rows:
        sc = by_id[row["id"]]
        assert row["needle_rules"] == [n.pattern for n in sc.needles], row["id"]
        assert (row["ecosystem"], row["fault"]) == (sc.ecosystem, sc.fault), row["id"]
        assert row["path"].startswith(f"batch{batch}/logs/"), row["id"]
