"""`historyLength` is "at most this many" (issue 33, item 10): above the kit's limit it is
served with the history capped at the limit, on every binding of both generations; only a
negative one is refused. The limit is lowered to 1 here, so a two-message task shows the cap."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from a2akit import validation
from a2akit.examples.input_required import GreeterAgent
from a2akit.generated import a2a_pb2 as pb
from a2akit.generated import a2a_v0_3_pb2 as pb03
from http_service.app import create_app
from tests.support.grpc03 import Env03, open_env03
from tests.support.harness import memory_operations

pytestmark = pytest.mark.anyio

V10 = {"A2A-Version": "1.0"}
META = (("a2a-version", "1.0"),)
ASKED = 9999


@pytest.fixture
async def kit() -> AsyncIterator[tuple[httpx.AsyncClient, Env03]]:
    ops = memory_operations(GreeterAgent())  # two turns: a history of at least two
    async with open_env03(ops) as env, httpx.AsyncClient(
            transport=httpx.ASGITransport(app=create_app(ops)), base_url="http://a2a.test") as http:
        yield http, env


async def _rpc(http: httpx.AsyncClient, method: str, params: dict[str, Any],
               headers: dict[str, str]) -> Any:
    reply = await http.post("/", json={"jsonrpc": "2.0", "id": 1, "method": method,
                                       "params": params}, headers=headers)
    answer = reply.json()
    assert "result" in answer, answer
    return answer["result"]


async def _histories(kit: tuple[httpx.AsyncClient, Env03], task_id: str) -> dict[str, int]:
    """How many messages each binding returns for `historyLength` 9999."""
    http, env = kit
    seen: dict[str, int] = {}
    got = await _rpc(http, "GetTask", {"id": task_id, "historyLength": ASKED}, V10)
    seen["jsonrpc GetTask"] = len(got["history"])
    listed = await _rpc(http, "ListTasks", {"historyLength": ASKED}, V10)
    seen["jsonrpc ListTasks"] = len(next(t for t in listed["tasks"] if t["id"] == task_id)
                                    ["history"])
    rest = await http.get(f"/tasks/{task_id}", params={"historyLength": ASKED}, headers=V10)
    assert rest.status_code == 200, rest.text
    seen["rest GetTask"] = len(rest.json()["history"])
    rest = await http.get("/tasks", params={"historyLength": ASKED}, headers=V10)
    assert rest.status_code == 200, rest.text
    seen["rest ListTasks"] = len(next(t for t in rest.json()["tasks"] if t["id"] == task_id)
                                 ["history"])
    task = await env.stub10.GetTask(pb.GetTaskRequest(id=task_id, history_length=ASKED),
                                    metadata=META)
    seen["grpc GetTask"] = len(task.history)
    page = await env.stub10.ListTasks(pb.ListTasksRequest(history_length=ASKED), metadata=META)
    seen["grpc ListTasks"] = len(next(t for t in page.tasks if t.id == task_id).history)
    got03 = await _rpc(http, "tasks/get", {"id": task_id, "historyLength": ASKED}, {})
    seen["jsonrpc 0.3 tasks/get"] = len(got03["history"])
    task03 = await env.stub.GetTask(pb03.GetTaskRequest(name=f"tasks/{task_id}",
                                                        history_length=ASKED))
    seen["grpc 0.3 GetTask"] = len(task03.history)
    return seen


@pytest.mark.spec("3.2.4", "MUST", "At most historyLength messages of history are returned")
async def test_history_length_over_the_limit_is_served_capped(
        kit: tuple[httpx.AsyncClient, Env03], monkeypatch: pytest.MonkeyPatch) -> None:
    http, _ = kit
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    first = await _rpc(http, "SendMessage", {"message": message}, V10)
    task_id = first["task"]["id"]
    message = {**message, "messageId": str(uuid.uuid4()), "taskId": task_id}
    sent = await _rpc(http, "SendMessage", {"message": message,
                                            "configuration": {"historyLength": ASKED}}, V10)
    whole = len(sent["task"]["history"])
    assert whole >= 2, sent  # the test needs a history longer than the lowered limit
    assert set((await _histories(kit, task_id)).values()) == {whole}

    monkeypatch.setattr(validation, "MAX_HISTORY_LENGTH", 1)
    capped = await _histories(kit, task_id)
    assert capped == dict.fromkeys(capped, 1), capped
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    sent = await _rpc(http, "SendMessage", {"message": message}, V10)
    message = {**message, "messageId": str(uuid.uuid4()), "taskId": sent["task"]["id"]}
    sent = await _rpc(http, "SendMessage", {"message": message,
                                            "configuration": {"historyLength": ASKED}}, V10)
    assert len(sent["task"]["history"]) == 1, sent
