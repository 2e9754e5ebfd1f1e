"""The 0.3 tests' fixtures: a 0.3 JSON-RPC caller (`connect`, `rpc`) on each front end and
store, and those of the bindings and of push they extend: the gRPC ones (`start03` on both
stores) and push's receivers, tables and dead-letter queue."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from a2akit.agent import Agent
from a2akit.examples.echo import EchoAgent
from a2akit.settings import Settings
from tests.compat03.client03 import Caller03, open_store, serve03
from tests.grpc.conftest import grpc_env, start, start03, store
from tests.jsonrpc.client import KINDS
from tests.push.conftest import authority, dead_letters, receiver, table_name, tls_receiver
from tests.support.harness import ANON

__all__ = ["authority", "dead_letters", "grpc_env", "receiver", "start", "start03", "store",
           "table_name", "tls_receiver"]

STORES = ["memory", pytest.param("dynamodb", marks=pytest.mark.slow)]
# A request refused before any store is read or written takes the same path on both stores
# (measured with coverage contexts): its test runs on one.
REFUSED_BEFORE_THE_STORE = pytest.mark.parametrize("store_kind", ["memory"])
V1 = {"A2A-Version": "1.0"}


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=STORES)
def store_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def caller(store_kind: str, request: pytest.FixtureRequest) -> Iterator[Any]:
    """caller(agent=None, settings=ANON, kind="asgi") -> a 0.3 caller on a fresh app over the
    store."""
    ddb = request.getfixturevalue("ddb_client") if store_kind == "dynamodb" else None
    opened: list[Iterator[Any]] = []

    def make(agent: Agent | None = None, settings: Settings = ANON,
             kind: str = "asgi") -> Caller03:
        with open_store(store_kind, ddb) as store:
            clients = serve03(kind, store, agent or EchoAgent(), settings)
            opened.append(clients)
            return Caller03(next(clients))

    yield make
    for clients in reversed(opened):
        next(clients, None)


@pytest.fixture
def connect(caller: Any, kind: str) -> Any:
    """connect(agent=None, settings=ANON) -> a 0.3 caller of the test's front end."""
    def make(agent: Agent | None = None, settings: Settings = ANON) -> Caller03:
        made: Caller03 = caller(agent, settings, kind)
        return made

    return make


@pytest.fixture
def rpc(connect: Any) -> Caller03:
    caller: Caller03 = connect()
    return caller
