from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.stores._backends import BACKENDS, SQL_BACKENDS, backend_params, make_store


@pytest.fixture(params=backend_params(BACKENDS))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """One fresh store per backend."""
    s, cleanup = make_store(request.param, tmp_path)
    try:
        yield s
    finally:
        cleanup()


@pytest.fixture(params=backend_params(BACKENDS))
def store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """Builds stores of one backend with options (each in its own directory/prefix)."""
    cleanups: list[Callable[[], None]] = []
    counter = [0]

    def build(**options: Any) -> Any:
        counter[0] += 1
        d = tmp_path / f"s{counter[0]}"
        d.mkdir()
        s, cleanup = make_store(request.param, d, **options)
        cleanups.append(cleanup)
        return s

    build.backend = request.param  # type: ignore[attr-defined]
    try:
        yield build
    finally:
        for c in reversed(cleanups):
            c()


@pytest.fixture(params=backend_params(SQL_BACKENDS))
def sql_store_factory(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Callable[..., Any]]:
    cleanups: list[Callable[[], None]] = []
    counter = [0]

    def build(**options: Any) -> Any:
        counter[0] += 1
        d = tmp_path / f"s{counter[0]}"
        d.mkdir()
        s, cleanup = make_store(request.param, d, **options)
        cleanups.append(cleanup)
        return s

    build.backend = request.param  # type: ignore[attr-defined]
    try:
        yield build
    finally:
        for c in reversed(cleanups):
            c()
