r"""The binary view: size, detected type, SHA-256 and a short preview of printable strings.

Bytes never go to the model as such. The view states what the bytes are (from their magic
number), how many there are, their SHA-256 (to compare or cite them), and the first
printable strings inside them (as `strings(1)` would show); a byte range of the stored
original can be fetched with `?offset=&limit=`.

Example:
    ```python
    from langchain_result_layer.views.binary import detect_type

    assert detect_type(b"\x89PNG\r\n\x1a\n....") == "PNG image"
    ```
"""

from __future__ import annotations

import ast
import hashlib
import re
from typing import Any, ClassVar

from langchain_result_layer.core.normalize import clean_for_display
from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.render import fetch_call, plural
from langchain_result_layer.core.view import OmittedRange, ResultView
from langchain_result_layer.views import _layout
from langchain_result_layer.views._notices import bare_notice
from langchain_result_layer.views.base import Prepared, Rendered, ResultViewBuilder, ViewContext

__all__ = [
    "BINARY_NOTICE",
    "FIRST_BYTES",
    "BinaryNoticeView",
    "BinaryView",
    "binary_notice",
    "bytes_from_repr",
    "bytes_record",
    "detect_type",
    "printable_strings",
]

_MAGIC: tuple[tuple[int, bytes, str], ...] = (
    (0, b"\x89PNG\r\n\x1a\n", "PNG image"),
    (0, b"\xff\xd8\xff", "JPEG image"),
    (0, b"GIF87a", "GIF image"),
    (0, b"GIF89a", "GIF image"),
    (0, b"%PDF-", "PDF document"),
    (0, b"PK\x03\x04", "ZIP archive (also docx/xlsx/jar/wheel)"),
    (0, b"PK\x05\x06", "ZIP archive (empty)"),
    (0, b"\x1f\x8b", "gzip data"),
    (0, b"BZh", "bzip2 data"),
    (0, b"\xfd7zXZ\x00", "xz data"),
    (0, b"(\xb5/\xfd", "zstd data"),
    (0, b"7z\xbc\xaf\x27\x1c", "7-Zip archive"),
    (0, b"Rar!\x1a\x07", "RAR archive"),
    (0, b"\x7fELF", "ELF executable"),
    (0, b"MZ", "Windows executable (PE/DOS)"),
    (0, b"\xcf\xfa\xed\xfe", "Mach-O executable"),
    (0, b"\xfe\xed\xfa\xcf", "Mach-O executable"),
    (0, b"\xca\xfe\xba\xbe", "Java class file or Mach-O universal binary"),
    (0, b"\x00asm", "WebAssembly module"),
    (0, b"SQLite format 3\x00", "SQLite database"),
    (0, b"OggS", "Ogg media"),
    (0, b"ID3", "MP3 audio"),
    (0, b"fLaC", "FLAC audio"),
    (0, b"\x1aE\xdf\xa3", "Matroska/WebM video"),
    (0, b"BM", "BMP image"),
    (0, b"II*\x00", "TIFF image"),
    (0, b"MM\x00*", "TIFF image"),
    (0, b"\x00\x00\x01\x00", "ICO image"),
    (0, b"wOFF", "WOFF font"),
    (0, b"wOF2", "WOFF2 font"),
    (0, b"PAR1", "Parquet file"),
    (0, b"ARROW1", "Arrow file"),
    (0, b"\x93NUMPY", "NumPy array"),
    (0, b"\x80\x04\x95", "Python pickle"),
    (257, b"ustar", "tar archive"),
)
_STRINGS_RE = re.compile(rb"[\x20-\x7e\t]{6,}")
_PREVIEW_BYTES = 1 << 20
_MAX_STRINGS = 60
_STRING_CHARS = 120
FIRST_BYTES = 4_096
"""How many bytes a binary result's `next` reference (its first bytes) reads."""


def detect_type(data: bytes) -> str:
    """A name for what the bytes are, from their magic number.

    Args:
        data: The bytes (their first kilobytes suffice).

    Returns:
        A short description; `UTF-8 text` or `binary data` when no magic number matches.

    Example:
        ```python
        assert detect_type(b"%PDF-1.7 ...") == "PDF document"
        ```
    """
    for offset, magic, name in _MAGIC:
        if data[offset : offset + len(magic)] == magic:
            return name
    if data[:4] == b"RIFF" and len(data) >= 12:
        sub = data[8:12]
        return {b"WAVE": "WAV audio", b"WEBP": "WebP image", b"AVI ": "AVI video"}.get(
            sub, "RIFF container"
        )
    if data[4:8] == b"ftyp":
        return "MP4/QuickTime media"
    head = data[:4096]
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:
            return "binary data"
    if b"\x00" in head:
        return "binary data"
    return "UTF-8 text"


def printable_strings(data: bytes, *, limit: int = _MAX_STRINGS) -> list[tuple[int, str]]:
    r"""Runs of at least 6 printable ASCII characters, with their byte offsets.

    Args:
        data: The bytes (only the first megabyte is scanned).
        limit: How many strings to return.

    Returns:
        `(offset, text)` pairs.

    Example:
        ```python
        assert printable_strings(b"\x00\x01hello world\x00") == [(2, "hello world")]
        ```
    """
    out: list[tuple[int, str]] = []
    for match in _STRINGS_RE.finditer(data, 0, min(len(data), _PREVIEW_BYTES)):
        out.append((match.start(), match.group().decode("ascii")))
        if len(out) >= limit:
            break
    return out


def bytes_record(
    kind: str,
    size: int,
    summary: dict[str, Any],
    *,
    truncated: bool,
    items: list[dict[str, Any]] | None = None,
    references: dict[str, str] | None = None,
    omitted: list[OmittedRange] | None = None,
) -> ResultView:
    r"""The record of a view of `size` bytes: counted in bytes, none of them shown as text.

    Args:
        kind: The view's kind.
        size: The result's size in bytes (also its size in characters: one per byte).
        summary: The view's facts.
        truncated: Whether the view leaves something out.
        items: The printable strings shown, if any.
        references: The record's references, if stored.
        omitted: What the view leaves out.

    Returns:
        The view record.

    Example:
        ```python
        view = bytes_record("binary", 200, {"bytes": 200}, truncated=True)
        assert (view.total, view.unit, view.shown, view.original_chars) == (200, "bytes", 0, 200)
        ```
    """
    return ResultView(
        kind=kind,
        summary=summary,
        items=items or [],
        total=size,
        unit="bytes",
        references=references or {},
        omitted=omitted or [],
        truncated=truncated,
        original_bytes=size,
        original_chars=size,
    )


class BinaryView(ResultViewBuilder):
    r"""Size, type, SHA-256 and printable strings of binary results.

    Example:
        ```python
        from langchain_result_layer.views import choose_view

        assert choose_view(b"\x7fELF" + bytes(5000)).kind == "binary"
        ```
    """

    kind: ClassVar[str] = "binary"
    sniff_ceiling = 0.95

    def sniff(self, payload: object) -> float:
        """Bytes are binary."""
        return 0.95 if isinstance(payload, (bytes, bytearray, memoryview)) else 0.0

    def prepare(self, payload: object) -> Prepared:
        """Store the bytes exactly; hash and inspect them once."""
        if isinstance(payload, (bytearray, memoryview)):
            payload = bytes(payload)
        if isinstance(payload, str):
            payload = payload.encode("utf-8", "surrogatepass")
        if not isinstance(payload, bytes):
            payload = repr(payload).encode("utf-8", "replace")
        facts: dict[str, Any] = {
            "bytes": len(payload),
            "type": detect_type(payload[:8192]),
            "sha256": hashlib.sha256(payload).hexdigest(),
        }
        strings = printable_strings(payload)
        return Prepared(raw=payload, data=strings, text=False, facts=facts)

    def render(self, prepared: Prepared, ctx: ViewContext) -> Rendered:
        """Facts first, then as many printable strings as fit."""
        facts = dict(prepared.facts)
        strings: list[tuple[int, str]] = list(prepared.data or [])
        lines = [
            f"{off:>8}: {clean_for_display(_layout.clip(text, _STRING_CHARS)[0])}"
            for off, text in strings
        ]
        fence = _layout.equal_cost_fence(ctx.counter, lines)

        def build(n: int) -> tuple[ResultView, str]:
            view = self._view(ctx, facts, strings[:n], lines[:n])
            return view, self._compose(view, ctx).render(fence)

        return _layout.render_largest(
            build,
            ctx,
            levels=len(lines),
            facts=f"{facts['type']}, {plural(int(facts['bytes']), 'byte')}",
            guess=len(lines),
        )

    def _view(
        self,
        ctx: ViewContext,
        facts: dict[str, Any],
        strings: list[tuple[int, str]],
        lines: list[str],
    ) -> ResultView:
        size = int(facts["bytes"])
        references: dict[str, str] = {}
        if ctx.reference is not None:
            references["all"] = str(ctx.reference)
            if size:
                references["next"] = str(ctx.reference.with_chars(0, min(size, FIRST_BYTES)))
        items = [
            {"type": "string", "offset": off, "text": line}
            for (off, _), line in zip(strings, lines, strict=False)
        ]
        summary = dict(facts)
        summary["strings_shown"] = len(items)
        summary["headline"] = f"binary: {facts['type']}, {plural(size, 'byte')}"
        whole = OmittedRange(start_line=1, end_line=1, start_char=0, end_char=size, lines=0)
        return bytes_record(
            self.kind,
            size,
            summary,
            items=items,
            references=references,
            omitted=[whole] if size else [],
            truncated=bool(size),
        )

    def _compose(self, view: ResultView, ctx: ViewContext) -> _layout.Layout:
        s = view.summary
        size = int(s["bytes"])
        human = _layout.human_size(size, "byte")
        facts = f"{s['type']}, {human} ({size:,} bytes), sha256 {s['sha256']}"
        shown = plural(len(view.items), "printable string") if view.items else "facts only"
        header = _layout.header_text(ctx, self.kind, facts, shown)
        sections = []
        if view.items:
            sections.append(
                _layout.Section(
                    title="printable strings (byte offset: text), as strings(1) shows them",
                    lines=[str(i["text"]) for i in view.items],
                )
            )
        refs: list[tuple[str, Reference | str]] = []
        if "next" in view.references:
            refs.append(("First bytes", view.references["next"]))
        footer = _layout.footer_text(
            ctx, omitted=f"the {plural(int(s['bytes']), 'byte')} themselves", references=refs
        )
        return _layout.Layout(header=header, sections=sections, footer=footer)


class BinaryNoticeView(ResultViewBuilder):
    r"""Bytes as one notice (size, SHA-256 prefix, first bytes).

    Used when a layer's views have no `binary` view, and when a binary view fails.

    Example:
        ```python
        shown = BINARY_NOTICE.render(BINARY_NOTICE.prepare(b"\x00\x01" * 100), ctx)
        assert shown.content.startswith("[Binary tool result: 200 bytes")
        ```
    """

    kind: ClassVar[str] = BinaryView.kind

    def sniff(self, payload: object) -> float:
        """Never chosen by sniffing (a layer's binary view is)."""
        return 0.0

    def prepare(self, payload: object) -> Prepared:
        """Store the bytes exactly."""
        data = payload if isinstance(payload, bytes) else BinaryView().prepare(payload).raw
        return Prepared(raw=data, text=False, facts={"bytes": len(data)})

    def render(self, prepared: Prepared, ctx: ViewContext) -> Rendered:
        """The notice, within the budget."""
        data = prepared.raw if isinstance(prepared.raw, bytes) else prepared.raw.encode()
        size = len(data)
        view = bytes_record(self.kind, size, {"bytes": size}, truncated=True)
        return Rendered(content=binary_notice(data, ctx), view=view)


BINARY_NOTICE = BinaryNoticeView()
"""The one `BinaryNoticeView` (views keep no state)."""


def binary_notice(data: bytes, ctx: ViewContext) -> str:
    r"""What the model sees of binary data when no binary view renders it.

    Args:
        data: The bytes.
        ctx: Budget, counter, and the reference or store note.

    Returns:
        The notice (a shorter one when the full one does not fit the budget).

    Example:
        ```python
        assert "sha256" in binary_notice(b"\x89PNG" + bytes(64), ctx)
        ```
    """
    digest = hashlib.sha256(data).hexdigest()[:16]
    head = data[:16].hex(" ")
    text = (
        f"[Binary tool result{f' `{ctx.tool_name}`' if ctx.tool_name else ''}: "
        f"{plural(len(data), 'byte')} (sha256 {digest}…, first bytes {head}); not shown "
        "as text."
    )
    if ctx.reference is not None:
        call = fetch_call(ctx.reference.with_chars(0, FIRST_BYTES), tool_name=ctx.fetch_tool_name)
        text += f" Full result: {ctx.reference}. Read bytes: {call}.]"
    elif ctx.store_note:
        text += f" {ctx.store_note}]"
    else:
        text += " It was not saved.]"
    if len(text) <= ctx.budget.chars and ctx.counter.count(text) <= ctx.budget.tokens:
        return text
    return bare_notice(
        len(data), ctx.reference, ctx.budget, ctx.counter, ctx.fetch_tool_name, unit="byte"
    )


_BYTES_REPR_MAX = 64_000_000


def bytes_from_repr(text: str) -> bytes | None:
    r"""The bytes a tool returned, when LangChain stringified them as `b'...'`; else `None`.

    Args:
        text: A tool result's text.

    Returns:
        The bytes, or `None` when `text` is not a bytes literal.

    Example:
        ```python
        assert bytes_from_repr("b'\\x00\\xff'") == b"\x00\xff"
        assert bytes_from_repr("hello") is None
        ```
    """
    if len(text) < 3 or len(text) > _BYTES_REPR_MAX or text[0] != "b" or text[1] not in "'\"":
        return None
    if text[-1] != text[1]:
        return None
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, bytes) else None
