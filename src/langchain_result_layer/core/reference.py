r"""References to stored results: `ref://tool-result/<id>/<kind>?<range>`.

A reference names one stored raw result and, optionally, a range of it:

- `?page=2&page_size=50` (pages of the view's unit: rows, lines, hits; 1-based),
- `?start_line=41&end_line=140` (1-based, inclusive, lines split on `\n`),
- `?offset=0&limit=20000` (0-based character offset into the raw result, or bytes for binary),
- `?path=$.items[3]` (JSON views).

Ids carry 128 random bits from `secrets` in 22 URL-safe characters, short enough for a model
to copy exactly. A reference is only a name: every read re-checks who is asking.

Example:
    ```python
    from langchain_result_layer.core.reference import Reference, new_record_id

    ref = Reference(record_id=new_record_id(), kind="log", start_line=41, end_line=140)
    assert Reference.parse(str(ref)) == ref
    ```
"""

from __future__ import annotations

import re
import secrets
import threading
from dataclasses import dataclass, replace
from typing import TypeGuard
from urllib.parse import parse_qsl, quote, urlencode

from langchain_result_layer.errors import InvalidReferenceError

__all__ = [
    "PLAIN_KIND",
    "REFERENCE_PREFIX",
    "Reference",
    "is_kind_name",
    "is_record_id",
    "known_kinds",
    "new_record_id",
    "register_kind",
]

REFERENCE_PREFIX = "ref://tool-result/"
PLAIN_KIND = "text"
"""The kind of the plain text view, the fallback for a result no other view claims.

The one place this name is written outside the views package (`views.text.TextView.kind` is
the same name; the view registry's tests check it): a store keeps a result under it when no
kind is given, and a reference that names no kind (`ref://tool-result/<id>`) means it.
"""
# Matched whole (`fullmatch`): no anchors, so no trailing newline slips through a `$`.
_ID_RE = re.compile(r"[A-Za-z0-9_-]{8,64}")
_KIND_RE = re.compile(r"[a-z][a-z0-9_]{0,31}")
_KNOWN_KINDS: set[str] = set()  # every view registers its kind (`views.registry.ViewRegistry`)
_KINDS_LOCK = threading.Lock()
_INT_FIELDS = ("page", "page_size", "start_line", "end_line", "offset", "limit")
_MAX_REFERENCE_LEN = 2_048
MAX_PAGE_SIZE = 10_000


def is_record_id(value: object) -> TypeGuard[str]:
    """Whether `value` has the shape of a record id (8-64 characters of `[A-Za-z0-9_-]`).

    Example:
        ```python
        assert is_record_id("AbCdEfGhIjKlMnOpQrStUv") and not is_record_id("AbCdEfGh" + chr(10))
        ```
    """
    return isinstance(value, str) and _ID_RE.fullmatch(value) is not None


def is_kind_name(value: object) -> TypeGuard[str]:
    """Whether `value` has the shape of a kind name (`[a-z][a-z0-9_]{0,31}`).

    Example:
        ```python
        assert is_kind_name("rows") and not is_kind_name("Rows")
        ```
    """
    return isinstance(value, str) and _KIND_RE.fullmatch(value) is not None


def register_kind(kind: str) -> None:
    """Make `kind` a kind that references may name (`register_view` calls this).

    Args:
        kind: The kind name.

    Raises:
        ValueError: When `kind` is not a valid kind name.

    Example:
        ```python
        register_kind("csv")
        assert "csv" in known_kinds()
        ```
    """
    if not is_kind_name(kind):
        msg = f"kind must match [a-z][a-z0-9_]{{0,31}}, got {kind!r}"
        raise ValueError(msg)
    with _KINDS_LOCK:
        _KNOWN_KINDS.add(kind)


def known_kinds() -> tuple[str, ...]:
    """The kinds references may name, sorted (the kinds of the views registered so far).

    Example:
        ```python
        assert PLAIN_KIND in known_kinds()
        ```
    """
    with _KINDS_LOCK:
        return tuple(sorted(_KNOWN_KINDS))


def new_record_id() -> str:
    """Return a fresh record id: 128 random bits as 22 URL-safe base64 characters.

    Example:
        ```python
        rid = new_record_id()
        assert len(rid) == 22
        ```
    """
    return secrets.token_urlsafe(16)


@dataclass(frozen=True, slots=True)
class Reference:
    """A parsed `ref://tool-result/...` reference.

    Attributes:
        record_id: Id of the stored raw result.
        kind: The view kind that produced it (`text`, `log`, `rows`, ...).
        page: 1-based page number of the view's unit.
        page_size: Items per page.
        start_line: First line, 1-based.
        end_line: Last line, 1-based, inclusive.
        offset: 0-based character (or byte) offset into the raw result.
        limit: Number of characters (or bytes) from `offset`.
        path: A JSON path inside the result, for JSON views.

    Example:
        ```python
        ref = Reference.parse("ref://tool-result/AbCdEfGhIjKlMnOpQrStUv/rows?page=2&page_size=50")
        assert ref.page == 2
        ```
    """

    record_id: str
    kind: str = PLAIN_KIND
    page: int | None = None
    page_size: int | None = None
    start_line: int | None = None
    end_line: int | None = None
    offset: int | None = None
    limit: int | None = None
    path: str | None = None

    def __post_init__(self) -> None:
        """Validate every field; raises `InvalidReferenceError`."""
        text = self._format()
        if not is_record_id(self.record_id):
            raise InvalidReferenceError(text, "the id must be 8-64 characters of [A-Za-z0-9_-]")
        if not is_kind_name(self.kind):
            raise InvalidReferenceError(text, f"unknown kind {self.kind!r}")
        for name in _INT_FIELDS:
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                raise InvalidReferenceError(text, f"{name} must be an integer")
            minimum = 0 if name == "offset" else 1
            if value < minimum:
                raise InvalidReferenceError(text, f"{name} must be >= {minimum}, got {value}")
        if self.page_size is not None and self.page_size > MAX_PAGE_SIZE:
            raise InvalidReferenceError(text, f"page_size must be <= {MAX_PAGE_SIZE}")
        modes = [
            self.page is not None or self.page_size is not None,
            self.start_line is not None or self.end_line is not None,
            self.offset is not None or self.limit is not None,
        ]
        if sum(modes) > 1:
            raise InvalidReferenceError(
                text, "use one range form: page/page_size, start_line/end_line, or offset/limit"
            )
        if (
            self.start_line is not None
            and self.end_line is not None
            and self.end_line < self.start_line
        ):
            raise InvalidReferenceError(
                text, f"end_line ({self.end_line}) is before start_line ({self.start_line})"
            )

    @property
    def has_range(self) -> bool:
        """Whether the reference selects a part of the result."""
        return any(getattr(self, name) is not None for name in _INT_FIELDS) or self.path is not None

    def base(self) -> Reference:
        """The same record and kind without any range.

        Returns:
            The whole-result reference.
        """
        return Reference(record_id=self.record_id, kind=self.kind)

    def with_lines(self, start_line: int, end_line: int) -> Reference:
        """A reference to lines `start_line..end_line` (1-based, inclusive) of the same record.

        Args:
            start_line: First line.
            end_line: Last line.

        Returns:
            The new reference.
        """
        return replace(self.base(), start_line=start_line, end_line=end_line)

    def with_page(self, page: int, page_size: int | None = None) -> Reference:
        """A reference to one page of the same record (of the same JSON array, with a path).

        Args:
            page: 1-based page.
            page_size: Items per page (kept from this reference when omitted).

        Returns:
            The new reference.

        Example:
            ```python
            ref = Reference.parse("ref://tool-result/AbCdEfGhIjKlMnOpQrStUv/json?path=$.items")
            assert ref.with_page(2, 50).path == "$.items"
            ```
        """
        size = page_size if page_size is not None else self.page_size
        return replace(self.base(), page=page, page_size=size, path=self.path)

    def with_chars(self, offset: int, limit: int | None = None) -> Reference:
        """A reference to a character (or byte) range of the same record.

        Args:
            offset: 0-based start.
            limit: Length.

        Returns:
            The new reference.
        """
        return replace(self.base(), offset=offset, limit=limit)

    def with_path(self, path: str) -> Reference:
        """A reference to a JSON path inside the same record.

        Args:
            path: JSON path such as `$.items[3]`.

        Returns:
            The new reference.
        """
        return replace(self.base(), path=path)

    def _format(self) -> str:
        params: list[tuple[str, str]] = [
            (name, str(getattr(self, name)))
            for name in _INT_FIELDS
            if getattr(self, name) is not None
        ]
        if self.path is not None:
            params.append(("path", self.path))
        query = urlencode(params, quote_via=quote, safe="$.[]*:-_")
        # A trailing '.' or ':' would be taken for sentence punctuation by `parse`.
        if query and query[-1] in ".,;:!?)":
            query = f"{query[:-1]}%{ord(query[-1]):02X}"
        head = f"{REFERENCE_PREFIX}{self.record_id}/{self.kind}"
        return f"{head}?{query}" if query else head

    def __str__(self) -> str:
        """The canonical `ref://tool-result/...` form."""
        return self._format()

    @classmethod
    def parse(cls, text: str) -> Reference:
        """Parse a reference, tolerating surrounding whitespace, quotes and angle brackets.

        Args:
            text: The reference as a model or a user wrote it.

        Returns:
            The parsed reference.

        Raises:
            InvalidReferenceError: With a message that says what to fix.
        """
        if not isinstance(text, str):
            raise InvalidReferenceError(repr(text), "a reference must be a string")
        if len(text) > _MAX_REFERENCE_LEN:
            raise InvalidReferenceError(text, f"longer than {_MAX_REFERENCE_LEN} characters")
        # Tolerate what a model copies around a reference: quotes, backticks, angle brackets,
        # and the sentence punctuation that follows it in a notice.
        raw = text.strip()
        for _ in range(3):
            raw = raw.strip("`'\"<>").rstrip(".,;:!?").strip()
            for opening, closing in (("(", ")"), ("[", "]")):
                if raw.startswith(opening):
                    raw = raw[1:]
                    if raw.endswith(closing):
                        raw = raw[:-1]
            if raw.endswith(")") and "(" not in raw:
                raw = raw[:-1]
        if not raw.startswith(REFERENCE_PREFIX):
            raise InvalidReferenceError(
                text, f"expected {REFERENCE_PREFIX}<id>/<kind>[?range], as shown in the notice."
            )
        rest = raw[len(REFERENCE_PREFIX) :]
        path_part, _, query = rest.partition("?")
        pieces = path_part.strip("/").split("/")
        if len(pieces) == 1 and pieces[0]:
            record_id, kind = pieces[0], PLAIN_KIND
        elif len(pieces) == 2 and all(pieces):
            record_id, kind = pieces
        else:
            raise InvalidReferenceError(
                text, "expected exactly <id>/<kind> after ref://tool-result/"
            )
        known = known_kinds()
        if kind not in known:
            raise InvalidReferenceError(
                text, f"unknown kind {kind!r}; the known kinds are {', '.join(known)}"
            )
        values: dict[str, int | str] = {}
        try:
            pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
        except ValueError as exc:
            raise InvalidReferenceError(text, f"malformed query string ({exc})") from None
        for key, value in pairs:
            if key in values:
                raise InvalidReferenceError(text, f"{key} is given twice")
            if key in _INT_FIELDS:
                if not re.fullmatch(r"\d{1,12}", value):
                    raise InvalidReferenceError(text, f"{key} must be a non-negative integer")
                values[key] = int(value)
            elif key == "path":
                values[key] = value
            else:
                raise InvalidReferenceError(text, f"unknown parameter {key!r}")
        try:
            return cls(record_id=record_id, kind=kind, **values)  # type: ignore[arg-type]
        except InvalidReferenceError as exc:  # name the text the caller gave, not our form
            raise InvalidReferenceError(text, exc.reason) from None
