"""The JSON view: a structural outline, the first items, path references and array pages.

For a large JSON document the model sees its shape (keys, value types and array lengths,
nested to a bounded depth), then the first items of the largest arrays (of the largest one as
many as the budget holds), each with its path, and an exact account of what was left out: the
characters of the original not shown (`ResultView.omitted`, ranges of the raw text), the
elements of each array after the ones shown, and the outline paths not listed.

References (paths: `$` is the root, `.name` or `['name']` a key, `[n]` an array element, and a
final `[a:b]` or `[a:]` a slice of an array):

- `ref://tool-result/<id>/json?path=$.items[3]`: one value, whole (a value too large for the
  budget is outlined like a document of its own). When the value is an array element, `next`
  is the page of elements that follows it.
- `?path=$.items&page=2&page_size=50`: a page of an array's elements, one compact JSON element
  per line after its index, fitted to the budget exactly: fewer elements when they do not fit,
  and a single element too large for the budget is shown cut, with a reference to itself. `next`
  continues exactly after the last element shown: after a full page it is the following page of
  the same size; after a page cut to fit it is `?path=$.items[<first not shown>:]&page=1&
  page_size=<the same size>`. A slice path (`?path=$.items[80:120]`) pages through that part of
  the array the same way.
- The first view's `next` is the page after the first items it shows, for the array whose first
  items it shows most of: `?path=$.items&page=2&page_size=<items shown>`, or, when it could
  show only a few of them, a page sized to the budget that starts right after them. Following
  `next` from the first view visits every element of that array exactly once.

A path fetch needs the whole stored record (the path is resolved on the parsed document):
`fetch_slice` reads the whole record, at most `RecordInfo.max_read` characters
(`DEFAULT_MAX_READ_CHARS`, 64 MiB; stores cap record sizes too), parses it and resolves the
path. A record that is larger, a record the store kept only in part, a stored text that is not
JSON, a path that does not exist and a page past the end of an array are refused with
`FetchSliceError` (the fetch tool answers `status="error"`) and a message that says what to do
instead.

Characters are accounted on the raw text: an item or a value shown whole counts as shown (its
characters located in the raw text with `json.JSONDecoder.raw_decode`, together with the
separators between consecutive shown items); everything else is omitted, exactly.

Example:
    ```python
    from langchain_result_layer.views.json_view import resolve_path

    doc = {"items": [{"id": 1}, {"id": 2}, {"id": 3}]}
    assert resolve_path(doc, "$.items[1].id") == 2
    assert resolve_path(doc, "$.items[1:]") == [{"id": 2}, {"id": 3}]
    ```
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias

from langchain_result_layer.core.jsonable import parse_would_exceed, to_json_text, to_jsonable
from langchain_result_layer.core.normalize import clean_for_display
from langchain_result_layer.core.reference import MAX_PAGE_SIZE, Reference
from langchain_result_layer.core.render import Fence, fetch_call, plural
from langchain_result_layer.core.truncate import LineIndex, omitted_between
from langchain_result_layer.core.view import OmittedRange, ResultView
from langchain_result_layer.views import _layout
from langchain_result_layer.views._json_stream import (
    ArrayIndexCache,
    LazyArray,
    PathMissingError,
    value_at,
)
from langchain_result_layer.views._tabular import looks_like_rows
from langchain_result_layer.views.base import (
    FetchSliceError,
    FetchSteps,
    Prepared,
    RecordInfo,
    Rendered,
    ResultViewBuilder,
    SliceRequest,
    ViewContext,
)
from langchain_result_layer.views.blocks import is_content_block_list
from langchain_result_layer.views.text import TextView, utf8_length

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from langchain_result_layer.views.slices import SliceAt

__all__ = ["JsonView", "format_path", "resolve_path"]

_MAX_DEPTH = 4
_MAX_ENTRIES = 300
_MAX_KEYS_LISTED = 12
_ITEMS_PER_ARRAY = 3
_ITEM_ARRAYS = 5
_MAX_FIRST_ITEMS = 1_000
"""Most first items of the largest array the first view may show (the budget decides)."""
_MAX_FIRST_ITEMS_CHARS = 2_000_000
"""Stop preparing first items once their JSON reaches this many characters."""
_ITEM_CHARS = 400
ARRAY_INDEX = ArrayIndexCache()
"""Element offsets of the large arrays of recently fetched records (pages after the first
do not walk the whole array again)."""
_PREVIEW_CHARS = 60
_SNIFF_CHARS = 4_000
_SAMPLE_ELEMENTS = 20
_PAGE_OVERHEAD_CHARS = 700
_PAGE_OVERHEAD_TOKENS = 220
"""Rough size of a page's header, fence and footer, for sizing a page from a sample."""
_TEXT_FALLBACK = TextView()
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MAX_SHOWN_KEY = 32
"""Longest key the layer prints outside the fence (longer keys are tool data, not names)."""
_MAX_SHOWN_PATH = 120
_SAFE_PATH_RE = re.compile(r"\$(?:\.[A-Za-z_][A-Za-z0-9_]{0,31}|\[\d{1,12}\])*")
_PATH_TOKEN_RE = re.compile(
    r"\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")\]"
    r"|\[(\d*):(\d*)\]"
)
_WS_RE = re.compile(r"[ \t\n\r]*")
_SEPARATOR_RE = re.compile(r"[ \t\n\r,]*")
_DECODER = json.JSONDecoder()
_JSON_TYPES: tuple[tuple[type, str, str], ...] = (
    (type(None), "null", "null"),
    (bool, "bool", "a bool"),
    (int, "int", "an int"),
    (float, "float", "a float"),
    (str, "str", "a string"),
    (list, "array", "an array"),
)
"""Python type of a parsed JSON value, its JSON type name, and the name with its article;
most specific first (`bool` before `int`). Anything else is an object."""
_OBJECT_TYPE = ("object", "an object")

Part: TypeAlias = str | int
Parts: TypeAlias = tuple[Part, ...]
Span: TypeAlias = tuple[int, int]


# --------------------------------------------------------------------------- paths


def format_path(parts: Iterable[Part]) -> str:
    """A JSON path from keys and indexes.

    Args:
        parts: Keys (strings) and array indexes (ints) from the root.

    Returns:
        For example `$.items[3]['odd key']`.

    Example:
        ```python
        assert format_path(["items", 3, "a b"]) == "$.items[3]['a b']"
        ```
    """
    out = "$"
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _IDENT_RE.fullmatch(part):
            out += f".{part}"
        else:
            escaped = part.replace("\\", "\\\\").replace("'", "\\'")
            out += f"['{escaped}']"
    return out


def _slice_path(parts: Iterable[Part], start: int, stop: int | None) -> str:
    return f"{format_path(parts)}[{start}:{'' if stop is None else stop}]"


def _split_path(path: str) -> tuple[list[Part], tuple[int | None, int | None] | None]:
    """Keys and indexes of `path`, and its final slice `(start, stop)` if it ends with one."""
    text = path.strip()
    if not text.startswith("$"):
        msg = f"a JSON path starts with '$', got {path!r}"
        raise ValueError(msg)
    pos = 1
    parts: list[Part] = []
    cut: tuple[int | None, int | None] | None = None
    while pos < len(text):
        match = _PATH_TOKEN_RE.match(text, pos)
        if match is None:
            msg = f"cannot read the JSON path {path!r} at position {pos}"
            raise ValueError(msg)
        if cut is not None:
            msg = f"a slice [a:b] must end the JSON path, in {path!r}"
            raise ValueError(msg)
        if match.group(1) is not None:
            parts.append(match.group(1))
        elif match.group(2) is not None:
            parts.append(int(match.group(2)))
        elif match.group(3) is not None:
            quoted = match.group(3)
            parts.append(re.sub(r"\\(.)", r"\1", quoted[1:-1]))
        else:
            start, stop = match.group(4), match.group(5)
            cut = (int(start) if start else None, int(stop) if stop else None)
        pos = match.end()
    return parts, cut


def _resolve_parts(document: Any, parts: Sequence[Part]) -> Any:
    value = document
    walked: list[Part] = []
    for part in parts:
        if isinstance(part, int):
            if not isinstance(value, (list, LazyArray)) or part >= len(value):
                size = len(value) if isinstance(value, (list, LazyArray)) else None
                where = _shown_path(walked, "the value there")
                what = f"an array of {size}" if size is not None else _type_name(value)
                msg = f"{where} is {what}; [{part}] does not exist"
                raise LookupError(msg)
            value = value[part]
        else:
            if not isinstance(value, dict) or part not in value:
                where = _shown_path(walked, "the value there")
                keys = _shown_keys(value) if isinstance(value, dict) else ""
                msg = f"{where} has no key {part[:_MAX_SHOWN_KEY]!r}{keys}"
                raise LookupError(msg)
            value = value[part]
        walked.append(part)
    return value


def resolve_path(document: Any, path: str) -> Any:
    """The value at `path` in a parsed JSON document.

    Args:
        document: Parsed JSON.
        path: A path such as `$.items[3].id`, or one ending with a slice (`$.items[10:20]`,
            `$.items[10:]`), which gives that part of the array.

    Returns:
        The value.

    Raises:
        ValueError: When the path is malformed.
        LookupError: When the path does not exist (the message says where it stops).

    Example:
        ```python
        assert resolve_path({"a": [5, 6]}, "$.a[0]") == 5
        assert resolve_path({"a": [5, 6, 7]}, "$.a[1:2]") == [6]
        ```
    """
    parts, cut = _split_path(path)
    value = _resolve_parts(document, parts)
    if cut is None:
        return value
    if not isinstance(value, list):
        msg = f"{format_path(parts)} is {_type_name(value)}; a slice needs an array"
        raise LookupError(msg)
    return value[cut[0] or 0 : cut[1]]


def _safe_path(path: str) -> bool:
    """Whether `path` may be shown outside the fence: short identifiers and indexes only.

    Keys are tool data: one that is long (a 258-char `IGNORE_ALL_PREVIOUS_INSTRUCTIONS_...`)
    or holds anything but `[A-Za-z0-9_]` is never printed in the layer's own header, footer
    or references; those name "an array in the outline" instead.
    """
    return len(path) <= _MAX_SHOWN_PATH and bool(_SAFE_PATH_RE.fullmatch(path))


def _shown_path(parts: Iterable[Part], instead: str) -> str:
    """`parts` as a path when it is safe to show outside the fence, else `instead`."""
    path = format_path(parts)
    return path if _safe_path(path) else instead


def _shown_keys(value: dict[str, Any]) -> str:
    """The keys of an object for a message outside the fence: safe ones, and how many."""
    safe = [k for k in list(value)[:10] if _IDENT_RE.fullmatch(k) and len(k) <= _MAX_SHOWN_KEY]
    count = plural(len(value), "key")
    return (
        f" (it has {count}: {', '.join(safe)}{', ...' if len(value) > len(safe) else ''})"
        if (safe)
        else f" (it has {count}; the outline lists them)"
    )


def _type_names(value: Any) -> tuple[str, str]:
    """The JSON type name of a parsed value, and the name with its article."""
    return next(((n, a) for t, n, a in _JSON_TYPES if isinstance(value, t)), _OBJECT_TYPE)


def _type_name(value: Any) -> str:
    return _type_names(value)[0]


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# --------------------------------------------------------------------------- raw spans


def _skip_ws(raw: str, pos: int) -> int:
    match = _WS_RE.match(raw, pos)
    return match.end() if match is not None else pos


def _skip_value(raw: str, pos: int) -> int:
    return int(_DECODER.raw_decode(raw, pos)[1])


def _locate_spans(raw: str, paths: Iterable[Parts]) -> dict[Parts, Span] | None:
    """Raw character spans `(start, end)` of the values at `paths` in the JSON text `raw`.

    One pass that stops once every path is found: containers on the way to a wanted path are
    walked key by key (element by element), everything else is skipped with the C decoder.
    The root `()` spans the text without its surrounding whitespace. A key given twice is
    found at its first occurrence (`json.loads` keeps the last one): `_verified_spans` drops
    spans whose text does not decode to the parsed value.

    Args:
        raw: JSON text.
        paths: Key/index tuples from the root.

    Returns:
        The spans found (a path that does not exist is missing), or `None` when `raw` is not
        JSON.

    Example:
        ```python
        raw = '{"a": [10, {"b": 2}]}'
        spans = _locate_spans(raw, [("a", 0), ("a", 1, "b")])
        assert raw[slice(*spans[("a", 0)])] == "10"
        ```
    """
    scanner = _SpanScanner(raw, paths)
    if () in scanner.wanted:
        scanner.wanted.discard(())
        start = _skip_ws(raw, 0)
        scanner.out[()] = (start, max(start, len(raw.rstrip(" \t\n\r"))))
    if scanner.wanted:
        try:
            scanner.scan(_skip_ws(raw, 0), (), scanner.trie)
        except _AllFound:
            pass
        except (ValueError, IndexError, RecursionError):
            return None
    return scanner.out


def _verified_spans(
    raw: str, document: Any, prefix: Parts, paths: Iterable[Parts]
) -> dict[Parts, Span] | None:
    """`_locate_spans`, keeping only spans whose text decodes to the value at their path.

    `document` is the parsed value at `prefix`; every path starts with `prefix`.
    """
    spans = _locate_spans(raw, paths)
    if spans is None:
        return None
    for path, (start, end) in list(spans.items()):
        if not path:
            continue
        try:
            same = bool(json.loads(raw[start:end]) == _resolve_parts(document, path[len(prefix) :]))
        except (ValueError, LookupError, RecursionError):
            same = False
        if not same:
            del spans[path]
    return spans


def _element_spans(array: LazyArray, raw: str, indexes: Iterable[int]) -> dict[int, Span]:
    """Raw spans of elements of a lazily read array (each element decodes from its span)."""
    out: dict[int, Span] = {}
    for i in indexes:
        array.locate(i)
        if 0 <= i < array.located:
            start = array.start_of(i)
            out[i] = (start, _skip_value(raw, start))
    return out


class _AllFound(Exception):  # noqa: N818 - control flow, not an error
    """Every wanted span is recorded: stop scanning."""


class _SpanScanner:
    """Walks a JSON text towards wanted paths, recording their raw spans."""

    __slots__ = ("out", "raw", "remaining", "trie", "wanted")

    def __init__(self, raw: str, paths: Iterable[Parts]) -> None:
        self.raw = raw
        self.wanted = set(paths)
        self.out: dict[Parts, Span] = {}
        self.trie: dict[Part, Any] = {}
        for path in self.wanted:
            node = self.trie
            for part in path:
                node = node.setdefault(part, {})
        self.remaining = len(self.wanted)

    def scan(self, pos: int, path: Parts, node: dict[Part, Any]) -> int:
        """Scan the value at `pos` (no whitespace before it); return its end."""
        raw = self.raw
        if not node:
            end = _skip_value(raw, pos)
        elif raw[pos] == "{":
            end = self._object(pos, path, node)
        elif raw[pos] == "[":
            last = max((k for k in node if isinstance(k, int)), default=-1)
            p = _skip_ws(raw, pos + 1)
            index = 0
            while index <= last and raw[p] != "]":
                child = node.get(index)
                if child is not None:
                    p = self.scan(p, (*path, index), child)
                else:
                    p = _skip_value(raw, p)
                p = _skip_ws(raw, p)
                if raw[p] == ",":
                    p = _skip_ws(raw, p + 1)
                index += 1
            end = _skip_value(raw, pos)  # the whole array in one C call
        else:
            end = _skip_value(raw, pos)
        if path in self.wanted:
            if path not in self.out:
                self.remaining -= 1
            self.out[path] = (pos, end)
            if self.remaining <= 0:
                raise _AllFound
        return end

    def _object(self, pos: int, path: Parts, node: dict[Part, Any]) -> int:
        raw = self.raw
        p = _skip_ws(raw, pos + 1)
        if raw[p] == "}":
            return p + 1
        while True:
            key, p = _DECODER.raw_decode(raw, p)
            if not isinstance(key, str):
                msg = "expected a key"
                raise ValueError(msg)
            p = _skip_ws(raw, p)
            if raw[p] != ":":
                msg = "expected ':'"
                raise ValueError(msg)
            p = _skip_ws(raw, p + 1)
            child = node.get(key)
            p = self.scan(p, (*path, key), child) if child is not None else _skip_value(raw, p)
            p = _skip_ws(raw, p)
            if raw[p] == ",":
                p = _skip_ws(raw, p + 1)
                continue
            if raw[p] == "}":
                return p + 1
            msg = "expected ',' or '}'"
            raise ValueError(msg)


def _merge(spans: Iterable[Span], raw: str) -> list[Span]:
    """Sorted, merged spans; spans separated only by whitespace and commas are joined."""
    merged: list[Span] = []
    for start, end in sorted(spans):
        if merged:
            last_start, last_end = merged[-1]
            gap_ok = start <= last_end or (
                (m := _SEPARATOR_RE.match(raw, last_end, start)) is not None and m.end() == start
            )
            if gap_ok:
                merged[-1] = (last_start, max(last_end, end))
                continue
        merged.append((start, end))
    return merged


def _complement(shown: Sequence[Span], lo: int, hi: int) -> list[Span]:
    out: list[Span] = []
    pos = lo
    for span_start, span_end in shown:
        start, end = max(span_start, lo), min(span_end, hi)
        if end <= start:
            continue
        if start > pos:
            out.append((pos, start))
        pos = max(pos, end)
    if pos < hi:
        out.append((pos, hi))
    return out


class _Raw:
    """The raw text of a record, with its line index and sizes computed once."""

    __slots__ = ("_bytes", "_index", "_lines", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self._index: LineIndex | None = None
        self._lines: int | None = None
        self._bytes: dict[Span, int] = {}

    @property
    def lines(self) -> int:
        if self._lines is None:  # the line index counts the newlines once for both
            newlines = self._line_index().total_newlines
            self._lines = newlines + (0 if self.text.endswith("\n") else 1)
        return self._lines

    def _line_index(self) -> LineIndex:
        if self._index is None:
            self._index = LineIndex(self.text)
        return self._index

    def utf8(self, start: int = 0, end: int | None = None) -> int:
        key = (start, len(self.text) if end is None else end)
        if key not in self._bytes:
            self._bytes[key] = utf8_length(self.text[key[0] : key[1]])
        return self._bytes[key]

    def omitted(self, spans: Iterable[Span]) -> list[OmittedRange]:
        """The spans as exact `OmittedRange`s (line numbers from the line index)."""
        spans = [(a, b) for a, b in spans if b > a]
        if not spans:
            return []
        index = self._line_index()
        return [omitted_between(self.text, index, a, b) for a, b in spans]


# --------------------------------------------------------------------------- outline


def _preview(value: Any) -> tuple[str, bool]:
    shown, cut = _layout.clip(_compact(value), _PREVIEW_CHARS)
    return clean_for_display(shown), cut


def _outline(document: Any, prefix: Parts) -> tuple[list[dict[str, Any]], list[Parts]]:
    """Breadth-first outline entries (bounded depth and count) and their absolute parts."""
    entries: list[dict[str, Any]] = []
    all_parts: list[Parts] = []
    queue: list[tuple[Parts, Any, int]] = [((), document, 0)]
    head = 0
    while head < len(queue) and len(entries) < _MAX_ENTRIES:
        parts, value, depth = queue[head]
        head += 1
        entry: dict[str, Any] = {
            "type": "json_path",
            "path": format_path((*prefix, *parts)),
            "depth": depth,
            "value_type": _type_name(value),
        }
        if isinstance(value, dict):
            entry["keys"] = len(value)
            if depth < _MAX_DEPTH:
                queue.extend(((*parts, str(k)), v, depth + 1) for k, v in value.items())
            elif value:
                entry["deeper"] = True
        elif isinstance(value, list):
            entry["length"] = len(value)
            kinds = Counter(_type_name(v) for v in value[:1_000])
            entry["element_types"] = dict(kinds.most_common())
            objects = [v for v in value[:1_000] if isinstance(v, dict)]
            if objects:
                keys: dict[str, None] = {}
                for obj in objects:
                    for k in obj:
                        keys.setdefault(str(k), None)
                entry["element_keys"] = list(keys)[: _MAX_KEYS_LISTED + 1]
            if value and isinstance(value[0], (dict, list)):
                if depth < _MAX_DEPTH:
                    queue.append(((*parts, 0), value[0], depth + 1))
                else:
                    entry["deeper"] = True
        else:
            entry["preview"], entry["clipped"] = _preview(value)
        entries.append(entry)
        all_parts.append((*prefix, *parts))
    return entries, all_parts


@dataclass(slots=True)
class _ArrayInfo:
    """An array whose first items the outline view shows (in order of size, largest first)."""

    path: str
    parts: Parts
    value: list[Any]

    @property
    def length(self) -> int:
        return len(self.value)


def _first_items(
    document: Any, entries: list[dict[str, Any]], entry_parts: list[Parts], prefix: Parts
) -> tuple[list[dict[str, Any]], list[Parts], list[_ArrayInfo]]:
    """Candidate items in the order the budget gives them up last-first.

    The first `_ITEMS_PER_ARRAY` of each of the largest arrays (not inside other arrays), then
    more of the largest array.
    """
    candidates = [
        (e, p)
        for e, p in zip(entries, entry_parts, strict=True)
        if e["value_type"] == "array"
        and e.get("length")
        and not any(isinstance(x, int) for x in p[len(prefix) :])
    ]
    candidates.sort(key=lambda c: -int(c[0]["length"]))
    arrays: list[_ArrayInfo] = []
    for entry, parts in candidates[:_ITEM_ARRAYS]:
        value = _resolve_parts(document, parts[len(prefix) :])
        arrays.append(_ArrayInfo(path=entry["path"], parts=parts, value=value))
    items: list[dict[str, Any]] = []
    item_parts: list[Parts] = []
    budget = [_MAX_FIRST_ITEMS_CHARS]

    def add(rank: int, index: int) -> bool:
        info = arrays[rank]
        text = _compact(info.value[index])
        budget[0] -= len(text)
        shown, cut = _layout.clip(text, _ITEM_CHARS)
        items.append(
            {
                "type": "json_item",
                "path": f"{info.path}[{index}]",
                "array": info.path,
                "index": index,
                "json": clean_for_display(shown),
                "clipped": cut,
            }
        )
        item_parts.append((*info.parts, index))
        return budget[0] > 0

    for rank, info in enumerate(arrays):
        for index in range(min(_ITEMS_PER_ARRAY, info.length)):
            add(rank, index)
    if arrays:
        for index in range(_ITEMS_PER_ARRAY, min(arrays[0].length, _MAX_FIRST_ITEMS)):
            if not add(0, index):
                break
    return items, item_parts, arrays


def _entry_line(entry: dict[str, Any]) -> str:
    indent = "  " * min(int(entry["depth"]), 6)
    kind = entry["value_type"]
    if kind == "object":
        desc = f"object, {plural(int(entry['keys']), 'key')}"
    elif kind == "array":
        desc = f"array of {int(entry['length']):,}"
        types = entry.get("element_types") or {}
        if types:
            desc += " (" + ", ".join(f"{t} {n:,}" for t, n in types.items()) + ")"
        keys = entry.get("element_keys")
        if keys:
            more = "…" if len(keys) > _MAX_KEYS_LISTED else ""
            desc += "; element keys: " + ", ".join(keys[:_MAX_KEYS_LISTED]) + more
    else:
        desc = f"{kind} {entry.get('preview', '')}"
    return clean_for_display(f"{indent}{entry['path']}: {desc}")


def _item_line(item: dict[str, Any]) -> str:
    return f"{item['path']} = {item['json']}"


def _fully_described(entry: dict[str, Any]) -> bool:
    """Whether an outline line states the whole value (a scalar, or an empty container)."""
    kind = entry["value_type"]
    if kind == "object":
        return int(entry.get("keys", 1)) == 0
    if kind == "array":
        return int(entry.get("length", 1)) == 0
    return not entry.get("clipped", False)


@dataclass(slots=True)
class _JsonData:
    document: Any
    entries: list[dict[str, Any]]
    entry_parts: list[Parts]
    items: list[dict[str, Any]]
    item_parts: list[Parts]
    arrays: list[_ArrayInfo]
    prefix: Parts = ()
    spans: dict[Parts, Span] | None = None
    located: bool = False
    page_size_cache: dict[tuple[int, int, int], int] = field(default_factory=dict)


def _json_data(document: Any, prefix: Parts = ()) -> _JsonData:
    entries, entry_parts = _outline(document, prefix)
    try:
        items, item_parts, arrays = _first_items(document, entries, entry_parts, prefix)
    except (LookupError, ValueError):  # pragma: no cover - paths come from the outline
        items, item_parts, arrays = [], [], []
    return _JsonData(
        document=document,
        entries=entries,
        entry_parts=entry_parts,
        items=items,
        item_parts=item_parts,
        arrays=arrays,
        prefix=prefix,
    )


def _spans_of(data: _JsonData, raw: str) -> dict[Parts, Span] | None:
    """Raw spans of everything the outline view may show whole, located once."""
    if not data.located:
        paths: list[Parts] = [data.prefix]
        paths.extend(
            p for e, p in zip(data.entries, data.entry_parts, strict=True) if _fully_described(e)
        )
        paths.extend(
            p for i, p in zip(data.items, data.item_parts, strict=True) if not i["clipped"]
        )
        data.spans = _verified_spans(raw, data.document, data.prefix, paths)
        data.located = True
    return data.spans


def _elements_per_page(array: Sequence[Any], start: int, ctx: ViewContext) -> int:
    """About how many elements from `start` a page fetched with this budget holds."""
    remaining = len(array) - start
    if remaining <= 0:
        return 1
    sample = array[start : start + _SAMPLE_ELEMENTS]
    lines = [f"[{start + i}] {_compact(v)}" for i, v in enumerate(sample)]
    joined = "\n".join(lines)
    per_chars = (len(joined) + 1) / len(lines)
    room_chars = ctx.budget.chars - _PAGE_OVERHEAD_CHARS
    room_tokens = ctx.budget.tokens - _PAGE_OVERHEAD_TOKENS
    if room_chars <= 0 or room_tokens <= 0 or len(joined) > 8 * ctx.budget.chars:
        return 1
    per_tokens = max(1, ctx.counter.count(joined)) / len(lines)
    estimate = int(min(room_chars / per_chars, room_tokens / per_tokens))
    return max(1, min(estimate, MAX_PAGE_SIZE, remaining))


_At: TypeAlias = Callable[[Parts], Any]
"""The value at a path of the document being fetched from (arrays may be `LazyArray`s)."""


def _streamed(raw: str, arrays: dict[int, LazyArray] | None = None) -> _At:
    """Values of the JSON text `raw` by path, each read alone (see `_json_stream`).

    `arrays` holds the arrays of `raw` located by earlier fetches (`ARRAY_INDEX`).
    """

    def at(parts: Parts) -> Any:
        try:
            return value_at(raw, parts, arrays)
        except PathMissingError as exc:
            where = _shown_path(exc.walked, "the value there")
            keys = ""
            if exc.keys:
                safe = [k for k in exc.keys[:10] if _IDENT_RE.fullmatch(k) and len(k) <= 32]
                listed = f": {', '.join(safe)}{', ...' if len(exc.keys) > len(safe) else ''}"
                keys = f" (it has {plural(len(exc.keys), 'key')}{listed if safe else ''})"
            raise LookupError(f"{where} {exc.what}{keys}") from None

    return at


def _page_reference(base: Reference, path: str, page: int, page_size: int) -> Reference:
    return replace(base.with_path(path), page=page, page_size=page_size)


# --------------------------------------------------------------------------- pages


@dataclass(slots=True)
class _Page:
    """A requested page of an array's elements, in absolute indexes."""

    path: str
    """The path as requested (kept for the following full page)."""
    parts: Parts
    array: Sequence[Any]
    base_start: int
    """First index of the range being paged (0, or a slice's start)."""
    base_stop: int
    """One past the last index of that range."""
    slice_stop: int | None
    """The slice's explicit stop, if any (kept in continuation slices)."""
    page: int
    page_size: int

    @property
    def start(self) -> int:
        return self.base_start + (self.page - 1) * self.page_size

    @property
    def stop(self) -> int:
        return min(self.base_stop, self.start + self.page_size)

    @property
    def array_path(self) -> str:
        return format_path(self.parts)

    def where(self) -> str:
        path = self.array_path
        return path if _safe_path(path) else "the requested array"

    def next_after(self, base: Reference, end: int, full: bool) -> Reference | None:
        """The reference that continues exactly at element `end` (`None`: the range is done)."""
        if end >= self.base_stop:
            return None
        if full:
            return _page_reference(base, self.path, self.page + 1, self.page_size)
        return _page_reference(
            base, _slice_path(self.parts, end, self.slice_stop), 1, self.page_size
        )


class JsonView(ResultViewBuilder):
    """Outline, first items, path references and array pages for JSON documents.

    Example:
        ```python
        from langchain_result_layer.views import choose_view

        assert choose_view({"items": list(range(10)), "total": 10}).kind == "json"
        ```
    """

    kind: ClassVar[str] = "json"
    sniff_ceiling = 0.9

    def sniff(self, payload: object) -> float:
        """Dicts and non-row lists; text that starts like a JSON object or array."""
        if isinstance(payload, (dict, list, tuple)):
            if is_content_block_list(payload) or looks_like_rows(payload):
                return 0.0
            return 0.9
        if isinstance(payload, str):
            head = payload[:_SNIFF_CHARS].lstrip()
            if head.startswith("{") and re.match(r'\{\s*"', head):
                return 0.75
            if head.startswith("[") and re.match(r"\[\s*[\[{\"\d\-tfn]", head):
                return 0.7
        return 0.0

    def prepare(self, payload: object) -> Prepared:
        """Parse once; store text as given, objects as indented JSON (pageable by line)."""
        if isinstance(payload, str):
            try:
                if parse_would_exceed(payload):  # a JSON bomb: bounded cost, shown as text
                    msg = "too many values to parse"
                    raise ValueError(msg)
                document = json.loads(payload)
            except (ValueError, RecursionError):
                prepared = _TEXT_FALLBACK.prepare(payload)
                prepared.facts["fallback"] = "text"
                return prepared
            raw: str = payload
        else:
            document = to_jsonable(payload)
            raw = to_json_text(document, indent=1)
        return Prepared(raw=raw, data=_json_data(document))

    def render(self, prepared: Prepared, ctx: ViewContext) -> Rendered:
        """Outline entries first (as many as fit), then first items; exact omissions."""
        data = prepared.data
        if not isinstance(data, _JsonData):
            return _TEXT_FALLBACK.render(prepared, ctx)
        raw = (
            prepared.raw
            if isinstance(prepared.raw, str)
            else prepared.raw.decode("utf-8", "replace")
        )
        return self._render_outline(data, raw, ctx)

    # ------------------------------------------------------------------ the outline view

    def _render_outline(self, data: _JsonData, raw: str, ctx: ViewContext) -> Rendered:
        entry_lines = [_entry_line(e) for e in data.entries]
        item_lines = [_item_line(i) for i in data.items]
        fence = _layout.equal_cost_fence(ctx.counter, entry_lines, item_lines)
        n_e, n_i = len(entry_lines), len(item_lines)
        spans = _spans_of(data, raw)
        text_info = _Raw(raw)

        def build(level: int) -> tuple[ResultView, str]:
            e = min(level, n_e)
            i = max(0, level - n_e)
            view = self._view(ctx, data, raw=text_info, n_entries=e, n_items=i, spans=spans)
            return view, self._compose(view, ctx, fence).render(fence)

        def facts(view: ResultView) -> str:
            total = int(view.summary["chars"])
            return f"JSON, {plural(total, 'char')}; {view.omitted_chars:,} chars not shown"

        return _layout.render_largest(build, ctx, levels=n_e + n_i, facts=facts, guess=min(n_e, 40))

    def _view(
        self,
        ctx: ViewContext,
        data: _JsonData,
        *,
        raw: _Raw,
        n_entries: int,
        n_items: int,
        spans: dict[Parts, Span] | None,
    ) -> ResultView:
        base = ctx.reference
        chosen = sorted(
            range(n_items),
            key=lambda k: (
                next(r for r, a in enumerate(data.arrays) if a.path == data.items[k]["array"]),
                int(data.items[k]["index"]),
            ),
        )
        out_items: list[dict[str, Any]] = []
        for entry in data.entries[:n_entries]:
            item = dict(entry)
            if base is not None:
                item["ref"] = str(base.with_path(entry["path"]))
            out_items.append(item)
        for k in chosen:
            item = dict(data.items[k])
            if base is not None:
                item["ref"] = str(base.with_path(item["path"]))
            out_items.append(item)

        # Characters: what is shown whole, located in the raw text; the rest is omitted.
        text = raw.text
        whole = spans.get(data.prefix) if spans is not None else None
        of_value = bool(data.prefix) and whole is not None
        lo, hi = whole if of_value and whole is not None else (0, len(text))
        located = spans is not None and whole is not None
        if located:
            assert spans is not None
            shown_spans = [
                spans[p]
                for e, p in zip(data.entries[:n_entries], data.entry_parts, strict=False)
                if _fully_described(e) and p in spans
            ]
            shown_spans.extend(
                spans[data.item_parts[k]]
                for k in range(n_items)
                if not data.items[k]["clipped"] and data.item_parts[k] in spans
            )
            gaps = _complement(_merge(shown_spans, text), lo, hi)
        else:
            gaps = [(lo, hi)]
        omitted = raw.omitted(gaps)

        # Elements: per array with first items, how many are shown and which follow.
        arrays: list[dict[str, Any]] = []
        for info in data.arrays:
            shown = sum(1 for k in range(n_items) if data.items[k]["array"] == info.path)
            clipped = sum(
                1
                for k in range(n_items)
                if data.items[k]["array"] == info.path and data.items[k]["clipped"]
            )
            arrays.append(
                {"path": info.path, "length": info.length, "shown": shown, "clipped": clipped}
            )

        references: dict[str, str] = {}
        next_ref = self._outline_next(data, arrays, ctx)
        if base is not None:
            references["all"] = str(base)
            if next_ref is not None:
                references["next"] = str(next_ref)
        root = data.entries[0] if data.entries else {"value_type": _type_name(data.document)}
        total_chars = hi - lo
        summary: dict[str, Any] = {
            "chars": total_chars,
            "root_type": root["value_type"],
            "outline_entries": len(data.entries),
            "outline_shown": n_entries,
            "outline_capped": len(data.entries) >= _MAX_ENTRIES,
            "outline_depth_capped": any(e.get("deeper") for e in data.entries),
            "items_shown": n_items,
            "arrays": arrays,
            "omitted_chars": sum(b - a for a, b in gaps),
            "located": located,
            "chars_of": "value" if of_value else "original",
            "headline": f"json: {root['value_type']}, {plural(total_chars, 'char')}",
        }
        if data.prefix:
            summary["path"] = format_path(data.prefix)
        if root["value_type"] == "object":
            summary["root_keys"] = root.get("keys")
        if root["value_type"] == "array":
            summary["root_length"] = root.get("length")
        return ResultView(
            kind=self.kind,
            summary=summary,
            items=out_items,
            total=len(data.entries),
            unit="paths",
            shown=n_entries,
            references=references,
            omitted=omitted,
            truncated=True,
            original_chars=len(text),
            original_lines=raw.lines,
            original_bytes=raw.utf8(lo, hi),
        )

    def _outline_next(
        self, data: _JsonData, arrays: list[dict[str, Any]], ctx: ViewContext
    ) -> Reference | None:
        """The page after the first items shown of the largest array (see the module doc)."""
        base = ctx.reference
        if base is None or not data.arrays:
            return None
        info = data.arrays[0]
        shown = int(arrays[0]["shown"])
        if shown >= info.length or not _safe_path(info.path):
            return None
        key = (shown, ctx.budget.tokens, ctx.budget.chars)
        if key not in data.page_size_cache:
            data.page_size_cache[key] = _elements_per_page(info.value, shown, ctx)
        fitting = data.page_size_cache[key]
        if shown >= 1 and 2 * shown >= fitting:
            return _page_reference(base, info.path, 2, shown)
        if shown == 0:
            return _page_reference(base, info.path, 1, fitting)
        return _page_reference(base, _slice_path(info.parts, shown, None), 1, fitting)

    def _compose(self, view: ResultView, ctx: ViewContext, fence: Fence) -> _layout.Layout:
        s = view.summary
        facts = [_layout.human_size(int(view.original_bytes), "byte"), f"root {s['root_type']}"]
        if s.get("path") and _safe_path(str(s["path"])):
            facts[1] = f"value at {s['path']}: {s['root_type']}"
        if s.get("root_keys") is not None:
            facts.append(plural(int(s["root_keys"]), "key"))
        if s.get("root_length") is not None:
            facts.append(f"{int(s['root_length']):,} elements")
        entries = [i for i in view.items if i.get("type") == "json_path"]
        items = [i for i in view.items if i.get("type") == "json_item"]
        shown = f"outline ({len(entries):,} of {int(s['outline_entries']):,} paths)"
        if items:
            shown += f", {plural(len(items), 'first item')}"
        header = _layout.header_text(ctx, self.kind, ", ".join(facts), shown)
        sections = []
        if entries:
            sections.append(
                _layout.Section(
                    title="outline (facts): path: type, sizes; fetch any path with ?path=",
                    lines=[_entry_line(e) for e in entries],
                )
            )
        if items:
            sections.append(
                _layout.Section(
                    title="first items (path = JSON, long values clipped with …)",
                    lines=[_item_line(i) for i in items],
                )
            )
        footer = _layout.footer_text(
            ctx, omitted=_outline_omitted(view), references=_next_label(view)
        )
        if ctx.reference is not None:
            footer = footer[:-1] + " Fetch any path with ?path=$... on the full result.]"
        del fence
        return _layout.Layout(header=header, sections=sections, footer=footer)

    # ------------------------------------------------------------------ fetches

    def slice_for(self, reference: Reference, line_count: int) -> SliceRequest:
        """A path needs the whole record (resolved after parsing); other ranges as usual."""
        if reference.path is not None:
            return SliceRequest(start_line=1, end_line=max(1, line_count))
        return ResultViewBuilder.slice_for(self, reference, line_count)

    def fetch_slice(self, reference: Reference, record: RecordInfo, ctx: ViewContext) -> FetchSteps:
        """Resolve `?path=` (a value, or a page of an array) on the whole record.

        The record is read and parsed once; other ranges are served as text.

        Raises:
            FetchSliceError: When the record is too large to parse at once, was kept only in
                part by the store, is not JSON, has no value at the path, or the page is not
                in the array.
        """
        path = reference.path
        if path is None:
            return (yield from ResultViewBuilder.fetch_slice(self, reference, record, ctx))
        base = ctx.reference or reference.base()
        text_call = fetch_call(base.with_lines(1, 200), tool_name=ctx.fetch_tool_name)
        try:  # the path first: a malformed one is answered without reading the record
            _split_path(path)
        except ValueError as exc:
            raise FetchSliceError(self._path_help(path, exc, base)) from exc
        if record.binary:
            msg = f"This result is binary, so it has no JSON path {path!r}. Read it by bytes."
            raise FetchSliceError(msg)
        if record.capped:
            msg = (
                f"Cannot resolve {path!r}: the result was larger than the store keeps, so only "
                "its head and tail were saved and it no longer parses as JSON. Read the saved "
                f"parts as text instead, for example {text_call}."
            )
            raise FetchSliceError(msg)
        if record.size > record.max_read:
            msg = (
                f"Cannot resolve {path!r}: resolving a path parses the whole result, which is "
                f"{record.size:,} chars, more than a fetch reads at once "
                f"({record.max_read:,} chars). Read it as text instead, for example {text_call}."
            )
            raise FetchSliceError(msg)
        whole = yield SliceRequest(max_size=record.max_read)
        data = whole.data
        if not isinstance(data, str) or not whole.complete:
            msg = (
                f"Cannot resolve {path!r}: the stored result could not be read whole. Read it "
                f"as text instead, for example {text_call}."
            )
            raise FetchSliceError(msg)
        arrays = ARRAY_INDEX.arrays(record.record_id, data)  # the text read, access checked
        try:
            return self._serve(_streamed(data, arrays), data, reference, record.size, ctx)
        except FetchSliceError:
            raise
        except (LookupError, IndexError) as exc:
            raise FetchSliceError(self._path_help(path, exc, base)) from exc
        except (ValueError, RecursionError) as exc:
            msg = (
                f"Cannot resolve {path!r}: the stored result is not valid JSON ({exc}). Read it "
                f"as text instead, for example {text_call}."
            )
            raise FetchSliceError(msg) from exc
        finally:
            ARRAY_INDEX.keep(record.record_id, data, arrays)

    @staticmethod
    def _path_help(path: str, exc: BaseException, base: Reference) -> str:
        return (
            f"Cannot fetch {path!r}: {exc}. Paths look like $.items[3].name ($ is the "
            f"root; $.items&page=2&page_size=50 pages through an array); the outline in "
            f"the first view lists the paths, and {base} with no range reads the text from "
            "the start."
        )

    def render_slice(
        self, data: str | bytes, *, ctx: ViewContext, **at: Unpack[SliceAt]
    ) -> Rendered | None:
        """Resolve `?path=` on a whole record read by the caller and show that value or page.

        A value too large for the budget is shown as a JSON view of its own; a path that
        cannot be resolved gives a short notice whose view has `status="error"`; other ranges
        use the plain text slice (`None`). The fetch tool uses `fetch_slice`.
        """
        reference, record_size = at["reference"], at["record_size"]
        if reference.path is None or not isinstance(data, str):
            return None
        arrays = ARRAY_INDEX.arrays(reference.record_id, data)
        try:
            return self._serve(_streamed(data, arrays), data, reference, record_size, ctx)
        except (ValueError, LookupError, RecursionError) as exc:  # FetchSliceError: ValueError
            text = f"[Cannot fetch {reference.path!r}: {exc}]"
            text = _layout.clip(text, ctx.budget.chars)[0]
            view = ResultView(kind=self.kind, summary={"error": str(exc)}, truncated=True)
            view = _layout.stamp_view(view, text, ctx)
            view.status = "error"
            return Rendered(content=text, view=view)
        finally:
            ARRAY_INDEX.keep(reference.record_id, data, arrays)

    def _serve(
        self, at: _At, raw: str, reference: Reference, record_size: int, ctx: ViewContext
    ) -> Rendered:
        path = reference.path
        assert path is not None
        parts, cut = _split_path(path)
        value = at(tuple(parts))
        paged = cut is not None or reference.page is not None or reference.page_size is not None
        if not paged:
            if isinstance(value, LazyArray):  # shown whole: decode this value (only this one)
                value = value.decoded()
            return self._render_value(
                at, value, tuple(parts), raw=raw, record_size=record_size, ctx=ctx
            )
        where = format_path(parts)
        shown_where = where if _safe_path(where) else "the value at that path"
        if not isinstance(value, (list, LazyArray)):
            size = f" with {plural(len(value), 'key')}" if isinstance(value, dict) else ""
            msg = (
                f"{shown_where} is {_type_names(value)[1]}{size}, not an array: page and "
                f"page_size (and slices [a:b]) page through an array's elements. Fetch it "
                f"with ?path={where if _safe_path(where) else '...'} and no page"
                + (", or one of its keys by path" if isinstance(value, dict) else "")
                + "."
            )
            raise FetchSliceError(msg)
        n = len(value)
        start = min(n, cut[0] or 0) if cut is not None else 0
        stop_given = cut[1] if cut is not None else None
        stop = n if stop_given is None else max(start, min(n, stop_given))
        page = _Page(
            path=path,
            parts=tuple(parts),
            array=value,
            base_start=start,
            base_stop=stop,
            slice_stop=stop_given,
            page=reference.page or 1,
            page_size=reference.page_size or self.default_page_size,
        )
        if page.start >= page.base_stop and page.base_stop > page.base_start:
            last = math.ceil((page.base_stop - page.base_start) / page.page_size)
            base = ctx.reference or reference.base()
            first = _page_reference(base, path, 1, page.page_size)
            msg = (
                f"Page {page.page} (page_size {page.page_size}) of {shown_where} starts at "
                f"element [{page.start}], past the end: "
                + (
                    f"the array has {plural(n, 'element')}"
                    if cut is None
                    else f"the slice holds elements [{start}]-[{stop - 1}] of "
                    f"{plural(n, 'element')}"
                )
                + f", so its last page is {last}. First page: "
                f"{fetch_call(first, tool_name=ctx.fetch_tool_name)}."
            )
            raise FetchSliceError(msg)
        return self._render_page(page, _Raw(raw), record_size, ctx)

    def _render_page(self, page: _Page, raw: _Raw, record_size: int, ctx: ViewContext) -> Rendered:
        """Elements `[page.start, page.stop)`, as many as fit, one compact line each."""
        base = ctx.reference
        lo, hi = page.start, page.stop
        asked = hi - lo
        if asked <= 0:
            text = (
                f"[JSON array {page.where()}: {plural(len(page.array), 'element')}; the range "
                "asked for holds none. Nothing omitted.]"
            )
            text = _layout.clip(text, ctx.budget.chars)[0]
            view = self._page_view(
                page, ctx, m=0, nxt=None, omitted=[], record_size=record_size, raw=raw
            )
            return Rendered(content=text, view=_layout.stamp_view(view, text, ctx))
        lines: list[str] = []
        used = 0
        for i in range(lo, hi):  # lines beyond the character budget cannot be shown anyway
            line = f"[{i}] {clean_for_display(_compact(page.array[i]))}"
            lines.append(line)
            used += len(line) + 1
            if used > ctx.budget.chars:
                break
        fence = _layout.equal_cost_fence(ctx.counter, lines)
        located: list[dict[Parts, Span] | None] = []

        def omitted_for(m: int) -> list[OmittedRange]:
            """The requested elements not shown (`[lo + m, hi)`), as raw ranges."""
            if m >= asked:
                return []
            if not located:  # one scan for every possible cut of this page
                # Only elements that exist: looking for one past the end would make the
                # scan step over the whole array.
                past = min(lo + len(lines) + 1, len(page.array))
                if isinstance(page.array, LazyArray):  # it knows where its elements start
                    indexes = [*range(lo, past), hi - 1]
                    spans_of = _element_spans(page.array, raw.text, indexes)
                    located.append({(*page.parts, i): sp for i, sp in spans_of.items()})
                else:
                    wanted = [(*page.parts, i) for i in range(lo, past)]
                    wanted.append((*page.parts, hi - 1))
                    located.append(_verified_spans(raw.text, page.array, page.parts, wanted))
            spans = located[0]
            first = spans.get((*page.parts, lo + m)) if spans else None
            last = spans.get((*page.parts, hi - 1)) if spans else None
            if first is None or last is None:
                return []
            return raw.omitted([(first[0], last[1])])

        def build(m: int) -> tuple[ResultView, str]:
            full = m == asked
            nxt = page.next_after(base, lo + m, full) if base is not None else None
            omitted = omitted_for(m)
            view = self._page_view(
                page, ctx, m=m, nxt=nxt, omitted=omitted, record_size=record_size, raw=raw
            )
            follow = page.base_stop - (lo + m)
            header = (
                f"[JSON array {page.where()}, {plural(len(page.array), 'element')}: page "
                f"{page.page} (page_size {page.page_size}) shows elements [{lo}]-[{lo + m - 1}]"
                + (f", {m:,} of the {asked:,} asked for" if not full else "")
                + (f"; {follow:,} more follow" if follow > 0 else "; the last page")
                + ". One element per line: [index] compact JSON.]"
            )
            if full:
                said = None
            else:
                chars = sum(r.chars for r in omitted)
                size = f", {plural(chars, 'char')} of the original" if omitted else ""
                said = (
                    f"elements [{lo + m}]-[{hi - 1}] of this page ({asked - m:,}{size}): they "
                    "did not fit; the next page starts with them"
                )
            refs: list[tuple[str, Reference | str]] = [("Next page", nxt)] if nxt else []
            footer = _layout.footer_text(ctx, omitted=said, references=refs)
            return view, f"{header}\n{fence.wrap(chr(10).join(lines[:m]))}\n{footer}"

        shown = _layout.render_fitting(build, ctx, lo=1, hi=min(asked, len(lines)))
        return shown or self._render_cut_element(page, raw, record_size, ctx)

    def _render_cut_element(
        self, page: _Page, raw: _Raw, record_size: int, ctx: ViewContext
    ) -> Rendered:
        """The first element of the page alone is too large: show its head, cut to fit."""
        base = ctx.reference
        i = page.start
        body = _compact(page.array[i])
        own = base.with_path(f"{page.array_path}[{i}]") if base is not None else None
        nxt = page.next_after(base, i + 1, False) if base is not None else None
        spans = _verified_spans(raw.text, page.array, page.parts, [(*page.parts, i)])
        span = spans.get((*page.parts, i)) if spans else None
        exact = span is not None and raw.text[span[0] : span[1]] == body
        fence = _layout.equal_cost_fence(ctx.counter, body)

        def build(limit: int) -> tuple[ResultView, str]:
            shown, was_cut = _layout.clip(body, limit)
            kept = len(shown) - 1 if was_cut else len(shown)  # element chars before the "…"
            omitted: list[OmittedRange] = []
            if span is not None:
                omitted = raw.omitted([(span[0] + kept if exact else span[0], span[1])])
            view = self._page_view(
                page, ctx, m=0, nxt=nxt, omitted=omitted, record_size=record_size, raw=raw, cut=i
            )
            header = (
                f"[JSON array {page.where()}, {plural(len(page.array), 'element')}: element "
                f"[{i}] alone is too large for this budget, so it is shown cut: its first "
                f"{kept:,} of {len(body):,} chars (compact JSON).]"
            )
            if span is None:
                rest = f"the rest of element [{i}]"
            else:
                counted = "" if exact else "; counted whole, the original is laid out differently"
                chars = sum(r.chars for r in omitted)
                rest = (
                    f"the rest of element [{i}] ({plural(chars, 'char')} of the original{counted})"
                )
            refs: list[tuple[str, Reference | str]] = []
            if own is not None:
                refs.append((f"Element [{i}] alone (outlined)", own))
            if nxt is not None:
                refs.append(("Next page", nxt))
            footer = _layout.footer_text(ctx, omitted=rest, references=refs)
            line = f"[{i}] {clean_for_display(shown)}"
            return view, f"{header}\n{fence.wrap(line)}\n{footer}"

        fitted = _layout.render_fitting(build, ctx, lo=2, hi=max(2, len(body) - 1))
        if fitted is not None:
            return fitted
        calls = []
        if own is not None:
            calls.append(f"element: {fetch_call(own, tool_name=ctx.fetch_tool_name)}")
        if nxt is not None:
            calls.append(f"next: {fetch_call(nxt, tool_name=ctx.fetch_tool_name)}")
        text = f"[Element [{i}] of {page.where()} is too large for this budget. " + (
            "; ".join(calls) + "]"
        )
        text = text[: ctx.budget.chars]
        while text and ctx.counter.count(text) > ctx.budget.tokens:
            text = text[: max(0, len(text) - max(1, len(text) // 8))]
        omitted = raw.omitted([span]) if span is not None else []
        view = self._page_view(
            page, ctx, m=0, nxt=nxt, omitted=omitted, record_size=record_size, raw=raw, cut=i
        )
        return Rendered(content=text, view=_layout.stamp_view(view, text, ctx))

    def _page_view(
        self,
        page: _Page,
        ctx: ViewContext,
        *,
        m: int,
        nxt: Reference | None,
        omitted: list[OmittedRange],
        record_size: int,
        raw: _Raw,
        cut: int | None = None,
    ) -> ResultView:
        base = ctx.reference
        lo = page.start
        items: list[dict[str, Any]] = []
        for i in [*range(lo, lo + m), *([cut] if cut is not None else [])]:
            item: dict[str, Any] = {
                "type": "json_element",
                "path": f"{page.array_path}[{i}]",
                "index": i,
            }
            if i == cut:
                item["clipped"] = True
            if base is not None:
                item["ref"] = str(base.with_path(item["path"]))
            items.append(item)
        references: dict[str, str] = {}
        if base is not None:
            references["all"] = str(base)
            references["current"] = str(_page_reference(base, page.path, page.page, page.page_size))
            if nxt is not None:
                references["next"] = str(nxt)
        asked = page.stop - page.start
        return ResultView(
            kind=self.kind,
            summary={
                "path": page.path,
                "array_path": page.array_path,
                "array_length": len(page.array),
                "page": page.page,
                "page_size": page.page_size,
                "requested": [page.start, page.stop],
                "first_index": lo if m or cut is not None else None,
                "last_index": lo + m - 1 if m else cut,
                "elements_shown": m,
                "element_cut": cut,
                "omitted_chars": sum(r.chars for r in omitted),
                "headline": f"json: elements of {page.array_path}",
            },
            items=items,
            total=len(page.array),
            unit="elements",
            shown=m + (1 if cut is not None else 0),
            references=references,
            omitted=omitted,
            truncated=m < asked,
            original_chars=record_size,
            original_lines=raw.lines,
            original_bytes=raw.utf8(),
        )

    # ------------------------------------------------------------------ one value

    def _render_value(
        self,
        at: _At,
        value: Any,
        parts: Parts,
        *,
        raw: str,
        record_size: int,
        ctx: ViewContext,
    ) -> Rendered:
        path = format_path(parts)
        body = json.dumps(value, ensure_ascii=False, indent=1)
        fence = _layout.equal_cost_fence(ctx.counter, body)
        where = path if _safe_path(path) else "the requested path"
        header = (
            f"[JSON value at {where} ({_type_name(value)}, {plural(len(body), 'char')}) "
            f"of a {plural(record_size, 'char')} result.]"
        )
        text = f"{header}\n{fence.wrap(clean_for_display(body))}"
        base = ctx.reference
        nxt = self._element_next(at, parts, base)
        if nxt is not None:  # the elements after this one, a page at a time
            text += f"\n[Next page: {fetch_call(nxt, tool_name=ctx.fetch_tool_name)}.]"
        if len(text) <= ctx.budget.chars and ctx.counter.count(text) <= ctx.budget.tokens:
            view = ResultView(
                kind=self.kind,
                summary={
                    "path": path,
                    "value_type": _type_name(value),
                    "chars": len(body),
                },
                items=[{"type": "json_value", "path": path}],
                total=1,
                unit="values",
                shown=1,
                original_chars=record_size,
            )
            if nxt is not None:
                view.references["next"] = str(nxt)
            return Rendered(content=text, view=_layout.stamp_view(view, text, ctx))
        # Too large: outline the value itself, with paths from the root.
        return self._render_outline(_json_data(value, parts), raw, ctx)

    def _element_next(self, at: _At, parts: Parts, base: Reference | None) -> Reference | None:
        """After an array element: the page of the elements that follow it."""
        index = parts[-1] if parts else None
        if base is None or not isinstance(index, int):
            return None
        parent_parts = parts[:-1]
        parent_path = format_path(parent_parts)
        if not _safe_path(parent_path):
            return None
        try:
            parent = at(parent_parts)
        except LookupError:  # pragma: no cover - the element itself resolved
            return None
        if not isinstance(parent, (list, LazyArray)) or index + 1 >= len(parent):
            return None
        return _page_reference(
            base, _slice_path(parent_parts, index + 1, None), 1, self.default_page_size
        )


def _next_label(view: ResultView) -> list[tuple[str, Reference | str]]:
    nxt = view.references.get("next")
    return [("Next page", nxt)] if nxt else []


def _outline_omitted(view: ResultView) -> str:
    """Exactly what the outline view leaves out: characters, elements, outline paths."""
    s = view.summary
    total = int(s["chars"])
    omitted = int(s["omitted_chars"])
    of = "the value" if s.get("chars_of") == "value" else "the original"
    if s.get("located"):
        parts = [
            f"{omitted:,} of the {total:,} chars of {of} ({plural(len(view.omitted), 'range')}; "
            "everything but the items and values shown whole)"
        ]
    else:
        parts = [f"{omitted:,} of the {total:,} chars of {of} (shown only as outline and items)"]
    for array in s.get("arrays", []):
        length, shown = int(array["length"]), int(array["shown"])
        path = str(array["path"])
        name = path if _safe_path(path) else "an array in the outline"
        if shown < length:
            parts.append(
                f"elements [{shown}]-[{length - 1}] of {name} ({length - shown:,} of {length:,})"
            )
        if array["clipped"]:
            clipped = int(array["clipped"])
            ends = "the end" if clipped == 1 else "the ends"
            parts.append(f"{ends} of {plural(clipped, 'clipped item')} of {name}")
    hidden = int(s["outline_entries"]) - int(s["outline_shown"])
    if hidden > 0:
        parts.append(f"{hidden:,} of {int(s['outline_entries']):,} outline paths")
    if s.get("outline_capped"):
        parts.append(f"paths past the outline's first {_MAX_ENTRIES:,}")
    if s.get("outline_depth_capped"):
        parts.append(f"paths below the outline's {_MAX_DEPTH} levels")
    return "; ".join(parts)
