"""Fixtures for the framework adapters' tests: the kit in process over either store, served
over gRPC on loopback.

The frameworks come with their extras, which `./dev test` (and so CI) installs; run alone,
`pip install -e '.[langgraph]'` first.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import pytest

from a2akit.runtime import build_operations
from a2akit.store.base import TaskStore
from a2akit.store.dynamodb import DynamoDBStore
from a2akit.store.memory import MemoryStore
from tests.store.conftest import TABLE
from tests.support.harness import ANON, GrpcHarness, grpc_server

# kit(agent, **settings) -> the gRPC binding over the core running `agent` on `store`.
Kit = Callable[..., Awaitable[GrpcHarness]]


@pytest.fixture(params=["memory", pytest.param("dynamodb", marks=pytest.mark.slow)])
def store(request: pytest.FixtureRequest) -> Iterator[TaskStore]:
    """The embedded store and DynamoDB Local (the session's table; a test reads only the
    tasks it made)."""
    if request.param == "memory":
        yield MemoryStore()
    else:
        yield DynamoDBStore(TABLE, request.getfixturevalue("ddb_client"))


@pytest.fixture
async def kit(store: TaskStore) -> AsyncIterator[Kit]:
    async with contextlib.AsyncExitStack() as stack:

        async def _start(agent: Any, **overrides: Any) -> GrpcHarness:
            ops = build_operations(dataclasses.replace(ANON, **overrides), store=store,
                                   agent=agent)
            return await stack.enter_async_context(grpc_server(ops))

        yield _start
