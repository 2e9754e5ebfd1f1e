"""Push delivery in the shape of the generation that created the config (issue 28, item 5): a
config created by an A2A 0.3 call gets the task's current 0.3 JSON (a bare Task, `kind:
"task"`, lowercase states: 0.3 spec 9.5, facts 5.3 #12), a 1.0 config of the same task the
1.0 StreamResponse as before; both with the config's token and credentials.

0.3 calls go through `Calls03` (the operations both 0.3 bindings run) with a 0.3 `Call`; 1.0
calls through the JSON-RPC app. In process on the embedded store (inline delivery) and
through the stream dispatcher Lambda on DynamoDB Local (real stream records)."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest

from a2akit.caller import Call
from a2akit.compat03.calls import Calls03
from a2akit.generated import a2a_v0_3_pb2 as pb03
from a2akit.operations import Operations
from a2akit.runtime import build_operations
from tests.push.conftest import DeadLetterQueue
from tests.push.test_delivery import (
    PUSH,
    SCOPE,
    _bodies,
    _call,
    _completed,
    _config,
    _Gated,
    _jsonrpc,
    _Quick,
    _send,
    _settled,
    _stored_events,
)
from tests.push.test_stream_dispatcher import _Dispatcher, _front_door, _records
from tests.support.grpc03 import open_env03
from tests.support.harness import memory_operations
from tests.support.messages import send_params
from tests.support.webhooks import Received, Receiver

pytestmark = pytest.mark.anyio

STATES_03 = {"submitted", "working", "input-required", "completed", "canceled", "failed",
             "rejected", "auth-required"}


class _Headers:
    def __init__(self) -> None:
        self.values: dict[str, list[str]] = {}

    def getlist(self, key: str) -> list[str]:
        return self.values.get(key, [])


async def _call03(ops: Operations) -> Call:
    """A caller of the 0.3 family, as a 0.3 binding resolves it (no version header)."""
    return await ops.resolve_call(_Headers(), protocol_version="0.3")


def _config03(hook: Receiver) -> pb03.PushNotificationConfig:
    return pb03.PushNotificationConfig(
        url=hook.url("/v03"), token="token-03",
        authentication=pb03.AuthenticationInfo(schemes=["Bearer"], credentials="secret-03"))


async def _send03(ops: Operations, hook: Receiver, text: str, *, blocking: bool) -> str:
    """message/send through Calls03 with a push config (stored with the new task)."""
    request = pb03.SendMessageRequest(request=pb03.Message(
        message_id=f"m03-{text}", role=pb03.ROLE_USER, content=[pb03.Part(text=text)]))
    request.configuration.blocking = blocking
    request.configuration.push_notification.CopyFrom(_config03(hook))
    answer = await Calls03(ops).send_message(request, await _call03(ops))
    return str(answer.task.id)


def _check_03(received: list[Received], task_id: str) -> list[dict[str, Any]]:
    """The 0.3 deliveries: each a bare 0.3 Task of `task_id`, with the 0.3 config's token,
    credentials and a JSON content type; their bodies."""
    assert received
    bodies = []
    for request in received:
        assert request.target == "/v03"
        assert request.headers["content-type"] == "application/json"
        assert request.headers["x-a2a-notification-token"] == "token-03"
        assert request.headers["authorization"] == "Bearer secret-03"
        body = json.loads(request.body)
        assert (body["kind"], body["id"]) == ("task", task_id)
        assert body["status"]["state"] in STATES_03
        assert "statusUpdate" not in body and "task" not in body  # not a 1.0 StreamResponse
        bodies.append(body)
    return bodies


def _split(hook: Receiver) -> tuple[list[Received], list[Received]]:
    """(the 1.0 config's requests, the 0.3 config's), by path."""
    requests = hook.requests
    return ([r for r in requests if r.target == "/hook"],
            [r for r in requests if r.target == "/v03"])


@pytest.fixture
async def gated() -> AsyncIterator[tuple[Operations, _Gated]]:
    """The core over a fresh embedded store, delivering in process, running a `_Gated`
    agent (WORKING, then its artifact and COMPLETED once `go` is set)."""
    gate = _Gated()
    ops = memory_operations(gate, PUSH)
    yield ops, gate
    await ops.close()


async def test_inline_a_0_3_config_gets_the_0_3_task_and_a_1_0_config_the_stream_response(
        gated: tuple[Operations, _Gated]) -> None:
    ops, gate = gated
    with Receiver() as hook:
        task_id = await _send03(ops, hook, "hello", blocking=False)
        await _settled(ops)
        async with _jsonrpc(ops) as client:
            await _call(client, "CreateTaskPushNotificationConfig",
                        {**_config(hook), "taskId": task_id})
            gate.go.set()
            await _completed(client, task_id)
        await _settled(ops)
        v10, v03 = _split(hook)
    events = await _stored_events(ops, task_id)
    # Every event reached the 0.3 config (created with the task), as the task then stood.
    bodies = _check_03(v03, task_id)
    assert len(bodies) == len(events)
    assert bodies[-1]["status"]["state"] == "completed"
    assert bodies[-1]["artifacts"][0]["parts"] == [{"kind": "text", "text": "after the gate"}]
    # The 1.0 config (created after the first events) got the later events, unchanged.
    assert len(v10) >= 2
    assert _bodies(v10) == events[-len(v10):]
    assert {r.headers["content-type"] for r in v10} == {"application/a2a+json"}
    assert {r.headers["x-a2a-notification-token"] for r in v10} == {"notify-token"}


async def test_a_0_3_config_created_by_the_0_3_create_call_gets_0_3(
        gated: tuple[Operations, _Gated]) -> None:
    ops, gate = gated
    with Receiver() as hook:
        async with _jsonrpc(ops) as client:
            task = (await _call(client, "SendMessage", send_params(
                "x", immediately=True, push_config=_config(hook))))["task"]
            await Calls03(ops).create_push_config(pb03.CreateTaskPushNotificationConfigRequest(
                parent=f"tasks/{task['id']}", config=pb03.TaskPushNotificationConfig(
                    push_notification_config=_config03(hook))), await _call03(ops))
            gate.go.set()
            await _completed(client, task["id"])
        await _settled(ops)
        v10, v03 = _split(hook)
    assert _check_03(v03, task["id"])[-1]["status"]["state"] == "completed"
    assert _bodies(v10) == await _stored_events(ops, task["id"])


async def test_a_1_0_delivery_loads_no_0_3_code(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [name for name in sys.modules if name.startswith("a2akit.compat03")]:
        monkeypatch.delitem(sys.modules, name)
    ops = memory_operations(_Quick(), PUSH)
    try:
        with Receiver() as hook:
            task_id = await _send("jsonrpc", ops, send_params("one", push_config=_config(hook)))
            await _settled(ops)
            assert _bodies(hook.requests) == await _stored_events(ops, task_id)
    finally:
        await ops.close()
    assert not [name for name in sys.modules if name.startswith("a2akit.compat03")]


@pytest.mark.slow
async def test_stream_a_0_3_config_gets_the_0_3_task_and_a_1_0_config_the_stream_response(
        ddb_endpoint: str, table_name: str, dead_letters: DeadLetterQueue,
        monkeypatch: pytest.MonkeyPatch) -> None:
    settings = _front_door(ddb_endpoint, table_name)
    with Receiver() as hook:
        ops = build_operations(settings, agent=_Quick())
        try:
            task_id = await _send03(ops, hook, "one two", blocking=True)
            async with _jsonrpc(ops) as client:
                await _call(client, "CreateTaskPushNotificationConfig",
                            {**_config(hook), "taskId": task_id})
            stored = await ops.store.get(SCOPE, task_id)
            events = await _stored_events(ops, task_id)
        finally:
            await ops.close()
        assert stored is not None and hook.requests == []  # the door delivers nothing
        event = await _records(ddb_endpoint, table_name)
        async with _Dispatcher(monkeypatch, ddb_endpoint, table_name, dead_letters) as dispatcher:
            assert await dispatcher.handle(event) == {"batchItemFailures": []}
        v10, v03 = _split(hook)
    assert _bodies(v10) == events
    # Each event's delivery carries the task as the dispatcher read it: finished by now.
    bodies = _check_03(v03, task_id)
    assert len(bodies) == len(events)
    assert {body["status"]["state"] for body in bodies} == {"completed"}
    assert bodies[-1]["contextId"] == stored.task.context_id
    assert dead_letters.records() == []



@pytest.mark.parametrize("binding", ["jsonrpc", "grpc"])
async def test_a_config_set_through_a_0_3_binding_gets_0_3(
        gated: tuple[Operations, _Gated], binding: str) -> None:
    """The generation comes from the binding that took the request: `tasks/pushNotification
    Config/set` without a version header, or CreateTaskPushNotificationConfig on `a2a.v1`."""
    ops, gate = gated
    with Receiver() as hook:
        async with _jsonrpc(ops) as client:
            task = (await _call(client, "SendMessage", send_params("x", immediately=True)))["task"]
            if binding == "jsonrpc":
                reply = await client.post("/", json={  # no A2A-Version: a 0.3 caller
                    "jsonrpc": "2.0", "id": 7, "method": "tasks/pushNotificationConfig/set",
                    "params": {"taskId": task["id"], "pushNotificationConfig": {
                        "url": hook.url("/v03"), "token": "token-03", "authentication": {
                            "schemes": ["Bearer"], "credentials": "secret-03"}}}})
                assert reply.json()["result"]["taskId"] == task["id"], reply.text
            else:
                async with open_env03(ops) as env:
                    await env.stub.CreateTaskPushNotificationConfig(
                        pb03.CreateTaskPushNotificationConfigRequest(
                            parent=f"tasks/{task['id']}", config=pb03.TaskPushNotificationConfig(
                                push_notification_config=_config03(hook))))
            gate.go.set()
            await _completed(client, task["id"])
        await _settled(ops)
        v10, v03 = _split(hook)
    assert v10 == []
    assert _check_03(v03, task["id"])[-1]["status"]["state"] == "completed"
