r"""Saving a result before the guard clears it (one implementation for sync and async).

A result the per-result layer never saw has no reference yet: before its placeholder can
point at the raw copy, the guard stores it. A result whose (unverified) marker names a record
of this very tool call, in this principal's store, is adopted instead of stored twice. A store
that is down or missing never breaks the agent: the result is marked unsaved, and the planner
keeps it unless the window needs it.

Example:
    ```python
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langchain_result_layer import ResultLayer

    small = ResultLayer(context_window=8_000, store="memory")
    log = "\n".join(f"step {i}: ok" for i in range(600))
    messages = [HumanMessage("why?", id="h")]
    for k in range(4):  # raw results: the per-result layer never saw them
        call = {"name": "read_log", "args": {}, "id": f"c{k}"}
        messages += [AIMessage("", tool_calls=[call], id=f"a{k}"),
                     ToolMessage(log, tool_call_id=f"c{k}", name="read_log", id=f"t{k}")]
    result = small.budget_guard.guard(messages)
    assert result.stored == result.cleared == ["t0", "t1"]  # saved, then cleared
    ```
"""

from __future__ import annotations

import functools
import logging

from langchain_core.messages import ToolMessage

from langchain_result_layer.adapters._guard_run import GuardRun
from langchain_result_layer.adapters._markers import raw_marker
from langchain_result_layer.adapters._sans_io import IOStep, Steps
from langchain_result_layer.core.guard import ClearingPlan
from langchain_result_layer.core.jsonable import to_json_text
from langchain_result_layer.core.reference import Reference, new_record_id
from langchain_result_layer.stores.base import PutOptions, RecordMeta
from langchain_result_layer.views import JsonView, TextView

__all__ = ["reference_for", "results_to_store", "store_result"]

logger = logging.getLogger(__name__)

_REFERENCE_KINDS = (TextView.kind, JsonView.kind)
"""Kinds of the references the guard makes for raw results (their content's shape)."""

_STORE_ERROR_CHARS = 200
"""Characters of a store's failure kept in the placeholder's note."""


def reference_for(run: GuardRun, i: int) -> str | None:
    """The reference a placeholder of result `i` shows (made now if it needs one).

    Args:
        run: The run.
        i: The result's index.

    Returns:
        The reference, or `None` when the result cannot be saved.
    """
    if i in run.refs:
        return run.refs[i]
    if run.infos[i].ref is not None:
        return run.infos[i].ref
    if i in run.unsaved:
        return None
    pending = run.pending.get(i)
    if pending is None:
        kind = run.infos[i].kind
        pending = Reference(
            record_id=new_record_id(), kind=kind if kind in _REFERENCE_KINDS else TextView.kind
        )
        run.pending[i] = pending
    return str(pending)


def results_to_store(run: GuardRun, plan: ClearingPlan) -> list[int]:
    """Results the plan clears that have no reference yet and were not tried.

    Args:
        run: The run.
        plan: The clearing plan.

    Returns:
        Their indices.
    """
    return [
        i
        for i in plan.clear
        if i not in run.refs
        and run.infos[i].ref is None
        and i not in run.unsaved
        and i not in run.stored
    ]


def store_result(run: GuardRun, i: int, *, ttl_seconds: float | None) -> Steps[None]:
    """Store result `i` (or adopt the store's record of its tool call).

    Args:
        run: The run.
        i: The result's index.
        ttl_seconds: Lifetime of the stored copy (`None`: the store's default).

    Yields:
        The store calls.
    """
    store = run.store
    if store is None:
        _failed(run, i, RuntimeError("no store"))
        return
    claimed = _claimed_record(run, i)
    if claimed is not None:
        try:
            meta = yield IOStep(
                functools.partial(store.info, claimed, principal=run.principal),
                functools.partial(store.ainfo, claimed, principal=run.principal),
            )
        except Exception:  # not ours, gone, or another principal's: store it anew
            meta = None
        if meta is not None and _owns(run, i, meta):
            _adopted(run, i, meta)
            return
    reference_for(run, i)
    data, options = _store_args(run, i, ttl_seconds)
    try:
        meta = yield IOStep(
            functools.partial(store.put, data, principal=run.principal, **options),
            functools.partial(store.aput, data, principal=run.principal, **options),
        )
    except Exception as exc:  # the store must never break the agent
        _failed(run, i, exc)
        return
    _stored(run, i, meta)


def _store_args(run: GuardRun, i: int, ttl_seconds: float | None) -> tuple[str, PutOptions]:
    message = run.messages[i]
    assert isinstance(message, ToolMessage)
    content = message.content
    data = content if isinstance(content, str) else to_json_text(content)
    reference = run.pending[i]
    options: PutOptions = {
        "kind": reference.kind,
        "tool_name": message.name,
        "tool_call_id": message.tool_call_id,
        "ttl_seconds": ttl_seconds,
        "record_id": reference.record_id,
        "extra": {"stored_by": "budget_guard"},
    }
    return data, options


def _claimed_record(run: GuardRun, i: int) -> str | None:
    """The record id an unverified marker names (a marker of another process or key)."""
    record_id = raw_marker(run.messages[i]).get("record_id")
    if run.infos[i].processed or not isinstance(record_id, str) or not record_id:
        return None
    return record_id


def _owns(run: GuardRun, i: int, meta: RecordMeta) -> bool:
    """Whether a stored record is the layer's own record of this very tool call."""
    return bool(meta.tool_call_id) and meta.tool_call_id == getattr(
        run.messages[i], "tool_call_id", None
    )


def _stored(run: GuardRun, i: int, meta: RecordMeta) -> None:
    reference = run.pending.pop(i, None)
    kind = reference.kind if reference is not None else meta.kind
    run.refs[i] = str(Reference(record_id=meta.record_id, kind=kind))
    run.expires[i] = meta.expires_at
    run.stored.add(i)
    run.placeholders.pop(i, None)


def _adopted(run: GuardRun, i: int, meta: RecordMeta) -> None:
    """Use the store's record of this tool call instead of storing the result again."""
    run.pending.pop(i, None)
    run.refs[i] = str(Reference(record_id=meta.record_id, kind=meta.kind))
    run.expires[i] = meta.expires_at
    run.placeholders.pop(i, None)


def _failed(run: GuardRun, i: int, exc: BaseException) -> None:
    logger.warning("budget guard could not store a result before clearing it: %s", exc)
    run.pending.pop(i, None)
    run.placeholders.pop(i, None)
    if run.store is None:
        run.unsaved[i] = "no result store is configured"
    else:
        reason = f"result store unavailable: {type(exc).__name__}: {exc}"
        run.unsaved[i] = reason[:_STORE_ERROR_CHARS]
