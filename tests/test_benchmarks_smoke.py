"""The benchmark suite runs end to end (quick mode) so it cannot rot; no timing assertions."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.__main__ import SUITE, available, main
from benchmarks._common import corpus_path


def test_every_benchmark_runs_quickly_and_writes_json(tmp_path: Path) -> None:
    names = available()
    assert set(names) == set(SUITE), "a benchmark module listed in the suite is missing"
    assert main(["all", "--quick", "--out", str(tmp_path)]) == 0
    for name in names:
        data = json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8"))
        assert data["name"] == name
        if not data["tables"]:  # only a benchmark that needs the corpus may measure nothing
            assert corpus_path(None) is None, f"{name} produced no table"
            assert any("not found" in note for note in data["notes"]), data["notes"]
            continue
        assert all(table["rows"] for table in data["tables"]), f"{name} has an empty table"
