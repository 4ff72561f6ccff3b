"""Generate batch 3 of the fresh-logs held-out set: ecosystems batches 1 and 2 do not have.

Same method as `generate.py` (batch 1) and `generate2.py` (batch 2), whose job pieces, labelling
and writing this script reuses: every case is a small fixture project written into a temporary
folder with one injected fault (said per case), built, checked or run by a real local tool with
verbose flags and CI noise (`set -x` traces, tool versions, a cache download retried against a
closed port, warnings, progress, in some a `tar -cv` listing before or after the fault). stdout
and stderr are merged. The labels are decided from the injected fault alone: a regular
expression per needle, written with the fault, selects the log line; nothing here imports or
runs the package.

Batch 3 covers: meson + ninja (compile error, missing dependency, `meson test` with a very long
failing line), autoconf/automake (`./configure` error and its config.log), Icarus Verilog,
cppcheck, shellcheck, yamllint, valgrind memcheck, gdb's batch backtrace, UBSan, SBCL, Guile
and SWI-Prolog's plunit.

Tools (Debian bookworm packages, `apt-get install -y --no-install-recommends meson ninja-build
autoconf automake cppcheck shellcheck yamllint iverilog swi-prolog-nox sbcl guile-3.0 gdb
valgrind gcc`). Versions are written to every case's `tool_version`.

Run (from the project root; a few minutes):

    python benchmarks/fresh_logs/generate3.py            # every case: batch3/{logs/,cases.jsonl}
    python benchmarks/fresh_logs/generate3.py --only ID  # some cases (their rows are replaced)
"""

# The fixture projects' sources are written inline: some of their lines are longer than ours.
# ruff: noqa: E501

from __future__ import annotations

import os
import random
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate as g  # batch 1's job pieces and writer (a script in this folder)

HERE = Path(__file__).resolve().parent / "batch3"
PREFIX = "fresh3/"

# batch 1's writer, pointed at batch 3's folder
g.HERE = HERE
g.LOGS = HERE / "logs"
g.CASES = HERE / "cases.jsonl"
g.GENERATED = "2026-12-05"
g.BUILD_ROOT = Path(os.environ.get("FRESH_LOGS_BUILD3", "/tmp/fresh_logs_build3"))

Needle = g.Needle
Scenario = g.Scenario
_w = g._w
_job = g._job
_run_step = g._run_step

Build = Callable[[Path, random.Random], str]

WORDS = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta", "lambda", "zeta"]
REGIONS = ["north", "south", "east", "west"]


# ---------------------------------------------------------------------------------------------
# meson + ninja


def _meson_c_project(d: Path, rng: random.Random, n: int, bad: int | None) -> None:
    _w(d / "include" / "common.h", "#pragma once\n#include <stdio.h>\n#define ACME_VERSION 3\n")
    for i in range(n):
        text = g._c_module(i, rng, warn=rng.random() < 0.35)
        if i == bad:
            text = text.replace("    return total;", "    return total + offset;", 1)
        _w(d / "src" / f"mod_{i:03d}.c", text)
    srcs = ",\n  ".join(f"'src/mod_{i:03d}.c'" for i in range(n))
    _w(
        d / "meson.build",
        "project('acme', 'c', version : '0.9.1',\n"
        "  default_options : ['warning_level=3', 'c_std=c11', 'buildtype=debugoptimized'])\n\n"
        "cc = meson.get_compiler('c')\n"
        "m_dep = cc.find_library('m', required : false)\n"
        "inc = include_directories('include')\n"
        f"acme_srcs = files(\n  {srcs},\n)\n"
        "acme_lib = static_library('acme', acme_srcs, include_directories : inc,\n"
        "  dependencies : [m_dep], c_args : ['-DACME_BUILD=1', '-fno-common'])\n",
    )


def meson_ninja_compile(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        _meson_c_project(d, rng, n, bad)
        step = (
            "meson --version\nninja --version\ngcc --version | head -n 1\n"
            "meson setup build --wipe 2>/dev/null || meson setup build\n"
            "ninja -C build -v -k 0 || status=$?\n"
            "ls -la build | head -n 40\n"
        )
        return _job(step, fetch="meson-subprojects", cleanup="build/acme.p src include")

    return build


def meson_setup_missing_dep(n_vendor: int, checks: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        _meson_c_project(d, rng, 12, None)
        for i in range(n_vendor):
            sub = rng.choice(["codec", "io", "util", "net", "fmt"])
            _w(
                d / "vendor" / sub / f"{rng.choice(WORDS)}_{i:03d}.c",
                f"/* vendored file {i} */\nint vendor_{i}(void) {{ return {i}; }}\n",
            )
        headers = [
            "stdio.h",
            "stdlib.h",
            "string.h",
            "stdint.h",
            "inttypes.h",
            "unistd.h",
            "fcntl.h",
            "errno.h",
            "time.h",
            "sys/types.h",
            "sys/stat.h",
            "sys/time.h",
            "sys/mman.h",
            "sys/socket.h",
            "netinet/in.h",
            "arpa/inet.h",
            "poll.h",
            "pthread.h",
            "dlfcn.h",
            "locale.h",
            "wchar.h",
            "signal.h",
            "limits.h",
            "float.h",
            "math.h",
            "zlib.h",
            "linux/futex.h",
            "sys/epoll.h",
        ]
        funcs = [
            "strlcpy",
            "memmem",
            "posix_memalign",
            "clock_gettime",
            "pipe2",
            "accept4",
            "epoll_create1",
            "getrandom",
            "strndup",
            "qsort_r",
            "reallocarray",
            "mkostemp",
            "fdatasync",
            "pread",
            "pwrite",
            "sched_getaffinity",
            "strerror_r",
            "timegm",
        ]
        lines = []
        for k in range(checks):
            h = headers[k % len(headers)]
            lines.append(f"cc.has_header('{h}', prefix : '#define ACME_CHECK_{k} 1')")
        for f in funcs:
            lines.append(
                f"cc.has_function('{f}', prefix : '#include <string.h>\\n#include <stdlib.h>')"
            )
        lines.append("codec_dep = dependency('acme-codec', version : '>=2.1', required : true)")
        lines.append("zlib_dep = dependency('zlib', required : false)")
        _w(d / "meson.build", (d / "meson.build").read_text() + "\n" + "\n".join(lines) + "\n")
        step = (
            "meson --version\n"
            'echo "--- unpacking source bundle ---"\n'
            "tar -cvf /tmp/fresh_logs_bundle_$$.tar vendor src include meson.build\n"
            "rm -f /tmp/fresh_logs_bundle_$$.tar\n"
            "meson setup build || status=$?\n"
            'if [ "$status" -ne 0 ]; then echo "--- build/meson-logs/meson-log.txt ---"; cat build/meson-logs/meson-log.txt; fi\n'
        )
        return _job(step, fetch="meson-wraps")

    return build


def meson_test_long_line(n: int, bad: int, width: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        _meson_c_project(d, rng, 20, None)
        _w(
            d / "tests" / "render_check.c",
            textwrap.dedent(
                f"""\
                #include <stdio.h>
                #include <stdlib.h>

                static int render(int c, int k) {{ return (c * 131 + k * 17) % 1000; }}

                int main(int argc, char **argv)
                {{
                    int c = atoi(argv[1]);
                    int n = {width};
                    printf("render case %03d: %d cells\\n", c, n);
                    for (int k = 0; k < 40; k++)
                        printf("  cell %02d value %d ok\\n", k, render(c, k));
                    if (c != {bad}) {{
                        printf("render case %03d: snapshot matches\\n", c);
                        return 0;
                    }}
                    printf("FAIL: snapshot mismatch in case render_%03d: expected=[", c);
                    for (int k = 0; k < n; k++) printf(k ? ",%d" : "%d", render(c, k));
                    printf("] got=[");
                    for (int k = 0; k < n; k++) printf(k ? ",%d" : "%d", render(c, k) + (k == n - 3));
                    printf("]\\n");
                    return 1;
                }}
                """
            ),
        )
        tests = "\n".join(
            f"test('render_{i:03d}', render_check, args : ['{i}'], suite : 'render')"
            for i in range(n)
        )
        _w(
            d / "meson.build",
            (d / "meson.build").read_text()
            + "\nrender_check = executable('render_check', 'tests/render_check.c')\n"
            + tests
            + "\n",
        )
        step = (
            "meson --version\nmeson setup build\nninja -C build -v\n"
            "meson test -C build -v --num-processes 1 --print-errorlogs || status=$?\n"
        )
        return _job(step, fetch="meson-test-data", cleanup="build/meson-logs")

    return build


# ---------------------------------------------------------------------------------------------
# autoconf / automake


def autoconf_missing_header(n_src: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        headers = "stdio.h stdlib.h string.h strings.h stdint.h inttypes.h unistd.h fcntl.h errno.h time.h sys/types.h sys/stat.h sys/time.h sys/mman.h sys/socket.h netinet/in.h arpa/inet.h poll.h pthread.h dlfcn.h locale.h wchar.h signal.h limits.h float.h math.h langinfo.h termios.h sys/ioctl.h sys/resource.h"
        funcs = "memmem posix_memalign clock_gettime pipe2 accept4 epoll_create1 getrandom strndup reallocarray mkostemp fdatasync pread pwrite sched_getaffinity strerror_r timegm setlocale nl_langinfo"
        _w(
            d / "configure.ac",
            textwrap.dedent(
                f"""\
                AC_PREREQ([2.69])
                AC_INIT([acme], [1.4.2], [dev@acme.example])
                AC_CONFIG_SRCDIR([src/main.c])
                AC_CONFIG_HEADERS([config.h])
                AM_INIT_AUTOMAKE([foreign subdir-objects -Wall])
                AC_PROG_CC
                AC_PROG_INSTALL
                AC_PROG_RANLIB
                AM_PROG_AR
                AC_C_BIGENDIAN
                AC_TYPE_SIZE_T
                AC_TYPE_UINT64_T
                AC_CHECK_SIZEOF([long])
                AC_CHECK_SIZEOF([void *])
                AC_CHECK_HEADERS([{headers}])
                AC_CHECK_FUNCS([{funcs}])
                AC_SEARCH_LIBS([cos], [m])
                AC_SEARCH_LIBS([pthread_create], [pthread])
                AC_CHECK_HEADER([acme/codec.h], [],
                  [AC_MSG_ERROR([acme/codec.h not found: install libacme-codec-dev (>= 2.1)])])
                AC_CHECK_LIB([acmecodec], [acme_codec_open])
                AC_CONFIG_FILES([Makefile])
                AC_OUTPUT
                """
            ),
        )
        srcs = " ".join(f"src/mod_{i:03d}.c" for i in range(n_src))
        _w(
            d / "Makefile.am",
            f"noinst_LIBRARIES = libacme.a\nlibacme_a_SOURCES = {srcs}\nlibacme_a_CPPFLAGS = -I$(top_srcdir)/include\n"
            "bin_PROGRAMS = acme\nacme_SOURCES = src/main.c\nacme_LDADD = libacme.a\n",
        )
        _w(d / "include" / "common.h", "#pragma once\n#include <stdio.h>\n#define ACME_VERSION 3\n")
        for i in range(n_src):
            _w(d / "src" / f"mod_{i:03d}.c", g._c_module(i, rng, warn=False))
        _w(d / "src" / "main.c", '#include <stdio.h>\nint main(void) { puts("acme"); return 0; }\n')
        step = (
            "autoconf --version | head -n 1\nautomake --version | head -n 1\n"
            "autoreconf -fiv\n"
            "./configure --prefix=/opt/acme --disable-silent-rules CFLAGS='-O2 -g -Wall' || status=$?\n"
            'if [ "$status" -ne 0 ]; then echo "--- config.log ---"; cat config.log; fi\n'
        )
        return _job(
            step, fetch="autotools-cache", cleanup="autom4te.cache configure.ac Makefile.am"
        )

    return build


# ---------------------------------------------------------------------------------------------
# Icarus Verilog


def _verilog_module(i: int, rng: random.Random, *, bad: bool) -> str:
    width = rng.choice([8, 16, 32])
    lines = [
        f"module mod_{i:03d} #(parameter W = {width}) (",
        "  input  wire         clk,",
        "  input  wire         rst,",
        "  input  wire [W-1:0] a,",
        "  input  wire [W-1:0] b,",
        "  output reg  [W-1:0] acc",
        ");",
        "  wire [W-1:0] sum;",
    ]
    if bad:
        lines.append(f"  assign sum = a + b * {rng.randint(2, 9)}")
    else:
        lines.append(f"  assign sum = a + b * {rng.randint(2, 9)};")
    if rng.random() < 0.4:
        lines.append("  assign carry = a[0] & b[0];")
    lines += [
        "  always @(posedge clk) begin",
        "    if (rst) acc <= {W{1'b0}};",
        "    else acc <= acc + sum;",
        "  end",
        "endmodule",
        "",
    ]
    return "\n".join(lines)


def iverilog_syntax(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            _w(d / "rtl" / f"mod_{i:03d}.v", _verilog_module(i, rng, bad=i == bad))
        step = (
            "iverilog -V 2>&1 | head -n 1\n"
            "for f in rtl/*.v; do\n"
            '  echo "IVERILOG $f"\n'
            '  iverilog -v -g2012 -Wall -o /dev/null "$f" || status=$?\n'
            "done\n"
        )
        return _job(step, fetch="rtl-ip-cores", cleanup="rtl")

    return build


# ---------------------------------------------------------------------------------------------
# cppcheck, shellcheck, yamllint


def cppcheck_project(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        _w(d / "include" / "common.h", "#pragma once\n#include <stdio.h>\n#define ACME_VERSION 3\n")
        for i in range(n):
            text = g._c_module(i, rng, warn=rng.random() < 0.5)
            text += textwrap.dedent(
                f"""\

                int mod_{i:03d}_fill(int seed)
                {{
                    int buf[8];
                    int i;
                    int sum = 0;
                    for (i = 0; i < 8; i++)
                        buf[i] = seed * i;
                    {"buf[8] = seed;" if i == bad else "buf[7] += seed;"}
                    for (i = 0; i < 8; i++)
                        sum += buf[i];
                    return sum;
                }}
                """
            )
            _w(d / "src" / f"mod_{i:03d}.c", text)
        step = (
            "cppcheck --version\n"
            "cppcheck --enable=all --inconclusive --std=c11 --template='{file}:{line}:{column}: {severity}: {message} [{id}]\\n{code}' --error-exitcode=1 "
            "-Iinclude src || status=$?\n"
        )
        return _job(step, fetch="cppcheck-build-dir", cleanup="src include")

    return build


def shellcheck_scripts(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            body = ["#!/bin/bash", f"# deploy step {i}", "set -e", ""]
            body.append(f"target_dir=/srv/acme/{rng.choice(WORDS)}_{i}")
            if rng.random() < 0.6:
                body.append(f"unused_{i}=$(date +%s)")
            body.append("cd $target_dir")
            body.append("for f in *.conf; do echo processing $f; done")
            body.append('read -p "continue? " answer < /dev/null || true')
            if rng.random() < 0.5:
                body.append("echo `hostname` >> deploy.log")
            if i == bad:
                body.append("cp $@ /srv/acme/incoming/")
            else:
                body.append('cp "$@" /srv/acme/incoming/')
            body.append(f"[ $? -eq 0 ] && echo step {i} done")
            _w(d / "scripts" / f"job_{i:03d}.sh", "\n".join(body) + "\n")
        step = "shellcheck --version\nshellcheck -f gcc -S style -x scripts/*.sh || status=$?\n"
        return _job(step, fetch="shellcheck-cache", cleanup="scripts")

    return build


def yamllint_configs(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            lines = []
            if rng.random() < 0.5:
                lines.append("---")
            lines += [
                f"name: svc-{i:03d}",
                f"enabled: {rng.choice(['yes', 'true', 'on', 'no'])}",
                f"replicas: {rng.randint(1, 9)}",
                "#owner: platform-team",
                "resources:",
                "  limits:",
                f"    cpu: {rng.randint(1, 8)}",
                f"    memory: {rng.randint(1, 16)}Gi",
                "env:",
            ]
            for k in range(rng.randint(3, 8)):
                lines.append(f"  - name: ACME_{rng.choice(WORDS).upper()}_{k}")
                lines.append(f"    value: {rng.choice(['yes', 'off', 'plain', 'x'])}")
            if i == bad:
                lines.append("  - name: ACME_ENDPOINT")
                lines.append("    value: http: //api.acme.internal: 8080")
            lines.append("  # end of env")
            _w(d / "config" / f"svc_{i:03d}.yaml", "\n".join(lines) + "\n")
        step = "yamllint --version\nyamllint -f parsable config/ || status=$?\n"
        return _job(step, fetch="yaml-schemas", cleanup="config")

    return build


# ---------------------------------------------------------------------------------------------
# C run-time tools: valgrind, gdb, UBSan


def _rows_c(rows: int, body: str, *, extra: str = "") -> str:
    return (
        textwrap.dedent(
            """\
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>

        """
        )
        + extra
        + textwrap.dedent(
            f"""\

        int main(void)
        {{
            long grand = 0;
            setvbuf(stdout, NULL, _IOLBF, 0);
            for (int r = 0; r < {rows}; r++) {{
        {textwrap.indent(body, "        ")}
            }}
            printf("[info] processed {rows} rows, grand total %ld\\n", grand);
            return 0;
        }}
        """
        )
    )


def valgrind_invalid_read(rows: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        extra = textwrap.dedent(
            f"""\
            static int sum_weights(const int *weights, int count, int row)
            {{
                int total = 0;
                int n = (row == {bad}) ? count + 1 : count;
                for (int k = 0; k < n; k++)
                    total += weights[k];
                return total;
            }}

            static char *label_for(int row)
            {{
                char *s = malloc(32);
                snprintf(s, 32, "{WORDS[0]}_%d", row);
                return s;
            }}
            """
        )
        body = textwrap.dedent(
            """\
            int *weights = malloc(10 * sizeof(int));
            for (int k = 0; k < 10; k++) weights[k] = (r * 7 + k) % 13;
            char *label = label_for(r);
            int w = sum_weights(weights, 10, r);
            grand += w;
            printf("[info] row %d %s weight=%d running=%ld\\n", r, label, w, grand);
            if (r % 50 != 0) free(label);
            free(weights);
            """
        )
        _w(d / "src" / "report.c", _rows_c(rows, body, extra=extra))
        step = (
            "valgrind --version\ngcc --version | head -n 1\n"
            "gcc -g -O0 -Wall -o report src/report.c\n"
            "valgrind -v --leak-check=full --show-leak-kinds=all --track-origins=yes "
            "--error-exitcode=1 ./report || status=$?\n"
        )
        return _job(step, fetch="report-inputs", cleanup="src report")

    return build


def gdb_backtrace(rows: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        extra = textwrap.dedent(
            """\
            struct tag { const char *name; int weight; };
            struct row { int id; const char *region; struct tag *tags; int ntags; };

            static struct tag default_tags[3] = {{"core", 3}, {"edge", 5}, {"misc", 1}};
            static const char *regions[4] = {"north", "south", "east", "west"};

            static int parse_tags(const struct row *rw)
            {
                int total = 0;
                for (int k = 0; k < rw->ntags; k++)
                    total += rw->tags[k].weight * (int)strlen(rw->tags[k].name);
                return total;
            }
            """
        )
        body = textwrap.dedent(
            f"""\
            struct row rw = {{r, regions[r % 4], default_tags, 3}};
            if (r == {bad}) rw.tags = NULL;
            int w = parse_tags(&rw);
            grand += w;
            printf("[info] row %d region=%s tags=%d weight=%d\\n", r, rw.region, rw.ntags, w);
            """
        )
        _w(d / "src" / "report.c", _rows_c(rows, body, extra=extra))
        step = (
            "gdb --version | head -n 1\ngcc --version | head -n 1\n"
            "gcc -g -O0 -Wall -o report src/report.c\n"
            "./report || status=$?\n"
            'if [ "$status" -ne 0 ]; then\n'
            '  echo "--- report crashed (status $status); re-running under gdb ---"\n'
            "  gdb -nx -batch -ex run -ex bt -ex 'info frame' -ex 'info locals' ./report\n"
            "fi\n"
        )
        return _job(step, fetch="report-inputs", cleanup="src report")

    return build


def ubsan_overflow(rows: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        extra = textwrap.dedent(
            f"""\
            static int scale_total(int total, int row)
            {{
                int factor = (row == {bad}) ? 2147483 : 3;
                int scaled = total * factor;
                return scaled / 3;
            }}
            """
        )
        body = textwrap.dedent(
            """\
            int total = 1000 + (r * 37) % 4000;
            int s = scale_total(total, r);
            grand += s;
            printf("[info] row %d total=%d scaled=%d running=%ld\\n", r, total, s, grand);
            """
        )
        _w(d / "src" / "report.c", _rows_c(rows, body, extra=extra))
        step = (
            "gcc --version | head -n 1\n"
            "gcc -g -O1 -Wall -fsanitize=undefined -fno-sanitize-recover=undefined -o report src/report.c\n"
            "UBSAN_OPTIONS=print_stacktrace=1 ./report || status=$?\n"
        )
        return _job(step, fetch="report-inputs", cleanup="src report")

    return build


# ---------------------------------------------------------------------------------------------
# Lisp, Scheme, Prolog


def sbcl_compile(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            k = rng.randint(2, 9)
            lines = [f"(defun scale-{i:03d} (x) (* x {k}))", ""]
            if rng.random() < 0.4:
                lines += [
                    f"(defun describe-{i:03d} (x)",
                    "  (let ((unused (+ x 1)))",
                    '    (format nil "~a" x)))',
                ]
            else:
                lines += [f"(defun describe-{i:03d} (x)", '  (format nil "~a" x))']
            lines.append("")
            if i == bad:
                lines += [
                    f"(defun total-{i:03d} (xs)",
                    f"  (let ((acc (reduce #'+ (mapcar #'scale-{i:03d} xs))))",
                    "    (+ acc offset)))",
                ]
            else:
                lines += [
                    f"(defun total-{i:03d} (xs)",
                    f"  (reduce #'+ (mapcar #'scale-{i:03d} xs)))",
                ]
            _w(d / "src" / f"mod-{i:03d}.lisp", "\n".join(lines) + "\n")
        _w(
            d / "build.lisp",
            textwrap.dedent(
                """\
                (defvar *failed* nil)
                (dolist (f (sort (directory "src/*.lisp") #'string< :key #'namestring))
                  (format t "~&;; building ~a~%" (enough-namestring f))
                  (multiple-value-bind (out warnings-p failure-p)
                      (compile-file f :verbose t :print t)
                    (declare (ignore out warnings-p))
                    (when failure-p (push (enough-namestring f) *failed*))))
                (when *failed*
                  (format t "~&build failed in ~d file(s)~%" (length *failed*))
                  (sb-ext:exit :code 1))
                (format t "~&build ok~%")
                """
            ),
        )
        step = (
            "sbcl --version\nsbcl --non-interactive --no-userinit --load build.lisp || status=$?\n"
        )
        return _job(step, fetch="quicklisp-dists", cleanup="src")

    return build


def guile_wrong_type(rows: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        data = []
        for r in range(rows):
            weight = '"n/a"' if r == bad else str(rng.randint(1, 40))
            data.append(
                f'({r} "{rng.choice(WORDS)}_{r}" {rng.choice(REGIONS)} {rng.randint(10, 999)} {weight})'
            )
        _w(d / "rows.scm", "(\n" + "\n".join(data) + "\n)\n")
        _w(
            d / "report.scm",
            textwrap.dedent(
                """\
                (use-modules (ice-9 format))

                (define (row-score row)
                  (let ((total (list-ref row 3))
                        (weight (list-ref row 4)))
                    (* total weight)))

                (define (report-row row)
                  (format #t "[info] row ~a ~a region=~a total=~a~%"
                          (list-ref row 0) (list-ref row 1) (list-ref row 2) (list-ref row 3))
                  (let ((score (row-score row)))
                    (format #t "[debug] row ~a score=~a~%" (list-ref row 0) score)
                    score))

                (define rows (call-with-input-file "rows.scm" read))
                (format #t "loaded ~a rows~%" (length rows))
                (let loop ((rs rows) (sum 0))
                  (if (null? rs)
                      (format #t "done, sum=~a~%" sum)
                      (loop (cdr rs) (+ sum (report-row (car rs))))))
                """
            ),
        )
        step = "guile --version | head -n 1\nguile --no-auto-compile report.scm || status=$?\n"
        return _job(step, fetch="report-inputs", cleanup="rows.scm report.scm")

    return build


def plunit_suite(units: int, per: int, bad: tuple[int, int]) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        loads = []
        for u in range(units):
            factor = rng.randint(2, 9)
            lines = [f":- module(acme_{u:02d}_tests, []).", ":- use_module(library(plunit)).", ""]
            lines.append(f"scale_{u:02d}(X, Y) :- Y is X * {factor}.")
            if rng.random() < 0.4:
                lines.append(f"helper_{u:02d}(X, Unused) :- X > 0.")
            lines += ["", f":- begin_tests(acme_{u:02d})."]
            for k in range(per):
                want = k * factor + (1 if (u, k) == bad else 0)
                lines.append(
                    f"test(scale_{k:02d}, Y == {want}) :- "
                    f"format(user_error, '[debug] acme_{u:02d} scale ~w by {factor}~n', [{k}]), scale_{u:02d}({k}, Y)."
                )
            lines += [f":- end_tests(acme_{u:02d}).", ""]
            _w(d / "tests" / f"acme_{u:02d}.pl", "\n".join(lines))
            loads.append(f":- use_module('tests/acme_{u:02d}').")
        _w(d / "run.pl", "\n".join(loads) + "\n")
        step = (
            "swipl --version\n"
            "swipl -g 'set_test_options([silent(false)])' -g run_tests -t halt run.pl || status=$?\n"
        )
        return _job(step, fetch="swipl-packs", cleanup="tests run.pl")

    return build


# ---------------------------------------------------------------------------------------------
# The cases


def scenarios() -> list[Scenario]:
    s: list[Scenario] = []
    s.append(
        Scenario(
            "meson-ninja-compile-error",
            "meson",
            "meson + ninja",
            "meson setup build && ninja -C build -v -k 0",
            "src/mod_097.c: mod_097_f0 returns total + offset, an undeclared identifier (one of 150 files; -Wextra warnings)",
            [
                Needle(r"src/mod_097\.c:\d+:\d+: error: .offset. undeclared"),
                Needle(r"^FAILED: .*mod_097\.c\.o"),
            ],
            meson_ninja_compile(150, 97),
            version_cmd='echo "meson $(meson --version), ninja $(ninja --version), $(gcc --version | head -n 1)"',
        )
    )
    s.append(
        Scenario(
            "meson-setup-missing-dependency",
            "meson",
            "meson setup",
            "tar -cvf bundle.tar vendor src include meson.build && meson setup build (meson-log.txt printed on failure)",
            "meson.build: dependency('acme-codec', version : '>=2.1') is required and not installed (after a tar listing of 400 files and 46 compiler checks)",
            [Needle(r'ERROR: Dependency "acme-codec" not found')],
            meson_setup_missing_dep(400, 28),
            version_cmd='echo "meson $(meson --version)"',
        )
    )
    s.append(
        Scenario(
            "autoconf-configure-missing-header",
            "autotools",
            "autoreconf + ./configure",
            "autoreconf -fiv && ./configure --prefix=/opt/acme --disable-silent-rules (config.log printed on failure)",
            "configure.ac: AC_CHECK_HEADER([acme/codec.h]) fails with AC_MSG_ERROR, the header is not installed (after 48 header/function checks)",
            [
                Needle(r"^checking for acme/codec\.h\.\.\. no$"),
                Needle(r"^configure: error: acme/codec\.h not found: install libacme-codec-dev"),
            ],
            autoconf_missing_header(40),
            version_cmd='echo "$(autoconf --version | head -n 1), $(automake --version | head -n 1)"',
        )
    )
    s.append(
        Scenario(
            "verilog-iverilog-syntax",
            "verilog",
            "iverilog",
            "iverilog -v -g2012 -Wall -o /dev/null rtl/*.v (one file at a time)",
            "rtl/mod_077.v: `assign sum = a + b * k` lacks its semicolon (one of 120 modules; implicit-wire warnings)",
            [Needle(r"rtl/mod_077\.v:\d+: syntax error")],
            iverilog_syntax(120, 77),
            version_cmd="iverilog -V 2>&1 | head -n 1",
        )
    )
    s.append(
        Scenario(
            "cppcheck-array-out-of-bounds",
            "c",
            "cppcheck",
            "cppcheck --enable=all --inconclusive --std=c11 --template='{file}:{line}:{column}: {severity}: {message} [{id}]\\n{code}' --error-exitcode=1 -Iinclude src",
            "src/mod_061.c: mod_061_fill writes buf[8] of int buf[8] (`buf[8] = seed;`; one of 140 files with style/information messages)",
            [Needle(r"src/mod_061\.c:\d+:\d+: error: .*\[arrayIndexOutOfBounds\]")],
            cppcheck_project(140, 61),
            version_cmd="cppcheck --version",
        )
    )
    s.append(
        Scenario(
            "shellcheck-gcc-error",
            "shell",
            "shellcheck -f gcc",
            "shellcheck -f gcc -S style -x scripts/*.sh",
            "scripts/job_041.sh: `cp $@ /srv/acme/incoming/`, an unquoted array expansion (SC2068, an error; 110 scripts with warnings and notes)",
            [Needle(r"scripts/job_041\.sh:\d+:\d+: error: .*\[SC2068\]")],
            shellcheck_scripts(110, 41),
            version_cmd="shellcheck --version | sed -n 2p",
        )
    )
    s.append(
        Scenario(
            "yamllint-syntax-error",
            "yaml",
            "yamllint",
            "yamllint -f parsable config/",
            "config/svc_033.yaml: `value: http: //api.acme.internal: 8080`, a mapping value inside a plain scalar (one of 160 files with truthy/comment/document-start warnings)",
            [
                Needle(
                    r"config/svc_033\.yaml:\d+:\d+: \[error\] syntax error: mapping values are not allowed"
                )
            ],
            yamllint_configs(160, 33),
            version_cmd="yamllint --version",
        )
    )
    s.append(
        Scenario(
            "valgrind-invalid-read",
            "c",
            "valgrind memcheck",
            "valgrind -v --leak-check=full --show-leak-kinds=all --track-origins=yes --error-exitcode=1 ./report",
            "src/report.c: sum_weights reads weights[10] of a 10-int heap block at row 900 (of 1,300 logged rows; labels leak every 50th row)",
            [
                Needle(r"==\d+== Invalid read of size 4"),
                Needle(r"==\d+==\s+at 0x[0-9A-F]+: sum_weights \(report\.c:\d+\)"),
            ],
            valgrind_invalid_read(1300, 900),
            version_cmd="valgrind --version",
        )
    )
    s.append(
        Scenario(
            "gdb-batch-backtrace",
            "c",
            "gdb -batch",
            "./report, then gdb -nx -batch -ex run -ex bt -ex 'info frame' -ex 'info locals' ./report",
            "src/report.c: row 1040 has tags = NULL, so parse_tags dereferences a null pointer (of 1,400 logged rows)",
            [
                Needle(r"Program received signal SIGSEGV, Segmentation fault\."),
                Needle(r"^#0 .*parse_tags .*at src/report\.c:\d+$"),
            ],
            gdb_backtrace(1400, 1040),
            version_cmd="gdb --version | head -n 1",
        )
    )
    s.append(
        Scenario(
            "ubsan-signed-overflow",
            "c",
            "gcc -fsanitize=undefined",
            "gcc -fsanitize=undefined -fno-sanitize-recover=undefined && ./report",
            "src/report.c: scale_total multiplies by 2147483 at row 1100, a signed int overflow (of 1,800 logged rows)",
            [Needle(r"src/report\.c:\d+:\d+: runtime error: signed integer overflow")],
            ubsan_overflow(1800, 1100),
            version_cmd="gcc --version | head -n 1",
        )
    )
    s.append(
        Scenario(
            "sbcl-undefined-variable",
            "common-lisp",
            "sbcl compile-file",
            "sbcl --non-interactive --no-userinit --load build.lisp (compile-file :verbose t :print t per file)",
            "src/mod-083.lisp: total-083 adds the undefined variable offset (one of 130 files; unused-variable style warnings)",
            [
                Needle(r"; in: DEFUN TOTAL-083"),
                Needle(r"undefined variable: .*OFFSET"),
            ],
            sbcl_compile(130, 83),
            version_cmd="sbcl --version",
        )
    )
    s.append(
        Scenario(
            "guile-wrong-type",
            "scheme",
            "guile",
            "guile --no-auto-compile report.scm",
            'rows.scm: row 1230 has the weight "n/a", so (* total weight) fails (of 1,700 logged rows)',
            [Needle(r'Wrong type argument in position \d+: "n/a"')],
            guile_wrong_type(1700, 1230),
            version_cmd="guile --version | head -n 1",
        )
    )
    s.append(
        Scenario(
            "prolog-plunit-failure",
            "prolog",
            "swipl plunit",
            "swipl -g run_tests -t halt run.pl",
            "tests/acme_17.pl: test scale_23 expects the product + 1 (one of 1,200 tests in 40 units; singleton warnings)",
            [
                Needle(r"^ERROR: .*tests/acme_17\.pl:\d+:$"),
                Needle(r"test scale_23: wrong answer"),
            ],
            plunit_suite(40, 30, (17, 23)),
            version_cmd="swipl --version",
        )
    )
    s.append(
        Scenario(
            "meson-test-long-line",
            "meson",
            "meson test",
            "meson test -C build -v --num-processes 1 --print-errorlogs",
            "tests/render_check.c: case render_042's snapshot differs in one cell; the FAIL line lists 600 expected and 600 got values (one of 60 tests)",
            [
                Needle(r"FAIL: snapshot mismatch in case render_042: expected=\["),
                Needle(r"\brender_042\s+FAIL\b"),
            ],
            meson_test_long_line(60, 42, 600),
            version_cmd='echo "meson $(meson --version)"',
        )
    )
    return s


# ---------------------------------------------------------------------------------------------
# Running


def main(argv: list[str] | None = None) -> int:
    return g.run_batch(
        argv, doc=__doc__, cases=scenarios(), prefix=PREFIX, batch=3, check=g.check_needles
    )


if __name__ == "__main__":
    sys.exit(main())
