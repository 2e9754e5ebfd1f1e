"""The JSON-RPC tests' front ends (tests/jsonrpc/client.py, KINDS) and a client of each over
the echo agent."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.jsonrpc.client import KINDS, Client, app_client


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def rpc(kind: str) -> Iterator[Client]:
    yield from app_client(kind)
