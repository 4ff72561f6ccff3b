"""Shared fixtures: corpus location, hypothesis profiles, the default view registry."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

CORPUS = Path(
    os.environ.get("LRL_CORPUS", Path(__file__).resolve().parents[2] / "shared" / "corpus")
)

# CI explores a fixed, reproducible set of examples (a red CI must mean a real regression);
# local runs keep exploring new ones. Select with HYPOTHESIS_PROFILE=ci|dev.
settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, print_blob=True)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") == "true" else "dev")
)


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The shared real-data corpus; tests that need it skip when it is absent."""
    if not (CORPUS / "cases.jsonl").exists():
        pytest.skip(f"corpus not found at {CORPUS}")
    return CORPUS


@pytest.fixture
def default_views(monkeypatch: pytest.MonkeyPatch) -> None:
    """Undo `register_view` calls of a test: the process-wide default registry is restored."""
    from langchain_result_layer.views import registry

    monkeypatch.setattr(registry, "_DEFAULT", registry.registered_views())
