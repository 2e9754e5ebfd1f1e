"""Fixtures for the store tests: both stores, DynamoDB through DynamoDB Local."""

from __future__ import annotations

import uuid

import pytest

from a2akit.store.base import Scope, TaskStore
from a2akit.store.dynamodb import DynamoDBStore
from a2akit.store.memory import MemoryStore

TABLE = "a2akit-test"  # the session's table (tests/conftest.py: ddb_endpoint, ddb_client)


@pytest.fixture(params=["memory", pytest.param("dynamodb", marks=pytest.mark.slow)])
def store(request: pytest.FixtureRequest) -> TaskStore:
    if request.param == "memory":
        return MemoryStore()
    client = request.getfixturevalue("ddb_client")
    return DynamoDBStore(TABLE, client)


@pytest.fixture
def scope() -> Scope:
    """A fresh tenant per test: tests share one table but never each other's items."""
    return Scope(tenant=f"t#{uuid.uuid4().hex[:8]}", owner="alice")
