"""The metrics where their events happen, read from the EMF lines written to stdout: a lease
that expired, a quota refusal, a conflict, a throttled store call, push retries; the trace
from gRPC metadata; the JSON log line's fields; the job that carries the trace."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from a2akit import logs, trace
from a2akit.auth import Identity
from a2akit.caller import Call
from a2akit.errors import InternalError, TooManyActiveTasksError, UnavailableError
from a2akit.execution.fold import retry_on_conflict
from a2akit.execution.leases import current, lease_for
from a2akit.execution.queue import Job
from a2akit.generated import a2a_pb2 as pb
from a2akit.push.dispatcher import Delivery, Dispatcher, LoggedDeadLetters
from a2akit.push.guard import Policy
from a2akit.push.sender import RetryPolicy, Sender
from a2akit.runtime import task_body03
from a2akit.settings import Settings
from a2akit.states import status_event
from a2akit.store._errors import DynamoDBError, translated
from a2akit.store.base import PushTarget, Scope, VersionConflictError
from a2akit.store.memory import MemoryStore
from tests.observability.lines import metrics_named
from tests.support.harness import ANON, grpc_server, memory_operations
from tests.support.messages import V1, send_request
from tests.support.webhooks import Receiver

pytestmark = pytest.mark.anyio

SCOPE = Scope("t1", "key:alice")


def _documents(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()
            if line.startswith('{"_aws"')]


async def test_a_lease_that_expired_counts_once_with_the_failed_task(
        capsys: pytest.CaptureFixture[str]) -> None:
    store = MemoryStore()
    task = pb.Task(id="t-exp", context_id="c-exp",
                   status=pb.TaskStatus(state=pb.TASK_STATE_WORKING))
    await store.create(SCOPE, task, [status_event("t-exp", "c-exp", task.status)],
                       lease=lease_for("run#gone", -1))
    capsys.readouterr()
    logs.begin(request_id="r1", operation="GetTask")
    settled = await current(store, SCOPE, "t-exp")
    assert settled is not None and settled.task.status.state == pb.TASK_STATE_FAILED
    await current(store, SCOPE, "t-exp")  # read again: already settled, nothing counted
    documents = _documents(capsys)
    (expired,) = metrics_named(documents, "LeaseExpired")
    assert expired["LeaseExpired"] == 1 and expired["Service"] == logs.service()
    (ended,) = metrics_named(documents, "TasksEnded")
    assert (ended["State"], ended["TasksEnded"], ended["request_id"]) == ("FAILED", 1, "r1")


async def test_a_quota_refusal_is_counted(capsys: pytest.CaptureFixture[str]) -> None:
    ops = memory_operations(settings=Settings(allow_anonymous=True,
                                              max_active_tasks_per_caller=0))
    from a2akit.operations import OPERATIONS

    with pytest.raises(TooManyActiveTasksError):
        await ops.unary(OPERATIONS["SendMessage"], send_request("hi"),  # type: ignore[arg-type]
                        Call(Identity("key:alice", "test")))
    (refused,) = metrics_named(_documents(capsys), "QuotaRefused")
    assert refused["QuotaRefused"] == 1
    assert "key:alice" not in json.dumps(refused)


async def test_conflicts_are_counted_per_retry(capsys: pytest.CaptureFixture[str]) -> None:
    async def attempt(number: int) -> int:
        if number < 2:
            raise VersionConflictError("t1")
        return number

    assert await retry_on_conflict(attempt, RuntimeError) == 2
    assert [d["VersionConflicts"] for d in metrics_named(_documents(capsys),
                                                          "VersionConflicts")] == [1, 1]


def test_a_throttled_store_call_is_counted_by_operation(
        capsys: pytest.CaptureFixture[str]) -> None:
    throttled = DynamoDBError("ThrottlingException", "slow down", {
        "Error": {"Code": "ThrottlingException", "Message": "slow down"}})
    with pytest.raises(UnavailableError), translated("get_item"):
        raise throttled
    missing = DynamoDBError("ResourceNotFoundException", "no table", {
        "Error": {"Code": "ResourceNotFoundException", "Message": "no table"}})
    with pytest.raises(InternalError), translated("get_item"):
        raise missing
    (document,) = metrics_named(_documents(capsys), "DynamoDBThrottles")
    assert (document["Operation"], document["DynamoDBThrottles"]) == ("get_item", 1)
    # Also under Service alone: the stack's alarm reads that rollup (alarms cannot SEARCH).
    (directive,) = document["_aws"]["CloudWatchMetrics"]
    assert directive["Dimensions"] == [["Service", "Operation"], ["Service"]]


async def test_push_retries_and_deliveries_with_the_trace(
        capsys: pytest.CaptureFixture[str]) -> None:
    store = MemoryStore()
    task = pb.Task(id="t-push", context_id="c-push",
                   status=pb.TaskStatus(state=pb.TASK_STATE_WORKING))
    event = status_event("t-push", "c-push", task.status)
    with Receiver() as hook:
        hook.plan(503, 200)
        config = pb.TaskPushNotificationConfig(id="p1", task_id="t-push", url=hook.url(),
                                               token="secret-token")
        await store.create(SCOPE, task, [event], push_configs=[PushTarget(config)])
        sender = Sender(Policy.from_settings(Settings(push_allow_http=True,
                                                      push_allow_cidrs=("127.0.0.1/32",))),
                        RetryPolicy(attempts=3, backoff_seconds=0.01))
        dispatcher = Dispatcher(store, sender, LoggedDeadLetters(), task_body03=task_body03)
        logs.begin(request_id="r2")
        trace.continue_trace(f"00-{'ab' * 16}-{'cd' * 8}-01")
        capsys.readouterr()
        await dispatcher.dispatch(Delivery(SCOPE, "t-push", 1, event))
        await dispatcher.aclose()
        requests = hook.wait_for(2)
    assert [r.headers["traceparent"].split("-")[1] for r in requests] == ["ab" * 16] * 2
    documents = _documents(capsys)
    assert [d["PushRetries"] for d in metrics_named(documents, "PushRetries")] == [1]
    (delivered,) = metrics_named(documents, "PushDelivered")
    assert delivered["task_id"] == "t-push" and delivered["trace_id"] == "ab" * 16
    assert "secret-token" not in json.dumps(documents)


async def test_grpc_takes_the_trace_from_metadata(capsys: pytest.CaptureFixture[str]) -> None:
    ops = memory_operations(settings=ANON)
    trace_id = "0af7651916cd43dd8448eb211c80319c"
    async with grpc_server(ops) as harness:
        response = await harness.stub.SendMessage(
            send_request("hi"), metadata=(*V1, ("traceparent", f"00-{trace_id}-{'1' * 16}-01")))
    task_id = response.task.id
    for _ in range(100):
        ended = metrics_named(_documents(capsys), "TasksEnded")
        if ended:
            break
        await asyncio.sleep(0.01)
    (document,) = ended
    assert (document["trace_id"], document["task_id"]) == (trace_id, task_id)
    assert document["request_id"]
    assert document["State"] == "COMPLETED" and document["TaskDuration"] >= 0


def test_traceparent_parsing() -> None:
    good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    assert trace.parse(good) == ("4bf92f3577b34da6a3ce929d0e0e4736", "01")
    for bad in (None, "", "00-" + "0" * 32 + "-00f067aa0ba902b7-01",
                "00-4bf92f3577b34da6a3ce929d0e0e4736-" + "0" * 16 + "-01",
                "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
                good + "-extra", "garbage"):
        assert trace.parse(bad) is None, bad
    logs.begin()
    trace.continue_trace("garbage")  # a new trace, not the garbage
    started = trace.current_traceparent()
    assert started is not None and trace.parse(started) is not None


def test_a_job_carries_the_trace_and_old_jobs_still_decode() -> None:
    job = Job(scope=SCOPE, task_id="t", message_id="m", lease_owner="queue#1", new_task=True,
              traceparent="00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
              enqueued_ms=1234)
    assert Job.decode(job.encode()) == job
    old = json.dumps({"v": 1, "tenant": "t1", "owner": "key:alice", "taskId": "t",
                      "messageId": "m", "leaseOwner": "queue#1", "newTask": True})
    decoded = Job.decode(old)
    assert (decoded.traceparent, decoded.enqueued_ms) == (None, None)


def test_a_log_line_is_one_json_object_with_the_context(
        capsys: pytest.CaptureFixture[str]) -> None:
    root = logging.getLogger()
    before = (list(root.handlers), root.level, logging.getLogger("a2akit").level)
    try:
        logs.configure("INFO", "unit")
        logs.begin(request_id="r3", operation="GetTask")
        logs.bind_caller("t1", "key:alice")
        logs.bind_task("task-1", "ctx-1")
        logging.getLogger("a2akit.agent").info("hello %s", "there")
        logging.getLogger("a2akit.agent").debug("not at INFO")
        try:
            raise ValueError("boom")
        except ValueError:
            logging.getLogger("a2akit.runner").exception("failed")
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in before[0]:
            root.addHandler(handler)
        root.setLevel(before[1])
        logging.getLogger("a2akit").setLevel(before[2])
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    first, second = lines
    assert first["message"] == "hello there" and first["level"] == "INFO"
    assert first["logger"] == "a2akit.agent" and first["timestamp"].endswith("Z")
    assert (first["request_id"], first["operation"], first["tenant"], first["task_id"],
            first["context_id"], first["service"]) == (
        "r3", "GetTask", "t1", "task-1", "ctx-1", "unit")
    assert first["caller"] == logs.owner_hash("key:alice") != "key:alice"
    assert "_owner" not in first and "key:alice" not in json.dumps(lines)
    assert "ValueError: boom" in second["exception"]
