"""What a client sees on Lambda when work outlives its request, in both execution modes:
the JSON-RPC front door through the real Mangum handler, its Lambda context saying how long
the invocation has left; in queue mode a worker process runs the agent."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from a2akit.examples.cancellable import CountingAgent
from a2akit.examples.streaming import StreamingAgent
from a2akit.generated import a2a_pb2 as pb
from a2akit.runtime import build_operations
from a2akit.settings import Settings
from a2akit.store.base import Scope
from a2akit.store.dynamodb import DynamoDBStore
from http_service.app import create_app
from tests.execution.processes import kit_env, worker
from tests.execution.sqs import make_queues
from tests.jsonrpc.client import LambdaClient, lambda_event_loop
from tests.store.conftest import TABLE
from tests.support.harness import memory_operations
from tests.support.messages import user_message
from tests.support.moto import client as aws_client

pytestmark = pytest.mark.slow

# The streaming demo agent writes one word every 0.02 s: 150 words take about 3 s.
WORDS = " ".join(f"w{i}" for i in range(150))


@pytest.fixture
def queued(ddb_endpoint: str, moto_endpoint: str, tmp_path: Path
           ) -> Iterator[tuple[LambdaClient, DynamoDBStore]]:
    """The front door in queue mode on Lambda, and a worker process running the streaming
    demo agent; yields the client and a store to read tasks without the front door."""
    sqs = aws_client("sqs", moto_endpoint)
    queue, _ = make_queues(sqs)
    sqs.close()
    settings = Settings(table=TABLE, dynamodb_endpoint=ddb_endpoint, allow_anonymous=True,
                        execution="queue", queue_url=queue, sqs_endpoint=moto_endpoint,
                        budget_margin_seconds=0.5)
    env = kit_env(ddb_endpoint, "a2akit.examples.streaming:agent",
                  AWS_ENDPOINT_URL_SQS=moto_endpoint, A2A_QUEUE_URL=queue)
    with worker(env, tmp_path / "worker.log"), lambda_event_loop():
        ops = build_operations(settings, agent=StreamingAgent())
        assert isinstance(ops.store, DynamoDBStore)
        yield LambdaClient(create_app(ops), "function_url.json"), ops.store
    asyncio.run(ops.close())


def _stored_state(store: DynamoDBStore, scope: Scope, task_id: str) -> int:
    loop = asyncio.new_event_loop()
    try:
        stored = loop.run_until_complete(store.get(scope, task_id))
    finally:
        loop.close()
    assert stored is not None
    return stored.task.status.state


def _wait_completed(store: DynamoDBStore, scope: Scope, task_id: str) -> None:
    deadline = time.monotonic() + 30
    while _stored_state(store, scope, task_id) != pb.TASK_STATE_COMPLETED:
        assert time.monotonic() < deadline, "the worker never completed the task"
        time.sleep(0.05)


def test_return_immediately_is_completed_by_the_worker(
    queued: tuple[LambdaClient, DynamoDBStore]
) -> None:
    rpc, store = queued
    tenant = f"q-{uuid.uuid4().hex[:8]}"
    task = rpc.result("SendMessage", {"tenant": tenant, "message": user_message("hi there"),
                                      "configuration": {"returnImmediately": True}})["task"]
    assert task["status"]["state"] == "TASK_STATE_SUBMITTED"
    # No further request to the front door: the task is read from the table directly.
    _wait_completed(store, Scope(tenant, "anonymous"), task["id"])
    done = rpc.result("GetTask", {"tenant": tenant, "id": task["id"]})
    assert "".join(p["text"] for p in done["artifacts"][0]["parts"]) == "hi there"


def test_queue_mode_answers_at_the_budget_and_the_worker_carries_on(
    queued: tuple[LambdaClient, DynamoDBStore]
) -> None:
    rpc, store = queued
    tenant = f"b-{uuid.uuid4().hex[:8]}"
    scope = Scope(tenant, "anonymous")
    rpc.remaining_ms = 2000  # less the 0.5 s margin: 1.5 s to answer
    started = time.monotonic()
    task = rpc.result("SendMessage", {"tenant": tenant, "message": user_message(WORDS)})["task"]
    assert time.monotonic() - started < 2.0
    assert task["status"]["state"] in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
    # A stream ends at its budget without a final status: the client subscribes again.
    reply = rpc.call("SendStreamingMessage", {"tenant": tenant, "message": user_message(WORDS)})
    events = [frame["result"] for frame in reply.events()]
    assert events[0]["task"]["status"]["state"] == "TASK_STATE_SUBMITTED"
    assert not any(e.get("statusUpdate", {}).get("status", {}).get("state")
                   == "TASK_STATE_COMPLETED" for e in events)
    streamed = events[0]["task"]["id"]
    final: list[dict[str, Any]] = []
    for _ in range(10):
        again = rpc.call("SubscribeToTask", {"tenant": tenant, "id": streamed})
        if again.headers["content-type"].startswith("application/json"):
            break  # completed between two subscriptions: nothing left to follow
        final = [frame["result"] for frame in again.events()]
        if final[-1].get("statusUpdate", {}).get("status", {}).get("state") \
                == "TASK_STATE_COMPLETED":
            break
    for task_id in (task["id"], streamed):
        _wait_completed(store, scope, task_id)
        done = rpc.result("GetTask", {"tenant": tenant, "id": task_id})
        assert "".join(p["text"] for p in done["artifacts"][0]["parts"]) == WORDS


@pytest.fixture
def inline() -> Iterator[LambdaClient]:
    settings = Settings(allow_anonymous=True, budget_margin_seconds=0.5)
    with lambda_event_loop():
        client = LambdaClient(create_app(memory_operations(CountingAgent(), settings)),
                              "apigw_http_v2.json")
        client.remaining_ms = 1500  # less the margin: a budget of 1 s
        yield client


def test_inline_on_lambda_the_budget_ends_the_task_failed(inline: LambdaClient) -> None:
    task = inline.result("SendMessage", {"message": user_message("count")})["task"]
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    text = task["status"]["message"]["parts"][0]["text"]
    assert "time limit of this request on AWS Lambda: 1 s" in text
    events = [frame["result"] for frame in
              inline.call("SendStreamingMessage", {"message": user_message("count")}).events()]
    assert events[0]["task"]["status"]["state"] == "TASK_STATE_SUBMITTED"
    assert any("artifactUpdate" in e for e in events)
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_FAILED"
    stored = inline.result("GetTask", {"id": events[0]["task"]["id"]})
    assert stored["status"]["state"] == "TASK_STATE_FAILED"
