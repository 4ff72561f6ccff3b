"""The unified result protocol: `ResultView`.

Every kind of view (text, command, log, rows, file, JSON, search hits, binary, blocks)
describes itself with the same JSON-serialisable record. It is what a processed
`ToolMessage.artifact` carries, and the model-visible text is rendered from it.

- `summary` holds facts only (counts, ranges, distributions).
- `items` holds the evidence shown (segments of text, rows, hits, templates, windows).
- `observations` holds inferences, kept apart from facts.
- `references` maps names (`all`, `next`, `current`, `first_error`, ...) to references.
- `omitted` lists exactly what was left out, as line and character ranges.

One artifact shape, always: in process a processed `ToolMessage.artifact` is a `ResultView`;
a checkpoint stores it as a dict that carries the `protocol` marker (a field of the view, so
every serializer keeps it), and `ResultView.from_artifact` turns that dict back into an equal
view. The tool's own artifact (`response_format="content_and_artifact"`) is always in
`original_artifact`, whatever the size of the result. The view's own fields stay small: at
most the size of the text the model sees plus a small constant (`compact`), since the shown
evidence is in the message content already.

Example:
    ```python
    from langchain_result_layer.core.view import ResultView

    view = ResultView(kind="text", summary={"lines": 3}, total=3, unit="lines", shown=3)
    again = ResultView.from_artifact(view.to_dict())
    assert again == view
    ```
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

__all__ = ["ARTIFACT_MARKER", "OmittedRange", "OmittedTotals", "ResultView"]

ARTIFACT_MARKER = "langchain_result_layer.ResultView/1"
"""Value of the `protocol` key that identifies a serialised `ResultView`."""

_MAX_KEPT_RANGES = 64


@dataclass(slots=True)
class OmittedRange:
    """One contiguous stretch of the (normalised) original that the view leaves out.

    Line numbers are 1-based and inclusive and split on newlines; they are the same in the raw
    result and in its normalised form (normalisation never adds or removes a newline).
    Character offsets are 0-based, end-exclusive, in the normalised text.

    Example:
        ```python
        r = OmittedRange(start_line=41, end_line=99, start_char=1000, end_char=5000, lines=59)
        assert r.chars == 4000
        ```
    """

    start_line: int

    """First omitted line (possibly only its tail is omitted)."""
    end_line: int
    """Last omitted line (possibly only its head is omitted)."""
    start_char: int
    """First omitted character."""
    end_char: int
    """One past the last omitted character."""
    lines: int
    """Number of whole lines omitted."""
    partial_start: bool = False
    """Whether `start_line` is only partly omitted."""
    partial_end: bool = False
    """Whether `end_line` is only partly omitted."""

    @property
    def chars(self) -> int:
        """Number of characters omitted."""
        return self.end_char - self.start_char

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "start_line": self.start_line,
            "end_line": self.end_line,
            "start_char": self.start_char,
            "end_char": self.end_char,
            "lines": self.lines,
            "partial_start": self.partial_start,
            "partial_end": self.partial_end,
            "chars": self.chars,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> OmittedRange:
        """Inverse of `to_dict`.

        Args:
            data: A dict produced by `to_dict`.

        Returns:
            The range.
        """
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


class OmittedTotals:
    """What a record's `omitted` ranges add up to (`ResultView` and `TextTruncation` have it).

    Example:
        ```python
        view = ResultView(kind="text", omitted=[OmittedRange(3, 9, 40, 400, lines=7)])
        assert (view.omitted_chars, view.omitted_lines) == (360, 7)
        ```
    """

    __slots__ = ()

    omitted: list[OmittedRange]
    """The ranges left out (the record's field)."""

    @property
    def omitted_chars(self) -> int:
        """Total characters left out."""
        return sum(r.chars for r in self.omitted)

    @property
    def omitted_lines(self) -> int:
        """Total whole lines left out."""
        return sum(r.lines for r in self.omitted)


@dataclass(slots=True)
class ResultView(OmittedTotals):
    """Structured record of what the model was shown for one tool result.

    Example:
        ```python
        view = ResultView(kind="rows", total=40_000, unit="rows", shown=50, truncated=True)
        view.references["next"] = "ref://tool-result/AbCdEfGhIjKlMnOpQrStUv/rows?page=2"
        ```
    """

    kind: str

    """View kind: `text`, `command`, `log`, `rows`, `file`, `json`, `search`, `binary`,

    `blocks`, or a user-registered kind."""
    summary: dict[str, Any] = field(default_factory=dict)
    """Facts only: counts, ranges, distributions."""
    items: list[dict[str, Any]] = field(default_factory=list)
    """Evidence shown, each a JSON-ready dict with a `type` key."""
    total: int | None = None
    """How many units the result holds (lines, rows, hits, keys), when known."""
    unit: str = "lines"
    """What `total` and `shown` count."""
    shown: int = 0
    """How many units the view shows (fully or partly)."""
    observations: list[str] = field(default_factory=list)
    """Inferences drawn from the facts, if any."""
    references: dict[str, str] = field(default_factory=dict)
    """Named references, for example `all`, `next`, `first_error`."""
    omitted: list[OmittedRange] = field(default_factory=list)
    """Exactly what was left out."""
    truncated: bool = False
    """Whether anything was left out."""
    original_chars: int = 0
    """Characters of the normalised original."""
    original_lines: int = 0
    """Lines of the original."""
    original_bytes: int = 0
    """UTF-8 bytes of the raw original (bytes for binary results)."""
    shown_chars: int = 0
    """Characters of the rendered view (what the model sees)."""
    shown_tokens: int = 0
    """Tokens of the rendered view under `counter`."""
    budget_tokens: int = 0
    """The token budget the view was rendered for."""
    budget_chars: int = 0
    """The character budget the view was rendered for."""
    counter: str = ""
    """Name of the token counter used."""
    normalised: bool = False
    """Whether the view's text differs from the raw text (ANSI codes removed, carriage-return
    progress collapsed, control characters replaced)."""
    record_id: str | None = None
    """Id of the stored raw result, when stored."""
    stored: bool = False
    """Whether the raw result is in the store."""
    store_error: str | None = None
    """Why the raw result could not be stored, if it could not."""
    tool_name: str | None = None
    """Name of the tool that produced the result."""
    status: str = "success"
    """`success` or `error`, from the `ToolMessage`."""
    original_artifact: Any = None
    """The tool's own artifact, untouched."""
    compacted: bool = False
    """Whether `compact` dropped evidence texts, observations or ranges to keep the record small
    (they are in the message content or the store)."""
    protocol: str = ARTIFACT_MARKER
    """The marker that identifies the record in a checkpoint (do not change)."""

    def record_size(self) -> int:
        """Characters of the record's JSON form, without the tool's own artifact.

        Returns:
            The size.
        """
        return _RecordSize(self).total()

    def compact(self, *, limit: int) -> ResultView:
        """Shrink the record to at most `limit` characters of JSON (the tool's artifact aside).

        Step by step, until it fits: long texts of shown items (they are in the message
        content) become their lengths; observations go; all but the first omitted ranges go
        (the notice states them, the store has the data); lists of shown values become their
        counts; the summary keeps only scalar facts and short strings; items keep only
        theirs. Counts, references and sizes always stay.

        Args:
            limit: Most characters (typically the shown text's length plus a constant).

        Returns:
            The same view, updated (`compacted` tells whether anything was dropped).
        """
        steps: tuple[Callable[[ResultView], None], ...] = (
            lambda v: setattr(v, "items", [_without_texts(i, 200, False) for i in v.items]),
            lambda v: setattr(v, "observations", []),
            _cut_ranges,
            lambda v: setattr(v, "items", [_scalars(i) for i in v.items]),
            lambda v: setattr(v, "summary", _scalars(v.summary)),
            _runs,
            _cut_items,
        )
        size = _RecordSize(self)  # each field serialised again only when a step replaced it
        texts: tuple[list[dict[str, Any]], int] | None = None  # of the items measured last
        for step in steps:
            if texts is None or texts[0] is not self.items:
                texts = (self.items, _item_texts(self))
            if texts[1] <= limit and size.total() <= limit:
                break
            self.compacted = True
            step(self)
        return self

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the original artifact is kept as is, not converted).

        Returns:
            A dict with a `protocol` marker, accepted by `from_artifact`.
        """
        data: dict[str, Any] = {"protocol": ARTIFACT_MARKER}
        for f in fields(self):
            data[f.name] = _field_json(f.name, getattr(self, f.name))
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ResultView:
        """Inverse of `to_dict`; unknown keys are ignored.

        Args:
            data: A dict produced by `to_dict` (for example after a checkpoint round trip).

        Returns:
            The view.
        """
        names = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in data.items() if k in names}
        kwargs["omitted"] = [
            r if isinstance(r, OmittedRange) else OmittedRange.from_dict(r)
            for r in kwargs.get("omitted", [])
        ]
        return cls(**kwargs)

    @staticmethod
    def is_view_artifact(artifact: object) -> bool:
        """Whether `artifact` is a `ResultView` or its serialised dict.

        Args:
            artifact: A `ToolMessage.artifact`.

        Returns:
            `True` for views produced by this package.
        """
        if isinstance(artifact, ResultView):
            return True
        return isinstance(artifact, dict) and artifact.get("protocol") == ARTIFACT_MARKER

    @classmethod
    def from_artifact(cls, artifact: object) -> ResultView | None:
        """Recover a view from a `ToolMessage.artifact` (object or checkpointed dict).

        Args:
            artifact: The artifact.

        Returns:
            The view, or `None` when the artifact is not one of ours.
        """
        if isinstance(artifact, ResultView):
            return artifact
        if isinstance(artifact, dict) and artifact.get("protocol") == ARTIFACT_MARKER:
            return cls.from_dict(artifact)
        # A dataclass restored by a serializer that dropped the marker.
        if isinstance(artifact, dict) and {"kind", "omitted", "budget_tokens"} <= artifact.keys():
            return cls.from_dict(artifact)
        return None


class _RecordSize:
    """The length of `view.to_dict()` as JSON (no `original_artifact`), field by field.

    The JSON of a dict is `{` + `"key": value` pairs joined by `, ` + `}`, so its length is
    the sum of its fields' lengths plus the separators; a field is serialised again only
    when it is no longer the object last measured (`compact`'s steps replace fields, never
    edit them in place).
    """

    __slots__ = ("_seen", "view")

    def __init__(self, view: ResultView) -> None:
        self.view = view
        self._seen: dict[str, tuple[object, int]] = {}

    def total(self) -> int:
        size = 0  # `{` and `}` make up for the first field's missing `, `
        seen = self._seen
        for f in fields(self.view):
            name = f.name
            if name == "original_artifact":
                continue
            value = getattr(self.view, name)
            known = seen.get(name)
            if known is None or known[0] is not value:
                known = (value, len(_dumps(_field_json(name, value))))
                seen[name] = known
            size += len(name) + 6 + known[1]  # `, "name": value`
        return size


def _item_texts(view: ResultView) -> int:
    """A lower bound of the characters the items' texts take in the record's JSON.

    Every text that is an item's value, or an element of a list that is one, is in the
    JSON whole and quoted (escaping only lengthens it): a text counts its length and its two
    quotes, a list of `n` texts also its brackets and separators (`4 * n` in all), so a
    view whose items carry more than the limit needs no exact measure to know it is over.
    """
    total = 0
    for item in view.items:
        for value in item.values():
            if isinstance(value, str):
                total += len(value) + 2
            elif isinstance(value, list):
                try:  # a list of texts (a window's lines): one C-level join
                    total += len("".join(value)) + 4 * len(value)
                except TypeError:
                    total += sum(len(v) + 2 for v in value if isinstance(v, str))
    return total


def _field_json(name: str, value: Any) -> Any:
    """A field's value as `ResultView.to_dict` gives it."""
    if name == "omitted":
        return [r.to_dict() for r in value]
    if isinstance(value, (dict, list)) and name != "original_artifact":
        return _copy_json(value)
    return value


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _without_texts(
    item: dict[str, Any], longest: int, lists: bool, depth: int = 0
) -> dict[str, Any]:
    """`item` with texts over `longest` chars (and, with `lists`, lists of texts) as lengths."""
    out: dict[str, Any] = {}
    for key, value in item.items():
        if isinstance(value, str) and len(value) > longest:
            out[f"{key}_chars"] = len(value)
        elif isinstance(value, dict) and depth < 4:
            out[key] = _without_texts(value, longest, lists, depth + 1)
        elif lists and isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            out[f"{key}_count"] = len(value)
        elif isinstance(value, list) and depth < 4:
            out[key] = [
                _without_texts(v, longest, lists, depth + 1) if isinstance(v, dict) else v
                for v in value
            ]
        else:
            out[key] = value
    return out


def _small(value: Any) -> bool:
    if isinstance(value, (int, float, bool, type(None))):
        return True
    if isinstance(value, str):
        return len(value) <= 200
    if isinstance(value, list):
        return len(value) <= 64 and all(
            isinstance(v, (int, float, bool, type(None))) or (isinstance(v, str) and len(v) <= 64)
            for v in value
        )
    return False


def _scalars(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if _small(v)}


def _run_key(a: dict[str, Any], b: dict[str, Any]) -> str | None:
    """The one integer field by which `b` follows `a` (`b[key] == a[key] + 1`), if any."""
    if a.keys() - {f"{k}_last" for k in b} != b.keys():
        return None
    differing = [k for k in b if a.get(k) != b[k] and not k.endswith("_last")]
    if len(differing) != 1:
        return None
    key = differing[0]
    last = a.get(f"{key}_last", a.get(key))
    value = b[key]
    if isinstance(last, int) and isinstance(value, int) and value == last + 1:
        return key
    return None


def _runs(view: ResultView) -> None:
    merged: list[dict[str, Any]] = []
    for item in view.items:
        key = _run_key(merged[-1], item) if merged else None
        if key is None:
            merged.append(dict(item))
        else:
            merged[-1][f"{key}_last"] = item[key]
    view.items = merged


def _cut_items(view: ResultView) -> None:
    if len(view.items) > _MAX_KEPT_RANGES:
        view.summary = {**view.summary, "items_total": len(view.items)}
        view.items = view.items[:_MAX_KEPT_RANGES]


def _cut_ranges(view: ResultView) -> None:
    if len(view.omitted) > _MAX_KEPT_RANGES:
        view.summary = {**view.summary, "omitted_ranges": len(view.omitted)}
        view.omitted = view.omitted[:_MAX_KEPT_RANGES]


_LEAVES = (str, int, float, bool, type(None))


def _copy_json(value: Any) -> Any:
    """A copy of the dicts and lists in `value` (keys as strings); other values as they are."""
    if isinstance(value, dict):
        return {
            str(k): v if type(v) in _LEAVES else _copy_json(v)  # the common case, inline
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [v if type(v) in _LEAVES else _copy_json(v) for v in value]
    return value
