"""Push delivery in process (`A2A_PUSH_DELIVERY=inline`): every stored event of a task reaches
its webhooks in order, with the right headers and body, for tasks made through either binding;
retries, the dead-letter queue, deletes and the per-task cap.

The webhook is a real HTTP receiver on loopback (tests/support/webhooks.py), allowed through
the development settings; JSON-RPC calls go through the ASGI app, gRPC calls through a real
grpc.aio server (tests/support/harness.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import grpc
import httpx
import pytest

from a2akit import protojson
from a2akit.agent import RequestContext, TaskHandle
from a2akit.auth import ANONYMOUS
from a2akit.examples.streaming import StreamingAgent
from a2akit.generated import a2a_pb2 as pb
from a2akit.operations import Operations
from a2akit.settings import INLINE, Settings
from a2akit.store.base import Scope, TaskQuery
from http_service.app import create_app
from tests.push.conftest import DeadLetterQueue
from tests.support.harness import grpc_server, memory_operations
from tests.support.messages import send_params
from tests.support.webhooks import Received, Receiver, Reply

pytestmark = pytest.mark.anyio

SCOPE = Scope("", ANONYMOUS)
# The receiver listens on 127.0.0.1 over plain HTTP: allowed only by the development settings.
PUSH = Settings(allow_anonymous=True, push_notifications=True, push_delivery=INLINE,
                push_allow_http=True, push_allow_cidrs=("127.0.0.1/32",),
                push_attempts=3, push_backoff_seconds=0.01, push_backoff_cap_seconds=0.05,
                push_timeout_seconds=2.0)
V1 = {"A2A-Version": "1.0", "Content-Type": "application/json"}


class _Quick(StreamingAgent):
    delay = 0.001


class _Gated:
    """Reports WORKING, then waits for `go` before its artifact and completion."""

    def __init__(self) -> None:
        self.go = asyncio.Event()

    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        await task.working("waiting")
        await self.go.wait()
        await task.add_artifact("after the gate")
        await task.complete()


Make = Callable[..., Operations]


@pytest.fixture
async def make() -> AsyncIterator[Make]:
    """make(agent, settings=PUSH): the core over a fresh embedded store, delivering in
    process; its sender's connections are closed after the test."""
    made: list[Operations] = []

    def _make(agent: Any, settings: Settings = PUSH) -> Operations:
        made.append(memory_operations(agent, settings))
        return made[-1]

    yield _make
    for ops in made:
        await ops.close()


@pytest.fixture
def hook() -> Iterator[Receiver]:
    with Receiver() as receiver:
        yield receiver


def _config(hook: Receiver, **fields: Any) -> dict[str, Any]:
    return {"url": hook.url(), "token": "notify-token",
            "authentication": {"scheme": "Bearer", "credentials": "webhook-secret"}, **fields}


@contextlib.asynccontextmanager
async def _jsonrpc(ops: Operations) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=create_app(ops))
    async with httpx.AsyncClient(transport=transport, base_url="http://a2a.test") as client:
        yield client


async def _call(client: httpx.AsyncClient, method: str, params: dict[str, Any],
                headers: dict[str, str] | None = None) -> Any:
    reply = await client.post("/", headers={**V1, **(headers or {})},
                              json={"jsonrpc": "2.0", "id": 1, "method": method,
                                    "params": params})
    body = reply.json()
    assert "result" in body, body
    return body["result"]


async def _reached(client: httpx.AsyncClient, task_id: str, state: str) -> None:
    """Poll GetTask until the task is in `state` (AssertionError after about 5 s)."""
    for _ in range(500):
        task = await _call(client, "GetTask", {"id": task_id})
        if task["status"]["state"] == state:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"task {task_id} never reached {state}: {task['status']}")


async def _completed(client: httpx.AsyncClient, task_id: str) -> None:
    await _reached(client, task_id, "TASK_STATE_COMPLETED")


async def _send(binding: str, ops: Operations, params: dict[str, Any],
                headers: dict[str, str] | None = None) -> str:
    """SendMessage through `binding` (with these headers, or metadata); the task id."""
    if binding == "jsonrpc":
        async with _jsonrpc(ops) as client:
            return str((await _call(client, "SendMessage", params, headers))["task"]["id"])
    async with grpc_server(ops) as server:
        request = protojson.from_json(params, pb.SendMessageRequest)
        metadata = (("a2a-version", "1.0"), *(headers or {}).items())
        response = await server.stub.SendMessage(request, metadata=metadata)
        return str(response.task.id)


async def _stored_events(ops: Operations, task_id: str) -> list[dict[str, Any]]:
    return [protojson.to_json(e.event) for e in await ops.store.events_after(SCOPE, task_id, 0)]


async def _arrived(hook: Receiver, count: int) -> list[Received]:
    return await asyncio.to_thread(hook.wait_for, count)


async def _settled(ops: Operations) -> None:
    """Every in-process delivery handed out so far has finished."""
    assert ops.push_delivery is not None
    assert await ops.push_delivery.drain(10) == 0


def _bodies(received: list[Received]) -> list[dict[str, Any]]:
    return [json.loads(request.body) for request in received]


@pytest.mark.parametrize("binding", ["jsonrpc", "grpc"])
@pytest.mark.spec("3.5.3", "MUST", "Push notifications are delivered for every event, in order")
async def test_every_event_of_a_streaming_agent_arrives_in_order(
        make: Make, binding: str, hook: Receiver) -> None:
    ops = make(_Quick(), PUSH)
    params = send_params("one two three four", push_config=_config(hook))
    task_id = await _send(binding, ops, params)
    await _settled(ops)
    expected = await _stored_events(ops, task_id)
    received = hook.requests
    # The task as first recorded, WORKING, four artifact chunks, COMPLETED: each once, in order.
    assert len(expected) == 7
    assert _bodies(received) == expected
    assert expected[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    for request in received:
        assert request.method == "POST"
        assert request.target == "/hook"
        assert request.headers["content-type"] == "application/a2a+json"
        assert request.headers["authorization"] == "Bearer webhook-secret"
        assert request.headers["x-a2a-notification-token"] == "notify-token"


@pytest.mark.parametrize("binding", ["jsonrpc", "grpc"])
async def test_a_resend_with_another_push_config_is_a_new_task_whose_webhook_is_called(
        make: Make, binding: str, hook: Receiver) -> None:
    # Idempotency fingerprints the whole request: the same message under the same id but
    # with a push config is not a retry of the request without one (a conformance suite
    # reuses message ids this way, then waits for the webhook).
    ops = make(_Quick(), PUSH)
    plain = send_params("one two", message_id="resent")
    first = await _send(binding, ops, plain)
    configured = send_params("one two", message_id="resent", push_config=_config(hook))
    second = await _send(binding, ops, configured)
    assert second != first
    assert await _send(binding, ops, configured) == second  # a true repeat is a duplicate
    await _settled(ops)
    assert _bodies(hook.requests) == await _stored_events(ops, second)


async def test_a_config_created_later_gets_the_events_written_after_it(
        make: Make, hook: Receiver) -> None:
    agent = _Gated()
    ops = make(agent, PUSH)
    async with _jsonrpc(ops) as client:
        task = (await _call(client, "SendMessage", send_params("x", immediately=True)))["task"]
        await _reached(client, task["id"], "TASK_STATE_WORKING")
        await _settled(ops)  # the events so far were dispatched (to no config)
        await _call(client, "CreateTaskPushNotificationConfig",
                    {"taskId": task["id"], **_config(hook)})
        agent.go.set()
        await _completed(client, task["id"])
        await _settled(ops)
    bodies = _bodies(hook.requests)
    assert [list(body) for body in bodies] == [["artifactUpdate"], ["statusUpdate"]]
    assert bodies[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


@pytest.mark.spec("3.1.10", "MUST", "After a config is deleted its webhook gets nothing more")
async def test_a_config_deleted_mid_task_receives_nothing_after_the_delete(
        make: Make, hook: Receiver) -> None:
    agent = _Gated()
    ops = make(agent, PUSH)
    async with _jsonrpc(ops) as client:
        params = send_params("x", immediately=True, push_config=_config(hook, id="doomed"))
        task = (await _call(client, "SendMessage", params))["task"]
        before = await _arrived(hook, 2)  # the task, then WORKING
        await _call(client, "DeleteTaskPushNotificationConfig",
                    {"taskId": task["id"], "id": "doomed"})
        agent.go.set()
        await _completed(client, task["id"])
        await _settled(ops)
    assert len(before) == 2
    assert len(hook.requests) == 2


async def test_a_5xx_is_retried_and_the_event_still_arrives_in_order(
        make: Make, hook: Receiver) -> None:
    hook.plan(503, 200)  # the first event needs two attempts
    ops = make(_Quick(), PUSH)
    task_id = await _send("jsonrpc", ops, send_params("one two", push_config=_config(hook)))
    await _settled(ops)
    expected = await _stored_events(ops, task_id)
    assert _bodies(hook.requests) == [expected[0], *expected]


async def test_a_webhook_that_keeps_failing_goes_to_the_dead_letter_queue_and_later_events_go_on(
        make: Make, hook: Receiver, dead_letters: DeadLetterQueue,
        capsys: pytest.CaptureFixture[str]) -> None:
    settings = dataclasses.replace(PUSH, push_dlq_url=dead_letters.url,
                                   sqs_endpoint=dead_letters.endpoint)
    hook.plan(503, 503, 503)  # every attempt at the first event
    ops = make(_Quick(), settings)
    params = send_params("one", push_config=_config(hook, id="cfg-1"))
    task_id = await _send("jsonrpc", ops, params)
    await _settled(ops)
    expected = await _stored_events(ops, task_id)
    # Three attempts at the first event, then every later event once.
    assert _bodies(hook.requests) == [expected[0]] * 3 + expected[1:]
    (record,) = dead_letters.records()
    assert record["taskId"] == task_id and record["configId"] == "cfg-1"
    assert record["seq"] == 1 and record["attempts"] == 3 and record["status"] == 503
    assert "503" in record["error"]
    assert record["event"] == expected[0]
    assert "webhook-secret" not in json.dumps(record)
    assert "notify-token" not in json.dumps(record)
    # The operator's line: structured, and a CloudWatch metric (Embedded Metric Format).
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()
             if line.startswith("{")]
    (line,) = [line for line in lines if line.get("taskId") == task_id]
    assert line["configId"] == "cfg-1" and line["PushDeliveryFailed"] == 1
    metric = line["_aws"]["CloudWatchMetrics"][0]
    assert metric["Namespace"] == "A2AKit"
    assert metric["Metrics"] == [{"Name": "PushDeliveryFailed", "Unit": "Count"}]


async def test_a_4xx_is_not_retried_and_does_not_hold_up_another_webhook(
        make: Make, hook: Receiver) -> None:
    agent = _Gated()
    with Receiver(default=Reply(400)) as broken:
        ops = make(agent, PUSH)
        async with _jsonrpc(ops) as client:
            params = send_params("x", immediately=True, push_config=_config(broken))
            task = (await _call(client, "SendMessage", params))["task"]
            await _reached(client, task["id"], "TASK_STATE_WORKING")
            await _call(client, "CreateTaskPushNotificationConfig",
                        {"taskId": task["id"], **_config(hook, id="good")})
            agent.go.set()
            await _completed(client, task["id"])
        await _settled(ops)
        expected = await _stored_events(ops, task["id"])
        # One request per event to the broken webhook: a 400 is final, never retried.
        assert _bodies(broken.requests) == expected
    # The good webhook got the events dispatched after it was created, in order: the artifact
    # and COMPLETED, and WORKING too when its dispatch (queued behind the broken webhook's
    # first event) read the configs after the create. Configs are read at dispatch time.
    good = _bodies(hook.requests)
    assert len(good) >= 2 and good == expected[-len(good):]


@pytest.mark.parametrize("binding", ["jsonrpc", "grpc"])
async def test_configs_per_task_are_capped(make: Make, binding: str, hook: Receiver) -> None:
    ops = make(_Gated(), dataclasses.replace(PUSH, push_max_configs=2))
    params = send_params("x", immediately=True, push_config=_config(hook, id="a"))
    task_id = await _send(binding, ops, params)
    params = {"taskId": task_id, **_config(hook, id="b")}
    if binding == "jsonrpc":
        async with _jsonrpc(ops) as client:
            await _call(client, "CreateTaskPushNotificationConfig", params)
            await _call(client, "CreateTaskPushNotificationConfig", params)  # a replace: fine
            reply = await client.post("/", headers=V1, json={
                "jsonrpc": "2.0", "id": 2, "method": "CreateTaskPushNotificationConfig",
                "params": {**params, "id": "c"}})
            assert reply.json()["error"]["code"] == -32602
    else:
        async with grpc_server(ops) as server:
            metadata = (("a2a-version", "1.0"),)
            config = protojson.from_json(params, pb.TaskPushNotificationConfig)
            await server.stub.CreateTaskPushNotificationConfig(config, metadata=metadata)
            config.id = "c"
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await server.stub.CreateTaskPushNotificationConfig(config, metadata=metadata)
            assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert len(await ops.store.list_push_configs(SCOPE, task_id)) == 2


async def test_a_receiver_down_for_longer_than_the_attempts(
        make: Make, hook: Receiver, dead_letters: DeadLetterQueue) -> None:
    """The events written while the receiver refuses connections go to the dead-letter
    queue after their attempts; the events written once it is back are delivered."""
    agent = _Gated()
    ops = make(agent, dataclasses.replace(PUSH, push_dlq_url=dead_letters.url,
                                          sqs_endpoint=dead_letters.endpoint))
    hook.down()
    async with _jsonrpc(ops) as client:
        params = send_params("x", immediately=True, push_config=_config(hook, id="cfg-down"))
        task = (await _call(client, "SendMessage", params))["task"]
        await _settled(ops)  # every attempt at the events so far has failed
        lost = dead_letters.records()
        hook.start()
        agent.go.set()
        await _completed(client, task["id"])
        await _settled(ops)
    expected = await _stored_events(ops, task["id"])
    assert [record["seq"] for record in lost] == list(range(1, len(lost) + 1))
    assert lost and all(record["attempts"] == PUSH.push_attempts for record in lost)
    assert all("connection" in record["error"] and record["status"] is None
               for record in lost)
    assert [record["event"] for record in lost] == expected[:len(lost)]
    assert _bodies(hook.requests) == expected[len(lost):]


@pytest.mark.parametrize("binding", ["jsonrpc", "grpc"])
@pytest.mark.parametrize("url", ["http://127.0.0.1:9/hook", "https://169.254.169.254/latest",
                                 "https://[::ffff:10.0.0.1]/hook", "https://localhost/hook"])
async def test_a_webhook_the_guard_refuses_is_invalid_params_on_both_bindings(
        make: Make, binding: str, url: str) -> None:
    """Without the development settings: the error the spec names, and nothing stored."""
    ops = make(_Gated(), dataclasses.replace(PUSH, push_allow_http=False, push_allow_cidrs=()))
    params = send_params("x", push_config={"url": url})
    if binding == "jsonrpc":
        async with _jsonrpc(ops) as client:
            reply = await client.post("/", headers=V1, json={
                "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params})
        error = reply.json()["error"]
        assert error["code"] == -32602
        assert "url" in json.dumps(error)
    else:
        async with grpc_server(ops) as server:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await server.stub.SendMessage(protojson.from_json(params, pb.SendMessageRequest),
                                              metadata=(("a2a-version", "1.0"),))
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    page = await ops.store.list(SCOPE, TaskQuery())
    assert page.tasks == []
