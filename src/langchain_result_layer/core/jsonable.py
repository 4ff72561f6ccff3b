"""Deterministic JSON rendering of whatever a tool returns; total and bounded.

Tools return dicts, lists, numbers, dataclasses, Pydantic models, datetimes, decimals, sets,
bytes, generators. `to_json_text` renders all of them the same way every time, so equal
results give equal text (and equal token counts), and it never raises:

- an object whose `repr` (or `str`, `model_dump`, iteration, a key's `str`) raises becomes a
  short marker naming its type and the error;
- an integer too long for `str` (over Python's 4,300-digit limit) is written in hexadecimal
  inside a marker that says so (the value is kept exactly);
- a cycle (a container that contains itself) becomes a marker; so does anything nested
  deeper than 64 levels, and everything after the first `MAX_VALUES` values;
- an iterable that is not a list, tuple, set or mapping (a generator, an iterator, a
  `range`, a file) is read at most `MAX_ITEMS` items and `MAX_ITER_SECONDS` seconds, and all
  the iterables of one output together at most `MAX_ITEMS_PER_RESULT` items and
  `MAX_ITER_SECONDS_PER_RESULT` seconds (a generator of generators cannot multiply the
  bound); when one was not read to its end, it becomes
  `{"generator": "<what was read and why it stopped>", "items": [...]}`, so the view says so.

`materialize` reads the one-shot iterators of a tool output once (bounded the same way), so
that measuring the output does not consume what the view and the store must see.

Example:
    ```python
    import datetime as dt

    from langchain_result_layer.core.jsonable import to_json_text

    text = to_json_text({"at": dt.date(2024, 1, 2), "n": {3, 1}})
    assert text == '{"at": "2024-01-02", "n": [1, 3]}'
    ```
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import decimal
import enum
import itertools
import json
import math
import sys
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import PurePath
from typing import Any

__all__ = [
    "MAX_ITEMS",
    "MAX_ITEMS_PER_RESULT",
    "MAX_ITER_SECONDS",
    "MAX_ITER_SECONDS_PER_RESULT",
    "MAX_PARSED_VALUES",
    "MAX_SHARED_VALUES",
    "MAX_VALUES",
    "materialize",
    "parse_would_exceed",
    "to_json_text",
    "to_jsonable",
]

_MAX_DEPTH = 64
MAX_ITEMS = 10_000
"""Most items read from one generator or other non-container iterable."""
MAX_ITER_SECONDS = 0.5
"""Longest the layer spends reading one generator (a generator that blocks still blocks)."""
MAX_ITEMS_PER_RESULT = 100_000
"""Most items read from all the generators of one tool output together."""
MAX_ITER_SECONDS_PER_RESULT = 1.0
"""Longest the layer spends reading all the generators of one tool output together."""
MAX_VALUES = 20_000_000
"""Most values written by one call, a shared container counted each time it is written."""
MAX_SHARED_VALUES = 250_000
"""Most values written again because a container appears several times (a structure that
shares itself 2**80 times is cut here, not walked)."""

MAX_PARSED_VALUES = 500_000
"""Most values a view parses out of one text (JSON, JSON lines, a table): above it, a view
shows the text as text. 5,000,000 empty objects (15 MB) would take 10 s and 640 MB to parse;
500,000 values take well under a second and tens of MB."""

_CYCLE = "<cycle: this value contains itself>"
_TOO_DEEP = "<nested too deep>"
_TOO_MANY = "<not converted: more than {:,} values in one result>"
_TOO_SHARED = "<not converted: more than {:,} values repeated from shared containers>"
_LOG10_2 = math.log10(2)


def _bytes_notice(data: bytes) -> str:
    head = base64.b64encode(data[:48]).decode()
    return f"<binary: {len(data):,} bytes, base64 head {head}>"


def _type_name(value: Any) -> str:
    try:
        return str(type(value).__qualname__)
    except Exception:
        return "object"


def _failed(value: Any, action: str, exc: BaseException) -> str:
    try:
        error = type(exc).__name__
    except Exception:
        error = "error"
    return f"<unrepresentable {_type_name(value)}: its {action} raised {error}>"


def _big_int(value: int) -> str:
    digits = int(value.bit_length() * _LOG10_2) + 1
    return f"<int of about {digits:,} decimal digits, in hexadecimal: {hex(value)}>"


def _int(value: int) -> int | str:
    """The int itself, or a hexadecimal marker when it is too long for `str` (and JSON)."""
    # Python refuses `str()` of ints over `sys.get_int_max_str_digits()` digits (4,300 by
    # default), and json.dumps with it; hexadecimal has no such limit.
    limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()
    if not limit:
        return value
    digits = int(value.bit_length() * _LOG10_2) + 1  # an upper bound
    return value if digits < limit else _big_int(value)


_PLAIN_TYPES = frozenset({str, bool, type(None)})
_SMALL_INT = 10**1_000


def _plain(value: Any) -> bool:
    """Already JSON-ready as it is: a str, bool, None, a short int or a finite float."""
    kind = type(value)
    if kind in _PLAIN_TYPES:
        return True
    if kind is int:
        return bool(-_SMALL_INT < value < _SMALL_INT)
    return kind is float and bool(value - value == 0)


@dataclasses.dataclass(slots=True)
class _Walk:
    """State of one conversion: values counted, containers on the path, containers done."""

    count: int = 0
    """Values converted so far, a shared container counted each time it appears."""
    shared: int = 0
    """Values written again because a container appears more than once."""
    path: set[int] = dataclasses.field(default_factory=set)
    """Ids of the containers being converted (a cycle comes back to one of them)."""
    done: dict[int, tuple[Any, int]] = dataclasses.field(default_factory=dict)
    """Converted containers by id, with their size: shared structure is converted once."""
    items_left: int = MAX_ITEMS_PER_RESULT
    """Generator items this conversion may still read."""
    deadline: float | None = None
    """When this conversion stops reading generators (set by the first one it reads)."""


def _read_bounded(iterable: Any, walk: _Walk) -> tuple[list[Any], str | None]:
    """Read an iterable within its own and the whole output's limits; why it stopped."""
    now = time.monotonic()
    if walk.deadline is None:
        walk.deadline = now + MAX_ITER_SECONDS_PER_RESULT
    own_deadline = now + MAX_ITER_SECONDS
    deadline = min(own_deadline, walk.deadline)
    cap = min(MAX_ITEMS, walk.items_left) if now <= walk.deadline else 0
    items: list[Any] = []
    iterator = iter(iterable)
    reason: str | None = None
    for item in itertools.islice(iterator, cap):
        items.append(item)
        if time.monotonic() > deadline:
            reason = (
                f"the layer's {MAX_ITER_SECONDS:g} s limit"
                if deadline == own_deadline
                else f"the layer's {MAX_ITER_SECONDS_PER_RESULT:g} s limit for one result"
            )
            break
    walk.items_left -= len(items)
    if reason is not None:
        return items, reason
    if len(items) < cap:
        return items, None
    try:
        next(iterator)
    except StopIteration:
        return items, None
    if cap == MAX_ITEMS:
        return items, f"the layer's {MAX_ITEMS:,}-item limit"
    if now > walk.deadline:
        return items, f"the layer's {MAX_ITER_SECONDS_PER_RESULT:g} s limit for one result"
    return items, f"the layer's {MAX_ITEMS_PER_RESULT:,}-item limit for one result"


def _bounded_note(value: Any, count: int, reason: str) -> str:
    return f"{_type_name(value)}: stopped after {count:,} items ({reason}); the rest was not read"


def to_jsonable(value: Any, _depth: int = 0, _walk: _Walk | None = None) -> Any:
    """Convert `value` to JSON-ready data (dicts, lists, strings, numbers, booleans, None).

    Never raises (`Exception`s of the value's own methods become markers); bounded in
    depth, values and generator items (see the module docstring).

    Args:
        value: Anything.

    Returns:
        JSON-ready data. Unknown objects become their `repr`; bytes become a short notice.

    Example:
        ```python
        assert to_jsonable((1, 2)) == [1, 2]
        ```
    """
    walk = _walk if _walk is not None else _Walk()
    try:
        return _convert(value, _depth, walk)
    except RecursionError:
        return _TOO_DEEP
    except Exception as exc:
        return _failed(value, "conversion", exc)


def _convert(value: Any, depth: int, walk: _Walk) -> Any:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return _int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if depth > _MAX_DEPTH:
        return _TOO_DEEP
    walk.count += 1
    if walk.count > MAX_VALUES:
        return _TOO_MANY.format(MAX_VALUES)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _bytes_notice(bytes(value))
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value, depth + 1, walk)
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (uuid.UUID, PurePath)):
        return str(value)
    key = id(value)
    if key in walk.path:
        return _CYCLE
    done = walk.done.get(key)
    if done is not None:  # shared: converted already, but written again: counted again
        converted, size = done
        if walk.count + size > MAX_VALUES or walk.shared + size > MAX_SHARED_VALUES:
            walk.count += 1
            return _TOO_SHARED.format(MAX_SHARED_VALUES)
        walk.count += size
        walk.shared += size
        return converted
    start = walk.count
    walk.path.add(key)
    try:
        converted = _container(value, depth, walk)
    finally:
        walk.path.discard(key)
    walk.done[key] = (converted, walk.count - start)
    return converted


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, int) and not isinstance(key, bool):
        converted = _int(key)
        return str(converted)
    try:
        return str(key)
    except Exception as exc:
        return _failed(key, "str", exc)


def _container(value: Any, depth: int, walk: _Walk) -> Any:
    kind = type(value)
    if kind is dict:  # the common containers first, without ABC checks
        walk.count += len(value)
        return {
            k if type(k) is str else _key(k): v if _plain(v) else to_jsonable(v, depth + 1, walk)
            for k, v in value.items()
        }
    if kind is list or kind is tuple:
        walk.count += len(value)
        return [v if _plain(v) else to_jsonable(v, depth + 1, walk) for v in value]
    if isinstance(value, Mapping):
        return {_key(k): to_jsonable(v, depth + 1, walk) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: to_jsonable(getattr(value, f.name), depth + 1, walk)
            for f in dataclasses.fields(value)
        }
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            dumped = dump()
        except Exception:  # fall through to repr
            return _repr(value)
        return to_jsonable(dumped, depth + 1, walk)
    if isinstance(value, (set, frozenset)):
        items = [to_jsonable(v, depth + 1, walk) for v in value]
        try:
            return sorted(items)
        except TypeError:
            return sorted(items, key=lambda v: json.dumps(v, sort_keys=True, default=str))
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v, depth + 1, walk) for v in value]
    mapping = getattr(value, "_mapping", None)  # SQLAlchemy Row
    if isinstance(mapping, Mapping):
        return {_key(k): to_jsonable(v, depth + 1, walk) for k, v in mapping.items()}
    if hasattr(value, "__iter__") and not isinstance(value, (str, bytes)):
        try:
            items, stopped = _read_bounded(value, walk)
        except Exception as exc:
            return _failed(value, "iteration", exc)
        converted = [to_jsonable(v, depth + 1, walk) for v in items]
        if stopped is None:
            return converted
        return {"generator": _bounded_note(value, len(items), stopped), "items": converted}
    return _repr(value)


def _repr(value: Any) -> str:
    try:
        return repr(value)
    except Exception as exc:
        return _failed(value, "repr", exc)


def materialize(value: Any) -> Any:
    """Read the one-shot iterators in a tool output once, so every later reader sees them.

    Generators and other iterators (at the top, or inside dicts, lists and tuples) become
    lists, read within `MAX_ITEMS` and `MAX_ITER_SECONDS`; one that was not read to its end
    becomes `{"generator": "<note>", "items": [...]}`. Everything else is returned as it is
    (containers are rebuilt only when something inside them changed).

    Args:
        value: A tool output.

    Returns:
        The output with its iterators read.

    Example:
        ```python
        out = materialize({"rows": (n for n in range(3))})
        assert out == {"rows": [0, 1, 2]}
        ```
    """
    try:
        return _materialize(value, 0, _Walk())
    except Exception as exc:
        return _failed(value, "iteration", exc)


def _materialize(value: Any, depth: int, walk: _Walk) -> Any:
    if depth > _MAX_DEPTH or isinstance(value, (str, bytes, bytearray, int, float)):
        return value
    if isinstance(value, Iterator):
        items, stopped = _read_bounded(value, walk)
        items = [_materialize(v, depth + 1, walk) for v in items]
        if stopped is None:
            return items
        return {"generator": _bounded_note(value, len(items), stopped), "items": items}
    key = id(value)
    if not isinstance(value, (dict, list, tuple)) or key in walk.path:
        return value
    if key in walk.done:  # shared structure: done once
        return walk.done[key][0]
    walk.path.add(key)
    try:
        if isinstance(value, dict):
            out = {k: _materialize(v, depth + 1, walk) for k, v in value.items()}
            changed = any(out[k] is not v for k, v in value.items())
        else:
            seq = [_materialize(v, depth + 1, walk) for v in value]
            changed = any(a is not b for a, b in zip(seq, value, strict=True))
            out = seq if isinstance(value, list) else tuple(seq)  # type: ignore[assignment]
    finally:
        walk.path.discard(key)
    result = out if changed else value
    walk.done[key] = (result, 0)
    return result


def parse_would_exceed(text: str, limit: int = MAX_PARSED_VALUES) -> bool:
    """Whether parsing `text` could make more than `limit` values (a cheap upper bound).

    Every value after the first of a JSON array or object follows a `,`, every object value
    a `:`, every JSON line and table row a newline, every table cell a separator: counting
    those (C-speed `str.count`, also inside strings, so the bound errs towards refusing)
    bounds the number of values from above.

    Args:
        text: The text a view is about to parse.
        limit: The most values allowed.

    Returns:
        `True` when the text may hold more than `limit` values.

    Example:
        ```python
        assert parse_would_exceed("[" + "{}," * 600_000 + "{}]")
        assert not parse_would_exceed('{"a": [1, 2, 3]}')
        ```
    """
    if len(text) < limit:
        return False
    total = 0
    # Block by block, so that a bomb is recognised in its first blocks, not after whole-text
    # passes (the count is the same when the text turns out to hold few values).
    for start in range(0, len(text), _COUNT_BLOCK):
        end = start + _COUNT_BLOCK
        for separator in (",", ":", "\n", "\t", ";", "|"):
            total += text.count(separator, start, end)
        if total > limit:
            return True
    return False


_COUNT_BLOCK = 1 << 22


def to_json_text(value: Any, *, indent: int | None = None) -> str:
    """Render `value` as deterministic JSON text (non-ASCII kept, key order kept).

    Never raises (see the module docstring).

    Args:
        value: Anything.
        indent: JSON indentation (`None`: compact, one line).

    Returns:
        The JSON text.

    Example:
        ```python
        assert to_json_text([1, "é"]) == '[1, "é"]'
        ```
    """
    data = to_jsonable(value)
    try:
        return json.dumps(data, ensure_ascii=False, indent=indent)
    except Exception as exc:  # to_jsonable returns plain data; a last resort all the same
        return json.dumps(_failed(value, "JSON rendering", exc))
