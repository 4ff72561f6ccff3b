"""File, JSON, search and binary views, and how a view is chosen."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.view import ResultView
from langchain_result_layer.views import (
    BUILTIN_KINDS,
    Prepared,
    Rendered,
    ResultViewBuilder,
    ViewContext,
    choose_view,
    get_view,
    register_view,
)
from langchain_result_layer.views.base import render_slice
from langchain_result_layer.views.binary import BinaryView, detect_type, printable_strings
from langchain_result_layer.views.files import FileView, outline
from langchain_result_layer.views.json_view import JsonView, format_path, resolve_path
from langchain_result_layer.views.search import SearchView, parse_hits
from tests.views.conftest import RID, assert_fence_unforgeable, assert_fits, make_ctx

# --------------------------------------------------------------------------- files

PY = "import os\n\n" + "".join(
    f"class C{i}:\n    def method(self):\n        return {i}\n\n\n"
    f"def f{i}():\n    # TODO: speed up\n    return {i}\n\n\n"
    for i in range(400)
)


def test_python_outline_with_line_ranges() -> None:
    entries = outline(PY)
    assert entries[0].name == "C0"
    assert entries[0].kind == "class"
    assert (entries[1].name, entries[1].kind) == ("C0.method", "method")
    assert entries[0].start_line == 3
    assert entries[0].end_line == 5


def test_other_languages_and_markdown() -> None:
    js = "export function a() {\n  return 1;\n}\nclass B {\n  m() {}\n}\nconst c = (x) => x;\n"
    assert [e.name for e in outline(js)] == ["a", "B", "c"]
    md = "# Title\n\ntext\n\n## Part A\n```\n# not a heading\n```\n## Part B\n"
    assert [(e.name, e.depth) for e in outline(md)] == [("Title", 0), ("Part A", 1), ("Part B", 1)]


def test_file_view_outline_first_and_references() -> None:
    view = FileView()
    assert choose_view(PY).kind == "file"
    ctx = make_ctx("file", tokens=800)
    out = view.render(view.prepare(PY), ctx)
    content = out.content
    assert isinstance(content, str)
    assert_fits(content, ctx)
    assert_fence_unforgeable(content)
    assert "class C0  [3-5]" in content
    defs = [i for i in out.view.items if i["type"] == "definition"]
    ref = Reference.parse(defs[0]["ref"])
    assert (ref.start_line, ref.end_line) == (3, 5)
    assert out.view.summary["outline_entries"] == 1_200


# --------------------------------------------------------------------------- json

DOC = {
    "items": [
        {"id": i, "name": f"item {i}", "tags": ["a", "b"], "blob": "z" * 500} for i in range(300)
    ],
    "total": 300,
    "odd key": {"x y": [1, 2, 3]},
}


def test_paths() -> None:
    assert format_path(["odd key", "x y", 2]) == "$['odd key']['x y'][2]"
    assert resolve_path(DOC, "$['odd key']['x y'][2]") == 3
    assert resolve_path(DOC, "$.items[7].id") == 7
    with pytest.raises(LookupError, match="array of 300"):
        resolve_path(DOC, "$.items[300]")
    with pytest.raises(ValueError, match="starts with"):
        resolve_path(DOC, "items")


def test_json_view_outline_items_and_path_fetch() -> None:
    view = JsonView()
    assert choose_view(DOC).kind == "json"
    prepared = view.prepare(DOC)
    ctx = make_ctx("json", tokens=700)
    out = view.render(prepared, ctx)
    content = out.content
    assert isinstance(content, str)
    assert_fits(content, ctx)
    assert_fence_unforgeable(content)
    assert "$.items: array of 300" in content
    assert "$.items[0] = " in content
    nxt = Reference.parse(out.view.references["next"])
    shown = [
        i for i in out.view.items if i.get("type") == "json_item" and i.get("array") == "$.items"
    ]
    assert shown
    assert nxt.path == "$.items"
    assert (nxt.page, nxt.page_size) == (2, len(shown))
    # A path fetch reads the whole record and resolves the path.
    raw = prepared.raw
    assert isinstance(raw, str)
    ref = Reference(record_id=RID, kind="json", path="$.items[42]")
    request = view.slice_for(ref, line_count=raw.count("\n") + 1)
    assert request.start_line == 1
    fetched = render_slice(
        view,
        raw,
        reference=ref,
        slice_start_line=1,
        slice_offset=0,
        record_size=len(raw),
        record_lines=raw.count("\n") + 1,
        ctx=make_ctx("json"),
    )
    assert '"id": 42' in str(fetched.content)
    missing = view.render_slice(
        raw,
        reference=Reference(record_id=RID, kind="json", path="$.nope"),
        slice_start_line=1,
        slice_offset=0,
        record_size=len(raw),
        record_lines=1,
        ctx=make_ctx("json"),
    )
    assert missing is not None
    assert "has no key 'nope'" in str(missing.content)


def test_large_path_fetch_is_outlined_with_absolute_paths() -> None:
    view = JsonView()
    raw = json.dumps(DOC)
    ctx = make_ctx("json", tokens=400)
    out = view.render_slice(
        raw,
        reference=Reference(record_id=RID, kind="json", path="$.items"),
        slice_start_line=1,
        slice_offset=0,
        record_size=len(raw),
        record_lines=1,
        ctx=ctx,
    )
    assert out is not None
    assert_fits(out.content, ctx)
    assert "$.items[0]" in str(out.content)


def test_json_text_that_is_not_json_falls_back() -> None:
    view = JsonView()
    prepared = view.prepare('{"broken": ')
    assert prepared.facts.get("fallback") == "text"


# --------------------------------------------------------------------------- search

GREP = "".join(f"src/pkg{i % 4}/mod{i % 9}.py:{i + 1}:    call_{i}()\n" for i in range(2_000))


def test_parse_styles() -> None:
    heading = "src/a.py\n12:import os\n13-context\n\nsrc/b.py\n3:x = 1\n"
    parsed = parse_hits(heading)
    assert parsed.style == "heading"
    assert [(h.path, h.line) for h in parsed.hits] == [("src/a.py", 12), ("src/b.py", 3)]
    agent = (
        'Found 3 matches for "x" in /repo:\n'
        "/repo/a.py (2 matches)\n/repo/b.py (1 matches)\nEnd of matches\n"
    )
    assert parse_hits(agent).headers
    paths = parse_hits("./a/b.py\n./a/c.py\n./d/e.py\n")
    assert paths.style == "paths"
    assert len(paths.hits) == 3


def test_search_view_counts_files_and_spreads_hits() -> None:
    view = SearchView()
    assert choose_view(GREP).kind == "search"
    ctx = make_ctx("search", tokens=700)
    out = view.render(view.prepare(GREP), ctx)
    content = out.content
    assert isinstance(content, str)
    assert_fits(content, ctx)
    assert_fence_unforgeable(content)
    assert "2,000 hits in 36 files" in content
    hits = [i for i in out.view.items if i["type"] == "hit"]
    assert {h["path"].split("/")[1] for h in hits} == {"pkg0", "pkg1", "pkg2", "pkg3"}
    # Hits are printed exactly as the tool printed them.
    lines = set(GREP.splitlines())
    assert all(h["text"] in lines for h in hits)


def test_real_search_output_keeps_the_file_the_agent_opened(corpus: Path) -> None:
    text = (
        corpus / "tool_outputs" / "searches" / "sphinx-doc__sphinx-8474__step03.txt"
    ).read_text()
    view = SearchView()
    ctx = make_ctx("search", tokens=2_000)
    out = view.render(view.prepare(text), ctx)
    assert_fits(out.content, ctx)
    assert "./doc/usage/restructuredtext/directives.rst" in str(out.content)


# --------------------------------------------------------------------------- binary


def test_binary_view() -> None:
    data = (
        b"\x89PNG\r\n\x1a\n"
        + bytes(range(256)) * 40
        + b"tEXtComment made with care\x00"
        + bytes(1000)
    )
    assert detect_type(data) == "PNG image"
    assert printable_strings(b"\x00\x01hello world\x00") == [(2, "hello world")]
    view = BinaryView()
    assert choose_view(data).kind == "binary"
    prepared = view.prepare(data)
    assert prepared.raw == data
    ctx = make_ctx("binary", tokens=300)
    out = view.render(prepared, ctx)
    assert_fits(out.content, ctx)
    assert hashlib.sha256(data).hexdigest() in str(out.content)
    assert "PNG image" in str(out.content)
    assert Reference.parse(out.view.references["next"]).offset == 0


# --------------------------------------------------------------------------- choosing


def test_builtin_kinds_are_registered() -> None:
    for kind in BUILTIN_KINDS:
        view = get_view(kind)
        assert view is not None
        assert view.kind == kind


@pytest.mark.parametrize(
    ("payload", "kind"),
    [
        ("plain words " * 50, "text"),
        ([{"a": 1}, {"a": 2}], "rows"),
        ({"a": [1, 2]}, "json"),
        (b"\x00\x01", "binary"),
        ("x\n" * 100 + "exit code 1\n", "command"),
        ("".join(f"2024-01-01 00:00:{i % 60:02d} INFO ok {i}\n" for i in range(100)), "log"),
        ("".join(f"src/a{i}.py:{i}:x\n" for i in range(100)), "search"),
        ("id,name\n" + "".join(f"{i},n{i}\n" for i in range(100)), "rows"),
    ],
)
def test_sniffing(payload: object, kind: str) -> None:
    assert choose_view(payload).kind == kind


def test_declared_kind_wins_and_unknown_kind_fails() -> None:
    assert choose_view([{"a": 1}], kind="text").kind == "text"
    with pytest.raises(ValueError, match="no view registered"):
        choose_view("x", kind="nope")


class _Csvish(ResultViewBuilder):
    kind = "csvish"

    def sniff(self, payload: object) -> float:
        return 0.99 if isinstance(payload, str) and payload.startswith("CSVISH") else 0.0

    def prepare(self, payload: object) -> Prepared:
        return Prepared(raw=str(payload))

    def render(self, prepared: Prepared, ctx: ViewContext) -> Rendered:
        return Rendered(content="csvish!", view=ResultView(kind=self.kind))


class _Broken(_Csvish):
    kind = "broken"

    def sniff(self, payload: object) -> float:
        raise RuntimeError("boom")


@pytest.mark.usefixtures("default_views")
def test_user_views_take_part_and_broken_ones_are_skipped() -> None:
    register_view(_Csvish())
    register_view(_Broken())
    assert choose_view("CSVISH,1,2").kind == "csvish"
    assert choose_view("hello").kind == "text"
    with pytest.raises(ValueError, match="already registered"):
        register_view(_Csvish(), replace=False)


def test_sniffing_reads_only_a_prefix_of_huge_inputs() -> None:
    import time

    huge = "2024-01-01 00:00:00 INFO ok\n" * 2_000_000  # 56 MB
    start = time.perf_counter()
    for view in (get_view(k) for k in BUILTIN_KINDS):
        assert view is not None
        view.sniff(huge)
    elapsed = time.perf_counter() - start
    del elapsed  # no timing assertion; the call returning at all on 56 MB is the check
    assert choose_view(huge).kind == "log"


@settings(max_examples=60, deadline=None)
@given(
    payload=st.one_of(
        st.text(max_size=3_000),
        st.binary(max_size=3_000),
        st.lists(
            st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=20), max_size=4),
            max_size=40,
        ),
        st.dictionaries(
            st.text(max_size=8),
            st.recursive(
                st.integers() | st.text(max_size=30),
                lambda c: (
                    st.lists(c, max_size=5) | st.dictionaries(st.text(max_size=5), c, max_size=5)
                ),
            ),
            max_size=10,
        ),
    ),
    tokens=st.integers(64, 600),
    stored=st.booleans(),
    is_error=st.booleans(),
)
def test_every_view_fits_any_budget(
    payload: object, tokens: int, stored: bool, is_error: bool
) -> None:
    for kind in BUILTIN_KINDS:
        view = get_view(kind)
        assert view is not None
        try:
            prepared = view.prepare(payload)
        except (TypeError, ValueError):
            continue
        ctx = make_ctx(kind, tokens=tokens, chars=tokens * 5, reference=stored, is_error=is_error)
        out = view.render(prepared, ctx)
        assert_fits(out.content, ctx)
        if str(out.content).startswith("[Tool result") and "<<<tool-output" in str(out.content):
            assert_fence_unforgeable(str(out.content))
