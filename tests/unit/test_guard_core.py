"""The pure guard algorithm: examples and property-based invariants."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langchain_result_layer.core.guard import (
    GuardLimits,
    MessageRecord,
    plan_clearing,
    protected_indices,
)


def _conversation(
    sizes: list[int],
    *,
    errors: set[int] = frozenset(),
    names: dict[int, str] | None = None,
    unseen: int = 0,
) -> list[MessageRecord]:
    """System, human, then (ai, tool) per size; the last `unseen` results follow one AI message."""
    names = names or {}
    records = [MessageRecord(role="system", tokens=10), MessageRecord(role="human", tokens=20)]
    seen = len(sizes) - unseen
    for k in range(seen):
        records.append(
            MessageRecord(role="ai", tokens=15, call_ids=(f"c{k}",), clearable_call_ids=(f"c{k}",))
        )
        records.append(
            MessageRecord(
                role="tool",
                tokens=sizes[k],
                tool_call_id=f"c{k}",
                tool_name=names.get(k, "t"),
                is_error=k in errors,
            )
        )
    if unseen:
        ids = tuple(f"c{k}" for k in range(seen, len(sizes)))
        records.append(
            MessageRecord(role="ai", tokens=15 * unseen, call_ids=ids, clearable_call_ids=ids)
        )
        for k in range(seen, len(sizes)):
            records.append(
                MessageRecord(
                    role="tool",
                    tokens=sizes[k],
                    tool_call_id=f"c{k}",
                    tool_name=names.get(k, "t"),
                    is_error=k in errors,
                )
            )
    return records


def _tool_index(records: list[MessageRecord], call: str) -> int:
    return next(i for i, r in enumerate(records) if r.role == "tool" and r.tool_call_id == call)


PH = 30


def test_under_trigger_nothing_happens() -> None:
    records = _conversation([100, 100, 100])
    limits = GuardLimits.from_window(1_000, target_fraction=0.5)
    plan = plan_clearing(records, limits=limits, placeholder_tokens=lambda i: PH)
    assert not plan.triggered
    assert not plan.changed
    assert plan.tokens_before == plan.tokens_after == sum(r.tokens for r in records)


def test_clears_oldest_first_down_to_target() -> None:
    records = _conversation([500] * 8)
    # trigger 3000, target 2000
    limits = GuardLimits.from_window(4_000, keep_last=2, target_fraction=0.5)
    plan = plan_clearing(records, limits=limits, placeholder_tokens=lambda i: PH)
    cleared_calls = [records[i].tool_call_id for i in plan.clear]
    assert cleared_calls == ["c0", "c1", "c2", "c3", "c4"]
    assert plan.tokens_after <= limits.target
    # one result fewer would not have reached the target (batch stops as soon as it can)
    assert plan.tokens_after + (500 - PH) > limits.target


def test_protects_unseen_results_pinned_tools_and_keep_last() -> None:
    records = _conversation([900] * 6, names={0: "plan"}, unseen=2)
    limits = GuardLimits.from_window(3_000, keep_last=3, pinned_tools={"plan"}, target_fraction=0.5)
    plan = plan_clearing(records, limits=limits, placeholder_tokens=lambda i: PH)
    hard, recent = protected_indices(records, keep_last=3, pinned_tools={"plan"})
    assert {records[i].tool_call_id for i in hard} == {"c0", "c4", "c5"}
    assert {records[i].tool_call_id for i in recent} == {"c3"}
    assert {records[i].tool_call_id for i in plan.clear} <= {"c1", "c2", "c3"}
    assert "c0" not in {records[i].tool_call_id for i in plan.clear}


def test_errors_are_cleared_last() -> None:
    records = _conversation([600] * 6, errors={0, 1})
    limits = GuardLimits.from_window(4_000, keep_last=1, target_fraction=0.5)
    plan = plan_clearing(records, limits=limits, placeholder_tokens=lambda i: PH)
    calls = [records[i].tool_call_id for i in plan.clear]
    assert calls[:2] == ["c2", "c3"]
    assert plan.tokens_after <= limits.target


def test_already_cleared_results_are_never_chosen() -> None:
    records = _conversation([500] * 8)
    records = [
        replace(r, cleared=True, tokens=PH)
        if r.tool_call_id in {"c0", "c1"} and r.role == "tool"
        else r
        for r in records
    ]
    limits = GuardLimits.from_window(2_600, keep_last=2, target_fraction=0.5)
    plan = plan_clearing(records, limits=limits, placeholder_tokens=lambda i: PH)
    assert plan.triggered
    assert not {records[i].tool_call_id for i in plan.clear} & {"c0", "c1"}


def test_clears_tool_inputs_when_results_are_not_enough() -> None:
    # Big arguments (an edit command), small results.
    records = [MessageRecord(role="human", tokens=10)]
    for k in range(6):
        records.append(
            MessageRecord(
                role="ai",
                tokens=800,
                call_ids=(f"c{k}",),
                clearable_call_ids=(f"c{k}",),
                clearable_args_tokens=760,
            )
        )
        records.append(
            MessageRecord(role="tool", tokens=100, tool_call_id=f"c{k}", tool_name="edit")
        )
    limits = GuardLimits.from_window(4_000, keep_last=1, target_fraction=0.5)

    def args_tokens(i: int, ids: tuple[str, ...]) -> int:
        return 40

    plan = plan_clearing(
        records, limits=limits, placeholder_tokens=lambda i: PH, cleared_args_tokens=args_tokens
    )
    assert plan.clear_args
    hard, recent = protected_indices(records, keep_last=1)
    for ids in plan.clear_args.values():
        # only calls whose results are cleared or unprotected
        assert all(_tool_index(records, c) not in hard | recent for c in ids)
    assert plan.tokens_after <= limits.target


def test_relaxes_keep_last_only_to_fit_the_window() -> None:
    records = _conversation([1_300] * 5)
    # last 3 = 3,900 + the rest > window
    limits = GuardLimits.from_window(4_000, keep_last=3, target_fraction=0.5)
    plan = plan_clearing(records, limits=limits, placeholder_tokens=lambda i: PH)
    assert plan.relaxed, plan
    assert not plan.overflow
    assert plan.tokens_after <= limits.window
    assert plan.tokens_after > limits.target  # stage 3 only fits the window
    strict = plan_clearing(
        records, limits=replace(limits, relax_keep_last=False), placeholder_tokens=lambda i: PH
    )
    assert strict.overflow
    assert not strict.relaxed


def test_unsaved_results_are_kept_unless_the_window_needs_them() -> None:
    records = _conversation([700] * 6)
    limits = GuardLimits.from_window(5_000, keep_last=1, target_fraction=0.5)
    first = _tool_index(records, "c0")
    plan = plan_clearing(records, limits=limits, placeholder_tokens=lambda i: PH, unsaved={first})
    assert first not in plan.clear
    tight = GuardLimits.from_window(1_500, keep_last=1, target_fraction=0.5)
    plan = plan_clearing(records, limits=tight, placeholder_tokens=lambda i: PH, unsaved={first})
    assert first in plan.clear
    assert first in plan.unsaved_cleared


def test_unseen_results_alone_over_the_window_overflow() -> None:
    records = _conversation([100, 3_000, 3_000], unseen=2)
    limits = GuardLimits.from_window(5_000, target_fraction=0.5)
    plan = plan_clearing(records, limits=limits, placeholder_tokens=lambda i: PH)
    assert plan.overflow
    assert all(records[i].tool_call_id == "c0" for i in plan.clear)


def test_placeholder_bigger_than_result_is_skipped() -> None:
    records = _conversation([10, 2_000, 2_000, 2_000])
    limits = GuardLimits.from_window(4_000, keep_last=1, target_fraction=0.5)
    plan = plan_clearing(records, limits=limits, placeholder_tokens=lambda i: 50)
    assert _tool_index(records, "c0") not in plan.clear


def test_limits_validation() -> None:
    with pytest.raises(ValueError, match="target <= trigger"):
        GuardLimits(window=100, trigger=50, target=60)
    with pytest.raises(ValueError, match="positive"):
        GuardLimits(window=0, trigger=0, target=0)


# --------------------------------------------------------------------------- properties


@st.composite
def scenarios(
    draw: st.DrawFn,
) -> tuple[list[MessageRecord], GuardLimits, dict[int, int], set[int], int]:
    n_turns = draw(st.integers(min_value=0, max_value=25))
    records: list[MessageRecord] = [MessageRecord(role="human", tokens=draw(st.integers(1, 200)))]
    call = 0
    for _ in range(n_turns):
        width = draw(st.integers(min_value=0, max_value=3))
        ids = tuple(f"c{call + k}" for k in range(width))
        call += width
        clearable = tuple(c for c in ids if draw(st.booleans()))
        ai_tokens = draw(st.integers(5, 1_500))
        records.append(
            MessageRecord(
                role="ai",
                tokens=ai_tokens,
                call_ids=ids,
                clearable_call_ids=clearable,
                clearable_args_tokens=draw(st.integers(0, ai_tokens)) if clearable else 0,
            )
        )
        for c in ids:
            cleared = draw(st.booleans()) and draw(st.booleans())
            records.append(
                MessageRecord(
                    role="tool",
                    tokens=draw(st.integers(1, 40)) if cleared else draw(st.integers(1, 6_000)),
                    tool_call_id=c,
                    tool_name=draw(st.sampled_from(["search", "sql", "log", "plan"])),
                    is_error=draw(st.booleans()),
                    cleared=cleared,
                )
            )
        if draw(st.integers(0, 5)) == 0:
            records.append(MessageRecord(role="human", tokens=draw(st.integers(1, 300))))
    window = draw(st.integers(min_value=500, max_value=60_000))
    trigger_f = draw(st.floats(min_value=0.2, max_value=1.0))
    target_f = draw(st.floats(min_value=0.05, max_value=trigger_f))
    limits = GuardLimits.from_window(
        window,
        trigger_fraction=trigger_f,
        target_fraction=target_f,
        overhead=draw(st.integers(0, 400)),
        keep_last=draw(st.integers(0, 4)),
        pinned_tools=draw(st.sets(st.sampled_from(["search", "sql", "log", "plan"]), max_size=1)),
        clear_tool_inputs=draw(st.booleans()),
        relax_keep_last=draw(st.booleans()),
    )
    tool_idx = [i for i, r in enumerate(records) if r.role == "tool"]
    ph = {i: draw(st.integers(1, 80)) for i in tool_idx}
    unsaved = set(draw(st.lists(st.sampled_from(tool_idx), max_size=3))) if tool_idx else set()
    args_saving = draw(st.integers(0, 600))
    return records, limits, ph, unsaved, args_saving


def _plan(
    records: list[MessageRecord],
    limits: GuardLimits,
    ph: dict[int, int],
    unsaved: set[int],
    args_saving: int,
):
    def cleared_args(i: int, ids: tuple[str, ...]) -> int:
        return max(1, records[i].tokens - args_saving * len(ids))

    plan = plan_clearing(
        records,
        limits=limits,
        placeholder_tokens=ph.__getitem__,
        cleared_args_tokens=cleared_args,
        unsaved=unsaved,
    )
    return plan, cleared_args


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_plan_invariants(
    scenario: tuple[list[MessageRecord], GuardLimits, dict[int, int], set[int], int],
) -> None:
    records, limits, ph, unsaved, args_saving = scenario
    plan, cleared_args = _plan(records, limits, ph, unsaved, args_saving)
    hard, recent = protected_indices(
        records, keep_last=limits.keep_last, pinned_tools=limits.pinned_tools
    )

    # Nothing happens at or under the trigger.
    if plan.tokens_before <= limits.trigger:
        assert not plan.changed
        assert plan.tokens_after == plan.tokens_before
        return

    cleared = set(plan.clear)
    assert len(cleared) == len(plan.clear), "a result is cleared twice"
    for i in cleared:
        assert records[i].role == "tool"
        assert not records[i].cleared
        assert i not in hard, "cleared an unseen or pinned result"
        if i in recent:
            assert i in plan.relaxed
            assert limits.relax_keep_last
        if i in unsaved:
            assert i in plan.unsaved_cleared
    assert set(plan.relaxed) <= recent

    # Exact accounting.
    expected = limits.overhead
    for i, r in enumerate(records):
        if i in cleared:
            expected += ph[i]
        elif i in plan.clear_args:
            expected += cleared_args(i, plan.clear_args[i])
        else:
            expected += r.tokens
    assert plan.tokens_after == expected
    assert plan.overflow == (plan.tokens_after > limits.window)

    # Arguments are only cleared for calls whose results are placeholders or unprotected.
    eligible = {
        r.tool_call_id
        for i, r in enumerate(records)
        if r.role == "tool" and (r.cleared or i in cleared or (i not in hard and i not in recent))
    }
    for i, ids in plan.clear_args.items():
        assert limits.clear_tool_inputs
        assert set(ids) <= set(records[i].clearable_call_ids) & eligible
        assert records[i].clearable_args_tokens >= limits.min_args_tokens

    # Stage 1 is a prefix of the candidate order (successes before errors, oldest first).
    stage1 = [i for i in plan.clear if i not in plan.relaxed and i not in plan.unsaved_cleared]
    candidates = sorted(
        (
            i
            for i, r in enumerate(records)
            if r.role == "tool"
            and not r.cleared
            and i not in hard
            and i not in recent
            and i not in unsaved
            and r.tokens - ph[i] > 0
        ),
        key=lambda i: (records[i].is_error, i),
    )
    assert stage1 == candidates[: len(stage1)]
    # Stage 1 stops at the target: if a candidate was left, the target was reached without it.
    if len(stage1) < len(candidates) and not plan.relaxed and not plan.unsaved_cleared:
        assert plan.tokens_after <= limits.target

    # Stage 3 (recent or unsaved results) only when the window needs it.
    if plan.relaxed or plan.unsaved_cleared:
        without = plan.tokens_before - sum(records[i].tokens - ph[i] for i in stage1)
        assert without > limits.window or plan.clear_args


@settings(max_examples=200, deadline=None)
@given(scenarios())
def test_applying_the_plan_is_stable(
    scenario: tuple[list[MessageRecord], GuardLimits, dict[int, int], set[int], int],
) -> None:
    """Once applied, a plan that got under the trigger is left alone by the next call."""
    records, limits, ph, unsaved, args_saving = scenario
    plan, cleared_args = _plan(records, limits, ph, unsaved, args_saving)
    applied = []
    for i, r in enumerate(records):
        if i in plan.clear:
            applied.append(replace(r, cleared=True, tokens=ph[i]))
        elif i in plan.clear_args:
            ids = plan.clear_args[i]
            applied.append(
                replace(
                    r,
                    tokens=cleared_args(i, ids),
                    clearable_call_ids=tuple(c for c in r.clearable_call_ids if c not in ids),
                    clearable_args_tokens=0,
                )
            )
        else:
            applied.append(r)
    again, _ = _plan(applied, limits, ph, unsaved, args_saving)
    assert again.tokens_before == plan.tokens_after
    if plan.tokens_after <= limits.trigger:
        assert not again.changed
    assert not set(again.clear) & set(plan.clear)
