"""The README, line by line, and the two commands a user meets first (`inspect`, `demo`)."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain_core.messages import ToolMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode
from typing_extensions import TypedDict

import langchain_result_layer
from langchain_result_layer import GuardSettings, ResultLayer
from langchain_result_layer.cli.main import main as cli_main
from langchain_result_layer.scripted import ScriptedChatModel
from tests.acceptance.conftest import calls_in, fetch, read_raw

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")

pytestmark = pytest.mark.filterwarnings("ignore:create_react_agent has been moved")


# --------------------------------------------------------------------------- README snippets


class _State(TypedDict):
    messages: Annotated[list[Any], add_messages]


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)\n```", README, re.S)


def test_readme_python_snippets_run_in_order(
    demo_tools: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run every Python snippet of the README, in order, with real stand-ins for its names."""
    monkeypatch.chdir(tmp_path)  # the first snippet creates tool_results.db here
    blocks = python_blocks()
    assert len(blocks) >= 5
    namespace: dict[str, Any] = {
        "model": ScriptedChatModel(script=["done"], max_input_tokens=128_000),
        "search": demo_tools["search_code"],
        "run_sql": demo_tools["run_sql"],
        "read_log": demo_tools["read_file"],
        "prompt": "You are a careful analyst.",
        "ToolNode": ToolNode,  # the snippet uses it without importing it
        "tool_message": ToolMessage(
            content=demo_tools["read_file"].invoke({"path": "pydoc_data/topics.py"}),
            tool_call_id="c1",
            name="read_file",
        ),
    }
    for n, block in enumerate(blocks):
        if "graph.add_node" in block:
            namespace["graph"] = StateGraph(_State)
            namespace["graph"].add_node("agent", lambda s: {"messages": []})
        exec(compile(block, f"README.md python block {n}", "exec"), namespace)
    assert (tmp_path / "tool_results.db").exists()
    msg, view = namespace["msg"], namespace["view"]
    assert view is not None
    assert msg.artifact is view
    layer = namespace["layer"]
    assert fetch(layer, None, ref=calls_in(msg)[0]).status == "success"
    graph = namespace["graph"]
    graph.add_edge(START, "guard")  # the README's fragment leaves the entry point to the user
    graph.add_edge("agent", END)
    graph.compile()  # the nodes and edges the README adds make a valid graph


def test_readme_configuration_table_matches_the_defaults() -> None:
    layer = ResultLayer(context_window=100_000)
    assert layer.result_budget.tokens == 30_000  # 30% of the window
    assert layer.result_budget.chars == 400_000
    assert type(layer.store).__name__ == "InMemoryResultStore"  # "memory"
    assert layer.token_counter.name.startswith("tiktoken:o200k_base")
    g = GuardSettings()
    assert (g.trigger_fraction, g.keep_last, g.on_overflow) == (0.75, 3, "raise")
    assert "`trigger_fraction=0.75`" in README
    assert "7 days" in README


def test_readme_guard_target_matches_the_default() -> None:
    stated = re.search(r"`target_fraction=([\d.]+)`", README)
    assert stated is not None
    assert float(stated.group(1)) == GuardSettings().target_fraction
    prose = re.search(r"until the request is back under (\d+)%", README)
    assert prose is not None
    assert int(prose.group(1)) / 100 == GuardSettings().target_fraction


def test_guard_docs_state_the_default_target() -> None:
    from langchain_result_layer.adapters import budget_guard

    doc = budget_guard.__doc__ or ""
    stated = re.search(r"under the target \((\d+)%", doc)
    assert stated is not None
    assert int(stated.group(1)) / 100 == GuardSettings().target_fraction


def test_names_the_readme_uses_are_importable_from_the_package() -> None:
    for name in ("ResultLayer", "BudgetGuard", "GuardSettings", "ToolPolicy", "SummarySettings"):
        assert hasattr(langchain_result_layer, name), name


# --------------------------------------------------------------------------- inspect


def inspect(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    rc = cli_main(["inspect", *args])
    return rc, capsys.readouterr().out


def numbers(out: str) -> dict[str, str]:
    section = out.split("--- numbers", 1)[1]
    return {
        m.group(1).strip(): m.group(2).strip()
        for m in re.finditer(r"^([a-z ]+):\s+(.*)$", section, re.M)
    }


def test_inspect_command_runs_as_documented(corpus: Path) -> None:
    """The README's exact command line, in a real subprocess."""
    log = corpus / "logchunks/logs/Java/square@retrofit/failed/403602199.log"
    proc = subprocess.run(
        [sys.executable, "-m", "langchain_result_layer", "inspect", str(log), "--budget", "2000"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert proc.returncode == 0, proc.stderr
    nums = numbers(proc.stdout)
    assert nums["kind"] == "command"
    shown = int(nums["shown"].split()[0].replace(",", ""))
    assert 0 < shown <= 2_000
    assert "Traceback" not in proc.stderr


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("inspect")
    rows = [
        {"id": i, "name": f"user{i}", "status": ["ok", "fail", "pending"][i % 3]}
        for i in range(4_000)
    ]
    out = {
        "json": d / "payload.json",
        "csv": d / "rows.csv",
        "empty": d / "empty.txt",
        "binary": d / "blob.bin",
        "crlf_ansi": d / "progress.log",
    }
    out["json"].write_text(json.dumps({"items": rows, "meta": {"n": 4_000}}), encoding="utf-8")
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=["id", "name", "status"], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    out["csv"].write_text(buf.getvalue(), encoding="utf-8")
    out["empty"].write_text("", encoding="utf-8")
    out["binary"].write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 300)
    with open(out["crlf_ansi"], "w", encoding="utf-8", newline="") as fh:
        for i in range(2_000):
            fh.write(f"\x1b[32mINFO\x1b[0m step {i}: downloading\r 50%\r 100%\r\n")
        fh.write("\x1b[31mERROR\x1b[0m fatal: checksum mismatch in layer 7\r\n")
        for i in range(300):
            fh.write(f"INFO cleanup {i}\r\n")
    return out


@pytest.mark.parametrize(
    ("name", "kind"),
    [("json", "json"), ("csv", "rows"), ("binary", "binary"), ("crlf_ansi", "text")],
)
def test_inspect_real_files(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path], name: str, kind: str
) -> None:
    rc, out = inspect(capsys, str(files[name]), "--budget", "1000")
    assert rc == 0
    nums = numbers(out)
    assert nums["kind"] == kind
    assert int(nums["shown"].split()[0].replace(",", "")) <= 1_000


def test_inspect_stdlib_source_and_corpus_logs(
    capsys: pytest.CaptureFixture[str], corpus: Path
) -> None:
    import sysconfig

    rc, out = inspect(
        capsys, str(Path(sysconfig.get_paths()["stdlib"]) / "typing.py"), "--budget", "1500"
    )
    assert rc == 0
    assert numbers(out)["kind"] == "file"
    rc, out = inspect(
        capsys, str(corpus / "loghub/Linux/Linux_2k.log"), "--budget", "1500", "--quiet"
    )
    assert rc == 0
    assert numbers(out)["kind"] == "log"


def test_inspect_cleans_terminal_output(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path]
) -> None:
    rc, out = inspect(capsys, str(files["crlf_ansi"]), "--budget", "1000")
    assert rc == 0
    view_text = out.split("--- numbers", 1)[0]
    assert "\x1b" not in view_text
    assert "fatal: checksum mismatch in layer 7" in view_text


def test_inspect_empty_file(capsys: pytest.CaptureFixture[str], files: dict[str, Path]) -> None:
    rc, out = inspect(capsys, str(files["empty"]))
    assert rc == 0
    assert "nothing" in numbers(out)["omitted"]


def test_inspect_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rc = cli_main(["inspect", str(tmp_path / "nope.log")])
    assert rc == 2
    assert "no such file" in capsys.readouterr().err


def test_inspect_directory(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rc = cli_main(["inspect", str(tmp_path)])
    assert rc == 2


def test_inspect_bad_options_are_usage_errors(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path]
) -> None:
    for args in (["--budget", "10"], ["--kind", "lgo"]):
        try:
            rc = cli_main(["inspect", str(files["csv"]), *args])
        except SystemExit as exc:  # argparse usage error
            rc = int(exc.code or 0)
        assert rc != 0, args


def test_csv_result_is_stored_byte_for_byte(files: dict[str, Path]) -> None:
    raw = files["csv"].read_text(encoding="utf-8")
    layer = ResultLayer(context_window=16_000, max_result_tokens=1_000)
    msg = layer.process_tool_message(ToolMessage(content=raw, tool_call_id="c", name="q"))
    view = ResultLayer.view_of(msg)
    assert view is not None
    assert view.kind == "rows"
    assert view.original_chars == len(raw)
    out = fetch(layer, None, ref=view.references["all"], offset=0, limit=200)
    assert "id,name,status\n0,user0,ok" in out.content


def test_inspect_reads_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("line\n" * 50_000))
    rc, out = inspect(capsys, "-", "--budget", "500", "--quiet")
    assert rc == 0
    assert numbers(out)["original"].startswith("250,000 chars")


# --------------------------------------------------------------------------- demo


def test_demo_command(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "langchain_result_layer", "demo", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        env={**os.environ, "PYTHONWARNINGS": "ignore", "COLUMNS": "120"},
    )
    assert proc.returncode == 0, proc.stderr[-2_000:]
    out = proc.stdout
    assert "Requests over the window: 0 with the layer" in out
    assert (tmp_path / "context_per_call.png").stat().st_size > 1_000
    assert (tmp_path / "tool_results.db").exists()
    largest = re.search(r"Largest request: ([\d,]+) tokens with the layer \((\d+)% of", out)
    assert largest is not None
    assert int(largest.group(2)) <= 100
    assert "Traceback" not in proc.stderr


def test_inspect_shows_the_original_for_a_real_log(corpus: Path) -> None:
    raw = read_raw(corpus / "loghub/Linux/Linux_2k.log")
    layer = ResultLayer(context_window=128_000, max_result_tokens=1_000)
    view = ResultLayer.view_of(
        layer.process_tool_message(ToolMessage(content=raw, tool_call_id="c", name="inspect"))
    )
    assert view is not None
    assert view.original_chars == len(raw)
    assert view.original_lines == raw.count("\n") + (not raw.endswith("\n"))
