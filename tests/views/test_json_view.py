"""The JSON view: array pages, exact omissions, the `next` chain, slices and raw spans.

Pages are rendered with the view alone (`render_slice` on the whole record), so the chain can
be followed for many generated documents and budgets; `tests/fetch/test_fetch_json_pages.py`
runs the same through the real fetch tool and stores.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langchain_result_layer.core.normalize import clean_for_display
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.view import ResultView
from langchain_result_layer.views.base import Rendered, ViewContext
from langchain_result_layer.views.json_view import (
    JsonView,
    _locate_spans,
    _verified_spans,
    resolve_path,
)
from tests.views.conftest import RID, assert_fence_unforgeable, assert_fits, fence_parts, make_ctx

VIEW = JsonView()
BASE = Reference(record_id=RID, kind="json")
OMITTED_RE = re.compile(r"\[Omitted: ([\d,]+) of the ([\d,]+) chars of the (original|value)")


def page_ref(path: str, page: int, page_size: int) -> Reference:
    return Reference(record_id=RID, kind="json", path=path, page=page, page_size=page_size)


def records(n: int, note: int = 40) -> dict[str, Any]:
    return {
        "items": [
            {"id": i, "name": f"user{i}", "status": ["ok", "fail"][i % 2], "note": "x" * note}
            for i in range(n)
        ],
        "meta": {"total": n},
    }


def first_view(raw: str, ctx: ViewContext) -> Rendered:
    return VIEW.render(VIEW.prepare(raw), ctx)


def fetch(raw: str, ref: str | Reference, ctx: ViewContext) -> Rendered:
    reference = Reference.parse(ref) if isinstance(ref, str) else ref
    out = VIEW.render_slice(
        raw,
        reference=reference,
        slice_start_line=1,
        slice_offset=0,
        record_size=len(raw),
        record_lines=raw.count("\n") + 1,
        ctx=ctx,
    )
    assert out is not None
    return out


def num(text: str) -> int:
    return int(text.replace(",", ""))


def visited(view: ResultView, array_path: str) -> list[int]:
    """Indexes of `array_path` a view shows (whole, or cut with a reference to itself)."""
    out = []
    for item in view.items:
        kind = item.get("type")
        if (kind == "json_item" and item.get("array") == array_path) or kind == "json_element":
            out.append(int(item["index"]))
    return out


def follow(raw: str, first: Rendered, ctx: ViewContext, limit: int) -> list[Rendered]:
    pages = []
    ref = first.view.references.get("next")
    while ref is not None:
        assert len(pages) < limit, "the chain does not end"
        page = fetch(raw, ref, ctx)
        assert page.view.status == "success", page.content
        pages.append(page)
        ref = page.view.references.get("next")
    return pages


# --------------------------------------------------------------------------- paths and spans


def test_slice_paths() -> None:
    doc = {"a": [0, 1, 2, 3, 4]}
    assert resolve_path(doc, "$.a[1:3]") == [1, 2]
    assert resolve_path(doc, "$.a[3:]") == [3, 4]
    assert resolve_path(doc, "$.a[:2]") == [0, 1]
    assert resolve_path(doc, "$.a[9:]") == []
    with pytest.raises(ValueError, match="must end the JSON path"):
        resolve_path(doc, "$.a[1:2][0]")
    with pytest.raises(LookupError, match="a slice needs an array"):
        resolve_path({"a": {"b": 1}}, "$.a[0:]")


@pytest.mark.parametrize("indent", [None, 1, 4])
def test_spans_are_the_raw_text_of_each_value(indent: int | None) -> None:
    doc = {"k\u00e9y": [1, {"x": 'a\\"b\u2028', "y": None}, [2.5e-3, True]], "z": {}}
    raw = "  \n" + json.dumps(doc, indent=indent, ensure_ascii=False) + "\n\n"
    paths: list[tuple[str | int, ...]] = [
        (),
        ("k\u00e9y",),
        ("k\u00e9y", 0),
        ("k\u00e9y", 1, "x"),
        ("k\u00e9y", 2, 1),
        ("z",),
    ]
    spans = _locate_spans(raw, paths)
    assert spans is not None
    assert raw[slice(*spans[()])] == raw.strip()
    for path in paths[1:]:
        value: Any = doc
        for part in path:
            value = value[part]
        assert json.loads(raw[slice(*spans[path])]) == value
    assert ("nope",) not in (_locate_spans(raw, [("nope",)]) or {})
    assert _locate_spans("{broken", [("a",)]) is None


def test_a_repeated_key_is_not_located_at_its_first_occurrence() -> None:
    raw = '{"a": [1, 2], "b": 0, "a": [3, 4]}'
    doc = json.loads(raw)  # the last "a" wins
    spans = _verified_spans(raw, doc, (), [("a", 0), ("b",)])
    assert spans is not None
    assert ("a", 0) not in spans  # the first "a" holds other values: not claimed as shown
    assert raw[slice(*spans[("b",)])] == "0"


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=30,
)


def _all_paths(value: Any, prefix: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out.extend(_all_paths(v, (*prefix, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(_all_paths(v, (*prefix, i)))
    return out


@settings(max_examples=150, deadline=None)
@given(doc=json_values, indent=st.sampled_from([None, 0, 2]), ascii_only=st.booleans())
def test_every_located_span_decodes_to_its_value(
    doc: Any, indent: int | None, ascii_only: bool
) -> None:
    raw = json.dumps(doc, indent=indent, ensure_ascii=ascii_only)
    paths = _all_paths(doc)
    spans = _locate_spans(raw, paths)
    assert spans is not None
    assert set(spans) == set(paths)
    for path, (start, end) in spans.items():
        value: Any = doc
        for part in path:
            value = value[part]
        assert json.loads(raw[start:end]) == value


# --------------------------------------------------------------------------- the first view


@pytest.mark.parametrize("indent", [None, 2])
def test_first_view_states_exactly_what_it_left_out(indent: int | None) -> None:
    doc = records(1_000)
    raw = json.dumps(doc, indent=indent)
    ctx = make_ctx("json", tokens=1_000)
    out = first_view(raw, ctx)
    view = out.view
    content = str(out.content)
    assert_fits(content, ctx)
    assert_fence_unforgeable(content)
    # The notice states the omitted characters, exactly as the ResultView counts them.
    match = OMITTED_RE.search(content)
    assert match is not None, content[-500:]
    assert num(match.group(1)) == view.omitted_chars == view.summary["omitted_chars"]
    assert num(match.group(2)) == len(raw)
    assert view.omitted_chars > len(raw) * 0.9
    # What is not omitted is exactly the items and values shown whole (and their separators).
    shown_values = [json.loads(i["json"]) for i in view.items if i.get("type") == "json_item"]
    shown_values += [
        json.loads(i["preview"])
        for i in view.items
        if i.get("type") == "json_path" and "preview" in i and not i["clipped"]
    ]
    kept, pos = [], 0
    for r in view.omitted:
        assert r.start_char >= pos
        if r.start_char > pos:
            kept.append(raw[pos : r.start_char])
        pos = r.end_char
    kept.append(raw[pos:])
    assert sum(map(len, kept)) == len(raw) - view.omitted_chars
    for stretch in filter(None, kept):
        for value in json.loads(f"[{stretch}]"):
            assert value in shown_values
    # Which elements were left out, with exact numbers.
    items = [i for i in view.items if i.get("type") == "json_item"]
    k = len(items)
    assert [i["index"] for i in items] == list(range(k))
    assert f"elements [{k}]-[999] of $.items ({1_000 - k:,} of 1,000)" in content
    # The line numbers of the omitted ranges are exact too.
    for r in view.omitted:
        assert r.start_line == raw.count("\n", 0, r.start_char) + 1
        assert r.end_line == raw.count("\n", 0, r.end_char - 1) + 1


def test_first_view_next_is_the_page_after_the_items_it_shows() -> None:
    raw = json.dumps(records(1_000))
    ctx = make_ctx("json", tokens=1_000)
    out = first_view(raw, ctx)
    shown = len([i for i in out.view.items if i.get("type") == "json_item"])
    assert shown > 3  # the largest array's first items fill the budget
    nxt = Reference.parse(out.view.references["next"])
    assert (nxt.path, nxt.page, nxt.page_size) == ("$.items", 2, shown)
    assert f'json?page=2&page_size={shown}&path=$.items")' in str(out.content)


def test_first_view_of_few_items_offers_a_page_sized_to_the_budget() -> None:
    """A long outline leaves room for one item: the next page is not one element long."""
    doc: dict[str, Any] = {f"key{i:03d}": {"a": i, "b": [i]} for i in range(60)}
    doc["items"] = [{"id": i} for i in range(500)]
    raw = json.dumps(doc)
    ctx = make_ctx("json", tokens=1_200)
    out = first_view(raw, ctx)
    shown = len([i for i in out.view.items if i.get("type") == "json_item"])
    nxt = Reference.parse(out.view.references["next"])
    assert nxt.page_size is not None
    assert nxt.page_size > max(1, 2 * shown)
    if shown:
        assert (nxt.path, nxt.page) == (f"$.items[{shown}:]", 1)
    else:
        assert (nxt.path, nxt.page) == ("$.items", 1)
    page = fetch(raw, nxt, ctx)
    assert visited(page.view, "$.items")[0] == shown
    assert len(visited(page.view, "$.items")) > 2 * shown


def test_without_a_store_there_is_no_next_but_omissions_are_exact() -> None:
    raw = json.dumps(records(300))
    ctx = make_ctx("json", tokens=800, reference=False)
    out = first_view(raw, ctx)
    assert "next" not in out.view.references
    assert "not saved" in str(out.content)
    match = OMITTED_RE.search(str(out.content))
    assert match is not None
    assert num(match.group(1)) == out.view.omitted_chars


# --------------------------------------------------------------------------- pages


def test_a_page_shows_its_elements_one_compact_line_each() -> None:
    doc = records(200)
    raw = json.dumps(doc, indent=1)
    ctx = make_ctx("json", tokens=2_000)
    page = fetch(raw, page_ref("$.items", 3, 10), ctx)
    content = str(page.content)
    assert_fits(content, ctx)
    assert_fence_unforgeable(content)
    _, _, body, _ = fence_parts(content)
    expected = [f"[{i}] {json.dumps(doc['items'][i])}" for i in range(20, 30)]
    assert body.strip("\n").split("\n") == expected
    assert "page 3 (page_size 10) shows elements [20]-[29]; 170 more follow" in content
    assert page.view.references["next"] == str(
        Reference(record_id=RID, kind="json", path="$.items", page=4, page_size=10)
    )
    assert page.view.omitted == []
    assert page.view.unit == "elements"
    assert page.view.total == 200


def test_a_cut_page_continues_exactly_after_the_last_element_shown() -> None:
    doc = records(200, note=300)
    raw = json.dumps(doc)
    ctx = make_ctx("json", tokens=600)
    page = fetch(raw, page_ref("$.items", 2, 50), ctx)
    view = page.view
    shown = visited(view, "$.items")
    assert shown == list(range(50, 50 + len(shown)))
    assert 0 < len(shown) < 50
    y = 50 + len(shown)
    nxt = Reference.parse(view.references["next"])
    assert (nxt.path, nxt.page, nxt.page_size) == (f"$.items[{y}:]", 1, 50)  # no ratchet
    # The elements asked for and not shown are the omitted range, exactly.
    (r,) = view.omitted
    spans = _locate_spans(raw, [("items", y), ("items", 99)])
    assert spans is not None
    assert (r.start_char, r.end_char) == (spans[("items", y)][0], spans[("items", 99)][1])
    assert f"elements [{y}]-[99] of this page ({100 - y:,}, {r.chars:,} chars" in str(page.content)
    # The continuation's full pages keep its path and size.
    after = fetch(raw, nxt, ctx)
    assert visited(after.view, "$.items")[0] == y


def test_an_element_too_large_for_the_budget_is_shown_cut_with_its_own_reference() -> None:
    doc = {"items": [{"id": 0}, {"id": 1, "blob": "b" * 20_000}, {"id": 2}]}
    raw = json.dumps(doc)
    ctx = make_ctx("json", tokens=500)
    page = fetch(raw, page_ref("$.items[1:]", 1, 10), ctx)
    content = str(page.content)
    assert_fits(content, ctx)
    assert "element [1] alone is too large" in content
    assert 'json?path=$.items[1]")' in content
    view = page.view
    assert visited(view, "$.items") == [1]
    assert view.items[0]["clipped"] is True
    _, _, body, _ = fence_parts(content)
    shown = body.strip("\n")[len("[1] ") :]
    assert shown.endswith("…")
    assert json.dumps(doc["items"][1]).startswith(shown[:-1])
    (r,) = view.omitted
    start, end = raw.index('{"id": 1'), raw.index(', {"id": 2}')
    assert (r.start_char, r.end_char) == (start + len(shown) - 1, end)
    nxt = Reference.parse(view.references["next"])
    assert (nxt.path, nxt.page, nxt.page_size) == ("$.items[2:]", 1, 10)
    # The element by its own path is outlined within the budget.
    own = fetch(raw, BASE.with_path("$.items[1]"), ctx)
    assert_fits(own.content, ctx)
    assert "$.items[1].blob" in str(own.content)


def test_an_element_fetch_leads_to_the_following_page() -> None:
    raw = json.dumps(records(30))
    ctx = make_ctx("json", tokens=2_000)
    one = fetch(raw, BASE.with_path("$.items[7]"), ctx)
    assert '"id": 7' in str(one.content)
    nxt = Reference.parse(one.view.references["next"])
    assert (nxt.path, nxt.page) == ("$.items[8:]", 1)
    page = fetch(raw, nxt, ctx)
    assert visited(page.view, "$.items")[0] == 8
    last = fetch(raw, BASE.with_path("$.items[29]"), ctx)
    assert "next" not in last.view.references


def test_slices_page_through_part_of_an_array() -> None:
    raw = json.dumps({"a": list(range(100))})
    ctx = make_ctx("json", tokens=2_000)
    part = fetch(raw, BASE.with_path("$.a[10:25]"), ctx)
    assert visited(part.view, "$.a") == list(range(10, 25))
    assert "next" not in part.view.references  # the slice ends at 25
    paged = fetch(raw, page_ref("$.a[10:25]", 2, 4), ctx)
    assert visited(paged.view, "$.a") == [14, 15, 16, 17]
    nxt = Reference.parse(paged.view.references["next"])
    assert (nxt.path, nxt.page, nxt.page_size) == ("$.a[10:25]", 3, 4)
    empty = fetch(raw, BASE.with_path("$.a[100:]"), ctx)
    assert empty.view.status == "success"
    assert "holds none" in str(empty.content)


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        (page_ref("$.items", 99, 10), "past the end"),
        (page_ref("$.items", 99, 10), "its last page is 3"),
        (page_ref("$.meta", 1, 10), "$.meta is an object with 1 key, not an array"),
        (BASE.with_path("$.meta.total[0:]"), "$.meta.total is an int, not an array"),
        (page_ref("$.nope", 1, 10), "has no key 'nope'"),
        (BASE.with_path("$.items[1:2][0]"), "must end the JSON path"),
    ],
)
def test_pages_that_cannot_be_served_say_why(ref: Reference, expected: str) -> None:
    raw = json.dumps(records(25))
    out = fetch(raw, ref, make_ctx("json"))
    assert out.view.status == "error"
    assert expected in str(out.content)


# --------------------------------------------------------------------------- the whole chain

elements = st.one_of(
    st.integers(),
    st.text(max_size=30),
    st.builds(lambda n: "w" * n, st.integers(min_value=0, max_value=6_000)),
    st.fixed_dictionaries(
        {"id": st.integers(0, 10**6), "text": st.text(max_size=200)},
        optional={"tags": st.lists(st.text(max_size=5), max_size=4)},
    ),
)


def generated_array(seed: int, n: int, big_percent: int) -> list[Any]:
    """A long array of mixed elements (hypothesis lists stay short), some too large for a page."""
    rng = random.Random(seed)
    out: list[Any] = []
    for i in range(n):
        roll = rng.random() * 100
        if roll < big_percent:
            out.append("w" * rng.randint(2_000, 9_000))
        elif roll < 35:
            out.append(rng.randint(-(10**9), 10**9))
        elif roll < 70:
            tags = [rng.choice(["a", "é", "中", "\u2028"]) for _ in range(rng.randint(0, 3))]
            out.append({"id": i, "text": "t" * rng.randint(0, 300), "tags": tags})
        else:
            out.append("".join(rng.choice('aé"\\\x7f中 ') for _ in range(rng.randint(0, 40))))
    return out


arrays = st.one_of(
    st.lists(elements, min_size=1, max_size=30),
    st.builds(
        generated_array,
        st.integers(0, 2**32),
        st.integers(min_value=1, max_value=800),
        st.integers(min_value=0, max_value=4),
    ),
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    array=arrays,
    tokens=st.integers(min_value=250, max_value=1_500),
    indent=st.sampled_from([None, 1]),
    wrapped=st.booleans(),
)
def test_following_next_from_the_first_view_visits_every_element_once(
    array: list[Any], tokens: int, indent: int | None, wrapped: bool
) -> None:
    doc: Any = {"count": len(array), "items": array} if wrapped else array
    path = "$.items" if wrapped else "$"
    raw = json.dumps(doc, indent=indent)
    ctx = make_ctx("json", tokens=tokens)
    first = first_view(raw, ctx)
    assert_fits(first.content, ctx)
    seen = visited(first.view, path)
    assert seen == list(range(len(seen)))
    previous: Reference | None = None
    for page in follow(raw, first, ctx, limit=len(array) + 1):
        assert_fits(page.content, ctx)
        shown = visited(page.view, path)
        assert shown, page.content
        assert shown == list(range(shown[0], shown[0] + len(shown)))
        assert shown[0] == len(seen), "a gap or a repeat"
        seen.extend(shown)
        current = Reference.parse(page.view.references["current"])
        if previous is not None:  # page sizes never ratchet down, after full or cut pages
            assert current.page_size == previous.page_size
        previous = current
        # Every element shown whole is its exact compact JSON.
        _, _, body, _ = fence_parts(str(page.content))
        for line, index in zip(body.strip("\n").split("\n"), shown, strict=False):
            if page.view.summary["element_cut"] is None:
                compact = json.dumps(array[index], ensure_ascii=False)
                assert line == f"[{index}] {clean_for_display(compact)}"
    assert seen == list(range(len(array)))
