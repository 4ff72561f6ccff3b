"""The model's point of view: every notice is actionable, references resolve, errors guide.

A model only sees text. These tests read the text a view gives, copy the calls it names and
run them through the real fetch tool, follow `next` to the end, and mangle references the way
models do.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage

from langchain_result_layer import InMemoryResultStore, ResultLayer, ToolPolicy
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.scripted import find_references
from tests.acceptance.conftest import (
    HEADER_CHARS_RE,
    afetch,
    calls_in,
    fenced_body,
    fetch,
    num,
    read_raw,
)

ADA = {"configurable": {"tenant_id": "acme", "user_id": "ada", "thread_id": "t1"}}


def process(layer: ResultLayer, content: Any, name: str = "tool", config: Any = ADA) -> ToolMessage:
    return layer.process_tool_message(
        ToolMessage(content=content, tool_call_id=f"call_{name}", name=name), config
    )


def small_layer(**kw: Any) -> ResultLayer:
    kw.setdefault("context_window", 16_000)
    kw.setdefault("max_result_tokens", 1_000)
    return ResultLayer(**kw)


# --------------------------------------------------------------------------- calls in notices


@pytest.fixture(scope="module")
def real_outputs(corpus: Path, demo_tools: dict[str, Any]) -> dict[str, Any]:
    """One real output per view kind."""
    tests = demo_tools["run_tests"].invoke(
        {"type": "tool_call", "id": "rt", "name": "run_tests", "args": {}}
    )
    return {
        "command": read_raw(corpus / "logchunks/logs/Java/square@retrofit/failed/403602199.log"),
        "log": read_raw(corpus / "loghub/Linux/Linux_2k.log"),
        "file": demo_tools["read_file"].invoke({"path": "typing.py"}),
        "search": demo_tools["search_code"].invoke({"pattern": r"def __init__\("}),
        "rows": demo_tools["run_sql"].invoke(
            {"query": "SELECT id, module, kind, name, lineno FROM definitions LIMIT 3000"}
        ),
        "tests": tests.content,
        "json": json.dumps({"items": [{"id": i, "name": f"n{i}"} for i in range(3000)]}),
    }


@pytest.mark.parametrize("kind", ["command", "log", "file", "search", "rows", "tests", "json"])
def test_every_call_a_view_names_runs_verbatim(real_outputs: dict[str, Any], kind: str) -> None:
    layer = small_layer()
    msg = process(layer, real_outputs[kind], name=f"t_{kind}")
    calls = calls_in(msg)
    assert calls, f"the {kind} view names no fetch call: {msg.content[-400:]!r}"
    for ref in calls:
        out = fetch(layer, ADA, ref=ref)
        assert out.status == "success", f"{ref} -> {out.content[:300]}"
        assert out.content.strip(), ref
        assert layer.token_counter.count(out.content) <= layer.result_budget.tokens


def test_view_references_all_parse_and_resolve(real_outputs: dict[str, Any]) -> None:
    """Every reference in the view's text (not only the calls) resolves."""
    layer = small_layer()
    msg = process(layer, real_outputs["command"])
    refs = find_references([msg])
    assert len(refs) >= 2
    for ref in refs:
        assert fetch(layer, ADA, ref=ref).status == "success", ref


def test_calls_in_the_notice_point_at_omitted_lines(travis_log: str) -> None:
    layer = small_layer()
    msg = process(layer, travis_log)
    view = ResultLayer.view_of(msg)
    assert view is not None
    assert view.omitted
    calls = calls_in(msg)
    assert calls
    for call in calls:
        ref = Reference.parse(call)
        assert ref.start_line is not None
        assert any(r.start_line <= ref.start_line <= r.end_line for r in view.omitted), call
        out = fetch(layer, ADA, ref=call)
        first = fenced_body(out.content).split("\n", 1)[0]
        raw_line = travis_log.split("\n")[ref.start_line - 1]
        # Control characters may be shown as symbols one for one; otherwise the raw line.
        assert len(first) == len(raw_line)


# --------------------------------------------------------------------------- following `next`


def follow(layer: ResultLayer, ref: str | None, *, limit: int = 2_000) -> list[ToolMessage]:
    pages: list[ToolMessage] = []
    while ref and len(pages) < limit:
        out = fetch(layer, ADA, ref=ref)
        assert out.status == "success", out.content[:300]
        pages.append(out)
        view = ResultLayer.view_of(out)
        ref = view.references.get("next") if view else None
    assert ref is None, f"chain did not end within {limit} calls"
    return pages


def char_spans(pages: list[ToolMessage]) -> list[tuple[int, int]]:
    spans = []
    for page in pages:
        m = HEADER_CHARS_RE.search(page.content.split("\n", 1)[0])
        assert m, page.content[:200]
        spans.append((num(m.group(1)), num(m.group(2))))
    return spans


@pytest.mark.parametrize("kind", ["command", "log", "file", "search", "tests"])
def test_next_from_all_reads_everything_exactly_once(
    real_outputs: dict[str, Any], kind: str
) -> None:
    raw = real_outputs[kind]
    layer = small_layer(max_result_tokens=2_000)
    view = ResultLayer.view_of(process(layer, raw))
    assert view is not None
    pages = follow(layer, view.references["all"])
    spans = char_spans(pages)
    position = 0
    for start, end in spans:
        assert start == position, f"gap or overlap at {position}: next page starts at {start}"
        assert end > start
        position = end
    assert position == len(raw)
    # The bodies put together are the raw text (control characters shown one for one).
    # (The fence adds a newline before its closing line when the result lacks one.)
    body = "".join(fenced_body(p.content) for p in pages)
    assert len(body) - (not raw.endswith("\n")) == len(raw)


def test_following_the_views_read_more_chain_is_not_much_slower_than_reading_all(
    travis_log: str,
) -> None:
    layer = small_layer()
    view = ResultLayer.view_of(process(layer, travis_log))
    assert view is not None
    from_all = follow(layer, view.references["all"])
    from_next = follow(layer, view.references["next"])
    # Both chains read the whole result (the view's `next` starts at line 1 or later).
    assert len(from_next) <= 1.5 * len(from_all), (len(from_next), len(from_all))


def test_later_pages_use_the_budget(travis_log: str) -> None:
    """Each page of a `next` chain is a useful size, not a sliver of the budget."""
    layer = small_layer()
    view = ResultLayer.view_of(process(layer, travis_log))
    assert view is not None
    pages = follow(layer, view.references["all"])
    used = [layer.token_counter.count(p.content) for p in pages[:-1]]
    assert min(used) >= layer.result_budget.tokens // 3, used


def _row_ids(text: str) -> list[int]:
    ids = []
    for raw_line in fenced_body(text).split("\n"):
        line = raw_line.strip()
        if line.startswith("[") and not line.startswith('["'):
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(row, list) and row and isinstance(row[0], int):
                ids.append(row[0])
        elif re.match(r"^\d+[,|\t]", line):
            ids.append(int(re.split(r"[,|\t]", line, maxsplit=1)[0]))
    return ids


def test_rows_next_chain_gives_every_row_exactly_once(demo_tools: dict[str, Any]) -> None:
    rows = demo_tools["run_sql"].invoke(
        {"query": "SELECT id, module, kind, name FROM definitions ORDER BY id LIMIT 2500"}
    )
    assert len(rows) == 2_500
    layer = small_layer(max_result_tokens=2_000)
    msg = process(layer, rows, name="run_sql")
    seen = _row_ids(msg.content)
    assert seen, msg.content[:500]
    view = ResultLayer.view_of(msg)
    assert view is not None
    for page in follow(layer, view.references.get("next")):
        seen.extend(_row_ids(page.content))
    expected = [r["id"] for r in rows]
    assert sorted(seen) == sorted(expected), (len(seen), len(set(seen)), len(expected))


# --------------------------------------------------------------------------- JSON


def _json_records(n: int) -> str:
    return json.dumps(
        {
            "items": [
                {"id": i, "name": f"user{i}", "status": ["ok", "fail"][i % 2], "note": "x" * 40}
                for i in range(n)
            ],
            "meta": {"total": n},
        }
    )


def test_json_path_fetch_of_a_moderate_result() -> None:
    layer = small_layer()
    msg = process(layer, _json_records(1_000))
    view = ResultLayer.view_of(msg)
    assert view is not None
    assert view.kind == "json"
    out = fetch(layer, ADA, ref=view.references["next"])
    assert out.status == "success"
    assert '"id": 3' in out.content


def test_json_path_fetch_of_a_large_result() -> None:
    raw = _json_records(5_000)
    assert len(raw) > 400_000  # larger than the default max_result_chars
    layer = small_layer()
    view = ResultLayer.view_of(process(layer, raw))
    assert view is not None
    assert view.kind == "json"
    out = fetch(layer, ADA, ref=view.references["next"])
    assert out.status == "success"
    assert '"id": 3' in out.content
    total = fetch(layer, ADA, ref=view.references["all"] + "?path=$.meta.total")
    assert fenced_body(total.content).strip() == "5000"


@pytest.mark.parametrize("path", ["$.items[99999]", "$.nope", "$.items["])
def test_a_bad_json_path_is_an_actionable_error(path: str) -> None:
    layer = small_layer()
    view = ResultLayer.view_of(process(layer, _json_records(5_000)))
    assert view is not None
    out = fetch(layer, ADA, ref=f"{view.references['all']}?path={path}")
    assert out.status == "error", out.content[:300]
    assert "$.items" in out.content  # names what does exist


def test_json_next_chain_pages_through_the_array() -> None:
    layer = small_layer()
    view = ResultLayer.view_of(process(layer, _json_records(1_000)))
    assert view is not None
    pages = follow(layer, view.references.get("next"), limit=200)
    shown = set()
    for page in pages:
        shown.update(int(i) for i in re.findall(r'"id": (\d+)', page.content))
    assert len(shown) > 100, f"the chain ended after {len(pages)} fetches, {len(shown)} items"


def test_json_view_states_what_it_left_out() -> None:
    raw = _json_records(1_000)
    layer = small_layer()
    msg = process(layer, raw)
    view = ResultLayer.view_of(msg)
    assert view is not None
    assert view.truncated
    assert view.omitted_chars >= len(raw) - view.shown_chars * 2
    assert re.search(r"Omitted[^\]]*[\d,]{3,}", msg.content), msg.content[-300:]


# --------------------------------------------------------------------------- mangled references


@pytest.fixture
def stored(travis_log: str) -> tuple[ResultLayer, str, str]:
    layer = small_layer()
    view = ResultLayer.view_of(process(layer, travis_log))
    assert view is not None
    assert view.record_id
    return layer, view.references["next"], view.record_id


@pytest.mark.parametrize(
    "mangle",
    [
        lambda r: f"  {r}  ",
        lambda r: f'"{r}"',
        lambda r: f"'{r}'",
        lambda r: f"<{r}>",
        lambda r: f"`{r}`",
        lambda r: r.replace("/command", "/log"),  # wrong kind: the record knows its kind
    ],
    ids=["spaces", "double-quotes", "single-quotes", "angle-brackets", "backticks", "wrong-kind"],
)
def test_tolerated_reference_forms(stored: tuple[ResultLayer, str, str], mangle: Any) -> None:
    layer, ref, _ = stored
    out = fetch(layer, ADA, ref=mangle(ref))
    assert out.status == "success", out.content[:300]
    exact = fetch(layer, ADA, ref=ref)
    assert out.content.split("\n", 1)[0] == exact.content.split("\n", 1)[0]
    assert fenced_body(out.content) == fenced_body(exact.content)


@pytest.mark.parametrize(
    ("mangle", "hint"),
    [
        (lambda r, rid: r.replace(rid, rid[:-4]), "mistyped"),
        (lambda r, rid: rid, "ref://tool-result/"),
        (lambda r, rid: r.replace("ref://", ""), "ref://tool-result/"),
        (lambda r, rid: r.replace("&", "&amp;"), "one range form"),
    ],
    ids=["truncated-id", "bare-id", "no-scheme", "html-escaped"],
)
def test_bad_references_get_an_actionable_error(
    stored: tuple[ResultLayer, str, str], mangle: Any, hint: str
) -> None:
    layer, ref, rid = stored
    out = fetch(layer, ADA, ref=mangle(ref, rid))
    assert out.status == "error"
    assert hint in out.content, out.content
    assert "Traceback" not in out.content


@pytest.mark.parametrize("suffix", [".", ","])
def test_reference_copied_with_trailing_punctuation(
    stored: tuple[ResultLayer, str, str], suffix: str
) -> None:
    layer, _ref, rid = stored
    whole = f"ref://tool-result/{rid}/command"
    out = fetch(layer, ADA, ref=whole + suffix)
    assert out.status == "success", out.content


def test_invalid_reference_message_is_well_formed(stored: tuple[ResultLayer, str, str]) -> None:
    layer, _, rid = stored
    out = fetch(layer, ADA, ref=rid)
    assert out.status == "error"
    assert "notice Pass" not in out.content
    assert re.search(r"[.!?:)\]] Pass `ref`", out.content), out.content


def test_range_arguments_and_their_errors(stored: tuple[ResultLayer, str, str]) -> None:
    layer, _, rid = stored
    base = f"ref://tool-result/{rid}/command"
    ok = fetch(layer, ADA, ref=base, start_line=10, end_line=20)
    assert ok.status == "success"
    assert "lines 10-20 of 2,280" in ok.content
    two = fetch(layer, ADA, ref=base, page=2, start_line=3)
    assert two.status == "error"
    assert "one range form" in two.content
    backwards = fetch(layer, ADA, ref=base, start_line=50, end_line=10)
    assert backwards.status == "error"
    assert "before start_line" in backwards.content
    zero = fetch(layer, ADA, ref=base, page=0)
    assert zero.status == "error"
    assert "page >= 1" in zero.content
    unknown = fetch(layer, ADA, ref=base, lines="1-10")
    assert unknown.status == "error"
    assert "Invalid arguments" in unknown.content
    beyond = fetch(layer, ADA, ref=base, start_line=999_999)
    assert "only 2,280 lines" in beyond.content


# --------------------------------------------------------------------------- who is asking


def test_other_users_and_tenants_get_the_same_answer_as_a_missing_id(
    stored: tuple[ResultLayer, str, str],
) -> None:
    layer, ref, rid = stored
    others = [
        {"configurable": {"tenant_id": "acme", "user_id": "eve", "thread_id": "t1"}},
        {"configurable": {"tenant_id": "evil", "user_id": "ada", "thread_id": "t1"}},
        {"configurable": {"tenant_id": "acme", "user_id": "ada", "thread_id": "t2"}},
        {},
    ]
    missing = fetch(layer, ADA, ref=ref.replace(rid, "A" * 22))
    assert missing.status == "error"
    for config in others:
        out = fetch(layer, config, ref=ref)
        assert out.status == "error", config
        assert out.content.replace(rid, "<id>") == missing.content.replace("A" * 22, "<id>")
    assert fetch(layer, ADA, ref=ref).status == "success"


async def test_async_fetch_checks_the_principal_too(stored: tuple[ResultLayer, str, str]) -> None:
    layer, ref, _ = stored
    ok = await afetch(layer, ADA, ref=ref)
    assert ok.status == "success"
    eve = {"configurable": {"tenant_id": "acme", "user_id": "eve", "thread_id": "t1"}}
    assert (await afetch(layer, eve, ref=ref)).status == "error"


class _Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


def test_expired_result_is_not_found_and_says_what_to_do(travis_log: str) -> None:
    clock = _Clock()
    layer = small_layer(store=InMemoryResultStore(clock=clock), ttl_seconds=3_600)
    view = ResultLayer.view_of(process(layer, travis_log))
    assert view is not None
    assert fetch(layer, ADA, ref=view.references["all"]).status == "success"
    clock.now += 3_601
    out = fetch(layer, ADA, ref=view.references["all"])
    assert out.status == "error"
    assert "run the original tool again" in out.content


def test_expired_message_states_the_configured_lifetime(travis_log: str) -> None:
    clock = _Clock()
    layer = small_layer(store=InMemoryResultStore(clock=clock), ttl_seconds=3_600)
    view = ResultLayer.view_of(process(layer, travis_log))
    assert view is not None
    clock.now += 3_601
    out = fetch(layer, ADA, ref=view.references["all"])
    assert "7 days" not in out.content, out.content


def test_without_a_store_the_view_promises_nothing(travis_log: str) -> None:
    layer = small_layer(store=False)
    msg = process(layer, travis_log)
    assert not calls_in(msg)
    assert "not saved" in msg.content
    out = fetch(layer, ADA, ref="ref://tool-result/AAAAAAAAAAAAAAAAAAAAAA/text")
    assert out.status == "error"
    assert "no result store" in out.content


def test_policy_kind_is_used_in_the_reference(corpus: Path) -> None:
    raw = read_raw(corpus / "loghub/Linux/Linux_2k.log")
    layer = small_layer(tool_policies={"syslog": ToolPolicy(kind="text")})
    msg = process(layer, raw, name="syslog")
    assert all("/text" in r for r in find_references([msg]))
