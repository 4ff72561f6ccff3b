"""Reading one value of a JSON text without parsing the rest (for `?path=` fetches).

`value_at(raw, parts)` walks the text from the root to the value at a path: containers on
the way are read key by key (element by element), siblings are skipped with the C decoder
one at a time, and the value itself is decoded alone. An array comes back as a
`LazyArray`, whose elements are found and decoded only when asked for: a page of 50
elements of a 60 MB array decodes those 50 and steps over the others, so a fetch costs the
record's text and one element at a time, never the whole parsed document.

A key given twice is found at its first occurrence (`json.loads` keeps the last).

Example:
    ```python
    from langchain_result_layer.views._json_stream import LazyArray, value_at

    items = value_at('{"a": 1, "items": [10, 20, 30]}', ("items",))
    assert isinstance(items, LazyArray) and len(items) == 3 and items[1] == 20
    ```
"""

from __future__ import annotations

import json
import re
import threading
from array import array
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

__all__ = ["ArrayIndexCache", "LazyArray", "Located", "PathMissingError", "value_at"]

_DECODER = json.JSONDecoder()
_SCAN = _DECODER.scan_once  # type: ignore[attr-defined]
_WS_CHARS = " \t\n\r"
_WS_RE = re.compile(r"[ \t\n\r]*")


def _ws(raw: str, pos: int) -> int:
    match = _WS_RE.match(raw, pos)
    return match.end() if match is not None else pos


def _skip(raw: str, pos: int) -> int:
    """The end of the value at `pos` (decoded by the C decoder and dropped)."""
    return int(_DECODER.raw_decode(raw, pos)[1])


def _char(raw: str, pos: int) -> str:
    if pos >= len(raw):
        msg = "the JSON text ends too early"
        raise ValueError(msg)
    return raw[pos]


class LazyArray(Sequence[Any]):
    """The elements of a JSON array inside a text, located and decoded on demand.

    Example:
        ```python
        arr = LazyArray("[1, [2, 3], 4]", 0)
        assert arr[1] == [2, 3] and len(arr) == 3 and arr[1:] == [[2, 3], 4]
        ```
    """

    def __init__(self, raw: str, start: int, located: Located | None = None) -> None:
        """Read the array that starts at `raw[start]`.

        Args:
            raw: The JSON text.
            start: Where the array's `[` is.
            located: What an earlier walk of this very array in this very text found (see
                `ArrayIndexCache`); the walk goes on from there.
        """
        if _char(raw, start) != "[":
            msg = "not an array"
            raise ValueError(msg)
        self._raw = raw
        self.start = start
        self.end: int | None = None
        """One past the closing `]`, once the whole array has been walked."""
        if located is not None:
            self._starts = array("q", located.starts)
            self._pos, self._done, self.end = located.pos, located.done, located.end
            return
        self._starts = array("q")
        self._pos = _ws(raw, start + 1)
        self._done = _char(raw, self._pos) == "]"
        if self._done:
            self.end = self._pos + 1

    def located_so_far(self) -> Located:
        """What the walk has found so far (for `ArrayIndexCache`)."""
        starts = array("q", self._starts)  # a copy: this array may walk on
        return Located(starts=starts, pos=self._pos, done=self._done, end=self.end)

    def _extend(self, upto: int | None) -> None:
        """Locate elements until index `upto` is known (or the array ends).

        The hot loop of a fetch from a large array: the C scanner steps over each element
        and whitespace is skipped inline.
        """
        raw, pos, starts = self._raw, self._pos, self._starts
        scan, ws = _SCAN, _WS_RE.match
        try:
            while not self._done and (upto is None or len(starts) <= upto):
                starts.append(pos)
                p = scan(raw, pos)[1]
                c = raw[p]
                if c in _WS_CHARS:
                    p = ws(raw, p).end()  # type: ignore[union-attr]
                    c = raw[p]
                if c == ",":
                    pos = p + 1
                    if raw[pos] in _WS_CHARS:  # mostly the one space of `json.dumps`
                        pos += 1
                        if raw[pos] in _WS_CHARS:
                            pos = ws(raw, pos).end()  # type: ignore[union-attr]
                elif c == "]":
                    self._done = True
                    self.end = p + 1
                    pos = p
                else:
                    msg = f"expected ',' or ']' at char {p}"
                    raise ValueError(msg)
        except (IndexError, StopIteration) as exc:
            msg = f"the JSON array starting near char {pos} is not valid JSON"
            raise ValueError(msg) from exc
        finally:
            self._pos = pos

    def locate(self, index: int) -> None:
        """Find where elements `0..index` start (fewer when the array is shorter)."""
        self._extend(index)

    @property
    def located(self) -> int:
        """How many element starts are known."""
        return len(self._starts)

    def start_of(self, index: int) -> int:
        """Where element `index` starts in the text (after `locate(index)`)."""
        return int(self._starts[index])

    def __len__(self) -> int:
        """The number of elements (walks the array once)."""
        self._extend(None)
        return len(self._starts)

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...

    def __getitem__(self, index: int | slice) -> Any:
        """Decode one element (or a list of them, for a slice)."""
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if index < 0:
            raise IndexError(index)
        self._extend(index)
        if index >= len(self._starts):
            raise IndexError(index)
        return _DECODER.raw_decode(self._raw, self._starts[index])[0]

    def __iter__(self) -> Iterator[Any]:
        """Every element, in order."""
        i = 0
        while True:
            try:
                yield self[i]
            except IndexError:
                return
            i += 1

    def decoded(self) -> list[Any]:
        """All elements, decoded (the value itself, for showing it whole)."""
        return list(self)


@dataclass(frozen=True, slots=True)
class Located:
    """Where the elements of an array start, as far as a walk got (offsets into its text).

    Attributes:
        starts: Offsets of the elements found, in order.
        pos: Where the walk stopped.
        done: Whether it reached the closing `]`.
        end: One past the `]`, when done.
    """

    starts: array[int]
    pos: int
    done: bool
    end: int | None


class ArrayIndexCache:
    """The element offsets of large arrays, by record and text, for the next fetch of a page.

    Paging through a 900,000-element array would otherwise walk every element on each
    page (to know how many there are and where page 18,000 starts). An entry is keyed by
    the record id *and* the text's length and hash, so it is used only on the same text
    (which the fetch has read, its access checked, before the entry is looked up); it holds
    offsets into that text, nothing of the text itself. Bounded: the most recent
    `max_records` records, arrays of at least `min_elements` elements.

    Example:
        ```python
        cache = ArrayIndexCache()
        text = "[" + ",".join(["1"] * 20_000) + "]"
        arrays = cache.arrays("AbCdEfGhIjKlMnOpQrStUv", text)
        assert len(value_at(text, (), arrays)) == 20_000
        cache.keep("AbCdEfGhIjKlMnOpQrStUv", text, arrays)
        assert cache.arrays("AbCdEfGhIjKlMnOpQrStUv", text)[0].located == 20_000
        ```
    """

    def __init__(self, *, max_records: int = 8, min_elements: int = 10_000) -> None:
        """Create an empty cache.

        Args:
            max_records: Records whose arrays are kept.
            min_elements: Smaller arrays are walked again (it is cheap).
        """
        self.max_records = max_records
        self.min_elements = min_elements
        self._entries: OrderedDict[tuple[str, int, int], dict[int, Located]] = OrderedDict()
        self._lock = threading.Lock()

    def arrays(self, record_id: str, text: str) -> dict[int, LazyArray]:
        """Fresh `LazyArray`s over `text` that start from what earlier fetches located."""
        key = (record_id, len(text), hash(text))
        with self._lock:
            known = self._entries.get(key)
            if known is not None:
                self._entries.move_to_end(key)
                known = dict(known)
        return {pos: LazyArray(text, pos, found) for pos, found in (known or {}).items()}

    def keep(self, record_id: str, text: str, arrays: dict[int, LazyArray]) -> None:
        """Remember what the walks over `text` located (large arrays only)."""
        large = {
            pos: arr.located_so_far()
            for pos, arr in arrays.items()
            if arr.located >= self.min_elements
        }
        if not large:
            return
        key = (record_id, len(text), hash(text))
        with self._lock:
            entry = self._entries.setdefault(key, {})
            for pos, found in large.items():
                if pos not in entry or len(entry[pos].starts) < len(found.starts):
                    entry[pos] = found
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_records:
                self._entries.popitem(last=False)


def _path_text(parts: Sequence[str | int]) -> str:
    out = "$"
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else "." + part
    return out


def value_at(
    raw: str, parts: Sequence[str | int], arrays: dict[int, LazyArray] | None = None
) -> Any:
    """The value at `parts` in the JSON text `raw`: decoded, or a `LazyArray` for arrays.

    Args:
        raw: JSON text.
        parts: Keys and indexes from the root.
        arrays: The arrays of this text walked before, by where they start: they are used
            (and the arrays this walk reads are added).

    Returns:
        The value.

    Raises:
        ValueError: When the text is not JSON where the walk reads it.
        LookupError: When the path does not exist; the message names how far it got
            (`where` is a placeholder the caller formats safely: see `PathMissingError`).
    """
    pos = _ws(raw, 0)
    walked: list[str | int] = []
    for part in parts:
        c = _char(raw, pos)
        if isinstance(part, int):
            if c != "[":
                raise PathMissingError(walked, f"is {_kind(c)}; [{part}] does not exist")
            elements = _array(raw, pos, arrays)
            elements.locate(part)
            if part >= elements.located:
                size = f"an array of {len(elements)}"
                raise PathMissingError(walked, f"is {size}; [{part}] does not exist")
            pos = elements.start_of(part)
        else:
            if c != "{":
                raise PathMissingError(walked, f"is {_kind(c)}; it has no key {part!r}")
            pos = _ws(raw, pos + 1)
            keys: list[str] = []
            found = None
            while _char(raw, pos) != "}":
                key, pos = _DECODER.raw_decode(raw, pos)
                pos = _ws(raw, pos)
                if _char(raw, pos) != ":":
                    msg = f"expected ':' at char {pos}"
                    raise ValueError(msg)
                pos = _ws(raw, pos + 1)
                if key == part:
                    found = pos
                    break
                keys.append(str(key))
                pos = _ws(raw, _skip(raw, pos))
                if _char(raw, pos) == ",":
                    pos = _ws(raw, pos + 1)
            if found is None:
                raise PathMissingError(walked, f"has no key {part!r}", keys=keys)
            pos = found
        walked.append(part)
    if _char(raw, pos) == "[":
        return _array(raw, pos, arrays)
    return _DECODER.raw_decode(raw, pos)[0]


def _array(raw: str, pos: int, arrays: dict[int, LazyArray] | None) -> LazyArray:
    if arrays is None:
        return LazyArray(raw, pos)
    found = arrays.get(pos)
    if found is None:
        found = arrays[pos] = LazyArray(raw, pos)
    return found


def _kind(first: str) -> str:
    return {
        "{": "an object",
        "[": "an array",
        '"': "a string",
        "t": "a bool",
        "f": "a bool",
        "n": "null",
    }.get(first, "a number")


class PathMissingError(LookupError):
    """A path that does not exist, with where the walk stopped and what it found there.

    Example:
        ```python
        try:
            value_at('{"a": 1}', ("b",))
        except PathMissingError as exc:
            assert exc.keys == ["a"]
        ```
    """

    def __init__(
        self, walked: Sequence[str | int], what: str, *, keys: list[str] | None = None
    ) -> None:
        self.walked = list(walked)
        self.what = what
        self.keys = keys or []
        super().__init__(f"{_path_text(walked)} {what}")
