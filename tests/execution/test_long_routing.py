"""Which queue a task goes to: the long-task lane's (A2A_LONG_QUEUE_URL) for an agent that
declares `long_running`, or for every task with A2A_LONG_TASKS=all; the Lambda worker's
otherwise. Real parts: the front door's operations on DynamoDB Local and moto's SQS."""

from __future__ import annotations

import json
from typing import Any

import pytest

from a2akit.agent import RequestContext, TaskHandle
from a2akit.auth import Identity
from a2akit.caller import Call
from a2akit.generated import a2a_pb2 as pb
from a2akit.runtime import build_operations
from a2akit.settings import ENV, Settings, SettingsError
from a2akit.store.dynamodb import DynamoDBStore
from tests.execution.sqs import make_queues
from tests.store.conftest import TABLE
from tests.support.messages import send_request

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


class Quick:
    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        await task.complete("done")


class Long(Quick):
    long_running = True


class PerTask(Quick):
    """Decides per task: a message that says "long" goes to the long lane."""

    def long_running(self, context: RequestContext) -> bool:
        return "long" in context.text


@pytest.fixture
def queues(sqs: Any) -> tuple[str, str]:
    lambda_queue, _ = make_queues(sqs)
    long_queue, _ = make_queues(sqs)
    return lambda_queue, long_queue


def _settings(ddb_endpoint: str, moto_endpoint: str, queues: tuple[str, str],
              **values: Any) -> Settings:
    return Settings(**{"table": TABLE, "dynamodb_endpoint": ddb_endpoint,
                       "allow_anonymous": True, "execution": "queue", "queue_url": queues[0],
                       "long_queue_url": queues[1], "sqs_endpoint": moto_endpoint, **values})


async def _send(settings: Settings, store: DynamoDBStore, agent: Any, text: str) -> str:
    ops = build_operations(settings, store=store, agent=agent)
    request = send_request(text)
    request.tenant = "routing"
    request.configuration.return_immediately = True
    answer = await ops.send_message(request, Call(Identity("anonymous", "test")))
    assert answer.task.status.state == pb.TASK_STATE_SUBMITTED
    await ops.close()
    return answer.task.id


def _queued(sqs: Any, queue: str) -> list[str]:
    """The task ids of the jobs waiting on `queue` (taken off it)."""
    ids = []
    while True:
        got = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10, WaitTimeSeconds=0)
        messages = got.get("Messages", [])
        if not messages:
            return ids
        for message in messages:
            ids.append(json.loads(message["Body"])["taskId"])
            sqs.delete_message(QueueUrl=queue, ReceiptHandle=message["ReceiptHandle"])


@pytest.fixture
def store(ddb_client: Any) -> DynamoDBStore:
    return DynamoDBStore(TABLE, ddb_client)


async def test_a_long_running_agents_task_lands_on_the_long_queue_others_on_the_lambdas(
    ddb_endpoint: str, moto_endpoint: str, sqs: Any, queues: tuple[str, str],
    store: DynamoDBStore,
) -> None:
    settings = _settings(ddb_endpoint, moto_endpoint, queues)
    long_task = await _send(settings, store, Long(), "research this")
    quick_task = await _send(settings, store, Quick(), "hello")
    per_task_long = await _send(settings, store, PerTask(), "a long one")
    per_task_quick = await _send(settings, store, PerTask(), "a short one")
    lambda_queue, long_queue = queues
    assert sorted(_queued(sqs, long_queue)) == sorted([long_task, per_task_long])
    assert sorted(_queued(sqs, lambda_queue)) == sorted([quick_task, per_task_quick])


async def test_with_all_every_task_goes_to_the_long_queue(
    ddb_endpoint: str, moto_endpoint: str, sqs: Any, queues: tuple[str, str],
    store: DynamoDBStore,
) -> None:
    settings = _settings(ddb_endpoint, moto_endpoint, queues, long_tasks="all")
    task = await _send(settings, store, Quick(), "hello")
    lambda_queue, long_queue = queues
    assert _queued(sqs, long_queue) == [task]
    assert _queued(sqs, lambda_queue) == []


async def test_without_a_long_queue_a_long_running_agent_stays_on_the_lambda_worker(
    ddb_endpoint: str, moto_endpoint: str, sqs: Any, queues: tuple[str, str],
    store: DynamoDBStore,
) -> None:
    settings = _settings(ddb_endpoint, moto_endpoint, queues, long_queue_url=None)
    task = await _send(settings, store, Long(), "research this")
    assert _queued(sqs, queues[0]) == [task]


def test_all_needs_the_long_queue() -> None:
    with pytest.raises(SettingsError, match=ENV.LONG_QUEUE_URL):
        Settings.from_env({ENV.LONG_TASKS: "all"})
    with pytest.raises(SettingsError, match=ENV.LONG_TASKS):
        Settings.from_env({ENV.LONG_TASKS: "some", ENV.LONG_QUEUE_URL: "https://sqs/1/q"})
    settings = Settings.from_env({ENV.LONG_TASKS: "ALL", ENV.LONG_QUEUE_URL: "https://sqs/1/q"})
    assert (settings.long_tasks, settings.long_queue_url) == ("all", "https://sqs/1/q")
