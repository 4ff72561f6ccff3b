"""References: ids, formatting, parsing, and clear rejection of malformed input."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_result_layer.core.reference import (
    REFERENCE_PREFIX,
    Reference,
    known_kinds,
    new_record_id,
    register_kind,
)
from langchain_result_layer.errors import InvalidReferenceError

RID = "AbCdEfGhIjKlMnOpQrStUv"


def test_new_record_id_shape_and_entropy() -> None:
    ids = {new_record_id() for _ in range(5_000)}
    assert len(ids) == 5_000
    for rid in list(ids)[:200]:
        assert len(rid) == 22
        assert re.fullmatch(r"[A-Za-z0-9_-]{22}", rid)
    # 22 URL-safe base64 characters carry 132 bits; 16 random bytes = 128 of them.
    assert Reference(record_id=new_record_id()).record_id


def test_format_and_parse_each_range_form() -> None:
    cases = {
        f"{REFERENCE_PREFIX}{RID}/rows?page=2&page_size=50": Reference(
            RID, "rows", page=2, page_size=50
        ),
        f"{REFERENCE_PREFIX}{RID}/log?start_line=41&end_line=140": Reference(
            RID, "log", start_line=41, end_line=140
        ),
        f"{REFERENCE_PREFIX}{RID}/text?offset=0&limit=20000": Reference(
            RID, offset=0, limit=20_000
        ),
        f"{REFERENCE_PREFIX}{RID}/json?path=$.items[3]": Reference(RID, "json", path="$.items[3]"),
        f"{REFERENCE_PREFIX}{RID}/text": Reference(RID),
    }
    for text, ref in cases.items():
        assert str(ref) == text
        assert Reference.parse(text) == ref


def test_parse_tolerates_what_models_wrap_references_in() -> None:
    ref = Reference(RID, "log", start_line=3, end_line=4)
    for wrapped in (f" {ref} ", f"`{ref}`", f'"{ref}"', f"<{ref}>", f"'{ref}'\n"):
        assert Reference.parse(wrapped) == ref
    assert Reference.parse(f"{REFERENCE_PREFIX}{RID}") == Reference(RID)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "expected ref://tool-result/"),
        ("https://example.com/x", "expected ref://tool-result/"),
        (f"ref://tool-results/{RID}/text", "expected ref://tool-result/"),
        (f"{REFERENCE_PREFIX}", "exactly <id>/<kind>"),
        (f"{REFERENCE_PREFIX}{RID}/text/extra", "exactly <id>/<kind>"),
        (f"{REFERENCE_PREFIX}short/text", "8-64 characters"),
        (f"{REFERENCE_PREFIX}{RID}!/text", "8-64 characters"),
        (f"{REFERENCE_PREFIX}{RID}/Text", "unknown kind"),
        (f"{REFERENCE_PREFIX}{RID}/text?page=0", "page must be >= 1"),
        (f"{REFERENCE_PREFIX}{RID}/text?page=-1", "non-negative integer"),
        (f"{REFERENCE_PREFIX}{RID}/text?page=two", "non-negative integer"),
        (f"{REFERENCE_PREFIX}{RID}/text?page=1&page=2", "given twice"),
        (f"{REFERENCE_PREFIX}{RID}/text?colour=red", "unknown parameter"),
        (f"{REFERENCE_PREFIX}{RID}/text?page_size=10001", "page_size must be <="),
        (f"{REFERENCE_PREFIX}{RID}/text?start_line=9&end_line=3", "is before start_line"),
        (f"{REFERENCE_PREFIX}{RID}/text?page=1&start_line=3", "one range form"),
        (f"{REFERENCE_PREFIX}{RID}/text?offset=1&end_line=3", "one range form"),
        (f"{REFERENCE_PREFIX}{RID}/text?limit=0", "limit must be >= 1"),
        (f"{REFERENCE_PREFIX}{RID}/text?page", "malformed query string"),
        (f"{REFERENCE_PREFIX}{RID}/text?offset=1234567890123", "non-negative integer"),
        (f"{REFERENCE_PREFIX}{RID}/text?" + "x" * 3000, "longer than"),
    ],
)
def test_malformed_references_are_rejected_with_a_reason(text: str, reason: str) -> None:
    with pytest.raises(InvalidReferenceError) as info:
        Reference.parse(text)
    assert reason in str(info.value)
    assert info.value.reference == text
    assert isinstance(info.value, ValueError)


def test_non_string_is_rejected() -> None:
    with pytest.raises(InvalidReferenceError, match="must be a string"):
        Reference.parse(123)  # type: ignore[arg-type]


def test_constructor_validates_like_parse() -> None:
    with pytest.raises(InvalidReferenceError):
        Reference(RID, start_line=True)  # type: ignore[arg-type]
    with pytest.raises(InvalidReferenceError):
        Reference("x")
    assert Reference(RID, offset=0).offset == 0


def test_derived_references_keep_record_and_kind_and_drop_other_ranges() -> None:
    ref = Reference(RID, "rows", page=3, page_size=20)
    assert ref.has_range
    assert not ref.base().has_range
    assert ref.with_page(4) == Reference(RID, "rows", page=4, page_size=20)
    assert ref.with_lines(5, 9) == Reference(RID, "rows", start_line=5, end_line=9)
    assert ref.with_chars(100, 50) == Reference(RID, "rows", offset=100, limit=50)
    assert ref.with_path("$.a") == Reference(RID, "rows", path="$.a")


ids = st.text(alphabet="ABCxyz019_-", min_size=8, max_size=64)
# `parse` accepts the kinds the layer knows (registered views and `blocks`), and a kind a
# user registers; any other well-formed kind is refused with the list of known ones.
register_kind("custom_kind_9")
kinds = st.sampled_from([*known_kinds(), "custom_kind_9"])
positive = st.integers(1, 10**12 - 1)


@st.composite
def references(draw: st.DrawFn) -> Reference:
    rid, kind = draw(ids), draw(kinds)
    form = draw(st.sampled_from(["none", "page", "lines", "chars", "path"]))
    if form == "page":
        return Reference(
            rid,
            kind,
            page=draw(st.none() | positive),
            page_size=draw(st.none() | st.integers(1, 10_000)),
        )
    if form == "lines":
        a = draw(st.none() | positive)
        b = draw(st.none() | st.integers(a or 1, 10**12 - 1))
        return Reference(rid, kind, start_line=a, end_line=b)
    if form == "chars":
        return Reference(
            rid,
            kind,
            offset=draw(st.none() | st.integers(0, 10**12 - 1)),
            limit=draw(st.none() | positive),
        )
    if form == "path":
        return Reference(rid, kind, path=draw(st.text(max_size=40)))
    return Reference(rid, kind)


@settings(max_examples=300)
@given(ref=references())
def test_round_trip(ref: Reference) -> None:
    text = str(ref)
    assert text.startswith(REFERENCE_PREFIX)
    assert Reference.parse(text) == ref
    assert Reference.parse(f" `{text}` ") == ref


@settings(max_examples=300)
@given(text=st.text(max_size=120))
def test_parse_never_raises_anything_but_invalid_reference(text: str) -> None:
    error: InvalidReferenceError | None = None
    try:
        ref = Reference.parse(text)
    except InvalidReferenceError as exc:
        error = exc
    if error is not None:
        assert str(error).startswith("Invalid reference")
    else:
        assert Reference.parse(str(ref)) == ref


@given(kind=st.from_regex(r"[a-z][a-z0-9_]{0,31}", fullmatch=True))
def test_unknown_kinds_are_refused_with_the_known_ones(kind: str) -> None:
    text = f"{REFERENCE_PREFIX}AbCdEfGhIjKlMnOpQrStUv/{kind}"
    if kind in known_kinds():
        assert Reference.parse(text).kind == kind
        return
    with pytest.raises(InvalidReferenceError, match="the known kinds are ") as info:
        Reference.parse(text)
    for known in ("command", "json", "log", "rows", "text"):
        assert known in str(info.value)


def test_commandx_lists_the_known_kinds() -> None:
    with pytest.raises(InvalidReferenceError, match=r"unknown kind 'commandx'; the known kinds"):
        Reference.parse(f"{REFERENCE_PREFIX}AbCdEfGhIjKlMnOpQrStUv/commandx")


@pytest.mark.parametrize(
    "bad", ["AbCdEfGhIjKlMnOpQrStUv\n", "AbCdEfGhIjKlMnOpQrStUv\r", "AbCdEfGh\x00"]
)
def test_ids_are_matched_whole(bad: str) -> None:
    from langchain_result_layer.core.reference import is_record_id
    from langchain_result_layer.stores._core import validate_record_id

    assert not is_record_id(bad)
    assert not validate_record_id(bad)
    with pytest.raises(InvalidReferenceError, match="the id must be"):
        Reference(record_id=bad, kind="text")
    with pytest.raises(InvalidReferenceError):
        Reference(record_id="AbCdEfGhIjKlMnOpQrStUv", kind="text\n")
