"""The I/O the per-result steps ask for, and the steps' sync and async runners.

`ResultPipeline._steps` makes every decision without I/O: it yields a `StorePut` or a
`SummaryRequest` and is sent back what running it gave (a store's exception is sent back as a
value, so the steps decide what the model is told). The sync driver calls `run()`, the async
one awaits `arun()`; on large results the async driver advances the steps in a worker thread
(`is_heavy`), so planning and rendering never block the event loop.

Example:
    ```python
    from langchain_result_layer._pipeline_io import StorePut, store_note
    from langchain_result_layer.stores.base import Principal

    put = StorePut(store, "hello", Principal(), {"kind": "text", "tool_name": "echo"})
    meta = put.run()
    assert not isinstance(meta, Exception) and meta.size == 5
    assert store_note(OSError("disk full")).startswith("The full result could not be saved")
    ```
"""

from __future__ import annotations

import logging
from collections.abc import Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from langchain_result_layer.core.budget import Budget
from langchain_result_layer.errors import StoreQuotaExceededError
from langchain_result_layer.stores.base import Principal, PutOptions, RecordMeta, ResultStore
from langchain_result_layer.summarize import ResultSummarizer, SummaryAbout, SummaryOutcome
from langchain_result_layer.views.text import TextView

if TYPE_CHECKING:
    from langchain_result_layer._planning import ResultPlan
    from langchain_result_layer.outcome import ProcessOutcome

__all__ = [
    "NOT_SAVED",
    "THREAD_THRESHOLD_CHARS",
    "ProcessOptions",
    "Steps",
    "StorePut",
    "SummaryRequest",
    "is_heavy",
    "store_note",
    "store_steps",
]

logger = logging.getLogger("langchain_result_layer.pipeline")  # where these were always logged

NOT_SAVED = "The full result was not saved."
"""What the model is told when the layer has no store."""

THREAD_THRESHOLD_CHARS = 64_000
"""On the async path, results larger than this are planned and rendered in a worker thread."""

_THREAD_THRESHOLD_BLOCKS = 256


class ProcessOptions(TypedDict, total=False):
    r"""What `ResultPipeline.process` and `aprocess` take besides the content (all optional).

    Example:
        ```python
        from langchain_result_layer.core.budget import Budget
        from langchain_result_layer.pipeline import ResultPipeline

        pipeline = ResultPipeline(budget=Budget(tokens=500, chars=4_000), counter=counter,
                                  store=store)
        options: ProcessOptions = {"tool_name": "run_sql", "status": "error", "siblings": 2}
        outcome = pipeline.process("error: boom\n" * 5_000, **options)
        assert outcome is not None and outcome.view.status == "error"
        ```
    """

    tool_name: str | None
    """The tool's name (selects its policy; `None` by default)."""
    status: str
    """`success` (the default) or `error`."""
    tool_call_id: str | None
    """The tool call's id, recorded with the stored result."""
    principal: Principal | None
    """Owner of the stored result (`None`: the anonymous principal)."""
    siblings: int
    """Results of the same model turn (parallel calls share the turn budget; 1 by default)."""
    budget: Budget | None
    """Use this budget instead of the tool's."""


@dataclass(frozen=True, slots=True)
class StorePut:
    """A store write the steps ask for; running it gives the record or what the store raised."""

    store: ResultStore
    raw: str | bytes
    principal: Principal
    options: PutOptions
    """What the record is (kind, tool, tool call, lifetime), as `ResultStore.put` takes it."""

    def run(self) -> RecordMeta | Exception:
        try:
            return self.store.put(self.raw, principal=self.principal, **self.options)
        except Exception as exc:  # the steps say what was lost
            return exc

    async def arun(self) -> RecordMeta | Exception:
        try:
            return await self.store.aput(self.raw, principal=self.principal, **self.options)
        except Exception as exc:  # the steps say what was lost
            return exc


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    """A model-written summary the steps ask for (the summariser never raises)."""

    summarizer: ResultSummarizer
    raw: str
    budget_tokens: int
    about: SummaryAbout
    """What the result is (its tool, kind and reference), as `ResultSummarizer` takes it."""

    def run(self) -> SummaryOutcome:
        return self.summarizer.summarize(self.raw, budget_tokens=self.budget_tokens, **self.about)

    async def arun(self) -> SummaryOutcome:
        return await self.summarizer.asummarize(
            self.raw, budget_tokens=self.budget_tokens, **self.about
        )


Steps = Generator[StorePut | SummaryRequest, Any, "ProcessOutcome | None"]
"""The per-result steps: they yield requests, are sent their results, return the outcome."""


def store_note(exc: BaseException) -> str:
    """What the model is told when the store could not save a result (the store's reason)."""
    if isinstance(exc, StoreQuotaExceededError):
        why = f"storage quota exceeded: {exc}"
    else:
        why = f"result store unavailable: {type(exc).__name__}: {exc}"
    return f"The full result could not be saved ({why[:200]}); what is omitted cannot be fetched."


def store_steps(
    plan: ResultPlan,
    store: ResultStore | None,
    *,
    principal: Principal,
    tool_call_id: str | None,
    ttl_seconds: float | None,
    store_small_results: bool,
) -> Generator[StorePut, Any, tuple[RecordMeta | None, str | None, dict[int, RecordMeta]]]:
    """Store a planned result, and each of its cut text blocks on its own (yielding each write).

    Args:
        plan: The result's plan.
        store: Where it goes (`None`: nowhere).
        principal: Its owner.
        tool_call_id: The tool call that produced it.
        ttl_seconds: Its lifetime (`None`: the store's default).
        store_small_results: Also store results shown whole.

    Returns:
        The record (`None` when not stored), the note for the model when it could not be
        stored (the store's reason), and the records of the cut blocks by index.
    """
    if store is None:
        return None, NOT_SAVED, {}
    if plan.fits and not store_small_results:
        return None, None, {}

    def put(raw: str | bytes, kind: str) -> StorePut:
        options: PutOptions = {
            "kind": kind,
            "tool_name": plan.tool_name,
            "tool_call_id": tool_call_id,
            "ttl_seconds": ttl_seconds,
        }
        return StorePut(store, raw, principal, options)

    stored = yield put(*plan.stored_form())
    if isinstance(stored, BaseException):  # the store must never break the agent
        logger.warning("could not store result of %r: %s", plan.tool_name, stored)
        return None, store_note(stored), {}
    parts: dict[int, RecordMeta] = {}
    for i, text in plan.cut_block_texts().items():
        part = yield put(text, TextView.kind)
        if isinstance(part, BaseException):  # the block's own view says it was not saved
            logger.warning("could not store block %d of %r: %s", i, plan.tool_name, part)
        else:
            parts[i] = part
    return stored, None, parts


def is_heavy(content: Any) -> bool:
    """Whether processing `content` may take long enough to block an event loop."""
    if isinstance(content, (str, bytes, bytearray, memoryview)):
        return len(content) > THREAD_THRESHOLD_CHARS
    if isinstance(content, list):
        if len(content) > _THREAD_THRESHOLD_BLOCKS:
            return True
        size = 0
        for block in content:
            if isinstance(block, str):
                size += len(block)
            elif isinstance(block, dict):
                size += sum(len(v) if isinstance(v, (str, bytes)) else 64 for v in block.values())
            else:
                return True
        return size > THREAD_THRESHOLD_CHARS
    # Any other object is rendered as JSON first: its size is unknown until then.
    return not isinstance(content, (int, float, bool, type(None)))
