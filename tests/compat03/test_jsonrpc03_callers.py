"""What holds for every caller holds for 0.3 callers: owner isolation with authentication on,
the per-caller quota, queue mode (SQS on moto's server, the worker), and one task seen by both
generations (created by 0.3, read, listed, streamed and cancelled by 1.0, and the other way
round); on the embedded store and on DynamoDB Local."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import pytest

from a2akit.examples.echo import EchoAgent
from a2akit.examples.input_required import GreeterAgent
from a2akit.examples.streaming import StreamingAgent
from a2akit.execution.worker import Worker
from a2akit.runtime import build_operations
from a2akit.settings import Settings
from a2akit.store.dynamodb import DynamoDBStore
from tests.compat03.client03 import Caller03, message03
from tests.compat03.conftest import V1
from tests.execution.sqs import make_queues
from tests.execution.test_worker import _receive_now
from tests.jsonrpc.client import KINDS, serve
from tests.store.conftest import TABLE
from tests.support.harness import SlowOrEcho
from tests.support.messages import user_message
from tests.support.moto import client as aws_client

ALICE, BOB = {"Authorization": "Bearer tok-a"}, {"Authorization": "Bearer tok-b"}
TOKENS = {"tok-a": "alice", "tok-b": "bob"}


# --- isolation ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_owners_are_isolated_for_03_callers(caller: Any, kind: str) -> None:
    rpc = caller(GreeterAgent(), Settings(bearer_tokens=TOKENS, push_notifications=True),
                 kind)
    task = rpc.result("message/send", {"message": message03()}, headers=ALICE)
    tid = task["id"]
    for method, params in (("tasks/get", {"id": tid}), ("tasks/cancel", {"id": tid}),
                           ("tasks/pushNotificationConfig/list", {"id": tid}),
                           ("message/send", {"message": message03(taskId=tid)})):
        assert rpc.error(method, params, headers=BOB)["code"] == -32001, method
    reply = rpc.call("tasks/resubscribe", {"id": tid}, headers=BOB)
    assert b'"code":-32001' in reply.body
    # Bob's 1.0 calls do not see it either; Alice's do.
    assert rpc.client.error("GetTask", {"id": tid}, headers={**V1, **BOB})["code"] == -32001
    assert rpc.client.result("GetTask", {"id": tid}, headers={**V1, **ALICE})["id"] == tid
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        reply = rpc.call("tasks/get", {"id": tid}, headers=headers)
        assert reply.status == 401 and "www-authenticate" in reply.headers
        assert reply.json()["error"]["data"]["reason"] == "UNAUTHENTICATED"


# --- idempotency and the quota --------------------------------------------------------------


def test_the_per_caller_quota_holds_for_03_callers(caller: Any) -> None:
    owner = f"q-{uuid.uuid4().hex[:8]}"  # DynamoDB Local is shared: a caller of its own
    settings = Settings(bearer_tokens={"tok-q": owner}, max_active_tasks_per_caller=1)
    rpc = caller(SlowOrEcho(), settings)
    headers = {"Authorization": "Bearer tok-q"}
    first = rpc.result("message/send", {"message": message03("slow"),
                                         "configuration": {"blocking": False}}, headers=headers)
    # The same message again is the same request, not a new task: answered, not refused.
    again = rpc.call("message/send", {"message": message03("slow", first["history"][0][
        "messageId"]), "configuration": {"blocking": False}}, headers=headers)
    assert again.status == 200 and again.json()["result"]["id"] == first["id"]
    refused = rpc.call("message/send", {"message": message03("slow"),
                                        "configuration": {"blocking": False}}, headers=headers)
    assert refused.status == 429 and refused.headers["retry-after"]
    assert refused.json()["error"]["data"] == {"reason": "TOO_MANY_ACTIVE_TASKS", "limit": "1"}
    rpc.result("tasks/cancel", {"id": first["id"]}, headers=headers)
    assert rpc.result("message/send", {"message": message03("x")},
                      headers=headers)["status"]["state"] == "completed"


# --- both generations on one task -----------------------------------------------------------


def test_a_task_created_by_03_is_read_listed_streamed_and_cancelled_by_10(caller: Any) -> None:
    rpc = caller(GreeterAgent())
    context = str(uuid.uuid4())
    task = rpc.result("message/send", {"message": message03("hi", contextId=context)})
    one = rpc.client
    got = one.result("GetTask", {"id": task["id"]}, headers=V1)
    assert got["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert got["history"][0]["parts"] == [{"text": "hi"}]
    listed = one.result("ListTasks", {"contextId": context}, headers=V1)
    assert [t["id"] for t in listed["tasks"]] == [task["id"]]
    events = one.call("SendStreamingMessage", {"message": user_message(
        "Ada", taskId=task["id"])}, headers=V1).events()
    assert events[-1]["result"]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    other = rpc.result("message/send", {"message": message03("hi", contextId=context)})
    canceled = one.result("CancelTask", {"id": other["id"]}, headers=V1)
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    assert rpc.result("tasks/get", {"id": other["id"]})["status"]["state"] == "canceled"


def test_a_task_created_by_10_is_read_streamed_and_cancelled_by_03(caller: Any) -> None:
    rpc = caller(GreeterAgent())
    one = rpc.client
    task = one.result("SendMessage", {"message": user_message("hi")}, headers=V1)["task"]
    got = rpc.result("tasks/get", {"id": task["id"]})
    assert got["kind"] == "task" and got["status"]["state"] == "input-required"
    assert got["history"][0]["parts"] == [{"kind": "text", "text": "hi"}]
    _, events = rpc.stream("message/stream", {"message": message03("Ada", taskId=task["id"])})
    assert events[-1]["result"]["status"]["state"] == "completed"
    assert events[-1]["result"]["final"] is True
    other = one.result("SendMessage", {"message": user_message("hi")}, headers=V1)["task"]
    assert rpc.result("tasks/cancel", {"id": other["id"]})["status"]["state"] == "canceled"
    assert one.result("GetTask", {"id": other["id"]},
                      headers=V1)["status"]["state"] == "TASK_STATE_CANCELED"


def test_a_10_stream_follows_a_task_a_03_caller_started(caller: Any) -> None:
    rpc = caller(StreamingAgent())
    task = rpc.send("a b c d e f", blocking=False)
    events = rpc.client.call("SubscribeToTask", {"id": task["id"]}, headers=V1).events()
    assert events[0]["result"]["task"]["id"] == task["id"]
    assert events[-1]["result"]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


# --- queue mode -----------------------------------------------------------------------------


@pytest.mark.slow
def test_queue_mode_serves_03_callers(ddb_client: Any, ddb_endpoint: str,
                                      moto_endpoint: str) -> None:
    sqs = aws_client("sqs", moto_endpoint)
    try:
        queue, _ = make_queues(sqs, visibility_seconds=30)
        settings = Settings(table=TABLE, dynamodb_endpoint=ddb_endpoint, allow_anonymous=True,
                            execution="queue", queue_url=queue, sqs_endpoint=moto_endpoint)
        store = DynamoDBStore(TABLE, ddb_client)
        for client in serve("asgi", build_operations(settings, store=store,
                                                     agent=EchoAgent())):
            rpc = Caller03(client)
            task = rpc.send("queued", blocking=False)
            assert task["status"]["state"] == "submitted"
            record = _receive_now(sqs, queue)
            worker = Worker(settings, store, EchoAgent())
            assert asyncio.run(worker.handle_batch([record], lambda: 60.0)) == {
                "batchItemFailures": []}
            deadline = time.monotonic() + 10
            while (got := rpc.result("tasks/get", {"id": task["id"]}))["status"][
                    "state"] != "completed":
                assert time.monotonic() < deadline, got
                time.sleep(0.05)
            assert got["artifacts"][0]["parts"] == [{"kind": "text", "text": "queued"}]
    finally:
        sqs.close()
