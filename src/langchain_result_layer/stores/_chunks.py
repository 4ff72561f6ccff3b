r"""Chunked layout of a stored record and the range-read algorithm every backend shares.

A record is cut into chunks of at most `chunk_size` characters (bytes for binary records).
Each chunk knows its `start` offset in the original result and `nl_before`, the number of
`\n` before it. With those two numbers a backend finds, by an indexed lookup, the chunk that
holds the k-th newline or a given offset, so a read touches only the chunks it returns.

A record that was capped (size cap or quota) keeps a head `[0, gap_start)` and a tail
`[gap_end, size)` and every coordinate stays the original's: line numbers and offsets in
references made before the cap still point at the same text. Reads never invent data for the
gap: a range that starts in it moves forward to `gap_end`, a range that runs into it stops at
`gap_start`, and the result says so.

Text is stored as UTF-8 with `surrogatepass`, so any Python string (lone surrogates, NUL)
round-trips exactly; bytes are stored as they are; both optionally zlib-compressed.
"""

from __future__ import annotations

import bisect
import zlib
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from langchain_result_layer.errors import StoreUnavailableError

if TYPE_CHECKING:
    from langchain_result_layer.stores._chunked import ReadRequest

__all__ = [
    "DEFAULT_CHUNK_SIZE",
    "Chunk",
    "ChunkSource",
    "Layout",
    "ListChunkSource",
    "Slice",
    "count_newlines",
    "decode_piece",
    "encode_piece",
    "iter_chunks",
    "line_count_of",
    "plan_cap",
    "read_slice",
]

DEFAULT_CHUNK_SIZE = 65_536
"""Characters (bytes for binary records) per chunk."""

_NL = "\n"
_BNL = b"\n"


def _nl(data: str | bytes) -> str | bytes:
    return _NL if isinstance(data, str) else _BNL


def count_newlines(data: str | bytes) -> int:
    r"""Number of `\n` in `data` (str or bytes)."""
    if isinstance(data, str):
        return data.count(_NL)
    return data.count(_BNL)


def line_count_of(size: int, newlines: int, ends_with_newline: bool) -> int:
    r"""Lines of a result: split on `\n`; no trailing empty line; the empty result has none.

    Example:
        ```python
        assert line_count_of(4, 2, True) == 2 and line_count_of(3, 1, False) == 2
        ```
    """
    if size == 0:
        return 0
    return newlines + (0 if ends_with_newline else 1)


# --------------------------------------------------------------------------- encoding


def encode_piece(piece: str | bytes, *, compress: bool) -> bytes:
    """Exact byte form of one chunk (UTF-8 with surrogatepass for text)."""
    raw = piece.encode("utf-8", "surrogatepass") if isinstance(piece, str) else bytes(piece)
    return zlib.compress(raw, 1) if compress else raw


def decode_piece(blob: bytes, *, is_binary: bool, compressed: bool) -> str | bytes:
    """Inverse of `encode_piece`."""
    raw = zlib.decompress(blob) if compressed else bytes(blob)
    return raw if is_binary else raw.decode("utf-8", "surrogatepass")


# --------------------------------------------------------------------------- writing


@dataclass(frozen=True, slots=True)
class Chunk:
    r"""One stored piece of a record.

    Attributes:
        start: Offset of the piece's first character (byte) in the original result.
        nl_before: Number of `\n` in the original before `start`.
        data: The piece.
    """

    start: int
    nl_before: int
    data: str | bytes

    @property
    def end(self) -> int:
        """One past the piece's last character (byte)."""
        return self.start + len(self.data)


def _pieces(
    data: str | bytes, lo: int, hi: int, size: int, nl_before: int
) -> Generator[Chunk, None, int]:
    """The chunks of `data[lo:hi]`; returns the newlines before `hi`."""
    pos, before = lo, nl_before
    while pos < hi:
        end = min(hi, pos + size)
        piece = data[pos:end]
        yield Chunk(start=pos, nl_before=before, data=piece)
        before += count_newlines(piece)
        pos = end
    return before


def iter_chunks(
    data: str | bytes, *, chunk_size: int = DEFAULT_CHUNK_SIZE, gap: tuple[int, int] | None = None
) -> Iterator[Chunk]:
    """Cut `data` into chunks, leaving out `gap` (a `[start, end)` range) when given.

    Example:
        ```python
        assert [c.start for c in iter_chunks("abcde", chunk_size=2)] == [0, 2, 4]
        ```
    """
    if chunk_size < 1:
        msg = "chunk_size must be >= 1"
        raise ValueError(msg)
    n = len(data)
    if gap is None:
        yield from _pieces(data, 0, n, chunk_size, 0)
        return
    gs, ge = gap
    before = yield from _pieces(data, 0, gs, chunk_size, 0)
    gap_newlines = data.count(_nl(data), gs, ge)  # type: ignore[arg-type]
    yield from _pieces(data, ge, n, chunk_size, before + gap_newlines)


def plan_cap(data: str | bytes, keep: int) -> tuple[int, int] | None:
    r"""The range to leave out so that only `keep` characters (bytes) remain, or `None`.

    Half the room goes to the head and half to the tail; each cut moves to a line boundary
    when one lies within a quarter of its part, so the gap is whole lines whenever possible.

    Example:
        ```python
        assert plan_cap("a\nb\nc\nd\n", 4) == (2, 6)  # keeps "a\n" and "d\n"
        ```
    """
    n = len(data)
    if n <= keep:
        return None
    keep = max(0, keep)
    head = keep // 2
    tail_start = n - (keep - head)
    window = max(1, (keep - head) // 4)
    nl = _nl(data)
    if head > 0:
        pos = data.rfind(nl, max(0, head - window), head)  # type: ignore[arg-type]
        if pos >= 0:
            head = pos + 1
    if tail_start < n:
        pos = data.find(nl, tail_start - 1, min(n, tail_start + window))  # type: ignore[arg-type]
        if pos >= 0:
            tail_start = pos + 1
    tail_start = max(tail_start, head)
    return head, tail_start


# --------------------------------------------------------------------------- reading


@dataclass(frozen=True, slots=True)
class Layout:
    """Coordinates of a record (all in the original result's terms).

    Attributes:
        size: Characters (bytes) of the original result.
        line_count: Lines of the original result.
        is_binary: Whether the record holds bytes.
        gap_start: First character (byte) not kept, when capped.
        gap_end: First character (byte) kept after the gap, when capped.
    """

    size: int
    line_count: int
    is_binary: bool
    gap_start: int | None = None
    gap_end: int | None = None

    @property
    def gap(self) -> tuple[int, int] | None:
        """The range not kept, if any."""
        if self.gap_start is None or self.gap_end is None or self.gap_end <= self.gap_start:
            return None
        return self.gap_start, self.gap_end


class ChunkSource(Protocol):
    """How the read algorithm gets chunks from a backend.

    A source may also define `prefetch_lines(k_first, k_last, max_size)`, called before a
    line read with the newline numbers it will look up (`None`: not needed), to load the
    chunks of the whole range in one round trip.
    """

    def chunk_with_newline(self, k: int) -> Chunk | None:
        """The last chunk whose `nl_before < k` (it holds newline number `k`, 1-based)."""
        ...

    def chunks_in(self, lo: int, hi: int) -> Sequence[Chunk]:
        """The chunks overlapping `[lo, hi)`, in order."""
        ...


@dataclass(frozen=True, slots=True)
class Slice:
    """What `read_slice` returns.

    Attributes:
        data: The slice.
        offset: First character (byte) served.
        end_offset: One past the last served.
        start_line: First line served (line containing `offset`).
        end_line: Last line served (line containing `end_offset - 1`); `start_line - 1` when
            empty.
        complete: Whether the slice covers the whole requested range.
        gap_overlap: Whether the requested range touched the part a capped record lacks.
    """

    data: str | bytes
    offset: int
    end_offset: int
    start_line: int
    end_line: int
    complete: bool
    gap_overlap: bool


def _pos_after_newline(source: ChunkSource, k: int) -> int | None:
    """Offset just after newline number `k` (1-based); `None` when it lies in the gap."""
    chunk = source.chunk_with_newline(k)
    if chunk is None:
        return None
    need = k - chunk.nl_before
    nl = _nl(chunk.data)
    parts = chunk.data.split(nl, need)  # type: ignore[arg-type]
    if len(parts) <= need:
        return None
    return chunk.end - len(parts[-1])


def _newlines_before(chunks: Sequence[Chunk], pos: int) -> int:
    for chunk in chunks:
        if chunk.start <= pos <= chunk.end:
            return chunk.nl_before + count_newlines(chunk.data[: pos - chunk.start])
    msg = "chunk index does not cover the requested offset"
    raise StoreUnavailableError(msg)


def _line_at(source: ChunkSource, pos: int, layout: Layout) -> int:
    """The line that holds offset `pos` (`line_count + 1` at the very end)."""
    if pos <= 0:
        return 1
    if pos >= layout.size:
        return layout.line_count + 1
    for chunk in source.chunks_in(pos, pos + 1):
        if chunk.start <= pos <= chunk.end:
            return chunk.nl_before + count_newlines(chunk.data[: pos - chunk.start]) + 1
    return layout.line_count + 1


def _assemble(chunks: Sequence[Chunk], lo: int, hi: int, empty: str | bytes) -> str | bytes:
    parts = []
    for chunk in chunks:
        a, b = max(lo, chunk.start), min(hi, chunk.end)
        if a < b:
            parts.append(chunk.data[a - chunk.start : b - chunk.start])
    data = empty.join(parts)  # type: ignore[arg-type]
    if len(data) != hi - lo:
        msg = f"stored chunks are incomplete for range {lo}-{hi} (got {len(data)} of {hi - lo})"
        raise StoreUnavailableError(msg)
    return data


def _empty_slice(empty: str | bytes, pos: int, line: int, *, complete: bool, in_gap: bool) -> Slice:
    """No data, at `pos`, which is on `line` (its range ends on the line before)."""
    return Slice(
        data=empty,
        offset=pos,
        end_offset=pos,
        start_line=line,
        end_line=line - 1,
        complete=complete,
        gap_overlap=in_gap,
    )


def read_slice(layout: Layout, source: ChunkSource, request: ReadRequest) -> Slice:
    """Read a line range or an offset range (everything when neither is given).

    Args:
        layout: The record's coordinates.
        source: Where chunks come from.
        request: The checked range (`stores._chunked.ReadRequest.of`); `max_size` serves at
            most that many characters (bytes), the slice is then incomplete.

    Returns:
        The slice.
    """
    start_line, end_line, max_size = request.start_line, request.end_line, request.max_size
    offset, limit = request.offset, request.limit
    size = layout.size
    empty: str | bytes = b"" if layout.is_binary else ""
    if start_line is not None or end_line is not None or (offset is None and limit is None):
        first = max(1, start_line or 1)
        span = _line_span(layout, source, first, end_line, max_size)
        if span is None:  # the range lies past the last line
            return _empty_slice(empty, size, first, complete=True, in_gap=False)
        lo, hi, in_gap = span
    else:
        lo = min(size, offset or 0)
        hi = size if limit is None else min(size, lo + limit)
        in_gap = False
    lo, hi, in_gap = _around_gap(layout.gap, lo, hi, in_gap)
    complete = not in_gap
    if max_size is not None and hi - lo > max_size:
        hi, complete = lo + max_size, False
    if lo >= hi:
        line = _line_at(source, lo, layout)
        return _empty_slice(empty, lo, line, complete=complete, in_gap=in_gap)
    chunks = source.chunks_in(lo, hi)
    data = _assemble(chunks, lo, hi, empty)
    first_line = _newlines_before(chunks, lo) + 1
    last_line = first_line + count_newlines(data[:-1])
    return Slice(
        data=data,
        offset=lo,
        end_offset=hi,
        start_line=first_line,
        end_line=last_line,
        complete=complete,
        gap_overlap=in_gap,
    )


def _line_span(
    layout: Layout, source: ChunkSource, first: int, end_line: int | None, max_size: int | None
) -> tuple[int, int, bool] | None:
    """Where lines `first`..`end_line` start and end, and whether an end lies in the gap.

    `None` when the range lies past the last line. An end in the part a capped record lacks
    is moved to the edge of that part.
    """
    size, total = layout.size, layout.line_count
    last = total if end_line is None else min(total, end_line)
    if first > total or last < first:
        return None
    prefetch = getattr(source, "prefetch_lines", None)
    if callable(prefetch):  # one round trip for both ends and what lies between
        prefetch(first - 1 if first > 1 else None, last if last < total else None, max_size)
    lo_pos = 0 if first == 1 else _pos_after_newline(source, first - 1)
    hi_pos = size if last == total else _pos_after_newline(source, last)
    gap = layout.gap
    lo = lo_pos if lo_pos is not None else (gap[1] if gap else size)
    hi = hi_pos if hi_pos is not None else (gap[0] if gap else size)
    return lo, hi, lo_pos is None or hi_pos is None


def _around_gap(
    gap: tuple[int, int] | None, lo: int, hi: int, in_gap: bool
) -> tuple[int, int, bool]:
    """`lo`..`hi` kept out of the part a capped record lacks (`in_gap` when it touched it)."""
    if gap is not None:
        gs, ge = gap
        if gs <= lo < ge:
            lo, in_gap = ge, True
        if lo < gs < hi:
            hi, in_gap = gs, True
    return lo, max(hi, lo), in_gap


class ListChunkSource:
    """A `ChunkSource` over chunks held in memory (in-memory store, LangGraph adapter).

    Args:
        starts: `start` of every chunk, ascending.
        nl_before: `nl_before` of every chunk (non-decreasing).
        load: Returns chunk `i`.
    """

    __slots__ = ("_load", "_nl_before", "_starts", "loaded")

    def __init__(self, starts: Sequence[int], nl_before: Sequence[int], load: _Loader) -> None:
        self._starts = starts
        self._nl_before = nl_before
        self._load = load
        self.loaded: dict[int, Chunk] = {}

    def _get(self, i: int) -> Chunk:
        chunk = self.loaded.get(i)
        if chunk is None:
            chunk = self._load(i)
            self.loaded[i] = chunk
        return chunk

    def chunk_with_newline(self, k: int) -> Chunk | None:
        """See `ChunkSource`."""
        i = bisect.bisect_left(self._nl_before, k) - 1
        return self._get(i) if i >= 0 else None

    def chunks_in(self, lo: int, hi: int) -> list[Chunk]:
        """See `ChunkSource`."""
        i = max(0, bisect.bisect_right(self._starts, lo) - 1)
        out = []
        while i < len(self._starts) and self._starts[i] < hi:
            chunk = self._get(i)
            if chunk.end > lo:
                out.append(chunk)
            i += 1
        return out


class _Loader(Protocol):
    def __call__(self, i: int, /) -> Chunk: ...
