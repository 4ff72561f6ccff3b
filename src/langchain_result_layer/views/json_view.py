"""The JSON view: a structural outline, the first items, and path references.

For a large JSON document the model sees its shape: keys, value types and array lengths,
nested to a bounded depth, then the first items of the largest arrays, each with its path.
Any part can be fetched by path: `ref://tool-result/<id>/json?path=$.items[3]`.

Paths: `$` is the root, `.name` or `['name']` selects a key, `[n]` an array element.

A path fetch needs the whole stored record (the path is resolved on the parsed document):
`fetch_slice` reads the whole record, at most `RecordInfo.max_read` characters
(`DEFAULT_MAX_READ_CHARS`, 64 MiB; stores cap record sizes too), parses it and resolves the
path. A record that is larger, a record the store kept only in part, a stored text that is not
JSON and a path that does not exist are refused with `FetchSliceError` (the fetch tool answers
`status="error"`) and a message that says what to do instead.

Example:
    ```python
    from langchain_result_layer.views.json_view import resolve_path

    doc = {"items": [{"id": 1}, {"id": 2}]}
    assert resolve_path(doc, "$.items[1].id") == 2
    ```
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, ClassVar

from langchain_result_layer.core.jsonable import to_json_text, to_jsonable
from langchain_result_layer.core.normalize import clean_for_display
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.render import Fence, fetch_call, plural
from langchain_result_layer.core.view import ResultView
from langchain_result_layer.views._layout import (
    Layout,
    Section,
    clip,
    footer_text,
    header_text,
    human_size,
    largest_fitting,
    minimal_text,
    new_fence,
    stamp_view,
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

__all__ = ["JsonView", "format_path", "resolve_path"]

_MAX_DEPTH = 4
_MAX_ENTRIES = 300
_MAX_KEYS_LISTED = 12
_ITEMS_PER_ARRAY = 3
_ITEM_CHARS = 400
_PREVIEW_CHARS = 60
_SNIFF_CHARS = 4_000
_TEXT_FALLBACK = TextView()
_IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PATH_TOKEN_RE = re.compile(
    r"\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")\]"
)


def format_path(parts: list[str | int]) -> str:
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
        elif _IDENT_RE.match(part):
            out += f".{part}"
        else:
            escaped = part.replace("\\", "\\\\").replace("'", "\\'")
            out += f"['{escaped}']"
    return out


def _parse_path(path: str) -> list[str | int]:
    text = path.strip()
    if not text.startswith("$"):
        msg = f"a JSON path starts with '$', got {path!r}"
        raise ValueError(msg)
    pos = 1
    parts: list[str | int] = []
    while pos < len(text):
        match = _PATH_TOKEN_RE.match(text, pos)
        if match is None:
            msg = f"cannot read the JSON path {path!r} at position {pos}"
            raise ValueError(msg)
        if match.group(1) is not None:
            parts.append(match.group(1))
        elif match.group(2) is not None:
            parts.append(int(match.group(2)))
        else:
            quoted = match.group(3)
            parts.append(re.sub(r"\\(.)", r"\1", quoted[1:-1]))
        pos = match.end()
    return parts


def resolve_path(document: Any, path: str) -> Any:
    """The value at `path` in a parsed JSON document.

    Args:
        document: Parsed JSON.
        path: A path such as `$.items[3].id`.

    Returns:
        The value.

    Raises:
        ValueError: When the path is malformed.
        LookupError: When the path does not exist (the message says where it stops).

    Example:
        ```python
        assert resolve_path({"a": [5, 6]}, "$.a[0]") == 5
        ```
    """
    value = document
    walked: list[str | int] = []
    for part in _parse_path(path):
        if isinstance(part, int):
            if not isinstance(value, list) or part >= len(value):
                size = len(value) if isinstance(value, list) else None
                where = format_path(walked)
                what = f"an array of {size}" if size is not None else type(value).__name__
                msg = f"{where} is {what}; [{part}] does not exist"
                raise LookupError(msg)
            value = value[part]
        else:
            if not isinstance(value, dict) or part not in value:
                where = format_path(walked)
                keys = list(value)[:10] if isinstance(value, dict) else None
                msg = f"{where} has no key {part!r}" + (f" (keys: {keys})" if keys else "")
                raise LookupError(msg)
            value = value[part]
        walked.append(part)
    return value


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if isinstance(value, list):
        return "array"
    return "object"


def _preview(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return clean_for_display(clip(text, _PREVIEW_CHARS)[0])


def _outline(document: Any) -> list[dict[str, Any]]:
    """Breadth-first outline entries (bounded depth and count)."""
    entries: list[dict[str, Any]] = []
    queue: list[tuple[list[str | int], Any, int]] = [([], document, 0)]
    while queue and len(entries) < _MAX_ENTRIES:
        parts, value, depth = queue.pop(0)
        entry: dict[str, Any] = {
            "type": "json_path",
            "path": format_path(parts),
            "depth": depth,
            "value_type": _type_name(value),
        }
        if isinstance(value, dict):
            entry["keys"] = len(value)
            if depth < _MAX_DEPTH:
                queue.extend(([*parts, str(k)], v, depth + 1) for k, v in value.items())
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
            if value and depth < _MAX_DEPTH and isinstance(value[0], (dict, list)):
                queue.append(([*parts, 0], value[0], depth + 1))
        else:
            entry["preview"] = _preview(value)
        entries.append(entry)
    return entries


def _first_items(document: Any, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    arrays = sorted(
        (
            e
            for e in entries
            if e["value_type"] == "array" and e.get("length") and "[" not in e["path"]
        ),
        key=lambda e: -int(e["length"]),
    )
    items: list[dict[str, Any]] = []
    for entry in arrays[:5]:
        value = resolve_path(document, entry["path"])
        for i, element in enumerate(value[:_ITEMS_PER_ARRAY]):
            text = json.dumps(element, ensure_ascii=False)
            shown, cut = clip(text, _ITEM_CHARS)
            items.append(
                {
                    "type": "json_item",
                    "path": f"{entry['path']}[{i}]",
                    "json": clean_for_display(shown),
                    "clipped": cut,
                }
            )
    return items


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


@dataclass(slots=True)
class _JsonData:
    document: Any
    entries: list[dict[str, Any]]
    items: list[dict[str, Any]]


def _next_path(document: Any, path: str) -> str | None:
    """The path of the next element when `path` names an array element that has one."""
    match = re.search(r"\[(\d+)\]$", path)
    if match is None or not _safe_path(path):
        return None
    parent_path = path[: match.start()]
    try:
        parent = resolve_path(document, parent_path)
    except (ValueError, LookupError):  # pragma: no cover - the element itself resolved
        return None
    index = int(match.group(1))
    if isinstance(parent, list) and index + 1 < len(parent):
        return f"{parent_path}[{index + 1}]"
    return None


def _safe_path(path: str) -> bool:
    return bool(re.fullmatch(r"\$(?:\.[A-Za-z_][A-Za-z0-9_]*|\[\d+\])*", path))


class JsonView(ResultViewBuilder):
    """Outline, first items and path references for JSON documents.

    Example:
        ```python
        from langchain_result_layer.views import choose_view

        assert choose_view({"items": list(range(10)), "total": 10}).kind == "json"
        ```
    """

    kind: ClassVar[str] = "json"

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
                document = json.loads(payload)
            except ValueError:
                prepared = _TEXT_FALLBACK.prepare(payload)
                prepared.facts["fallback"] = "text"
                return prepared
            raw: str = payload
        else:
            document = to_jsonable(payload)
            raw = to_json_text(document, indent=1)
        entries = _outline(document)
        try:
            items = _first_items(document, entries)
        except (LookupError, ValueError):  # pragma: no cover - paths come from the outline
            items = []
        return Prepared(raw=raw, data=_JsonData(document=document, entries=entries, items=items))

    def render(self, prepared: Prepared, ctx: ViewContext) -> Rendered:
        """Outline entries first (as many as fit), then first items."""
        data = prepared.data
        if not isinstance(data, _JsonData):
            return _TEXT_FALLBACK.render(prepared, ctx)
        raw = (
            prepared.raw
            if isinstance(prepared.raw, str)
            else prepared.raw.decode("utf-8", "replace")
        )
        entry_lines = [_entry_line(e) for e in data.entries]
        item_lines = [f"{i['path']} = {i['json']}" for i in data.items]
        fence = new_fence(entry_lines, item_lines)
        n_e, n_i = len(entry_lines), len(item_lines)
        views: dict[int, ResultView] = {}

        def build(level: int) -> str:
            e = min(level, n_e)
            i = max(0, level - n_e)
            view = self._view(ctx, data, raw, e, i)
            views[level] = view
            return self._compose(view, ctx, fence).render(fence)

        chosen = largest_fitting(
            build, lo=0, hi=n_e + n_i, budget=ctx.budget, counter=ctx.counter, guess=min(n_e, 40)
        )
        if chosen is None:
            text = minimal_text(ctx, f"JSON, {plural(len(raw), 'char')}")
            view = self._view(ctx, data, raw, 0, 0)
            return Rendered(content=text, view=stamp_view(view, text, ctx))
        level, text = chosen
        return Rendered(content=text, view=stamp_view(views[level], text, ctx))

    def _view(
        self, ctx: ViewContext, data: _JsonData, raw: str, n_entries: int, n_items: int
    ) -> ResultView:
        entries = data.entries[:n_entries]
        items = data.items[:n_items]
        base = ctx.reference
        references: dict[str, str] = {}
        out_items: list[dict[str, Any]] = []
        for entry in entries:
            item = dict(entry)
            if base is not None:
                item["ref"] = str(base.with_path(entry["path"]))
            out_items.append(item)
        for element in items:
            item = dict(element)
            if base is not None:
                item["ref"] = str(base.with_path(element["path"]))
            out_items.append(item)
        if base is not None:
            references["all"] = str(base)
            arrays = [e for e in data.entries if e["value_type"] == "array" and e.get("length")]
            if arrays:
                biggest = max(arrays, key=lambda e: int(e["length"]))
                shown = sum(1 for i in items if i["path"].startswith(biggest["path"] + "["))
                if shown < int(biggest["length"]) and _safe_path(biggest["path"]):
                    references["next"] = str(base.with_path(f"{biggest['path']}[{shown}]"))
        root = data.entries[0] if data.entries else {"value_type": _type_name(data.document)}
        summary: dict[str, Any] = {
            "chars": len(raw),
            "root_type": root["value_type"],
            "outline_entries": len(data.entries),
            "outline_shown": n_entries,
            "outline_capped": len(data.entries) >= _MAX_ENTRIES,
            "items_shown": len(items),
            "headline": f"json: {root['value_type']}, {plural(len(raw), 'char')}",
        }
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
            truncated=True,
            original_chars=len(raw),
            original_lines=raw.count("\n") + (0 if raw.endswith("\n") else 1),
            original_bytes=utf8_length(raw),
        )

    def _compose(self, view: ResultView, ctx: ViewContext, fence: Fence) -> Layout:
        s = view.summary
        facts = [human_size(int(view.original_bytes), "byte"), f"root {s['root_type']}"]
        if s.get("root_keys") is not None:
            facts.append(plural(int(s["root_keys"]), "key"))
        if s.get("root_length") is not None:
            facts.append(f"{int(s['root_length']):,} elements")
        entries = [i for i in view.items if i.get("type") == "json_path"]
        items = [i for i in view.items if i.get("type") == "json_item"]
        shown = f"outline ({len(entries):,} of {int(s['outline_entries']):,} paths)"
        if items:
            shown += f", {plural(len(items), 'first item')}"
        header = header_text(ctx, self.kind, ", ".join(facts), shown)
        sections = []
        if entries:
            sections.append(
                Section(
                    title="outline (facts): path: type, sizes; fetch any path with ?path=",
                    lines=[_entry_line(e) for e in entries],
                )
            )
        if items:
            sections.append(
                Section(
                    title="first items (path = JSON, long values clipped with …)",
                    lines=[f"{i['path']} = {i['json']}" for i in items],
                )
            )
        omitted = []
        hidden = int(s["outline_entries"]) - len(entries)
        if hidden > 0:
            omitted.append(f"{plural(hidden, 'outline path')}")
        if s.get("outline_capped"):
            omitted.append(
                f"paths beyond the first {_MAX_ENTRIES:,} or deeper than {_MAX_DEPTH} levels"
            )
        omitted.append("values not listed above")
        refs: list[tuple[str, Reference | str]] = []
        if "next" in view.references:
            refs.append(("Next item", view.references["next"]))
        footer = footer_text(ctx, omitted="; ".join(omitted), references=refs)
        if ctx.reference is not None:
            footer = footer[:-1] + " Fetch any path with ?path=$... on the full result.]"
        del fence
        return Layout(header=header, sections=sections, footer=footer)

    # ------------------------------------------------------------------ fetches

    def slice_for(self, reference: Reference, line_count: int) -> SliceRequest:
        """A path needs the whole record (resolved after parsing); other ranges as usual."""
        if reference.path is not None:
            return SliceRequest(start_line=1, end_line=max(1, line_count))
        return ResultViewBuilder.slice_for(self, reference, line_count)

    def fetch_slice(self, reference: Reference, record: RecordInfo, ctx: ViewContext) -> FetchSteps:
        """Resolve `?path=` on the whole record (read and parsed once); other ranges as text.

        Raises:
            FetchSliceError: When the record is too large to parse at once, was kept only in
                part by the store, is not JSON, or has no value at the path.
        """
        path = reference.path
        if path is None:
            return (yield from ResultViewBuilder.fetch_slice(self, reference, record, ctx))
        base = ctx.reference or reference.base()
        text_call = fetch_call(base.with_lines(1, 200), tool_name=ctx.fetch_tool_name)
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
        try:
            document = json.loads(data)
        except ValueError as exc:
            msg = (
                f"Cannot resolve {path!r}: the stored result is not valid JSON ({exc}). Read it "
                f"as text instead, for example {text_call}."
            )
            raise FetchSliceError(msg) from exc
        try:
            value = resolve_path(document, path)
        except (ValueError, LookupError) as exc:
            msg = (
                f"Cannot fetch {path!r}: {exc}. Paths look like $.items[3].name ($ is the "
                f"root); the outline in the first view lists the paths, and {base} with no "
                "range reads the text from the start."
            )
            raise FetchSliceError(msg) from exc
        return self._render_value(value, path, record.size, ctx, _next_path(document, path))

    def render_slice(
        self,
        data: str | bytes,
        *,
        reference: Reference,
        slice_start_line: int | None,
        slice_offset: int,
        record_size: int,
        record_lines: int,
        ctx: ViewContext,
    ) -> Rendered | None:
        """Resolve `?path=` on a whole record read by the caller and show that value.

        A value too large for the budget is shown as a JSON view of its own; a path that
        cannot be resolved gives a short notice whose view has `status="error"`; other ranges
        use the plain text slice (`None`). The fetch tool uses `fetch_slice`.
        """
        if reference.path is None or not isinstance(data, str):
            return None
        del slice_start_line, slice_offset, record_lines
        try:
            document = json.loads(data)
            value = resolve_path(document, reference.path)
        except (ValueError, LookupError) as exc:
            text = f"[Cannot fetch {reference.path!r}: {exc}]"
            text = clip(text, ctx.budget.chars)[0]
            view = ResultView(kind=self.kind, summary={"error": str(exc)}, truncated=True)
            view = stamp_view(view, text, ctx)
            view.status = "error"
            return Rendered(content=text, view=view)
        return self._render_value(value, reference.path, record_size, ctx)

    def _render_value(
        self,
        value: Any,
        path: str,
        record_size: int,
        ctx: ViewContext,
        next_path: str | None = None,
    ) -> Rendered:
        body = json.dumps(value, ensure_ascii=False, indent=1)
        fence = new_fence(body)
        where = path if _safe_path(path) else "the requested path"
        header = (
            f"[JSON value at {where} ({_type_name(value)}, {plural(len(body), 'char')}) "
            f"of a {plural(record_size, 'char')} result.]"
        )
        text = f"{header}\n{fence.wrap(clean_for_display(body))}"
        base = ctx.reference
        nxt = base.with_path(next_path) if base is not None and next_path is not None else None
        if nxt is not None:  # the next element of the same array
            text += f"\n[Next item: {fetch_call(nxt, tool_name=ctx.fetch_tool_name)}.]"
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
            return Rendered(content=text, view=stamp_view(view, text, ctx))
        # Too large: outline the value itself, with paths relative to the root.
        sub = self.prepare(value)
        sub_data = sub.data
        assert isinstance(sub_data, _JsonData)
        prefix = path
        for entry in sub_data.entries:
            entry["path"] = prefix + entry["path"][1:]
        for item in sub_data.items:
            item["path"] = prefix + item["path"][1:]
        return self.render(sub, ctx)
