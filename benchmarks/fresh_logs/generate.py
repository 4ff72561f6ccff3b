"""Generate the fresh-logs held-out set: failing builds from real local toolchains, labelled first.

Every case is a small fixture project written into a temporary folder, with one injected fault
(or two or three, said per case), built or tested by a real tool with verbose flags and the
noise a CI job has (tool versions, retried downloads, warnings, progress, cleanup output after
the failure). The whole output of the job (stdout and stderr merged, as a CI log shows it) is
the log. The labels (`needles`) are decided from the injected fault alone: each needle is given
as a regular expression written with the fault (the file, line, symbol or test that was broken),
and the needle is the log line it selects (stripped of surrounding whitespace). Nothing here
imports or runs the package: the labels exist before any view of the logs is made.

Tools used (what `python benchmarks/fresh_logs/generate.py` needs; versions are written to every
case's `tool_version`):

- Debian packages: gcc, g++, make, cmake, default-jdk (javac/java), perl (prove), golang-go,
  ruby (minitest is bundled), php-cli, tar, coreutils (`timeout`), curl; installed with
  `apt-get install -y golang-go ruby php-cli` where missing;
- rustc/cargo (std only, no crates.io);
- node/npm: mocha and typescript from the npm registry (installed into `TOOLS/node`), node's own
  test runner; npm itself for a missing-version install;
- Python: pytest, mypy and sphinx from PyPI (installed into the venv `TOOLS/venv`), pip.

Run (from the project root; about 10-15 minutes on a loaded two-core machine):

    python benchmarks/fresh_logs/generate.py            # every case, rewrites logs/ and cases.jsonl
    python benchmarks/fresh_logs/generate.py --only ID  # some cases (their lines are replaced)

(A script, not a module: `benchmarks/fresh_logs.py` is the benchmark, and this folder has no
`__init__.py` so that `benchmarks.fresh_logs` stays that module.)

Logs larger than `GZIP_OVER` bytes are written gzipped (`logs/<id>.log.gz`); the benchmark reads
both transparently. Logs are not byte-for-byte reproducible (timings, addresses, temp paths),
the labels' rules are.
"""

# The fixture projects' sources are written inline: some of their lines are longer than ours.
# ruff: noqa: E501

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
LOGS = HERE / "logs"
CASES = HERE / "cases.jsonl"
BUILD_ROOT = Path(os.environ.get("FRESH_LOGS_BUILD", "/tmp/fresh_logs_build"))
TOOLS = Path(os.environ.get("FRESH_LOGS_TOOLS", "/tmp/fresh_tools"))
GZIP_OVER = 400_000
GENERATED = "2026-12-01"


@dataclass
class Needle:
    """A label rule: the first (or last) log line matching `pattern`; group `n` if present."""

    pattern: str
    last: bool = False


@dataclass
class Scenario:
    """One case: how to build the fixture, the job script, the injected fault and its labels."""

    case_id: str
    ecosystem: str
    tool: str
    command: str
    fault: str
    needles: list[Needle]
    build: Callable[[Path, random.Random], str]
    """Writes the fixture into the folder and returns the job's bash script."""
    version_cmd: str = ""
    seed: int = 0
    extra: dict[str, str] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# Shared job pieces


def _w(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


PREAMBLE = """\
set -x
uname -srm
nproc
echo "job started: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
"""

FLAKY_FETCH = """\
for attempt in 1 2 3; do
  if curl -sS --max-time 2 http://127.0.0.1:9/cache/{name}.tar.gz -o /dev/null; then break; fi
  echo "cache download failed (attempt $attempt/3), retrying in 1s"
  sleep 1
done
echo "cache miss: building from scratch"
"""

CLEANUP_TAR = """\
echo "--- saving build cache and artifacts ---"
tar -cvzf /tmp/fresh_logs_cache_$$.tgz {paths} 2>&1 || true
rm -f /tmp/fresh_logs_cache_$$.tgz
echo "cleanup done"
"""


def _job(body: str, *, fetch: str | None = None, cleanup: str | None = None) -> str:
    """A CI-like job: preamble, optional flaky cache fetch, the body, cleanup, exit status."""
    parts = [PREAMBLE]
    if fetch:
        parts.append(FLAKY_FETCH.format(name=fetch))
    parts.append("status=0\n")
    parts.append(body.rstrip() + "\n")
    if cleanup:
        parts.append(CLEANUP_TAR.format(paths=cleanup))
    parts.append('echo "job finished with status $status"\nexit $status\n')
    return "".join(parts)


def _run_step(cmd: str) -> str:
    return f"{cmd} || status=$?\n"


# ---------------------------------------------------------------------------------------------
# C with make


def _c_module(i: int, rng: random.Random, *, warn: bool) -> str:
    body = ['#include "common.h"', "#include <string.h>", ""]
    for k in range(rng.randint(2, 4)):
        body += [
            f"int mod_{i:03d}_f{k}(const int *values, int count)",
            "{",
            "    int total = 0;",
        ]
        if warn and k == 0:
            body += ["    int unused_scratch = count * 2;", "    unsigned int limit = 3;"]
            body += ["    for (int j = 0; j < count; j++) {", "        if (j < limit) total++;"]
            body += ["    }"]
        body += [
            "    for (int j = 0; j < count; j++) {",
            f"        total += values[j] * {rng.randint(2, 97)};",
            "    }",
            "    return total;",
            "}",
            "",
        ]
    return "\n".join(body)


def _c_project(d: Path, rng: random.Random, n: int) -> None:
    _w(d / "include" / "common.h", "#pragma once\n#include <stdio.h>\n#define ACME_VERSION 3\n")
    for i in range(n):
        _w(d / "src" / f"mod_{i:03d}.c", _c_module(i, rng, warn=rng.random() < 0.3))
    _w(
        d / "Makefile",
        textwrap.dedent(
            """\
            CC ?= gcc
            CFLAGS = -O2 -g -Wall -Wextra -std=c11 -Iinclude -DACME_BUILD=1 -fno-common
            SRCS := $(sort $(wildcard src/*.c))
            OBJS := $(patsubst src/%.c,obj/%.o,$(SRCS))
            ifeq ($(V),1)
            Q :=
            else
            Q := @
            endif

            all: libacme.a app

            obj/%.o: src/%.c
            \t@mkdir -p obj
            \t@echo "  CC      $@"
            \t$(Q)$(CC) $(CFLAGS) -c $< -o $@

            libacme.a: $(filter-out obj/main.o,$(OBJS))
            \t@echo "  AR      $@"
            \t$(Q)ar rcs $@ $^

            app: obj/main.o libacme.a
            \t@echo "  LD      $@"
            \t$(Q)$(CC) -o $@ obj/main.o -L. -lacme

            clean:
            \trm -rf obj libacme.a app
            .PHONY: all clean
            """
        ),
    )


def _c_main(d: Path, call: str) -> None:
    _w(
        d / "src" / "main.c",
        textwrap.dedent(
            f"""\
            #include "common.h"
            int mod_000_f0(const int *values, int count);
            int checksum_v2(const int *values, int count);

            int main(void)
            {{
                int values[4] = {{1, 2, 3, 4}};
                printf("%d\\n", mod_000_f0(values, 4));
                {call}
                return 0;
            }}
            """
        ),
    )


def c_make_compile(
    n: int, bad: int, line_fault: str, *, jobs: int = 1
) -> Callable[[Path, random.Random], str]:
    def build(d: Path, rng: random.Random) -> str:
        _c_project(d, rng, n)
        _c_main(d, "")
        path = d / "src" / f"mod_{bad:03d}.c"
        text = path.read_text().replace("    return total;", line_fault, 1)
        _w(path, text)
        return _job(
            _run_step(f"make V=1 -k -j{jobs} all"),
            fetch="c-deps",
            cleanup="obj src include Makefile",
        )

    return build


def c_make_link(n: int) -> Callable[[Path, random.Random], str]:
    def build(d: Path, rng: random.Random) -> str:
        _c_project(d, rng, n)
        _c_main(d, 'printf("%d\\n", checksum_v2(values, 4));')
        return _job(_run_step("make V=1 -j2 all"), cleanup="obj libacme.a")

    return build


# ---------------------------------------------------------------------------------------------
# C test binaries: segfault, sanitizer report, hang


def _c_test_runner(n: int, bad: int, fault: str) -> str:
    tests = []
    for i in range(n):
        name = f"test_parse_record_{i:04d}"
        body = (
            fault
            if i == bad
            else (f'    int v = parse_len("{"x" * (i % 7 + 1)}");\n    return v == {i % 7 + 1};')
        )
        tests.append(f"static int {name}(void)\n{{\n{body}\n}}\n")
    table = ",\n".join(
        f'    {{"test_parse_record_{i:04d}", test_parse_record_{i:04d}}}' for i in range(n)
    )
    return (
        textwrap.dedent(
            """\
            #include <stdio.h>
            #include <stdlib.h>
            #include <string.h>
            #include <unistd.h>

            static int parse_len(const char *s) { return (int)strlen(s); }
            struct record { char *name; int fields[3]; };
            static struct record *lookup_record(int id) { (void)id; return NULL; }
            static int sum_fields(const int *fields, int count)
            {
                int *copy = malloc(3 * sizeof(int));
                int total = 0;
                for (int i = 0; i <= count; i++) {
                    copy[i] = fields[i % 3];
                    total += copy[i];
                }
                free(copy);
                return total;
            }

            """
        )
        + "\n".join(tests)
        + "\nstruct tc { const char *name; int (*fn)(void); };\n"
        + "static const struct tc TESTS[] = {\n"
        + table
        + "\n};\n"
        + textwrap.dedent(
            """\
            int main(void)
            {
                setvbuf(stdout, NULL, _IONBF, 0);
                int n = (int)(sizeof(TESTS) / sizeof(TESTS[0]));
                int failed = 0;
                printf("[==========] Running %d tests from 1 test suite.\\n", n);
                for (int i = 0; i < n; i++) {
                    printf("[ RUN      ] %s\\n", TESTS[i].name);
                    int ok = TESTS[i].fn();
                    if (ok) printf("[       OK ] %s (0 ms)\\n", TESTS[i].name);
                    else { printf("[  FAILED  ] %s\\n", TESTS[i].name); failed++; }
                }
                printf("[==========] %d tests ran. %d failed.\\n", n, failed);
                return failed != 0;
            }
            """
        )
    )


def c_test_crash(n: int, bad: int, fault: str, *, cflags: str, runner: str) -> Callable[..., str]:
    def build(d: Path, rng: random.Random) -> str:
        _c_project(d, rng, 120)
        _c_main(d, "")
        _w(d / "tests" / "run_tests.c", _c_test_runner(n, bad, fault))
        _w(
            d / "check.mk",
            f"check: app\n\t$(CC) {cflags} -o run_tests tests/run_tests.c\n\t{runner}\n",
        )
        return _job(
            _run_step("make V=1 -j2 all") + _run_step("make -f Makefile -f check.mk check"),
            cleanup="obj",
        )

    return build


# ---------------------------------------------------------------------------------------------
# CMake / C++


def _cmake_widgets(d: Path, rng: random.Random, n: int, bad: int | None) -> None:
    lines = [
        "cmake_minimum_required(VERSION 3.16)",
        "project(widgets CXX)",
        "set(CMAKE_CXX_STANDARD 17)",
        "add_compile_options(-Wall -Wextra -Wshadow)",
        "file(GLOB WIDGET_SOURCES ${CMAKE_SOURCE_DIR}/src/*.cpp)",
        "list(SORT WIDGET_SOURCES)",
        "add_library(widgets STATIC ${WIDGET_SOURCES})",
        "target_include_directories(widgets PUBLIC ${CMAKE_SOURCE_DIR}/include)",
    ]
    _w(d / "CMakeLists.txt", "\n".join(lines) + "\n")
    _w(
        d / "include" / "widget.hpp",
        textwrap.dedent(
            """\
            #pragma once
            #include <string>
            #include <vector>
            #include <map>
            struct Widget { std::string name; double w; double h; std::vector<int> tags; };
            double widget_area(const Widget &w);
            """
        ),
    )
    for i in range(n):
        shadow = "    double total = 0; { double total = 1; (void)total; }\n" if i % 4 == 0 else ""
        result = (
            "    std::string label = widget_area(w) * factor;\n    return label.size();\n"
            if i == bad
            else "    return static_cast<std::size_t>(widget_area(w) * factor);\n"
        )
        _w(
            d / "src" / f"widget_{i:03d}.cpp",
            '#include "widget.hpp"\n#include <algorithm>\n#include <numeric>\n\n'
            f"std::size_t widget_{i:03d}_score(const Widget &w, int unused_{i})\n{{\n"
            f"    double factor = {rng.randint(2, 9)}.5;\n{shadow}"
            "    std::map<std::string, std::vector<int>> index{{w.name, w.tags}};\n"
            f"{result}}}\n",
        )
    _w(
        d / "src" / "area.cpp",
        '#include "widget.hpp"\ndouble widget_area(const Widget &w) { return w.w * w.h; }\n',
    )


def cmake_compile(n: int, bad: int) -> Callable[..., str]:
    def build(d: Path, rng: random.Random) -> str:
        _cmake_widgets(d, rng, n, bad)
        body = _run_step("cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo")
        body += _run_step("cmake --build build --verbose -- -k")
        return _job(body, cleanup="build/CMakeFiles")

    return build


def cmake_configure_after_build(n: int) -> Callable[..., str]:
    def build(d: Path, rng: random.Random) -> str:
        _cmake_widgets(d / "core", rng, n, None)
        _w(
            d / "plugins" / "CMakeLists.txt",
            textwrap.dedent(
                """\
                cmake_minimum_required(VERSION 3.16)
                project(widget_plugins CXX)
                set(CMAKE_CXX_STANDARD 17)
                find_package(Threads REQUIRED)
                message(STATUS "Looking for the widget plugin SDK")
                find_package(FrobnicateSDK 2.1 REQUIRED)
                add_library(plugins SHARED plugin.cpp)
                """
            ),
        )
        _w(d / "plugins" / "plugin.cpp", "int plugin_entry() { return 0; }\n")
        body = _run_step("cmake -S core -B build/core -DCMAKE_BUILD_TYPE=Release")
        body += _run_step("cmake --build build/core --verbose -j2")
        body += 'if [ "$status" = 0 ]; then\n'
        body += _run_step("cmake -S plugins -B build/plugins --log-level=VERBOSE")
        body += "fi\n"
        return _job(body, fetch="cmake-core")

    return build


def ctest_failure(n: int, bad: int) -> Callable[..., str]:
    def build(d: Path, rng: random.Random) -> str:
        _w(
            d / "CMakeLists.txt",
            textwrap.dedent(
                f"""\
                cmake_minimum_required(VERSION 3.16)
                project(matrix CXX)
                set(CMAKE_CXX_STANDARD 17)
                enable_testing()
                add_executable(matrix_tests tests/test_main.cpp)
                foreach(i RANGE 0 {n - 1})
                  add_test(NAME matrix_det_${{i}} COMMAND matrix_tests ${{i}})
                endforeach()
                """
            ),
        )
        _w(
            d / "tests" / "test_main.cpp",
            textwrap.dedent(
                f"""\
                #include <cstdio>
                #include <cstdlib>
                #define CHECK_EQ(a, b) do {{ long _a = (a), _b = (b); if (_a != _b) {{ \\
                    std::printf("CHECK FAILED %s:%d: %s == %s (%ld vs %ld)\\n", __FILE__, __LINE__, #a, #b, _a, _b); \\
                    return 1; }} }} while (0)
                static long det2(long a, long b, long c, long d) {{ return a * d - b * c; }}
                static long det2_fast(long a, long b, long c, long d, int i) {{
                    return i == {bad} ? a * d - b * c - 1 : a * d - b * c;
                }}
                int main(int argc, char **argv) {{
                    int i = argc > 1 ? std::atoi(argv[1]) : 0;
                    for (int k = 0; k < 20; k++) std::printf("case %d: step %d ok\\n", i, k);
                    CHECK_EQ(det2_fast(i, 2, 3, i + 4, i), det2(i, 2, 3, i + 4));
                    std::printf("case %d passed\\n", i);
                    return 0;
                }}
                """
            ),
        )
        body = _run_step("cmake -S . -B build")
        body += _run_step("cmake --build build -j2")
        body += _run_step("ctest --test-dir build --output-on-failure -V -j2")
        return _job(body, cleanup="build/Testing")

    return build


# ---------------------------------------------------------------------------------------------
# Rust


def cargo_workspace(n: int, bad: int, bad_line: str) -> Callable[..., str]:
    def build(d: Path, rng: random.Random) -> str:
        members = [f"crates/crate_{i:02d}" for i in range(n)]
        _w(
            d / "Cargo.toml",
            '[workspace]\nresolver = "2"\nmembers = [\n'
            + "".join(f'    "{m}",\n' for m in members)
            + "]\n",
        )
        for i in range(n):
            deps = "" if i == 0 else f'crate_{i - 1:02d} = {{ path = "../crate_{i - 1:02d}" }}\n'
            _w(
                d / members[i] / "Cargo.toml",
                f'[package]\nname = "crate_{i:02d}"\nversion = "0.{i}.0"\nedition = "2021"\n'
                f"\n[dependencies]\n{deps}",
            )
            if i % 5 == 0:
                _w(
                    d / members[i] / "build.rs",
                    'fn main() {\n    println!("cargo:rerun-if-changed=build.rs");\n'
                    f'    println!("cargo:rustc-env=CRATE_BUILD_ID={i}");\n'
                    f'    println!("cargo:warning=crate_{i:02d}: using bundled tables");\n}}\n',
                )
            mods = []
            for k in range(4):
                body = (
                    bad_line
                    if (i == bad and k == 2)
                    else f"    let scale: u64 = {rng.randint(2, 99)};\n    width * height * scale"
                )
                unused = "    let unused_margin = 3;\n" if k == 1 else ""
                _w(
                    d / members[i] / "src" / f"geom_{k}.rs",
                    f"/// Area helpers {k}.\npub fn area_{k}(width: u64, height: u64) -> u64 {{\n"
                    f"{unused}{body}\n}}\n",
                )
                mods.append(f"pub mod geom_{k};")
            _w(d / members[i] / "src" / "lib.rs", "\n".join(mods) + "\n")
        return _job(
            _run_step("cargo build -vv --offline --workspace"),
            fetch="cargo-target",
            cleanup="target/debug/.fingerprint",
        )

    return build


def cargo_tests(n: int, bad: int) -> Callable[..., str]:
    def build(d: Path, rng: random.Random) -> str:
        _w(d / "Cargo.toml", '[package]\nname = "ledger"\nversion = "1.4.0"\nedition = "2021"\n')
        tests = []
        for i in range(n):
            expected = i * 3 + 1 if i != bad else i * 3 + 2
            tests.append(
                f"    #[test]\n    fn balance_case_{i:04d}() {{\n"
                f"        assert_eq!(balance({i}), {expected});\n    }}\n"
            )
        _w(
            d / "src" / "lib.rs",
            "/// The ledger balance after `n` postings.\npub fn balance(n: u64) -> u64 {\n"
            "    n * 3 + 1\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n"
            + "\n".join(tests)
            + "}\n",
        )
        return _job(
            _run_step("cargo test --offline -v -- --test-threads=1"),
            cleanup="target/debug/deps",
        )

    return build


# ---------------------------------------------------------------------------------------------
# Java


def javac_classes(n: int, bad: int, *, verbose: bool) -> Callable[..., str]:
    def build(d: Path, rng: random.Random) -> str:
        pkg = d / "src" / "com" / "acme" / "billing"
        _w(
            pkg / "Ledger.java",
            "package com.acme.billing;\n\npublic class Ledger {\n"
            "    public static int reconcile(int a) { return a + 1; }\n}\n",
        )
        for i in range(n):
            call = (
                "Ledger.reconcileAll(items.size())"
                if i == bad
                else "Ledger.reconcile(items.size())"
            )
            warn = (
                "        java.util.List raw = new java.util.ArrayList();\n"
                '        raw.add("x");\n'
                "        Integer boxed = new Integer(5);\n"
                if i % 3 == 0
                else ""
            )
            _w(
                pkg / f"Invoice{i:03d}.java",
                "package com.acme.billing;\n\nimport java.util.ArrayList;\nimport java.util.List;\n\n"
                f"public class Invoice{i:03d} {{\n"
                "    private final List<String> items = new ArrayList<>();\n\n"
                "    public int total() {\n"
                f"{warn}"
                f"        int base = {rng.randint(1, 500)};\n"
                f"        return base + {call};\n"
                "    }\n}\n",
            )
        flags = "-verbose " if verbose else ""
        body = "mkdir -p out\n"
        body += "find src -name '*.java' | sort > sources.txt\n"
        body += _run_step(
            f"javac {flags}-Xlint:all -Xmaxwarns 100000 -Xmaxerrs 1000 -d out @sources.txt"
        )
        return _job(body, cleanup="src")

    return build


def java_runtime(n: int, bad: int) -> Callable[..., str]:
    def build(d: Path, rng: random.Random) -> str:
        _w(
            d / "src" / "com" / "acme" / "sync" / "Ledger.java",
            textwrap.dedent(
                f"""\
                package com.acme.sync;

                public class Ledger {{
                    static int balance(int account) {{
                        return account * 7 % 1000;
                    }}

                    static void check(int account, int expected) {{
                        int got = balance(account);
                        if (got != expected) {{
                            throw new IllegalStateException(
                                "ledger balance mismatch for account " + account
                                + ": expected " + expected + " got " + got);
                        }}
                    }}

                    public static void main(String[] args) {{
                        java.util.logging.Logger log = java.util.logging.Logger.getLogger("sync");
                        for (int a = 0; a < {n}; a++) {{
                            System.out.println("INFO  [sync-worker-" + (a % 4) + "] reconciled account "
                                + a + " balance=" + balance(a) + " status=OK");
                            if (a % 97 == 0) {{
                                log.warning("slow upstream response for batch " + a);
                            }}
                            int expected = a == {bad} ? balance(a) + 1 : balance(a);
                            check(a, expected);
                        }}
                    }}
                }}
                """
            ),
        )
        body = "mkdir -p out\n"
        body += _run_step("javac -Xlint:all -d out src/com/acme/sync/Ledger.java")
        body += _run_step("java -cp out com.acme.sync.Ledger")
        return _job(body, cleanup="out src")

    return build


# ---------------------------------------------------------------------------------------------
# Python


def pytest_suite(
    files: int, per: int, bad: list[tuple[int, int]], *, warn: bool
) -> Callable[..., str]:
    def build(d: Path, rng: random.Random) -> str:
        _w(
            d / "pricing" / "__init__.py",
            "def total(qty: int, unit: int) -> int:\n    return qty * unit\n\n\n"
            "def legacy_total(qty, unit):\n    import warnings\n\n"
            "    warnings.warn('legacy_total is deprecated, use total', DeprecationWarning, stacklevel=2)\n"
            "    return qty * unit\n",
        )
        for f in range(files):
            rows = []
            for k in range(per):
                expected = k * (f + 1)
                if (f, k) in bad:
                    expected += 1
                rows.append(f"    ({k}, {expected}),")
            fn = "legacy_total" if warn and f % 3 == 0 else "total"
            _w(
                d / "tests" / f"test_pricing_{f:02d}.py",
                f"import pytest\n\nfrom pricing import {fn}\n\n\n"
                "@pytest.mark.parametrize(\n    ('qty', 'expected'),\n    [\n"
                + "\n".join(rows)
                + "\n    ],\n)\n"
                f"def test_total(qty, expected):\n    assert {fn}(qty, {f + 1}) == expected\n",
            )
        _w(d / "pyproject.toml", "[tool.pytest.ini_options]\npythonpath = ['.']\n")
        return _job(
            _run_step(f"{TOOLS}/venv/bin/python -m pytest -v -p no:cacheprovider tests"),
            cleanup="tests",
        )

    return build


def pytest_deep_traceback(files: int, per: int, bad: tuple[int, int]) -> Callable[..., str]:
    def build(d: Path, rng: random.Random) -> str:
        _w(
            d / "money" / "__init__.py",
            "CODES = {'EUR': 2, 'USD': 2, 'JPY': 0}\n\n\n"
            "def exponent(code: str) -> int:\n"
            "    if code not in CODES:\n"
            "        raise ValueError(f'invalid currency code {code!r}')\n"
            "    return CODES[code]\n\n\n"
            "def parse_amount(text: str) -> int:\n"
            "    value, code = text.split()\n"
            "    return round(float(value) * 10 ** exponent(code))\n\n\n"
            "def total(lines: list[str]) -> int:\n"
            "    return sum(parse_amount(line) for line in lines)\n",
        )
        for f in range(files):
            rows = []
            for k in range(per):
                code = "XTS" if (f, k) == bad else ("EUR", "USD")[k % 2]
                rows.append(f"    ({k}, '{code}'),")
            _w(
                d / "tests" / f"test_money_{f:02d}.py",
                "import pytest\n\nfrom money import exponent, total\n\n\n"
                "@pytest.mark.parametrize(\n    ('k', 'code'),\n    [\n"
                + "\n".join(rows)
                + "\n    ],\n)\n"
                "def test_total(k, code):\n"
                "    assert total([f'{k}.5 {code}', f'1 {code}']) == round((k + 1.5) * 10 ** exponent(code))\n",
            )
        _w(d / "pyproject.toml", "[tool.pytest.ini_options]\npythonpath = ['.']\n")
        return _job(
            _run_step(f"{TOOLS}/venv/bin/python -m pytest -v -p no:cacheprovider tests"),
            cleanup="tests money",
        )

    return build


def pytest_collection_error(files: int, per: int, bad: int) -> Callable[..., str]:
    def build(d: Path, rng: random.Random) -> str:
        _w(d / "shop" / "__init__.py", "def price(x: int) -> int:\n    return x * 2\n")
        for f in range(files):
            imp = "from shop.yaml_compat import load_prices\n" if f == bad else ""
            _w(
                d / "tests" / f"test_shop_{f:02d}.py",
                f"import pytest\n{imp}\nfrom shop import price\n\n\n"
                f"@pytest.mark.parametrize('x', range({per}))\n"
                "def test_price(x):\n    assert price(x) == 2 * x\n",
            )
        _w(d / "pyproject.toml", "[tool.pytest.ini_options]\npythonpath = ['.']\n")
        return _job(
            _run_step(
                f"{TOOLS}/venv/bin/python -m pytest -v -p no:cacheprovider "
                "--continue-on-collection-errors tests"
            )
        )

    return build


def mypy_package(n: int, bad: int, *, verbose: bool) -> Callable[..., str]:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            ret = '    return f"{count}"\n' if i == bad else "    return count * 2\n"
            _w(
                d / "inventory" / f"mod_{i:03d}.py",
                "from __future__ import annotations\n\n\n"
                f"def stock_{i:03d}(count: int) -> int:\n"
                f"    reveal_type(count)\n{ret}\n\n"
                f"def label_{i:03d}(name: str) -> str:\n    reveal_type(name)\n"
                "    return name.upper()\n",
            )
        _w(d / "inventory" / "__init__.py", "")
        flags = "-v " if verbose else ""
        return _job(
            _run_step(f"{TOOLS}/venv/bin/python -m mypy {flags}--strict --no-incremental inventory")
        )

    return build


def sphinx_docs(n: int, bad: int) -> Callable[..., str]:
    def build(d: Path, rng: random.Random) -> str:
        docs = d / "docs"
        _w(docs / "conf.py", "project = 'acme'\nextensions = []\nexclude_patterns = ['_build']\n")
        pages = [f"page_{i:03d}" for i in range(n)]
        _w(
            docs / "index.rst",
            "Acme\n====\n\n.. toctree::\n   :maxdepth: 1\n\n" + "".join(f"   {p}\n" for p in pages),
        )
        for i, p in enumerate(pages):
            ref = ":ref:`billing-overview-legacy`" if i == bad else f":ref:`sec-{i:03d}`"
            _w(
                docs / f"{p}.rst",
                f".. _sec-{i:03d}:\n\nSection {i}\n{'=' * (8 + len(str(i)))}\n\n"
                + "Lorem ipsum dolor sit amet. " * 8
                + f"\n\nSee {ref} for details.\n\n"
                + "".join(f"* item {k}\n" for k in range(10)),
            )
        return _job(
            _run_step(
                f"{TOOLS}/venv/bin/sphinx-build -v -v -W --keep-going -b html docs docs/_build/html"
            ),
            cleanup="docs/_build/html/_static",
        )

    return build


def pip_missing_version() -> Callable[..., str]:
    def build(d: Path, rng: random.Random) -> str:
        _w(d / "requirements.txt", "six\nidna\ncharset-normalizer\nrequests==99.0.0\n")
        body = _run_step("python3 -m venv .venv")
        body += _run_step(
            ".venv/bin/python -m pip install -vvv --no-cache-dir six idna urllib3 certifi"
        )
        body += _run_step(".venv/bin/python -m pip install -vvv --no-cache-dir -r requirements.txt")
        return _job(body)

    return build


def python_etl_traceback(rows: int, bad: int) -> Callable[..., str]:
    def build(d: Path, rng: random.Random) -> str:
        _w(
            d / "etl" / "transform.py",
            textwrap.dedent(
                """\
                import logging

                log = logging.getLogger("etl.transform")


                def normalise_row(row):
                    customer = row["customer_id"]
                    return {"customer": customer, "amount": round(row["amount"] * 1.2, 2)}
                """
            ),
        )
        _w(d / "etl" / "__init__.py", "")
        _w(
            d / "run_etl.py",
            textwrap.dedent(
                f"""\
                import logging
                from etl.transform import normalise_row

                logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
                log = logging.getLogger("etl.run")

                def rows():
                    for i in range({rows}):
                        row = {{"customer_id": 1000 + i, "amount": i * 0.5}}
                        if i == {bad}:
                            row = {{"customer": 1000 + i, "amount": i * 0.5}}
                        yield row

                for i, row in enumerate(rows()):
                    out = normalise_row(row)
                    if i % 500 == 0:
                        log.warning("batch %d: upstream latency above 2s, retrying slow shard", i)
                    log.info("normalised row %d -> customer=%s amount=%s", i, out["customer"], out["amount"])
                """
            ),
        )
        return _job(_run_step("python3 run_etl.py"), fetch="etl-snapshot")

    return build


# ---------------------------------------------------------------------------------------------
# Node


def _node_env(d: Path) -> None:
    (d / "node_modules").symlink_to(TOOLS / "node" / "node_modules")


def mocha_suite(files: int, per: int, bad: tuple[int, int]) -> Callable[..., str]:
    def build(d: Path, rng: random.Random) -> str:
        _node_env(d)
        _w(d / "lib" / "pricing.js", "exports.total = (qty, unit) => qty * unit;\n")
        for f in range(files):
            its = []
            for k in range(per):
                expected = k * (f + 2) + (1 if (f, k) == bad else 0)
                its.append(
                    f"  it('computes total for {k} items', () => {{\n"
                    f"    assert.strictEqual(total({k}, {f + 2}), {expected});\n  }});\n"
                )
            _w(
                d / "test" / f"pricing_{f:02d}.test.js",
                "const assert = require('assert');\nconst { total } = require('../lib/pricing');\n\n"
                f"describe('pricing {f:02d}', () => {{\n" + "".join(its) + "});\n",
            )
        return _job(
            _run_step("node_modules/.bin/mocha --no-color --reporter spec 'test/*.test.js'"),
            fetch="npm-cache",
        )

    return build


def tsc_project(n: int, bad: int) -> Callable[..., str]:
    def build(d: Path, rng: random.Random) -> str:
        _node_env(d)
        _w(
            d / "tsconfig.json",
            json.dumps(
                {
                    "compilerOptions": {
                        "strict": True,
                        "target": "es2020",
                        "module": "commonjs",
                        "outDir": "dist",
                        "rootDir": "src",
                    },
                    "include": ["src/**/*.ts"],
                },
                indent=2,
            ),
        )
        for i in range(n):
            val = '"twelve"' if i == bad else str(rng.randint(1, 99))
            _w(
                d / "src" / f"mod_{i:03d}.ts",
                f"export interface Order{i} {{ id: number; qty: number }}\n"
                f"export function orderQty{i}(o: Order{i}): number {{\n"
                f"  const minimum: number = {val};\n  return Math.max(o.qty, minimum);\n}}\n",
            )
        return _job(
            _run_step(
                "node_modules/.bin/tsc -p . --listFiles --extendedDiagnostics --pretty false"
            ),
            cleanup="dist",
        )

    return build


def npm_missing_version() -> Callable[..., str]:
    def build(d: Path, rng: random.Random) -> str:
        _w(
            d / "package.json",
            json.dumps({"name": "acme-web", "version": "1.0.0", "private": True}, indent=2),
        )
        body = "export npm_config_cache=$PWD/.npm-cache\n"
        body += _run_step(
            "npm install --no-audit --no-fund --loglevel silly js-yaml@4 debug@4 commander@11 "
            "semver@7 chalk@4 yargs@17"
        )
        body += _run_step("npm install --no-audit --no-fund --loglevel silly mocha@99.0.0")
        return _job(body)

    return build


def node_test_runner(n: int, bad: int) -> Callable[..., str]:
    def build(d: Path, rng: random.Random) -> str:
        cases = "".join(
            f"  test('applies discount for tier {i}', () => {{\n"
            f"    assert.strictEqual(discount({i}), {(i * 5) % 100 + (1 if i == bad else 0)});\n  }});\n"
            for i in range(n)
        )
        _w(
            d / "test" / "discount.test.mjs",
            "import { test, describe } from 'node:test';\nimport assert from 'node:assert';\n\n"
            "const discount = (tier) => (tier * 5) % 100;\n\n"
            f"describe('discounts', () => {{\n{cases}}});\n",
        )
        return _job(_run_step("node --test --test-reporter=tap test/"), cleanup="test")

    return build


# ---------------------------------------------------------------------------------------------
# Perl


def perl_prove(
    files: int, per: int, bad: tuple[int, int] | None, syntax: int | None
) -> Callable[..., str]:
    def build(d: Path, rng: random.Random) -> str:
        _w(
            d / "lib" / "Acme" / "Header.pm",
            "package Acme::Header;\nuse strict;\nuse warnings;\n\n"
            "sub field_len { my ($s) = @_; return length $s; }\n\n1;\n",
        )
        report = (
            "package Acme::Report;\nuse strict;\nuse warnings;\n\n"
            "sub render {\n    my ($rows) = @_;\n    my $out = ''\n"
            "    for my $r (@$rows) { $out .= join(',', @$r) . \"\\n\" }\n    return $out;\n}\n\n1;\n"
        )
        if syntax is None:
            report = report.replace("my $out = ''\n", "my $out = '';\n")
        _w(d / "lib" / "Acme" / "Report.pm", report)
        for f in range(files):
            uses = "use Acme::Report;\n" if f == syntax else ""
            oks = []
            for k in range(per):
                expected = len("x" * (k + 1)) + (1 if bad == (f, k) else 0)
                oks.append(
                    f"is(Acme::Header::field_len('{'x' * (k + 1)}'), {expected}, "
                    f"'parses header field {k}');\n"
                )
            _w(
                d / "t" / f"{f:03d}_header.t",
                "use strict;\nuse warnings;\nuse Test::More;\nuse Acme::Header;\n"
                + uses
                + "".join(oks)
                + "done_testing();\n",
            )
        return _job(_run_step("prove -v -Ilib t/"), cleanup="t")

    return build


# ---------------------------------------------------------------------------------------------
# Go


GO_ENV = "export GOFLAGS=-mod=mod GOCACHE=$PWD/.gocache GOPATH=$PWD/.gopath GOPROXY=off\n"
"""Go offline: std only, caches inside the fixture."""


def _go_module(d: Path, rng: random.Random, n: int) -> None:
    _w(d / "go.mod", "module example.com/acme\n\ngo 1.19\n")
    for i in range(n):
        _w(
            d / f"pkg{i:02d}" / "calc.go",
            f'package pkg{i:02d}\n\nimport "fmt"\n\n'
            "// Scale multiplies.\nfunc Scale(x int) int { return x * "
            f"{rng.randint(2, 9)} }}\n\n"
            '// Describe formats.\nfunc Describe(x int) string { return fmt.Sprintf("%d", x) }\n',
        )


def go_test(n: int, bad: int, *, panic: bool) -> Callable[..., str]:
    def build(d: Path, rng: random.Random) -> str:
        _go_module(d, rng, n)
        for i in range(n):
            cases = []
            for k in range(25):
                cases.append(f'\t\t{{"case_{k:02d}", {k}, Scale({k})}},')
            check = "\t\t\tif got := Scale(c.in); got != c.want {\n"
            check += '\t\t\t\tt.Errorf("Scale(%d) = %d, want %d", c.in, got, c.want)\n\t\t\t}\n'
            extra = ""
            if i == bad and not panic:
                cases[17] = '\t\t{"case_17", 17, Scale(17) + 1},'
            if i == bad and panic:
                extra = (
                    "\nfunc TestWindow(t *testing.T) {\n\tbuf := []int{1, 2, 3}\n"
                    '\tfor j := 0; j <= 5; j++ {\n\t\tt.Logf("window %d", buf[j])\n\t}\n}\n'
                )
            _w(
                d / f"pkg{i:02d}" / "calc_test.go",
                f'package pkg{i:02d}\n\nimport "testing"\n\n'
                "func TestScale(t *testing.T) {\n\tcases := []struct {\n\t\tname string\n"
                "\t\tin   int\n\t\twant int\n\t}{\n"
                + "\n".join(cases)
                + "\n\t}\n\tfor _, c := range cases {\n\t\tc := c\n"
                "\t\tt.Run(c.name, func(t *testing.T) {\n" + check + "\t\t})\n\t}\n}\n" + extra,
            )
        return _job(
            GO_ENV + _run_step("go test -v -count=1 -p 2 ./..."),
            fetch="go-build-cache",
        )

    return build


def go_build_error(n: int, bad: int) -> Callable[..., str]:
    def build(d: Path, rng: random.Random) -> str:
        _go_module(d, rng, n)
        path = d / f"pkg{bad:02d}" / "calc.go"
        _w(
            path,
            path.read_text()
            + "\n// Round rounds.\nfunc Round(x float64) int { return roundHalfEven(x) }\n",
        )
        return _job(
            GO_ENV + _run_step("go build -v -x ./..."),
            cleanup=".gocache",
        )

    return build


def go_vet(n: int, bad: int) -> Callable[..., str]:
    def build(d: Path, rng: random.Random) -> str:
        _go_module(d, rng, n)
        path = d / f"pkg{bad:02d}" / "report.go"
        _w(
            path,
            f'package pkg{bad:02d}\n\nimport "fmt"\n\n// Report prints.\n'
            'func Report(name string) {\n\tfmt.Printf("%d items for %s\\n", name, name)\n}\n',
        )
        body = GO_ENV
        body += _run_step("go build -v -x ./...")
        body += _run_step("go vet ./...")
        return _job(body)

    return build


# ---------------------------------------------------------------------------------------------
# Ruby


def ruby_minitest(files: int, per: int, bad: tuple[int, int]) -> Callable[..., str]:
    def build(d: Path, rng: random.Random) -> str:
        _w(
            d / "lib" / "invoice.rb",
            "module Invoice\n  def self.total(qty, unit) = qty * unit\nend\n",
        )
        for f in range(files):
            tests = []
            for k in range(per):
                expected = k * (f + 3) + (1 if (f, k) == bad else 0)
                tests.append(
                    f"  def test_total_{k:03d}\n    assert_equal {expected}, "
                    f"Invoice.total({k}, {f + 3})\n  end\n"
                )
            _w(
                d / "test" / f"invoice_{f:02d}_test.rb",
                "require 'minitest/autorun'\nrequire 'invoice'\n\n"
                f"class Invoice{f:02d}Test < Minitest::Test\n" + "".join(tests) + "end\n",
            )
        return _job(
            _run_step(
                'ruby -w -Ilib -Itest -e \'Dir["test/*_test.rb"].sort.each { |f| require "./" + f }\''
                " -- -v --seed 4242"
            ),
            fetch="bundler-cache",
        )

    return build


def ruby_nomethod(rows: int, bad: int) -> Callable[..., str]:
    def build(d: Path, rng: random.Random) -> str:
        _w(
            d / "lib" / "acme" / "report.rb",
            textwrap.dedent(
                """\
                module Acme
                  class Report
                    def initialize(rows) = @rows = rows

                    def render
                      @rows.each_with_index.map do |row, i|
                        warn "deprecated: row format v1 for row #{i}" if (i % 400).zero?
                        "#{row[:id]},#{row[:at].strftime('%Y-%m-%d')},#{row[:amount]}"
                      end
                    end
                  end
                end
                """
            ),
        )
        _w(
            d / "bin" / "export",
            textwrap.dedent(
                f"""\
                require 'acme/report'
                rows = (0...{rows}).map {{ |i| {{ id: i, at: (i == {bad} ? nil : Time.at(1_700_000_000 + i)), amount: i * 3 }} }}
                rows.each_slice(250) {{ |s| puts "loaded #{{s.size}} rows (first id #{{s.first[:id]}})" }}
                rows.each {{ |r| puts "export row #{{r[:id]}}" }}
                puts Acme::Report.new(rows).render.first(3)
                """
            ),
        )
        return _job(_run_step("ruby -Ilib bin/export"))

    return build


# ---------------------------------------------------------------------------------------------
# PHP


def php_lint(n: int, bad: int) -> Callable[..., str]:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            body = (
                "        return array_sum($items) * 2\n    }\n"
                if i == bad
                else "        return array_sum($items) * 2;\n    }\n"
            )
            _w(
                d / "src" / f"Mod{i:03d}.php",
                f"<?php\nnamespace Acme;\n\nfinal class Mod{i:03d}\n{{\n"
                "    public function total(array $items): int\n    {\n" + body + "}\n",
            )
        body = "errors=0\n"
        body += 'for f in src/*.php; do php -l "$f" || errors=$((errors+1)); done\n'
        body += '[ "$errors" = 0 ] || status=1\n'
        return _job(body, cleanup="src")

    return build


def php_fatal(n: int, bad: int) -> Callable[..., str]:
    def build(d: Path, rng: random.Random) -> str:
        _w(
            d / "src" / "Importer.php",
            textwrap.dedent(
                """\
                <?php
                declare(strict_types=1);
                namespace Acme;

                final class Importer
                {
                    public function price(string $sku, int $cents): float
                    {
                        return $cents / 100;
                    }
                }
                """
            ),
        )
        _w(
            d / "import.php",
            textwrap.dedent(
                f"""\
                <?php
                declare(strict_types=1);
                require __DIR__ . '/src/Importer.php';
                $imp = new Acme\\Importer();
                for ($i = 0; $i < {n}; $i++) {{
                    $cents = $i === {bad} ? "12.50" : $i * 10;
                    if ($i % 300 === 0) {{
                        trigger_error("Deprecated feed format in batch $i", E_USER_DEPRECATED);
                    }}
                    echo "imported SKU-$i price=" . $imp->price("SKU-$i", $cents) . PHP_EOL;
                }}
                """
            ),
        )
        return _job(_run_step("php -d error_reporting=E_ALL -d display_errors=stderr import.php"))

    return build


# ---------------------------------------------------------------------------------------------
# Shell steps after a long successful build


def shell_deploy_after_build(n: int) -> Callable[..., str]:
    def build(d: Path, rng: random.Random) -> str:
        _c_project(d, rng, n)
        _c_main(d, "")
        body = _run_step("make V=1 -j2 all")
        body += 'if [ "$status" = 0 ]; then\n'
        body += "  mkdir -p dist && tar -cvzf dist/acme-3.0.tgz app libacme.a include\n"
        body += _run_step("  cp -v dist/acme-3.0.tgz /srv/releases/acme/3.0/")
        body += "fi\n"
        return _job(body, cleanup="obj")

    return build


def shell_command_not_found(n: int) -> Callable[..., str]:
    def build(d: Path, rng: random.Random) -> str:
        _cmake_widgets(d, rng, n, None)
        _w(
            d / "scripts" / "gen_protos.sh",
            '#!/bin/bash\nset -e\necho "generating protobuf stubs"\n'
            'for p in api billing users; do\n  echo "  proto/$p.proto"\ndone\n'
            "protoc-gen-acme --out=gen proto/*.proto\necho done\n",
        )
        body = _run_step("cmake -S . -B build")
        body += _run_step("cmake --build build --verbose -j2")
        body += _run_step("bash scripts/gen_protos.sh")
        return _job(body, cleanup="build/CMakeFiles")

    return build


# ---------------------------------------------------------------------------------------------
# The cases


def scenarios() -> list[Scenario]:
    undeclared = "    return total + undeclared_counter_{b};"
    s: list[Scenario] = []

    def c_compile(cid: str, n: int, bad: int) -> None:
        s.append(
            Scenario(
                cid,
                "c",
                "gcc+make",
                "make V=1 -k -j1 all",
                f"src/mod_{bad:03d}.c: `return total;` replaced by a use of the undeclared "
                f"identifier undeclared_counter_{bad} (one of {n} files; -Wall -Wextra noise)",
                [Needle(rf"src/mod_{bad:03d}\.c:\d+:\d+: error: .*undeclared_counter_{bad}")],
                c_make_compile(n, bad, undeclared.format(b=bad)),
                version_cmd="gcc --version",
            )
        )

    c_compile("c-make-undeclared-early", 300, 12)
    c_compile("c-make-undeclared-middle", 400, 211)
    c_compile("c-make-undeclared-late", 260, 255)
    s.append(
        Scenario(
            "c-make-parallel-interleaved",
            "c",
            "gcc+make -j2",
            "make V=1 -k -j2 all",
            "src/mod_163.c: use of the undeclared identifier undeclared_counter_163 (make -j2: "
            "output of two compilers interleaved)",
            [Needle(r"src/mod_163\.c:\d+:\d+: error: .*undeclared_counter_163")],
            c_make_compile(320, 163, undeclared.format(b=163), jobs=2),
            version_cmd="gcc --version",
        )
    )
    s.append(
        Scenario(
            "c-make-type-error",
            "c",
            "gcc+make",
            "make V=1 -k -j1 all",
            "src/mod_140.c: a struct returned where an int is expected (incompatible types)",
            [Needle(r"src/mod_140\.c:\d+:\d+: error: incompatible types")],
            c_make_compile(
                220,
                140,
                "    struct { int a; } boxed = { total };\n    return boxed;",
            ),
            version_cmd="gcc --version",
        )
    )
    s.append(
        Scenario(
            "c-make-link-undefined",
            "c",
            "gcc+ld",
            "make V=1 -j2 all",
            "src/main.c calls checksum_v2(), declared but defined nowhere: link fails",
            [
                Needle(r"undefined reference to `checksum_v2'"),
                Needle(r"collect2: error: ld returned 1 exit status"),
            ],
            c_make_link(250),
            version_cmd="gcc --version",
        )
    )
    s.append(
        Scenario(
            "c-test-segfault",
            "c",
            "gcc+make (test binary)",
            "make -f Makefile -f check.mk check",
            "tests/run_tests.c: test_parse_record_0317 dereferences a NULL record (SIGSEGV)",
            [
                Needle(r"\[ RUN      \] test_parse_record_0317"),
                Needle(r"Segmentation fault"),
            ],
            c_test_crash(
                500,
                317,
                "    struct record *r = lookup_record(317);\n    return r->fields[0] == 1;",
                cflags="-O0 -g",
                runner="./run_tests",
            ),
            version_cmd="gcc --version",
        )
    )
    s.append(
        Scenario(
            "c-test-asan-overflow",
            "c",
            "gcc -fsanitize=address",
            "make -f Makefile -f check.mk check",
            "tests/run_tests.c: sum_fields() writes one past a 3-int heap buffer (i <= count), "
            "called by test_parse_record_0150",
            [
                Needle(r"ERROR: AddressSanitizer: heap-buffer-overflow"),
                Needle(r"#0 0x[0-9a-f]+ in sum_fields .*tests/run_tests\.c:\d+"),
            ],
            c_test_crash(
                400,
                150,
                "    int f[3] = {1, 2, 3};\n    return sum_fields(f, 3) == 7;",
                cflags="-O0 -g -fsanitize=address -fno-omit-frame-pointer",
                runner="./run_tests",
            ),
            version_cmd="gcc --version",
        )
    )
    s.append(
        Scenario(
            "c-test-timeout",
            "c",
            "gcc+timeout",
            "make -f Makefile -f check.mk check",
            "tests/run_tests.c: test_parse_record_0288 loops forever; the job's timeout kills it",
            [
                Needle(r"\[ RUN      \] test_parse_record_0288"),
                Needle(r"timeout: sending signal TERM to command"),
            ],
            c_test_crash(
                450,
                288,
                "    for (;;) { usleep(1000); }\n    return 0;",
                cflags="-O0 -g",
                runner="timeout --verbose 6 ./run_tests",
            ),
            version_cmd="gcc --version",
        )
    )
    s.append(
        Scenario(
            "cpp-cmake-conversion",
            "c++",
            "cmake+g++",
            "cmake --build build --verbose -- -k",
            "src/widget_087.cpp: a double assigned to a std::string (no conversion)",
            [Needle(r"src/widget_087\.cpp:\d+:\d+: error: ")],
            cmake_compile(110, 87),
            version_cmd="cmake --version",
        )
    )
    s.append(
        Scenario(
            "cpp-cmake-conversion-late",
            "c++",
            "cmake+g++",
            "cmake --build build --verbose -- -k",
            "src/widget_121.cpp: a double assigned to a std::string (no conversion)",
            [Needle(r"src/widget_121\.cpp:\d+:\d+: error: ")],
            cmake_compile(130, 121),
            version_cmd="cmake --version",
        )
    )
    s.append(
        Scenario(
            "cmake-configure-missing-package",
            "c++",
            "cmake",
            "cmake -S plugins -B build/plugins --log-level=VERBOSE",
            "plugins/CMakeLists.txt:6 requires find_package(FrobnicateSDK 2.1 REQUIRED), not "
            "installed; after a long successful verbose build of core/",
            [
                Needle(r"CMake Error at CMakeLists\.txt:6 \(find_package\)"),
                Needle(r'provided by "FrobnicateSDK"'),
            ],
            cmake_configure_after_build(90),
            version_cmd="cmake --version",
        )
    )
    s.append(
        Scenario(
            "cpp-ctest-failure",
            "c++",
            "ctest",
            "ctest --test-dir build --output-on-failure -V -j2",
            "tests/test_main.cpp: det2_fast is off by one for case 173 only",
            [
                Needle(r"CHECK FAILED .*test_main\.cpp:\d+: .*\(\d+ vs \d+\)"),
                Needle(r"\d+ - matrix_det_173 \(Failed\)"),
            ],
            ctest_failure(260, 173),
            version_cmd="ctest --version",
        )
    )
    s.append(
        Scenario(
            "rust-cargo-mismatched-types",
            "rust",
            "cargo build -vv",
            "cargo build -vv --offline --workspace",
            "crates/crate_17/src/geom_2.rs: returns a &str where u64 is expected",
            [
                Needle(r"^error\[E0308\]: mismatched types"),
                Needle(r"--> crates/crate_17/src/geom_2\.rs:\d+:\d+"),
            ],
            cargo_workspace(30, 17, '    let label = "wide";\n    label'),
            version_cmd="cargo --version",
        )
    )
    s.append(
        Scenario(
            "rust-cargo-borrow",
            "rust",
            "cargo build -vv",
            "cargo build -vv --offline --workspace",
            "crates/crate_08/src/geom_2.rs: a vector borrowed immutably, then pushed to (E0502)",
            [
                Needle(r"^error\[E0502\]: cannot borrow"),
                Needle(r"--> crates/crate_08/src/geom_2\.rs:\d+:\d+"),
            ],
            cargo_workspace(
                24,
                8,
                "    let mut v = vec![width, height];\n    let first = &v[0];\n"
                "    v.push(*first);\n    *first + v.len() as u64",
            ),
            version_cmd="cargo --version",
        )
    )
    s.append(
        Scenario(
            "rust-cargo-test-panic",
            "rust",
            "cargo test",
            "cargo test --offline -v -- --test-threads=1",
            "src/lib.rs: the expected value of balance_case_1417 is off by one",
            [
                Needle(
                    r"thread 'tests::balance_case_1417' (\(\d+\) )?panicked at src/lib\.rs:\d+:\d+"
                ),
                Needle(r"^\s*left: 4252"),
            ],
            cargo_tests(2000, 1417),
            version_cmd="cargo --version",
        )
    )
    s.append(
        Scenario(
            "java-javac-cannot-find-symbol",
            "java",
            "javac -Xlint:all",
            "javac -Xlint:all -Xmaxwarns 100000 -Xmaxerrs 1000 -d out @sources.txt",
            "Invoice213.java calls Ledger.reconcileAll(), which does not exist (400 classes, "
            "rawtypes/unchecked/deprecation warnings)",
            [
                Needle(r"Invoice213\.java:\d+: error: cannot find symbol"),
                Needle(r"symbol: +method reconcileAll\(int\)"),
            ],
            javac_classes(400, 213, verbose=False),
            version_cmd="javac -version",
        )
    )
    s.append(
        Scenario(
            "java-javac-verbose-symbol",
            "java",
            "javac -verbose -Xlint:all",
            "javac -verbose -Xlint:all -Xmaxwarns 100000 -Xmaxerrs 1000 -d out @sources.txt",
            "Invoice044.java calls Ledger.reconcileAll(), which does not exist (-verbose output)",
            [
                Needle(r"Invoice044\.java:\d+: error: cannot find symbol"),
                Needle(r"symbol: +method reconcileAll\(int\)"),
            ],
            javac_classes(160, 44, verbose=True),
            version_cmd="javac -version",
        )
    )
    s.append(
        Scenario(
            "java-javac-verbose-large",
            "java",
            "javac -verbose -Xlint:all",
            "javac -verbose -Xlint:all -Xmaxwarns 100000 -Xmaxerrs 1000 -d out @sources.txt",
            "Invoice777.java calls Ledger.reconcileAll(), which does not exist (1,000 classes, "
            "-verbose output)",
            [
                Needle(r"Invoice777\.java:\d+: error: cannot find symbol"),
                Needle(r"symbol: +method reconcileAll\(int\)"),
            ],
            javac_classes(1000, 777, verbose=True),
            version_cmd="javac -version",
        )
    )
    s.append(
        Scenario(
            "java-runtime-exception",
            "java",
            "java",
            "java -cp out com.acme.sync.Ledger",
            "Ledger.main expects a wrong balance for account 6120: IllegalStateException",
            [
                Needle(r"IllegalStateException: ledger balance mismatch for account 6120"),
                Needle(r"at com\.acme\.sync\.Ledger\.check\(Ledger\.java:\d+\)"),
            ],
            java_runtime(9000, 6120),
            version_cmd="java -version",
        )
    )
    s.append(
        Scenario(
            "python-pytest-one-failure",
            "python",
            "pytest -v",
            "python -m pytest -v -p no:cacheprovider tests",
            "tests/test_pricing_13.py: one expected value (qty 57) off by one; 2,000 tests",
            [Needle(r"^FAILED tests/test_pricing_13\.py::test_total\[57-")],
            pytest_suite(20, 100, [(13, 57)], warn=False),
            version_cmd=f"{TOOLS}/venv/bin/python -m pytest --version",
        )
    )
    s.append(
        Scenario(
            "python-pytest-three-failures-warnings",
            "python",
            "pytest -v",
            "python -m pytest -v -p no:cacheprovider tests",
            "three expected values off by one (files 02, 19, 27) among 3,000 tests; "
            "DeprecationWarnings from a third of the files",
            [
                Needle(r"^FAILED tests/test_pricing_02\.py::test_total\[8-"),
                Needle(r"^FAILED tests/test_pricing_19\.py::test_total\[66-"),
                Needle(r"^FAILED tests/test_pricing_27\.py::test_total\[91-"),
            ],
            pytest_suite(30, 100, [(2, 8), (19, 66), (27, 91)], warn=True),
            version_cmd=f"{TOOLS}/venv/bin/python -m pytest --version",
        )
    )
    s.append(
        Scenario(
            "python-pytest-deep-traceback",
            "python",
            "pytest -v",
            "python -m pytest -v -p no:cacheprovider tests",
            "tests/test_money_47.py: one parameter row uses the currency code XTS, unknown to "
            "money.exponent (ValueError three frames deep); 9,000 tests",
            [
                Needle(r"^FAILED tests/test_money_47\.py::test_total\[61-XTS\]"),
                Needle(r"^E +ValueError: invalid currency code 'XTS'"),
            ],
            pytest_deep_traceback(90, 100, (47, 61)),
            version_cmd=f"{TOOLS}/venv/bin/python -m pytest --version",
        )
    )
    s.append(
        Scenario(
            "python-pytest-collection-error",
            "python",
            "pytest -v",
            "python -m pytest -v -p no:cacheprovider --continue-on-collection-errors tests",
            "tests/test_shop_31.py imports shop.yaml_compat, which does not exist",
            [
                Needle(r"E +ModuleNotFoundError: No module named 'shop\.yaml_compat'"),
                Needle(r"^ERROR tests/test_shop_31\.py"),
            ],
            pytest_collection_error(40, 40, 31),
            version_cmd=f"{TOOLS}/venv/bin/python -m pytest --version",
        )
    )
    s.append(
        Scenario(
            "python-mypy-return-type",
            "python",
            "mypy --strict",
            "python -m mypy --strict --no-incremental inventory",
            "inventory/mod_077.py: stock_077 returns a str where int is declared (among 600 "
            "reveal_type notes)",
            [Needle(r"inventory/mod_077\.py:\d+: error: Incompatible return value type")],
            mypy_package(300, 77, verbose=False),
            version_cmd=f"{TOOLS}/venv/bin/python -m mypy --version",
        )
    )
    s.append(
        Scenario(
            "python-mypy-verbose",
            "python",
            "mypy -v --strict",
            "python -m mypy -v --strict --no-incremental inventory",
            "inventory/mod_041.py: stock_041 returns a str where int is declared (-v log)",
            [Needle(r"inventory/mod_041\.py:\d+: error: Incompatible return value type")],
            mypy_package(120, 41, verbose=True),
            version_cmd=f"{TOOLS}/venv/bin/python -m mypy --version",
        )
    )
    s.append(
        Scenario(
            "python-sphinx-warning-as-error",
            "python",
            "sphinx-build -W",
            "sphinx-build -v -v -W --keep-going -b html docs docs/_build/html",
            "docs/page_342.rst references :ref:`billing-overview-legacy`, an undefined label",
            [Needle(r"page_342\.rst:\d+: WARNING: undefined label: 'billing-overview-legacy'")],
            sphinx_docs(500, 342),
            version_cmd=f"{TOOLS}/venv/bin/sphinx-build --version",
        )
    )
    s.append(
        Scenario(
            "python-pip-missing-version",
            "python",
            "pip install -v",
            "python -m pip install -vvv --no-cache-dir -r requirements.txt",
            "requirements.txt pins requests==99.0.0, a version that does not exist",
            [
                Needle(
                    r"ERROR: Could not find a version that satisfies the requirement "
                    r"requests==99\.0\.0"
                ),
                Needle(r"ERROR: No matching distribution found for requests==99\.0\.0"),
            ],
            pip_missing_version(),
            version_cmd="python3 -m pip --version",
        )
    )
    s.append(
        Scenario(
            "python-etl-keyerror",
            "python",
            "python script",
            "python3 run_etl.py",
            "row 14213 of the input lacks the customer_id key: KeyError in etl/transform.py",
            [
                Needle(r"^KeyError: 'customer_id'"),
                Needle(r'File ".*etl/transform\.py", line \d+, in normalise_row'),
            ],
            python_etl_traceback(20000, 14213),
            version_cmd="python3 --version",
        )
    )
    s.append(
        Scenario(
            "node-mocha-assertion",
            "javascript",
            "mocha",
            "mocha --no-color --reporter spec 'test/*.test.js'",
            "test/pricing_23.test.js: expected total for 31 items off by one (1,200 tests)",
            [
                Needle(r"AssertionError \[ERR_ASSERTION\]: Expected values to be strictly equal"),
                Needle(r"at Context\.<anonymous> \(test/pricing_23\.test\.js:\d+:\d+\)"),
            ],
            mocha_suite(30, 40, (23, 31)),
            version_cmd="node --version",
        )
    )
    s.append(
        Scenario(
            "ts-tsc-type-error",
            "typescript",
            "tsc",
            "tsc -p . --listFiles --extendedDiagnostics --pretty false",
            "src/mod_123.ts assigns a string to a number-typed constant (TS2322)",
            [Needle(r"src/mod_123\.ts\(\d+,\d+\): error TS2322")],
            tsc_project(400, 123),
            version_cmd="node_modules/.bin/tsc --version",
        )
    )
    s.append(
        Scenario(
            "node-npm-missing-version",
            "javascript",
            "npm install",
            "npm install --no-audit --no-fund --loglevel silly mocha@99.0.0",
            "npm install of mocha@99.0.0, a version that does not exist",
            [
                Needle(r"npm error code ETARGET"),
                Needle(r"npm error notarget No matching version found for mocha@99\.0\.0"),
            ],
            npm_missing_version(),
            version_cmd="npm --version",
        )
    )
    s.append(
        Scenario(
            "node-test-runner-tap",
            "javascript",
            "node --test",
            "node --test --test-reporter=tap test/",
            "test/discount.test.mjs: expected discount for tier 377 off by one (600 tests)",
            [Needle(r"not ok \d+ - applies discount for tier 377")],
            node_test_runner(600, 377),
            version_cmd="node --version",
        )
    )
    s.append(
        Scenario(
            "node-test-runner-tap-large",
            "javascript",
            "node --test",
            "node --test --test-reporter=tap test/",
            "test/discount.test.mjs: expected discount for tier 2222 off by one (6,000 tests)",
            [Needle(r"not ok \d+ - applies discount for tier 2222")],
            node_test_runner(6000, 2222),
            version_cmd="node --version",
        )
    )
    s.append(
        Scenario(
            "perl-prove-failed-test",
            "perl",
            "prove -v",
            "prove -v -Ilib t/",
            "t/047_header.t: expected length of header field 17 off by one",
            [
                Needle(r"#   Failed test 'parses header field 17'"),
                Needle(r"#   at t/047_header\.t line \d+\."),
            ],
            perl_prove(120, 40, (47, 17), None),
            version_cmd="perl -v",
        )
    )
    s.append(
        Scenario(
            "perl-prove-syntax-error",
            "perl",
            "prove -v",
            "prove -v -Ilib t/",
            "lib/Acme/Report.pm: a missing semicolon (used by t/088_header.t only)",
            [
                Needle(r"syntax error at \S*lib/Acme/Report\.pm line \d+"),
                Needle(r"Compilation failed in require at t/088_header\.t line \d+"),
            ],
            perl_prove(110, 30, None, 88),
            version_cmd="perl -v",
        )
    )
    s.append(
        Scenario(
            "go-test-failure",
            "go",
            "go test -v",
            "go test -v -count=1 -p 2 ./...",
            "pkg23/calc_test.go: the expected value of case_17 off by one",
            [
                Needle(r"--- FAIL: TestScale/case_17"),
                Needle(r"calc_test\.go:\d+: Scale\(17\) = \d+, want \d+"),
            ],
            go_test(40, 23, panic=False),
            version_cmd="go version",
        )
    )
    s.append(
        Scenario(
            "go-test-panic",
            "go",
            "go test -v",
            "go test -v -count=1 -p 2 ./...",
            "pkg11/calc_test.go: TestWindow indexes a 3-element slice up to 5 (panic)",
            [
                Needle(r"panic: runtime error: index out of range \[3\] with length 3"),
                Needle(r"pkg11/calc_test\.go:\d+"),
            ],
            go_test(30, 11, panic=True),
            version_cmd="go version",
        )
    )
    s.append(
        Scenario(
            "go-build-undefined",
            "go",
            "go build -v -x",
            "go build -v -x ./...",
            "pkg19/calc.go calls roundHalfEven, defined nowhere",
            [Needle(r"pkg19/calc\.go:\d+:\d+: undefined: roundHalfEven")],
            go_build_error(36, 19),
            version_cmd="go version",
        )
    )
    s.append(
        Scenario(
            "go-vet-printf",
            "go",
            "go vet",
            "go build -v -x ./... && go vet ./...",
            "pkg07/report.go: Printf %d with a string argument (vet printf check)",
            [Needle(r"pkg07/report\.go:\d+:\d+: .*Printf format %d has arg name of wrong type")],
            go_vet(30, 7),
            version_cmd="go version",
        )
    )
    s.append(
        Scenario(
            "ruby-minitest-failure",
            "ruby",
            "minitest -v",
            "ruby -w -Ilib -Itest -e '...require each test...' -- -v --seed 4242",
            "test/invoice_14_test.rb: expected total for 33 items off by one (2,000 tests)",
            [
                Needle(r"Invoice14Test#test_total_033 \[.*test/invoice_14_test\.rb:\d+\]"),
                Needle(r"Actual: 561"),
            ],
            ruby_minitest(25, 80, (14, 33)),
            version_cmd="ruby --version",
        )
    )
    s.append(
        Scenario(
            "ruby-nomethod-nil",
            "ruby",
            "ruby script",
            "ruby -Ilib bin/export",
            "row 4711 has a nil timestamp: NoMethodError on nil in lib/acme/report.rb",
            [Needle(r"lib/acme/report\.rb:\d+:in .*undefined method `strftime' for nil")],
            ruby_nomethod(6000, 4711),
            version_cmd="ruby --version",
        )
    )
    s.append(
        Scenario(
            "php-lint-parse-error",
            "php",
            "php -l",
            'for f in src/*.php; do php -l "$f"; done',
            "src/Mod317.php: a missing semicolon (one of 500 files)",
            [Needle(r"Parse error: +syntax error, .* in src/Mod317\.php on line \d+")],
            php_lint(500, 317),
            version_cmd="php --version",
        )
    )
    s.append(
        Scenario(
            "php-fatal-typeerror",
            "php",
            "php script",
            "php import.php",
            "item 3333 passes a string where Importer::price() declares int (strict_types)",
            [Needle(r"PHP Fatal error: +Uncaught TypeError: Acme\\Importer::price\(\)")],
            php_fatal(5000, 3333),
            version_cmd="php --version",
        )
    )
    s.append(
        Scenario(
            "shell-deploy-copy-after-build",
            "shell",
            "bash (cp)",
            "cp -v dist/acme-3.0.tgz /srv/releases/acme/3.0/",
            "the deploy step copies into /srv/releases/acme/3.0/, which does not exist, after a "
            "long successful make V=1 of 350 files",
            [Needle(r"cp: cannot create regular file '/srv/releases/acme/3\.0/'")],
            shell_deploy_after_build(350),
            version_cmd="bash --version",
        )
    )
    s.append(
        Scenario(
            "shell-command-not-found",
            "shell",
            "bash script",
            "bash scripts/gen_protos.sh",
            "scripts/gen_protos.sh runs protoc-gen-acme, not installed, after a long verbose "
            "cmake build",
            [Needle(r"protoc-gen-acme: command not found")],
            shell_command_not_found(80),
            version_cmd="bash --version",
        )
    )
    return s


# ---------------------------------------------------------------------------------------------
# Running and labelling


def _env() -> dict[str, str]:
    env = {
        "PATH": f"{TOOLS}/venv/bin:{TOOLS}/node/node_modules/.bin:"
        f"{Path.home()}/.cargo/bin:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(Path.home()),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "CARGO_TERM_COLOR": "never",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "CI": "true",
    }
    for key in ("RUSTUP_HOME", "CARGO_HOME", "JAVA_HOME"):
        if key in os.environ:
            env[key] = os.environ[key]
    return env


def _select(text: str, rule: Needle) -> tuple[str, int]:
    regex = re.compile(rule.pattern)
    found: tuple[str, int] | None = None
    for number, line in enumerate(text.split("\n"), start=1):
        m = regex.search(line)
        if m is None:
            continue
        needle = (m.group("n") if "n" in regex.groupindex else line).strip()
        found = (needle, number)
        if not rule.last:
            break
    if found is None:
        msg = f"no log line matches the label rule {rule.pattern!r}"
        raise LookupError(msg)
    return found


def ensure_tools() -> None:
    """Install the npm and PyPI tools the cases use into `TOOLS` (once)."""
    venv = TOOLS / "venv"
    if not (venv / "bin" / "sphinx-build").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(venv / "bin" / "pip"), "install", "-q", "pytest", "mypy", "sphinx"], check=True
        )
    node = TOOLS / "node"
    if not (node / "node_modules" / ".bin" / "tsc").exists():
        node.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "init", "-y"], cwd=node, check=True, capture_output=True)
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "mocha", "typescript"],
            cwd=node,
            check=True,
        )


def run_scenario(sc: Scenario) -> dict[str, object]:
    """Build the fixture, run the job, pick the labels by their rules, write the log."""
    work = BUILD_ROOT / sc.case_id
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    rng = random.Random(f"{sc.case_id}:{sc.seed}")
    script = sc.build(work, rng)
    _w(work / "ci.sh", script)
    start = time.monotonic()
    proc = subprocess.run(
        ["bash", "ci.sh"],
        cwd=work,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        timeout=1500,
        check=False,
    )
    seconds = time.monotonic() - start
    raw = proc.stdout
    text = raw.decode("utf-8", errors="replace")
    version = ""
    if sc.version_cmd:
        v = subprocess.run(
            ["bash", "-c", sc.version_cmd],
            cwd=work,
            env=_env(),
            capture_output=True,
            text=True,
            check=False,
        )
        version = (v.stdout + v.stderr).strip().splitlines()[0] if (v.stdout + v.stderr) else ""
    picked = [_select(text, rule) for rule in sc.needles]
    if proc.returncode == 0:
        msg = f"{sc.case_id}: the job succeeded; the injected fault did not fail it"
        raise RuntimeError(msg)
    LOGS.mkdir(parents=True, exist_ok=True)
    for old in LOGS.glob(f"{sc.case_id}.log*"):
        old.unlink()
    if len(raw) > GZIP_OVER:
        rel = f"logs/{sc.case_id}.log.gz"
        with gzip.GzipFile(HERE / rel, "wb", mtime=0, compresslevel=9) as fh:
            fh.write(raw)
    else:
        rel = f"logs/{sc.case_id}.log"
        (HERE / rel).write_bytes(raw)
    lines = text.count("\n") + 1
    shutil.rmtree(work, ignore_errors=True)
    return {
        "id": f"fresh/{sc.case_id}",
        "ecosystem": sc.ecosystem,
        "tool": sc.tool,
        "tool_version": version,
        "command": sc.command,
        "path": rel,
        "bytes": len(raw),
        "lines": lines,
        "exit_status": proc.returncode,
        "fault": sc.fault,
        "needles": [n for n, _ in picked],
        "needle_rules": [r.pattern for r in sc.needles],
        "needle_lines": [ln for _, ln in picked],
        "generated": GENERATED,
        "seconds": round(seconds, 1),
    }


def record_case(row: dict[str, object], order: list[str], prefix: str) -> None:
    """Add or replace one case in `CASES` (a later batch re-points it), kept in the batch's
    `order` of case ids (without `prefix`)."""
    rows: dict[str, dict[str, object]] = {}
    if CASES.exists():
        for line in CASES.read_text(encoding="utf-8").splitlines():
            if line.strip():
                old = json.loads(line)
                rows[str(old["id"])] = old
    rows[str(row["id"])] = row
    ordered = [rows[prefix + cid] for cid in order if prefix + cid in rows]
    CASES.write_text("".join(json.dumps(r) + "\n" for r in ordered), encoding="utf-8")


def check_needles(row: dict[str, object], *, max_chars: int | None = None) -> None:
    """Each needle of a case is one of its log's lines (stripped), exactly, at its line number
    (and at most `max_chars` long when given); the log is read from `HERE`."""
    path = HERE / str(row["path"])
    lines = path.read_bytes().decode("utf-8", errors="replace").split("\n")
    for needle, number in zip(row["needles"], row["needle_lines"], strict=True):  # type: ignore[call-overload]
        assert lines[number - 1].strip() == needle, (row["id"], needle)
        assert max_chars is None or len(needle) <= max_chars, (row["id"], len(needle))


def run_batch(
    argv: list[str] | None,
    *,
    doc: str | None,
    cases: list[Scenario],
    prefix: str,
    batch: int,
    setup: Callable[[], None] | None = None,
    check: Callable[[dict[str, object]], None] | None = None,
) -> int:
    """A later batch's command line: build every case (or `--only` some), check, record.

    Returns:
        The exit status: 1 when a case failed.
    """
    parser = argparse.ArgumentParser(description=(doc or "").split("\n")[0])
    parser.add_argument("--only", nargs="*", default=None, help=f"case ids (without {prefix})")
    args = parser.parse_args(argv)
    if setup is not None:
        setup()
    wanted = set(args.only) if args.only else None
    order = [sc.case_id for sc in cases]
    if wanted is None and CASES.exists():
        CASES.unlink()
    failures = 0
    for sc in cases:
        if wanted is not None and sc.case_id not in wanted:
            continue
        try:
            row = run_scenario(sc)
            row["id"] = prefix + sc.case_id
            row["batch"] = batch
            if check is not None:
                check(row)
        except Exception as exc:
            failures += 1
            print(f"{sc.case_id}: FAILED: {exc!r}", flush=True)
            continue
        record_case(row, order, prefix)
        print(
            f"{sc.case_id}: {row['bytes']:,} bytes, {row['lines']:,} lines, exit "
            f"{row['exit_status']}, needles at lines {row['needle_lines']} ({row['seconds']} s)",
            flush=True,
        )
    return 1 if failures else 0


def _record(row: dict[str, object], order: list[str]) -> None:
    """Add or replace one case in `cases.jsonl` (under a lock: several runs may write)."""
    import fcntl

    BUILD_ROOT.mkdir(parents=True, exist_ok=True)
    with open(BUILD_ROOT / ".cases.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        record_case(row, order, "fresh/")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="*", default=None, help="case ids (without fresh/)")
    args = parser.parse_args(argv)
    ensure_tools()
    wanted = set(args.only) if args.only else None
    order = [sc.case_id for sc in scenarios()]
    if wanted is None and CASES.exists():
        CASES.unlink()
    failures = 0
    for sc in scenarios():
        if wanted is not None and sc.case_id not in wanted:
            continue
        try:
            row = run_scenario(sc)
        except Exception as exc:
            failures += 1
            print(f"{sc.case_id}: FAILED: {exc}", flush=True)
            continue
        _record(row, order)
        print(
            f"{sc.case_id}: {row['bytes']:,} bytes, {row['lines']:,} lines, exit "
            f"{row['exit_status']}, needles at lines {row['needle_lines']} ({row['seconds']} s)",
            flush=True,
        )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
