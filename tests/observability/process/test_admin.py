"""`python -m a2akit.admin` as an operator runs it, against DynamoDB Local and moto's SQS: an
expired task found and shown, a dead-lettered task message listed and redriven (and the task
then completed by a worker), a push dead-letter inspected without its secrets and dropped."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from a2akit.agent import RequestContext
from a2akit.execution.leases import lease_for
from a2akit.execution.queue import SqsQueue, enqueue
from a2akit.generated import a2a_pb2 as pb
from a2akit.push.dispatcher import Delivery, dead_letter
from a2akit.push.sender import Failed
from a2akit.settings import Settings
from a2akit.states import status_event
from a2akit.store.base import Scope
from a2akit.store.dynamodb import DynamoDBStore
from tests.execution.processes import kit_env, worker
from tests.execution.sqs import make_queues
from tests.store.conftest import TABLE
from tests.support.messages import proto_message
from tests.support.moto import client as aws_client
from tests.support.processes import ROOT

pytestmark = pytest.mark.slow


def _admin(env: dict[str, str], *args: str) -> Any:
    done = subprocess.run([sys.executable, "-m", "a2akit.admin", *args], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_an_expired_task_is_found_and_shown(ddb_endpoint: str, ddb_client: Any) -> None:
    store = DynamoDBStore(TABLE, ddb_client)
    scope = Scope(f"adm-{uuid.uuid4().hex[:8]}", "key:alice")
    task_id = str(uuid.uuid4())
    task = pb.Task(id=task_id, context_id="c1", status=pb.TaskStatus(
        state=pb.TASK_STATE_WORKING))
    asyncio.run(store.create(scope, task, [status_event(task_id, "c1", task.status)],
                             lease=lease_for("run#dead", -5)))
    env = kit_env(ddb_endpoint, "a2akit.examples.echo:agent")
    found = _admin(env, "expired", "--limit", "1000")
    assert {"tenant": scope.tenant, "owner": scope.owner, "taskId": task_id} in found
    shown = _admin(env, "task", scope.tenant, scope.owner, task_id)
    assert (shown["state"], shown["lease"]["owner"], shown["lease"]["expired"]) == (
        "WORKING", "run#dead", True)
    assert [e["state"] for e in shown["events"]] == ["WORKING"]
    listed = _admin(env, "tasks", scope.tenant, scope.owner, "--state", "working")
    assert [t["taskId"] for t in listed] == [task_id]
    # The admin command looks; it never settles: the task is as it was.
    assert asyncio.run(store.get(scope, task_id)).task.status.state == pb.TASK_STATE_WORKING


def test_a_dead_lettered_task_message_is_redriven_and_completes(
        ddb_endpoint: str, ddb_client: Any, moto_endpoint: str, tmp_path: Path) -> None:
    sqs = aws_client("sqs", moto_endpoint)
    queue_url, dlq_url = make_queues(sqs)
    store = DynamoDBStore(TABLE, ddb_client)
    scope = Scope(f"adm-{uuid.uuid4().hex[:8]}", "key:alice")
    secret = "meta-secret-" + uuid.uuid4().hex
    message = proto_message("hello")
    message.task_id, message.context_id = str(uuid.uuid4()), str(uuid.uuid4())
    metadata = pb.SendMessageRequest().metadata
    metadata.update({"note": secret})
    context = RequestContext(message=message, task=None, task_id=message.task_id,
                             context_id=message.context_id, caller=scope, metadata=metadata)
    # As if its deliveries had all failed: the job sits in the dead-letter queue.
    asyncio.run(enqueue(store, SqsQueue(dlq_url, sqs), Settings(), context, None, "claim-1"))
    env = kit_env(ddb_endpoint, "a2akit.examples.echo:agent", A2A_EXECUTION="queue",
                  A2A_QUEUE_URL=queue_url, AWS_ENDPOINT_URL_SQS=moto_endpoint)
    listed = _admin(env, "messages", dlq_url)
    (job,) = listed
    assert (job["kind"], job["taskId"], job["tenant"]) == ("task-job", message.task_id,
                                                          scope.tenant)
    assert job["metadataKeys"] == ["note"] and secret not in json.dumps(listed)
    assert _admin(env, "redrive", dlq_url, "--to", "tasks", "--id", job["id"]) == {
        "moved": [job["id"]]}
    assert _admin(env, "messages", dlq_url) == []
    with worker(env, tmp_path / "worker.log"):
        deadline = time.monotonic() + 30
        while (stored := asyncio.run(store.get(scope, message.task_id))) is None or (
                stored.task.status.state != pb.TASK_STATE_COMPLETED):
            assert time.monotonic() < deadline, "the redriven task did not complete"
            time.sleep(0.1)


def test_a_push_dead_letter_is_inspected_without_secrets_and_dropped(
        ddb_endpoint: str, moto_endpoint: str) -> None:
    sqs = aws_client("sqs", moto_endpoint)
    _, push_dlq = make_queues(sqs)
    secrets = {"token": "tok-" + uuid.uuid4().hex, "credentials": "cred-" + uuid.uuid4().hex,
               "content": "content-" + uuid.uuid4().hex, "query": "q-" + uuid.uuid4().hex}
    config = pb.TaskPushNotificationConfig(
        id="cfg-1", task_id="t-1", url=f"https://hook.example/a?key={secrets['query']}",
        token=secrets["token"], authentication=pb.AuthenticationInfo(
            scheme="Bearer", credentials=secrets["credentials"]))
    event = pb.StreamResponse(message=proto_message(secrets["content"]))
    record = dead_letter(Delivery(Scope("t", "key:alice"), "t-1", 3, event), config,
                         Failed(5, "HTTP 503", 503))
    sqs.send_message(QueueUrl=push_dlq, MessageBody=json.dumps(record))
    env = kit_env(ddb_endpoint, "a2akit.examples.echo:agent",
                  AWS_ENDPOINT_URL_SQS=moto_endpoint, A2A_PUSH_DLQ_URL=push_dlq)
    (shown,) = _admin(env, "messages", "push-dlq")
    assert (shown["kind"], shown["taskId"], shown["configId"], shown["seq"], shown["status"],
            shown["url"]) == ("push-dead-letter", "t-1", "cfg-1", 3, 503,
                              "https://hook.example/a")
    assert shown["event"] == ["message"]
    for secret in secrets.values():
        assert secret not in json.dumps(shown), secret
    assert _admin(env, "drop", "push-dlq", "--all") == {"dropped": [shown["id"]]}
    assert _admin(env, "messages", "push-dlq") == []
