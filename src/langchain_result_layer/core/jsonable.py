"""Deterministic JSON rendering of whatever a tool returns.

Tools return dicts, lists, numbers, dataclasses, Pydantic models, datetimes, decimals, sets,
bytes. `to_json_text` renders all of them the same way every time, so equal results give equal
text (and equal token counts), and never raises.

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
import json
import math
import uuid
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

__all__ = ["to_json_text", "to_jsonable"]

_MAX_DEPTH = 64


def _bytes_notice(data: bytes) -> str:
    head = base64.b64encode(data[:48]).decode()
    return f"<binary: {len(data):,} bytes, base64 head {head}>"


def to_jsonable(value: Any, _depth: int = 0) -> Any:
    """Convert `value` to JSON-ready data (dicts, lists, strings, numbers, booleans, None).

    Args:
        value: Anything.

    Returns:
        JSON-ready data. Unknown objects become their `repr`; bytes become a short notice.

    Example:
        ```python
        assert to_jsonable((1, 2)) == [1, 2]
        ```
    """
    if _depth > _MAX_DEPTH:
        return "<nested too deep>"
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _bytes_notice(bytes(value))
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value, _depth + 1)
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (uuid.UUID, PurePath)):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v, _depth + 1) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: to_jsonable(getattr(value, f.name), _depth + 1)
            for f in dataclasses.fields(value)
        }
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return to_jsonable(dump(), _depth + 1)
        except Exception:  # fall through to repr
            return repr(value)
    if isinstance(value, (set, frozenset)):
        items = [to_jsonable(v, _depth + 1) for v in value]
        try:
            return sorted(items)
        except TypeError:
            return sorted(items, key=lambda v: json.dumps(v, sort_keys=True, default=str))
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v, _depth + 1) for v in value]
    mapping = getattr(value, "_mapping", None)  # SQLAlchemy Row
    if isinstance(mapping, Mapping):
        return {str(k): to_jsonable(v, _depth + 1) for k, v in mapping.items()}
    if hasattr(value, "__iter__") and not isinstance(value, (str, bytes)):
        try:
            return [to_jsonable(v, _depth + 1) for v in value]
        except Exception:  # not really iterable
            return repr(value)
    return repr(value)


def to_json_text(value: Any, *, indent: int | None = None) -> str:
    """Render `value` as deterministic JSON text (non-ASCII kept, key order kept).

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
    return json.dumps(to_jsonable(value), ensure_ascii=False, indent=indent)
