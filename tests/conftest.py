"""Session-wide fixtures: the AWS emulators, started on first use and stopped at the end.

    ddb_endpoint    DynamoDB Local with the session's table (scripts/dynamodb_local.py)
    moto_endpoint   moto's server: Secrets Manager and SSM (tests/auth), SQS (tests/execution)
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from anyio.pytest_plugin import get_runner
from hypothesis import HealthCheck, settings

from a2akit.store import table
from a2akit.store.dynamodb import make_client
from scripts.dynamodb_local import dynamodb_local, set_dummy_credentials
from tests.store.conftest import TABLE
from tests.support.harness import end_tasks
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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each test's tier (pyproject.toml's markers), from its folder: `unit` in a `unit/`
    folder, `process` in a `process/` folder, `integration` everywhere else."""
    for item in items:
        folders = item.path.relative_to(item.config.rootpath).parts[:-1]
        tier = next((name for name in ("unit", "process") if name in folders), "integration")
        item.add_marker(tier)


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session", autouse=True)
def one_event_loop(anyio_backend: str) -> Iterator[asyncio.AbstractEventLoop]:
    """Holds anyio's test runner for the session, so every async test and fixture runs on
    one event loop that closes only at the end: grpc.aio delivers completions to the loop a
    server or call was made on (see tests.support.harness.background_loop), and with a loop
    per test a late one was raised as "Event loop is closed" in whichever test ran next."""
    with get_runner(anyio_backend, {}) as test_runner:  # lives while someone holds it
        yield test_runner.get_loop()  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def tasks_end_with_their_test(one_event_loop: asyncio.AbstractEventLoop) -> Iterator[None]:
    """What an async test leaves running on the shared loop (an agent still working, a stream
    not read to its end) is cancelled when it ends, as closing a loop of its own did: the
    next test finds only its own runs (`runner.drain` counts them)."""
    yield
    anyio_tasks = {task for task in asyncio.all_tasks(one_event_loop)
                   if task.get_coro().__qualname__.endswith("_run_tests_and_fixtures")}
    if asyncio.all_tasks(one_event_loop) - anyio_tasks:
        one_event_loop.run_until_complete(end_tasks(keep=anyio_tasks))


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
