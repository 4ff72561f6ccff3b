"""Generate batch 6 of the fresh-logs held-out set: real failures in the raw logs of five CI systems.

Same method as `generate.py` (batch 1) and `generate4.py` (batch 4), whose fixtures, job
pieces, labelling and writing this script reuses: every case is a small fixture project written
into a temporary folder with one injected fault (said per case), built, checked or run by a real
local tool (gcc/make, ld, pytest, mypy, cargo, javac/java, pip, node, ruby, prove). stdout and
stderr are merged. What batches 1 to 5 do not have: each job is printed as the raw log of a CI
system (GitHub Actions, GitLab CI, Jenkins, Azure Pipelines, Buildkite), by a small runner
(`RUNNER`) that runs the job's steps in turn and prints them as that system does: its header,
its step markers (groups, sections, stages), per-line timestamps where the system writes them
(GitHub Actions and Azure Pipelines' ISO-8601 with 7 fractional digits, Jenkins' timestamper,
Buildkite's `ESC _bk;t=<ms> BEL`), its failure markers, the steps that still run after the
failure (post-job cleanup, artifact upload, after_script) and its final status line. The other
steps are real commands where cheap (`git init/add/commit` of the fixture, `tar -cv`, `pip
install` into the tools venv, cache downloads retried against a closed port) or the system's
own fixed text.

The labels are decided from the injected fault alone: a regular expression per needle, written
with the fault, selects the log line; where the layout prefixes every line (a timestamp), the
needle is the part of the line after that prefix (`_rule` wraps the rule, `check_case` checks
it). Nothing here imports or runs the package.

Tools: gcc, make, binutils, rustc/cargo (std only), default-jdk, node, ruby (minitest), perl
(prove), git and tar from the machine; pytest and mypy from PyPI, installed by this script into
a venv under `FRESH_LOGS_TOOLS6`, default /tmp/fresh_tools6, never the project's venv.
Versions are written to every case's `tool_version`.

Run (from the project root; a few minutes):

    python benchmarks/fresh_logs/generate6.py            # every case: batch6/{logs/,cases.jsonl}
    python benchmarks/fresh_logs/generate6.py --only ID  # some cases (their rows are replaced)
"""

# The fixture projects' sources and the CI systems' fixed text are written inline: some of
# their lines are longer than ours.
# ruff: noqa: E501

from __future__ import annotations

import gzip
import json
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

HERE = Path(__file__).resolve().parent / "batch6"
PREFIX = "fresh6/"
TOOLS = Path(os.environ.get("FRESH_LOGS_TOOLS6", "/tmp/fresh_tools6"))

# batch 1's writer, pointed at batch 6's folder (and its PATH at batch 6's venv)
g.HERE = HERE
g.LOGS = HERE / "logs"
g.CASES = HERE / "cases.jsonl"
g.GENERATED = "2026-12-07"
g.BUILD_ROOT = Path(os.environ.get("FRESH_LOGS_BUILD6", "/tmp/fresh_logs_build6"))
g.TOOLS = TOOLS

Needle = g.Needle
Scenario = g.Scenario
_w = g._w

Build = Callable[[Path, random.Random], str]

# The line prefix each layout writes before every line (a regular expression), or "" for none.
LINE_PREFIX = {
    "github-actions": r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z ",
    "azure-pipelines": r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z ",
    "jenkins-timestamps": r"\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\] ",
    "buildkite": r"\x1b_bk;t=\d+\x07",
    "gitlab-ci": "",
    "jenkins": "",
}

# ---------------------------------------------------------------------------------------------
# The CI runner: runs the steps of `.ci/steps.json` and prints them as the layout's raw log.

RUNNER = r'''
import datetime, json, os, random, subprocess, sys, time, uuid

layout, steps_path = sys.argv[1], sys.argv[2]
steps = json.load(open(steps_path))
out = sys.stdout
rnd = random.Random(steps_path)
WS = {"github-actions": "/home/runner/work/widgets/widgets", "azure-pipelines": "/home/vsts/work/1/s",
      "gitlab-ci": "/builds/acme/widgets", "jenkins": "/var/lib/jenkins/workspace/widgets_main",
      "jenkins-timestamps": "/var/lib/jenkins/workspace/widgets_main",
      "buildkite": "/var/lib/buildkite-agent/builds/bk-agent-3/acme/widgets"}[layout]
os.environ["CI_WORKSPACE"] = WS


def prefix():
    t = time.time()
    dt = datetime.datetime.fromtimestamp(t, datetime.timezone.utc)
    if layout in ("github-actions", "azure-pipelines"):
        return dt.strftime("%Y-%m-%dT%H:%M:%S.") + "%06d%d" % (dt.microsecond, rnd.randint(0, 9)) + "Z "
    if layout == "jenkins-timestamps":
        return dt.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (dt.microsecond // 1000)
    if layout == "buildkite":
        return "\x1b_bk;t=%d\x07" % int(t * 1000)
    return ""


def emit(line=""):
    p = prefix()
    if layout == "jenkins-timestamps":
        p = "[" + p + "] "
    out.write(p + line + "\n")
    out.flush()


def emit_text(text):
    for line in text.rstrip("\n").split("\n"):
        emit(line)


def run(script, xtrace=False, extra=None):
    path = os.path.join(".ci", "step_%s.sh" % uuid.uuid4().hex[:8])
    with open(path, "w") as fh:
        fh.write(script)
    argv = ["bash", "--noprofile", "--norc", "-eo", "pipefail"] + (["-x"] if xtrace else []) + [path]
    env = dict(os.environ, PS4="+ ", **(extra or {}))
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    for raw in p.stdout:
        emit(raw.decode("utf-8", "replace").rstrip("\n").rstrip("\r"))
    return p.wait()


def ts():
    return int(time.time())


failed = 0
sha = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip() if os.path.isdir(".git") else ""

# ---- GitHub Actions
if layout == "github-actions":
    emit_text("""Current runner version: '2.321.0'
##[group]Operating System
Ubuntu
24.04.1
LTS
##[endgroup]
##[group]Runner Image
Image: ubuntu-24.04
Version: 20261201.1.0
Included Software: https://github.com/actions/runner-images/blob/ubuntu24/20261201.1/images/ubuntu/Ubuntu2404-Readme.md
Image Release: https://github.com/actions/runner-images/releases/tag/ubuntu24%2F20261201.1
##[endgroup]
##[group]Runner Image Provisioner
2.0.391.1
##[endgroup]
##[group]GITHUB_TOKEN Permissions
Contents: read
Metadata: read
Packages: read
##[endgroup]
Secret source: Actions
Prepare workflow directory
Prepare all required actions
Getting action download info
Download action repository 'actions/checkout@v4' (SHA:11bd71901bbe5b1630ceea73d27597364c9af683)
Download action repository 'actions/cache@v4' (SHA:1bd1e32a3bdc45362d1e726936510720a7c30a57)
Download action repository 'actions/upload-artifact@v4' (SHA:6f51ac03b9356f520e9adb1b1b7802705f340c2b)
Complete job name: build (ubuntu-24.04)""")
    for st in steps:
        if failed and not st.get("always"):
            continue
        head = st.get("uses") or st["cmd"]
        lines = head.split("\n")
        emit("##[group]Run " + lines[0])
        for extra in lines[1:]:
            emit(extra)
        if st.get("uses"):
            emit("with:")
            for k, v in st.get("with", {}).items():
                emit("  %s: %s" % (k, v))
        else:
            emit("shell: /usr/bin/bash -e {0}")
        if st.get("env"):
            emit("env:")
            for k, v in st["env"].items():
                emit("  %s: %s" % (k, v))
        emit("##[endgroup]")
        rc = run(st["script"], extra=st.get("env"))
        if rc and not st.get("continue"):
            emit("##[error]Process completed with exit code %d." % rc)
            failed = failed or rc
    emit("Post job cleanup.")
    emit("[command]/usr/bin/git version")
    run("git version")
    emit("Temporarily overriding HOME='/home/runner/work/_temp/%s' before making global git config changes" % uuid.uuid4())
    emit("Adding repository directory to the temporary git global config as a safe directory")
    emit("[command]/usr/bin/git config --global --add safe.directory " + WS)
    emit("[command]/usr/bin/git config --local --name-only --get-regexp core\\.sshCommand")
    emit("[command]/usr/bin/git submodule foreach --recursive sh -c \"git config --local --name-only --get-regexp 'core\\.sshCommand' && git config --local --unset-all 'core.sshCommand' || :\"")
    emit("[command]/usr/bin/git config --local --name-only --get-regexp http\\.https\\:\\/\\/github\\.com\\/\\.extraheader")
    emit("http.https://github.com/.extraheader")
    emit("[command]/usr/bin/git config --local --unset-all http.https://github.com/.extraheader")
    emit("Cleaning up orphan processes")

# ---- Azure Pipelines
elif layout == "azure-pipelines":
    emit_text("""##[section]Starting: Initialize job
Agent name: 'Azure Pipelines 4'
Agent machine name: 'fv-az%d-%d'
Current agent version: '4.248.0'
##[group]Operating System
Ubuntu
22.04.5
LTS
##[endgroup]
##[group]Runner Image
Image: ubuntu-22.04
Version: 20261201.1.0
Included Software: https://github.com/actions/runner-images/blob/ubuntu22/20261201.1/images/ubuntu/Ubuntu2204-Readme.md
##[endgroup]
Current image version: '20261201.1.0'
Agent running as: 'vsts'
Prepare build directory.
Set build variables.
Download all required tasks.
Downloading task: CmdLine (2.250.1)
Downloading task: Cache (2.198.0)
Downloading task: PublishTestResults (2.248.0)
Checking job knob settings.
   Knob: AgentToolsDirectory = /opt/hostedtoolcache Source: ${AGENT_TOOLSDIRECTORY}
   Knob: AgentPerflog = /home/vsts/perflog Source: ${VSTS_AGENT_PERFLOG}
Finished checking job knob settings.
Start tracking orphan processes.
##[section]Finishing: Initialize job""" % (rnd.randint(100, 999), rnd.randint(10, 999)))
    for st in steps:
        if failed and not st.get("always"):
            continue
        name = st["name"]
        emit("##[section]Starting: " + name)
        emit("=" * 78)
        task = st.get("task", "Command line")
        if task == "Command line":
            emit_text("""Task         : Command line
Description  : Run a command line script using Bash on Linux and macOS and cmd.exe on Windows
Version      : 2.250.1
Author       : Microsoft Corporation
Help         : https://docs.microsoft.com/azure/devops/pipelines/tasks/utility/command-line""")
        else:
            emit_text(task)
        emit("=" * 78)
        if task == "Command line":
            emit("Generating script.")
            emit("Script contents:")
            emit_text(st["cmd"])
            emit("========================== Starting Command Output ===========================")
            emit("/usr/bin/bash --noprofile --norc /home/vsts/work/_temp/%s.sh" % uuid.uuid4())
        rc = run(st["script"])
        if rc:
            emit("##[error]Bash exited with code '%d'." % rc)
            failed = failed or rc
        emit("##[section]Finishing: " + name)
    emit_text("""##[section]Starting: Post-job: Checkout acme/widgets@main to s
==============================================================================
Task         : Get sources
Description  : Get sources from a repository. Supports Git, TfsVC, and SVN repositories.
Version      : 1.0.0
Author       : Microsoft
Help         : [More Information](https://go.microsoft.com/fwlink/?LinkId=798199)
==============================================================================
Cleaning any cached credential from repository: acme/widgets (GitHub)
##[section]Finishing: Post-job: Checkout acme/widgets@main to s
##[section]Starting: Finalize Job
Cleaning up task key
Start cleaning up orphan processes.
##[section]Finishing: Finalize Job""")
    emit("##[section]Finishing: build")

# ---- GitLab CI
elif layout == "gitlab-ci":
    def sec_start(name, title):
        out.write("section_start:%d:%s\r\x1b[0K\x1b[0K\x1b[36;1m%s\x1b[0;m\x1b[0;m\n" % (ts(), name, title))

    def sec_end(name):
        out.write("section_end:%d:%s\r\x1b[0K\n" % (ts(), name))

    image = steps[0].get("image", "debian:bookworm")
    out.write("\x1b[0KRunning with gitlab-runner 17.5.0 (12030cf4)\x1b[0;m\n")
    out.write("\x1b[0K  on docker-autoscaler-7 t3_Xq9vR2, system ID: s_4e1f0a2b9c77\x1b[0;m\n")
    sec_start("prepare_executor", 'Preparing the "docker" executor')
    out.write("\x1b[0KUsing Docker executor with image %s ...\x1b[0;m\n" % image)
    out.write("\x1b[0KPulling docker image %s ...\x1b[0;m\n" % image)
    out.write("\x1b[0KUsing docker image sha256:%s for %s with digest %s@sha256:%s ...\x1b[0;m\n" % (uuid.uuid4().hex * 2, image, image.split(":")[0], uuid.uuid4().hex * 2))
    sec_end("prepare_executor")
    sec_start("prepare_script", "Preparing environment")
    out.write("Running on runner-t3xq9vr2-project-4211-concurrent-0 via runner-t3xq9vr2-s-l-s-amd64-1765100000-5a1b2c3d...\n")
    sec_end("prepare_script")
    sec_start("get_sources", "Getting source from Git repository")
    out.write("\x1b[32;1mFetching changes with git depth set to 20...\x1b[0;m\n")
    out.write("Initialized empty Git repository in /builds/acme/widgets/.git/\n")
    out.write("\x1b[32;1mCreated fresh repository.\x1b[0;m\n")
    out.write("\x1b[32;1mChecking out %s as detached HEAD (ref is main)...\x1b[0;m\n" % sha[:8])
    out.write("\n\x1b[32;1mSkipping Git submodules setup\x1b[0;m\n")
    sec_end("get_sources")
    main = [s for s in steps if not s.get("after")]
    after = [s for s in steps if s.get("after")]
    sec_start("restore_cache", "Restoring cache")
    out.write("\x1b[32;1mChecking cache for main-protected...\x1b[0;m\n")
    out.write("\x1b[0;33mWARNING: file does not exist                      \x1b[0;m \n")
    out.write("\x1b[0;33mFailed to extract cache\x1b[0;m\n")
    sec_end("restore_cache")
    sec_start("step_script", 'Executing "step_script" stage of the job script')
    out.write("\x1b[0KUsing docker image sha256:%s for %s ...\x1b[0;m\n" % (uuid.uuid4().hex * 2, image))
    for st in main:
        for i, line in enumerate(st["cmd"].split("\n")):
            out.write("\x1b[32;1m%s %s\x1b[0;m\n" % ("$" if i == 0 else " ", line))
        out.flush()
        rc = run(st["script"])
        if rc:
            failed = rc
            break
    sec_end("step_script")
    if after:
        sec_start("after_script", "Running after_script")
        out.write("\x1b[32;1mRunning after script...\x1b[0;m\n")
        for st in after:
            out.write("\x1b[32;1m$ %s\x1b[0;m\n" % st["cmd"])
            out.flush()
            run(st["script"])
        sec_end("after_script")
    sec_start("upload_artifacts_on_failure", "Uploading artifacts for failed job")
    out.write("\x1b[32;1mUploading artifacts...\x1b[0;m\n")
    out.write("\x1b[0;33mWARNING: reports/junit.xml: no matching files. Ensure that the artifact path is relative to the working directory (/builds/acme/widgets)\x1b[0;m \n")
    out.write("\x1b[31;1mERROR: No files to upload                         \x1b[0;m \n")
    sec_end("upload_artifacts_on_failure")
    sec_start("cleanup_file_variables", "Cleaning up project directory and file based variables")
    sec_end("cleanup_file_variables")
    out.write("\n\x1b[31;1mERROR: Job failed: exit code %d\n\x1b[0;m\n" % (failed or 1))

# ---- Jenkins
elif layout in ("jenkins", "jenkins-timestamps"):
    emit_text("""Started by an SCM change
Obtained Jenkinsfile from git https://git.acme.internal/acme/widgets.git
[Pipeline] Start of Pipeline
[Pipeline] node
Running on build-agent-07 in /var/lib/jenkins/workspace/widgets_main
[Pipeline] {
[Pipeline] stage
[Pipeline] { (Declarative: Checkout SCM)
[Pipeline] checkout
The recommended git tool is: NONE
No credentials specified
Cloning the remote Git repository
Cloning repository https://git.acme.internal/acme/widgets.git
 > git init /var/lib/jenkins/workspace/widgets_main # timeout=10
Fetching upstream changes from https://git.acme.internal/acme/widgets.git
 > git --version # timeout=10
 > git --version # 'git version 2.39.5'
 > git fetch --tags --force --progress -- https://git.acme.internal/acme/widgets.git +refs/heads/*:refs/remotes/origin/* # timeout=10
 > git config remote.origin.url https://git.acme.internal/acme/widgets.git # timeout=10
 > git config --add remote.origin.fetch +refs/heads/*:refs/remotes/origin/* # timeout=10
Avoid second fetch
 > git rev-parse refs/remotes/origin/main^{commit} # timeout=10
Checking out Revision %s (refs/remotes/origin/main)
 > git config core.sparsecheckout # timeout=10
 > git checkout -f %s # timeout=10
Commit message: "pricing: regional rounding"
 > git rev-list --no-walk %s # timeout=10
[Pipeline] }
[Pipeline] // stage
[Pipeline] withEnv
[Pipeline] {
[Pipeline] withEnv
[Pipeline] {""" % (sha, sha, sha))
    for st in steps:
        if st.get("post"):
            continue
        emit("[Pipeline] stage")
        emit("[Pipeline] { (%s)" % st["name"])
        if failed:
            emit('Stage "%s" skipped due to earlier failure(s)' % st["name"])
        else:
            for line in st.get("pre", []):
                emit(line)
            emit("[Pipeline] sh")
            rc = run(st["script"], xtrace=True)
            if rc:
                failed = rc
        emit("[Pipeline] }")
        emit("[Pipeline] // stage")
    emit("[Pipeline] stage")
    emit("[Pipeline] { (Declarative: Post Actions)")
    for st in steps:
        if st.get("post"):
            emit("[Pipeline] " + st["name"])
            for line in st.get("pre", []):
                emit(line)
            if st.get("script"):
                run(st["script"])
    emit_text("""[Pipeline] cleanWs
[WS-CLEANUP] Deleting project workspace...
[WS-CLEANUP] Deferred wipeout is used...
[WS-CLEANUP] done
[Pipeline] }
[Pipeline] // stage
[Pipeline] }
[Pipeline] // withEnv
[Pipeline] }
[Pipeline] // withEnv
[Pipeline] }
[Pipeline] // node
[Pipeline] End of Pipeline""")
    emit("ERROR: script returned exit code %d" % (failed or 1))
    emit("Finished: FAILURE")

# ---- Buildkite
elif layout == "buildkite":
    agent = "bk-agent-3"
    emit_text("""~~~ Running global environment hook
$ /etc/buildkite-agent/hooks/environment
Exporting secrets from s3://acme-buildkite-secrets/widgets/env
~~~ Preparing working directory
# Creating "%s"
$ cd %s
$ git clone -v -- git@github.com:acme/widgets.git .
Cloning into '.'...
POST git-upload-pack (175 bytes)
POST git-upload-pack (gzip 2202 to 1094 bytes)
remote: Enumerating objects: 1214, done.
remote: Counting objects: 100%% (1214/1214), done.
remote: Compressing objects: 100%% (611/611), done.
remote: Total 1214 (delta 522), reused 1101 (delta 466), pack-reused 0
Receiving objects: 100%% (1214/1214), 402.18 KiB | 5.36 MiB/s, done.
Resolving deltas: 100%% (522/522), done.
$ git clean -ffxdq
# Fetch and checkout pull request head from GitHub
$ git fetch -- origin refs/pull/318/head
From github.com:acme/widgets
 * branch            refs/pull/318/head -> FETCH_HEAD
# FETCH_HEAD is now `%s`
$ git checkout -f %s
HEAD is now at %s pricing: regional rounding
# Cleaning again to catch any post-checkout changes
$ git clean -ffxdq
# Checking to see if git commit information needs to be sent to Buildkite...
$ buildkite-agent meta-data exists buildkite:git:commit
~~~ Running commands""" % (WS, WS, sha, sha, sha[:7]))
    emit("$ .buildkite/steps/ci.sh")
    for st in steps:
        if st.get("post"):
            continue
        emit(("+++ " if st.get("open") else "--- ") + st["name"])
        rc = run(st["script"])
        if rc:
            failed = rc
            emit("^^^ +++")
            emit("\U0001f6a8 Error: The command exited with status %d" % rc)
            emit("user command error: exit status %d" % rc)
            break
    emit("~~~ Running global pre-exit hook")
    emit("$ /etc/buildkite-agent/hooks/pre-exit")
    for st in steps:
        if st.get("post"):
            emit("~~~ " + st["name"])
            if st.get("cmd"):
                emit("$ " + st["cmd"])
            run(st["script"])
sys.exit(failed or 1)
'''


def _rule(layout: str, pattern: str, *, last: bool = False) -> Needle:
    """A needle rule for `layout`: `pattern` as written for the tool's output, applied to the
    part of the line after the layout's prefix (which group `n` then selects)."""
    lead = LINE_PREFIX[layout]
    if not lead:
        return Needle(pattern, last=last)
    if pattern.startswith("^"):
        return Needle(f"^{lead}(?P<n>{pattern[1:]}.*)$", last=last)
    return Needle(f"^{lead}(?P<n>.*{pattern}.*)$", last=last)


def check_case(row: dict[str, object]) -> None:
    """`g.check_needles` for the layouts without a line prefix; for the others, each needle is
    its line after the layout's prefix (stripped), exactly, at its line number, and at most 500
    characters long."""
    layout = str(row["ci_layout"])
    lead = LINE_PREFIX[layout]
    if not lead:
        g.check_needles(row, max_chars=500)
        return
    path = HERE / str(row["path"])
    lines = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    text = lines.decode("utf-8", errors="replace").split("\n")
    for needle, number in zip(row["needles"], row["needle_lines"], strict=True):  # type: ignore[call-overload]
        line = text[number - 1]
        m = re.match(lead, line)
        assert m is not None, (row["id"], needle)
        assert line[m.end() :].strip() == needle, (row["id"], needle)
        assert needle in line, (row["id"], needle)
        assert len(needle) <= 500, (row["id"], len(needle))


# ---------------------------------------------------------------------------------------------
# Steps: a step is a dict the runner reads (name, cmd as shown, script as run, flags)


def _sh(cmd: str, **kw: object) -> dict[str, object]:
    return {
        "name": kw.pop("name", cmd.split("\n", maxsplit=1)[0]),
        "cmd": cmd,
        "script": cmd + "\n",
        **kw,
    }


CHECKOUT = """\
echo "Syncing repository: acme/widgets"
echo "[command]/usr/bin/git init $CI_WORKSPACE"
git init -q -b main . && echo "Initialized empty Git repository in $CI_WORKSPACE/.git/"
git config user.email ci@acme.example && git config user.name "CI"
echo "[command]/usr/bin/git add -A"
git add -A
echo "[command]/usr/bin/git commit -m 'pricing: regional rounding'"
git commit -q -m "pricing: regional rounding" && git log -1 --shortstat --format='HEAD is now at %h %s'
"""

FLAKY_CACHE = """\
echo "Cache restore: key {key}"
for attempt in 1 2 3; do
  if curl -sS --max-time 2 http://127.0.0.1:9/_apis/artifactcache/{key}.tzst -o /dev/null; then break; fi
  echo "Warning: Failed to restore: cache service unreachable (attempt $attempt/3), retrying in 1s"
  sleep 1
done
echo "Cache not found for input keys: {key}"
"""

GET_SOURCES = "Task         : Get sources\nDescription  : Get sources from a repository. Supports Git, TfsVC, and SVN repositories.\nVersion      : 1.0.0\nAuthor       : Microsoft\nHelp         : [More Information](https://go.microsoft.com/fwlink/?LinkId=798199)"
PIP_TOOLS = f"{TOOLS}/venv/bin/python -m pip install pytest mypy"
VENV_TAR = f"tar -czf .ci/venv-cache.tgz -C {TOOLS} venv"
VENV_RESTORE = (
    "mkdir -p .ci/restore && tar -xzvvf .ci/venv-cache.tgz -C .ci/restore && rm -rf .ci/restore"
)


def _upload_tar(paths: str) -> str:
    return f'tar -cvf .ci/artifacts.tar {paths} || true\necho "Artifact upload skipped: $(du -h .ci/artifacts.tar | cut -f1) archived locally"\n'


def ci_case(
    layout: str, fixture: Build, steps: list[dict[str, object]], *, prep: str = ""
) -> Build:
    """Writes `fixture`, the runner and the steps; the job script runs the runner."""

    def build(d: Path, rng: random.Random) -> str:
        fixture(d, rng)
        (d / "ci.sh").unlink(missing_ok=True)
        _w(d / ".gitignore", ".ci/\nci.sh\n")
        _w(d / ".ci" / "run.py", RUNNER)
        _w(d / ".ci" / "steps.json", json.dumps(steps, indent=1))
        pre = prep + "\n" if prep else ""
        # the checkout is a real git commit of the fixture, made before the runner (Jenkins,
        # GitLab and Buildkite print it in their own words, GitHub Actions and Azure as a step)
        if layout in ("gitlab-ci", "jenkins", "jenkins-timestamps", "buildkite"):
            pre += "git init -q -b main . && git -c user.email=ci@acme.example -c user.name=CI add -A && git -c user.email=ci@acme.example -c user.name=CI commit -q -m 'pricing: regional rounding'\n"
        return f"{pre}exec python3 .ci/run.py {layout} .ci/steps.json\n"

    return build


def fixture_of(builder: Build) -> Build:
    """An earlier batch's fixture writer (its job script is dropped)."""

    def fixture(d: Path, rng: random.Random) -> None:
        builder(d, rng)

    return fixture  # type: ignore[return-value]


def c_compile_fixture(n: int, bad: int, line_fault: str) -> Build:
    def fixture(d: Path, rng: random.Random) -> str:
        g._c_project(d, rng, n)
        g._c_main(d, "")
        path = d / "src" / f"mod_{bad:03d}.c"
        _w(path, path.read_text().replace("    return total;", line_fault, 1))
        return ""

    return fixture


def c_link_fixture(n: int) -> Build:
    def fixture(d: Path, rng: random.Random) -> str:
        g._c_project(d, rng, n)
        g._c_main(d, 'printf("%d\\n", checksum_v2(values, 4));')
        return ""

    return fixture


def pip_missing_fixture(d: Path, rng: random.Random) -> str:
    _w(
        d / "requirements.txt",
        "# runtime dependencies (pinned by the release job)\npytest>=7\nmypy>=1.0\nacme-ledger-client==2.4.1\n",
    )
    _w(d / "wheels" / "README", "internal wheel mirror (synced nightly)\n")
    _w(d / "ledger" / "__init__.py", "VERSION = '2.4.1'\n")
    return ""


def node_missing_fixture(n: int) -> Build:
    def fixture(d: Path, rng: random.Random) -> str:
        _w(
            d / "package.json",
            '{"name": "acme-reports", "version": "3.2.0", "private": true,\n "dependencies": {"yaml-front-matter": "^4.1.1"}}\n',
        )
        for i in range(n):
            _w(
                d / "lib" / f"section-{i:02d}.js",
                f"exports.render = (rows) => rows.map((r) => `section {i}: ${{r.name}} ${{r.total * {rng.randint(2, 40)}}}`).join('\\n');\n",
            )
        _w(
            d / "scripts" / "build-report.js",
            textwrap.dedent(
                f"""\
                const path = require('path');
                const rows = Array.from({{ length: 40 }}, (_, i) => ({{ name: `row-${{i}}`, total: i }}));
                for (let i = 0; i < {n}; i++) {{
                  const section = require(path.join(__dirname, '..', 'lib', `section-${{String(i).padStart(2, '0')}}.js`));
                  console.log(section.render(rows));
                  if (i % 7 === 3) console.warn(`(node:${{process.pid}}) [report] section ${{i}}: slow template, 1.2s`);
                }}
                const matter = require('yaml-front-matter');
                console.log(matter.loadFront('---\\ntitle: totals\\n---\\n'));
                """
            ),
        )
        return ""

    return fixture


def python_runtime_fixture(rows: int, bad: int) -> Build:
    return fixture_of(g.python_etl_traceback(rows, bad))


# ---------------------------------------------------------------------------------------------
# The cases


def scenarios() -> list[Scenario]:
    s: list[Scenario] = []
    py = f"{TOOLS}/venv/bin/python"

    # 1. GitHub Actions, gcc: a compile error in the middle step, upload-artifact (always) after
    lay = "github-actions"
    s.append(
        Scenario(
            "gha-c-gcc-undeclared-identifier",
            "c",
            "gcc",
            "make V=1 -k -j2 all",
            "src/mod_041.c: mod_041_f0 returns total + offset, a name declared nowhere (one of 90 files; unused-variable and sign-compare warnings). GitHub Actions: checkout, cache restore retried, toolchain versions, build (fails), tests skipped, upload-artifact (always) and post-job cleanup",
            [
                _rule(lay, r"src/mod_041\.c:\d+:\d+: error: [‘']offset[’'] undeclared"),
            ],
            ci_case(
                lay,
                c_compile_fixture(90, 41, "    return total + offset;"),
                [
                    {
                        "name": "checkout",
                        "uses": "actions/checkout@v4",
                        "with": {
                            "repository": "acme/widgets",
                            "token": "***",
                            "fetch-depth": "1",
                            "clean": "true",
                        },
                        "cmd": "",
                        "script": CHECKOUT,
                    },
                    {
                        "name": "cache",
                        "uses": "actions/cache@v4",
                        "with": {"path": "obj", "key": "c-obj-Linux-4f1e0c"},
                        "cmd": "",
                        "script": FLAKY_CACHE.format(key="c-obj-Linux-4f1e0c"),
                    },
                    _sh("gcc --version\nmake --version"),
                    _sh(
                        "make V=1 -k -j2 all", env={"CC": "gcc", "CFLAGS_EXTRA": "-Werror=implicit"}
                    ),
                    _sh("make check"),
                    {
                        "name": "upload",
                        "uses": "actions/upload-artifact@v4",
                        "with": {"name": "build-logs", "path": "obj/", "if-no-files-found": "warn"},
                        "cmd": "",
                        "script": _upload_tar("obj src/mod_04*.c"),
                        "always": True,
                    },
                ],
            ),
            version_cmd="gcc --version | head -n 1",
        )
    )

    # 2. GitHub Actions, pytest: the failing step is the last one
    s.append(
        Scenario(
            "gha-python-pytest-assertion",
            "python",
            "pytest",
            f"{py} -m pytest -v -p no:cacheprovider tests",
            "tests/test_pricing_26.py: test_total[17-...] expects 17 * 27 + 1 (one of 1,200 tests in 40 files; DeprecationWarnings). GitHub Actions: checkout, pip install, pytest last",
            [
                _rule(lay, r"^FAILED tests/test_pricing_26\.py::test_total\[17-\d+\]"),
                _rule(lay, r"^E\s+assert \d+ == \d+"),
            ],
            ci_case(
                lay,
                fixture_of(g.pytest_suite(40, 30, [(26, 17)], warn=True)),
                [
                    {
                        "name": "checkout",
                        "uses": "actions/checkout@v4",
                        "with": {"repository": "acme/widgets", "token": "***", "fetch-depth": "1"},
                        "cmd": "",
                        "script": CHECKOUT,
                    },
                    _sh(PIP_TOOLS, env={"PIP_DISABLE_PIP_VERSION_CHECK": "1"}),
                    _sh(
                        f"{py} -m pytest -v -p no:cacheprovider tests",
                        env={"PYTHONDONTWRITEBYTECODE": "1"},
                    ),
                ],
            ),
            version_cmd=f"{py} -m pytest --version",
        )
    )

    # 3. GitLab CI, cargo: a type mismatch; after_script tars the fingerprints
    lay = "gitlab-ci"
    s.append(
        Scenario(
            "gitlab-rust-cargo-mismatched-types",
            "rust",
            "cargo",
            "cargo build -v --offline --workspace",
            'crates/crate_09/src/geom_2.rs: area_2 binds scale: u64 = "wide" (one of 14 crates; unused-variable warnings, build-script cargo:warning lines). GitLab CI: executor and source sections, cache warning, cargo version, build (fails, test not run), after_script, artifact upload on failure',
            [
                _rule(lay, r"^error\[E0308\]: mismatched types"),
                _rule(lay, r"--> crates/crate_09/src/geom_2\.rs:\d+:\d+"),
            ],
            ci_case(
                lay,
                fixture_of(
                    g.cargo_workspace(
                        14, 9, '    let scale: u64 = "wide";\n    width * height * scale'
                    )
                ),
                [
                    _sh("cargo --version --verbose", image="rust:1.83-bookworm"),
                    _sh("cargo build -v --offline --workspace"),
                    _sh("cargo test --offline --workspace"),
                    {
                        **_sh("tar -cvf fingerprints.tar target/debug/.fingerprint || true"),
                        "after": True,
                    },
                ],
            ),
            version_cmd="cargo --version",
        )
    )

    # 4. GitLab CI, java: an exception at run time, after many log lines
    s.append(
        Scenario(
            "gitlab-java-illegal-state",
            "java",
            "java",
            "javac -Xlint:all -d out src/com/acme/sync/Ledger.java && java -cp out com.acme.sync.Ledger",
            "src/com/acme/sync/Ledger.java: account 2600's expected balance is off by one, so check throws IllegalStateException (after 2,600 INFO lines and logger warnings). GitLab CI: javac, java (fails), after_script",
            [
                _rule(
                    lay,
                    r'Exception in thread "main" java\.lang\.IllegalStateException: ledger balance mismatch for account 2600',
                ),
                _rule(lay, r"at com\.acme\.sync\.Ledger\.check\(Ledger\.java:\d+\)"),
            ],
            ci_case(
                lay,
                fixture_of(g.java_runtime(3200, 2600)),
                [
                    _sh("java -version", image="eclipse-temurin:17-jdk"),
                    _sh("mkdir -p out\njavac -Xlint:all -d out src/com/acme/sync/Ledger.java"),
                    _sh("java -cp out com.acme.sync.Ledger"),
                    {**_sh("ls -la out/com/acme/sync || true"), "after": True},
                ],
            ),
            version_cmd="java -version 2>&1 | head -n 1",
        )
    )

    # 5. GitLab CI, pip: a missing dependency, early, small log
    s.append(
        Scenario(
            "gitlab-pip-missing-dependency",
            "python",
            "pip",
            f"{py} -m pip install --no-index --find-links wheels -r requirements.txt",
            "requirements.txt pins acme-ledger-client==2.4.1, which the wheel mirror does not have (pip --no-index; pytest and mypy are installed). GitLab CI: the install fails at once; the tests are not run; after_script",
            [
                _rule(
                    lay,
                    r"^ERROR: Could not find a version that satisfies the requirement acme-ledger-client==2\.4\.1",
                ),
                _rule(
                    lay, r"^ERROR: No matching distribution found for acme-ledger-client==2\.4\.1"
                ),
            ],
            ci_case(
                lay,
                pip_missing_fixture,
                [
                    _sh(f"{py} --version", image="python:3.11-slim-bookworm"),
                    _sh(f"{py} -m pip install --no-index --find-links wheels -r requirements.txt"),
                    _sh(f"{py} -m pytest -q tests"),
                    {
                        **_sh(
                            'echo "pip cache: $(du -sh ~/.cache/pip 2>/dev/null | cut -f1 || echo none)"'
                        ),
                        "after": True,
                    },
                ],
            ),
            version_cmd=f"{py} -m pip --version",
        )
    )

    # 6. Jenkins with timestamps, ld: an undefined reference at the link
    lay = "jenkins-timestamps"
    s.append(
        Scenario(
            "jenkins-c-ld-undefined-reference",
            "c",
            "ld (gcc)",
            "make V=1 -j2 all",
            "src/main.c calls checksum_v2, defined in no file (60 objects in libacme.a). Jenkins with the timestamper: checkout, build (fails at the link), Test and Package stages skipped, post actions archive, junit, cleanWs",
            [
                _rule(lay, r"main\.c:\d+:.*undefined reference to `checksum_v2'"),
                _rule(lay, r"collect2: error: ld returned 1 exit status"),
            ],
            ci_case(
                lay,
                c_link_fixture(60),
                [
                    {"name": "Toolchain", "script": "gcc --version\nld --version | sed -n 1,2p\n"},
                    {"name": "Build", "script": "make V=1 -j2 all\n"},
                    {"name": "Test", "script": "make check\n"},
                    {"name": "Package", "script": "tar -czf widgets.tgz app\n"},
                    {
                        "name": "archiveArtifacts",
                        "post": True,
                        "pre": ["Archiving artifacts"],
                        "script": "ls obj | sed -n 1,80p\n",
                    },
                    {
                        "name": "junit",
                        "post": True,
                        "pre": [
                            "Recording test results",
                            "[Checks API] No suitable checks publisher found.",
                            "No test report files were found. Configuration error?",
                        ],
                        "script": "",
                    },
                ],
            ),
            version_cmd="ld --version | head -n 1",
        )
    )

    # 7. Jenkins without timestamps, ruby minitest
    lay = "jenkins"
    s.append(
        Scenario(
            "jenkins-ruby-minitest-failure",
            "ruby",
            "minitest",
            'ruby -w -Ilib -Itest -e \'Dir["test/*_test.rb"].sort.each { |f| require "./" + f }\' -- -v --seed 4242',
            "test/invoice_11_test.rb: test_total_007 expects 7 * 14 + 1 (one of 1,000 tests in 25 files). Jenkins: bundle-like setup stage, tests (fail, the last stage with a sh), post actions",
            [
                _rule(lay, r"Invoice11Test#test_total_007 \[.*test/invoice_11_test\.rb:\d+\]"),
                _rule(lay, r"^Expected: \d+$"),
            ],
            ci_case(
                lay,
                fixture_of(g.ruby_minitest(25, 40, (11, 7))),
                [
                    {
                        "name": "Setup",
                        "script": "ruby --version\ngem list --local 2>/dev/null | sed -n 1,30p\n",
                    },
                    {
                        "name": "Test",
                        "script": 'ruby -w -Ilib -Itest -e \'Dir["test/*_test.rb"].sort.each { |f| require "./" + f }\' -- -v --seed 4242\n',
                    },
                    {
                        "name": "junit",
                        "post": True,
                        "pre": [
                            "Recording test results",
                            "No test report files were found. Configuration error?",
                        ],
                        "script": "",
                    },
                ],
            ),
            version_cmd="ruby --version",
        )
    )

    # 8. Azure Pipelines, mypy: a type error; a big cache restore before it (~1 MB)
    lay = "azure-pipelines"
    s.append(
        Scenario(
            "azure-python-mypy-return-type",
            "python",
            "mypy",
            f"{py} -m mypy --strict --no-incremental inventory",
            "inventory/mod_073.py: stock_073 is declared -> int and returns an f-string (one of 120 modules, each with reveal_type notes). Azure Pipelines: checkout, a verbose venv cache restore (tar -xvv), pip, mypy (fails), publish test results (always, warns)",
            [
                _rule(
                    lay,
                    r'inventory/mod_073\.py:\d+: error: Incompatible return value type \(got "str", expected "int"\)',
                ),
            ],
            ci_case(
                lay,
                fixture_of(g.mypy_package(120, 73, verbose=False)),
                [
                    {
                        "name": "Checkout acme/widgets@main to s",
                        "task": "Task         : Get sources\nDescription  : Get sources from a repository. Supports Git, TfsVC, and SVN repositories.\nVersion      : 1.0.0\nAuthor       : Microsoft\nHelp         : [More Information](https://go.microsoft.com/fwlink/?LinkId=798199)",
                        "cmd": "",
                        "script": CHECKOUT,
                    },
                    {
                        "name": "Cache",
                        "task": "Task         : Cache\nDescription  : Cache files between runs\nVersion      : 2.198.0\nAuthor       : Microsoft Corporation\nHelp         : https://aka.ms/pipeline-caching-docs",
                        "cmd": "",
                        "script": 'echo "Resolving key:"\necho "- venv | \\"Linux\\" | requirements.txt [file] --> 4F1E0C..."\necho "Cache hit for: venv|\\"Linux\\"|4F1E0C"\n'
                        + VENV_RESTORE
                        + '\necho "Downloaded 41.2 MB. Restored."\n',
                    },
                    _sh(PIP_TOOLS, name="Install tools"),
                    _sh(f"{py} -m mypy --strict --no-incremental inventory", name="Type check"),
                    _sh(f"{py} -m pytest -q", name="Tests"),
                    {
                        "name": "Publish test results",
                        "always": True,
                        "task": "Task         : Publish Test Results\nDescription  : Publish test results to Azure Pipelines\nVersion      : 2.248.0\nAuthor       : Microsoft Corporation\nHelp         : https://docs.microsoft.com/azure/devops/pipelines/tasks/test/publish-test-results",
                        "cmd": "",
                        "script": "echo 'Searching for test result files matching **/TEST-*.xml'\necho \"##[warning]No test result files matching '**/TEST-*.xml' were found.\"\n",
                    },
                ],
                prep=VENV_TAR,
            ),
            version_cmd=f"{py} -m mypy --version",
        )
    )

    # 9. Azure Pipelines, node: a missing module at run time
    s.append(
        Scenario(
            "azure-node-cannot-find-module",
            "javascript",
            "node",
            "node scripts/build-report.js",
            "package.json declares yaml-front-matter, but node_modules was never installed (the install step is skipped on a cache hit), so scripts/build-report.js fails to require it after rendering 30 sections. Azure Pipelines: checkout, cache (hit), node versions, report (fails), publish (always)",
            [
                _rule(lay, r"^Error: Cannot find module 'yaml-front-matter'"),
            ],
            ci_case(
                lay,
                node_missing_fixture(30),
                [
                    {
                        "name": "Checkout acme/widgets@main to s",
                        "task": "Task         : Get sources\nDescription  : Get sources from a repository. Supports Git, TfsVC, and SVN repositories.\nVersion      : 1.0.0\nAuthor       : Microsoft\nHelp         : [More Information](https://go.microsoft.com/fwlink/?LinkId=798199)",
                        "cmd": "",
                        "script": CHECKOUT,
                    },
                    {
                        "name": "Cache",
                        "task": "Task         : Cache\nDescription  : Cache files between runs\nVersion      : 2.198.0\nAuthor       : Microsoft Corporation\nHelp         : https://aka.ms/pipeline-caching-docs",
                        "cmd": "",
                        "script": 'echo "Resolving key:"\necho "- npm | \\"Linux\\" | package-lock.json [file] --> (file not found)"\necho "Cache hit for: npm|\\"Linux\\""\necho "Skipping npm ci: cache restored"\n',
                    },
                    _sh("node --version\nnpm --version", name="Versions"),
                    _sh("node scripts/build-report.js", name="Build report"),
                    {
                        "name": "Publish report",
                        "always": True,
                        "task": "Task         : Publish build artifacts\nDescription  : Publish build artifacts to Azure Pipelines or a Windows file share\nVersion      : 1.248.0\nAuthor       : Microsoft Corporation\nHelp         : https://docs.microsoft.com/azure/devops/pipelines/tasks/utility/publish-build-artifacts",
                        "cmd": "",
                        "script": _upload_tar("report.txt lib"),
                    },
                ],
            ),
            version_cmd="node --version",
        )
    )

    # 10. Buildkite, python: a traceback at run time
    lay = "buildkite"
    s.append(
        Scenario(
            "buildkite-python-keyerror",
            "python",
            "python3",
            "python3 run_etl.py",
            "run_etl.py: row 2100 has the key 'customer' instead of 'customer_id', so normalise_row raises KeyError (after 2,100 INFO lines and latency warnings). Buildkite: hooks, checkout, a setup section, the ETL (fails), pre-exit hook and artifact upload",
            [
                _rule(lay, r"^KeyError: 'customer_id'"),
                _rule(lay, r'File ".*etl/transform\.py", line \d+, in normalise_row'),
            ],
            ci_case(
                lay,
                python_runtime_fixture(2600, 2100),
                [
                    {
                        "name": ":python: Setup",
                        "script": "python3 --version\n" + FLAKY_CACHE.format(key="etl-snapshot"),
                    },
                    {
                        "name": ":chart_with_upwards_trend: ETL",
                        "open": True,
                        "script": "python3 run_etl.py\n",
                    },
                    {"name": ":rocket: Publish", "script": "echo publish\n"},
                    {
                        "name": "Uploading artifacts",
                        "post": True,
                        "cmd": 'buildkite-agent artifact upload "etl/**/*"',
                        "script": 'for f in etl/*.py; do echo "$(date -u "+%Y-%m-%d %H:%M:%S") INFO   Uploading artifact $f ($(stat -c %s "$f") B)"; done\n',
                    },
                ],
            ),
            version_cmd="python3 --version",
        )
    )

    # 11. Buildkite, perl prove: a failing Test::More test among many
    s.append(
        Scenario(
            "buildkite-perl-prove-failure",
            "perl",
            "prove",
            "prove -v -Ilib t/",
            "t/013_header.t: the test 'parses header field 21' expects length + 1 (one of 900 tests in 30 files). Buildkite: hooks, checkout, perl version, prove (fails), publish not run, pre-exit hook and artifact upload",
            [
                _rule(lay, r"^not ok 22 - parses header field 21"),
                _rule(lay, r"Failed test 'parses header field 21'"),
            ],
            ci_case(
                lay,
                fixture_of(g.perl_prove(30, 30, (13, 21), None)),
                [
                    {"name": ":perl: Setup", "script": "perl -v | sed -n 1,3p\nprove --version\n"},
                    {
                        "name": ":white_check_mark: Tests",
                        "open": True,
                        "script": "prove -v -Ilib t/\n",
                    },
                    {"name": ":package: Package", "script": "tar -czf dist.tgz lib\n"},
                    {
                        "name": "Uploading artifacts",
                        "post": True,
                        "cmd": 'buildkite-agent artifact upload "t/*.t"',
                        "script": "tar -cvf .ci/artifacts.tar t lib\n",
                    },
                ],
            ),
            version_cmd="prove --version",
        )
    )
    # 12. GitHub Actions, cargo test: a failing assertion in the middle step, upload after
    lay = "github-actions"
    s.append(
        Scenario(
            "gha-rust-cargo-test-assert-eq",
            "rust",
            "cargo test",
            "cargo test --offline -v -- --test-threads=1",
            "src/lib.rs: balance_case_0377 expects balance(377) + 1 (one of 600 tests run one at a time). GitHub Actions: checkout, cargo version, tests (fail), docs skipped, upload-artifact (always) and post-job cleanup",
            [
                _rule(lay, r"^test tests::balance_case_0377 \.\.\. FAILED$"),
                _rule(
                    lay,
                    r"^thread 'tests::balance_case_0377' (\(\d+\) )?panicked at src/lib\.rs:\d+:\d+:",
                ),
            ],
            ci_case(
                lay,
                fixture_of(g.cargo_tests(600, 377)),
                [
                    {
                        "name": "checkout",
                        "uses": "actions/checkout@v4",
                        "with": {"repository": "acme/ledger", "token": "***"},
                        "cmd": "",
                        "script": CHECKOUT,
                    },
                    _sh("rustc --version --verbose\ncargo --version"),
                    _sh(
                        "cargo test --offline -v -- --test-threads=1",
                        env={"CARGO_TERM_COLOR": "never", "RUST_BACKTRACE": "0"},
                    ),
                    _sh("cargo doc --offline --no-deps"),
                    {
                        "name": "upload",
                        "uses": "actions/upload-artifact@v4",
                        "with": {"name": "test-binaries", "path": "target/debug/deps/"},
                        "cmd": "",
                        "script": _upload_tar("target/debug/deps"),
                        "always": True,
                    },
                ],
            ),
            version_cmd="cargo --version",
        )
    )

    # 13. Jenkins with timestamps, javac: a compile error in the first build stage, three stages skipped
    lay = "jenkins-timestamps"
    s.append(
        Scenario(
            "jenkins-java-javac-cannot-find-symbol",
            "java",
            "javac",
            "javac -Xlint:all -Xmaxwarns 100000 -Xmaxerrs 1000 -d out @sources.txt",
            "src/com/acme/billing/Invoice133.java calls Ledger.reconcileAll, which does not exist (one of 200 classes; rawtypes and deprecation lint warnings). Jenkins with the timestamper: checkout, compile (fails), Test, Package and Deploy skipped, post actions",
            [
                _rule(lay, r"Invoice133\.java:\d+: error: cannot find symbol"),
                _rule(lay, r"symbol: +method reconcileAll\(int\)"),
            ],
            ci_case(
                lay,
                fixture_of(g.javac_classes(200, 133, verbose=False)),
                [
                    {
                        "name": "Compile",
                        "script": "java -version\nmkdir -p out\nfind src -name '*.java' | sort > sources.txt\njavac -Xlint:all -Xmaxwarns 100000 -Xmaxerrs 1000 -d out @sources.txt\n",
                    },
                    {
                        "name": "Test",
                        "script": "java -cp out org.junit.runner.JUnitCore com.acme.billing.AllTests\n",
                    },
                    {"name": "Package", "script": "jar cf billing.jar -C out .\n"},
                    {"name": "Deploy", "script": "echo deploy\n"},
                    {
                        "name": "archiveArtifacts",
                        "post": True,
                        "pre": ["Archiving artifacts", "‘billing.jar’ doesn’t match anything"],
                        "script": "",
                    },
                    {
                        "name": "junit",
                        "post": True,
                        "pre": [
                            "Recording test results",
                            "No test report files were found. Configuration error?",
                        ],
                        "script": "",
                    },
                ],
            ),
            version_cmd="javac -version",
        )
    )

    # 14. Azure Pipelines, pytest: an exception raised inside the code under test
    lay = "azure-pipelines"
    s.append(
        Scenario(
            "azure-python-pytest-valueerror",
            "python",
            "pytest",
            f"{py} -m pytest -v -p no:cacheprovider tests",
            "tests/test_money_12.py: the case k=7 uses the currency code XTS, so money.exponent raises ValueError three frames down (one of 900 tests in 30 files). Azure Pipelines: checkout, pip (retried cache first), tests (fail), publish (always, warns)",
            [
                _rule(lay, r"^FAILED tests/test_money_12\.py::test_total\[7-XTS\]"),
                _rule(lay, r"^E\s+ValueError: invalid currency code 'XTS'"),
            ],
            ci_case(
                lay,
                fixture_of(g.pytest_deep_traceback(30, 30, (12, 7))),
                [
                    {
                        "name": "Checkout acme/widgets@main to s",
                        "task": GET_SOURCES,
                        "cmd": "",
                        "script": CHECKOUT,
                    },
                    _sh(
                        FLAKY_CACHE.format(key="pip-Linux-9c1d").rstrip() + "\n" + PIP_TOOLS,
                        name="Install tools",
                    ),
                    _sh(f"{py} -m pytest -v -p no:cacheprovider tests", name="Tests"),
                    {
                        "name": "Publish test results",
                        "always": True,
                        "task": "Task         : Publish Test Results\nDescription  : Publish test results to Azure Pipelines\nVersion      : 2.248.0\nAuthor       : Microsoft Corporation\nHelp         : https://docs.microsoft.com/azure/devops/pipelines/tasks/test/publish-test-results",
                        "cmd": "",
                        "script": "echo 'Searching for test result files matching **/TEST-*.xml'\necho \"##[warning]No test result files matching '**/TEST-*.xml' were found.\"\n",
                    },
                ],
            ),
            version_cmd=f"{py} -m pytest --version",
        )
    )
    return s


CI_LAYOUT = {
    "gha-": "github-actions",
    "gitlab-": "gitlab-ci",
    "jenkins-ruby": "jenkins",
    "jenkins-": "jenkins-timestamps",
    "azure-": "azure-pipelines",
    "buildkite-": "buildkite",
}


def layout_of(case_id: str) -> str:
    return next(v for k, v in CI_LAYOUT.items() if case_id.startswith(k))


# ---------------------------------------------------------------------------------------------
# Running


def ensure_tools() -> None:
    """Install pytest and mypy (PyPI) into `TOOLS` (once)."""
    venv = TOOLS / "venv"
    if not (venv / "bin" / "mypy").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "pytest", "mypy"], check=True)


def check_row(row: dict[str, object]) -> None:
    row["ci_layout"] = layout_of(str(row["id"]).removeprefix(PREFIX))
    check_case(row)


def main(argv: list[str] | None = None) -> int:
    return g.run_batch(
        argv,
        doc=__doc__,
        cases=scenarios(),
        prefix=PREFIX,
        batch=6,
        setup=ensure_tools,
        check=check_row,
    )


if __name__ == "__main__":
    sys.exit(main())
