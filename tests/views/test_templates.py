"""The template miner: grouping accuracy on held-out loghub systems, header detection on
common log formats, and properties (deterministic, one template per line, bounded memory)."""

from __future__ import annotations

import csv
import json
import tracemalloc
from pathlib import Path

import pytest
from benchmarks.log_templates import grouping_accuracy, leave_one_out, load_systems
from hypothesis import given
from hypothesis import strategies as st

from langchain_result_layer.views._log_header import TokenMasker, message_offset
from langchain_result_layer.views._templates import (
    WILDCARD,
    TemplateSettings,
    _distinct_words,
    mine_templates,
)

# A small grid for the test's leave-one-system-out run (the benchmark uses a larger one).
_GRID = [
    TemplateSettings(max_constant_values=k, min_value_lines=m) for k in (3, 4, 6) for m in (1, 2)
]


def test_grouping_accuracy_on_held_out_systems(corpus: Path) -> None:
    """Every system of the corpus, scored with settings chosen on the *other* systems.

    Floors: the issue's target for the mean (0.90; measured 0.942 on the public seven), and
    0.75 for any one system (the lowest held-out system measured 0.815).
    """
    systems = load_systems(corpus)
    if len(systems) < 2:
        pytest.skip("needs at least two labelled system logs")
    held, _ = leave_one_out(systems, _GRID)
    assert sum(held.values()) / len(held) >= 0.90, held
    assert min(held.values()) >= 0.75, held


def test_default_settings_beat_drain3_on_raw_lines(corpus: Path) -> None:
    drain3 = pytest.importorskip("drain3")
    from benchmarks.log_templates import _drain3

    assert drain3 is not None
    systems = load_systems(corpus)[:3]
    if not systems:
        pytest.skip("no labelled system logs")
    for system in systems:
        ours = grouping_accuracy(
            mine_templates(system.raw, strip_header=True).assignments, system.truth
        )
        theirs = grouping_accuracy(_drain3(system.raw), system.truth)
        assert ours >= theirs, (system.name, ours, theirs)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            "081109 203518 143 INFO dfs.DataNode$DataXceiver: Receiving block blk_-16089",
            "Receiving block blk_-16089",
        ),
        (
            "2015-10-18 18:01:47,978 INFO [main] org.apache.hadoop.mapreduce.v2.app.MRAppMaster: "
            "Created MRAppMaster for application appattempt_1445144423722_0020_000001",
            "Created MRAppMaster for application appattempt_1445144423722_0020_000001",
        ),
        (
            "- 1131566461 2005.11.09 dn228 Nov 9 12:01:01 dn228/dn228 crond(pam_unix)[2915]: "
            "session closed for user root",
            "session closed for user root",
        ),
        (
            "- 1131566461 2005.11.09 tbird-admin1 Nov 10 03:01:01 local@tbird-admin1 "
            "postfix/postdrop[10896]: warning: unable to look up public/pickup",
            "warning: unable to look up public/pickup",
        ),
        (
            "[Sun Dec 04 04:47:44 2005] [notice] workerEnv.init() ok /etc/httpd/conf/w2.properties",
            "workerEnv.init() ok /etc/httpd/conf/w2.properties",
        ),
        (
            "[10.30 16:49:06] chrome.exe - proxy.example.org:5070 open through proxy",
            "proxy.example.org:5070 open through proxy",
        ),
        (
            "Dec 10 06:55:46 LabSZ sshd[24200]: reverse mapping checking getaddrinfo failed",
            "reverse mapping checking getaddrinfo failed",
        ),
        (
            "Jul  1 09:00:55 calvisitor-10-105-160-95 kernel[0]: IOThunderboltSwitch<0>(0x0) up",
            "IOThunderboltSwitch<0>(0x0) up",
        ),
        (
            "Jul  2 11:39:01 authorMacBook-Pro com.apple.xpc.launchd[1] "
            "(com.apple.xpc.launchd.domain.pid.WebContent.35385): Service exited",
            "Service exited",
        ),
        (
            "- 1122957336 2005.08.02 UNKNOWN_LOCATION 2005-08-02-21.15.36.811548 "
            "UNKNOWN_LOCATION NULL DISCOVERY SEVERE Can not get assembly information",
            "Can not get assembly information",
        ),
        (
            "2015-07-29 17:41:44,747 - INFO  [main:Quorum@774] - Notification time out: 3200",
            "Notification time out: 3200",
        ),
        (
            "20171223-22:15:29:606|Step_LSC|30002312|onStandStepChanged 3579",
            "onStandStepChanged 3579",
        ),
        ("2024-01-01 10:00:00,000 - myapp - INFO - worker 1 ready", "worker 1 ready"),
        ("2024-03-01 10:00:01,000 INFO app - worker 1 finished", "worker 1 finished"),
        ("plain text without any header at all", "plain text without any header at all"),
    ],
)
def test_message_offset_on_common_formats(line: str, message: str) -> None:
    assert line[message_offset(line) :] == message


def test_masking_keeps_words_and_masks_values() -> None:
    masker = TokenMasker()
    assert masker.tokens('user=root uid=0 flags=0x1, tag="View Lock", took 5.4 KB') == [
        "user=root",
        "uid=<*>",
        "flags=<*>,",
        'tag=<*>",',
        "took",
        "<*>",
    ]
    assert masker.mask("blk_-1608999687919862906") == "blk_<*>"
    assert masker.mask("10.250.19.102:54106") == "<*>"
    assert masker.mask("d54b44eb-2d1a-4aa2-ba6b-074d35f8f12c") == "<*>"


def test_one_word_differences_of_frequent_lines_are_templates() -> None:
    lines = []
    for i in range(60):
        kind = "bytes" if i % 3 else "values"
        lines.append(f"Block rdd_{i}_{i + 1} stored as {kind} in memory (size {i}.5 KB)")
    lines += [f"session opened for user u{i} by (uid={i})" for i in range(20)]
    result = mine_templates(lines)
    assert len({result.assignments[i] for i in range(60) if i % 3}) == 1
    assert result.assignments[0] != result.assignments[1]
    assert len(set(result.assignments[60:])) == 1
    assert len(result.templates) == 3


_WORDS = st.sampled_from(["open", "close", "user", "root", "disk", "ERROR", "INFO", "=", "-"])
_TOKENS = st.one_of(_WORDS, st.integers(0, 10**6).map(str), st.text(min_size=1, max_size=6))
_LINES = st.lists(st.lists(_TOKENS, max_size=12).map(" ".join), max_size=60)


@given(_LINES, st.booleans())
def test_miner_assigns_every_line_to_exactly_one_template(lines: list[str], strip: bool) -> None:
    result = mine_templates(lines, strip_header=strip)
    assert len(result.assignments) == len(lines)
    assert sorted({t.template_id for t in result.templates}) == list(range(len(result.templates)))
    assert set(result.assignments) == {t.template_id for t in result.templates}
    assert sum(t.count for t in result.templates) == len(lines)
    for template in result.templates:
        members = [i for i, tid in enumerate(result.assignments) if tid == template.template_id]
        assert members[0] == template.first_index
        assert members[-1] == template.last_index
        assert len(members) == template.count
    # Templates come in order of first appearance.
    firsts = [t.first_index for t in result.templates]
    assert firsts == sorted(firsts)


@given(_LINES, st.booleans())
def test_miner_is_deterministic_and_templates_describe_their_lines(
    lines: list[str], strip: bool
) -> None:
    first = mine_templates(lines, strip_header=strip)
    again = mine_templates(list(lines), strip_header=strip)
    assert first.assignments == again.assignments
    assert [t.tokens for t in first.templates] == [t.tokens for t in again.templates]
    masker = TokenMasker()
    for index, line in enumerate(lines):
        if strip:
            continue
        tokens = masker.tokens(line)
        template = first.templates[first.assignments[index]]
        if len(template.tokens) == len(tokens):
            assert all(t in (WILDCARD, x) for t, x in zip(template.tokens, tokens, strict=True))


def test_miner_memory_is_linear_in_its_input() -> None:
    lines = [
        f"worker {i % 97} finished job {i} in {i % 50}ms on host-{i % 13}" for i in range(20_000)
    ]
    lines += [f"token{i} " * 40 for i in range(2_000)]  # long lines of distinct words
    size = sum(len(line) for line in lines)
    tracemalloc.start()
    try:
        result = mine_templates(lines, strip_header=True)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(result.assignments) == len(lines)
    assert peak <= 30 * size + (4 << 20), (peak, size)


def test_tokens_beyond_the_cap_become_one_variable() -> None:
    settings = TemplateSettings(max_tokens=8)
    lines = [" ".join(f"w{j}x" for j in range(i, i + 50)) for i in range(3)]
    result = mine_templates(lines, settings=settings)
    assert all(len(t.tokens) <= 8 for t in result.templates)


def test_fields_common_to_every_line_end_the_header() -> None:
    """An HPC-style header (`id node component state epoch flag message`) has words between
    its numeric fields: they are header, so one message under several states is one template."""
    lines = []
    for i in range(300):
        state = ("running", "boot_cmd", "error")[i % 3]
        message = ("Command has completed successfully", f"node {i} is up after {i % 9} tries")[
            i % 2
        ]
        lines.append(f"{1000 + i} node-{i % 40} action {state} {1077000000 + i} 1 {message}")
    result = mine_templates(lines, strip_header=True)
    assert len(result.templates) == 2
    assert result.templates[0].text == "Command has completed successfully"


def test_a_minority_of_component_like_words_is_message_not_header() -> None:
    """`[time] [level] message` lines whose message starts with `name:` keep that word."""
    lines = []
    for i in range(200):
        if i % 4 == 0:
            lines.append(
                f"[Sun Dec 04 04:{i % 60:02d}:44 2005] [error] getTasks: caller {i} denied"
            )
        else:
            lines.append(f"[Sun Dec 04 04:{i % 60:02d}:44 2005] [notice] worker {i} ready")
    result = mine_templates(lines, strip_header=True)
    assert {t.text for t in result.templates} == {"getTasks: caller <*> denied", "worker <*> ready"}


def test_a_log_of_one_template_keeps_its_words() -> None:
    lines = [
        f"2024-03-01 10:00:{i % 60:02d},000 INFO app - worker {i} finished job {i}"
        for i in range(500)
    ]
    result = mine_templates(lines, strip_header=True)
    assert [t.text for t in result.templates] == ["worker <*> finished job <*>"]


def test_a_restated_quantity_in_parentheses_is_optional() -> None:
    """`5 bytes (5.0 KB)` and `5 bytes` are one template: the parenthesised restatement goes."""
    masker = TokenMasker()
    short = masker.tokens("close, 120 bytes sent, 3 received")
    assert masker.tokens("close, 4096 bytes (4.0 KB) sent, 3 received") == short
    assert masker.tokens("took (3 ms), done") == ["took", "done"]
    assert masker.tokens("took 5.4 KB (of 9 files)") == ["took", "<*>", "(of", "<*>", "files)"]


def test_variables_wrapped_in_punctuation_do_not_choose_the_split() -> None:
    """`(command <*>)` ends in a variable wrapped in punctuation (`<*>)`): like a bare `<*>`, it
    never counts as the constant that groups lines, so the action words stay templates."""
    counts = {
        "boot": 54,
        "wait": 47,
        "halt": 3,
        "clusterAddMember": 2,
        "risBoot": 1,
        "bootGenvmunix": 1,
    }
    lines = []
    for action, n in counts.items():
        for _ in range(n):
            i = len(lines)
            lines.append(
                f"{2568643 + i} node-{i % 50} action start {1074119817 + i} 1 "
                f"{action}  (command {1900 + i % 12})"
            )
    for j in range(12):
        lines.append(
            f"{134681 + j} node-{j} unix.hw state_change.unavailable {1077804742 + j} 1 "
            f"Component State Change: Component alt{j % 3} is in the unavailable state"
        )
    result = mine_templates(lines, strip_header=True)
    assert {t.text for t in result.templates} == {
        *(f"{action} (command <*>)" for action in counts),
        "Component State Change: Component alt<*> is in the unavailable state",
    }


def test_a_value_per_line_that_is_the_only_difference_is_a_variable() -> None:
    """Five lines that agree everywhere but one position, a value of its own on each line
    (`[LNKD]`...`[LNKH]`), are one template; three such lines stay three events (`DMA zone`,
    `Normal zone`, `HighMem zone`), and so do lines that differ in two positions."""
    lines = [f"2024-03-01 10:00:{i:02d} INFO net - worker {i} finished" for i in range(30)]
    lines += [
        f"2024-03-01 10:01:0{i} INFO net - link [LNK{c}] irq {i + 3} disabled"
        for i, c in enumerate("DEFGH")
    ]
    lines += [
        f"2024-03-01 10:02:0{i} INFO net - {zone} zone: {pages} pages"
        for i, (zone, pages) in enumerate((("DMA", 4096), ("Normal", 28), ("HighMem", 0)))
    ]
    lines += [
        f"2024-03-01 10:03:0{i} INFO net - job moved from {a} to {b}"
        for i, (a, b) in enumerate((("NEW", "INITED"), ("INITED", "SETUP"), ("SETUP", "RUN")))
    ] * 2
    result = mine_templates(lines, strip_header=True)
    texts = sorted(t.text for t in result.templates)
    assert "link <*> irq <*> disabled" in texts
    assert {"DMA zone: <*> pages", "Normal zone: <*> pages", "HighMem zone: <*> pages"} <= set(
        texts
    )
    assert len([t for t in texts if t.startswith("job moved")]) == 3
    assert len(texts) == 1 + 1 + 3 + 3


def test_anonymised_hosts_with_hashes_are_header_fields() -> None:
    """Hosts written like `#8#` (anonymised logs) are header fields, as plain host names are:
    a log mixing both keeps one template per message."""
    messages = (
        "session closed for user root",
        "session opened for user root by (uid=0)",
        "(root) CMD (run-parts /etc/cron.hourly)",
    )
    lines = []
    for i in range(120):
        host = f"dn{200 + i % 30}" if i % 2 else f"#{i % 9}#"
        lines.append(
            f"- {1131566461 + i} 2005.11.09 {host} Nov 9 12:01:{i % 60:02d} {host}/{host} "
            f"crond[{2900 + i}]: {messages[i % 3]}"
        )
    result = mine_templates(lines, strip_header=True)
    assert len(result.templates) == 3
    assert len({result.assignments[i] for i in range(0, 120, 3)}) == 1


def test_pipes_after_the_first_word_are_the_message() -> None:
    line = "03-17 16:15:49.564  2227  2227 I PhoneStatusBar: removeNotification:0|com.x|121|null"
    assert line[message_offset(line) :] == "removeNotification:0|com.x|121|null"


def test_wide_lines_are_bounded() -> None:
    masker = TokenMasker()
    tokens = masker.tokens(" ".join(f"w{i}" for i in range(10_000)), limit=10)
    assert len(tokens) == 11
    assert tokens[-1] == WILDCARD
    result = mine_templates(["x " * 100_000, "y " * 100_000], strip_header=True)
    assert all(len(t.tokens) <= TemplateSettings().max_tokens for t in result.templates)


def _write_system(root: Path, name: str, lines: list[str], events: list[str]) -> dict[str, object]:
    folder = root / "logs" / name
    folder.mkdir(parents=True)
    (folder / f"{name}.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with open(folder / f"{name}.csv", "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["LineId", "Content", "EventId"])
        for i, (line, event) in enumerate(zip(lines, events, strict=True)):
            writer.writerow([i + 1, line.split(": ", 1)[1], event])
    return {
        "id": f"other/{name}",
        "kind": "system_log",
        "path": f"logs/{name}/{name}.log",
        "templates_csv": f"logs/{name}/{name}.csv",
        "corrected_templates_csv": None,
    }


def test_benchmark_runs_unchanged_on_another_corpus(tmp_path: Path) -> None:
    """Every `system_log` case of any corpus laid out the same way, not a fixed list."""
    from benchmarks import log_templates

    cases = []
    for n, name in enumerate(("Alpha", "Beta", "Gamma")):
        lines, events = [], []
        for i in range(60):
            if i % 3:
                lines.append(f"2024-01-0{n + 1} 10:00:{i:02d} INFO svc{n}: user u{i} logged in")
                events.append("E1")
            else:
                lines.append(f"2024-01-0{n + 1} 10:00:{i:02d} WARN svc{n}: disk {i} is full")
                events.append("E2")
        cases.append(_write_system(tmp_path, name, lines, events))
    (tmp_path / "cases.jsonl").write_text("\n".join(json.dumps(c) for c in cases) + "\n")
    result = log_templates.run(corpus=tmp_path, quick=False)
    table = result.tables[0]
    assert [row[0] for row in table.rows[:3]] == ["Alpha", "Beta", "Gamma"]
    mean = next(row for row in table.rows if row[0] == "mean")
    assert mean[4] == 1.0  # held out


def test_a_program_that_masks_to_a_field_keeps_the_dash_header() -> None:
    """Most headers end at `program -`: a line whose program masks to a field (`360AP.exe`)
    still ends its header at the dash, so it joins its event instead of a template alone."""
    lines = []
    for i in range(40):
        program = "360AP.exe" if i in (7, 21) else ("chrome.exe" if i % 3 else "Dropbox.exe")
        if i % 2:
            lines.append(
                f"[07.27 07:{i:02d}:17] {program} - h{i}.example.com:443 open through proxy "
                "proxy.example.edu:5070 HTTPS"
            )
        else:
            lines.append(
                f"[07.27 07:{i:02d}:19] {program} - h{i}.example.com:80 close, {100 + i} bytes "
                f"sent, {300 + i} bytes received, lifetime 00:0{i % 10}"
            )
    result = mine_templates(lines, strip_header=True)
    assert sorted(t.text for t in result.templates) == [
        "<*> close, <*> bytes sent, <*> bytes received, lifetime <*>",
        "<*> open through proxy proxy.example.edu:<*> HTTPS",
    ]
    # Without a dash-ended majority the fields-only header is left as it was.
    plain = [f"[07.27 07:{i:02d}:17] {100 + i} - open {i % 2}" for i in range(30)]
    assert {t.text for t in mine_templates(plain, strip_header=True).templates} == {"open <*>"}


@given(st.lists(st.sampled_from(["360AP.exe", "7zip.exe", "chrome.exe", "a1.exe"]), min_size=20))
def test_program_names_never_split_a_dash_headed_event(programs: list[str]) -> None:
    """Invariant: in a `[time] program - message` log, lines that differ only in the program
    and the host are one template, whatever the program's shape."""
    lines = [
        f"[07.27 07:{i % 60:02d}:17] {p} - h{i}.example.com:443 open through proxy p.example:1 X"
        for i, p in enumerate(programs)
    ]
    assert len(set(mine_templates(lines, strip_header=True).assignments)) == 1


def test_distinct_words_with_a_masked_number_tell_events_apart() -> None:
    """`via interface ee0` / `alt0` / `scip0`: words that differ apart from their number are
    events (the number is masked, the word is not); one word with several numbers, ids with a
    separator (`rdd_1`, `broadcast_2_piece0`) and a mix with an unmasked value stay variables."""
    lines = []
    for i in range(60):
        iface = "ee0" if i % 2 else ("alt0" if i % 7 else "scip0")
        lines.append(
            f"{2573188 + i} node-{i} unix.hw net.niff.up {1074131255 + i} 1 NIFF: node "
            f"node-{i} has detected an available network connection on network "
            f"10.{i}.0.0 via interface {iface}"
        )
    for i in range(30):
        block = f"rdd_{i}_{i % 4}" if i % 3 else f"broadcast_{i}_piece0"
        lines.append(f"17/06/09 20:10:{i % 60:02d} INFO storage.BlockManager: Found block {block}")
        lines.append(f"17/06/09 20:11:{i % 60:02d} INFO storage.BlockManager: Link eth{i} up")
    result = mine_templates(lines, strip_header=True)
    texts = {t.text for t in result.templates}
    ends = sorted(t.split("via interface ")[-1] for t in texts if "via interface" in t)
    assert ends == ["alt<*>", "ee<*>", "scip<*>"]
    assert "Found block <*>" in texts
    assert "Link eth<*> up" in texts
    assert len(texts) == 5


def test_a_plain_word_and_a_versioned_word_tell_events_apart() -> None:
    """`open through proxy ... HTTPS` / `... SOCKS5`: a protocol word next to one that ends in a
    number (masked to `SOCKS<*>`) are two events, even when one of them holds a single line;
    the same word with and without a number, or a word next to a bare number, stays a variable."""
    lines = [
        f"[07.26 15:{i % 60:02d}:28] chrome.exe - host{i}.example.com:443 open through proxy "
        "proxy.cse.cuhk.edu.hk:5070 HTTPS"
        for i in range(40)
    ]
    lines.append(
        "[07.26 15:38:33] MobaXterm.exe - 183.62.156.108:22 open through proxy "
        "socks.cse.cuhk.edu.hk:5070 SOCKS5"
    )
    for i in range(20):
        port = "ee" if i % 2 else f"ee{i}"
        lines.append(f"17/06/09 20:10:{i:02d} INFO net.Link: Link {port} state up")
        lines.append(f"17/06/09 20:11:{i:02d} INFO net.Mode: Mode {'auto' if i % 2 else i} set")
    result = mine_templates(lines, strip_header=True)
    ends = sorted(t.tokens[-1] for t in result.templates if "through" in t.tokens)
    assert ends == ["HTTPS", "SOCKS<*>"]
    texts = {t.text for t in result.templates}
    assert sum(t.endswith("Link <*> state up") for t in texts) == 1
    assert sum(t.endswith("Mode <*> set") for t in texts) == 1
    assert _distinct_words(["HTTPS", "SOCKS<*>"])
    assert not _distinct_words(["ee", "ee<*>"])


@given(
    st.lists(
        st.text(alphabet="abcdefghXYZ", min_size=1, max_size=4).map(lambda w: w + WILDCARD),
        min_size=1,
        max_size=6,
    ),
    st.lists(st.text(alphabet="abcdefghXYZ", min_size=1, max_size=4), max_size=6),
)
def test_distinct_words_accepts_exactly_distinct_ascii_words(
    masked: list[str], plain: list[str]
) -> None:
    """Distinct words (plain or ending in one masked number) pass; a repeated word does not;
    anything else than ASCII letters before the mask never passes."""
    values = masked + plain
    words = [v[: -len(WILDCARD)] if v.endswith(WILDCARD) else v for v in values]
    assert _distinct_words(values) == (len(set(words)) == len(words))
    assert not _distinct_words([*values, "rdd_" + WILDCARD])
    assert not _distinct_words([*values, WILDCARD])
