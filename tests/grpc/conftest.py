"""Fixtures for the gRPC binding tests: servers over the in-process core (tests.support);
for the 0.3 service, servers over either store."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from a2akit.examples.echo import EchoAgent
from a2akit.runtime import build_operations
from a2akit.settings import Settings
from a2akit.store.base import TaskStore
from a2akit.store.dynamodb import DynamoDBStore
from a2akit.store.memory import MemoryStore
from tests.store.conftest import TABLE
from tests.support.grpc03 import Env03, Start03, open_env03
from tests.support.harness import ANON, GrpcHarness, Start, grpc_server, memory_operations


@pytest.fixture
async def start() -> AsyncIterator[Start]:
    """start(agent=None, **settings) -> a running server with a connected stub."""
    async with contextlib.AsyncExitStack() as stack:

        async def _start(agent: Any = None, **overrides: Any) -> GrpcHarness:
            ops = memory_operations(agent, dataclasses.replace(ANON, **overrides))
            return await stack.enter_async_context(grpc_server(ops))

        yield _start


@pytest.fixture
async def grpc_env(start: Start) -> GrpcHarness:
    return await start()


@pytest.fixture(params=["memory", pytest.param("dynamodb", marks=pytest.mark.slow)])
def store(request: pytest.FixtureRequest) -> Iterator[TaskStore]:
    """The embedded store and DynamoDB Local (the session's table, shared: a test reads only
    the tasks it made, by their ids)."""
    if request.param == "memory":
        yield MemoryStore()
    else:
        yield DynamoDBStore(TABLE, request.getfixturevalue("ddb_client"))


@pytest.fixture
async def start03(store: TaskStore) -> AsyncIterator[Start03]:
    """start03(agent=None, settings=ANON, **overrides) -> a running server over `store`."""
    async with contextlib.AsyncExitStack() as stack:

        async def _start(agent: Any = None, settings: Settings = ANON,
                         **overrides: Any) -> Env03:
            ops = build_operations(dataclasses.replace(settings, **overrides), store=store,
                                   agent=agent if agent is not None else EchoAgent())
            return await stack.enter_async_context(open_env03(ops))

        yield _start
