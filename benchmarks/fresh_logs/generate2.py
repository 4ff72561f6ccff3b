"""Generate batch 2 of the fresh-logs held-out set: ecosystems the first batch does not have.

Same method as `generate.py` (batch 1), whose job pieces, labelling and writing this script
reuses: every case is a small fixture project written into a temporary folder with one injected
fault (said per case), built or tested by a real local tool with verbose flags and CI noise
(`set -x` traces, tool versions, in some jobs a cache download retried against a closed port,
warnings, progress, a `tar -cvzf` cleanup after the failure). stdout and stderr are merged. The
labels are decided from the injected fault alone: a regular expression per needle, written with
the fault, selects the log line; nothing here imports or runs the package.

Batch 2 covers: Erlang (erlc, rebar3, eunit, escript), Elixir (mix compile, mix test), Emacs
Lisp (byte-compile, ert), Vim script (`vim -es`), Haskell (ghc --make), OCaml (dune), R
(testthat, R CMD INSTALL, Rscript), Lua (luac, lua), Tcl (tcltest, tclsh), Fortran (gfortran),
Pascal (fpc), Scala (scalac), Django (manage.py test) and pytest's `-ra` short summary.

Tools (Debian bookworm packages, `apt-get install -y --no-install-recommends erlang-nox
erlang-dev rebar3 elixir emacs-nox vim ghc ocaml-nox ocaml-dune r-base-core r-cran-testthat
lua5.4 tcl tcllib gfortran fp-compiler scala`; Django and pytest from PyPI into the separate
venv `TOOLS2/venv`, made by this script). Versions are written to every case's `tool_version`.

Run (from the project root; about 10 minutes):

    python benchmarks/fresh_logs/generate2.py            # every case: batch2/{logs/,cases.jsonl}
    python benchmarks/fresh_logs/generate2.py --only ID  # some cases (their rows are replaced)
"""

# The fixture projects' sources are written inline: some of their lines are longer than ours.
# ruff: noqa: E501

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate as g  # batch 1's job pieces and writer (a script in this folder)

HERE = Path(__file__).resolve().parent / "batch2"
TOOLS2 = Path(os.environ.get("FRESH_LOGS_TOOLS2", "/tmp/fresh19_tools"))
PREFIX = "fresh2/"

# batch 1's writer, pointed at batch 2's folder
g.HERE = HERE
g.LOGS = HERE / "logs"
g.CASES = HERE / "cases.jsonl"
g.GENERATED = "2026-12-04"
g.BUILD_ROOT = Path(os.environ.get("FRESH_LOGS_BUILD2", "/tmp/fresh_logs_build2"))

Needle = g.Needle
Scenario = g.Scenario
_w = g._w
_job = g._job
_run_step = g._run_step

Build = Callable[[Path, random.Random], str]

WORDS = "alpha beta gamma delta omega sigma kappa theta lambda zeta".split()


# ---------------------------------------------------------------------------------------------
# Erlang


def _erl_module(i: int, rng: random.Random, *, warn: bool, body: str = "") -> str:
    lines = [f"-module(acme_{i:03d}).", "-export([scale/1, describe/1, total/1])."]
    lines += ["", f"scale(X) -> X * {rng.randint(2, 9)}.", ""]
    if warn:
        lines += ["describe(X) ->", "    Unused = X + 1,", '    io_lib:format("~p", [X]).']
    else:
        lines += ["describe(X) ->", '    io_lib:format("~p", [X]).']
    lines += ["", body or "total(L) -> lists:sum([scale(X) || X <- L]).", ""]
    return "\n".join(lines)


def erlc_compile(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            body = ""
            if i == bad:
                body = "total(L) ->\n    Acc = lists:sum([scale(X) || X <- L]),\n    Acc + Offset."
            _w(d / "src" / f"acme_{i:03d}.erl", _erl_module(i, rng, warn=rng.random() < 0.4, body=body))
        step = (
            "mkdir -p ebin\n"
            "for f in src/*.erl; do\n"
            '  echo "ERLC $f"\n'
            "  erlc -v -Wall +debug_info +warn_export_vars -o ebin \"$f\" || status=$?\n"
            "done\n"
            "ls -la ebin | head -n 400\n"
        )
        return _job(step, fetch="erlang-deps", cleanup="ebin src")

    return build


def rebar3_compile(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        _w(d / "rebar.config", "{erl_opts, [debug_info, warn_unused_vars]}.\n")
        _w(
            d / "src" / "acme.app.src",
            '{application, acme, [{vsn, "0.4.2"}, {modules, []}, {registered, []},\n'
            " {applications, [kernel, stdlib]}]}.\n",
        )
        for i in range(n):
            body = ""
            if i == bad:
                body = "total(L) -> lists:sum([normalise(X) || X <- L])."
            _w(d / "src" / f"acme_{i:03d}.erl", _erl_module(i, rng, warn=rng.random() < 0.3, body=body))
        env = f"export HOME={d} REBAR_COLOR=none DEBUG=1\n"
        return _job(env + _run_step("rebar3 compile"), cleanup="_build src")

    return build


def eunit_suite(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            factor = rng.randint(2, 9)
            tests = []
            for k in range(12):
                want = k * factor + (1 if (i == bad and k == 7) else 0)
                tests.append(f"case_{k:02d}_test() -> ?assertEqual({want}, scale({k})).")
            _w(
                d / "src" / f"acme_{i:03d}.erl",
                f"-module(acme_{i:03d}).\n-include_lib(\"eunit/include/eunit.hrl\").\n"
                f"-export([scale/1]).\n\nscale(X) -> X * {factor}.\n\n" + "\n".join(tests) + "\n",
            )
        mods = ",".join(f"acme_{i:03d}" for i in range(n))
        step = (
            "mkdir -p ebin\nerlc -Wall +debug_info -o ebin src/*.erl\n"
            "erl -noshell -pa ebin -eval 'R = eunit:test(["
            + mods
            + "], [verbose]), halt(case R of ok -> 0; _ -> 1 end).' || status=$?\n"
        )
        return _job(step, fetch="erlang-plt", cleanup="ebin")

    return build


def escript_crash(rows: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        data = []
        for r in range(rows):
            weight = 0 if r == bad else rng.randint(1, 40)
            data.append(f"{{row, {r}, \"{rng.choice(WORDS)}_{r}\", {rng.randint(10, 999)}, {weight}}}.")
        _w(d / "priv" / "rows.eterm", "\n".join(data) + "\n")
        _w(
            d / "report.escript",
            "#!/usr/bin/env escript\n%%! -noshell\n"
            "main(_) ->\n"
            '    {ok, Rows} = file:consult("priv/rows.eterm"),\n'
            '    io:format("loaded ~p rows~n", [length(Rows)]),\n'
            "    lists:foreach(fun(R) -> report(R) end, Rows),\n"
            '    io:format("done~n").\n\n'
            "report({row, N, Name, Total, Weight}) ->\n"
            '    io:format("[info] row ~p ~s total=~p weight=~p~n", [N, Name, Total, Weight]),\n'
            "    Ratio = Total div Weight,\n"
            '    io:format("[debug] row ~p ratio=~p~n", [N, Ratio]).\n',
        )
        return _job(_run_step("escript report.escript"), fetch="report-inputs")

    return build


# ---------------------------------------------------------------------------------------------
# Elixir


def _mix_project(d: Path) -> str:
    _w(
        d / "mix.exs",
        "defmodule Acme.MixProject do\n  use Mix.Project\n\n"
        '  def project do\n    [app: :acme, version: "0.3.1", elixir: "~> 1.14", deps: []]\n  end\n\n'
        "  def application do\n    [extra_applications: [:logger]]\n  end\nend\n",
    )
    _w(d / ".formatter.exs", '[inputs: ["{mix,.formatter}.exs", "{lib,test}/**/*.{ex,exs}"]]\n')
    return f"export HOME={d} MIX_HOME={d}/.mix HEX_OFFLINE=1 MIX_ENV=test\n"


def mix_compile(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        env = _mix_project(d)
        for i in range(n):
            warn = "    unused = x + 1\n    scratch = x * 2\n" if rng.random() < 0.6 else ""
            call = "normalise_row(x)" if i == bad else f"x * {rng.randint(2, 9)}"
            _w(
                d / "lib" / "acme" / f"mod{i:03d}.ex",
                f"defmodule Acme.Mod{i:03d} do\n  @moduledoc false\n\n"
                f"  def scale(x) do\n{warn}    {call}\n  end\n\n"
                '  def describe(x), do: "mod' + f"{i:03d}" + ' #{x}"\nend\n',
            )
        return _job(env + _run_step("mix compile --verbose --force"), cleanup="_build lib")

    return build


def mix_test(files: int, per: int, bad: tuple[int, int]) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        env = _mix_project(d)
        _w(d / "lib" / "acme.ex", "defmodule Acme do\n  def scale(x, k), do: x * k\nend\n")
        _w(d / "test" / "test_helper.exs", "ExUnit.start()\n")
        for f in range(files):
            tests = []
            for k in range(per):
                factor = rng.randint(2, 9)
                want = k * factor + (1 if (f, k) == bad else 0)
                tests.append(
                    f'  test "scale {k} by {factor}" do\n    assert Acme.scale({k}, {factor}) == {want}\n  end\n'
                )
            _w(
                d / "test" / f"mod{f:03d}_test.exs",
                f"defmodule Acme.Mod{f:03d}Test do\n  use ExUnit.Case, async: true\n\n"
                + "\n".join(tests)
                + "end\n",
            )
        return _job(env + _run_step("mix test --trace --seed 0"), fetch="mix-deps")

    return build


# ---------------------------------------------------------------------------------------------
# Emacs Lisp


def _el_file(i: int, rng: random.Random, *, warn: bool, extra: str = "") -> str:
    body = [f";;; acme-{i:03d}.el --- part {i} -*- lexical-binding: t -*-", ""]
    body += [f"(defun acme-{i:03d}-scale (x)", f'  "Scale X by {i % 7 + 2}."', f"  (* x {i % 7 + 2}))", ""]
    if warn:
        body += [f"(defun acme-{i:03d}-describe (x)", "  (let ((unused 1))", '    (format "%s" x)))', ""]
    body += [extra, f"(provide 'acme-{i:03d})", f";;; acme-{i:03d}.el ends here", ""]
    return "\n".join(body)


def emacs_byte_compile(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            extra = ""
            if i == bad:
                extra = f'(defun acme-{i:03d}-total (xs)\n  "Sum XS."\n  (let ((acc 0))\n    (dolist (x xs acc)\n      (setq acc (+ acc x))))\n'
            _w(d / "lisp" / f"acme-{i:03d}.el", _el_file(i, rng, warn=rng.random() < 0.4, extra=extra))
        step = (
            "emacs --batch -L lisp --eval '(setq byte-compile-verbose t)' "
            "-f batch-byte-compile lisp/*.el || status=$?\n"
        )
        return _job(step, fetch="elpa-cache", cleanup="lisp")

    return build


def ert_suite(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        tests = [";;; acme-test.el --- tests -*- lexical-binding: t -*-", "(require 'ert)", ""]
        tests += ["(defun acme-scale (x k) (* x k))", ""]
        for t in range(n):
            x, k = rng.randint(1, 50), rng.randint(2, 9)
            want = x * k + (1 if t == bad else 0)
            tests.append(f"(ert-deftest acme-scale-{t:04d} ()\n  (should (= (acme-scale {x} {k}) {want})))")
        _w(d / "test" / "acme-test.el", "\n".join(tests) + "\n")
        step = "emacs --batch -L test -l test/acme-test.el -f ert-run-tests-batch-and-exit || status=$?\n"
        return _job(step, fetch="elpa-cache")

    return build


def emacs_void_function(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            _w(d / "lisp" / f"acme-{i:03d}.el", _el_file(i, rng, warn=False))
        rows = "\n".join(
            f"(message \"[build] packaging acme-{i:03d} (%d bytes)\" {rng.randint(300, 900)})\n(message \"[build] acme-{i:03d}: %s\" (acme-{i:03d}-scale {i}))"
            + (f"\n(acme-{i:03d}-normalise {i})" if i == bad else "")
            for i in range(n)
        )
        _w(
            d / "build.el",
            ";;; build.el -*- lexical-binding: t -*-\n(setq load-path (cons \"lisp\" load-path))\n"
            + "\n".join(f"(require 'acme-{i:03d})" for i in range(n))
            + "\n"
            + rows
            + "\n(message \"[build] done\")\n",
        )
        step = "emacs --batch --eval '(setq debug-on-error nil)' -l build.el || status=$?\n"
        return _job(step, cleanup="lisp")

    return build


# ---------------------------------------------------------------------------------------------
# Vim script


VIM_RUNNER = """\
let s:failed = 0
let s:tests = sort(filter(split(execute('function /^Test_'), "\\n"), 'v:val =~# "^function Test_"'))
for s:line in s:tests
  let s:name = matchstr(s:line, 'Test_\\w\\+')
  let v:errors = []
  call call(s:name, [])
  if empty(v:errors)
    echo 'ok - ' . s:name
  else
    let s:failed += 1
    echo 'not ok - ' . s:name
    for s:e in v:errors
      echo '#   ' . s:e
    endfor
  endif
endfor
echo printf('%d tests, %d failed', len(s:tests), s:failed)
if s:failed
  cquit 1
endif
qa!
"""


def vim_tests(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        lines = ["\" tests for autoload/acme.vim", ""]
        for t in range(n):
            x, k = rng.randint(1, 50), rng.randint(2, 9)
            want = x * k + (1 if t == bad else 0)
            lines += [
                f"func Test_scale_{t:04d}()",
                f"  call assert_equal({want}, acme#scale({x}, {k}))",
                "endfunc",
            ]
        _w(d / "test" / "test_acme.vim", "\n".join(lines) + "\n")
        _w(d / "test" / "runner.vim", VIM_RUNNER)
        _w(d / "autoload" / "acme.vim", "function! acme#scale(x, k) abort\n  return a:x * a:k\nendfunction\n")
        step = (
            "vim -es -N -u NONE -i NONE --cmd 'set rtp+=.' -c 'set verbose=1' "
            "-S test/test_acme.vim -S test/runner.vim </dev/null || status=$?\n"
            "echo\n"
        )
        return _job(step, fetch="vim-plugins")

    return build


def vim_script_error(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            body = [f"\" plugin/acme_{i:03d}.vim", f"let g:acme_{i:03d}_factor = {rng.randint(2, 9)}"]
            body += [f"function! Acme{i:03d}Scale(x) abort", f"  return a:x * g:acme_{i:03d}_factor", "endfunction"]
            if i == bad:
                body += [f"call Acme{i:03d}Scale(g:acme_{i:03d}_offset)"]
            _w(d / "plugin" / f"acme_{i:03d}.vim", "\n".join(body) + "\n")
        step = (
            "vim -es -N -u NONE -i NONE -V2 --cmd 'set rtp+=.' "
            "-c 'runtime! plugin/*.vim' -c 'qa!' </dev/null || status=$?\n"
            "echo\n"
        )
        return _job(step, cleanup="plugin")

    return build


# ---------------------------------------------------------------------------------------------
# The cases


def scenarios() -> list[Scenario]:
    s: list[Scenario] = []
    s.append(
        Scenario(
            "erlang-erlc-unbound",
            "erlang",
            "erlc",
            "erlc -v -Wall +debug_info -o ebin src/*.erl (one file at a time)",
            "src/acme_137.erl: total/1 adds an unbound variable Offset (one of 220 modules; unused-variable warnings)",
            [Needle(r"src/acme_137\.erl:\d+:\d+: variable 'Offset' is unbound")],
            erlc_compile(220, 137),
            version_cmd="erl -noshell -eval 'io:format(\"Erlang/OTP ~s~n\", [erlang:system_info(otp_release)]), halt().'",
        )
    )
    s.append(
        Scenario(
            "erlang-rebar3-undefined-function",
            "erlang",
            "rebar3",
            "DEBUG=1 rebar3 compile",
            "src/acme_061.erl: total/1 calls normalise/1, which is not defined (one of 260 modules)",
            [Needle(r"src/acme_061\.erl:\d+:\d+: function normalise/1 undefined")],
            rebar3_compile(260, 61),
            version_cmd="HOME=/tmp REBAR_COLOR=none rebar3 version",
        )
    )
    s.append(
        Scenario(
            "erlang-eunit-assert",
            "erlang",
            "eunit",
            "erl -noshell -eval 'eunit:test([...], [verbose])'",
            "src/acme_044.erl: case_07_test expects scale(7) + 1 (one of 960 tests in 80 modules)",
            [
                Needle(r"acme_044: case_07_test\.\.\.\*failed\*"),
                Needle(r"\*\*error:\{assertEqual,\[\{module,acme_044\}"),
            ],
            eunit_suite(80, 44),
            version_cmd="erl -noshell -eval 'io:format(\"Erlang/OTP ~s~n\", [erlang:system_info(otp_release)]), halt().'",
        )
    )
    s.append(
        Scenario(
            "erlang-escript-badarith",
            "erlang",
            "escript",
            "escript report.escript",
            "priv/rows.eterm: row 1530 has weight 0, so `Total div Weight` raises badarith (of 1,800 logged rows)",
            [
                Needle(r"escript: exception error: an error occurred when evaluating an arithmetic expression"),
                Needle(r"called as \d+ div 0"),
            ],
            escript_crash(1800, 1530),
            version_cmd="erl -noshell -eval 'io:format(\"Erlang/OTP ~s~n\", [erlang:system_info(otp_release)]), halt().'",
        )
    )
    s.append(
        Scenario(
            "elixir-mix-compile-undefined",
            "elixir",
            "mix",
            "mix compile --verbose --force",
            "lib/acme/mod231.ex: scale/1 calls normalise_row/1, which is not defined (one of 320 modules; unused-variable warnings)",
            [Needle(r"\*\* \(CompileError\) lib/acme/mod231\.ex:\d+: undefined function normalise_row/1")],
            mix_compile(320, 231),
            version_cmd="elixir --version | tail -n 1",
        )
    )
    s.append(
        Scenario(
            "elixir-mix-test-assert",
            "elixir",
            "mix test",
            "mix test --trace --seed 0",
            "test/mod027_test.exs: one of 1,200 tests expects the product + 1",
            [
                Needle(r"^\s+\d+\) test scale 13 by \d+ \(Acme\.Mod027Test\)"),
                Needle(r"^\s+test/mod027_test\.exs:\d+$"),
            ],
            mix_test(40, 30, (27, 13)),
            version_cmd="elixir --version | tail -n 1",
        )
    )
    s.append(
        Scenario(
            "elisp-byte-compile-eof",
            "emacs-lisp",
            "emacs --batch -f batch-byte-compile",
            "emacs --batch -L lisp -f batch-byte-compile lisp/*.el",
            "lisp/acme-088.el: acme-088-total is missing its closing parenthesis (one of 150 files; unused-variable warnings)",
            [Needle(r"acme-088\.el:\d+:\d+: Error: End of file during parsing")],
            emacs_byte_compile(150, 88),
            version_cmd="emacs --version | head -n 1",
        )
    )
    s.append(
        Scenario(
            "elisp-ert-failure",
            "emacs-lisp",
            "ert",
            "emacs --batch -l test/acme-test.el -f ert-run-tests-batch-and-exit",
            "test/acme-test.el: acme-scale-0611 expects the product + 1 (one of 1,500 tests)",
            [Needle(r"^\s*FAILED\s+\d+/\d+\s+acme-scale-0611"), Needle(r"^\s*FAILED\s+acme-scale-0611$")],
            ert_suite(1500, 611),
            version_cmd="emacs --version | head -n 1",
        )
    )
    s.append(
        Scenario(
            "elisp-void-function",
            "emacs-lisp",
            "emacs --batch -l",
            "emacs --batch -l build.el",
            "build.el: calls acme-341-normalise, which no file defines (after 341 of 400 packaging messages; batch backtrace)",
            [Needle(r"Lisp error: \(void-function acme-341-normalise\)")],
            emacs_void_function(400, 341),
            version_cmd="emacs --version | head -n 1",
        )
    )
    s.append(
        Scenario(
            "vim-assert-failure",
            "vim-script",
            "vim -es",
            "vim -es -N -u NONE -S test/test_acme.vim -S test/runner.vim",
            "test/test_acme.vim: Test_scale_0433 expects the product + 1 (one of 1,400 tests)",
            [Needle(r"^not ok - Test_scale_0433\s*$"), Needle(r"Test_scale_0433 line 1: Expected \d+ but got \d+")],
            vim_tests(1400, 433),
            version_cmd="vim --version | head -n 1",
        )
    )
    s.append(
        Scenario(
            "vim-undefined-variable",
            "vim-script",
            "vim -es -V2",
            "vim -es -N -u NONE -V2 -c 'runtime! plugin/*.vim'",
            "plugin/acme_097.vim: calls Acme097Scale with the undefined g:acme_097_offset (one of 180 plugins, sourced with -V2)",
            [Needle(r"E121: Undefined variable: g:acme_097_offset")],
            vim_script_error(180, 97),
            version_cmd="vim --version | head -n 1",
        )
    )
    return s


# ---------------------------------------------------------------------------------------------
# Running


def ensure_tools() -> None:
    """Make the separate venv with Django and pytest (`TOOLS2/venv`) once."""
    venv = TOOLS2 / "venv"
    if not (venv / "bin" / "django-admin").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "django", "pytest"], check=True)


def _record(row: dict[str, object], order: list[str]) -> None:
    rows: dict[str, dict[str, object]] = {}
    if g.CASES.exists():
        for line in g.CASES.read_text(encoding="utf-8").splitlines():
            if line.strip():
                old = json.loads(line)
                rows[str(old["id"])] = old
    rows[str(row["id"])] = row
    ordered = [rows[PREFIX + cid] for cid in order if PREFIX + cid in rows]
    g.CASES.write_text("".join(json.dumps(r) + "\n" for r in ordered), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--only", nargs="*", default=None, help="case ids (without fresh2/)")
    args = parser.parse_args(argv)
    ensure_tools()
    wanted = set(args.only) if args.only else None
    order = [sc.case_id for sc in scenarios()]
    if wanted is None and g.CASES.exists():
        g.CASES.unlink()
    failures = 0
    for sc in scenarios():
        if wanted is not None and sc.case_id not in wanted:
            continue
        try:
            row = g.run_scenario(sc)
        except Exception as exc:
            failures += 1
            print(f"{sc.case_id}: FAILED: {exc}", flush=True)
            continue
        row["id"] = PREFIX + sc.case_id
        row["batch"] = 2
        _record(row, order)
        print(
            f"{sc.case_id}: {row['bytes']:,} bytes, {row['lines']:,} lines, exit "
            f"{row['exit_status']}, needles at lines {row['needle_lines']} ({row['seconds']} s)",
            flush=True,
        )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
