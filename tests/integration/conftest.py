"""Fixtures of the integration tests: the data source (corpus or generated) and layers."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import CORPUS
from tests.integration.helpers import DataSource


@pytest.fixture(scope="session")
def data(tmp_path_factory: pytest.TempPathFactory) -> DataSource:
    """Real large outputs from the corpus when present, generated ones otherwise."""
    corpus = CORPUS if (CORPUS / "cases.jsonl").exists() else None
    return DataSource.load(corpus, Path(tmp_path_factory.mktemp("data")))
