"""Fixtures for the queue tests: both stores (as the store contract runs them), and an SQS
client on moto's server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.store.conftest import scope, store
from tests.support.moto import client as aws_client

__all__ = ["scope", "sqs", "store"]


@pytest.fixture
def sqs(moto_endpoint: str) -> Iterator[Any]:
    client = aws_client("sqs", moto_endpoint)
    yield client
    client.close()
