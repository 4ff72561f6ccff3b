"""Exceptions raised by the result layer.

Every error the package raises derives from `ResultLayerError`, so callers can catch the whole
family at once.

Example:
    ```python
    from langchain_result_layer.errors import InvalidReferenceError, ResultLayerError

    try:
        raise InvalidReferenceError("ref://nope", "unknown scheme")
    except ResultLayerError as exc:
        print(exc)
    ```
"""

from __future__ import annotations

__all__ = [
    "ContextBudgetExceeded",
    "DatabaseUnreachableError",
    "InvalidReferenceError",
    "MiddlewareOrderWarning",
    "QueryTimeoutError",
    "ReadOnlyViolationError",
    "RecordNotAccessibleError",
    "ResultLayerError",
    "ResultStoreWarning",
    "StoreQuotaExceededError",
    "StoreUnavailableError",
]


class ResultStoreWarning(UserWarning):
    """The result store does not match the graph's persistence (references would die).

    Issued once per layer when a checkpointed run uses the in-memory default store.

    Example:
        ```python
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("error", ResultStoreWarning)  # make it a hard error
            assert issubclass(ResultStoreWarning, UserWarning)
        ```
    """


class MiddlewareOrderWarning(UserWarning):
    """`ResultLayerMiddleware` sits where it would fence another middleware's messages.

    Example:
        ```python
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("error", MiddlewareOrderWarning)  # fail instead of warning
            assert issubclass(MiddlewareOrderWarning, UserWarning)
        ```
    """


class ResultLayerError(Exception):
    """Base class of every error raised by `langchain_result_layer`.

    Example:
        ```python
        try:
            ...
        except ResultLayerError:
            pass
        ```
    """


class InvalidReferenceError(ResultLayerError, ValueError):
    """A `ref://tool-result/...` reference could not be parsed or holds an invalid range.

    Args:
        reference: The text that was given as a reference.
        reason: What is wrong with it, phrased so a model can fix its next call.

    Example:
        ```python
        err = InvalidReferenceError("ref://x", "expected ref://tool-result/<id>/<kind>")
        assert "ref://x" in str(err)
        ```
    """

    def __init__(self, reference: str, reason: str) -> None:
        self.reference = reference
        self.reason = reason
        shown = reference if len(reference) <= 200 else reference[:200] + "..."
        super().__init__(f"Invalid reference {shown!r}: {reason}")


class RecordNotAccessibleError(ResultLayerError, LookupError):
    """A stored result does not exist, has expired, or belongs to another principal.

    The three cases share one message on purpose: a caller cannot learn whether a record
    exists without being allowed to read it.

    Args:
        record_id: The id that was asked for.

    Example:
        ```python
        err = RecordNotAccessibleError("abc")
        assert "not found or not accessible" in str(err)
        ```
    """

    def __init__(self, record_id: str) -> None:
        self.record_id = record_id
        shown = record_id if len(record_id) <= 64 else record_id[:64] + "..."
        super().__init__(f"Tool result {shown!r} not found or not accessible.")


class StoreUnavailableError(ResultLayerError, RuntimeError):
    """The result store could not be reached or failed while saving or reading.

    Example:
        ```python
        err = StoreUnavailableError("database is locked")
        assert "database is locked" in str(err)
        ```
    """


class StoreQuotaExceededError(StoreUnavailableError):
    """A write would exceed the tenant's storage quota.

    Example:
        ```python
        err = StoreQuotaExceededError("tenant 'acme' is over its 1 GB quota")
        ```
    """


class ContextBudgetExceeded(ResultLayerError, RuntimeError):  # noqa: N818 - public name from the issue
    """The request stays over the context window after every allowed clearing step.

    Args:
        tokens: Tokens the request would take after clearing.
        limit: The context window the request must fit into.
        detail: What the guard tried.

    Example:
        ```python
        err = ContextBudgetExceeded(tokens=140_000, limit=128_000, detail="nothing left to clear")
        assert err.tokens > err.limit
        ```
    """

    def __init__(self, *, tokens: int, limit: int, detail: str = "") -> None:
        self.tokens = tokens
        self.limit = limit
        self.detail = detail
        msg = f"Request needs {tokens:,} tokens but the context window is {limit:,} tokens"
        super().__init__(f"{msg}: {detail}" if detail else msg)


# ------------------------------------------------------------------ the SQL tool (`tools.sql`)


class DatabaseUnreachableError(ResultLayerError, ConnectionError):
    """The SQL tool could not connect (its message names no host, user or database).

    Example:
        ```python
        error = DatabaseUnreachableError("the database could not be reached")
        ```
    """


class QueryTimeoutError(ResultLayerError, TimeoutError):
    """A query ran past its statement timeout, or waited past its lock timeout.

    Example:
        ```python
        error = QueryTimeoutError("the query ran longer than 30,000 ms and was stopped")
        ```
    """


class ReadOnlyViolationError(ResultLayerError, ValueError):
    """A query is not one read-only statement, or uses a function with outside effects.

    Example:
        ```python
        from langchain_result_layer.tools.sql import check_read_only

        try:
            check_read_only("SELECT pg_advisory_lock(1)")
        except ReadOnlyViolationError as exc:
            print(exc)
        ```
    """
