r"""The file view: size, line count, outline, key lines and line-range references.

For a large source file or document the model sees what is in it and where: definitions
(Python through `ast`, with line ranges; other languages through declaration patterns),
Markdown/reStructuredText headings, the file's first lines (imports, module docstring) and
its key lines (to-do and fix-me markers, `if __name__ == "__main__":`, errors raised), each with a
line-range reference to fetch exactly that part.

Example:
    ```python
    from langchain_result_layer.views.files import outline

    entries = outline("def f():\n    return 1\n\nclass A:\n    def g(self):\n        pass\n")
    assert [(e.name, e.start_line) for e in entries] == [("f", 1), ("A", 4), ("A.g", 5)]
    ```
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any, ClassVar

from langchain_result_layer.core.normalize import clean_for_display
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.render import Fence, plural
from langchain_result_layer.core.view import ResultView
from langchain_result_layer.views import _layout
from langchain_result_layer.views._line_record import LineText
from langchain_result_layer.views.base import Prepared, Rendered, ResultViewBuilder, ViewContext
from langchain_result_layer.views.text import TextView

__all__ = ["FileView", "OutlineEntry", "outline"]

_SNIFF_CHARS = 16_000
_MAX_OUTLINE = 2_000
_HEAD_LINES = 40
_LINE_CHARS = 240
_TEXT_FALLBACK = TextView()
_PLURALS = {"class": "classes"}

_CODE_DEF_RES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("function", re.compile(r"^\s*(?:export\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)")),
    (
        "class",
        re.compile(
            r"^\s*(?:export\s+)?(?:default\s+)?(?:abstract\s+|final\s+|sealed\s+|data\s+|public\s+"
            r"|private\s+|protected\s+|static\s+|internal\s+)*(?:class|interface|enum|struct|trait"
            r"|record|object|protocol|extension|module|namespace)\s+([A-Za-z_$][\w$]*)"
        ),
    ),
    (
        "function",
        re.compile(r"^\s*(?:pub(?:\([\w:]+\))?\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+([A-Za-z_]\w*)"),
    ),
    ("function", re.compile(r"^func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)")),
    ("function", re.compile(r"^\s*def\s+([A-Za-z_]\w*[?!]?)")),
    (
        "function",
        re.compile(
            r"^\s*(?:(?:public|private|protected|internal|static|final|override|virtual|abstract"
            r"|async|synchronized)\s+)+(?:[\w<>\[\],.?]+\s+){0,3}([A-Za-z_]\w*)\s*\("
        ),
    ),
    (
        "function",
        re.compile(
            r"^(?:[A-Za-z_][\w:*&<>]*[ \t]+){1,4}\**([A-Za-z_]\w*)\s*\([^;)]*\)"
            r"\s*(?:const\s*)?\{?\s*$"
        ),
    ),
    (
        "function",
        re.compile(
            r"^\s*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?(?:function|\([^)]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>)"
        ),
    ),
)
_MD_HEADING_RE = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_RST_UNDERLINE_RE = re.compile(r"^([=\-~^\"'`#*+])\1{2,}\s*$")
# Work markers are spelt with a one-letter class (T-O-D-O, F-I-X-M-E) so that this pattern is
# not itself mistaken for one by scanners of unfinished code.
_KEY_LINE_RE = re.compile(
    r"\b(?:TO[D]O|FIX[M]E|X{3}|HACK|BUG)\b|if\s+__name__\s*==|^\s*raise\s+\w|^\s*(?:throw|panic!?)\b"
    r"|@deprecated|DEPRECATED"
)


@dataclass(frozen=True, slots=True)
class OutlineEntry:
    """One outline entry.

    Example:
        ```python
        OutlineEntry(kind="class", name="Parser", start_line=10, end_line=80, depth=0)
        ```
    """

    kind: str
    """`class`, `function`, `method`, `heading`, ..."""
    name: str
    """Qualified name or heading text."""
    start_line: int
    """First line (1-based)."""
    end_line: int | None
    """Last line (inclusive), when known."""
    depth: int
    """Nesting depth (heading level - 1 for documents)."""


def _python_outline(text: str) -> list[OutlineEntry] | None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    out: list[OutlineEntry] = []

    def visit(body: list[ast.stmt], prefix: str, depth: int, in_class: bool) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if isinstance(node, ast.ClassDef):
                    kind = "class"
                else:
                    kind = "method" if in_class else "function"
                name = f"{prefix}{node.name}"
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                out.append(OutlineEntry(kind, name, start, node.end_lineno, depth))
                if len(out) >= _MAX_OUTLINE:
                    return
                visit(node.body, f"{name}.", depth + 1, isinstance(node, ast.ClassDef))

    visit(tree.body, "", 0, in_class=False)
    return out


def _code_outline(lines: list[str]) -> list[OutlineEntry]:
    out: list[OutlineEntry] = []
    for i, line in enumerate(lines, start=1):
        if len(line) > 400 or not line.strip() or line.lstrip().startswith(("//", "#", "*", "/*")):
            continue
        for kind, pattern in _CODE_DEF_RES:
            match = pattern.match(line)
            if match and match.group(1) not in ("if", "for", "while", "switch", "return", "catch"):
                depth = (len(line) - len(line.lstrip())) // 4
                out.append(OutlineEntry(kind, match.group(1), i, None, depth))
                break
        if len(out) >= _MAX_OUTLINE:
            break
    return out


def _doc_outline(lines: list[str]) -> list[OutlineEntry]:
    out: list[OutlineEntry] = []
    fenced = False
    for i, line in enumerate(lines, start=1):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced:
            continue
        match = _MD_HEADING_RE.match(line)
        if match:
            out.append(OutlineEntry("heading", match.group(2), i, None, len(match.group(1)) - 1))
        elif (
            i >= 2
            and _RST_UNDERLINE_RE.match(line)
            and lines[i - 2].strip()
            and len(line.strip()) >= len(lines[i - 2].strip())
            and not _RST_UNDERLINE_RE.match(lines[i - 2])
        ):
            out.append(OutlineEntry("heading", lines[i - 2].strip(), i - 1, None, 0))
        if len(out) >= _MAX_OUTLINE:
            break
    return out


_CODE_LINE_RE = re.compile(r"[;{}(),:\[\]]\s*$|^\s*(?://|/\*|\*|#|--)|^\s+\S")


def _code_share(lines: list[str]) -> float:
    """Share of non-blank lines shaped like code (ending in `;{}),:`, comments, indented)."""
    body = [ln for ln in lines[:400] if ln.strip()]
    if not body:
        return 0.0
    return sum(1 for ln in body if _CODE_LINE_RE.search(ln)) / len(body)


def _looks_like_python(text: str) -> bool:
    head = text[:_SNIFF_CHARS]
    return bool(
        re.search(r"^(?:def|class|import|from)\s+\w", head, re.MULTILINE)
        and not re.search(r"^\s*(?:function|const|let|var|public|#include)\b", head, re.MULTILINE)
    )


def _looks_like_doc(text: str) -> bool:
    head = text[:_SNIFF_CHARS]
    return bool(re.search(r"^#{1,6}\s+\S", head, re.MULTILINE)) or bool(
        re.search(r"^\S.*\n[=\-~]{3,}\s*$", head, re.MULTILINE)
    )


def outline(text: str, *, language: str | None = None) -> list[OutlineEntry]:
    r"""Definitions (code) or headings (documents), in order.

    Args:
        text: The file's text.
        language: `python`, `markdown`, or `None` to guess.

    Returns:
        Outline entries with line numbers (and end lines for Python).

    Example:
        ```python
        assert outline("# Title\n\n## Part\n")[1].name == "Part"
        ```
    """
    if language == "python" or (language is None and _looks_like_python(text)):
        entries = _python_outline(text)
        if entries:
            return _fill_ends(entries, text.count("\n") + 1)
    lines = text.split("\n")
    if language == "markdown" or (language is None and _looks_like_doc(text)):
        return _fill_ends(_doc_outline(lines), len(lines))
    return _fill_ends(_code_outline(lines), len(lines))


def _fill_ends(entries: list[OutlineEntry], total: int) -> list[OutlineEntry]:
    """End lines for entries that lack them.

    An entry ends just before the next entry at the same or a shallower depth.
    """
    out: list[OutlineEntry] = []
    for i, e in enumerate(entries):
        if e.end_line is not None:
            out.append(e)
            continue
        end = total
        for later in entries[i + 1 :]:
            if later.depth <= e.depth:
                end = max(e.start_line, later.start_line - 1)
                break
        out.append(OutlineEntry(e.kind, e.name, e.start_line, end, e.depth))
    return out


@dataclass(slots=True)
class _FileData:
    lines: list[str]
    text: LineText
    entries: list[OutlineEntry]
    key_lines: list[int]
    language: str


def _language(text: str, entries: list[OutlineEntry]) -> str:
    if entries and entries[0].kind == "heading":
        return "document"
    if _looks_like_python(text):
        return "python"
    return "code" if entries else "text"


class FileView(ResultViewBuilder):
    r"""Outline, first lines and key lines of a large file, with line-range references.

    Example:
        ```python
        view = FileView()
        src = "import os\n\n" + "".join(f"def f{i}():\n    return {i}\n\n" for i in range(3000))
        assert view.sniff(src) > 0.5
        ```
    """

    kind: ClassVar[str] = "file"
    sniff_ceiling = 0.7

    def sniff(self, payload: object) -> float:
        """Python or other source with several definitions, or a document with headings."""
        if not isinstance(payload, str) or len(payload) < 200:
            return 0.0
        head = payload[:_SNIFF_CHARS]
        if "\x1b[" in head or re.search(r"^\$ \S", head, re.MULTILINE):
            return 0.0  # terminal output (colours, shell prompts), not a file
        lines = head.split("\n")
        if _looks_like_python(head):
            defs = sum(1 for ln in lines if re.match(r"\s*(?:async\s+)?(?:def|class)\s+\w", ln))
            if defs >= 2 and _code_share(lines) >= 0.4:
                return 0.7
        if _looks_like_doc(head):
            headings = sum(1 for ln in lines if _MD_HEADING_RE.match(ln))
            if headings >= 2:
                return 0.6
        defs = len(_code_outline(lines))
        braces = head.count("{") + head.count("}")
        return 0.6 if defs >= 3 and braces >= 4 and _code_share(lines) >= 0.5 else 0.0

    def prepare(self, payload: object) -> Prepared:
        """Keep text as it is; build the outline once."""
        prepared = _TEXT_FALLBACK.prepare(payload)
        raw = prepared.raw_text
        lines = raw.split("\n")
        if lines and lines[-1] == "" and raw.endswith("\n"):
            lines.pop()
        entries = outline(raw)
        key_lines = [i for i, ln in enumerate(lines, start=1) if _KEY_LINE_RE.search(ln[:400])]
        prepared.data = _FileData(
            lines=lines,
            text=LineText.of_lines(raw, lines),
            entries=entries,
            key_lines=key_lines[:200],
            language=_language(raw, entries),
        )
        return prepared

    def render(self, prepared: Prepared, ctx: ViewContext) -> Rendered:
        """Outline first (as many entries as fit), then the head and key lines."""
        raw = prepared.raw_text
        data = prepared.data
        if not isinstance(data, _FileData):
            prepared = self.prepare(raw)
            data = prepared.data
        assert isinstance(data, _FileData)
        entry_lines = [_entry_text(e) for e in data.entries]
        head_lines = [
            _layout.clip(clean_for_display(ln), _LINE_CHARS)[0] for ln in data.lines[:_HEAD_LINES]
        ]
        key_texts = [
            _layout.clip(clean_for_display(data.lines[i - 1].strip()), _LINE_CHARS)[0]
            for i in data.key_lines
        ]
        fence = _layout.equal_cost_fence(ctx.counter, entry_lines, head_lines, key_texts)
        n_entries = len(entry_lines)
        n_head = len(head_lines)
        n_keys = len(key_texts)
        # Levels: outline entries first, then head lines, then key lines.
        total_levels = n_entries + n_head + n_keys

        def build(level: int) -> tuple[ResultView, str]:
            e = min(level, n_entries)
            h = min(max(0, level - n_entries), n_head)
            k = min(max(0, level - n_entries - n_head), n_keys)
            view = self._view(ctx, data, raw, n_entries=e, n_head=h, n_keys=k)
            return view, self._compose(view, ctx, fence).render(fence)

        return _layout.render_largest(
            build,
            ctx,
            levels=total_levels,
            facts=plural(len(data.lines), "line"),
            guess=min(total_levels, n_entries),
        )

    def _view(
        self,
        ctx: ViewContext,
        data: _FileData,
        raw: str,
        *,
        n_entries: int,
        n_head: int,
        n_keys: int,
    ) -> ResultView:
        total = len(data.lines)
        items: list[dict[str, Any]] = []
        base = ctx.reference
        for e in data.entries[:n_entries]:
            item: dict[str, Any] = {
                "type": "definition" if e.kind != "heading" else "heading",
                "kind": e.kind,
                "name": e.name,
                "start_line": e.start_line,
                "end_line": e.end_line,
                "depth": e.depth,
            }
            if base is not None:
                item["ref"] = str(base.with_lines(e.start_line, e.end_line or e.start_line))
            items.append(item)
        if n_head:
            items.append(
                {
                    "type": "window",
                    "role": "head",
                    "start_line": 1,
                    "end_line": n_head,
                    "lines": [
                        _layout.clip(clean_for_display(x), _LINE_CHARS)[0]
                        for x in data.lines[:n_head]
                    ],
                }
            )
        for i in data.key_lines[:n_keys]:
            items.append(
                {
                    "type": "key_line",
                    "line": i,
                    "text": _layout.clip(clean_for_display(data.lines[i - 1].strip()), _LINE_CHARS)[
                        0
                    ],
                }
            )
        kinds: dict[str, int] = {}
        for e in data.entries:
            kinds[e.kind] = kinds.get(e.kind, 0) + 1
        summary = {
            "lines": total,
            "chars": len(raw),
            "bytes": data.text.bytes,
            "language": data.language,
            "outline_entries": len(data.entries),
            "outline_capped": len(data.entries) >= _MAX_OUTLINE,
            "outline_kinds": kinds,
            "outline_shown": n_entries,
            "key_lines": len(data.key_lines),
            "headline": f"file: {plural(total, 'line')}, "
            f"{plural(len(data.entries), 'outline entry', 'outline entries')}",
        }
        return data.text.view(
            self.kind,
            summary=summary,
            items=items,
            total=total,
            unit="lines",
            shown=n_head + n_keys,
            shown_lines=range(1, n_head + 1),
            base=base,
            truncated=True,
        )

    def _compose(self, view: ResultView, ctx: ViewContext, fence: Fence) -> _layout.Layout:
        s = view.summary
        kinds = s.get("outline_kinds") or {}
        facts = [
            f"{plural(int(s['lines']), 'line')}, {_layout.human_size(int(s['bytes']), 'byte')}",
            f"{s['language']}",
        ]
        if kinds:
            facts.append(", ".join(plural(n, k, _PLURALS.get(k)) for k, n in kinds.items()))
        entries = [i for i in view.items if i.get("type") in ("definition", "heading")]
        head = [i for i in view.items if i.get("type") == "window"]
        keys = [i for i in view.items if i.get("type") == "key_line"]
        shown = []
        if entries:
            shown.append(f"outline ({len(entries):,} of {int(s['outline_entries']):,} entries)")
        if head:
            shown.append(f"lines 1-{int(head[0]['end_line']):,}")
        if keys:
            shown.append(plural(len(keys), "key line"))
        header = _layout.header_text(
            ctx, self.kind, "; ".join(facts), ", ".join(shown) or "facts only"
        )
        sections: list[_layout.Section] = []
        if entries:
            sections.append(
                _layout.Section(
                    title="outline (facts): kind name, lines start-end; fetch any range by line",
                    lines=[
                        _entry_text(
                            OutlineEntry(
                                str(i["kind"]),
                                str(i["name"]),
                                int(i["start_line"]),
                                None if i["end_line"] is None else int(i["end_line"]),
                                int(i["depth"]),
                            )
                        )
                        for i in entries
                    ],
                )
            )
        if head:
            end = int(head[0]["end_line"])
            sections.append(_layout.Section(title=f"lines 1-{end}", lines=list(head[0]["lines"])))
        if keys:
            sections.append(
                _layout.Section(
                    title="key lines (to-do/fix-me markers, entry points, raised errors)",
                    lines=[f"{int(k['line']):>6}: {k['text']}" for k in keys],
                )
            )
        omitted_parts = []
        total = int(s["lines"])
        first_hidden = (int(head[0]["end_line"]) + 1) if head else 1
        if first_hidden <= total:
            omitted_parts.append(
                f"lines {first_hidden:,}-{total:,} ({plural(total - first_hidden + 1, 'line')})"
            )
        hidden_entries = int(s["outline_entries"]) - len(entries)
        if hidden_entries > 0:
            omitted_parts.append(plural(hidden_entries, "outline entry", "outline entries"))
        if s.get("outline_capped"):
            omitted_parts.append(f"definitions after the first {_MAX_OUTLINE:,}")
        refs: list[tuple[str, Reference | str]] = []
        if "next" in view.references:
            refs.append(("Read more", view.references["next"]))
        footer = _layout.footer_text(ctx, omitted="; ".join(omitted_parts) or None, references=refs)
        del fence
        return _layout.Layout(header=header, sections=sections, footer=footer)


def _entry_text(e: OutlineEntry) -> str:
    indent = "  " * min(e.depth, 6)
    span = (
        f"{e.start_line}" if e.end_line in (None, e.start_line) else f"{e.start_line}-{e.end_line}"
    )
    name, _ = _layout.clip(clean_for_display(e.name), 120)
    return f"{indent}{e.kind} {name}  [{span}]"
