"""`python -m langchain_result_layer demo | cat`: readable at 80 columns, nothing cut."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from langchain_result_layer.cli.demo_cmd import format_table
from langchain_result_layer.demo import TurnStats


def test_table_fits_the_width_and_keeps_every_call_whole() -> None:
    calls = [
        "search_code(raise NotImplemented)",
        "read_file(json/decoder.py)",
        "fetch_tool_result(lines 1,234,567-1,234,890)",
        "run_sql(SELECT kind, COUNT(*) AS n FROM definitions GROUP BY kind)",
    ]
    turns = [
        TurnStats(call=1, tokens=60, actions=["run_tests()"]),
        TurnStats(call=12, tokens=1_439_225, placeholders=8, fetches=1, actions=calls),
    ]
    for width in (60, 80, 120):
        lines = format_table(turns, 16_000, width=width)
        assert all(len(line) <= width for line in lines), width
        assert lines[0].split()[:6] == ["call", "tokens", "window", "views", "cleared", "fetched"]
        if lines[1] == "      -> model then called":  # a narrow terminal: calls under rows
            text = "".join(line.split("-> ", 1)[1] for line in lines[2:] if "-> " in line)
        else:
            column = lines[0].index("model then called")
            text = "".join(line[column:] for line in lines[2:])
        for call in calls:  # wrapped, never cut
            assert call.replace(" ", "") in text.replace(" ", ""), (width, call)


def test_piped_demo_is_readable_at_80_columns(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in {"COLUMNS", "LINES"}}
    proc = subprocess.run(
        [sys.executable, "-m", "langchain_result_layer", "demo"],  # the README's command
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        env={**env, "PYTHONWARNINGS": "ignore"},
    )
    assert proc.returncode == 0, proc.stderr[-2_000:]
    out = proc.stdout
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "The model is scripted" in out
    assert "model call 1 done" not in out  # progress goes to terminals only
    header = [i for i, line in enumerate(lines) if re.match(r"call\s+tokens\s+window", line)]
    assert len(header) == 2
    rows = [line for line in lines[header[0] + 1 :] if re.match(r"\s+\d+\s+[\d,]+\s+\d+%", line)]
    assert len(rows) >= 10
    above = re.findall(r"call (\d+): ([\d,]+) tokens, above the trigger \(([\d,]+)\)", out)
    for _call, tokens, trigger in above:
        assert int(trigger.replace(",", "")) < int(tokens.replace(",", "")) <= 16_000
    assert (tmp_path / "demo_output" / "context_per_call.png").stat().st_size > 1_000
    if not above:
        pytest.skip("no request of this run sat above the trigger")
