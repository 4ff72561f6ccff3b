"""One implementation of each decision, with thin sync and async drivers.

A step that needs I/O (a store read or write, rendering a view) is a generator: it yields an
`IOStep` (the same call in its sync and async form) and receives the result (or the
exception, raised at the `yield`). `drive` runs such a generator with the sync calls, `adrive`
with the async ones, so the decisions around the I/O are written once.

Example:
    ```python
    import asyncio
    from langchain_result_layer.adapters._sans_io import IOStep, adrive, drive

    async def twice_async(x: int) -> int:
        return 2 * x

    def steps():
        doubled = yield IOStep(lambda: 2 * 21, lambda: twice_async(21))
        return doubled + 0

    assert drive(steps()) == 42
    assert asyncio.run(adrive(steps())) == 42
    ```
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

__all__ = ["IOStep", "Steps", "adrive", "drive"]

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class IOStep(Generic[T]):
    """One I/O call, in its sync and its async form (they must do the same thing).

    Example:
        ```python
        import functools
        from langchain_result_layer.stores.base import Principal

        rid = ref.record_id
        step = IOStep(
            functools.partial(store.info, rid, principal=Principal()),
            functools.partial(store.ainfo, rid, principal=Principal()),
        )
        assert step.sync().record_id == rid
        ```
    """

    sync: Callable[[], T]
    """The blocking call."""

    async_: Callable[[], Awaitable[T]]
    """The awaitable twin."""


Steps = Generator[IOStep[Any], Any, R]
"""A decision that yields its I/O and returns `R`."""


@dataclass(frozen=True, slots=True)
class _Returned(Generic[R]):
    """What the generator returned."""

    value: R


def _advance(
    steps: Steps[R], value: Any = None, error: Exception | None = None
) -> IOStep[Any] | _Returned[R]:
    """Resume `steps` with the I/O's `value` (or raise its `error` at the `yield`)."""
    try:
        return steps.send(value) if error is None else steps.throw(error)
    except StopIteration as done:
        return _Returned(done.value)


def drive(steps: Steps[R]) -> R:
    """Run `steps` with the sync calls.

    Args:
        steps: The generator.

    Returns:
        What it returns.

    Example:
        ```python
        def steps():
            try:
                yield IOStep(lambda: 1 // 0, lambda: None)
            except ZeroDivisionError:  # the I/O's exception is raised at its `yield`
                return "recovered"

        assert drive(steps()) == "recovered"
        ```
    """
    step = _advance(steps)
    while isinstance(step, IOStep):
        try:
            value = step.sync()
        except Exception as exc:  # raised inside the generator, where the I/O is
            step = _advance(steps, error=exc)
        else:
            step = _advance(steps, value)
    return step.value


async def adrive(steps: Steps[R]) -> R:
    """Async twin of `drive`: run `steps` with the async calls (same argument and result).

    Example:
        ```python
        async def answer() -> int:
            return 42

        def steps():
            value = yield IOStep(lambda: 0, answer)
            return value

        assert await adrive(steps()) == 42
        ```
    """
    step = _advance(steps)
    while isinstance(step, IOStep):
        try:
            value = await step.async_()
        except Exception as exc:  # raised inside the generator, where the I/O is
            step = _advance(steps, error=exc)
        else:
            step = _advance(steps, value)
    return step.value
