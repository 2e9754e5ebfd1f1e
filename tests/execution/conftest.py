"""Fixtures for the queue tests: both stores (as the store contract runs them)."""

from __future__ import annotations

from tests.store.conftest import scope, store

__all__ = ["scope", "store"]
