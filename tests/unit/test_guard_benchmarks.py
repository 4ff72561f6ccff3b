"""Smoke runs of the guard benchmarks (quick mode) and the properties they report."""

from __future__ import annotations

from pathlib import Path

import pytest
from benchmarks import guard_overhead, guard_replay


def test_guard_overhead_quick(corpus: Path) -> None:
    result = guard_overhead.run(corpus=corpus, quick=True)
    ours = result.data["ours_exact"]
    assert ours["tokens_before"] > 128_000 * 0.75  # the conversation needed clearing
    assert ours["tokens_after"] <= 128_000 * 0.5
    assert result.tables[0].rows


def test_guard_overhead_without_corpus() -> None:
    result = guard_overhead.run(corpus=None, quick=True)
    assert result.data["ours_exact"]["tokens_after"] <= 128_000 * 0.5


def test_guard_replay_quick(corpus: Path) -> None:
    result = guard_replay.run(corpus=corpus, quick=True)
    ours = result.data["ours (per-result layer + guard)"]
    ce = result.data["ContextEditingMiddleware"]
    none = result.data["no management"]
    assert none["over_window"] > 0  # the conversations do overflow the window
    assert ours["over_window"] == 0
    assert ours["cache_breaks"] < ce["cache_breaks"]
    assert ours["max_fraction"] <= 1.0


@pytest.mark.parametrize("name", ["astropy__astropy-14995", "django__django-11039"])
def test_replay_conversions_pair_every_call(corpus: Path, name: str) -> None:
    path = corpus / "trajectories" / "sweagent_gpt4_swebench_lite" / f"{name}.traj"
    conv = guard_replay.load_sweagent(path)
    from tests.integration.helpers import assert_pairing

    assert_pairing(conv.messages)
    assert conv.calls >= 10


def test_autocoderover_conversion_pairs_every_call(corpus: Path) -> None:
    from tests.integration.helpers import assert_pairing

    paths = sorted((corpus / "trajectories").glob("autocoderover*/*/*.json"))
    assert paths
    for path in paths:
        conv = guard_replay.load_autocoderover(path)
        assert_pairing(conv.messages)
