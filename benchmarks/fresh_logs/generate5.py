"""Generate batch 5 of the fresh-logs held-out set: ecosystems batches 1 to 4 do not have.

Same method as `generate.py` (batch 1) and `generate4.py` (batch 4), whose job pieces, labelling
and writing this script reuses: every case is a small fixture project written into a temporary
folder with one injected fault (said per case), built, checked or run by a real local tool with
verbose flags and CI noise (`set -x` traces, tool versions, a cache download retried against a
closed port, warnings, progress, in some a `tar -cv` listing before or after the fault). stdout
and stderr are merged. The labels are decided from the injected fault alone: a regular
expression per needle, written with the fault, selects the log line; nothing here imports or
runs the package.

Batch 5 covers: Apache Ant (a javac error, a JUnit failure), Jest, Bats, Robot Framework,
behave, LaTeX (pdflatex), NASM, Vala (a valac compile error, a failed assertion at run time),
Standard ML (Poly/ML), CHICKEN Scheme, Coq, GNU Bison, protoc, sqlite3, psql against a local
PostgreSQL, `nginx -t`, Doxygen with WARN_AS_ERROR, clang++ (a template instantiation error),
Python's unittest, a Hypothesis property (run by unittest) and `black --check`.

Tools (Debian bookworm packages, `apt-get install -y --no-install-recommends ant ant-optional
junit4 bats nasm valac libglib2.0-dev polyml chicken-bin coq bison protobuf-compiler nginx-light
doxygen clang texlive-latex-base sqlite3 postgresql-client`; robotframework, behave,
hypothesis and black from PyPI and jest@29 from npm, installed by this script into a venv and a
node folder under `FRESH_LOGS_TOOLS5`, default /tmp/fresh_tools5, never the project's venv). The psql case needs
a PostgreSQL server at 127.0.0.1:5432 (user postgres, password postgres); it creates the
database `fresh5_gen` and drops it after. Versions are written to every case's `tool_version`.

Run (from the project root; a few minutes):

    python benchmarks/fresh_logs/generate5.py            # every case: batch5/{logs/,cases.jsonl}
    python benchmarks/fresh_logs/generate5.py --only ID  # some cases (their rows are replaced)
"""

# The fixture projects' sources are written inline: some of their lines are longer than ours.
# ruff: noqa: E501

from __future__ import annotations

import os
import random
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate as g  # batch 1's job pieces and writer (a script in this folder)

HERE = Path(__file__).resolve().parent / "batch5"
PREFIX = "fresh5/"
TOOLS = Path(os.environ.get("FRESH_LOGS_TOOLS5", "/tmp/fresh_tools5"))

# batch 1's writer, pointed at batch 5's folder (and its PATH at batch 5's venv and node tools)
g.HERE = HERE
g.LOGS = HERE / "logs"
g.CASES = HERE / "cases.jsonl"
g.GENERATED = "2026-12-07"
g.BUILD_ROOT = Path(os.environ.get("FRESH_LOGS_BUILD5", "/tmp/fresh_logs_build5"))
g.TOOLS = TOOLS

Needle = g.Needle
Scenario = g.Scenario
_w = g._w
_job = g._job

Build = Callable[[Path, random.Random], str]

WORDS = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta", "lambda", "zeta"]
REGIONS = ["north", "south", "east", "west"]

UPLOAD = """\
echo "--- uploading test reports and logs ---"
for f in {files}; do
  if curl -sS --max-time 2 -T "$f" http://127.0.0.1:9/artifacts/"$(basename "$f")"; then echo "uploaded $f"; else echo "upload of $f skipped (artifact store unreachable)"; fi
done
"""

SOURCES_TAR = """\
echo "--- restoring sources from the bundle ---"
tar -cvf /tmp/fresh_logs_src_$$.tar {paths}
rm -f /tmp/fresh_logs_src_$$.tar
"""


# ---------------------------------------------------------------------------------------------
# Apache Ant: a javac error and a JUnit failure


def _java_class(pkg: str, name: str, rng: random.Random, *, bad: bool) -> str:
    k = rng.randint(2, 97)
    lines = [
        f"package {pkg};",
        "",
        "import java.util.ArrayList;",
        "import java.util.List;",
        "",
        f"public class {name} {{",
        f'    private final String label = "{name.lower()}";',
        "",
        "    public int score(int[] values) {",
    ]
    if rng.random() < 0.35:
        lines.append("        List raw = new ArrayList();  // raw type: a lint warning")
        lines.append("        raw.add(values.length);")
    lines.append("        int total = label;" if bad else "        int total = 0;")
    lines += [
        "        for (int v : values) {",
        f"            total += v * {k};",
        "        }",
        "        return total;",
        "    }",
        "",
        "    public String describe(int[] values) {",
        '        return label + ":" + score(values);',
        "    }",
        "}",
        "",
    ]
    return "\n".join(lines)


ANT_BUILD = """\
<project name="acme-billing" default="jar" basedir=".">
  <property name="src" location="src"/>
  <property name="test.src" location="test"/>
  <property name="build" location="build"/>
  <path id="test.path">
    <pathelement location="build/classes"/>
    <pathelement location="build/test-classes"/>
    <pathelement location="/usr/share/java/junit4.jar"/>
    <pathelement location="/usr/share/java/hamcrest-core.jar"/>
  </path>
  <target name="init">
    <tstamp/>
    <mkdir dir="${build}/classes"/>
    <mkdir dir="${build}/test-classes"/>
    <mkdir dir="${build}/reports"/>
  </target>
  <target name="resources" depends="init">
    <copy todir="${build}/classes" verbose="true">
      <fileset dir="resources"/>
    </copy>
  </target>
  <target name="compile" depends="resources">
    <javac srcdir="${src}" destdir="${build}/classes" includeantruntime="false" debug="true" listfiles="true">
      <compilerarg value="-Xlint:all"/>
    </javac>
  </target>
  <target name="compile-tests" depends="compile">
    <javac srcdir="${test.src}" destdir="${build}/test-classes" includeantruntime="false" debug="true" classpathref="test.path"/>
  </target>
  <target name="test" depends="compile-tests">
    <junit printsummary="yes" haltonfailure="no" failureproperty="tests.failed" fork="yes">
      <classpath refid="test.path"/>
      <formatter type="plain" usefile="false"/>
      <formatter type="xml"/>
      <batchtest todir="${build}/reports">
        <fileset dir="${test.src}" includes="**/*Test.java"/>
      </batchtest>
    </junit>
    <fail if="tests.failed" message="JUnit tests failed"/>
  </target>
  <target name="jar" depends="compile">
    <jar destfile="${build}/acme-billing.jar" basedir="${build}/classes"/>
  </target>
</project>
"""


def ant_javac(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            pkg = "acme.billing" if i % 3 else "acme.core"
            _w(
                d / "src" / pkg.replace(".", "/") / f"Mod{i:03d}.java",
                _java_class(pkg, f"Mod{i:03d}", rng, bad=i == bad),
            )
        for r in range(30):
            _w(d / "resources" / "messages" / f"messages_{r:02d}.properties", f"greeting=hi {r}\n")
        _w(d / "build.xml", ANT_BUILD)
        step = (
            "java -version\nant -version\n"
            + SOURCES_TAR.format(paths="src resources")
            + "ant -v -noinput -buildfile build.xml jar || status=$?\n"
        )
        return _job(step, fetch="ivy-cache", cleanup="build")

    return build


def ant_junit(files: int, per: int, bad: tuple[int, int]) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for f in range(files):
            price = rng.randint(3, 40)
            _w(
                d / "src" / "acme" / "pricing" / f"Pricing{f:02d}.java",
                f"package acme.pricing;\n\npublic final class Pricing{f:02d} {{\n    public static int total(int n) {{\n        return n * {price};\n    }}\n}}\n",
            )
            lines = [
                "package acme.pricing;",
                "",
                "import static org.junit.Assert.assertEquals;",
                "import org.junit.Test;",
                "",
                f"public class Pricing{f:02d}Test {{",
            ]
            for k in range(per):
                want = k * price + (1 if (f, k) == bad else 0)
                lines += [
                    "    @Test",
                    f"    public void totalFor{k}Items() {{",
                    f'        System.out.println("checking pricing {f:02d} for {k} items");',
                    f"        assertEquals({want}, Pricing{f:02d}.total({k}));",
                    "    }",
                ]
            lines.append("}")
            _w(
                d / "test" / "acme" / "pricing" / f"Pricing{f:02d}Test.java",
                "\n".join(lines) + "\n",
            )
        _w(d / "resources" / "acme.properties", "region=north\n")
        _w(d / "build.xml", ANT_BUILD)
        step = (
            "java -version\nant -version\nant -v -noinput -buildfile build.xml test || status=$?\n"
        )
        step += UPLOAD.format(files="build/reports/*.xml")
        return _job(step, fetch="ivy-cache", cleanup="build")

    return build


# ---------------------------------------------------------------------------------------------
# Jest, Bats, Robot Framework, behave and unittest: one failing test among many


def jest_suite(files: int, per: int, bad: tuple[int, int]) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for f in range(files):
            price = rng.randint(3, 40)
            _w(
                d / "src" / f"pricing-{f:02d}.js",
                f"exports.total = (n) => n * {price};\n",
            )
            lines = [f"const {{ total }} = require('../src/pricing-{f:02d}.js');", ""]
            lines.append(f"describe('pricing-{f:02d}', () => {{")
            for k in range(per):
                want = k * price + (1 if (f, k) == bad else 0)
                if k % 9 == 4:
                    lines.append(
                        f"  test('total for {k} items', () => {{ console.log('pricing-{f:02d}: {k} items'); expect(total({k})).toBe({want}); }});"
                    )
                else:
                    lines.append(
                        f"  test('total for {k} items', () => {{ expect(total({k})).toBe({want}); }});"
                    )
            if f % 8 == 5:
                lines.append("  test.todo('refunds');")
            lines.append("});")
            _w(d / "tests" / f"pricing-{f:02d}.test.js", "\n".join(lines) + "\n")
        _w(
            d / "package.json",
            '{"name": "acme-pricing", "version": "1.0.0", "private": true, "jest": {"testEnvironment": "node"}}\n',
        )
        step = (
            "node --version\njest --version\n"
            "jest --ci --verbose --runInBand --colors=false --cacheDirectory=.jest-cache tests/ || status=$?\n"
        )
        step += UPLOAD.format(files="package.json")
        return _job(step, fetch="npm-cache", cleanup="src tests")

    return build


def bats_suite(files: int, per: int, bad: tuple[int, int]) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        _w(
            d / "bin" / "deploy-step",
            "#!/bin/bash\n# prints the number of hosts a deploy step touches\nbase=$1\nstep=$2\necho $(( base * step ))\n",
        )
        (d / "bin" / "deploy-step").chmod(0o755)
        for f in range(files):
            base = rng.randint(2, 30)
            lines = [
                "#!/usr/bin/env bats",
                "",
                "setup() {",
                '  PATH="$BATS_TEST_DIRNAME/../bin:$PATH"',
                "}",
                "",
            ]
            for k in range(per):
                want = base * k + (1 if (f, k) == bad else 0)
                lines += [
                    f'@test "deploy-{f:02d} step {k} touches {want} hosts" {{',
                    f"  run deploy-step {base} {k}",
                    '  [ "$status" -eq 0 ]',
                    f'  [ "$output" -eq {want} ]',
                    "}",
                    "",
                ]
            if f % 6 == 2:
                lines += [
                    f'@test "deploy-{f:02d} rollback" {{',
                    "  skip 'rollback is manual'",
                    "}",
                    "",
                ]
            _w(d / "tests" / f"deploy_{f:02d}.bats", "\n".join(lines))
        step = (
            "bats --version\n"
            "bats --formatter tap --timing --verbose-run --print-output-on-failure tests || status=$?\n"
        )
        return _job(step, fetch="bats-helpers", cleanup="tests bin")

    return build


def robot_suite(files: int, per: int, bad: tuple[int, int]) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        _w(
            d / "lib" / "AcmeOrders.py",
            textwrap.dedent(
                """\
                import logging


                class AcmeOrders:
                    ROBOT_LIBRARY_SCOPE = "GLOBAL"

                    def order_total(self, price, count):
                        total = int(price) * int(count)
                        logging.debug("order total %s x %s = %s", price, count, total)
                        return total
                """
            ),
        )
        for f in range(files):
            price = rng.randint(3, 40)
            lines = [
                "*** Settings ***",
                f"Documentation    Orders of region {REGIONS[f % 4]}, price {price}.",
                "Library          AcmeOrders",
                "",
                "*** Test Cases ***",
            ]
            for k in range(per):
                want = k * price + (1 if (f, k) == bad else 0)
                lines += [
                    f"Order {f:02d} Total For {k} Items",
                    f"    ${{total}}=    Order Total    {price}    {k}",
                    "    Log    computed ${total}",
                ]
                if k % 11 == 7:
                    lines.append(f"    Log    order {f:02d}/{k}: slow pricing source    WARN")
                lines += [f"    Should Be Equal As Integers    ${{total}}    {want}", ""]
            _w(d / "tests" / f"orders_{f:02d}.robot", "\n".join(lines))
        step = (
            "robot --version || true\n"
            "robot --loglevel DEBUG --consolewidth 100 --console verbose --pythonpath lib --outputdir out tests || status=$?\n"
        )
        step += UPLOAD.format(files="out/output.xml out/log.html out/report.html")
        return _job(step, fetch="pip-wheels", cleanup="out tests")

    return build


def behave_suite(files: int, per: int, bad: tuple[int, int]) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        _w(
            d / "features" / "steps" / "orders.py",
            textwrap.dedent(
                """\
                from behave import given, then, when


                @given("the price of a {product} is {price:d}")
                def step_price(context, product, price):
                    context.product = product
                    context.price = price


                @when("I order {count:d} of them")
                def step_order(context, count):
                    context.total = context.price * count


                @then("the total is {want:d}")
                def step_total(context, want):
                    assert context.total == want, f"expected {want}, got {context.total}"
                """
            ),
        )
        for f in range(files):
            price = rng.randint(3, 40)
            product = f"{rng.choice(WORDS)} widget"
            lines = [
                f"Feature: orders {f:02d}",
                "",
                f"  Orders of the {product}s of region {REGIONS[f % 4]}.",
                "",
            ]
            for k in range(per):
                want = k * price + (1 if (f, k) == bad else 0)
                lines += [
                    f"  Scenario: orders {f:02d} total for {k} items",
                    f"    Given the price of a {product} is {price}",
                    f"    When I order {k} of them",
                    f"    Then the total is {want}",
                    "",
                ]
            _w(d / "features" / f"orders_{f:02d}.feature", "\n".join(lines))
        step = (
            "behave --version\n"
            "behave --no-color --format pretty --show-timings --no-capture -v features || status=$?\n"
        )
        return _job(step, fetch="pip-wheels", cleanup="features")

    return build


def unittest_suite(files: int, per: int, bad: tuple[int, int]) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        _w(d / "tests" / "__init__.py", "")
        _w(d / "acme" / "__init__.py", "")
        for f in range(files):
            price = rng.randint(3, 40)
            _w(
                d / "acme" / f"pricing_{f:02d}.py",
                f"def total(n):\n    return n * {price}\n",
            )
            lines = [
                "import unittest",
                "import warnings",
                "",
                f"from acme.pricing_{f:02d} import total",
                "",
                "",
                f"class PricingTest{f:02d}(unittest.TestCase):",
            ]
            for k in range(per):
                want = k * price + (1 if (f, k) == bad else 0)
                lines += [
                    f"    def test_total_{k}(self):",
                    f"        self.assertEqual(total({k}), {want})",
                    "",
                ]
            if f % 7 == 3:
                lines += [
                    "    @unittest.skip('refunds are not implemented')",
                    "    def test_refund(self):",
                    "        self.assertEqual(total(-1), 0)",
                    "",
                    "    def test_legacy_rounding(self):",
                    "        warnings.warn('legacy rounding is deprecated', DeprecationWarning)",
                    "        self.assertEqual(round(total(1) / 1), total(1))",
                    "",
                ]
            _w(d / "tests" / f"test_pricing_{f:02d}.py", "\n".join(lines))
        step = (
            "python3 --version\n"
            "python3 -W default -m unittest discover -v -s tests -t . || status=$?\n"
        )
        return _job(step, fetch="pip-wheels", cleanup="acme tests")

    return build


# ---------------------------------------------------------------------------------------------
# LaTeX


LOREM = (
    "The billing service aggregates invoices per region and per customer, reconciles the "
    "payments with the ledger and reports the balance at the end of each period. "
)


def pdflatex_doc(chapters: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        names = []
        for c in range(chapters):
            name = f"ch{c:02d}"
            names.append(name)
            paras = []
            for p in range(rng.randint(4, 8)):
                text = LOREM * rng.randint(2, 5)
                if rng.random() < 0.25:
                    text += " See \\texttt{acme-billing-reconciliation-service-configuration-reference-manual}. "
                if c == bad and p == 2:
                    text += " The region totals are \\hilight{rounded to cents} before reporting. "
                paras.append(text)
            _w(
                d / "chapters" / f"{name}.tex",
                f"\\chapter{{{rng.choice(WORDS).title()} {c}}}\\label{{ch:{c}}}\n\n"
                + "\n\n".join(paras)
                + f"\n\nAs chapter~\\ref{{ch:{(c + 1) % chapters}}} shows, the totals add up.\n",
            )
        _w(
            d / "main.tex",
            "\\documentclass[11pt]{report}\n\\usepackage[T1]{fontenc}\n\\begin{document}\n"
            "\\title{Acme Billing}\\author{CI}\\maketitle\n\\tableofcontents\n"
            + "".join(f"\\include{{chapters/{n}}}\n" for n in names)
            + "\\end{document}\n",
        )
        step = (
            "pdflatex --version | head -n 2\n"
            "pdflatex -interaction=nonstopmode -file-line-error -recorder main.tex || status=$?\n"
            "ls -la main.*\n"
        )
        step += UPLOAD.format(files="main.pdf main.log")
        return _job(step, fetch="texmf-cache", cleanup="main.aux main.log chapters")

    return build


# ---------------------------------------------------------------------------------------------
# NASM


def nasm_project(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            k = rng.randint(2, 97)
            lines = [
                "bits 64",
                "default rel",
                "section .data",
                f"table_{i:03d}: dd {', '.join(str(rng.randint(1, 999)) for _ in range(8))}",
            ]
            if rng.random() < 0.3:
                lines.append(f"big_{i:03d}: db 0x1{k:02x}  ; does not fit in a byte")
            lines += [
                "section .text",
                f"global score_{i:03d}",
                f"score_{i:03d}:",
                f"    lea rax, [table_{i:03d}]",
                "    mov eax, [rax + rdi*4]",
                f"    imul eax, eax, {k}",
            ]
            if i == bad:
                lines.append("    add eax, [offset_table]")
            lines += ["    ret", ""]
            _w(d / "src" / f"mod_{i:03d}.asm", "\n".join(lines))
        _w(
            d / "Makefile",
            "SRCS = $(wildcard src/*.asm)\nOBJS = $(patsubst src/%.asm,obj/%.o,$(SRCS))\n\n"
            'all: libacme.a\n\nobj/%.o: src/%.asm\n\t@mkdir -p obj\n\t@echo "  NASM    $@"\n\tnasm -f elf64 -g -F dwarf -w+all -o $@ $<\n\n'
            "libacme.a: $(OBJS)\n\tar rcsv $@ $^\n",
        )
        step = "nasm -v\nmake --version | head -n 1\nmake -k -j2 all || status=$?\n"
        return _job(step, fetch="asm-objs", cleanup="obj src Makefile")

    return build


# ---------------------------------------------------------------------------------------------
# Vala: a compile error and a failed assertion at run time


def valac_compile(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            k = rng.randint(2, 97)
            unused = "        int scratch = values.length * 2;\n" if rng.random() < 0.4 else ""
            ret = "total + offset" if i == bad else "total"
            _w(
                d / "src" / f"mod_{i:03d}.vala",
                f"namespace Acme {{\n    public class Mod{i:03d} : Object {{\n"
                f"        public int score (int[] values) {{\n{unused}"
                f"            int total = 0;\n            foreach (int v in values) {{\n                total += v * {k};\n            }}\n"
                f"            return {ret};\n        }}\n\n"
                f'        public string describe (int[] values) {{\n            return "mod{i:03d}: %d".printf (score (values));\n        }}\n    }}\n}}\n',
            )
        _w(
            d / "src" / "main.vala",
            'int main (string[] args) {\n    var m = new Acme.Mod000 ();\n    print ("%s\\n", m.describe ({1, 2, 3}));\n    return 0;\n}\n',
        )
        step = (
            "valac --version\ngcc --version | head -n 1\npkg-config --modversion glib-2.0\n"
            "mkdir -p build\n"
            "valac -v -g --pkg gio-2.0 -d build -o acme src/*.vala || status=$?\n"
        )
        return _job(step, fetch="vala-deps", cleanup="build src")

    return build


def vala_assert(rows: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        _w(
            d / "src" / "report.vala",
            textwrap.dedent(
                f"""\
                namespace Acme {{
                    const int[] WEIGHTS = {{ 3, 1, 4, 1, 5, 9, 2, 6, 5, 3 }};
                    const string[] REGIONS = {{ "north", "south", "east", "west" }};

                    int bucket_of (int row) {{
                        return row == {bad} ? 10 : row % 10;
                    }}

                    int weight_of (int row) {{
                        int bucket = bucket_of (row);
                        assert (bucket < WEIGHTS.length);
                        return WEIGHTS[bucket];
                    }}
                }}

                int main (string[] args) {{
                    int64 grand = 0;
                    stdout.printf ("[info] acme report starting, {rows} rows\\n");
                    for (int r = 0; r < {rows}; r++) {{
                        int w = Acme.weight_of (r);
                        grand += w;
                        stdout.printf ("[info] row %d region=%s weight=%d running=%" + int64.FORMAT + "\\n", r, Acme.REGIONS[r % 4], w, grand);
                        if (r % 300 == 0) {{
                            warning ("row %d: slow source, retrying read", r);
                        }}
                    }}
                    stdout.printf ("[info] done\\n");
                    return 0;
                }}
                """
            ),
        )
        step = "valac --version\nvalac -v -g -o report src/report.vala\n./report || status=$?\n"
        step += UPLOAD.format(files="report src/report.vala")
        return _job(step, fetch="report-inputs", cleanup="src report")

    return build


# ---------------------------------------------------------------------------------------------
# Standard ML with Poly/ML


def polyml_build(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        uses = []
        for i in range(n):
            k = rng.randint(2, 97)
            body = f"total * {k} + 0.5" if i == bad else f"total * {k}"
            unused = f"    val unused{i} = List.length values\n" if rng.random() < 0.3 else ""
            _w(
                d / "src" / f"mod{i:03d}.sml",
                f"structure Mod{i:03d} =\nstruct\n  fun score (values : int list) : int =\n    let\n{unused}"
                f"      val total = List.foldl (op +) 0 values\n    in\n      {body}\n    end\n\n"
                f'  fun describe values = "mod{i:03d}: " ^ Int.toString (score values)\n'
                "  fun first (x :: _) = x\nend\n",
            )
            uses.append(
                f'val () = print "[build] loading src/mod{i:03d}.sml\\n";\nuse "src/mod{i:03d}.sml";'
            )
        _w(d / "build.sml", "\n".join(uses) + '\nval () = print "[build] all modules loaded\\n";\n')
        step = "poly -v </dev/null\npoly --script build.sml || status=$?\n"
        return _job(step, fetch="smlnj-lib", cleanup="src build.sml")

    return build


# ---------------------------------------------------------------------------------------------
# CHICKEN Scheme (a run-time error in a compiled program)


def chicken_vector_ref(rows: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        _w(
            d / "report.scm",
            textwrap.dedent(
                f"""\
                (import (chicken format))

                (define weights (vector 3 1 4 1 5 9 2 6 5 3))
                (define regions (vector "north" "south" "east" "west"))

                (define (bucket-of row)
                  (if (= row {bad}) 10 (modulo row 10)))

                (define (weight-of row)
                  (vector-ref weights (bucket-of row)))

                (define (report-row row running)
                  (let ((w (weight-of row)))
                    (printf "[info] row ~a region=~a weight=~a running=~a~%" row (vector-ref regions (modulo row 4)) w (+ running w))
                    (when (= 0 (modulo row 350))
                      (fprintf (current-error-port) "[warn] row ~a: slow source, retrying read~%" row))
                    (+ running w)))

                (printf "[info] acme report starting, {rows} rows~%")
                (let loop ((row 0) (running 0))
                  (if (< row {rows})
                      (loop (+ row 1) (report-row row running))
                      (printf "[info] done, grand total ~a~%" running)))
                """
            ),
        )
        step = (
            "csc -version | head -n 3\ncsc -v -O1 -d2 report.scm -o report\n./report || status=$?\n"
        )
        step += UPLOAD.format(files="report report.scm")
        return _job(step, fetch="chicken-eggs", cleanup="report report.scm")

    return build


# ---------------------------------------------------------------------------------------------
# Coq


def coq_theories(n: int, per: int, bad: tuple[int, int]) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for t in range(n):
            price = rng.randint(3, 40)
            lines = ["From Coq Require Import Arith Lia.", ""]
            if t > 0:
                lines += [f"Require Import Acme.Pricing{t - 1:02d}.", ""]
            lines += [f"Definition total{t:02d} (n : nat) : nat := n * {price}.", ""]
            for k in range(per):
                want = k * price + (1 if (t, k) == bad else 0)
                lines += [
                    f"Lemma total{t:02d}_{k} : total{t:02d} {k} = {want}.",
                    "Proof.",
                    f"  unfold total{t:02d}.",
                    "  reflexivity.",
                    "Qed.",
                    "",
                ]
            lines += [
                f"Lemma total{t:02d}_mono : forall a b, a <= b -> total{t:02d} a <= total{t:02d} b.",
                f"Proof. intros a b H. unfold total{t:02d}. lia. Qed.",
                "",
            ]
            _w(d / "theories" / f"Pricing{t:02d}.v", "\n".join(lines))
        step = (
            "coqc --version\n"
            f"for t in $(seq -w 0 {n - 1}); do\n"
            '  echo "COQC theories/Pricing$t.v"\n'
            '  coqc -time -Q theories Acme "theories/Pricing$t.v" || { status=$?; break; }\n'
            "done\n"
        )
        return _job(step, fetch="opam-switch", cleanup="theories")

    return build


# ---------------------------------------------------------------------------------------------
# GNU Bison


def bison_grammar(extra: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        rules = []
        tokens = []
        for i in range(extra):
            tok = f"KW_{rng.choice(WORDS).upper()}_{i:02d}"
            tokens.append(tok)
            rules.append(
                f"decl_{i:02d}: {tok} IDENT '=' expr ';' {{ $$ = mk_decl({i}, $2, $4); }}\n    ;"
            )
        decls = " | ".join(f"decl_{i:02d}" for i in range(extra))
        _w(
            d / "parse.y",
            "%code requires { typedef long node; }\n"
            "%{\n#include <stdio.h>\nint yylex(void);\nvoid yyerror(const char *);\nlong mk_decl(int, long, long);\nlong mk_if(long, long, long);\n%}\n"
            "%define api.value.type {long}\n%define parse.error verbose\n%expect 0\n"
            "%token IF THEN ELSE IDENT NUMBER\n"
            f"%token {' '.join(tokens)}\n"
            "%left '+' '-'\n%left '*' '/'\n"
            "%%\n"
            "program: %empty { $$ = 0; }\n    | program item { $$ = $2; }\n    ;\n"
            f"item: {decls} | stmt\n    ;\n"
            "stmt: IF expr THEN stmt { $$ = mk_if($2, $4, 0); }\n"
            "    | IF expr THEN stmt ELSE stmt { $$ = mk_if($2, $4, $6); }\n"
            "    | expr ';' { $$ = $1; }\n    ;\n"
            "expr: expr '+' expr { $$ = $1 + $3; }\n    | expr '-' expr { $$ = $1 - $3; }\n"
            "    | expr '*' expr { $$ = $1 * $3; }\n    | expr '/' expr { $$ = $1 / $3; }\n"
            "    | '(' expr ')' { $$ = $2; }\n    | NUMBER\n    | IDENT\n    ;\n"
            + "\n".join(rules)
            + "\n%%\n",
        )
        step = (
            "bison --version | head -n 1\n"
            + SOURCES_TAR.format(paths="parse.y")
            + "bison -Wall -Wcounterexamples --report=all --report-file=parse.output -d -o parse.tab.c parse.y || status=$?\n"
            "if [ -f parse.output ]; then cat parse.output; fi\n"
        )
        return _job(step, fetch="bison-gen", cleanup="parse.y parse.output")

    return build


# ---------------------------------------------------------------------------------------------
# protoc


def protoc_project(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        _w(
            d / "proto" / "acme" / "common" / "money.proto",
            'syntax = "proto3";\npackage acme.common;\n\nmessage Money {\n  string currency = 1;\n  int64 units = 2;\n  int32 nanos = 3;\n}\n',
        )
        _w(
            d / "proto" / "acme" / "common" / "region.proto",
            'syntax = "proto3";\npackage acme.common;\n\nenum Region {\n  REGION_UNSPECIFIED = 0;\n  NORTH = 1;\n  SOUTH = 2;\n}\n',
        )
        for i in range(n):
            extra_import = 'import "acme/common/region.proto";\n' if rng.random() < 0.4 else ""
            money = "acme.common.Moneyy" if i == bad else "acme.common.Money"
            fields = [f"  {money} amount = 1;", "  string customer = 2;"]
            for k in range(rng.randint(2, 8)):
                fields.append(f"  int32 {rng.choice(WORDS)}_{k} = {k + 3};")
            _w(
                d / "proto" / "acme" / "billing" / f"invoice_{i:03d}.proto",
                f'syntax = "proto3";\npackage acme.billing.v{i:03d};\n\nimport "acme/common/money.proto";\n{extra_import}\n'
                f"message Invoice{i:03d} {{\n" + "\n".join(fields) + "\n}\n\n"
                f"service Billing{i:03d} {{\n  rpc Get(Invoice{i:03d}) returns (Invoice{i:03d});\n}}\n",
            )
        step = (
            "protoc --version\nmkdir -p gen/cpp gen/python\n"
            "find proto -name '*.proto' | sort > protos.txt\nwc -l protos.txt\n"
            "for f in $(cat protos.txt); do\n"
            '  echo "PROTOC $f"\n'
            '  protoc --proto_path=proto --cpp_out=gen/cpp --python_out=gen/python "${f#proto/}" || status=$?\n'
            "done\n"
        )
        return _job(step, fetch="protoc-plugins", cleanup="gen proto")

    return build


# ---------------------------------------------------------------------------------------------
# sqlite3 and psql


def sqlite_load(rows: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        _w(
            d / "schema.sql",
            "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, region TEXT NOT NULL);\n"
            "CREATE TABLE invoices (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), total INTEGER NOT NULL);\n"
            "CREATE INDEX invoices_customer ON invoices(customer_id);\n",
        )
        lines = [".bail on", ".echo on", ".timer on", ".read schema.sql", "BEGIN;"]
        for c in range(50):
            lines.append(
                f"INSERT INTO customers VALUES ({c}, '{rng.choice(WORDS)}_{c}', '{rng.choice(REGIONS)}');"
            )
        for r in range(rows):
            rid = bad - 1 if r == bad else r
            lines.append(
                f"INSERT INTO invoices VALUES ({rid}, {rng.randint(0, 49)}, {rng.randint(10, 9999)});"
            )
        lines += [
            "COMMIT;",
            "SELECT region, count(*), sum(total) FROM invoices JOIN customers ON customers.id = customer_id GROUP BY region;",
        ]
        _w(d / "load.sql", "\n".join(lines) + "\n")
        step = "sqlite3 --version\nsqlite3 acme.db < load.sql || status=$?\nls -la acme.db\n"
        step += UPLOAD.format(files="acme.db")
        return _job(step, fetch="sqlite-seed", cleanup="acme.db schema.sql")

    return build


def psql_migrations(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        files = []
        for i in range(n):
            name = f"{i:03d}_{rng.choice(WORDS)}.sql"
            files.append(name)
            if i == 0:
                body = (
                    "CREATE TABLE IF NOT EXISTS customers (id serial PRIMARY KEY, name text NOT NULL, region text NOT NULL);\n"
                    "CREATE TABLE IF NOT EXISTS invoices (id serial PRIMARY KEY, customer_id integer NOT NULL REFERENCES customers(id), total integer NOT NULL);\n"
                )
            elif i == bad:
                body = "CREATE INDEX invoices_by_customer ON invoices (customer_idd, total);\n"
            else:
                body = (
                    f"ALTER TABLE invoices ADD COLUMN IF NOT EXISTS note_{i:03d} text;\n"
                    "CREATE TABLE IF NOT EXISTS customers (id serial PRIMARY KEY);\n"
                    f"INSERT INTO customers (name, region) SELECT 'c{i}_' || g, '{rng.choice(REGIONS)}' FROM generate_series(1, {rng.randint(5, 40)}) g;\n"
                    f"INSERT INTO invoices (customer_id, total) SELECT id, id * {rng.randint(2, 97)} FROM customers WHERE id % {rng.randint(2, 5)} = 0;\n"
                    "SELECT region, count(*) FROM customers GROUP BY region ORDER BY region;\n"
                )
            _w(d / "migrations" / name, body)
        _w(
            d / "migrate.sql",
            "\\set ECHO all\n\\timing on\n" + "".join(f"\\i migrations/{f}\n" for f in files),
        )
        step = (
            "psql --version\n"
            "export PGHOST=127.0.0.1 PGPORT=5432 PGUSER=postgres\n"
            "{ set +x; } 2>/dev/null\nexport PGPASSWORD=postgres  # masked, as CI masks secrets\nset -x\n"
            "dropdb --if-exists fresh5_gen\ncreatedb fresh5_gen\n"
            "psql -X -v ON_ERROR_STOP=1 -d fresh5_gen -f migrate.sql || status=$?\n"
            "dropdb --if-exists fresh5_gen\n"
        )
        return _job(step, fetch="pg-dumps", cleanup="migrations migrate.sql")

    return build


# ---------------------------------------------------------------------------------------------
# nginx -t


def nginx_config(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        _w(
            d / "conf" / "nginx.conf",
            "worker_processes 1;\npid logs/nginx.pid;\nerror_log stderr info;\n"
            "events { worker_connections 64; }\n"
            "http {\n    access_log off;\n    include conf.d/*.conf;\n}\n",
        )
        for i in range(n):
            directive = "proxy_passs" if i == bad else "proxy_pass"
            _w(
                d / "conf" / "conf.d" / f"site-{i:03d}.conf",
                f"upstream app_{i:03d} {{ server 127.0.0.1:{18000 + i}; }}\n"
                f"server {{\n    listen 127.0.0.1:{19000 + i};\n    server_name {rng.choice(WORDS)}-{i:03d}.acme.test;\n"
                f"    location / {{\n        proxy_set_header Host $host;\n        proxy_read_timeout {rng.randint(5, 60)}s;\n"
                f"        {directive} http://app_{i:03d};\n    }}\n    location /static/ {{ root html; expires 1h; }}\n}}\n",
            )
        step = (
            "mkdir -p logs html\n/usr/sbin/nginx -V\n"
            "ls conf/conf.d | wc -l\n"
            + SOURCES_TAR.format(paths="conf")
            + '/usr/sbin/nginx -t -p "$PWD" -c conf/nginx.conf -e stderr || status=$?\n'
        )
        return _job(step, fetch="nginx-modules", cleanup="conf")

    return build


# ---------------------------------------------------------------------------------------------
# Doxygen


def doxygen_project(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            pname = "offsett" if i == bad else "offset"
            _w(
                d / "include" / "acme" / f"mod_{i:03d}.h",
                f"/** @file mod_{i:03d}.h\n *  @brief Module {i:03d} of the billing library. */\n#pragma once\n\n"
                "namespace acme {\n\n"
                f"/** @brief Scores invoices of region {rng.choice(REGIONS)}. */\nclass Mod{i:03d} {{\n public:\n"
                f"  /** @brief Computes the score.\n   *  @param total the invoice total\n   *  @param {pname} the offset added\n   *  @return the score */\n"
                "  int score(int total, int offset) const;\n\n"
                "  /** @brief The label.\n   *  @return the module's label */\n  const char *label() const;\n};\n\n}  // namespace acme\n",
            )
        _w(
            d / "Doxyfile",
            "PROJECT_NAME = acme-billing\nINPUT = include\nRECURSIVE = YES\nOUTPUT_DIRECTORY = docs\n"
            "GENERATE_HTML = YES\nGENERATE_LATEX = YES\nEXTRACT_ALL = NO\nQUIET = NO\nWARNINGS = YES\n"
            "WARN_IF_UNDOCUMENTED = NO\nWARN_IF_DOC_ERROR = YES\nWARN_AS_ERROR = FAIL_ON_WARNINGS\n"
            "HAVE_DOT = NO\nSOURCE_BROWSER = YES\n",
        )
        step = "doxygen --version\ndoxygen Doxyfile || status=$?\n"
        return _job(step, fetch="doxygen-tags", cleanup="docs/html include")

    return build


# ---------------------------------------------------------------------------------------------
# clang++ (a template instantiation error)


def clangxx_template(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        _w(
            d / "include" / "acme" / "sum.hpp",
            textwrap.dedent(
                """\
                #pragma once
                #include <vector>

                namespace acme {

                template <typename T>
                int total_weight(const std::vector<T> &items) {
                  int total = 0;
                  for (const auto &item : items) {
                    total += item.weight * item.count;
                  }
                  return total;
                }

                }  // namespace acme
                """
            ),
        )
        for i in range(n):
            field = "int weigth;" if i == bad else "int weight;"
            unused = "int scratch = 0;" if rng.random() < 0.4 else ""
            _w(
                d / "src" / f"mod_{i:03d}.cpp",
                f'#include "acme/sum.hpp"\n#include <string>\n\nnamespace acme {{\n\n'
                f"struct Item{i:03d} {{\n  {field}\n  int count;\n}};\n\n"
                f"int score{i:03d}(int unused_param) {{\n  {unused}\n"
                f"  std::vector<Item{i:03d}> items{{{{{rng.randint(1, 9)}, 2}}, {{{rng.randint(1, 9)}, 3}}}};\n"
                f"  return total_weight(items) * {rng.randint(2, 97)};\n}}\n\n}}  // namespace acme\n",
            )
        _w(
            d / "Makefile",
            "CXX = clang++\nCXXFLAGS = -std=c++17 -O1 -g -Wall -Wextra -Iinclude\n"
            "SRCS = $(wildcard src/*.cpp)\nOBJS = $(patsubst src/%.cpp,obj/%.o,$(SRCS))\n\n"
            'all: libacme.a\n\nobj/%.o: src/%.cpp\n\t@mkdir -p obj\n\t@echo "  CXX     $@"\n\t$(CXX) $(CXXFLAGS) -c $< -o $@\n\n'
            "libacme.a: $(OBJS)\n\tar rcs $@ $^\n",
        )
        step = "clang++ --version\nmake --version | head -n 1\nmake -k -j2 all || status=$?\n"
        return _job(step, fetch="conan-cache", cleanup="obj src Makefile")

    return build


# ---------------------------------------------------------------------------------------------
# Python: a Hypothesis property under unittest, and black --check in a CI script


def hypothesis_roundtrip(files: int, per: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        _w(d / "acme" / "__init__.py", "")
        _w(
            d / "acme" / "codec.py",
            textwrap.dedent(
                """\
                def encode(fields):
                    return ";".join(f.replace("\\\\", "\\\\\\\\") for f in fields)


                def decode(line):
                    return line.split(";") if line else []
                """
            ),
        )
        _w(d / "tests" / "__init__.py", "")
        for f in range(files):
            lines = [
                "import unittest",
                "",
                "from hypothesis import given, settings",
                "from hypothesis import strategies as st",
                "",
                "from acme.codec import decode, encode",
                "",
                "",
                f"class CodecTest{f:02d}(unittest.TestCase):",
            ]
            for k in range(per):
                lo = rng.randint(1, 50)
                lines += [
                    f"    def test_sum_{k}(self):",
                    f"        self.assertEqual(sum(range({lo})), {lo * (lo - 1) // 2})",
                    "",
                ]
            if f == bad:
                alphabet = "st.characters(codec='ascii', exclude_characters='\\\\n')"
            else:
                alphabet = "st.sampled_from('abcdefghij0123456789')"
            lines += [
                "    @settings(derandomize=True, database=None, max_examples=200)",
                f"    @given(st.lists(st.text(alphabet={alphabet}, min_size=1), min_size=1))",
                "    def test_roundtrip(self, fields):",
                "        self.assertEqual(decode(encode(fields)), fields)",
                "",
            ]
            _w(d / "tests" / f"test_codec_{f:02d}.py", "\n".join(lines))
        step = (
            "python3 --version\npython3 -c 'import hypothesis; print(\"hypothesis\", hypothesis.__version__)'\n"
            "python3 -m unittest discover -v -s tests -t . || status=$?\n"
        )
        return _job(step, fetch="pip-wheels", cleanup="acme tests")

    return build


def _black_module(i: int, rng: random.Random, *, bad: bool) -> str:
    k = rng.randint(2, 97)
    lines = [
        f'"""Acme billing module {i:03d}."""',
        "",
        "import json",
        "",
        "",
        f"class Invoice{i:03d}:",
        "    def __init__(self, items):",
        "        self.items = items",
        "",
        "    def total(self):",
        f'        return sum(item["qty"] * {k} for item in self.items)',
        "",
        "",
        f"def summarize_{i:03d}(items):",
    ]
    if bad:
        lines.append(f"    options = {{ 'retries':3,'timeout' : 30, 'label':'invoice-{i:03d}' }}")
    else:
        lines.append(f'    options = {{"retries": 3, "timeout": 30, "label": "invoice-{i:03d}"}}')
    lines += [
        f'    return json.dumps({{"total": Invoice{i:03d}(items).total(), "options": options}})',
        "",
    ]
    return "\n".join(lines)


def black_check(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            _w(d / "src" / "acme" / f"mod_{i:03d}.py", _black_module(i, rng, bad=i == bad))
        _w(d / "src" / "acme" / "__init__.py", "")
        _w(d / "pyproject.toml", '[tool.black]\nline-length = 100\ntarget-version = ["py311"]\n')
        step = (
            "python3 --version\nblack --version\n"
            + SOURCES_TAR.format(paths="src pyproject.toml")
            + "python3 -m compileall -q src && echo 'bytecode ok'\n"
            "black --check --diff --verbose src/ || status=$?\n"
        )
        step += UPLOAD.format(files="pyproject.toml")
        return _job(step, fetch="pip-wheels", cleanup="src")

    return build


# ---------------------------------------------------------------------------------------------
# The cases


def scenarios() -> list[Scenario]:
    s: list[Scenario] = []
    s.append(
        Scenario(
            "java-ant-javac-incompatible-types",
            "java",
            "ant",
            "tar -cvf src.tar src resources && ant -v -noinput -buildfile build.xml jar",
            "src/acme/billing/Mod113.java: score assigns the String field label to int total (one of 240 classes; raw-type lint warnings)",
            [
                Needle(
                    r"\[javac\] .*src/acme/billing/Mod113\.java:\d+: error: incompatible types: String cannot be converted to int"
                )
            ],
            ant_javac(240, 113),
            version_cmd="ant -version",
        )
    )
    s.append(
        Scenario(
            "java-ant-junit-failure",
            "java",
            "ant junit",
            "ant -v -noinput -buildfile build.xml test (junit plain formatter, fork)",
            "test/acme/pricing/Pricing14Test.java: totalFor11Items expects the product + 1 (one of 900 tests in 30 classes; upload step after)",
            [
                Needle(
                    r"\[junit\] junit\.framework\.AssertionFailedError: expected:<\d+> but was:<\d+>"
                ),
                Needle(
                    r"\[junit\] \s*at acme\.pricing\.Pricing14Test\.totalFor11Items\(Pricing14Test\.java:\d+\)"
                ),
                Needle(r"\[junit\] Test acme\.pricing\.Pricing14Test FAILED"),
            ],
            ant_junit(30, 30, (14, 11)),
            version_cmd="ant -version",
        )
    )
    s.append(
        Scenario(
            "js-jest-failure",
            "javascript",
            "jest",
            "jest --ci --verbose --runInBand --colors=false --cacheDirectory=.jest-cache tests/",
            "tests/pricing-23.test.js: 'total for 17 items' expects the product + 1 (one of 1,500 tests in 50 files; todo tests, console.log output)",
            [
                Needle(r"● pricing-23 › total for 17 items"),
                Needle(r"^\s*Expected: \d+$"),
            ],
            jest_suite(50, 30, (23, 17)),
            version_cmd="jest --version",
        )
    )
    s.append(
        Scenario(
            "bash-bats-failure",
            "bash",
            "bats",
            "bats --formatter tap --timing --verbose-run --print-output-on-failure tests",
            "tests/deploy_05.bats: the test for step 12 expects base * 12 + 1 hosts (one of 400 tests in 20 files; skipped tests)",
            [
                Needle(r"^not ok \d+ deploy-05 step 12 touches \d+ hosts"),
                Needle(r"\(in test file tests/deploy_05\.bats, line \d+\)"),
                Needle(r"`\[ \"\$output\" -eq \d+ \]' failed"),
            ],
            bats_suite(20, 20, (5, 12)),
            version_cmd="bats --version",
        )
    )
    s.append(
        Scenario(
            "robot-framework-failing-keyword",
            "robot",
            "robot",
            "robot --loglevel DEBUG --consolewidth 100 --console verbose --pythonpath lib --outputdir out tests",
            "tests/orders_31.robot: 'Order 31 Total For 6 Items' checks Should Be Equal As Integers against the product + 1 (one of 1,000 tests in 40 suites; WARN log messages; upload step after)",
            [
                Needle(r"^Order 31 Total For 6 Items\s+\| FAIL \|"),
                Needle(r"^\d+ != \d+$"),
            ],
            robot_suite(40, 25, (31, 6)),
            version_cmd="robot --version; true",
        )
    )
    s.append(
        Scenario(
            "python-behave-failing-step",
            "python",
            "behave",
            "behave --no-color --format pretty --show-timings --no-capture -v features",
            "features/orders_08.feature: 'orders 08 total for 3 items' says the total is the product + 1 (one of 600 scenarios in 30 features)",
            [
                Needle(r"AssertionError: expected \d+, got \d+"),
                Needle(r"features/orders_08\.feature:\d+\s+orders 08 total for 3 items", last=True),
            ],
            behave_suite(30, 20, (8, 3)),
            version_cmd="behave --version",
        )
    )
    s.append(
        Scenario(
            "python-unittest-failure",
            "python",
            "unittest",
            "python3 -W default -m unittest discover -v -s tests -t .",
            "tests/test_pricing_19.py: test_total_22 expects the product + 1 (one of 1,600 tests in 40 files; skips and a DeprecationWarning)",
            [
                Needle(r"^FAIL: test_total_22 \(tests\.test_pricing_19\.PricingTest19"),
                Needle(r"^AssertionError: \d+ != \d+$"),
            ],
            unittest_suite(40, 40, (19, 22)),
            version_cmd="python3 --version",
        )
    )
    s.append(
        Scenario(
            "latex-pdflatex-undefined-control-sequence",
            "latex",
            "pdflatex",
            "pdflatex -interaction=nonstopmode -file-line-error -recorder main.tex",
            "chapters/ch14.tex: a paragraph uses \\hilight, a macro defined nowhere (one of 30 chapters; overfull-box and undefined-reference warnings; upload step after)",
            [
                Needle(r"chapters/ch14\.tex:\d+: Undefined control sequence\."),
                Needle(r"^l\.\d+ .*\\hilight"),
            ],
            pdflatex_doc(30, 14),
            version_cmd="pdflatex --version | head -n 1",
        )
    )
    s.append(
        Scenario(
            "asm-nasm-undefined-symbol",
            "assembly",
            "nasm",
            "make -k -j2 all (nasm -f elf64 -g -F dwarf -w+all per file)",
            "src/mod_057.asm: score_057 adds [offset_table], a symbol defined nowhere (one of 120 files; byte-overflow warnings)",
            [Needle(r"src/mod_057\.asm:\d+: error: symbol `offset_table' not defined")],
            nasm_project(120, 57),
            version_cmd="nasm -v",
        )
    )
    s.append(
        Scenario(
            "vala-valac-undefined-name",
            "vala",
            "valac",
            "valac -v -g --pkg gio-2.0 -d build -o acme src/*.vala",
            "src/mod_044.vala: score returns total + offset, a name that does not exist (one of 80 files)",
            [
                Needle(
                    r"src/mod_044\.vala:\d+\.\d+-\d+\.\d+: error: The name `offset' does not exist"
                )
            ],
            valac_compile(80, 44),
            version_cmd="valac --version",
        )
    )
    s.append(
        Scenario(
            "vala-assertion-failed",
            "vala",
            "vala run time",
            "valac -v -g -o report src/report.vala && ./report",
            "src/report.vala: bucket_of returns 10 for row 1900, so weight_of's assert (bucket < WEIGHTS.length) fails (of 2,500 logged rows; upload step after)",
            [Needle(r"ERROR:.*report\.vala:\d+:acme_weight_of: assertion failed: \(bucket < ")],
            vala_assert(2500, 1900),
            version_cmd="valac --version",
        )
    )
    s.append(
        Scenario(
            "sml-polyml-type-error",
            "sml",
            "Poly/ML",
            "poly --script build.sml (use of 160 structures)",
            "src/mod118.sml: score returns total * k + 0.5, an int added to a real (the 119th of 160 structures loaded in turn; non-exhaustive match warnings)",
            [
                Needle(r"src/mod118\.sml:\d+: error: Type error in function application"),
                Needle(r"Can't unify int .*with real"),
            ],
            polyml_build(160, 118),
            version_cmd="poly -v </dev/null",
        )
    )
    s.append(
        Scenario(
            "scheme-chicken-vector-ref",
            "scheme",
            "CHICKEN csc",
            "csc -v -O1 -d2 report.scm -o report && ./report",
            "report.scm: bucket-of returns 10 for row 2300, so weight-of indexes the 10-element weights vector out of range (of 3,000 logged rows; upload step after)",
            [Needle(r"^Error: \(vector-ref\) out of range")],
            chicken_vector_ref(3000, 2300),
            version_cmd="csc -version | grep -i version | head -n 1",
        )
    )
    s.append(
        Scenario(
            "coq-coqc-proof-failure",
            "coq",
            "coqc",
            "coqc -time -Q theories Acme theories/PricingNN.v, in order",
            "theories/Pricing07.v: Lemma total07_13 states the product + 1, so reflexivity fails (of 12 theories of 20 lemmas; -time reports every sentence)",
            [
                Needle(r'^File "\./theories/Pricing07\.v", line \d+, characters \d+-\d+:'),
                Needle(r"^Error: Unable to unify"),
            ],
            coq_theories(12, 20, (7, 13)),
            version_cmd="coqc --version | head -n 1",
        )
    )
    s.append(
        Scenario(
            "bison-expect-mismatch",
            "bison",
            "bison",
            "bison -Wall -Wcounterexamples --report=all -d parse.y",
            "parse.y: declares %expect 0, but the IF THEN / IF THEN ELSE rules have the dangling-else shift/reduce conflict (with 40 declaration rules; the report follows)",
            [
                Needle(r"^parse\.y: error: shift/reduce conflicts: 1 found, 0 expected"),
                Needle(r"^parse\.y: warning: shift/reduce conflict on token ELSE"),
            ],
            bison_grammar(40),
            version_cmd="bison --version | head -n 1",
        )
    )
    s.append(
        Scenario(
            "protobuf-protoc-undefined-type",
            "protobuf",
            "protoc",
            "protoc --proto_path=proto --cpp_out=gen/cpp --python_out=gen/python, per file",
            "proto/acme/billing/invoice_066.proto: the field amount has the type acme.common.Moneyy, defined nowhere (one of 150 files; unused-import warnings)",
            [
                Needle(
                    r'acme/billing/invoice_066\.proto:\d+:\d+: "acme\.common\.Moneyy" is not defined\.'
                )
            ],
            protoc_project(150, 66),
            version_cmd="protoc --version",
        )
    )
    s.append(
        Scenario(
            "sqlite3-unique-constraint",
            "sql",
            "sqlite3",
            "sqlite3 acme.db < load.sql (.bail on, .echo on)",
            "load.sql: invoice row 4000 reuses the id 3999, so the INSERT fails on the primary key (of 4,900 echoed inserts)",
            [Needle(r"UNIQUE constraint failed: invoices\.id")],
            sqlite_load(4900, 4000),
            version_cmd="sqlite3 --version",
        )
    )
    s.append(
        Scenario(
            "sql-psql-on-error-stop",
            "sql",
            "psql",
            "psql -X -v ON_ERROR_STOP=1 -d fresh5_gen -f migrate.sql (\\set ECHO all)",
            "migrations/027_*.sql: CREATE INDEX on invoices (customer_idd, total), a column that does not exist (the 28th of 45 migrations; NOTICEs for existing objects)",
            [
                Needle(
                    r'^psql:migrations/027_\w+\.sql:\d+: ERROR:\s+column "customer_idd" does not exist'
                )
            ],
            psql_migrations(45, 27),
            version_cmd="psql --version",
        )
    )
    s.append(
        Scenario(
            "nginx-t-unknown-directive",
            "nginx",
            "nginx -t",
            'nginx -t -p "$PWD" -c conf/nginx.conf -e stderr',
            "conf/conf.d/site-041.conf: the location uses proxy_passs, a directive that does not exist (one of 60 included sites)",
            [
                Needle(
                    r'\[emerg\] \d+#\d+: unknown directive "proxy_passs" in .*conf\.d/site-041\.conf:\d+'
                ),
                Needle(r"^nginx: configuration file .*conf/nginx\.conf test failed"),
            ],
            nginx_config(60, 41),
            version_cmd="/usr/sbin/nginx -v",
        )
    )
    s.append(
        Scenario(
            "doxygen-warn-as-error",
            "doxygen",
            "doxygen",
            "doxygen Doxyfile (WARN_AS_ERROR = FAIL_ON_WARNINGS)",
            "include/acme/mod_052.h: score's comment documents @param offsett, which is not an argument (one of 130 headers; HTML and LaTeX output follow)",
            [
                Needle(
                    r"include/acme/mod_052\.h:\d+: (error|warning): argument 'offsett' of command @param is not found"
                ),
                Needle(
                    r"include/acme/mod_052\.h:\d+: (error|warning): The following parameter of acme::Mod052::score"
                ),
            ],
            doxygen_project(130, 52),
            version_cmd="doxygen --version",
        )
    )
    s.append(
        Scenario(
            "cpp-clang-template-no-member",
            "cpp",
            "clang++",
            "make -k -j2 all (clang++ -std=c++17 -O1 -g -Wall -Wextra -c per file)",
            "src/mod_029.cpp: Item029 names its field weigth, so acme::total_weight<Item029> reads item.weight, which it lacks (one of 70 files; unused-variable and unused-parameter warnings)",
            [
                Needle(
                    r"include/acme/sum\.hpp:\d+:\d+: error: no member named 'weight' in 'acme::Item029'"
                ),
                Needle(
                    r"src/mod_029\.cpp:\d+:\d+: note: in instantiation of function template specialization 'acme::total_weight<acme::Item029>'"
                ),
            ],
            clangxx_template(70, 29),
            version_cmd="clang++ --version | head -n 1",
        )
    )
    s.append(
        Scenario(
            "python-hypothesis-falsifying-example",
            "python",
            "hypothesis (unittest)",
            "python3 -m unittest discover -v -s tests -t .",
            "acme/codec.py: encode joins fields with ';' without escaping it, so tests/test_codec_13.py's test_roundtrip (text over all ASCII) is falsified by a field holding ';' (one of 30 files of 30 tests and a round-trip property; the other properties draw from a safe alphabet)",
            [
                Needle(r"^(ERROR|FAIL): test_roundtrip \(tests\.test_codec_13\.CodecTest13"),
                Needle(r"^AssertionError: Lists differ: "),
                Needle(r"^(Falsifying example|Failing test case): test_roundtrip\("),
            ],
            hypothesis_roundtrip(30, 30, 13),
            version_cmd="python3 -c 'import hypothesis; print(\"hypothesis\", hypothesis.__version__)'",
        )
    )
    s.append(
        Scenario(
            "python-black-check",
            "python",
            "black",
            "tar -cvf src.tar src pyproject.toml && black --check --diff --verbose src/",
            "src/acme/mod_088.py: summarize_088's options dict is written with single quotes and odd spacing, which black would reformat (one of 160 files, the others formatted)",
            [Needle(r"^would reformat .*src/acme/mod_088\.py")],
            black_check(160, 88),
            version_cmd="black --version | head -n 1",
        )
    )
    return s


# ---------------------------------------------------------------------------------------------
# Running


def ensure_tools() -> None:
    """Install robotframework, behave, hypothesis and black (PyPI) and jest@29 (npm) into `TOOLS` (once)."""
    venv = TOOLS / "venv"
    if not (venv / "bin" / "black").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [
                str(venv / "bin" / "pip"),
                "install",
                "-q",
                "robotframework",
                "behave",
                "hypothesis",
                "black",
            ],
            check=True,
        )
    node = TOOLS / "node"
    if not (node / "node_modules" / ".bin" / "jest").exists():
        node.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "init", "-y"], cwd=node, check=True, capture_output=True)
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "jest@29"], cwd=node, check=True
        )


def main(argv: list[str] | None = None) -> int:
    return g.run_batch(
        argv,
        doc=__doc__,
        cases=scenarios(),
        prefix=PREFIX,
        batch=5,
        setup=ensure_tools,
        check=lambda row: g.check_needles(row, max_chars=500),
    )


if __name__ == "__main__":
    sys.exit(main())
