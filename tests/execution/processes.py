"""Kit processes for the queue tests: a queue worker (`scripts.run_worker`) and the gRPC
container (`python -m grpc_service`), on DynamoDB Local and moto's SQS, with short leases."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import sys
import time
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from subprocess import Popen
from typing import Any, TypeVar

import grpc

from a2akit.store.base import Scope, StoredTask
from a2akit.store.dynamodb import DynamoDBStore
from grpc_service.generated import a2a_pb2_grpc
from tests.store.conftest import TABLE
from tests.support.processes import free_port, python_env, running, wait_for_output

T = TypeVar("T")

__all__ = ["LEASE_SECONDS", "SWEEP_SECONDS", "artifact_steps", "container", "kit_env",
           "long_worker", "read_stored", "run_sync", "wait_until", "worker"]

LEASE_SECONDS = 1.0
SWEEP_SECONDS = 0.5


def kit_env(ddb_endpoint: str, agent: str, **values: str) -> dict[str, str]:
    return python_env(A2A_TABLE=TABLE, AWS_ENDPOINT_URL_DYNAMODB=ddb_endpoint,
                      A2A_ALLOW_ANONYMOUS="true", A2A_AGENT=agent,
                      A2A_LEASE_SECONDS=str(LEASE_SECONDS),
                      A2A_SWEEP_SECONDS=str(SWEEP_SECONDS), **values)


@contextlib.contextmanager
def worker(env: dict[str, str], log: Path, *, timeout: float = 900.0) -> Iterator[Popen[bytes]]:
    """A worker polling `A2A_QUEUE_URL`; yields the process once it polls."""
    with running([sys.executable, "-m", "scripts.run_worker", "--timeout", str(timeout)],
                 ports=[], env=env, log=log) as process:
        wait_for_output(log, "worker polling", process)
        yield process


@contextlib.contextmanager
def long_worker(env: dict[str, str], log: Path) -> Iterator[Popen[bytes]]:
    """The long-task lane's worker polling `A2A_LONG_QUEUE_URL`; yields it once it polls."""
    with running([sys.executable, "-m", "handlers.long_worker"], ports=[], env=env,
                 log=log) as process:
        wait_for_output(log, "long worker polling", process)
        yield process


@contextlib.contextmanager
def container(env: dict[str, str], log: Path) -> Iterator[tuple[Popen[bytes], Any]]:
    """The gRPC container; yields the process and a connected stub."""
    port = free_port()
    with running([sys.executable, "-m", "grpc_service"], ports=[port],
                 env={**env, "GRPC_PORT": str(port)}, log=log) as process, \
            grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        yield process, a2a_pb2_grpc.A2AServiceStub(channel)  # type: ignore[no-untyped-call]


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to its end in a thread of its own: the Lambda client's event loop,
    current in this thread, is left alone."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def read_stored(store: DynamoDBStore, scope: Scope, task_id: str) -> StoredTask:
    """The task as stored, read raw: no reader rule applied."""
    found = run_sync(store.get(scope, task_id))
    assert found is not None
    return found


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> float:
    """Poll `condition` until it holds; returns the seconds it took."""
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout, f"{what} within {timeout} s"
        time.sleep(0.02)
    return time.monotonic() - started


def artifact_steps(store: DynamoDBStore, scope: Scope, task_id: str) -> int:
    """How many chunks the task's first artifact holds, as stored."""
    task = read_stored(store, scope, task_id).task
    return len(task.artifacts[0].parts) if task.artifacts else 0
