"""Turns that race for one task waiting for input: the first to run completes it; every
other turn is either in the task's history or its sender got an error, never a 200 for a
message the task never took (issue 33, item 2). Two kit processes on DynamoDB Local (gRPC),
and the embedded store in one process (JSON-RPC)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from a2akit import RequestContext, TaskHandle
from a2akit.examples.input_required import GreeterAgent
from http_service.app import create_app
from tests.support.harness import memory_operations
from tests.support.messages import send_params

GREETER = "a2akit.examples.input_required:agent"
TURNS = 8


def _check_turns(answered: dict[str, bool], history: list[str], state: str) -> None:
    """`answered`: message id -> whether its sender got the task (True) or an error."""
    assert state == "COMPLETED"
    accepted = {message_id for message_id, ok in answered.items() if ok}
    assert accepted, "one turn completes the task"
    lost = accepted - set(history)
    assert not lost, f"{len(lost)} turn(s) answered 200 but missing from the history"


class SlowGreeter(GreeterAgent):
    """The demo greeter, awaiting a moment before it answers a second turn: every turn of a
    burst reads the task before the first of them writes."""

    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        if context.task is not None:
            await asyncio.sleep(0.05)
        await super().execute(context, task)


@pytest.mark.anyio
async def test_racing_turns_in_one_process_are_stored_or_refused() -> None:
    app = create_app(memory_operations(SlowGreeter()))
    headers = {"A2A-Version": "1.0"}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://a2a.test") as client:
        async def send(params: dict[str, Any]) -> dict[str, Any]:
            reply = await client.post("/", headers=headers, json={
                "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params})
            body: dict[str, Any] = reply.json()  # a JSON-RPC error may come with a 4xx
            return body

        task = (await send(send_params("hi")))["result"]["task"]

        async def turn(index: int) -> tuple[str, bool]:
            params = send_params(f"name {index}", taskId=task["id"])
            message_id = params["message"]["messageId"]
            body = await send(params)
            if "error" in body:
                assert body["error"]["code"] == -32004, body  # UnsupportedOperation
                return message_id, False
            assert message_id in [m["messageId"] for m in body["result"]["task"]["history"]]
            return message_id, True

        answered = dict(await asyncio.gather(*(turn(i) for i in range(TURNS))))
        reply = await client.post("/", headers=headers, json={
            "jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": task["id"]}})
        stored = reply.json()["result"]
        _check_turns(answered, [m["messageId"] for m in stored["history"]],
                     stored["status"]["state"].removeprefix("TASK_STATE_"))
