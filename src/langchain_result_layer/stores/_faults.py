"""Store faults with bounds: timeouts, a fail-fast window, and error texts a model may see.

Every store error that reaches the model (a "not saved" note in a view, a "not readable"
answer of the fetch tool) is a `StoreUnavailableError` whose message names what happened in
general terms ("could not be reached", "timed out", "refused the write") and never the
connection: no URL, host, port, user or database name, and no driver text (driver messages
quote hosts and users: `connection to server at "10.0.0.5", port 5432 failed: FATAL:
password authentication failed for user "app"`). The full driver error stays in the
exception chain (`__cause__`) and in the log, for operators.

Example:
    ```python
    from langchain_result_layer.stores._faults import StoreTimeouts

    timeouts = StoreTimeouts(connect_seconds=3, lock_seconds=2)
    ```
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from langchain_result_layer.errors import ResultLayerError, StoreUnavailableError

__all__ = ["FailFast", "StoreTimeouts", "describe_fault", "driver_faults", "safe_audit_text"]

logger = logging.getLogger("langchain_result_layer.stores")


@dataclass(frozen=True, slots=True)
class StoreTimeouts:
    """Time limits of store operations.

    Example:
        ```python
        StoreTimeouts(connect_seconds=5, statement_seconds=30, lock_seconds=5)
        ```
    """

    connect_seconds: float = 5.0
    """Longest a new database connection may take (PostgreSQL `connect_timeout`)."""
    statement_seconds: float | None = 30.0
    """Longest one statement may run (PostgreSQL `statement_timeout`; `None`: no limit)."""
    lock_seconds: float | None = 5.0
    """Longest a statement may wait for a lock (PostgreSQL `lock_timeout`, SQLite busy
    timeout; `None`: no limit on PostgreSQL, 30 s on SQLite)."""
    retry_after_seconds: float = 10.0
    """After a connection failure, calls fail at once for this long instead of each waiting
    for its own connect timeout (a black-holed host costs one timeout, not one per call)."""

    def postgres_options(self) -> str:
        """The `options` connection parameter that sets the statement and lock timeouts."""
        out = []
        if self.statement_seconds is not None:
            out.append(f"-c statement_timeout={int(self.statement_seconds * 1000)}")
        if self.lock_seconds is not None:
            out.append(f"-c lock_timeout={int(self.lock_seconds * 1000)}")
        return " ".join(out)

    def sqlite_busy_ms(self) -> int:
        """The SQLite busy timeout in milliseconds."""
        return int((30.0 if self.lock_seconds is None else self.lock_seconds) * 1000)


class FailFast:
    """Remembers a connection failure for `retry_after_seconds`; calls fail at once meanwhile.

    Shared by the threads of one store (a fact about the database, not about a request).

    Example:
        ```python
        gate = FailFast(10.0)
        gate.check()  # raises StoreUnavailableError within 10 s of gate.tripped()
        ```
    """

    def __init__(self, retry_after_seconds: float) -> None:
        self.retry_after_seconds = retry_after_seconds
        self._until = 0.0
        self._lock = threading.Lock()

    def check(self) -> None:
        """Raise `StoreUnavailableError` while a recent connection failure is remembered."""
        now = time.monotonic()
        with self._lock:
            left = self._until - now
        if left > 0:
            msg = (
                "the result store's database could not be reached a moment ago "
                f"(retrying in {left:.0f} s)"
            )
            raise StoreUnavailableError(msg)

    def tripped(self) -> None:
        """Record a connection failure now."""
        with self._lock:
            self._until = time.monotonic() + self.retry_after_seconds

    def reset(self) -> None:
        """Forget the failure (a connection worked)."""
        with self._lock:
            self._until = 0.0


_CONNECT_WORDS = (
    "could not connect",
    "connection refused",
    "connection to server",
    "could not translate host",
    "timeout expired",
    "no route to host",
    "network is unreachable",
    "server closed the connection",
    "terminating connection",
    "connection is closed",
    "password authentication failed",
    "does not exist",  # database "x" does not exist (at connect)
    "unable to open database file",
)
_TIMEOUT_WORDS = (
    "statement timeout",
    "canceling statement",
    "lock timeout",
    "database is locked",
    "could not obtain lock",
    "deadlock detected",
)
_WRITE_WORDS = (
    "readonly database",
    "read-only",
    "disk i/o error",
    "database or disk is full",
    "no space left",
    "disk image is malformed",
)


def describe_fault(exc: BaseException, *, operation: str) -> tuple[str, bool]:
    """A model-safe description of a database error, and whether it was a connection failure.

    Args:
        exc: What SQLAlchemy or the driver raised.
        operation: What the store was doing (`"save"`, `"read"`, ...), for the message.

    Returns:
        `(message, is_connection_failure)`. The message names no host, user or database.

    Example:
        ```python
        message, down = describe_fault(OSError("connection refused"), operation="save")
        assert down and "could not be reached" in message
        ```
    """
    detail = str(getattr(exc, "orig", None) or exc).lower()
    kind = type(getattr(exc, "orig", None) or exc).__name__
    if any(word in detail for word in _TIMEOUT_WORDS):
        return (
            f"the result store's database did not answer in time ({kind}); the {operation} "
            "was abandoned",
            False,
        )
    if any(word in detail for word in _WRITE_WORDS):
        return f"the result store's database refused the {operation} ({kind})", False
    if any(word in detail for word in _CONNECT_WORDS) or isinstance(exc, ConnectionError):
        return f"the result store's database could not be reached ({kind})", True
    return f"the result store's database failed during the {operation} ({kind})", False


@contextlib.contextmanager
def driver_faults(
    faults: type[BaseException] | tuple[type[BaseException], ...],
    unavailable: Callable[[BaseException], StoreUnavailableError],
) -> Iterator[None]:
    """Turn a driver's `faults` inside the block into the store's `StoreUnavailableError`.

    The layer's own errors (`ResultLayerError`: a record not accessible, a store already
    reported down) pass through unchanged; anything else is left alone.

    Args:
        faults: What the driver raises when it fails.
        unavailable: Builds the model-safe error for a fault (logging it, tripping fail-fast).

    Yields:
        Nothing: the block runs inside.

    Raises:
        StoreUnavailableError: From `unavailable`, chained to the driver's fault.

    Example:
        ```python
        import pytest

        with pytest.raises(StoreUnavailableError, match="down"):
            with driver_faults(OSError, lambda exc: StoreUnavailableError("down")):
                raise OSError("connection refused")
        ```
    """
    try:
        yield
    except ResultLayerError:
        raise
    except faults as exc:
        raise unavailable(exc) from exc


def safe_audit_text(value: str | None) -> str | None:
    r"""A principal value as an audit row can hold it, whatever its characters.

    PostgreSQL text holds no NUL, and no encoding holds a lone surrogate: those become
    `\\x00` and `\\udxxx` escapes (a denial is audited, never lost to an encoding error).

    Args:
        value: The value (`None` stays `None`).

    Returns:
        The storable text.

    Example:
        ```python
        assert safe_audit_text("a\x00b") == "a\\x00b"
        ```
    """
    if value is None:
        return None
    if "\x00" not in value:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            pass
        else:
            return value
    return value.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")
