"""What processing one tool output produced: the content the model sees and its record.

Example:
    ```python
    from langchain_result_layer.core.view import ResultView
    from langchain_result_layer.outcome import ProcessOutcome, headline_of

    outcome = ProcessOutcome(content="hi", view=ResultView(kind="text", original_chars=2),
                             passed_through=True)
    assert outcome.metadata()["processed"] and headline_of(outcome.view).startswith("text")
    ```
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from langchain_result_layer.core.reference import Reference
from langchain_result_layer.core.render import plural
from langchain_result_layer.core.view import ResultView
from langchain_result_layer.stores.base import RecordMeta

__all__ = ["META_KEY", "ProcessOutcome", "headline_of"]

META_KEY = "result_layer"
"""Key of the layer's marker in `ToolMessage.response_metadata`."""


@dataclass(slots=True)
class ProcessOutcome:
    """The result of processing one tool output.

    Attributes:
        content: What the model sees (the whole result, fenced, when it fits; the original
            object itself when fencing is off).
        view: The record of the view.
        passed_through: Whether the whole result is shown (nothing was cut).
        record: The stored record's metadata, when stored.
        reference: Reference to the stored raw result, when stored.
        extra: Free-form details for adapters.

    Example:
        ```python
        outcome = ProcessOutcome(content="ok", view=ResultView(kind="text"), passed_through=True)
        assert outcome.metadata()["ref"] is None  # not stored
        ```
    """

    content: Any
    view: ResultView
    passed_through: bool
    record: RecordMeta | None = None
    reference: Reference | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    fenced: bool = True
    """Whether the content is fenced as untrusted data (`False` only with fencing off)."""

    def metadata(self) -> dict[str, Any]:
        """The JSON-ready marker stored in `response_metadata["result_layer"]`.

        Returns:
            The marker (`processed: True`, kind, reference, sizes, headline).
        """
        view = self.view
        return {
            "version": 1,
            "processed": True,
            "kind": view.kind,
            "ref": str(self.reference) if self.reference else None,
            "record_id": view.record_id,
            "stored": view.stored,
            "store_error": view.store_error,
            "truncated": view.truncated,
            "passed_through": self.passed_through,
            "tokens": view.shown_tokens,
            "original_chars": view.original_chars,
            "original_lines": view.original_lines,
            "omitted_chars": view.omitted_chars,
            "shown_chars": view.shown_chars,
            "counter": view.counter,
            "capped": bool(self.record is not None and self.record.capped),
            "expires_at": self.record.expires_at if self.record is not None else None,
            "fenced": self.fenced,
            "headline": headline_of(view),
        }


def headline_of(view: ResultView) -> str:
    """One line that says what a result was (for placeholders of cleared results).

    Args:
        view: The view record.

    Returns:
        The view's own `summary["headline"]` when it has one, else size facts and the first
        error line shown.

    Example:
        ```python
        assert headline_of(ResultView(kind="text", original_chars=10, original_lines=2)) == (
            "text, 10 chars, 2 lines"
        )
        ```
    """
    summary = view.summary if isinstance(view.summary, dict) else {}
    model_line = summary.get("model_summary_line")
    suffix = (
        f"; model-written summary: {model_line}"
        if isinstance(model_line, str) and model_line
        else ""
    )
    own = summary.get("headline")
    if isinstance(own, str) and own:
        return (own + suffix)[:400]
    size = f"{plural(view.original_chars, 'char')}, {plural(view.original_lines, 'line')}"
    facts = f"{view.kind}, {size}"
    if suffix:
        return f"{facts}{suffix}"[:400]
    for item in view.items:
        if item.get("role") == "error":
            text = str(item.get("text", "")).strip().splitlines()
            error_line = next((ln for ln in text if ln.strip()), "")
            if error_line:
                return f"{facts}; first error shown: {error_line[:160]}"
    return facts
