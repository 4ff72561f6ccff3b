"""Driving sans-I/O steps: generators that yield what I/O they need and are sent the answers.

The per-result pipeline and the fetch tool make each decision once, in a generator; their
sync and async drivers only do the I/O. These helpers advance such a generator by one step
and say whether it finished (a `StopIteration` cannot cross a worker thread's future).

Example:
    ```python
    from langchain_result_layer._steps import advance


    def steps():
        answer = yield "question"
        return f"got {answer}"


    gen = steps()
    assert advance(gen, None) == (False, "question")
    assert advance(gen, 42) == (True, "got 42")
    ```
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

__all__ = ["advance", "advance_here", "advance_in_thread"]


def advance(steps: Generator[Any, Any, Any], reply: Any) -> tuple[bool, Any]:
    """Run the steps to their next request: `(False, request)`, or `(True, outcome)` at the end.

    (A `StopIteration` cannot cross a worker thread's future, hence the flag.)
    """
    try:
        return False, steps.send(reply)
    except StopIteration as finished:
        return True, finished.value


async def advance_here(steps: Generator[Any, Any, Any], reply: Any) -> tuple[bool, Any]:
    """`advance`, on the event loop (small steps)."""
    return advance(steps, reply)


async def advance_in_thread(steps: Generator[Any, Any, Any], reply: Any) -> tuple[bool, Any]:
    """`advance`, in a worker thread (steps that parse or render much)."""
    import asyncio  # noqa: PLC0415 - already loaded where an event loop runs

    return await asyncio.to_thread(advance, steps, reply)
