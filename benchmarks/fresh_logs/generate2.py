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

Run (from the project root; about 5 minutes):

    python benchmarks/fresh_logs/generate2.py            # every case: batch2/{logs/,cases.jsonl}
    python benchmarks/fresh_logs/generate2.py --only ID  # some cases (their rows are replaced)
"""

# The fixture projects' sources are written inline: some of their lines are longer than ours.
# ruff: noqa: E501

from __future__ import annotations

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

WORDS = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta", "lambda", "zeta"]


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
            _w(
                d / "src" / f"acme_{i:03d}.erl",
                _erl_module(i, rng, warn=rng.random() < 0.4, body=body),
            )
        step = (
            "mkdir -p ebin\n"
            "for f in src/*.erl; do\n"
            '  echo "ERLC $f"\n'
            '  erlc -v -Wall +debug_info +warn_export_vars -o ebin "$f" || status=$?\n'
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
            _w(
                d / "src" / f"acme_{i:03d}.erl",
                _erl_module(i, rng, warn=rng.random() < 0.3, body=body),
            )
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
                f'-module(acme_{i:03d}).\n-include_lib("eunit/include/eunit.hrl").\n'
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
            data.append(
                f'{{row, {r}, "{rng.choice(WORDS)}_{r}", {rng.randint(10, 999)}, {weight}}}.'
            )
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
    body += [
        f"(defun acme-{i:03d}-scale (x)",
        f'  "Scale X by {i % 7 + 2}."',
        f"  (* x {i % 7 + 2}))",
        "",
    ]
    if warn:
        body += [
            f"(defun acme-{i:03d}-describe (x)",
            "  (let ((unused 1))",
            '    (format "%s" x)))',
            "",
        ]
    body += [extra, f"(provide 'acme-{i:03d})", f";;; acme-{i:03d}.el ends here", ""]
    return "\n".join(body)


def emacs_byte_compile(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            extra = ""
            if i == bad:
                extra = f'(defun acme-{i:03d}-total (xs)\n  "Sum XS."\n  (let ((acc 0))\n    (dolist (x xs acc)\n      (setq acc (+ acc x))))\n'
            _w(
                d / "lisp" / f"acme-{i:03d}.el",
                _el_file(i, rng, warn=rng.random() < 0.4, extra=extra),
            )
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
            tests.append(
                f"(ert-deftest acme-scale-{t:04d} ()\n  (should (= (acme-scale {x} {k}) {want})))"
            )
        _w(d / "test" / "acme-test.el", "\n".join(tests) + "\n")
        step = "emacs --batch -L test -l test/acme-test.el -f ert-run-tests-batch-and-exit || status=$?\n"
        return _job(step, fetch="elpa-cache")

    return build


def emacs_void_function(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            _w(d / "lisp" / f"acme-{i:03d}.el", _el_file(i, rng, warn=False))
        rows = "\n".join(
            f'(message "[build] packaging acme-{i:03d} (%d bytes)" {rng.randint(300, 900)})\n(message "[build] acme-{i:03d}: %s" (acme-{i:03d}-scale {i}))'
            + (f"\n(acme-{i:03d}-normalise {i})" if i == bad else "")
            for i in range(n)
        )
        _w(
            d / "build.el",
            ';;; build.el -*- lexical-binding: t -*-\n(setq load-path (cons "lisp" load-path))\n'
            + "\n".join(f"(require 'acme-{i:03d})" for i in range(n))
            + "\n"
            + rows
            + '\n(message "[build] done")\n',
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
        lines = ['" tests for autoload/acme.vim', ""]
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
        _w(
            d / "autoload" / "acme.vim",
            "function! acme#scale(x, k) abort\n  return a:x * a:k\nendfunction\n",
        )
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
            body = [
                f'" plugin/acme_{i:03d}.vim',
                f"let g:acme_{i:03d}_factor = {rng.randint(2, 9)}",
            ]
            body += [
                f"function! Acme{i:03d}Scale(x) abort",
                f"  return a:x * g:acme_{i:03d}_factor",
                "endfunction",
            ]
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
# Haskell


def _hs_module(i: int, rng: random.Random, *, warn: bool, body: str = "") -> str:
    lines = [f"module Mod{i:03d} (scale, describe, total) where", ""]
    if warn:
        lines += ["import Data.List (sort)", ""]
    lines += ["scale :: Int -> Int", f"scale x = x * {rng.randint(2, 9)}", ""]
    lines += ["describe :: Int -> String", f'describe x = "mod{i:03d} " ++ show x', ""]
    if warn:
        lines += ["total xs = sum (map scale xs)", ""]
    else:
        lines += [body or "total :: [Int] -> Int\ntotal xs = sum (map scale xs)", ""]
    return "\n".join(lines)


def ghc_make(n: int, bad: int, body: str) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            warn = i != bad and rng.random() < 0.4
            _w(
                d / "src" / f"Mod{i:03d}.hs",
                _hs_module(i, rng, warn=warn, body=body if i == bad else ""),
            )
        imports = "\n".join(f"import qualified Mod{i:03d}" for i in range(n))
        calls = " + ".join(f"Mod{i:03d}.scale 1" for i in range(n))
        _w(
            d / "app" / "Main.hs",
            f"module Main (main) where\n\n{imports}\n\nmain :: IO ()\nmain = print ({calls})\n",
        )
        step = "mkdir -p build\nghc --make -Wall -j1 -isrc -outputdir build -o build/acme app/Main.hs || status=$?\n"
        return _job(step, fetch="ghc-store", cleanup="build src")

    return build


def ghc_runtime_head(rows: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        data = []
        for r in range(rows):
            tags = "" if r == bad else " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))
            data.append(f"{r}\t{rng.randint(10, 999)}\t{tags}")
        _w(d / "rows.tsv", "\n".join(data) + "\n")
        _w(
            d / "Report.hs",
            "module Main (main) where\n\nimport System.IO\n\n"
            "report :: String -> IO ()\n"
            "report line = do\n"
            "  let (n : total : rest) = splitOn line\n"
            "      tags = words (concat rest)\n"
            '  putStrLn ("[info] row " ++ n ++ " total=" ++ total ++ " tags=" ++ unwords tags)\n'
            '  putStrLn ("[debug] row " ++ n ++ " primary=" ++ head tags)\n\n'
            "splitOn :: String -> [String]\n"
            "splitOn s = case break (== '\\t') s of\n"
            "  (a, []) -> [a]\n"
            "  (a, _ : b) -> a : splitOn b\n\n"
            "main :: IO ()\nmain = do\n  hSetBuffering stdout LineBuffering\n"
            '  rows <- lines <$> readFile "rows.tsv"\n'
            '  putStrLn ("loaded " ++ show (length rows) ++ " rows")\n'
            "  mapM_ report rows\n",
        )
        step = "ghc -O0 -o report Report.hs\n" + _run_step("./report")
        return _job(step, fetch="report-inputs")

    return build


# ---------------------------------------------------------------------------------------------
# OCaml (dune)


def dune_build(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        _w(d / "dune-project", "(lang dune 2.9)\n")
        _w(
            d / "src" / "dune",
            "(library (name acme)\n (flags (:standard -w +a-4-40-41-42-44-45-70 -warn-error -a)))\n",
        )
        for i in range(n):
            unused = "let unused_scratch = 3 in\n  " if rng.random() < 0.4 else ""
            name = '"n" ^ string_of_int x' if i == bad else "x + 1"
            _w(
                d / "src" / f"mod{i:03d}.ml",
                f"let scale x =\n  {unused}x * {rng.randint(2, 9)}\n\n"
                f"let name (x : int) : int = {name}\n\n"
                f'let describe x = Printf.sprintf "mod{i:03d} %d" (scale x)\n',
            )
        step = "dune build --display short --profile dev 2>&1 || status=$?\n"
        return _job(step, fetch="opam-switch", cleanup="_build src")

    return build


def ocaml_not_found(rows: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        _w(d / "dune-project", "(lang dune 2.9)\n")
        _w(d / "bin" / "dune", "(executable (name report))\n")
        regions = ["north", "south", "east", "west"]
        data = []
        for r in range(rows):
            region = "central" if r == bad else rng.choice(regions)
            data.append(f"{r},{region},{rng.randint(10, 999)}")
        _w(d / "rows.csv", "\n".join(data) + "\n")
        _w(
            d / "bin" / "report.ml",
            'let rates = [ ("north", 3); ("south", 5); ("east", 7); ("west", 11) ]\n\n'
            "let report line =\n"
            "  match String.split_on_char ',' line with\n"
            "  | [ n; region; total ] ->\n"
            '      Printf.printf "[info] row %s region=%s total=%s\\n%!" n region total;\n'
            "      let rate = List.assoc region rates in\n"
            '      Printf.printf "[debug] row %s tax=%d\\n%!" n (int_of_string total * rate / 100)\n'
            "  | _ -> ()\n\n"
            "let () =\n"
            '  let ic = open_in "rows.csv" in\n'
            "  (try\n     while true do\n       report (input_line ic)\n     done\n"
            "   with End_of_file -> ());\n"
            "  close_in ic\n",
        )
        step = (
            "export OCAMLRUNPARAM=b\ndune build --display short ./bin/report.exe 2>&1\n"
            + _run_step("./_build/default/bin/report.exe")
        )
        return _job(step, fetch="opam-switch")

    return build


# ---------------------------------------------------------------------------------------------
# R


def r_testthat(files: int, per: int, bad: tuple[int, int]) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        _w(d / "R" / "scale.R", "scale_by <- function(x, k) x * k\n")
        for f in range(files):
            tests = []
            for k in range(per):
                factor = rng.randint(2, 9)
                want = k * factor + (1 if (f, k) == bad else 0)
                tests.append(
                    f'test_that("scale {k} by {factor}", {{\n  expect_equal(scale_by({k}, {factor}), {want})\n}})\n'
                )
            _w(d / "tests" / "testthat" / f"test-mod{f:02d}.R", "\n".join(tests))
        step = _run_step(
            'Rscript -e \'source("R/scale.R"); testthat::test_dir("tests/testthat", '
            "reporter = testthat::MultiReporter$new(list(testthat::LocationReporter$new(), "
            "testthat::CheckReporter$new())))'"
        )
        return _job(step, fetch="r-library")

    return build


def r_cmd_install(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        _w(
            d / "acme" / "DESCRIPTION",
            "Package: acme\nVersion: 0.2.0\nTitle: Acme Scales\nDescription: Scales numbers.\n"
            "Authors@R: person('A', 'B', email = 'a@example.org', role = c('aut', 'cre'))\n"
            "License: MIT\nEncoding: UTF-8\n",
        )
        _w(d / "acme" / "NAMESPACE", 'exportPattern("^[[:alpha:]]+")\n')
        for i in range(n):
            times = "* *" if i == bad else "*"
            _w(
                d / "acme" / "R" / f"mod{i:03d}.R",  # mod1000.R and up sort after mod100.R
                f"#' Scale by {i}\nscale_{i:04d} <- function(x) {{\n  y <- x {times} {rng.randint(2, 9)}\n"
                "  if (y > 100) {\n    y <- y - 1\n  }\n  y\n}\n\n"
                f"describe_{i:03d} <- function(x) paste0('mod{i:03d} ', x)\n",
            )
        step = "mkdir -p rlib\n" + _run_step("R CMD INSTALL --no-multiarch --debug -l rlib acme")
        return _job(step, cleanup="acme")

    return build


def rscript_error(rows: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        data = ["id,region,total"]
        for r in range(rows):
            data.append(
                f"{r},{'central' if r == bad else rng.choice(['north', 'south'])},{rng.randint(10, 999)}"
            )
        _w(d / "rows.csv", "\n".join(data) + "\n")
        _w(
            d / "report.R",
            "rates <- c(north = 3, south = 5)\n"
            "report_row <- function(r) {\n"
            "  message(sprintf('[info] row %d region=%s total=%d', r$id, r$region, r$total))\n"
            "  if (!(r$region %in% names(rates))) {\n"
            "    rate <- rate_fallback\n"
            "  } else {\n    rate <- rates[[r$region]]\n  }\n"
            "  message(sprintf('[debug] row %d tax=%.2f', r$id, r$total * rate / 100))\n"
            "}\n"
            "rows <- read.csv('rows.csv', stringsAsFactors = FALSE)\n"
            "message(sprintf('loaded %d rows', nrow(rows)))\n"
            "for (i in seq_len(nrow(rows))) report_row(rows[i, ])\n",
        )
        return _job(_run_step("Rscript --verbose report.R"), fetch="r-library")

    return build


# ---------------------------------------------------------------------------------------------
# Lua


def luac_check(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            assign = f"  local y = x * {rng.randint(2, 9)}"
            if i == bad:
                assign = f"  local y x * {rng.randint(2, 9)}"
            _w(
                d / "src" / f"mod_{i:03d}.lua",
                f"local M = {{}}\n\nfunction M.scale(x)\n{assign}\n  return y\nend\n\n"
                f'function M.describe(x)\n  return string.format("mod_{i:03d} %d", x)\nend\n\nreturn M\n',
            )
        step = (
            "for f in src/*.lua; do\n"
            '  echo "luac -p -l $f"\n'
            '  luac5.4 -p -l "$f" || status=$?\n'
            "done\n"
        )
        return _job(step, fetch="luarocks-tree", cleanup="src")

    return build


def lua_tap(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        _w(
            d / "src" / "acme.lua",
            "local M = {}\nfunction M.scale(x, k) return x * k end\nreturn M\n",
        )
        lines = [
            'package.path = "src/?.lua;" .. package.path',
            'local acme = require("acme")',
            "local tests = {}",
            "",
        ]
        for t in range(n):
            x, k = rng.randint(1, 50), rng.randint(2, 9)
            want = x * k + (1 if t == bad else 0)
            lines.append(
                f'tests[#tests + 1] = {{"scale_{t:04d}", function() local got = acme.scale({x}, {k}); '
                f'assert(got == {want}, string.format("scale({x}, {k}): expected {want}, got %d", got)) end}}'
            )
        lines += [
            "",
            'print("1.." .. #tests)',
            "local failed = 0",
            "for i, t in ipairs(tests) do",
            "  local ok, err = pcall(t[2])",
            "  if ok then",
            '    print(string.format("ok %d - %s", i, t[1]))',
            "  else",
            "    failed = failed + 1",
            '    print(string.format("not ok %d - %s", i, t[1]))',
            '    print("# " .. tostring(err))',
            "  end",
            "end",
            'print(string.format("# %d tests, %d failed", #tests, failed))',
            "os.exit(failed == 0 and 0 or 1)",
        ]
        _w(d / "test" / "run.lua", "\n".join(lines) + "\n")
        return _job(_run_step("lua5.4 test/run.lua"), fetch="luarocks-tree")

    return build


# ---------------------------------------------------------------------------------------------
# Tcl


def tcltest_suite(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        lines = [
            "package require tcltest",
            "namespace import ::tcltest::*",
            "configure -verbose {pass skip error}",
        ]
        lines += ["source [file join [file dirname [info script]] .. lib acme.tcl]", ""]
        for t in range(n):
            x, k = rng.randint(1, 50), rng.randint(2, 9)
            want = x * k + (1 if t == bad else 0)
            lines.append(
                f"test acme-{t // 100}.{t % 100} {{scale {x} by {k}}} -body {{ acme::scale {x} {k} }} -result {want}"
            )
        lines += [
            "",
            "set failed $::tcltest::numTests(Failed)",
            "cleanupTests",
            "exit [expr {$failed > 0}]",
        ]
        _w(d / "tests" / "acme.test", "\n".join(lines) + "\n")
        _w(
            d / "lib" / "acme.tcl",
            "namespace eval acme {}\nproc acme::scale {x k} { expr {$x * $k} }\n",
        )
        return _job(_run_step("tclsh tests/acme.test"), fetch="tcl-packages")

    return build


def tcl_invalid_command(rows: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        data = [f"{r} {rng.choice(WORDS)} {rng.randint(10, 999)}" for r in range(rows)]
        _w(d / "rows.txt", "\n".join(data) + "\n")
        _w(
            d / "report.tcl",
            "namespace eval acme {}\n"
            "proc acme::rate {name} { return [expr {[string length $name] % 5 + 1}] }\n"
            "proc acme::report {n name total} {\n"
            '    puts "\\[info\\] row $n name=$name total=$total"\n'
            f"    if {{$n == {bad}}} {{ set total [acme::normalise $total] }}\n"
            '    puts "\\[debug\\] row $n tax=[expr {$total * [acme::rate $name] / 100}]"\n'
            "}\n"
            "set fh [open rows.txt]\n"
            "while {[gets $fh line] >= 0} { acme::report {*}$line }\n"
            "close $fh\n",
        )
        return _job(
            _run_step("tclsh report.tcl"), fetch="tcl-packages", cleanup="rows.txt report.tcl"
        )

    return build


# ---------------------------------------------------------------------------------------------
# Fortran, Pascal, Scala


def gfortran_make(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            use = (
                "    total = total + offset"
                if i == bad
                else f"    total = total + {rng.randint(1, 9)}"
            )
            unused = "    integer :: scratch\n" if rng.random() < 0.4 else ""
            _w(
                d / "src" / f"mod_{i:03d}.f90",
                f"module mod_{i:03d}\n  implicit none\ncontains\n  integer function scale_{i:03d}(x) result(total)\n"
                f"    integer, intent(in) :: x\n{unused}    total = x * {rng.randint(2, 9)}\n{use}\n"
                f"  end function scale_{i:03d}\nend module mod_{i:03d}\n",
            )
        _w(
            d / "Makefile",
            "FC = gfortran\nFFLAGS = -O2 -g -Wall -Wextra -fcheck=all -Jobj\n"
            "SRCS := $(sort $(wildcard src/*.f90))\nOBJS := $(patsubst src/%.f90,obj/%.o,$(SRCS))\n"
            "all: $(OBJS)\n\nobj/%.o: src/%.f90\n\t@mkdir -p obj\n\t$(FC) $(FFLAGS) -c $< -o $@\n",
        )
        return _job(_run_step("make -k -j1 all"), fetch="fortran-deps", cleanup="obj src")

    return build


def gfortran_bounds(rows: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        _w(
            d / "src" / "report.f90",
            "program report\n  implicit none\n  integer :: weights(10), i, n, total\n"
            "  do i = 1, 10\n    weights(i) = i * 3\n  end do\n"
            f"  do n = 1, {rows}\n    total = mod(n * 37, 991)\n"
            "    print '(a,i0,a,i0)', '[info] row ', n, ' total=', total\n"
            f"    i = mod(n, 10) + 1\n    if (n == {bad}) i = 11\n"
            "    print '(a,i0,a,i0)', '[debug] row ', n, ' weighted=', total * weights(i)\n"
            "  end do\nend program report\n",
        )
        step = "gfortran -g -fcheck=bounds -Wall -o report src/report.f90\n" + _run_step("./report")
        return _job(step, fetch="fortran-deps")

    return build


def fpc_units(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            expr = "x * Offset" if i == bad else f"x * {rng.randint(2, 9)}"
            unused = "var\n  Scratch: Integer;\n" if rng.random() < 0.4 else ""
            _w(
                d / "src" / f"u{i:03d}.pas",
                f"unit u{i:03d};\n\n{{$mode objfpc}}\n\ninterface\n\nfunction Scale{i:03d}(x: Integer): Integer;\n\n"
                f"implementation\n\nfunction Scale{i:03d}(x: Integer): Integer;\n{unused}begin\n  Result := {expr};\nend;\n\nend.\n",
            )
        uses = ", ".join(f"u{i:03d}" for i in range(n))
        total = " + ".join(f"Scale{i:03d}(1)" for i in range(n))
        _w(
            d / "src" / "acme.pas",
            f"program acme;\n\nuses {uses};\n\nbegin\n  WriteLn({total});\nend.\n",
        )
        step = "mkdir -p build\n" + _run_step(
            "fpc -vewnhi -l -Fusrc -FUbuild -obuild/acme src/acme.pas"
        )
        return _job(step, fetch="fpc-units", cleanup="build src")

    return build


def scalac_project(n: int, bad: int, *, verbose: bool) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            name = '"n" + x' if i == bad else "x + 1"
            unused = "    val scratch = x * 2\n" if rng.random() < 0.3 else ""
            _w(
                d / "src" / f"Mod{i:03d}.scala",
                f"package acme\n\nobject Mod{i:03d} {{\n  def scale(x: Int): Int = {{\n{unused}    x * {rng.randint(2, 9)}\n  }}\n\n"
                f'  def name(x: Int): Int = {name}\n\n  def describe(x: Int): String = s"mod{i:03d} $x"\n}}\n',
            )
        flags = "-verbose " if verbose else ""
        step = "mkdir -p classes\nwc -l src/*.scala\n" + _run_step(
            f"scalac {flags}-deprecation -feature -Xlint -d classes src/*.scala"
        )
        return _job(step, fetch="ivy-cache", cleanup="classes src")

    return build


# ---------------------------------------------------------------------------------------------
# Django and pytest (their own venv)


PY2 = f"{TOOLS2}/venv/bin/python"


def _django_project(d: Path, models: str) -> None:
    _w(
        d / "manage.py",
        "import os, sys\nos.environ.setdefault('DJANGO_SETTINGS_MODULE', 'site_conf.settings')\nfrom django.core.management import execute_from_command_line\nexecute_from_command_line(sys.argv)\n",
    )
    _w(d / "site_conf" / "__init__.py", "")
    _w(
        d / "site_conf" / "settings.py",
        "SECRET_KEY = 'fixture-only'\nDEBUG = False\nALLOWED_HOSTS = ['*']\nUSE_TZ = True\n"
        "INSTALLED_APPS = ['django.contrib.auth', 'django.contrib.contenttypes', 'django.contrib.sessions', 'django.contrib.admin', 'django.contrib.messages', 'django.contrib.staticfiles', 'shop']\n"
        "STATIC_URL = 'static/'\nSTATIC_ROOT = 'staticfiles'\n"
        "MIDDLEWARE = ['django.contrib.sessions.middleware.SessionMiddleware', 'django.contrib.auth.middleware.AuthenticationMiddleware', 'django.contrib.messages.middleware.MessageMiddleware']\nROOT_URLCONF = 'site_conf.urls'\n"
        "DATABASES = {'default': {'ENGINE': 'django.db.backends.sqlite3', 'NAME': 'db.sqlite3'}}\n"
        "TEMPLATES = [{'BACKEND': 'django.template.backends.django.DjangoTemplates', 'APP_DIRS': True, 'OPTIONS': {'context_processors': ['django.contrib.auth.context_processors.auth', 'django.contrib.messages.context_processors.messages', 'django.template.context_processors.request']}}]\n"
        "DEFAULT_AUTO_FIELD = 'django.db.models.BigAutoField'\n",
    )
    _w(d / "site_conf" / "urls.py", "urlpatterns = []\n")
    _w(d / "shop" / "__init__.py", "")
    _w(d / "shop" / "models.py", models)
    _w(d / "shop" / "pricing.py", "def scale(x, k):\n    return x * k\n")
    _w(d / "shop" / "tests" / "__init__.py", "")


def django_tests(files: int, per: int, bad: tuple[int, int]) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        _django_project(
            d,
            "from django.db import models\n\n\nclass Product(models.Model):\n    name = models.CharField(max_length=40)\n    price = models.IntegerField()\n",
        )
        for f in range(files):
            body = [
                "from django.test import SimpleTestCase",
                "",
                "from shop.pricing import scale",
                "",
                "",
                f"class PricingTests{f:02d}(SimpleTestCase):",
            ]
            for k in range(per):
                factor = rng.randint(2, 9)
                want = k * factor + (1 if (f, k) == bad else 0)
                body += [
                    f"    def test_scale_{k:02d}(self):",
                    f"        self.assertEqual(scale({k}, {factor}), {want})",
                    "",
                ]
            _w(d / "shop" / "tests" / f"test_pricing_{f:02d}.py", "\n".join(body))
        step = _run_step(f"{PY2} -W default manage.py test -v 2 --noinput shop")
        return _job(step, fetch="pip-wheels")

    return build


def django_system_check(files: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        models = (
            "from django.db import models\n\n\n"
            "class Product(models.Model):\n    name = models.CharField(max_length=40)\n    price = models.IntegerField()\n\n\n"
            "class Order(models.Model):\n    product = models.ForeignKey(Product, on_delete=models.CASCADE)\n"
            "    customer = models.ForeignKey('Customer', on_delete=models.CASCADE)\n"
        )
        _django_project(d, models)
        for f in range(files):
            _w(
                d / "shop" / "tests" / f"test_pricing_{f:02d}.py",
                "from django.test import SimpleTestCase\n\n\nclass T(SimpleTestCase):\n    def test_ok(self):\n        self.assertTrue(True)\n",
            )
        step = f"{PY2} -m pip list -v\n{PY2} manage.py collectstatic --noinput -v 2\n" + _run_step(
            f"{PY2} manage.py test -v 2 --noinput shop"
        )
        return _job(step, fetch="pip-wheels", cleanup="shop site_conf")

    return build


def pytest_ra(files: int, per: int, bad: list[tuple[int, int]]) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        _w(d / "acme" / "__init__.py", "def scale(x, k):\n    return x * k\n")
        for f in range(files):
            body = ["import pytest", "", "from acme import scale", ""]
            for k in range(per):
                factor = rng.randint(2, 9)
                want = k * factor + (1 if (f, k) in bad else 0)
                roll = rng.random()
                if roll < 0.08:
                    body.append(
                        f'@pytest.mark.skip(reason="backend {f}-{k} not configured on this runner")'
                    )
                elif roll < 0.11:
                    body.append(f'@pytest.mark.xfail(reason="rounding issue #{f * 100 + k}")')
                    want += 1
                body += [
                    f"def test_scale_{k:02d}():",
                    f"    assert scale({k}, {factor}) == {want}",
                    "",
                ]
            _w(d / "tests" / f"test_mod{f:03d}.py", "\n".join(body))
        step = _run_step(f"{PY2} -m pytest -ra -p no:cacheprovider tests")
        return _job(step, fetch="pip-wheels")

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
                Needle(
                    r"escript: exception error: an error occurred when evaluating an arithmetic expression"
                ),
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
            [
                Needle(
                    r"\*\* \(CompileError\) lib/acme/mod231\.ex:\d+: undefined function normalise_row/1"
                )
            ],
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
            [
                Needle(r"^\s*FAILED\s+\d+/\d+\s+acme-scale-0611"),
                Needle(r"^\s*FAILED\s+acme-scale-0611$"),
            ],
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
            [
                Needle(r"^not ok - Test_scale_0433\s*$"),
                Needle(r"Test_scale_0433 line 1: Expected \d+ but got \d+"),
            ],
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
    s.append(
        Scenario(
            "haskell-ghc-type-mismatch",
            "haskell",
            "ghc --make",
            "ghc --make -Wall -j1 -isrc app/Main.hs",
            "src/Mod083.hs: name returns a String where its signature says Int (one of 120 modules; -Wall warnings)",
            [
                Needle(r"src/Mod083\.hs:\d+:\d+: error:"),
                Needle(r"Couldn't match expected type .Int. with actual type .\[Char\]."),
            ],
            ghc_make(
                120,
                83,
                'total :: [Int] -> Int\ntotal xs = sum (map scale xs)\n\nname :: Int -> Int\nname x = "n" ++ show x',
            ),
            version_cmd="ghc --version",
        )
    )
    s.append(
        Scenario(
            "haskell-ghc-not-in-scope",
            "haskell",
            "ghc --make",
            "ghc --make -Wall -j1 -isrc app/Main.hs",
            "src/Mod171.hs: total calls normaliseRow, which is not defined (one of 220 modules)",
            [
                Needle(r"src/Mod171\.hs:\d+:\d+: error:"),
                Needle(r"Variable not in scope: normaliseRow"),
            ],
            ghc_make(220, 171, "total :: [Int] -> Int\ntotal xs = sum (map normaliseRow xs)"),
            version_cmd="ghc --version",
        )
    )
    s.append(
        Scenario(
            "haskell-runtime-head",
            "haskell",
            "ghc + a compiled program",
            "ghc -O0 -o report Report.hs && ./report",
            "rows.tsv: row 1410 has no tags, so `head tags` fails (of 1,600 logged rows)",
            [Needle(r"report: Prelude\.head: empty list")],
            ghc_runtime_head(1600, 1410),
            version_cmd="ghc --version",
        )
    )
    s.append(
        Scenario(
            "ocaml-dune-type-error",
            "ocaml",
            "dune build",
            "dune build --display short --profile dev",
            "src/mod142.ml: name returns a string where its annotation says int (one of 200 modules; warnings on)",
            [
                Needle(r'File "src/mod142\.ml", line \d+, characters \d+-\d+:'),
                Needle(
                    r"Error: This expression has type string but an expression was expected of type"
                ),
            ],
            dune_build(200, 142),
            version_cmd='echo "dune $(dune --version), $(ocaml -version)"',
        )
    )
    s.append(
        Scenario(
            "ocaml-runtime-not-found",
            "ocaml",
            "dune + OCaml program",
            "./_build/default/bin/report.exe (OCAMLRUNPARAM=b)",
            "rows.csv: row 1280 has region central, absent from the rates list, so List.assoc raises Not_found (of 1,500 logged rows)",
            [Needle(r"Fatal error: exception Not_found")],
            ocaml_not_found(1500, 1280),
            version_cmd="ocaml -version",
        )
    )
    s.append(
        Scenario(
            "r-testthat-failure",
            "r",
            "testthat",
            "Rscript -e 'testthat::test_dir(\"tests/testthat\", reporter = location + check)'",
            "tests/testthat/test-mod23.R: one of 1,000 expectations wants the product + 1",
            [Needle(r"Failure \('test-mod23\.R:\d+'\): scale 17 by \d+")],
            r_testthat(40, 25, (23, 17)),
            version_cmd="R --version | head -n 1",
        )
    )
    s.append(
        Scenario(
            "r-cmd-install-parse-error",
            "r",
            "R CMD INSTALL",
            "R CMD INSTALL --debug -l rlib acme",
            "acme/R/mod918.R: `y <- x * * k`, a doubled operator (one of 1,200 files)",
            [Needle(r"mod918\.R:\d+:\d+: unexpected '\*'")],
            r_cmd_install(1200, 918),
            version_cmd="R --version | head -n 1",
        )
    )
    s.append(
        Scenario(
            "r-rscript-object-not-found",
            "r",
            "Rscript",
            "Rscript --verbose report.R",
            "report.R: row 700 has region central, whose branch uses the undefined rate_fallback (of 900 logged rows)",
            [Needle(r"Error in report_row\(rows\[i, \]\) : object 'rate_fallback' not found")],
            rscript_error(900, 700),
            version_cmd="R --version | head -n 1",
        )
    )
    s.append(
        Scenario(
            "lua-luac-syntax",
            "lua",
            "luac -p -l",
            "luac5.4 -p -l src/*.lua (one file at a time)",
            "src/mod_061.lua: `local y x * k` is missing its `=` (one of 90 files; bytecode listings)",
            [Needle(r"luac5\.4: src/mod_061\.lua:\d+: .*")],
            luac_check(90, 61),
            version_cmd="lua5.4 -v",
        )
    )
    s.append(
        Scenario(
            "lua-tap-assert",
            "lua",
            "lua (TAP runner)",
            "lua5.4 test/run.lua",
            "test/run.lua: scale_1187 expects the product + 1 (one of 1,500 tests)",
            [
                Needle(r"^not ok 1188 - scale_1187$"),
                Needle(r"^# test/run\.lua:\d+: scale\(\d+, \d+\): expected"),
            ],
            lua_tap(1500, 1187),
            version_cmd="lua5.4 -v",
        )
    )
    s.append(
        Scenario(
            "tcl-tcltest-failure",
            "tcl",
            "tcltest",
            "tclsh tests/acme.test (-verbose pass skip error)",
            "tests/acme.test: acme-6.42 expects the product + 1 (one of 1,200 tests)",
            [Needle(r"^==== acme-6\.42 scale \d+ by \d+ FAILED$")],
            tcltest_suite(1200, 642),
            version_cmd="echo 'puts \"Tcl [info patchlevel]\"' | tclsh",
        )
    )
    s.append(
        Scenario(
            "tcl-invalid-command",
            "tcl",
            "tclsh",
            "tclsh report.tcl",
            "report.tcl: row 1133 calls acme::normalise, which is not defined (of 1,400 logged rows)",
            [Needle(r'invalid command name "acme::normalise"')],
            tcl_invalid_command(1400, 1133),
            version_cmd="echo 'puts \"Tcl [info patchlevel]\"' | tclsh",
        )
    )
    s.append(
        Scenario(
            "fortran-make-implicit",
            "fortran",
            "gfortran + make",
            "make -k -j1 all",
            "src/mod_097.f90: uses the undeclared variable offset under implicit none (one of 160 modules; -Wall -Wextra)",
            [
                Needle(r"^src/mod_097\.f90:\d+:\d+:$"),
                Needle(r"Error: Symbol .offset. at \(1\) has no IMPLICIT type"),
            ],
            gfortran_make(160, 97),
            version_cmd="gfortran --version | head -n 1",
        )
    )
    s.append(
        Scenario(
            "fortran-runtime-bounds",
            "fortran",
            "gfortran -fcheck=bounds",
            "./report",
            "src/report.f90: row 1350 indexes weights(11) of 10 (of 1,600 logged rows)",
            [
                Needle(r"At line \d+ of file src/report\.f90"),
                Needle(
                    r"Fortran runtime error: Index '11' of dimension 1 of array 'weights' above upper bound of 10"
                ),
            ],
            gfortran_bounds(1600, 1350),
            version_cmd="gfortran --version | head -n 1",
        )
    )
    s.append(
        Scenario(
            "pascal-fpc-identifier",
            "pascal",
            "fpc",
            "fpc -vewnhi -l -Fusrc src/acme.pas",
            "src/u347.pas: Scale347 multiplies by the undeclared Offset (one of 420 units; unused-variable hints)",
            [Needle(r'u347\.pas\(\d+,\d+\) Error: Identifier not found "Offset"')],
            fpc_units(420, 347),
            version_cmd='echo "Free Pascal $(fpc -iV)"',
        )
    )
    s.append(
        Scenario(
            "scala-scalac-type-mismatch",
            "scala",
            "scalac",
            "scalac -deprecation -feature -Xlint -d classes src/*.scala",
            "src/Mod433.scala: name returns a String where its signature says Int (one of 600 files; a `wc -l` of the sources first)",
            [
                Needle(r"src/Mod433\.scala:\d+: error: type mismatch;"),
                Needle(r"^\s*found\s+: String$"),
            ],
            scalac_project(600, 433, verbose=False),
            version_cmd="scalac -version",
        )
    )
    s.append(
        Scenario(
            "scala-scalac-verbose",
            "scala",
            "scalac -verbose",
            "scalac -verbose -deprecation -feature -Xlint -d classes src/*.scala",
            "src/Mod021.scala: name returns a String where its signature says Int (one of 60 files; -verbose)",
            [
                Needle(r"src/Mod021\.scala:\d+: error: type mismatch;"),
                Needle(r"^\s*found\s+: String$"),
            ],
            scalac_project(60, 21, verbose=True),
            version_cmd="scalac -version",
        )
    )
    s.append(
        Scenario(
            "django-test-failure",
            "django",
            "manage.py test",
            "python -W default manage.py test -v 2 --noinput shop",
            "shop/tests/test_pricing_19.py: test_scale_23 expects the product + 1 (one of 1,200 tests)",
            [
                Needle(r"^FAIL: test_scale_23 \(shop\.tests\.test_pricing_19\.PricingTests19"),
                Needle(r"^AssertionError: \d+ != \d+$"),
            ],
            django_tests(40, 30, (19, 23)),
            version_cmd=f"{PY2} -m django --version | sed 's/^/Django /'",
        )
    )
    s.append(
        Scenario(
            "django-system-check",
            "django",
            "manage.py check",
            "python manage.py collectstatic -v 2 && python manage.py test -v 2 --noinput shop",
            "shop/models.py: Order.customer is a ForeignKey to 'Customer', a model that does not exist",
            [Needle(r"shop\.Order\.customer: \(fields\.E300\)")],
            django_system_check(20),
            version_cmd=f"{PY2} -m django --version | sed 's/^/Django /'",
        )
    )
    s.append(
        Scenario(
            "python-pytest-ra-summary",
            "python",
            "pytest -ra",
            "pytest -ra -p no:cacheprovider tests",
            "tests/test_mod041.py::test_scale_12 and tests/test_mod187.py::test_scale_03 expect the product + 1 (of 5,000 tests, about 8% skipped and 3% xfail, each with its own reason)",
            [
                Needle(r"^FAILED tests/test_mod041\.py::test_scale_12 "),
                Needle(r"^FAILED tests/test_mod187\.py::test_scale_03 "),
            ],
            pytest_ra(200, 25, [(41, 12), (187, 3)]),
            version_cmd=f"{PY2} -m pytest --version",
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


def main(argv: list[str] | None = None) -> int:
    return g.run_batch(
        argv, doc=__doc__, cases=scenarios(), prefix=PREFIX, batch=2, setup=ensure_tools
    )


if __name__ == "__main__":
    sys.exit(main())
