"""Session-wide fixtures: the AWS emulators, started on first use and stopped at the end.

    ddb_endpoint   DynamoDB Local with the session's table (tests/dynamodb_local.py)
    sqs_endpoint   moto's server for SQS (tests/sqs_local.py)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from a2akit.store import table
from a2akit.store.dynamodb import make_client
from tests.dynamodb_local import TABLE, dynamodb_local, set_dummy_credentials
from tests.sqs_local import moto_sqs


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
def sqs_endpoint() -> Iterator[str]:
    """moto's SQS server, once per session."""
    set_dummy_credentials()
    with moto_sqs() as url:
        yield url
