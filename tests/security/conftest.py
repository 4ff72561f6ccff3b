"""Fixtures shared with the store tests: one fresh store per backend."""

from __future__ import annotations

from tests.stores.conftest import store

__all__ = ["store"]
