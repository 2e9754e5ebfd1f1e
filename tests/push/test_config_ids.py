"""A push config id holding "/" is refused at create on every binding of both generations
(issue 33, item 6): HTTP+JSON decodes the path before routing, so such a config could never
be read or deleted there, and kept receiving webhooks. Never create what cannot be deleted."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

import grpc
import httpx
import pytest

from a2akit.examples.input_required import GreeterAgent
from a2akit.generated import a2a_pb2 as pb
from a2akit.generated import a2a_v0_3_pb2 as pb03
from http_service.app import create_app
from tests.support.grpc03 import Env03, open_env03
from tests.support.harness import memory_operations

pytestmark = pytest.mark.anyio

V10 = {"A2A-Version": "1.0"}
META = (("a2a-version", "1.0"),)
HOOK = "https://93.184.216.34/hook"
BAD_IDS = ["a/b", "/", "x/", "tasks/t/pushNotificationConfigs/c"]


@pytest.fixture
async def kit() -> AsyncIterator[tuple[httpx.AsyncClient, Env03, str]]:
    ops = memory_operations(GreeterAgent())  # its task waits for input: configs may be set
    async with open_env03(ops) as env, httpx.AsyncClient(
            transport=httpx.ASGITransport(app=create_app(ops)), base_url="http://a2a.test") as http:
        sent = await http.post("/", json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                                          "params": {"message": {
                                              "messageId": str(uuid.uuid4()),
                                              "role": "ROLE_USER", "parts": [{"text": "hi"}]}}},
                               headers=V10)
        yield http, env, sent.json()["result"]["task"]["id"]


async def _configs(http: httpx.AsyncClient, task_id: str) -> list[Any]:
    listed = await http.get(f"/tasks/{task_id}/pushNotificationConfigs", headers=V10)
    assert listed.status_code == 200, listed.text
    return list(listed.json().get("configs", []))


@pytest.mark.parametrize("config_id", BAD_IDS)
async def test_a_config_id_with_a_slash_is_refused_at_create(
        kit: tuple[httpx.AsyncClient, Env03, str], config_id: str) -> None:
    http, env, task_id = kit
    config = {"taskId": task_id, "id": config_id, "url": HOOK}
    answer = (await http.post("/", json={"jsonrpc": "2.0", "id": 1, "method":
                                         "CreateTaskPushNotificationConfig", "params": config},
                              headers=V10)).json()
    assert answer["error"]["code"] == -32602, answer
    reply = await http.post(f"/tasks/{task_id}/pushNotificationConfigs", json=config,
                            headers=V10)
    assert reply.status_code == 400, reply.text
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await env.stub10.CreateTaskPushNotificationConfig(pb.TaskPushNotificationConfig(
            task_id=task_id, id=config_id, url=HOOK), metadata=META)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    # ... and inside a SendMessage's configuration.
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": "x"}],
               "taskId": task_id}
    answer = (await http.post("/", json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                                         "params": {"message": message, "configuration": {
                                             "taskPushNotificationConfig": config}}},
                              headers=V10)).json()
    assert answer["error"]["code"] == -32602, answer
    # 0.3, JSON-RPC and gRPC.
    answer = (await http.post("/", json={"jsonrpc": "2.0", "id": 1, "method":
                                         "tasks/pushNotificationConfig/set", "params": {
                                             "taskId": task_id, "pushNotificationConfig": {
                                                 "id": config_id, "url": HOOK}}})).json()
    assert answer["error"]["code"] == -32602, answer
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await env.stub.CreateTaskPushNotificationConfig(
            pb03.CreateTaskPushNotificationConfigRequest(
                parent=f"tasks/{task_id}", config_id=config_id,
                config=pb03.TaskPushNotificationConfig(
                    push_notification_config=pb03.PushNotificationConfig(
                        id=config_id, url=HOOK))))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert await _configs(http, task_id) == []


async def test_other_config_ids_can_be_read_and_deleted_over_http_json(
        kit: tuple[httpx.AsyncClient, Env03, str]) -> None:
    http, _, task_id = kit
    for config_id in ("a b", "a%b", "a?b#c", "é"):
        created = await http.post(f"/tasks/{task_id}/pushNotificationConfigs", headers=V10,
                                  json={"taskId": task_id, "id": config_id, "url": HOOK})
        assert created.status_code == 200, created.text
        path = f"/tasks/{task_id}/pushNotificationConfigs/{quote(config_id, safe='')}"
        got = await http.get(path, headers=V10)
        assert got.status_code == 200 and got.json()["id"] == config_id, (path, got.text)
        assert (await http.delete(path, headers=V10)).status_code == 200
    assert await _configs(http, task_id) == []
