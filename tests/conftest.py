"""Shared fixtures: corpus location, token counters, stores."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CORPUS = Path(os.environ.get("LRL_CORPUS", Path(__file__).resolve().parents[2] / "shared" / "corpus"))


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The shared real-data corpus; tests that need it skip when it is absent."""
    if not (CORPUS / "cases.jsonl").exists():
        pytest.skip(f"corpus not found at {CORPUS}")
    return CORPUS
