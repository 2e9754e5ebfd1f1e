"""Fixtures for the gRPC binding tests: servers over the in-process core (tests.support)."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import pytest

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
