"""The part of a stored result that one read asks for: a line range, an offset range, or all.

One record for both sides of a read: a view's fetch steps yield it (`views.base.SliceRequest`)
and a store checks and serves it (`stores._chunked.ReadRequest` adds the check and the
serving to these fields).

Example:
    ```python
    request = SliceRequest(start_line=1, end_line=50)
    assert request.offset is None and request.max_size is None
    ```
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SliceRequest"]


@dataclass(frozen=True, slots=True)
class SliceRequest:
    """The part of a stored result that a fetch asks for, in store coordinates.

    Exactly one of the two forms is set: lines (1-based, inclusive) or characters/bytes
    (0-based offset and a length).

    Example:
        ```python
        SliceRequest(start_line=1, end_line=50)
        ```
    """

    start_line: int | None = None
    """First line."""
    end_line: int | None = None
    """Last line (inclusive)."""
    offset: int | None = None
    """First character (byte)."""
    limit: int | None = None
    """Length in characters (bytes)."""
    max_size: int | None = None
    """Most characters (bytes) to read: the reader stops there and marks the read incomplete
    (`None`: up to `RecordInfo.max_read`). A request with no range reads the whole record."""
