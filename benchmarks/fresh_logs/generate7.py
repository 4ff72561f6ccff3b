"""Generate batch 7 of the fresh-logs held-out set: real failures in the hard shapes of real logs.

Same method as `generate.py` (batch 1) and `generate6.py` (batch 6), whose writer, labelling and
some fixtures this script reuses: every case is a small fixture project written into a temporary
folder with one injected fault (said per case), built, checked or run by a real local tool, with
stdout and stderr merged. What batches 1 to 6 do not have is the shape of the log around the
failure:

- very long lines: the explaining line is hundreds to thousands of characters long (a JSON error
  body printed by curl from a local HTTP server, a g++ template diagnostic, a Python
  `CalledProcessError` with a long compiler argv) or sits among such lines (a minified bundle's
  source line printed by node, make's g++ command lines of ~1,500 characters);
- progress output rewritten in place with carriage returns (wget's bar, a training loop's
  progress) with the error right after or on the same physical line;
- interleaved parallel output (`make -j4` with chatty recipes, pytest-xdist workers, tcltest
  files run four at a time by `xargs -P4`) and stderr written into the middle of a stdout line;
- Windows-style logs: CRLF line endings as a Windows runner writes them, backslash paths;
- ecosystems batches 1 to 6 lack: Kotlin (kotlinc), awk (gawk), ShellCheck, jq.

The labels are decided from the injected fault alone: a regular expression per needle, written
with the fault, selects the log line; where the explaining text is part of a longer physical
line (a `\\r`-joined progress line, a JSON body, stderr inside a stdout line) group `n` of the
rule selects that part, which is then a substring of the line. Lines are split on `\\n` only
(a CRLF line keeps its `\\r`, which stripping removes from the needle). Nothing here imports or
runs the package.

Tools: gcc, g++, make, node, default-jdk, tclsh, curl, wget, git and python3 from the
machine; kotlin, gawk, shellcheck and jq from Debian (`apt-get install -y kotlin gawk shellcheck
jq`); pytest and pytest-xdist from PyPI, installed by this script into a venv under
`FRESH_LOGS_TOOLS7`, default /tmp/fresh_tools7, never the project's venv. Versions are written
to every case's `tool_version`.

Run (from the project root; a few minutes):

    python benchmarks/fresh_logs/generate7.py            # every case: batch7/{logs/,cases.jsonl}
    python benchmarks/fresh_logs/generate7.py --only ID  # some cases (their rows are replaced)
"""

# The fixture projects' sources are written inline: some of their lines are longer than ours.
# ruff: noqa: E501

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate as g  # batch 1's job pieces and writer (a script in this folder)

HERE = Path(__file__).resolve().parent / "batch7"
PREFIX = "fresh7/"
TOOLS = Path(os.environ.get("FRESH_LOGS_TOOLS7", "/tmp/fresh_tools7"))

# batch 1's writer, pointed at batch 7's folder (and its PATH at batch 7's venv)
g.HERE = HERE
g.LOGS = HERE / "logs"
g.CASES = HERE / "cases.jsonl"
g.GENERATED = "2026-12-08"
g.BUILD_ROOT = Path(os.environ.get("FRESH_LOGS_BUILD7", "/tmp/fresh_logs_build7"))
g.TOOLS = TOOLS

Needle = g.Needle
Scenario = g.Scenario
_w = g._w
_job = g._job
_run_step = g._run_step

Build = Callable[[Path, random.Random], str]
PY = f"{TOOLS}/venv/bin/python"

# ---------------------------------------------------------------------------------------------
# A local HTTP server (127.0.0.1, a free port) the fetching cases talk to: it serves files from
# `srv/` and answers POSTs with the JSON bodies of `srv/_replies/<path>.json` (status in the file)

SERVER = r"""
import http.server, json, os, sys, time

ROOT = os.path.abspath("srv")


class H(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *a, **kw):
        super().__init__(*a, directory=ROOT, **kw)

    def log_message(self, fmt, *args):
        pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n)
        reply = os.path.join(ROOT, "_replies", self.path.strip("/").replace("/", "_") + ".json")
        if os.path.exists(reply):
            spec = json.load(open(reply))
            status, out = spec["status"], json.dumps(spec["body"], separators=(",", ":"))
        else:
            status = 201
            out = json.dumps({"status": "accepted", "path": self.path, "bytes": len(body), "revision": int(time.time()) % 100000})
        data = out.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
open(".port", "w").write(str(s.server_address[1]))
s.serve_forever()
"""

START_SERVER = """\
python3 .ci/server.py & server_pid=$!
for i in $(seq 50); do [ -s .port ] && break; sleep 0.1; done
PORT=$(cat .port)
echo "local artifact server on 127.0.0.1:$PORT (pid $server_pid)"
"""
STOP_SERVER = 'kill "$server_pid" 2>/dev/null || true\necho "artifact server stopped"\n'


def _server(d: Path) -> None:
    _w(d / ".ci" / "server.py", SERVER)


def _server_job(body: str, *, cleanup: str | None = None) -> str:
    return _job(START_SERVER + body + STOP_SERVER, cleanup=cleanup)


# 1. curl: a deploy script POSTs manifests; one gets a 422 whose JSON body is one long line
def curl_deploy_422(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        _server(d)
        services = [
            "billing",
            "ledger",
            "invoices",
            "search",
            "gateway",
            "reports",
            "auth",
            "mailer",
        ]
        for i in range(n):
            svc = services[i % len(services)]
            manifest = {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {
                    "name": f"{svc}-{i:02d}",
                    "labels": {"team": "platform", "tier": "backend"},
                },
                "spec": {
                    "replicas": 40 if i == bad else rng.randint(2, 8),
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": svc,
                                    "image": f"registry.acme.example/{svc}:3.{rng.randint(0, 40)}.{rng.randint(0, 9)}",
                                    "resources": {"limits": {"cpu": "500m", "memory": "512Mi"}},
                                }
                            ]
                        }
                    },
                },
            }
            _w(
                d / "deploy" / f"{i:02d}-{svc}.json",
                __import__("json").dumps(manifest, indent=2) + "\n",
            )
        svc = services[bad % len(services)]
        causes = [
            {
                "field": f"spec.template.spec.containers[{k}].resources",
                "reason": "FieldValueValid",
                "message": "resources within the namespace's LimitRange",
            }
            for k in range(3)
        ]
        causes.insert(
            1,
            {
                "field": "spec.replicas",
                "reason": "FieldValueInvalid",
                "message": "Invalid value: 40: must be less than or equal to the namespace quota maxReplicas=10 (namespace acme-prod, quota acme-prod-compute, currently used 62 of 70 pods)",
            },
        )
        body = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {"resourceVersion": str(rng.randint(10**6, 10**7))},
            "status": "Failure",
            "message": f'Deployment.apps "{svc}-{bad:02d}" is invalid: spec.replicas: Invalid value: 40: must be less than or equal to the namespace quota maxReplicas=10',
            "reason": "Invalid",
            "details": {
                "name": f"{svc}-{bad:02d}",
                "group": "apps",
                "kind": "Deployment",
                "causes": causes,
                "retryAfterSeconds": 0,
                "admission": {
                    "webhook": "quota.acme.example",
                    "policy": "acme-prod-compute",
                    "evaluated": [f"rule-{k:02d}" for k in range(24)],
                },
            },
            "code": 422,
        }
        _w(
            d
            / "srv"
            / "_replies"
            / f"apis_apps_v1_namespaces_acme-prod_deployments_{svc}-{bad:02d}.json",
            __import__("json").dumps({"status": 422, "body": body}),
        )
        _w(d / "srv" / "healthz", "ok\n")
        script = textwrap.dedent(
            """\
            curl -sS -f http://127.0.0.1:$PORT/healthz
            for f in deploy/*.json; do
              name=$(basename "$f" .json); name=${name#*-}-${name%%-*}
              echo "--- applying $f"
              sed -n '1,12p' "$f"
              curl -sS --fail-with-body -X POST -H 'Content-Type: application/json' \\
                --data-binary @"$f" "http://127.0.0.1:$PORT/apis/apps/v1/namespaces/acme-prod/deployments/$name" \\
                -w '\\nHTTP %{http_code} in %{time_total}s (%{size_upload} bytes up, %{size_download} down)\\n' || { status=$?; echo "apply failed for $f"; break; }
            done
            echo "rolling back the partial deploy"
            for f in deploy/*.json; do echo "deployment.apps/$(basename "$f" .json) unchanged"; done
            """
        )
        return _server_job(script, cleanup="deploy")

    return build


# 2. g++: std::cout << a map of vectors of pairs: one long "no match for operator<<" line,
#    among make's command lines of ~1,500 characters
def gxx_template_long(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        _w(
            d / "include" / "registry.hpp",
            "#pragma once\n#include <map>\n#include <string>\n#include <vector>\n#include <utility>\n#include <iostream>\nusing Registry = std::map<std::string, std::vector<std::pair<int, std::string>>>;\n",
        )
        for i in range(n):
            if i == bad:
                use = "    std::cout << reg << std::endl;\n"
            else:
                use = '    for (const auto &kv : reg) std::cout << kv.first << " " << kv.second.size() << "\\n";\n'
            _w(
                d / "src" / f"unit_{i:02d}.cpp",
                '#include "registry.hpp"\n#include <algorithm>\n#include <numeric>\n\n'
                f"int unit_{i:02d}(int seed)\n{{\n    Registry reg;\n"
                f'    for (int k = 0; k < {rng.randint(3, 9)}; ++k) reg["key" + std::to_string(k)].emplace_back(k * seed, "v");\n'
                f"{use}"
                "    std::vector<int> xs(16);\n    std::iota(xs.begin(), xs.end(), seed);\n"
                "    int unused_total = 0;\n"
                "    return std::accumulate(xs.begin(), xs.end(), 0);\n}\n",
            )
        incs = " ".join(
            f"-Ithird_party/{lib}/include"
            for lib in [
                "abseil-cpp",
                "boost_1_83_0",
                "fmt-10.1.1",
                "spdlog-1.12.0",
                "protobuf-24.4/src",
                "grpc-1.59.2",
                "re2-2023-11-01",
                "googletest-1.14.0/googletest",
                "googletest-1.14.0/googlemock",
                "nlohmann_json-3.11.2",
                "zlib-1.3",
                "openssl-3.1.4",
                "curl-8.4.0",
                "libuv-1.46.0",
                "c-ares-1.21.0",
            ]
        )
        defs = " ".join(
            f"-D{k}"
            for k in [
                "ACME_BUILD=1",
                "ACME_VERSION_MAJOR=4",
                "ACME_VERSION_MINOR=12",
                "ACME_WITH_GRPC=1",
                "ACME_WITH_TLS=1",
                "ABSL_USES_STD_STRING_VIEW",
                "BOOST_ALL_NO_LIB",
                "BOOST_ASIO_NO_DEPRECATED",
                "FMT_HEADER_ONLY",
                "SPDLOG_FMT_EXTERNAL",
                "PROTOBUF_USE_DLLS",
                "GRPC_ALLOW_EXCEPTIONS=1",
                "NDEBUG",
                "_GLIBCXX_ASSERTIONS",
                "_FILE_OFFSET_BITS=64",
                "CURL_STATICLIB",
                "ZLIB_CONST",
                "OPENSSL_API_COMPAT=0x10100000L",
            ]
        )
        warn = "-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Wunused -Woverloaded-virtual -Wnull-dereference -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough -Wmisleading-indentation -Wduplicated-cond -Wduplicated-branches -Wlogical-op -Wuseless-cast"
        opts = "-O2 -g -std=c++17 -fPIC -fno-omit-frame-pointer -fstack-protector-strong -fvisibility=hidden -fvisibility-inlines-hidden -ffunction-sections -fdata-sections -pipe -MMD -MP"
        _w(
            d / "Makefile",
            f"CXX ?= g++\nCXXFLAGS = {opts} {warn} -Iinclude {incs} {defs}\n"
            "SRCS := $(sort $(wildcard src/*.cpp))\nOBJS := $(patsubst src/%.cpp,obj/%.o,$(SRCS))\n"
            "all: libunits.a\n"
            "obj/%.o: src/%.cpp\n\t@mkdir -p obj\n\t$(CXX) $(CXXFLAGS) -c $< -o $@\n"
            "libunits.a: $(OBJS)\n\tar rcs $@ $^\n.PHONY: all\n",
        )
        return _job(_run_step("make -k -j2 all"), cleanup="obj include")

    return build


# 3. node: a minified bundle (one line of ~60 kB) throws a TypeError at run time
def node_minified(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        mods = []
        for i in range(n):
            key = "rates" if i == bad else "rate"
            mods.append(
                f'function m{i}(t){{var e=t.regions||[],r={{}};for(var n=0;n<e.length;n++){{var o=e[n];r[o.code]=(o.net*(1+t.tax["{key}"].{"rate" if i != bad else "value"}))/100}}return {{id:"mod-{i:03d}",total:Object.keys(r).reduce(function(a,k){{return a+r[k]}},0),label:"report section {i} of {n} "+"{rng.choice(["alpha", "beta", "gamma", "delta"])}".repeat(2)}}}}'
            )
        bundle = (
            '"use strict";(()=>{var cfg={regions:Array.from({length:24},(x,i)=>({code:"R"+i,net:1000+i*37})),tax:{rate:{rate:0.2,zone:"EU"}}};'
            + ";".join(mods)
            + ";var out=[];"
            + "".join(
                f"out.push(m{i}(cfg));console.log(JSON.stringify(out[out.length-1]));"
                for i in range(n)
            )
            + 'console.log("report complete")})();\n//# sourceMappingURL=app.min.js.map\n'
        )
        _w(d / "dist" / "app.min.js", bundle)
        for i in range(n):
            _w(
                d / "src" / f"section-{i:03d}.js",
                f"// section {i}\nexport function m{i}(cfg) {{ return cfg; }}\n",
            )
        script = textwrap.dedent(
            f"""\
            node --version
            echo "bundling {n} modules (esbuild-compatible output, minify=true, target=node18)"
            for f in src/*.js; do printf '  %-40s %6d bytes\\n' "$f" "$(wc -c < "$f")"; done
            printf '  dist/app.min.js  %d bytes (1 line)\\n' "$(wc -c < dist/app.min.js)"
            echo "Done in 412ms"
            """
        )
        return _job(script + _run_step("node dist/app.min.js"), cleanup="dist")

    return build


# 4. python build script: compiles C extension sources with long argv; CalledProcessError
def python_build_ext(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            ret = "return acc + missing_scale;" if i == bad else "return acc;"
            _w(
                d / "src" / "acme" / f"_speedups_{i:02d}.c",
                "#include <stddef.h>\n#include <stdint.h>\n\n"
                f"double speedup_{i:02d}(const double *xs, size_t n)\n{{\n    double acc = 0.0;\n"
                f"    for (size_t k = 0; k < n; k++) acc += xs[k] * {rng.randint(2, 90)}.0;\n    int spare;\n    {ret}\n}}\n",
            )
        _w(
            d / "build_ext.py",
            textwrap.dedent(
                """\
                import glob, os, subprocess, sys, sysconfig

                CFLAGS = sysconfig.get_config_var("CFLAGS").split() + ["-fPIC", "-Wall", "-Wextra", "-Werror=implicit-function-declaration", "-O2"]
                INCLUDES = ["-I" + sysconfig.get_paths()["include"], "-Isrc/acme/include"] + ["-Ibuild/deps/%s/include" % d for d in ("libffi-3.4.4", "zstd-1.5.5", "lz4-1.9.4", "xxhash-0.8.2", "simdjson-3.6.0", "blake3-1.5.0")]
                DEFINES = ["-DNDEBUG", "-DACME_SPEEDUPS=1", "-DPy_LIMITED_API=0x03090000", "-DACME_VERSION=\\"4.12.0\\""]


                def compile_one(src):
                    obj = os.path.join("build", "temp.linux-x86_64-cpython", src[:-2] + ".o")
                    os.makedirs(os.path.dirname(obj), exist_ok=True)
                    cmd = ["gcc"] + CFLAGS + INCLUDES + DEFINES + ["-c", src, "-o", obj]
                    print(" ".join(cmd), flush=True)
                    subprocess.run(cmd, check=True)
                    return obj


                def main():
                    print("running build_ext", flush=True)
                    print("building 'acme._speedups' extension", flush=True)
                    objs = [compile_one(src) for src in sorted(glob.glob("src/acme/_speedups_*.c"))]
                    print("linking %d objects" % len(objs))


                main()
                """
            ),
        )
        return _job(_run_step("python3 build_ext.py"), cleanup="build src")

    return build


# 5. wget: a dataset fetch with the progress bar (carriage returns); one file is missing
def wget_progress_404(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        _server(d)
        names = []
        for i in range(n):
            name = f"shard-{i:02d}-of-{n:02d}.parquet"
            names.append(name)
            if i != bad:
                (d / "srv" / "datasets" / "orders-2026q3").mkdir(parents=True, exist_ok=True)
                (d / "srv" / "datasets" / "orders-2026q3" / name).write_bytes(
                    rng.randbytes(rng.randint(1_200_000, 2_400_000))
                )
        _w(d / "MANIFEST", "".join(f"datasets/orders-2026q3/{x}\n" for x in names))
        script = textwrap.dedent(
            """\
            mkdir -p data
            while read -r path; do
              wget --progress=bar:force:noscroll --limit-rate=6m -O "data/$(basename "$path")" "http://127.0.0.1:$PORT/$path" || { status=$?; echo "download failed: $path"; break; }
            done < MANIFEST
            ls -l data
            sha256sum data/* | head -n 40
            """
        )
        return _server_job(script, cleanup="MANIFEST")

    return build


# 6. python: a training loop printing progress with \\r; the loss goes NaN and it raises
def python_train_nan(epochs: int, steps: int, bad: tuple[int, int]) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        _w(
            d / "train.py",
            textwrap.dedent(
                f"""\
                import math, random, sys, time

                random.seed(7)


                def check(loss, epoch, step):
                    if math.isnan(loss):
                        raise FloatingPointError(f"loss is nan at epoch {{epoch}} step {{step}} (lr=0.3, grad_norm=inf): stopping")


                def run_epoch(epoch):
                    loss = 2.5 / epoch
                    for step in range(1, {steps} + 1):
                        loss = loss * 0.999 + random.random() * 0.001
                        if (epoch, step) == {bad!r}:
                            loss = float("nan")
                        bar = "=" * (step * 30 // {steps})
                        sys.stderr.write(f"\\rEpoch {{epoch}}/{epochs} {{step:4d}}/{steps} [{{bar:<30}}] loss={{loss:.4f}} lr=0.3 {{step * 1.7:.1f}}it/s")
                        sys.stderr.flush()
                        check(loss, epoch, step)
                    sys.stderr.write("\\n")
                    print(f"epoch {{epoch}}: train_loss={{loss:.4f}} val_loss={{loss * 1.1:.4f}} val_acc={{0.5 + epoch / 40:.3f}}", flush=True)
                    print(f"saved checkpoint checkpoints/epoch-{{epoch:02d}}.pt", flush=True)


                for epoch in range(1, {epochs} + 1):
                    run_epoch(epoch)
                """
            ),
        )
        pre = "python3 --version\necho 'loading dataset: 48,000 train / 6,000 val examples'\n"
        return _job(pre + _run_step("python3 train.py"), cleanup="train.py")

    return build


# 7. make -j4 with chatty recipes (a code generator per file); lines of the jobs interleave
def make_j4_interleaved(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        g._c_project(d, rng, n)
        g._c_main(d, "")
        path = d / "src" / f"mod_{bad:03d}.c"
        _w(
            path,
            path.read_text().replace("    return total;", "    return total * scale_offset;", 1),
        )
        _w(
            d / "gen.sh",
            textwrap.dedent(
                """\
                #!/bin/sh
                # gen.sh NAME: a slow table generator, chatty like many code generators
                name=$1
                for stage in parse resolve layout emit; do
                  echo "[gen $name] $stage: $(( $(printf '%s' "$name$stage" | cksum | cut -d' ' -f1) % 7 + 3 )) tables"
                  sleep 0.0$(( $(printf '%s' "$stage$name" | cksum | cut -d' ' -f1) % 5 + 1 ))
                done
                echo "[gen $name] wrote gen/$name.h"
                """
            ),
        )
        mk = (d / "Makefile").read_text()
        mk = mk.replace(
            "\t@mkdir -p obj\n",
            "\t@mkdir -p obj gen\n\t@sh gen.sh $*\n",
        )
        _w(d / "Makefile", mk)
        return _job(_run_step("make -k -j4 all"), cleanup="obj gen")

    return build


# 8. pytest-xdist: four workers, -v, one failing test among 1,200
def pytest_xdist(files: int, per: int, bad: tuple[int, int]) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for f in range(files):
            cases = []
            for k in range(per):
                want = k * 31 + f + (1 if (f, k) == bad else 0)
                cases.append(f"({k}, {want})")
            _w(
                d / "tests" / f"test_quote_{f:02d}.py",
                "import time\n\nimport pytest\n\n\ndef price(k):\n    time.sleep(0.002)\n"
                f"    return k * 31 + {f}\n\n\n"
                f"@pytest.mark.parametrize(('k', 'want'), [{', '.join(cases)}])\n"
                "def test_price(k, want):\n    assert price(k) == want\n",
            )
        cmd = f"{PY} -m pytest -n 4 -v -p no:cacheprovider tests"
        return _job(_run_step(cmd))

    return build


# 9. tcltest files run four at a time by xargs -P4: their outputs interleave line by line
def tcl_parallel(files: int, per: int, bad: tuple[int, int]) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for f in range(files):
            lines = [
                "package require tcltest 2",
                "namespace import ::tcltest::*",
                "fconfigure stdout -buffering line",
                "configure -verbose {pass body error start}",
                f"proc tariff {{n}} {{ after 3; return [expr {{$n * 17 + {f}}}] }}",
            ]
            for k in range(per):
                want = k * 17 + f + (1 if (f, k) == bad else 0)
                lines.append(
                    f"test tariff-{f}.{k} {{tariff of {k} in zone {f}}} -body {{ tariff {k} }} -result {want}"
                )
            lines.append("set failed $::tcltest::numTests(Failed)")
            lines.append("cleanupTests")
            lines.append("exit [expr {$failed > 0}]")
            _w(d / "tests" / f"tariff{f:02d}.test", "\n".join(lines) + "\n")
        script = "tclsh <<< 'puts [info patchlevel]'\n"
        script += _run_step("ls tests/*.test | xargs -P4 -n1 tclsh")
        script += 'grep -c tariff tests/*.test | sed "s/^/cases: /"\n'
        return _job(script)

    return build


# 10. C test runner: "name ... " on unbuffered stdout, glibc's assert message on stderr mid-line
def c_assert_midline(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        tests = []
        for i in range(n):
            a, b = rng.randint(2, 99), rng.randint(2, 99)
            want = a * b + (1 if i == bad else 0)
            warn = (
                f'    if ({i} % 9 == 4) fprintf(stderr, "[warn] rounding table {i} reloaded\\n");\n'
            )
            tests.append(
                f"static void test_{i:04d}_rounding(void)\n{{\n{warn}    assert(mul_round({a}, {b}) == {want});\n}}\n"
            )
        reg = "\n".join(f"    RUN(test_{i:04d}_rounding);" for i in range(n))
        _w(
            d / "tests" / "runner.c",
            "#include <assert.h>\n#include <stdio.h>\n#include <unistd.h>\n\n"
            "static int mul_round(int a, int b) { usleep(200); return a * b; }\n\n"
            + "\n".join(tests)
            + '\n#define RUN(t) do { printf("%-28s ... ", #t); t(); printf("ok\\n"); } while (0)\n\n'
            "int main(void)\n{\n    setvbuf(stdout, NULL, _IONBF, 0);\n"
            + reg
            + '\n    puts("all tests passed");\n    return 0;\n}\n',
        )
        body = "gcc --version | head -n 1\n"
        body += _run_step("gcc -g -O0 -Wall -o tests/runner tests/runner.c && ./tests/runner")
        return _job(body, cleanup="tests")

    return build


# CRLF: the job's whole output is written with \\r\\n as a Windows runner's log is
CRLF_PIPE = "python3 -u -c \"import sys\nfor b in sys.stdin.buffer: sys.stdout.buffer.write(b.rstrip(b'\\\\n') + b'\\\\r\\\\n'); sys.stdout.buffer.flush()\""


def windows(inner: Build, workspace: str) -> Build:
    """Runs `inner`'s job with a Windows runner's preamble, every line ending in CRLF."""

    def build(d: Path, rng: random.Random) -> str:
        script = inner(d, rng)
        _w(d / "job.sh", script)
        pre = textwrap.dedent(
            f"""\
            echo "Current runner version: '2.321.0'"
            echo "Operating System"
            echo "Microsoft Windows Server 2022"
            echo "10.0.20348"
            echo "Runner Image: windows-2022 Version: 20261201.1.0"
            echo "Prepare workflow directory"
            echo "Syncing repository: acme/widgets"
            echo 'Working directory: {workspace}'
            echo '[command]"C:\\Program Files\\Git\\bin\\git.exe" init {workspace}'
            echo '[command]"C:\\Program Files\\Git\\bin\\git.exe" -c protocol.version=2 fetch --no-tags --prune --no-recurse-submodules --depth=1 origin'
            echo 'Run .\\ci\\job.sh'
            echo 'shell: C:\\Program Files\\Git\\bin\\bash.EXE --noprofile --norc -e -o pipefail {{0}}'
            """
        )
        post = textwrap.dedent(
            f"""\
            echo "##[error]Process completed with exit code $rc."
            echo "Post job cleanup."
            echo '[command]"C:\\Program Files\\Git\\bin\\git.exe" version'
            git version
            echo '[command]"C:\\Program Files\\Git\\bin\\git.exe" config --local --name-only --get-regexp core\\.sshCommand'
            echo 'Removing {workspace}\\.ci\\cache'
            echo "Cleaning up orphan processes"
            """
        )
        return f"set -o pipefail\n{{\n{pre}bash job.sh 2>&1; rc=$?\n{post}exit $rc\n}} 2>&1 | {CRLF_PIPE}\n"

    return build


# 11. Java (Windows runner, CRLF): a reconciliation job throws after 1,500 INFO lines
def java_reconcile(n: int, bad: int) -> Build:
    return g.java_runtime(n, bad)


# 12. Python (Windows runner, CRLF): an import job reads data\\in\\batch_NNN.csv; one is missing
def python_backslash_paths(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            if i != bad:
                rows = "".join(f"{i}-{k},{rng.randint(1, 900)},EUR\n" for k in range(30))
                _w(d / f"data\\in\\batch_{i:03d}.csv", "id,amount,currency\n" + rows)
        _w(
            d / "import_batches.py",
            textwrap.dedent(
                f"""\
                import csv, logging, sys

                logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)-7s %(name)s: %(message)s", stream=sys.stdout)
                log = logging.getLogger("acme.import")


                def load(path):
                    with open(path, newline="") as fh:
                        return list(csv.DictReader(fh))


                def main():
                    total = 0
                    for i in range({n}):
                        path = "data\\\\in\\\\batch_%03d.csv" % i
                        rows = load(path)
                        for r in rows:
                            total += int(r["amount"])
                            if int(r["amount"]) > 880:
                                log.warning("large amount in %s: %s %s", path, r["id"], r["amount"])
                        log.info("imported %s: %d rows, running total %d -> C:\\\\acme\\\\warehouse\\\\staging\\\\batch_%03d.parquet", path, len(rows), total, i)
                    log.info("done")


                main()
                """
            ),
        )
        return _job(_run_step("python3 import_batches.py"))

    return build


# 13. Kotlin: kotlinc over 40 files (unused-variable warnings); one type mismatch
def kotlin_mismatch(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            val = '"%d".format(base)' if i == bad else "base * 3"
            _w(
                d / "src" / "com" / "acme" / "pricing" / f"Rule{i:02d}.kt",
                "package com.acme.pricing\n\n"
                f"class Rule{i:02d}(private val base: Int) {{\n"
                f"    fun apply(qty: Int): Int {{\n        val scratch = qty * {rng.randint(2, 9)}\n"
                f"        val weight: Int = {val}\n        return weight + qty\n    }}\n}}\n",
            )
        _w(
            d / "src" / "com" / "acme" / "pricing" / "Main.kt",
            "package com.acme.pricing\n\nfun main() {\n    println(Rule00(4).apply(3))\n}\n",
        )
        body = "kotlinc -version 2>&1\nfind src -name '*.kt' | sort\n"
        body += _run_step("kotlinc -d out $(find src -name '*.kt' | sort)")
        return _job(body, cleanup="src")

    return build


# 14. gawk: a report over a 6,000-row CSV; a region with zero orders divides by zero
def gawk_report(rows: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        lines = ["region,orders,revenue"]
        for i in range(rows):
            lines.append(
                f"R{i:05d},{0 if i == bad else rng.randint(1, 400)},{rng.randint(100, 90000)}"
            )
        _w(d / "data" / "regions.csv", "\n".join(lines) + "\n")
        _w(
            d / "scripts" / "report.awk",
            textwrap.dedent(
                """\
                # report.awk: revenue per order for each region
                BEGIN { FS = ","; OFS = "\\t"; print "region", "orders", "revenue", "per_order" }
                FNR == 1 { next }
                {
                    orders = $2 + 0
                    revenue = $3 + 0
                    total += revenue
                    if (orders > 390) printf "warning: region %s: %d orders, check the feed\\n", $1, orders > "/dev/stderr"
                    per = revenue / orders
                    print $1, orders, revenue, sprintf("%.2f", per)
                }
                END { print "TOTAL", NR - 1, total }
                """
            ),
        )
        body = "gawk --version | head -n 1\n"
        body += _run_step("gawk -f scripts/report.awk data/regions.csv")
        return _job(body, cleanup="data scripts")

    return build


# 15. ShellCheck: a style pass (not gating) over 50 scripts, then the gating error pass
def shellcheck_gate(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        for i in range(n):
            extra = 'if [ "$mode" = "full" ]; then\n  echo full\n' if i == bad else ""
            _w(
                d / "scripts" / f"deploy_{i:02d}.sh",
                "#!/bin/bash\nset -eu\n"
                f"mode=${{1:-quick}}\ntarget=$2\n"
                f"files=$(ls /srv/releases/{i})\n"
                "for f in $files; do\n  cp $f $target/\ndone\n"
                f"{extra}"
                f"echo done $mode `date`\n",
            )
        body = "shellcheck --version\n"
        body += "shellcheck -f gcc -S style scripts/*.sh || true\n"
        body += "shellcheck -S warning scripts/*.sh | tail -n 200 || true\n"
        body += _run_step("shellcheck -S error scripts/*.sh")
        return _job(body)

    return build


# 16. jq: a release-notes pipeline over 30 JSON files; one has a null "changes"
def jq_pipeline(n: int, bad: int) -> Build:
    def build(d: Path, rng: random.Random) -> str:
        import json

        for i in range(n):
            changes = (
                None
                if i == bad
                else [
                    {
                        "type": rng.choice(["fix", "feat", "chore"]),
                        "summary": f"change {k} of component {i}",
                        "pr": rng.randint(1000, 9999),
                    }
                    for k in range(25)
                ]
            )
            _w(
                d / "notes" / f"component-{i:02d}.json",
                json.dumps(
                    {"component": f"comp-{i:02d}", "version": f"4.{i}.0", "changes": changes},
                    indent=2,
                )
                + "\n",
            )
        body = "jq --version\n"
        body += 'for f in notes/*.json; do\n  echo "== $f"\n  jq -r \'.component as $c | .changes[] | "\\($c) \\(.type): \\(.summary) (#\\(.pr))"\' "$f" || { status=$?; break; }\ndone\n'
        return _job(body, cleanup="notes")

    return build


# ---------------------------------------------------------------------------------------------
# The cases


def scenarios() -> list[Scenario]:
    win_java = r"D:\a\ledger-sync\ledger-sync"
    win_py = r"D:\a\warehouse\warehouse"
    return [
        Scenario(
            "curl-deploy-422-json-body",
            "http",
            "curl",
            "curl -sS --fail-with-body -X POST --data-binary @deploy/NN-svc.json http://127.0.0.1:$PORT/apis/apps/v1/...",
            "deploy/27-*.json asks for 40 replicas and the local API server answers 422 with a one-line JSON Status body of ~1,350 characters (the quota message inside), printed by curl --fail-with-body on the line after its own `curl: (22)` message (stderr before the buffered body); 40 manifests applied before it with their JSON heads and HTTP timings, a rollback listing after",
            [
                Needle(
                    r'(?P<n>"message":"Deployment\.apps \\"[a-z]+-27\\" is invalid: spec\.replicas: Invalid value: 40: [^"]+")'
                ),
                Needle(r"(?P<n>curl: \(22\) The requested URL returned error: 422.*)"),
            ],
            curl_deploy_422(40, 27),
            version_cmd="curl --version | head -n 1",
        ),
        Scenario(
            "gxx-template-operator-long-line",
            "c++",
            "g++",
            "make -k -j2 all",
            "src/unit_23.cpp streams a std::map<std::string, std::vector<std::pair<int, std::string>>> to std::cout: g++'s one-line `no match for operator<<` diagnostic is hundreds of characters long (and followed by pages of candidate notes); 40 files compiled by make with ~1,500-character command lines and -Wall/-Wextra warnings",
            [Needle(r"^src/unit_23\.cpp:\d+:\d+: error: no match for .operator<<.")],
            gxx_template_long(40, 23),
            version_cmd="g++ --version | head -n 1",
        ),
        Scenario(
            "node-minified-bundle-typeerror",
            "javascript",
            "node",
            "node dist/app.min.js",
            "dist/app.min.js, a one-line minified bundle of 60 modules (~20 kB), reads t.tax.rates.value in module 41 where the config has tax.rate: node prints the whole bundle line with a caret, then the TypeError; before it a bundler-like listing of 60 sources and 41 report rows of JSON",
            [Needle(r"^TypeError: Cannot read properties of undefined \(reading 'value'\)")],
            node_minified(60, 41),
            version_cmd="node --version",
        ),
        Scenario(
            "python-build-ext-calledprocesserror",
            "python",
            "python3+gcc",
            "python3 build_ext.py",
            "src/acme/_speedups_31.c returns acc + missing_scale, a name declared nowhere (one of 45 C files compiled by a build_ext-like script that prints each ~550-character gcc command): gcc's error, then a traceback ending in a CalledProcessError whose message repeats the whole argv in one long line",
            [
                Needle(r"^src/acme/_speedups_31\.c:\d+:\d+: error: .missing_scale. undeclared"),
                Needle(
                    r"^subprocess\.CalledProcessError: Command '\['gcc', .*_speedups_31\.c.*returned non-zero exit status 1\."
                ),
            ],
            python_build_ext(45, 31),
            version_cmd="python3 --version",
        ),
        Scenario(
            "wget-progress-bar-404",
            "http",
            "wget",
            "wget --progress=bar:force:noscroll --limit-rate=6m -O data/shard-NN-of-12.parquet http://127.0.0.1:$PORT/datasets/orders-2026q3/shard-NN-of-12.parquet",
            "datasets/orders-2026q3/shard-08-of-12.parquet is missing on the local server: wget answers 404 after eight downloads whose progress bars are rewritten in place with carriage returns (one physical line per file); ls and sha256sum of the partial data after",
            [Needle(r"(?P<n>ERROR 404: File not found\.)")],
            wget_progress_404(12, 8),
            version_cmd="wget --version | head -n 1",
        ),
        Scenario(
            "python-train-progress-nan",
            "python",
            "python3",
            "python3 train.py",
            "train.py's loss becomes NaN at epoch 4 step 137 and check() raises FloatingPointError; the epochs' progress bars are rewritten in place with carriage returns on stderr, so the traceback begins on the last progress line (per-epoch summaries and checkpoint lines in between)",
            [Needle(r"^(?P<n>FloatingPointError: loss is nan at epoch 4 step 137.*)")],
            python_train_nan(6, 400, (4, 137)),
            version_cmd="python3 --version",
        ),
        Scenario(
            "make-j4-interleaved-recipes",
            "c",
            "gcc",
            "make -k -j4 all",
            "src/mod_057.c returns total * scale_offset, a name declared nowhere (one of 120 files); each recipe runs a chatty table generator before gcc, and make -j4 interleaves the four jobs' lines around the error (warnings of other files before and after it)",
            [Needle(r"^src/mod_057\.c:\d+:\d+: error: .scale_offset. undeclared")],
            make_j4_interleaved(120, 57),
            version_cmd="gcc --version | head -n 1",
        ),
        Scenario(
            "pytest-xdist-four-workers",
            "python",
            "pytest",
            f"{PY} -m pytest -n 4 -v -p no:cacheprovider tests",
            "tests/test_quote_13.py: test_price[19-...] expects 19 * 31 + 13 + 1 (one of 1,200 tests in 30 files); pytest-xdist runs four workers whose [gwN] result lines interleave in completion order",
            [Needle(r"^FAILED tests/test_quote_13\.py::test_price\[19-\d+\]")],
            pytest_xdist(30, 40, (13, 19)),
            version_cmd=f"{PY} -m pytest --version",
        ),
        Scenario(
            "tcl-tcltest-xargs-parallel",
            "tcl",
            "tclsh (tcltest)",
            "ls tests/*.test | xargs -P4 -n1 tclsh",
            "tests/tariff09.test: tariff-9.23 expects 23 * 17 + 9 + 1 (one of 16 test files of 60 tests); xargs -P4 runs four tclsh at once with verbose tcltest output, so the failure's report lines interleave with other files' ++++ lines",
            [Needle(r"^==== tariff-9\.23 tariff of 23 in zone 9 FAILED")],
            tcl_parallel(16, 60, (9, 23)),
            version_cmd="echo 'puts [info patchlevel]' | tclsh",
        ),
        Scenario(
            "c-assert-stderr-midline",
            "c",
            "gcc",
            "gcc -g -O0 -Wall -o tests/runner tests/runner.c && ./tests/runner",
            "tests/runner.c: test_1063_rounding asserts mul_round(a, b) == a * b + 1 (one of 1,200 tests); the runner writes `name ... ` to unbuffered stdout and glibc's assertion message goes to stderr in the middle of that line (so do some [warn] lines of passing tests); abort, then cleanup",
            [
                Needle(
                    r"(?P<n>runner: tests/runner\.c:\d+: test_1063_rounding: Assertion .* failed\.)"
                )
            ],
            c_assert_midline(1200, 1063),
            version_cmd="gcc --version | head -n 1",
        ),
        Scenario(
            "win-crlf-java-reconcile",
            "java",
            "java",
            "java -cp out com.acme.sync.Ledger",
            "com.acme.sync.Ledger: account 1377 is expected to balance one higher, so check() throws IllegalStateException after 1,377 INFO lines and java.util.logging warnings; the job is printed as a Windows runner writes it, every line ending in CRLF, its own lines with backslash paths",
            [
                Needle(
                    r"^Exception in thread \"main\" java\.lang\.IllegalStateException: ledger balance mismatch for account 1377"
                )
            ],
            windows(java_reconcile(2000, 1377), win_java),
            version_cmd="java -version 2>&1 | head -n 1",
        ),
        Scenario(
            "win-crlf-python-backslash-path",
            "python",
            "python3",
            "python3 import_batches.py",
            "import_batches.py reads data\\in\\batch_NNN.csv in turn and batch_086 is missing: FileNotFoundError with the backslash path, after 86 batches of INFO/WARNING lines naming backslash paths; printed as a Windows runner writes it, every line ending in CRLF",
            [
                Needle(
                    r"^FileNotFoundError: \[Errno 2\] No such file or directory: 'data\\\\in\\\\batch_086\.csv'"
                )
            ],
            windows(python_backslash_paths(140, 86), win_py),
            version_cmd="python3 --version",
        ),
        Scenario(
            "kotlin-kotlinc-type-mismatch",
            "kotlin",
            "kotlinc",
            "kotlinc -d out $(find src -name '*.kt' | sort)",
            'src/com/acme/pricing/Rule17.kt assigns a String ("%d".format(base)) to val weight: Int (one of 60 files; kotlinc reports only the error, after the JVM deprecation warnings and the listing of the sources)',
            [
                Needle(
                    r"Rule17\.kt:\d+:\d+: error: type mismatch: inferred type is String but Int was expected"
                )
            ],
            kotlin_mismatch(60, 17),
            version_cmd="kotlinc -version 2>&1 | grep -i kotlin | head -n 1",
        ),
        Scenario(
            "gawk-division-by-zero",
            "awk",
            "gawk",
            "gawk -f scripts/report.awk data/regions.csv",
            "data/regions.csv: region R03121 has 0 orders and report.awk divides revenue by orders: gawk's fatal error after 3,121 report rows and a few warnings on stderr",
            [Needle(r"fatal: division by zero attempted")],
            gawk_report(6000, 3121),
            version_cmd="gawk --version | head -n 1",
        ),
        Scenario(
            "shellcheck-error-gate",
            "shell",
            "shellcheck",
            "shellcheck -S error scripts/*.sh",
            "scripts/deploy_33.sh opens an `if` that no `fi` closes, a parse error (one of 50 scripts, all with SC2086/SC2006-style warnings): a style pass and a warning pass print pages of findings without failing the job, the error pass fails it",
            [Needle(r"SC1046 \(error\): Couldn't find 'fi' for this 'if'\.", last=True)],
            shellcheck_gate(50, 33),
            version_cmd="shellcheck --version | sed -n 2p",
        ),
        Scenario(
            "jq-iterate-over-null",
            "jq",
            "jq",
            "jq -r '.component as $c | .changes[] | ...' notes/component-NN.json",
            'notes/component-22.json has "changes": null, so .changes[] fails (one of 30 files; 22 files of release-note lines printed before it)',
            [Needle(r"^jq: error \(at notes/component-22\.json:\d+\): Cannot iterate over null")],
            jq_pipeline(30, 22),
            version_cmd="jq --version",
        ),
    ]


# ---------------------------------------------------------------------------------------------
# Running


def ensure_tools() -> None:
    """Install pytest and pytest-xdist (PyPI) into `TOOLS` (once)."""
    venv = TOOLS / "venv"
    if not (venv / "bin" / "pytest").exists() or not list(venv.glob("lib/*/site-packages/xdist")):
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(venv / "bin" / "pip"), "install", "-q", "pytest", "pytest-xdist"], check=True
        )


def check_row(row: dict[str, object]) -> None:
    """Each needle is in its log, inside the line at its number, which its rule matches."""
    path = HERE / str(row["path"])
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = __import__("gzip").decompress(data)
    text = data.decode("utf-8", errors="replace")
    lines = text.split("\n")
    for needle, rule, number in zip(
        row["needles"], row["needle_rules"], row["needle_lines"], strict=True
    ):  # type: ignore[call-overload]
        assert needle, row["id"]
        assert needle in lines[number - 1], (row["id"], needle)
        assert re.search(rule, lines[number - 1]), (row["id"], rule)


def main(argv: list[str] | None = None) -> int:
    return g.run_batch(
        argv,
        doc=__doc__,
        cases=scenarios(),
        prefix=PREFIX,
        batch=7,
        setup=ensure_tools,
        check=check_row,
    )


if __name__ == "__main__":
    sys.exit(main())
