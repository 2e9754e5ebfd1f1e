"""The worker on real parts: SQS on moto's server, DynamoDB Local, records as the Lambda SQS
event source delivers them (received from the queue, so receive counts are SQS's own)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from typing import Any

import pytest

from a2akit.auth import Identity
from a2akit.caller import Call
from a2akit.errors import UnavailableError
from a2akit.execution.queue import ENQUEUE_FAILED
from a2akit.execution.worker import DEAD_LETTER_TEXT, Worker
from a2akit.generated import a2a_pb2 as pb
from a2akit.runtime import build_operations
from a2akit.settings import Settings
from a2akit.store.base import Scope
from a2akit.store.dynamodb import DynamoDBStore
from tests.execution.sqs import make_queues
from tests.execution.test_leases import Slow
from tests.store.conftest import TABLE
from tests.support.messages import send_request

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

MAX_RECEIVES = 3


@pytest.fixture
def settings(ddb_endpoint: str, moto_endpoint: str, sqs: Any) -> Settings:
    queue, _ = make_queues(sqs, visibility_seconds=1, max_receives=MAX_RECEIVES)
    return Settings(table=TABLE, dynamodb_endpoint=ddb_endpoint, allow_anonymous=True,
                    execution="queue", queue_url=queue, sqs_endpoint=moto_endpoint,
                    lease_seconds=1.0, budget_margin_seconds=0.5,
                    queue_max_receives=MAX_RECEIVES)


@pytest.fixture
def store(ddb_client: Any) -> DynamoDBStore:
    return DynamoDBStore(TABLE, ddb_client)


async def _receive(sqs: Any, queue: str) -> dict[str, Any]:
    """One record as the event source hands it to the worker (waits for redelivery). In a
    thread: the runner renewing its 1 s lease shares this event loop."""
    return await asyncio.to_thread(_receive_now, sqs, queue)


def _receive_now(sqs: Any, queue: str, wait: float = 5.0) -> dict[str, Any]:
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        got = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=1, WaitTimeSeconds=1,
                                  AttributeNames=["All"])
        for message in got.get("Messages", []):
            return {"messageId": message["MessageId"], "receiptHandle": message["ReceiptHandle"],
                    "body": message["Body"], "attributes": message["Attributes"],
                    "messageAttributes": {}, "md5OfBody": message["MD5OfBody"],
                    "eventSource": "aws:sqs", "awsRegion": "us-east-1",
                    "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:test"}
    raise AssertionError("no message arrived")


async def _send(settings: Settings, store: DynamoDBStore, scope: Scope) -> str:
    ops = build_operations(settings, store=store, agent=Slow())
    request = send_request("queued")
    request.tenant = scope.tenant
    request.configuration.return_immediately = True
    answer = await ops.send_message(request, Call(Identity(scope.owner, "test")))
    assert answer.task.status.state == pb.TASK_STATE_SUBMITTED
    return answer.task.id


async def _state(store: DynamoDBStore, scope: Scope, task_id: str) -> int:
    stored = await store.get(scope, task_id)
    assert stored is not None
    return stored.task.status.state


async def _until_state(store: DynamoDBStore, scope: Scope, task_id: str, state: int) -> None:
    deadline = time.monotonic() + 15
    while await _state(store, scope, task_id) != state:
        assert time.monotonic() < deadline, f"task never reached {pb.TaskState.Name(state)}"
        await asyncio.sleep(0.05)


async def test_a_redelivered_message_never_starts_a_second_run(
    settings: Settings, store: DynamoDBStore, scope: Scope, sqs: Any
) -> None:
    task_id = await _send(settings, store, scope)
    agent = Slow()
    worker = Worker(settings, store, agent)
    first = await _receive(sqs, settings.queue_url or "")
    running = asyncio.ensure_future(worker.handle_batch([first], lambda: 60.0))
    await _until_state(store, scope, task_id, pb.TASK_STATE_WORKING)
    # Not deleted while it runs: SQS delivers it again after the 1 s visibility timeout.
    again = await _receive(sqs, settings.queue_url or "")
    assert again["attributes"]["ApproximateReceiveCount"] == "2"
    assert await worker.handle_batch([again], lambda: 60.0) == {"batchItemFailures": []}
    assert agent.runs == 1 and not running.done()
    agent.release.set()
    assert await running == {"batchItemFailures": []}
    assert await _state(store, scope, task_id) == pb.TASK_STATE_COMPLETED
    # A delivery after the task finished does nothing either.
    late = await _receive(sqs, settings.queue_url or "")
    assert await worker.handle_batch([late], lambda: 60.0) == {"batchItemFailures": []}
    assert agent.runs == 1
    stored = await store.get(scope, task_id)
    assert stored is not None and stored.task.status.state == pb.TASK_STATE_COMPLETED


async def test_two_deliveries_at_once_run_the_agent_once(
    settings: Settings, store: DynamoDBStore, scope: Scope, sqs: Any
) -> None:
    task_id = await _send(settings, store, scope)
    agent = Slow()
    agent.release.set()
    record = await _receive(sqs, settings.queue_url or "")
    workers = [Worker(settings, store, agent) for _ in range(3)]
    results = await asyncio.gather(*(w.handle_batch([record], lambda: 60.0) for w in workers))
    assert results == [{"batchItemFailures": []}] * 3
    assert agent.runs == 1
    assert await _state(store, scope, task_id) == pb.TASK_STATE_COMPLETED


async def test_the_worker_budget_ends_the_task_failed_naming_the_limit(
    settings: Settings, store: DynamoDBStore, scope: Scope, sqs: Any
) -> None:
    task_id = await _send(settings, store, scope)
    record = await _receive(sqs, settings.queue_url or "")
    agent = Slow()  # never released: the agent would run forever
    started = time.monotonic()
    result = await Worker(settings, store, agent).handle_batch([record], lambda: 0.8)
    assert result == {"batchItemFailures": []}
    assert time.monotonic() - started < 5
    stored = await store.get(scope, task_id)
    assert stored is not None and stored.task.status.state == pb.TASK_STATE_FAILED
    text = stored.task.status.message.parts[0].text
    assert "time limit of this worker's invocation: 1 s" in text and "15 minutes" in text
    assert stored.lease is None


async def test_a_poison_message_goes_to_the_dead_letter_queue_and_its_task_fails(
    settings: Settings, store: DynamoDBStore, scope: Scope, sqs: Any
) -> None:
    task_id = await _send(settings, store, scope)
    queue = settings.queue_url or ""
    good = await _receive(sqs, queue)
    sqs.delete_message(QueueUrl=queue, ReceiptHandle=good["receiptHandle"])
    # The same job naming a message the task does not hold: no delivery can succeed.
    poison = json.loads(good["body"])
    poison["messageId"] = "no-such-message"
    sqs.send_message(QueueUrl=queue, MessageBody=json.dumps(poison))
    worker = Worker(settings, store, Slow())
    for receive in range(1, MAX_RECEIVES + 1):
        record = await _receive(sqs, queue)
        assert record["attributes"]["ApproximateReceiveCount"] == str(receive)
        result = await worker.handle_batch([record], lambda: 60.0)
        assert result == {"batchItemFailures": [{"itemIdentifier": record["messageId"]}]}
        expected = pb.TASK_STATE_FAILED if receive == MAX_RECEIVES else pb.TASK_STATE_SUBMITTED
        assert await _state(store, scope, task_id) == expected
    stored = await store.get(scope, task_id)
    assert stored is not None and stored.task.status.message.parts[0].text == DEAD_LETTER_TEXT
    # SQS moves it on the receive after the last one the redrive policy allows.
    dead_letter_url = queue + "-dlq"
    assert not sqs.receive_message(QueueUrl=queue, WaitTimeSeconds=2).get("Messages")
    moved = sqs.receive_message(QueueUrl=dead_letter_url, WaitTimeSeconds=2)["Messages"]
    assert json.loads(moved[0]["Body"])["taskId"] == task_id


async def test_a_failed_enqueue_fails_the_task_and_answers_unavailable(
    settings: Settings, store: DynamoDBStore, scope: Scope
) -> None:
    broken = dataclasses.replace(settings, queue_url=(settings.queue_url or "") + "-missing")
    ops = build_operations(broken, store=store, agent=Slow())
    request = send_request("lost")
    request.tenant = scope.tenant
    caller = Call(Identity(scope.owner, "test"))
    with pytest.raises(UnavailableError):
        await ops.send_message(request, caller)
    page = await ops.list_tasks(pb.ListTasksRequest(tenant=scope.tenant), caller)
    (task,) = page.tasks
    assert task.status.state == pb.TASK_STATE_FAILED
    assert task.status.message.parts[0].text == ENQUEUE_FAILED
