"""Generate batch 4 of the fresh-logs held-out set: ecosystems batches 1 to 3 do not have.

Same method as `generate.py` (batch 1) and `generate3.py` (batch 3), whose job pieces, labelling
and writing this script reuses: every case is a small fixture project written into a temporary
folder with one injected fault (said per case), built, checked or run by a real local tool with
verbose flags and CI noise (`set -x` traces, tool versions, a cache download retried against a
closed port, warnings, progress, in some a `tar -cv` listing before or after the fault). stdout
and stderr are merged. The labels are decided from the injected fault alone: a regular
expression per needle, written with the fault, selects the log line; nothing here imports or
runs the package.

Batch 4 covers: C# with mono (mcs compile error, a NullReferenceException at run time), Ada
(gnatmake compile error, a CONSTRAINT_ERROR at run time), D (gdc compile error, an
ArrayIndexError at run time), COBOL (GnuCOBOL's cobc), Nim, Racket's `raco test`, GNU Octave,
Ruby's RSpec and RuboCop, Python's flake8 and pylint, ESLint, Groovy, Clojure and Ansible
(`ansible-playbook -c local`).

Tools (Debian bookworm packages, `apt-get install -y --no-install-recommends mono-mcs
mono-runtime gnat gdc gnucobol nim racket octave ruby-rspec rubocop groovy clojure`; flake8,
pylint and ansible-core from PyPI and eslint@8 from npm, installed by this script into a venv
and a node folder under `FRESH_LOGS_TOOLS4`, default /tmp/fresh_tools4, never the project's
venv). Versions are written to every case's `tool_version`.

Run (from the project root; a few minutes):

    python benchmarks/fresh_logs/generate4.py            # every case: batch4/{logs/,cases.jsonl}
    python benchmarks/fresh_logs/generate4.py --only ID  # some cases (their rows are replaced)
"""

# The fixture projects' sources are written inline: some of their lines are longer than ours.
# ruff: noqa: E501

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate as g  # batch 1's job pieces and writer (a script in this folder)

HERE = Path(__file__).resolve().parent / "batch4"
PREFIX = "fresh4/"
TOOLS = Path(os.environ.get("FRESH_LOGS_TOOLS4", "/tmp/fresh_tools4"))

# batch 1's writer, pointed at batch 4's folder (and its PATH at batch 4's venv and node tools)
g.HERE = HERE
g.LOGS = HERE / "logs"
g.CASES = HERE / "cases.jsonl"
g.GENERATED = "2026-12-07"
g.BUILD_ROOT = Path(os.environ.get("FRESH_LOGS_BUILD4", "/tmp/fresh_logs_build4"))
g.TOOLS = TOOLS

Needle = g.Needle
Scenario = g.Scenario
_w = g._w
_job = g._job
_run_step = g._run_step

Build = Callable[[Path, random.Random], str]

WORDS = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta", "lambda", "zeta"]
REGIONS = ["north", "south", "east", "west"]

UPLOAD = """\
echo "--- uploading test reports and logs ---"
for f in {files}; do
  if curl -sS --max-time 2 -T "$f" http://127.0.0.1:9/artifacts/"$(basename "$f")"; then echo "uploaded $f"; else echo "upload of $f skipped (artifact store unreachable)"; fi
done
"""


# ---------------------------------------------------------------------------------------------
# C# with mono


def _cs_module(i: int, rng: random.Random, *, bad: bool) -> str:
    k = rng.randint(2, 97)
    lines = [
        "using System;",
        "using System.Collections.Generic;",
        "using System.Linq;",
        "",
        "namespace Acme.Billing",
        "{",
        f"    public static class Mod{i:03d}",
        "    {",
        "        public static int Score(int[] values)",
        "        {",
    ]
    if rng.random() < 0.45:
        lines.append("            int scratch = values.Length * 2;")
    lines += [
        "            int total = 0;",
        "            foreach (var v in values)",
        f"                total += v * {k};",
        "            return total + offset;" if bad else "            return total;",
        "        }",
        "",
        "        public static string Describe(IEnumerable<int> values)",
        "        {",
    ]
    if rng.random() < 0.3:
        lines += [
            '            try { return string.Join(",", values); }',
            '            catch (Exception e) { return ""; }',
        ]
    else:
        lines.append(f'            return "mod{i:03d}:" + values.Sum();')
    lines += ["        }", "    }", "}", ""]
    return "\n".join(lines)


def mcs_compile(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            _w(d / "src" / "Billing" / f"Mod{i:03d}.cs", _cs_module(i, rng, bad=i == bad))
        for i in range(n // 3):
            _w(
                d / "src" / "Core" / f"Util{i:03d}.cs",
                _cs_module(i, rng, bad=False)
                .replace("Acme.Billing", "Acme.Core")
                .replace(f"Mod{i:03d}", f"Util{i:03d}"),
            )
        _w(
            d / "src" / "App" / "Program.cs",
            "using System;\nclass Program { static void Main() { Console.WriteLine(Acme.Billing.Mod000.Score(new[] {1, 2})); } }\n",
        )
        step = (
            "mono --version | head -n 1\nmcs --version\n"
            'echo "--- restoring sources from the bundle ---"\n'
            "tar -cvf /tmp/fresh_logs_src_$$.tar src\nrm -f /tmp/fresh_logs_src_$$.tar\n"
            "mkdir -p bin\n"
            "for asm in Core Billing App; do\n"
            '  echo "CSC  Acme.$asm"\n'
            "  case $asm in\n"
            "    App) args='-target:exe -r:bin/Acme.Billing.dll -r:bin/Acme.Core.dll' ;;\n"
            "    *) args='-target:library' ;;\n"
            "  esac\n"
            '  mcs -debug -warn:4 -optimize+ -sdk:4.5 $args -out:bin/Acme.$asm.$( [ $asm = App ] && echo exe || echo dll ) -recurse:"src/$asm/*.cs" || { status=$?; echo "Acme.$asm: build failed"; break; }\n'
            "done\n"
            "ls -la bin\n"
        )
        return _job(step, fetch="nuget-packages", cleanup="bin src")

    return build


def mono_nullref(rows: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        _w(
            d / "src" / "Report.cs",
            textwrap.dedent(
                f"""\
                using System;
                using System.Collections.Generic;

                namespace Acme.Reports
                {{
                    public class Tag {{ public string Name; public int Weight; }}
                    public class Row {{ public int Id; public string Region; public Tag[] Tags; }}

                    public static class Scoring
                    {{
                        public static int TagWeight(Row row)
                        {{
                            int total = 0;
                            for (int k = 0; k < row.Tags.Length; k++)
                                total += row.Tags[k].Weight * row.Tags[k].Name.Length;
                            return total;
                        }}
                    }}

                    public static class Program
                    {{
                        static readonly string[] Regions = {{ "north", "south", "east", "west" }};

                        public static Row Load(int id)
                        {{
                            var tags = new[] {{ new Tag {{ Name = "core", Weight = 3 }}, new Tag {{ Name = "edge", Weight = id % 7 }} }};
                            return new Row {{ Id = id, Region = Regions[id % 4], Tags = id == {bad} ? null : tags }};
                        }}

                        public static void Main(string[] args)
                        {{
                            long grand = 0;
                            Console.WriteLine("[info] acme report starting, {rows} rows");
                            for (int r = 0; r < {rows}; r++)
                            {{
                                var row = Load(r);
                                int w = Scoring.TagWeight(row);
                                grand += w;
                                Console.WriteLine("[info] row {{0}} region={{1}} weight={{2}} running={{3}}", row.Id, row.Region, w, grand);
                                if (r % 250 == 0) Console.Error.WriteLine("[warn] row {{0}}: slow source, retrying read", r);
                            }}
                            Console.WriteLine("[info] done, grand total {{0}}", grand);
                        }}
                    }}
                }}
                """
            ),
        )
        step = (
            "mono --version | head -n 1\nmcs --version\n"
            "mcs -debug -warn:4 -out:report.exe src/Report.cs\n"
            "mono --debug report.exe || status=$?\n"
        )
        step += UPLOAD.format(files="report.exe report.exe.mdb src/Report.cs")
        return _job(step, fetch="report-inputs", cleanup="src report.exe")

    return build


# ---------------------------------------------------------------------------------------------
# Ada with GNAT


def gnat_compile(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        withs = []
        calls = []
        for i in range(n):
            k = rng.randint(2, 97)
            _w(
                d / f"mod_{i:03d}.ads",
                f"package Mod_{i:03d} is\n   function Score (X : Integer) return Integer;\n   function Describe (X : Integer) return String;\nend Mod_{i:03d};\n",
            )
            unused = "      Unused : Integer := 3;\n" if rng.random() < 0.4 else ""
            with_io = "with Ada.Text_IO;\n" if rng.random() < 0.4 else ""
            ret = f"X * {k} + Offset" if i == bad else f"X * {k}"
            _w(
                d / f"mod_{i:03d}.adb",
                f"{with_io}package body Mod_{i:03d} is\n"
                f"   function Score (X : Integer) return Integer is\n{unused}"
                f"   begin\n      return {ret};\n   end Score;\n\n"
                f"   function Describe (X : Integer) return String is\n"
                f'   begin\n      return "mod_{i:03d}:" & Integer\'Image (Score (X));\n   end Describe;\n'
                f"end Mod_{i:03d};\n",
            )
            withs.append(f"with Mod_{i:03d};")
            calls.append(f"   Total := Total + Mod_{i:03d}.Score ({i});")
        _w(
            d / "main.adb",
            "with Ada.Text_IO;\n"
            + "\n".join(withs)
            + "\nprocedure Main is\n   Total : Integer := 0;\nbegin\n"
            + "\n".join(calls)
            + "\n   Ada.Text_IO.Put_Line (Integer'Image (Total));\nend Main;\n",
        )
        step = (
            "gnatmake --version | head -n 1\ngcc --version | head -n 1\n"
            "gnatmake -k -v -j1 main.adb -cargs -g -O1 -gnatwa -gnatwl || status=$?\n"
        )
        return _job(step, fetch="alire-cache", cleanup="*.ads *.adb")

    return build


def gnat_constraint_error(rows: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        _w(
            d / "report.adb",
            textwrap.dedent(
                f"""\
                with Ada.Text_IO; use Ada.Text_IO;

                procedure Report is
                   type Weight_Table is array (1 .. 10) of Integer;
                   Weights : constant Weight_Table := (3, 1, 4, 1, 5, 9, 2, 6, 5, 3);
                   Grand   : Long_Integer := 0;
                   Scratch : Integer := 0;

                   function Bucket_Of (Row : Integer) return Integer is
                   begin
                      if Row = {bad} then
                         return 11;
                      end if;
                      return Row mod 10 + 1;
                   end Bucket_Of;

                   function Weight_Of (Row : Integer) return Integer is
                   begin
                      return Weights (Bucket_Of (Row));
                   end Weight_Of;
                begin
                   Put_Line ("[info] acme report starting, {rows} rows");
                   for R in 0 .. {rows - 1} loop
                      declare
                         W : constant Integer := Weight_Of (R);
                      begin
                         Grand := Grand + Long_Integer (W);
                         Put_Line ("[info] row" & Integer'Image (R) & " region=" & (if R mod 2 = 0 then "north" else "south")
                                   & " weight=" & Integer'Image (W) & " running=" & Long_Integer'Image (Grand));
                      end;
                   end loop;
                   Put_Line ("[info] done");
                end Report;
                """
            ),
        )
        step = (
            "gnatmake --version | head -n 1\n"
            "gnatmake -v -g -gnata -gnatwa report.adb\n"
            "./report || status=$?\n"
        )
        step += UPLOAD.format(files="report report.adb")
        return _job(step, fetch="report-inputs", cleanup="report.adb report.ali report")

    return build


# ---------------------------------------------------------------------------------------------
# D with gdc


def gdc_compile(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            k = rng.randint(2, 97)
            ret = f"total * {k} + offset" if i == bad else f"total * {k}"
            dep = (
                f"\ndeprecated int legacy{i:03d}(int x) {{ return x; }}\nint useLegacy{i:03d}() {{ return legacy{i:03d}(1); }}\n"
                if rng.random() < 0.3
                else ""
            )
            _w(
                d / "src" / "acme" / f"mod{i:03d}.d",
                f"module acme.mod{i:03d};\n\nimport std.algorithm : sum, map;\nimport std.conv : to;\nimport std.array : join;\n\n"
                f"int score{i:03d}(const int[] values)\n{{\n    int total = values.sum;\n    return {ret};\n}}\n\n"
                f'string describe{i:03d}(const int[] values)\n{{\n    return "mod{i:03d}: " ~ values.map!(v => v.to!string).join(",");\n}}\n{dep}',
            )
        srcs = " ".join(f"src/acme/mod{i:03d}.d" for i in range(n))
        _w(
            d / "Makefile",
            "DC = gdc\nDFLAGS = -O1 -g -Wall -Wdeprecated -fversion=AcmeCI -Isrc\n"
            f"SRCS = {srcs}\nOBJS = $(patsubst src/acme/%.d,obj/%.o,$(SRCS))\n\n"
            'all: libacme.a\n\nobj/%.o: src/acme/%.d\n\t@mkdir -p obj\n\t@echo "  GDC     $@"\n\t$(DC) $(DFLAGS) -c $< -o $@\n\n'
            "libacme.a: $(OBJS)\n\tar rcs $@ $^\n",
        )
        step = (
            "gdc --version | head -n 1\nmake --version | head -n 1\nmake -k -j2 all || status=$?\n"
        )
        return _job(step, fetch="dub-packages", cleanup="obj src Makefile")

    return build


def gdc_array_index(rows: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        _w(
            d / "src" / "report.d",
            textwrap.dedent(
                f"""\
                module report;

                import std.stdio;

                immutable int[] weights = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3];
                immutable string[] regions = ["north", "south", "east", "west"];

                int bucketOf(int row)
                {{
                    return row == {bad} ? 10 : row % 10;
                }}

                int weightOf(int row)
                {{
                    return weights[bucketOf(row)];
                }}

                void main()
                {{
                    long grand = 0;
                    writefln("[info] acme report starting, %d rows", {rows});
                    foreach (r; 0 .. {rows})
                    {{
                        immutable w = weightOf(r);
                        grand += w;
                        writefln("[info] row %d region=%s weight=%d running=%d", r, regions[r % 4], w, grand);
                        if (r % 400 == 0)
                            stderr.writefln("[warn] row %d: slow source, retrying read", r);
                    }}
                    writeln("[info] done");
                }}
                """
            ),
        )
        step = (
            "gdc --version | head -n 1\n"
            "gdc -v -g -O0 -Wall -o report src/report.d\n"
            "./report || status=$?\n"
        )
        step += UPLOAD.format(files="report src/report.d")
        return _job(step, fetch="report-inputs", cleanup="src report")

    return build


# ---------------------------------------------------------------------------------------------
# COBOL with GnuCOBOL


def cobc_compile(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            k = rng.randint(2, 97)
            lines = [
                "IDENTIFICATION DIVISION.",
                f"PROGRAM-ID. PROG{i:03d}.",
                "DATA DIVISION.",
                "WORKING-STORAGE SECTION.",
                "01 WS-TOTAL        PIC 9(6) VALUE 0.",
                f"01 WS-COUNT        PIC 9(4) VALUE {k}.",
            ]
            label = rng.random() < 0.4
            if label:
                lines.append("01 WS-LABEL        PIC X(4).")
            lines += [
                "PROCEDURE DIVISION.",
                "MAIN-PARA.",
                "    MOVE 0 TO WS-TOTAL",
                "    PERFORM VARYING WS-COUNT FROM 1 BY 1 UNTIL WS-COUNT > 9",
                "        ADD WS-COUNT TO WS-TOTAL",
                "    END-PERFORM",
            ]
            if label:
                lines.append(f'    MOVE "PROG{i:03d}-TOTAL" TO WS-LABEL')
            if rng.random() < 0.3:
                lines.append('    IF WS-TOTAL = 0 NEXT SENTENCE ELSE DISPLAY "NONZERO".')
            lines += [
                "    ADD WS-OFFSET TO WS-TOTAL." if i == bad else f"    ADD {k} TO WS-TOTAL.",
            ]
            if rng.random() < 0.3:
                lines.append(f"    COMPUTE WS-TOTAL = WS-TOTAL / {k}.")
            lines += [f'    DISPLAY "PROG{i:03d} TOTAL " WS-TOTAL.', "    GOBACK."]
            _w(d / "src" / f"prog{i:03d}.cob", "".join(" " * 7 + ln + "\n" for ln in lines))
        step = (
            "cobc --version | head -n 1\n"
            "mkdir -p obj\n"
            "for f in src/*.cob; do\n"
            '  echo "COBC $f"\n'
            '  cobc -v -c -Wall -std=default -o "obj/$(basename "$f" .cob).o" "$f" || status=$?\n'
            "done\n"
        )
        return _job(step, fetch="cobol-copybooks", cleanup="obj src")

    return build


# ---------------------------------------------------------------------------------------------
# Nim


def nim_compile(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        imports = []
        for i in range(n):
            k = rng.randint(2, 97)
            unused = "  let unused = x * 2\n" if rng.random() < 0.4 else ""
            body = f"x * {k} + offset" if i == bad else f"x * {k}"
            _w(
                d / "src" / f"mod_{i:03d}.nim",
                f"import std/[strutils, sequtils]\n\nproc score{i:03d}*(x: int): int =\n{unused}  result = {body}\n\n"
                f'proc describe{i:03d}*(xs: seq[int]): string =\n  "mod_{i:03d}: " & xs.mapIt($it).join(",")\n',
            )
            imports.append(f"import mod_{i:03d}")
        _w(d / "src" / "main.nim", "\n".join(imports) + "\n\necho score000(1)\n")
        _w(
            d / "tools" / "gen.nim",
            "import std/[strutils, sequtils, tables, json, os]\n\n"
            "var counts = initTable[string, int]()\n"
            'for f in walkFiles("src/*.nim"):\n  counts[f] = readFile(f).countLines\n'
            'echo %*{"files": counts.len, "lines": toSeq(counts.values).foldl(a + b, 0)}\n',
        )
        step = (
            "nim --version | head -n 1\n"
            "nim c --listCmd --hints:on -d:release --nimcache:build/gencache -o:build/gen tools/gen.nim\n"
            "./build/gen\n"
            "nim c --verbosity:2 --hints:on --warnings:on --nimcache:build/nimcache -d:release -o:build/acme src/main.nim || status=$?\n"
        )
        return _job(step, fetch="nimble-pkgs", cleanup="src build")

    return build


# ---------------------------------------------------------------------------------------------
# Racket


def raco_test(files: int, per: int, bad: tuple[int, int]) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for f in range(files):
            price = rng.randint(3, 40)
            lines = [
                "#lang racket/base",
                "(require rackunit)",
                "",
                f"(define (total n) (* n {price}))",
                "",
            ]
            for k in range(per):
                want = k * price + (1 if (f, k) == bad else 0)
                lines.append(
                    f'(test-case "pricing-{f:02d} total for {k} items"\n'
                    f'  (printf "checking pricing-{f:02d} total for ~a items~n" {k})\n'
                    f"  (check-equal? (total {k}) {want}))"
                )
            _w(d / "tests" / f"pricing-{f:02d}.rkt", "\n".join(lines) + "\n")
        step = "racket --version\nraco test --table tests || status=$?\n"
        return _job(step, fetch="raco-pkgs", cleanup="tests")

    return build


# ---------------------------------------------------------------------------------------------
# GNU Octave


def octave_index(rows: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        _w(
            d / "score_row.m",
            textwrap.dedent(
                """\
                function s = score_row (row, weights)
                  bucket = row(2);
                  s = sum (row(3:5) .* weights(bucket, :));
                end
                """
            ),
        )
        data = []
        for r in range(rows):
            bucket = 11 if r == bad else rng.randint(1, 10)
            data.append(
                f"{r},{bucket},{rng.randint(1, 99)},{rng.randint(1, 99)},{rng.randint(1, 99)}"
            )
        _w(d / "rows.csv", "\n".join(data) + "\n")
        _w(
            d / "run_report.m",
            textwrap.dedent(
                """\
                weights = reshape (mod ((1:30) * 7, 13), 10, 3);
                rows = csvread ("rows.csv");
                printf ("[info] loaded %d rows\\n", rows(end, 1) + 1);
                grand = 0;
                for r = 1:size (rows, 1)
                  s = score_row (rows(r, :), weights);
                  grand += s;
                  printf ("[info] row %d bucket=%d score=%d running=%d\\n", rows(r, 1), rows(r, 2), s, grand);
                  if mod (r, 300) == 0
                    warning ("acme:slow", "row %d: slow source, retrying read", r);
                  end
                end
                printf ("[info] done, grand total %d\\n", grand);
                """
            ),
        )
        step = "octave-cli --version | head -n 1\noctave-cli --no-gui --norc --verbose run_report.m || status=$?\n"
        step += UPLOAD.format(files="rows.csv")
        return _job(step, fetch="octave-forge", cleanup="rows.csv run_report.m score_row.m")

    return build


# ---------------------------------------------------------------------------------------------
# Ruby: RSpec and RuboCop


def rspec_suite(files: int, per: int, bad: tuple[int, int]) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for f in range(files):
            price = rng.randint(3, 40)
            _w(
                d / "lib" / "acme" / f"invoice_{f:02d}.rb",
                f"module Acme\n  module Invoice{f:02d}\n    def self.total(n)\n      n * {price}\n    end\n  end\nend\n",
            )
            lines = [
                f"require 'acme/invoice_{f:02d}'",
                "",
                f"RSpec.describe Acme::Invoice{f:02d} do",
            ]
            for k in range(per):
                want = k * price + (1 if (f, k) == bad else 0)
                lines += [
                    f"  it 'computes the total for {k} items' do",
                    f"    expect(Acme::Invoice{f:02d}.total({k})).to eq({want})",
                    "  end",
                ]
            if f % 7 == 3:
                lines += [
                    "  it 'handles refunds' do",
                    "    pending 'refunds are not implemented'",
                    "    expect(Acme::Invoice00.total(-1)).to eq(0)",
                    "  end",
                ]
            lines.append("end")
            _w(d / "spec" / f"invoice_{f:02d}_spec.rb", "\n".join(lines) + "\n")
        _w(d / ".rspec", "--require spec_helper\n")
        _w(
            d / "spec" / "spec_helper.rb",
            "$LOAD_PATH.unshift File.expand_path('../lib', __dir__)\nRSpec.configure { |c| c.warnings = true }\n",
        )
        step = (
            "ruby --version\nrspec --version\n"
            "rspec --format documentation --no-color --order defined || status=$?\n"
        )
        step += UPLOAD.format(files="spec/spec_helper.rb .rspec")
        return _job(step, fetch="bundler-gems", cleanup="lib spec")

    return build


def rubocop_project(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            lines = ["module Acme", f"  class Mod{i:03d}"]
            lines += [
                "    def initialize(values)",
                "      @values = values",
                "    end",
                "",
                "    def score",
                f'      label = "mod{i:03d}"'
                if rng.random() < 0.5
                else f"      label = 'mod{i:03d}'",
                f"      @values.map {{ |v| v * {rng.randint(2, 97)} }}.sum + label.size",
                "    end",
                "",
                "    def options",
            ]
            if i == bad:
                lines.append("      { retries: 3, timeout: 30, retries: 5 }")
            else:
                lines.append(f"      {{ retries: {rng.randint(1, 5)}, timeout: 30 }}")
            lines += ["    end", "  end", "end", ""]
            _w(d / "lib" / "acme" / f"mod_{i:03d}.rb", "\n".join(lines))
        _w(
            d / ".rubocop.yml",
            "AllCops:\n  NewCops: disable\n  TargetRubyVersion: 3.1\n  SuggestExtensions: false\n",
        )
        step = (
            "ruby --version\nrubocop --version\n"
            "rubocop --debug --cache false --extra-details --display-style-guide --fail-level warning lib || status=$?\n"
        )
        return _job(step, fetch="rubocop-cache", cleanup="lib .rubocop.yml")

    return build


# ---------------------------------------------------------------------------------------------
# Python: flake8 and pylint (from the batch's own venv)


def _py_module(i: int, rng: random.Random, fault: str | None) -> str:
    lines = ['"""Acme billing module."""', "import os", "import sys, json", ""]
    lines += [
        "",
        f"class Invoice{i:03d}:",
        "    def __init__(self, items):",
        "        self.items = items",
        "        self.total = 0",
        "",
        "    def compute(self):",
        "        for item in self.items:",
        f"            self.total += item['qty']*{rng.randint(2, 97)}   ",
        "        return self.total",
        "",
        "",
        f"def summarize_{i:03d}(items, verbose=False):",
        f"    inv = Invoice{i:03d}(items)",
    ]
    if rng.random() < 0.5:
        lines.append("    unused_scratch = len(items)")
    lines += [
        "    if verbose == True:",
        f"        print('summarize_{i:03d}: computing %d items, a long message for the log that runs past the limit' % len(items))",
    ]
    if fault == "flake8":
        lines.append("    return inv.compute() + offset")
    elif fault == "pylint":
        lines.append("    return inv.compute() + inv.totl")
    else:
        lines.append("    return inv.compute()")
    lines.append("")
    return "\n".join(lines)


def flake8_project(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            _w(
                d / "src" / "acme" / f"mod_{i:03d}.py",
                _py_module(i, rng, "flake8" if i == bad else None),
            )
        _w(d / "src" / "acme" / "__init__.py", "")
        step = (
            "python3 --version\nflake8 --version\n"
            "flake8 -v --max-line-length 100 --show-source --statistics --count src/ || status=$?\n"
        )
        return _job(step, fetch="pip-wheels", cleanup="src")

    return build


def pylint_project(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            _w(
                d / "src" / "acme" / f"mod_{i:03d}.py",
                _py_module(i, rng, "pylint" if i == bad else None),
            )
        _w(d / "src" / "acme" / "__init__.py", '"""Acme."""\n')
        step = (
            "pylint --version\n"
            "cd src && pylint --jobs=1 --reports=y --output-format=text acme || status=$?\ncd ..\n"
        )
        return _job(step, fetch="pip-wheels", cleanup="src")

    return build


# ---------------------------------------------------------------------------------------------
# ESLint


def eslint_project(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            lines = [f"import {{ helper{i % 5} }} from './helpers.js';", ""]
            lines.append(f"export function score{i:03d}(values) {{")
            lines.append("  let total = 0;")
            if rng.random() < 0.5:
                lines.append("  var scratch = values.length;")
            lines.append(f"  for (let v of values) total += v * {rng.randint(2, 97)};")
            if rng.random() < 0.5:
                lines.append(f"  if (values.length == 0) console.log('score{i:03d}: empty');")
            lines.append("  return total + offset;" if i == bad else "  return total;")
            lines += ["}", ""]
            _w(d / "src" / f"mod_{i:03d}.js", "\n".join(lines))
        _w(
            d / "src" / "helpers.js",
            "\n".join(f"export const helper{k} = (x) => x + {k};" for k in range(5)) + "\n",
        )
        _w(
            d / ".eslintrc.json",
            json.dumps(
                {
                    "root": True,
                    "extends": "eslint:recommended",
                    "env": {"es2022": True, "node": True},
                    "parserOptions": {"ecmaVersion": 2022, "sourceType": "module"},
                    "rules": {
                        "no-unused-vars": "warn",
                        "eqeqeq": "warn",
                        "no-console": "warn",
                        "no-var": "warn",
                        "prefer-const": "warn",
                    },
                },
                indent=2,
            ),
        )
        step = (
            "node --version\neslint --version\n"
            "DEBUG=eslint:cli-engine eslint --format stylish src/ || status=$?\n"
        )
        step += UPLOAD.format(files=".eslintrc.json")
        return _job(step, fetch="npm-cache", cleanup="src .eslintrc.json")

    return build


# ---------------------------------------------------------------------------------------------
# Groovy and Clojure (JVM run-time exceptions)


def groovy_numberformat(rows: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        data = []
        for r in range(rows):
            weight = "n/a" if r == bad else str(rng.randint(1, 40))
            data.append(
                f"{r};{rng.choice(WORDS)}_{r};{rng.choice(REGIONS)};{rng.randint(10, 999)};{weight}"
            )
        per = 8
        for part in range(0, rows, per):
            _w(
                d / "data" / f"part-{part // per:04d}.txt",
                "\n".join(data[part : part + per]) + "\n",
            )
        _w(
            d / "report.groovy",
            textwrap.dedent(
                """\
                class Row { int id; String name; String region; int total; String weight }

                int parseWeight(Row row) {
                    return Integer.parseInt(row.weight)
                }

                int score(Row row) {
                    return row.total * parseWeight(row)
                }

                long grand = 0
                def parts = new File('data').listFiles().sort { it.name }
                println "[info] reading ${parts.size()} parts from data/"
                def rows = parts.collectMany { it.readLines() }.collect { line ->
                    def f = line.split(';')
                    new Row(id: f[0] as int, name: f[1], region: f[2], total: f[3] as int, weight: f[4])
                }
                println "[info] loaded ${rows.size()} rows"
                rows.each { row ->
                    int s = score(row)
                    grand += s
                    println "[info] row ${row.id} ${row.name} region=${row.region} score=${s} running=${grand}"
                }
                println "[info] done, grand total ${grand}"
                """
            ),
        )
        step = "groovy --version\ngroovy report.groovy || status=$?\n"
        return _job(step, fetch="grape-cache", cleanup="data report.groovy")

    return build


def clojure_divide(rows: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        data = []
        for r in range(rows):
            count = 0 if r == bad else rng.randint(1, 40)
            data.append(
                f'{{:id {r} :name "{rng.choice(WORDS)}_{r}" :region :{rng.choice(REGIONS)} :total {rng.randint(10, 999)} :count {count}}}'
            )
        _w(d / "rows.edn", "[\n" + "\n".join(data) + "\n]\n")
        _w(
            d / "report.clj",
            textwrap.dedent(
                """\
                (ns acme.report
                  (:require [clojure.edn :as edn]))

                (defn average [row]
                  (quot (:total row) (:count row)))

                (defn report-row [row]
                  (let [avg (average row)]
                    (println (format "[info] row %d %s region=%s average=%d"
                                     (:id row) (:name row) (name (:region row)) avg))
                    avg))

                (let [rows (edn/read-string (slurp "rows.edn"))]
                  (println (str "[info] loaded " (count rows) " rows"))
                  (println (str "[info] done, sum=" (reduce + (map report-row rows)))))
                """
            ),
        )
        step = (
            "java -version\nclojure -e '(println (clojure-version))'\n"
            "clojure report.clj || status=$?\n"
            'if [ "$status" -ne 0 ]; then for f in /tmp/clojure-*.edn; do [ -f "$f" ] && echo "--- $f ---" && cat "$f" && rm -f "$f"; done; fi\n'
        )
        step += UPLOAD.format(files="rows.edn")
        return _job(step, fetch="m2-repository", cleanup="rows.edn report.clj")

    return build


# ---------------------------------------------------------------------------------------------
# Ansible


def ansible_playbook(dirs: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        items = [f"{rng.choice(WORDS)}_{k:02d}" for k in range(dirs)]
        tasks = textwrap.dedent(
            f"""\
            - hosts: all
              gather_facts: true
              vars:
                app_root: "{{{{ playbook_dir }}}}/srv/acme"
                components: {json.dumps(items)}
              tasks:
                - name: create the component directories
                  ansible.builtin.file:
                    path: "{{{{ app_root }}}}/{{{{ item }}}}"
                    state: directory
                    mode: "0755"
                  loop: "{{{{ components }}}}"

                - name: write each component's settings
                  ansible.builtin.copy:
                    dest: "{{{{ app_root }}}}/{{{{ item }}}}/settings.ini"
                    content: |
                      [component]
                      name = {{{{ item }}}}
                      retries = 3
                  loop: "{{{{ components }}}}"

                - name: check that the agent is running
                  ansible.builtin.command: test -f /var/run/acme-agent.pid
                  changed_when: false
                  ignore_errors: true

                - name: record the build stamp
                  ansible.builtin.lineinfile:
                    path: "{{{{ app_root }}}}/BUILD"
                    line: "built on {{{{ ansible_hostname }}}}"
                    create: true

                - name: list the settings files
                  ansible.builtin.find:
                    paths: "{{{{ app_root }}}}"
                    patterns: "*.ini"
                    recurse: true
                  register: found

                - name: show the settings files
                  ansible.builtin.debug:
                    msg: "{{{{ found.files | map(attribute='path') | list }}}}"

                - name: read the release manifest
                  ansible.builtin.command: cat /etc/acme/release.conf
                  register: manifest
                  changed_when: false

                - name: render the service unit
                  ansible.builtin.copy:
                    dest: "{{{{ app_root }}}}/acme.service"
                    content: "{{{{ manifest.stdout }}}}"
            """
        )
        _w(d / "site.yml", tasks)
        _w(
            d / "ansible.cfg",
            "[defaults]\nnocows = True\nstdout_callback = default\nretry_files_enabled = False\n",
        )
        step = (
            "ansible-playbook --version\n"
            "ANSIBLE_NOCOLOR=1 ansible-playbook -i localhost, -c local -v site.yml || status=$?\n"
        )
        step += UPLOAD.format(files="site.yml ansible.cfg")
        return _job(step, fetch="galaxy-collections", cleanup="srv site.yml")

    return build


# ---------------------------------------------------------------------------------------------
# The cases


def scenarios() -> list[Scenario]:
    s: list[Scenario] = []
    s.append(
        Scenario(
            "csharp-mcs-undefined-name",
            "csharp",
            "mono mcs",
            "tar -cvf src.tar src && mcs -debug -warn:4 -optimize+ -target:library -recurse:'src/$asm/*.cs' per assembly (Core, Billing, App)",
            "src/Billing/Mod083.cs: Score returns total + offset, a name that does not exist (CS0103; one of 360 files, unused-variable warnings)",
            [
                Needle(
                    r"src/Billing/Mod083\.cs\(\d+,\d+\): error CS0103: The name `offset' does not exist"
                )
            ],
            mcs_compile(360, 83),
            version_cmd="mcs --version",
        )
    )
    s.append(
        Scenario(
            "csharp-mono-nullreference",
            "csharp",
            "mono",
            "mcs -debug -out:report.exe src/Report.cs && mono --debug report.exe",
            "src/Report.cs: row 2100 is loaded with Tags = null, so Scoring.TagWeight dereferences null (of 3,000 logged rows; upload step after)",
            [
                Needle(
                    r"System\.NullReferenceException: Object reference not set to an instance of an object"
                ),
                Needle(r"at Acme\.Reports\.Scoring\.TagWeight .*Report\.cs:\d+"),
            ],
            mono_nullref(3000, 2100),
            version_cmd="mono --version | head -n 1",
        )
    )
    s.append(
        Scenario(
            "ada-gnatmake-undefined",
            "ada",
            "gnatmake",
            "gnatmake -k -v -j1 main.adb -cargs -g -O1 -gnatwa -gnatwl",
            "mod_037.adb: Score returns X * k + Offset, an undefined name (one of 250 packages; unused with-clause warnings)",
            [Needle(r'mod_037\.adb:\d+:\d+: (error: )?"Offset" is undefined')],
            gnat_compile(250, 37),
            version_cmd="gnatmake --version | head -n 1",
        )
    )
    s.append(
        Scenario(
            "ada-constraint-error",
            "ada",
            "gnat run time",
            "gnatmake -v -g -gnata report.adb && ./report",
            "report.adb: Bucket_Of returns 11 for row 1500, outside Weight_Table's 1 .. 10 (of 2,200 logged rows; upload step after)",
            [Needle(r"raised CONSTRAINT_ERROR : report\.adb:\d+ index check failed")],
            gnat_constraint_error(2200, 1500),
            version_cmd="gnatmake --version | head -n 1",
        )
    )
    s.append(
        Scenario(
            "d-gdc-undefined-identifier",
            "d",
            "gdc",
            "make -k -j2 all (gdc -O1 -g -Wall -Wdeprecated -c per module)",
            "src/acme/mod021.d: score021 returns total * k + offset, an undefined identifier (one of 90 modules; deprecation warnings)",
            [Needle(r"src/acme/mod021\.d:\d+:\d+: error: undefined identifier .offset.")],
            gdc_compile(90, 21),
            version_cmd="gdc --version | head -n 1",
        )
    )
    s.append(
        Scenario(
            "d-array-index-error",
            "d",
            "gdc run time",
            "gdc -v -g -O0 -Wall -o report src/report.d && ./report",
            "src/report.d: bucketOf returns 10 for row 2600, past the 10-element weights array (of 3,400 logged rows; upload step after)",
            [
                Needle(
                    r"core\.exception\.ArrayIndexError@src/report\.d\(\d+\): index \[10\] is out of bounds"
                ),
                Needle(r"src/report\.d:\d+ int report\.weightOf\(int\)"),
            ],
            gdc_array_index(3400, 2600),
            version_cmd="gdc --version | head -n 1",
        )
    )
    s.append(
        Scenario(
            "cobol-cobc-undefined",
            "cobol",
            "GnuCOBOL cobc",
            'for f in src/*.cob; do cobc -v -c -Wall -std=default "$f"; done',
            "src/prog052.cob: ADD WS-OFFSET TO WS-TOTAL, a data item defined nowhere (one of 70 programs)",
            [Needle(r"src/prog052\.cob:\d+: error: 'WS-OFFSET' is not defined")],
            cobc_compile(70, 52),
            version_cmd="cobc --version | head -n 1",
        )
    )
    s.append(
        Scenario(
            "nim-undeclared-identifier",
            "nim",
            "nim c",
            "nim c --listCmd tools/gen.nim && nim c --verbosity:2 --hints:on --warnings:on -d:release src/main.nim",
            "src/mod_064.nim: score064 returns x * k + offset, an undeclared identifier (one of 100 modules; declared-but-not-used hints)",
            [Needle(r"mod_064\.nim\(\d+, \d+\) Error: undeclared identifier: 'offset'")],
            nim_compile(100, 64),
            version_cmd="nim --version | head -n 1",
        )
    )
    s.append(
        Scenario(
            "racket-raco-test-failure",
            "racket",
            "raco test",
            "raco test --table tests",
            "tests/pricing-11.rkt: the test for 19 items expects the product + 1 (one of 1,200 test cases in 40 files)",
            [
                Needle(r"^pricing-11 total for 19 items$"),
                Needle(r"location: .*pricing-11\.rkt:\d+:\d+"),
            ],
            raco_test(40, 30, (11, 19)),
            version_cmd="racket --version",
        )
    )
    s.append(
        Scenario(
            "octave-index-out-of-bound",
            "octave",
            "octave-cli",
            "octave-cli --no-gui --norc --verbose run_report.m",
            "rows.csv: row 1800 has bucket 11, so score_row indexes the 10x3 weights with 11 (of 2,600 logged rows; upload step after)",
            [
                Needle(r"^error: weights\(11,_\): out of bound 10"),
                Needle(r"score_row at line \d+"),
            ],
            octave_index(2600, 1800),
            version_cmd="octave-cli --version | head -n 1",
        )
    )
    s.append(
        Scenario(
            "ruby-rspec-failure",
            "ruby",
            "rspec",
            "rspec --format documentation --no-color --order defined",
            "spec/invoice_26_spec.rb: the total for 8 items expects the product + 1 (one of 1,400 examples; pending examples; upload step after)",
            [
                Needle(r"Failure/Error: expect\(Acme::Invoice26\.total\(8\)\)"),
                Needle(r"^rspec \./spec/invoice_26_spec\.rb:\d+ # "),
            ],
            rspec_suite(40, 35, (26, 8)),
            version_cmd="rspec --version | head -n 1",
        )
    )
    s.append(
        Scenario(
            "ruby-rubocop-duplicate-key",
            "ruby",
            "rubocop",
            "rubocop --debug --cache false --extra-details --display-style-guide --fail-level warning lib",
            "lib/acme/mod_044.rb: options returns { retries: 3, timeout: 30, retries: 5 }, a duplicated hash key (Lint/DuplicateHashKey, the one warning among 150 files' convention offenses)",
            [Needle(r"lib/acme/mod_044\.rb:\d+:\d+: W: Lint/DuplicateHashKey")],
            rubocop_project(150, 44),
            version_cmd="rubocop --version",
        )
    )
    s.append(
        Scenario(
            "python-flake8-undefined-name",
            "python",
            "flake8",
            "flake8 -v --max-line-length 100 --show-source --statistics --count src/",
            "src/acme/mod_071.py: summarize_071 returns inv.compute() + offset, an undefined name (F821; one of 120 files with E/W style errors and F401 unused imports)",
            [Needle(r"src/acme/mod_071\.py:\d+:\d+: F821 undefined name 'offset'")],
            flake8_project(120, 71),
            version_cmd="flake8 --version",
        )
    )
    s.append(
        Scenario(
            "python-pylint-no-member",
            "python",
            "pylint",
            "pylint --jobs=1 --reports=y --output-format=text acme",
            "src/acme/mod_018.py: summarize_018 reads inv.totl, a member Invoice018 lacks (E1101; one of 90 modules with convention and warning messages; the reports follow)",
            [
                Needle(
                    r"acme/mod_018\.py:\d+:\d+: E1101: Instance of 'Invoice018' has no 'totl' member"
                )
            ],
            pylint_project(90, 18),
            version_cmd="pylint --version | head -n 1",
        )
    )
    s.append(
        Scenario(
            "js-eslint-no-undef",
            "javascript",
            "eslint",
            "DEBUG=eslint:cli-engine eslint --format stylish src/",
            "src/mod_137.js: score137 returns total + offset, an undefined variable (no-undef, the one error among 200 files' warnings; upload step after)",
            [
                Needle(r"^/.*/src/mod_137\.js$"),
                Needle(r"^\s*\d+:\d+\s+error\s+'offset' is not defined\s+no-undef"),
            ],
            eslint_project(200, 137),
            version_cmd="eslint --version",
        )
    )
    s.append(
        Scenario(
            "groovy-number-format",
            "groovy",
            "groovy",
            "groovy report.groovy",
            'data/part-0212.txt: row 1700 has the weight "n/a", so Integer.parseInt fails in parseWeight (of 2,400 logged rows read from 300 parts; a tar listing of the parts follows)',
            [
                Needle(r'java\.lang\.NumberFormatException: For input string: "n/a"'),
                Needle(r"at report\.parseWeight\(report\.groovy:\d+\)"),
            ],
            groovy_numberformat(2400, 1700),
            version_cmd="groovy --version",
        )
    )
    s.append(
        Scenario(
            "clojure-divide-by-zero",
            "clojure",
            "clojure",
            "clojure report.clj",
            "rows.edn: row 900 has :count 0, so acme.report/average divides by zero (of 1,600 logged rows; upload step after)",
            [
                Needle(r"\(ArithmeticException\) at acme\.report/average"),
                Needle(r"^Divide by zero$"),
            ],
            clojure_divide(1600, 900),
            version_cmd="clojure -e '(println (clojure-version))'",
        )
    )
    s.append(
        Scenario(
            "ansible-playbook-failed-task",
            "ansible",
            "ansible-playbook",
            "ansible-playbook -i localhost, -c local -v site.yml",
            "site.yml: the task 'read the release manifest' runs cat /etc/acme/release.conf, which does not exist (after 60 looped changed items and an ignored failure; the recap and an upload step follow)",
            [
                Needle(r"^TASK \[read the release manifest\]"),
                Needle(r"^fatal: \[localhost\]: FAILED! => .*/etc/acme/release\.conf"),
            ],
            ansible_playbook(30),
            version_cmd="ansible-playbook --version | head -n 1",
        )
    )
    return s


# ---------------------------------------------------------------------------------------------
# Running


def ensure_tools() -> None:
    """Install flake8, pylint and ansible-core (PyPI) and eslint@8 (npm) into `TOOLS` (once)."""
    venv = TOOLS / "venv"
    if not (venv / "bin" / "ansible-playbook").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(venv / "bin" / "pip"), "install", "-q", "flake8", "pylint", "ansible-core"],
            check=True,
        )
    node = TOOLS / "node"
    if not (node / "node_modules" / ".bin" / "eslint").exists():
        node.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "init", "-y"], cwd=node, check=True, capture_output=True)
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "eslint@8"], cwd=node, check=True
        )


def main(argv: list[str] | None = None) -> int:
    return g.run_batch(
        argv,
        doc=__doc__,
        cases=scenarios(),
        prefix=PREFIX,
        batch=4,
        setup=ensure_tools,
        check=lambda row: g.check_needles(row, max_chars=500),
    )


if __name__ == "__main__":
    sys.exit(main())
