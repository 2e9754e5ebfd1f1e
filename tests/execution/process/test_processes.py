"""Runners that die, and readers in other processes: a worker or the container killed with
SIGKILL mid-task, the container stopped with SIGTERM, a subscriber in a second process that
reconnects. DynamoDB Local and moto's SQS; leases of 1 s and a sweep every 0.5 s."""

from __future__ import annotations

import asyncio
import signal
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from a2akit.auth import Identity
from a2akit.caller import Call
from a2akit.examples.cancellable import CountingAgent
from a2akit.generated import a2a_pb2 as pb
from a2akit.runtime import build_operations
from a2akit.settings import Settings
from a2akit.store.base import Scope
from a2akit.store.dynamodb import DynamoDBStore
from http_service.app import create_app
from tests.execution.processes import (
    LEASE_SECONDS,
    SWEEP_SECONDS,
    artifact_steps,
    container,
    kit_env,
    read_stored,
    run_sync,
    wait_until,
    worker,
)
from tests.execution.sqs import make_queues
from tests.jsonrpc.client import LambdaClient, lambda_event_loop
from tests.store.conftest import TABLE
from tests.support.messages import V1, send_request
from tests.support.moto import client as aws_client

pytestmark = pytest.mark.slow

COUNTING = "a2akit.examples.cancellable:agent"
# What a dead runner's task may take to end: its lease, one sweep, and the poll here.
DEATH_TO_FAILED = LEASE_SECONDS + SWEEP_SECONDS + 2.0


@pytest.fixture
def store(ddb_client: Any) -> DynamoDBStore:
    return DynamoDBStore(TABLE, ddb_client)










def test_a_worker_killed_mid_task_leaves_it_failed_seen_through_grpc(
    ddb_endpoint: str, moto_endpoint: str, store: DynamoDBStore, tmp_path: Path
) -> None:
    sqs = aws_client("sqs", moto_endpoint)
    queue, _ = make_queues(sqs, visibility_seconds=30)
    sqs.close()
    env = kit_env(ddb_endpoint, COUNTING, AWS_ENDPOINT_URL_SQS=moto_endpoint,
                  A2A_QUEUE_URL=queue)
    settings = Settings(table=TABLE, dynamodb_endpoint=ddb_endpoint, allow_anonymous=True,
                        execution="queue", queue_url=queue, sqs_endpoint=moto_endpoint)
    scope = Scope(f"w-{uuid.uuid4().hex[:8]}", "anonymous")
    # The gRPC container here only reads and sweeps: the task runs on the worker.
    with container(env, tmp_path / "grpc.log") as (_, stub), \
            worker(env, tmp_path / "worker.log") as process:
        ops = build_operations(settings, store=store, agent=CountingAgent())
        request = send_request("count")
        request.tenant = scope.tenant
        request.configuration.return_immediately = True
        task_id = run_sync(ops.send_message(request, Call(Identity(scope.owner, "test")))).task.id
        wait_until(lambda: artifact_steps(store, scope, task_id) >= 3, 20, "the worker ran")
        process.send_signal(signal.SIGKILL)
        process.wait()
        # Nobody reads the task: the container's sweeper ends it.
        took = wait_until(lambda: read_stored(store, scope, task_id).task.status.state
                     == pb.TASK_STATE_FAILED, DEATH_TO_FAILED, "FAILED after the kill")
        print(f"\nworker SIGKILL -> FAILED by the sweeper: {took:.2f} s")
        got = stub.GetTask(pb.GetTaskRequest(tenant=scope.tenant, id=task_id), metadata=V1)
        assert got.status.state == pb.TASK_STATE_FAILED
        assert "runner stopped" in got.status.message.parts[0].text
        assert read_stored(store, scope, task_id).lease is None


@pytest.fixture
def lambda_jsonrpc(ddb_endpoint: str) -> Iterator[LambdaClient]:
    settings = Settings(table=TABLE, dynamodb_endpoint=ddb_endpoint, allow_anonymous=True,
                        lease_seconds=LEASE_SECONDS, budget_margin_seconds=0.5)
    with lambda_event_loop():
        ops = build_operations(settings, agent=CountingAgent())
        yield LambdaClient(create_app(ops), "apigw_http_v2.json")
    asyncio.run(ops.close())


def _grpc_task(stub: Any, tenant: str) -> str:
    request = send_request("count")
    request.tenant = tenant
    request.configuration.return_immediately = True
    task_id: str = stub.SendMessage(request, metadata=V1).task.id
    return task_id


def test_a_container_killed_mid_task_leaves_it_failed_seen_through_jsonrpc(
    ddb_endpoint: str, store: DynamoDBStore, lambda_jsonrpc: LambdaClient, tmp_path: Path
) -> None:
    scope = Scope(f"c-{uuid.uuid4().hex[:8]}", "anonymous")
    with container(kit_env(ddb_endpoint, COUNTING), tmp_path / "grpc.log") as (process, stub):
        task_id = _grpc_task(stub, scope.tenant)
        wait_until(lambda: artifact_steps(store, scope, task_id) >= 3, 20, "the container ran it")
        process.send_signal(signal.SIGKILL)
        process.wait()

        def failed() -> bool:
            task = lambda_jsonrpc.result("GetTask", {"tenant": scope.tenant, "id": task_id})
            return bool(task["status"]["state"] == "TASK_STATE_FAILED")

        took = wait_until(failed, DEATH_TO_FAILED, "FAILED through GetTask")
        print(f"\ncontainer SIGKILL -> FAILED at a GetTask: {took:.2f} s")
    task = lambda_jsonrpc.result("GetTask", {"tenant": scope.tenant, "id": task_id})
    assert "runner stopped" in task["status"]["message"]["parts"][0]["text"]


def test_sigterm_gives_the_grace_then_fails_what_still_runs(
    ddb_endpoint: str, store: DynamoDBStore, tmp_path: Path
) -> None:
    scope = Scope(f"t-{uuid.uuid4().hex[:8]}", "anonymous")
    env = kit_env(ddb_endpoint, COUNTING, A2A_GRPC_SHUTDOWN_GRACE_SECONDS="1")
    log = tmp_path / "grpc.log"
    with container(env, log) as (process, stub):
        task_id = _grpc_task(stub, scope.tenant)
        wait_until(lambda: artifact_steps(store, scope, task_id) >= 2, 20, "the container ran it")
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0, log.read_text()
    stored = read_stored(store, scope, task_id)
    assert stored.task.status.state == pb.TASK_STATE_FAILED and stored.lease is None
    assert "server shut down" in stored.task.status.message.parts[0].text
    assert "Traceback" not in log.read_text()


def _chunks(task: dict[str, Any]) -> list[str]:
    artifacts = task.get("artifacts", [])
    return [part["text"] for part in artifacts[0]["parts"]] if artifacts else []


def test_a_subscriber_in_another_process_reconnects_without_loss_or_repeat(
    ddb_endpoint: str, lambda_jsonrpc: LambdaClient, tmp_path: Path
) -> None:
    """The container runs the agent; JSON-RPC on Lambda (this process) subscribes. Each
    stream ends at its budget (1 s: 1.5 s left less the 0.5 s margin) and the client
    subscribes again: every stream starts with the snapshot, and its events continue it
    chunk by chunk, none lost or repeated, until the task ends."""
    tenant = f"s-{uuid.uuid4().hex[:8]}"
    lambda_jsonrpc.remaining_ms = 1500
    with container(kit_env(ddb_endpoint, COUNTING), tmp_path / "grpc.log") as (_, stub):
        task_id = _grpc_task(stub, tenant)
        streams = 0
        seen = 0
        final = None
        cancel = threading.Timer(0.5, lambda: stub.CancelTask(
            pb.CancelTaskRequest(tenant=tenant, id=task_id), metadata=V1))
        while final is None:
            if streams == 2:
                cancel.start()  # in the middle of the third stream
            reply = lambda_jsonrpc.call("SubscribeToTask", {"tenant": tenant, "id": task_id})
            events = [frame["result"] for frame in reply.events()]
            streams += 1
            snapshot = events[0]["task"]
            chunks = _chunks(snapshot)
            assert len(chunks) >= seen  # the snapshot holds everything seen so far
            for event in events[1:]:
                if "artifactUpdate" in event:
                    (part,) = event["artifactUpdate"]["artifact"]["parts"]
                    assert part["text"] == f"{len(chunks)} "  # the next chunk, exactly
                    chunks.append(part["text"])
                else:
                    state = event["statusUpdate"]["status"]["state"]
                    assert state == "TASK_STATE_CANCELED" and event is events[-1]
                    final = chunks
            seen = len(chunks)
            assert streams < 10
        cancel.join()
        stored = lambda_jsonrpc.result("GetTask", {"tenant": tenant, "id": task_id})
        assert _chunks(stored) == final
        assert streams >= 3
