"""Fixtures of the interop tests with the A2A 0.3 clients (tests/compat03/process/kit03.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.compat03.process.kit03 import Kit, kit_server


@pytest.fixture(scope="module", params=["embedded", "dynamodb"])
def server(request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kit]:
    """The kit (`kit_server`) on the embedded store and on DynamoDB Local, per module: the
    server of the 0.3 client tests."""
    endpoint = request.getfixturevalue("ddb_endpoint") if request.param == "dynamodb" else None
    with kit_server(tmp_path_factory.mktemp("kit03") / "server.log", endpoint) as kit:
        yield kit
