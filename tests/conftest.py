"""Session-wide fixtures: the AWS emulators, started on first use and stopped at the end.

    ddb_endpoint    DynamoDB Local with the session's table (scripts/dynamodb_local.py)
    moto_endpoint   moto's server: Secrets Manager and SSM (tests/auth), SQS (tests/queue)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from a2akit.store import table
from a2akit.store.dynamodb import make_client
from scripts.dynamodb_local import dynamodb_local, set_dummy_credentials
from tests.store.conftest import TABLE
from tests.support.moto import moto_server

# Hypothesis profiles for the property-based tests (tests/jsonrpc/test_fuzz.py).
# ci, the default: few examples, derandomized (the same examples on every run, so CI never
# flakes on a newly found case) and no per-example deadline (CI machines are slow at times).
# long: `pytest --hypothesis-profile=long`, many random examples, for a hunt before a release.
_SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large]
settings.register_profile("ci", max_examples=40, derandomize=True, deadline=None,
                          database=None, suppress_health_check=_SLOW_OK)
settings.register_profile("long", max_examples=2_000, deadline=None,
                          suppress_health_check=_SLOW_OK)
settings.load_profile("ci")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def ddb_endpoint() -> Iterator[str]:
    """DynamoDB Local with the table, once per session."""
    set_dummy_credentials()
    with dynamodb_local() as url:
        client = make_client(url, "us-east-1")
        try:
            client.create_table(**table.create_table_kwargs(TABLE))
            client.get_waiter("table_exists").wait(TableName=TABLE)
        finally:
            client.close()
        yield url


@pytest.fixture
def ddb_client(ddb_endpoint: str) -> Iterator[Any]:
    client = make_client(ddb_endpoint, "us-east-1")
    yield client
    client.close()


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    """moto's server, once per session."""
    with moto_server() as endpoint:
        yield endpoint
