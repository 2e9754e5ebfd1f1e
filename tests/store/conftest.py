"""Fixtures for the store tests: both stores, DynamoDB through DynamoDB Local."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from a2akit import aws
from a2akit.store import table
from a2akit.store.base import Scope, TaskStore
from a2akit.store.dynamodb import DynamoDBStore, env_client
from a2akit.store.memory import MemoryStore

TABLE = "a2akit-test"  # the session's table (tests/conftest.py: ddb_endpoint, ddb_client)


@pytest.fixture(params=["memory", pytest.param("dynamodb", marks=pytest.mark.slow),
                        pytest.param("dynamodb-kit-client", marks=pytest.mark.slow)])
def store(request: pytest.FixtureRequest) -> Iterator[TaskStore]:
    """The embedded store, and the DynamoDB store on boto3's client and on the kit's own
    (what Lambda uses)."""
    if request.param == "memory":
        yield MemoryStore()
    elif request.param == "dynamodb":
        yield DynamoDBStore(TABLE, request.getfixturevalue("ddb_client"))
    else:
        client = env_client(request.getfixturevalue("ddb_endpoint"))
        assert client is not None  # the dummy credentials and region are in the environment
        yield DynamoDBStore(TABLE, client)
        client.close()


@pytest.fixture
def scope() -> Scope:
    """A fresh tenant per test: tests share one table but never each other's items."""
    return Scope(tenant=f"t#{uuid.uuid4().hex[:8]}", owner="alice")


@pytest.fixture
def ddb(ddb_client: Any) -> DynamoDBStore:
    """The DynamoDB store on the session's table."""
    return DynamoDBStore(TABLE, ddb_client)


@pytest.fixture
def own_client(ddb_endpoint: str) -> Iterator[Any]:
    """A boto3 client of its own (one attempt per call), for hooks that stop its calls."""
    client = aws.client("dynamodb", endpoint_url=ddb_endpoint, region_name="us-east-1",
                        max_attempts=1)
    yield client
    client.close()


def partition(client: Any, pk: str) -> list[dict[str, Any]]:
    """Every item of the partition (pages of 1 MB: a large task's parts fill a few)."""
    items: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"TableName": TABLE, "KeyConditionExpression": "pk = :pk",
                              "ExpressionAttributeValues": {":pk": {"S": pk}},
                              "ConsistentRead": True}
    while True:
        page = client.query(**kwargs)
        items += page["Items"]
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def assert_expire_together(items: list[dict[str, Any]], sort_keys: list[str],
                           days: float = 30) -> None:
    """The partition holds exactly `sort_keys`, each expiring in about `days`."""
    assert sorted(item["sk"]["S"] for item in items) == sort_keys
    expected = time.time() + days * 86400
    for item in items:
        assert abs(int(item[table.TTL_ATTRIBUTE]["N"]) - expected) < 60, item["sk"]
