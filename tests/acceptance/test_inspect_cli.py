"""`inspect` as a new user meets it: its help, its header, and references that can be fetched."""

from __future__ import annotations

import contextlib
import importlib.metadata
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from langchain_result_layer.cli.main import build_parser, main
from langchain_result_layer.core.budget import DEFAULT_MAX_RESULT_CHARS, DEFAULT_RESULT_FRACTION
from langchain_result_layer.views import registered_views


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(["inspect", *args])
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def inspect_help() -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main(["inspect", "--help"])
    return " ".join(out.getvalue().split())  # argparse wraps lines: compare the words


@pytest.fixture
def build_log(tmp_path: Path) -> Path:
    path = tmp_path / "build.log"
    lines = [f"[INFO] step {i}: compiling module {i % 17}" for i in range(3_000)]
    lines[1_700] = "[ERROR] Failed to execute goal: compilation failure in Parser.java:42"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_help_lists_every_kind_and_every_default() -> None:
    text = inspect_help()
    kinds = re.search(r"--kind KIND view to use: one of ([a-z, ]+) \(default", text)
    assert kinds is not None
    assert [k.strip() for k in kinds.group(1).split(",")] == sorted(registered_views())
    assert f"default: {100 * DEFAULT_RESULT_FRACTION:.0f}% of --window" in text
    assert f"(default: {DEFAULT_MAX_RESULT_CHARS:,})" in text
    assert "(default: 128,000)" in text
    assert "--status {success,error} the tool call's status" in text
    assert "not fetchable after inspect exits, unless --store URL keeps it" in text
    assert "--fetch REF" in text


def test_usage_line_names_the_command_the_user_typed() -> None:
    assert build_parser().prog == "langchain-result-layer"
    (script,) = importlib.metadata.entry_points(
        group="console_scripts", name="langchain-result-layer"
    )
    assert script.load() is main
    proc = subprocess.run(
        [sys.executable, "-m", "langchain_result_layer", "inspect", "--help"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert proc.stdout.startswith("usage: python -m langchain_result_layer inspect")


def test_header_names_the_file_and_says_references_die_without_a_store(
    capsys: pytest.CaptureFixture[str], build_log: Path
) -> None:
    rc, out, _ = run(capsys, str(build_log), "--budget", "400")
    assert rc == 0
    assert "Tool result `build.log`" in out
    assert "Tool result `inspect`" not in out
    assert "fetchable:     no: inspect keeps the raw result in memory only" in out
    rc, out, _ = run(capsys, str(build_log), "--budget", "400", "--tool-name", "run_build")
    assert "Tool result `run_build`" in out


def test_with_a_store_the_references_can_be_fetched_back(
    capsys: pytest.CaptureFixture[str], build_log: Path, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'inspect.db'}"
    rc, out, _ = run(capsys, str(build_log), "--budget", "400", "--store", url, "--user", "ada")
    assert rc == 0
    hint = re.search(
        r"fetchable:     yes: inspect --fetch '(ref://[^']+)' --store (\S+) --user ada", out
    )
    assert hint is not None
    ref = hint.group(1)
    assert hint.group(2) == url
    rc, out, _ = run(
        capsys,
        "--fetch",
        ref,
        "--store",
        url,
        "--user",
        "ada",
        "--start-line",
        "1701",
        "--end-line",
        "1702",
    )
    assert rc == 0
    raw = build_log.read_text(encoding="utf-8").splitlines()
    assert raw[1_700] in out
    assert raw[1_701] in out
    assert raw[1_702] not in out
    assert "lines 1,701-1,702 of 3,000" in out
    # Reads re-check the owner: another user gets the not-accessible answer and exit status 1.
    rc, out, _ = run(capsys, "--fetch", ref, "--store", url, "--user", "eve")
    assert rc == 1
    assert "not found or not accessible" in out
    assert raw[1_700] not in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--fetch", "ref://tool-result/abc/text"], "--fetch needs --store URL"),
        (["x.log", "--fetch", "ref://tool-result/abc/text", "--store", "sqlite://"], "not both"),
        (["x.log", "--start-line", "3"], "--start-line is for --fetch"),
        ([], "give a FILE to inspect"),
        (["x.log", "--kind", "lgo"], "known kinds: binary, blocks, command"),
        (["x.log", "--store", "not a url"], "inspect: "),
    ],
)
def test_usage_problems_are_explained(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], message: str
) -> None:
    (tmp_path / "x.log").write_text("hello\n", encoding="utf-8")
    args = [str(tmp_path / a) if a == "x.log" else a for a in args]
    rc, _, err = run(capsys, *args)
    assert rc == 2
    assert message in err
    assert "Traceback" not in err


def test_binary_numbers_are_in_bytes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    blob = tmp_path / "blob.bin"
    blob.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 100)
    rc, out, _ = run(capsys, str(blob), "--budget", "300", "--quiet")
    assert rc == 0
    numbers = out.split("--- numbers", 1)[1]
    assert "kind:          binary" in numbers
    assert "original:      25,608 bytes of binary data" in numbers
    assert "0 lines" not in numbers
    assert "line 1" not in numbers
    assert re.search(r"ranges:        bytes 0-25,607", numbers)
