"""The 1.0 side of the cross-generation interop test: the official a2a-sdk 1.x client with tasks
of an A2A 0.3 client, and tasks for one; print one JSON line.

Run by tests/compat03/process/test_sdk03_client.py with the python of .cache/sdk-venv; it
imports only that SDK:

    sdk_cross.py BASE_URL read IDS_JSON   per binding: get the completed task, list, subscribe
                                          to the working one, cancel it, read the stream's end
    sdk_cross.py BASE_URL create          per binding: a completed task and a working one

IDS_JSON is {binding: {"done": id, "working": id}}, what sdk03_client.py printed in its create
mode; bindings are JSONRPC and GRPC, each read by the same binding of 1.0.
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from typing import Any

import grpc
import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskState,
)

BINDINGS = ("JSONRPC", "GRPC")
WAIT = 30.0  # seconds a stream may take; a hang is a failure, not a stuck test


def _message(text: str) -> SendMessageRequest:
    return SendMessageRequest(message=Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER,
                                              parts=[Part(text=text)]))


def _client(card: Any, binding: str, http: httpx.AsyncClient, streaming: bool) -> Any:
    config = ClientConfig(streaming=streaming, supported_protocol_bindings=[binding],
                          use_client_preference=True, httpx_client=http,
                          grpc_channel_factory=grpc.aio.insecure_channel)
    return ClientFactory(config).create(card)


def _text(task: Any) -> str:
    return "".join(part.text for artifact in task.artifacts for part in artifact.parts)


def _event(event: Any) -> dict[str, Any]:
    kind = event.WhichOneof("payload")
    if kind == "task":
        return {"kind": kind, "state": TaskState.Name(event.task.status.state)}
    if kind == "status_update":
        return {"kind": kind, "state": TaskState.Name(event.status_update.status.state)}
    return {"kind": kind}


async def read(card: Any, binding: str, http: httpx.AsyncClient,
               ids: dict[str, str]) -> dict[str, Any]:
    client = _client(card, binding, http, streaming=False)
    streamer = _client(card, binding, http, streaming=True)
    done = await client.get_task(GetTaskRequest(id=ids["done"]))
    # The two tasks share a context: the list of that context is exactly them, however many
    # other tasks the store holds.
    listed = await client.list_tasks(ListTasksRequest(context_id=done.context_id))
    stream = streamer.subscribe(SubscribeToTaskRequest(id=ids["working"]))
    first = await asyncio.wait_for(anext(stream), WAIT)
    canceled = await client.cancel_task(CancelTaskRequest(id=ids["working"]))

    async def rest() -> list[dict[str, Any]]:
        return [_event(event) async for event in stream]

    after = await asyncio.wait_for(rest(), WAIT)
    listed_ids = sorted(task.id for task in listed.tasks)
    out = {"done": [TaskState.Name(done.status.state), _text(done)],
           "listed": listed_ids == sorted([ids["done"], ids["working"]]),
           "first": _event(first), "canceled": TaskState.Name(canceled.status.state),
           "after": after}
    await client.close()
    await streamer.close()
    return out


async def create(card: Any, binding: str, http: httpx.AsyncClient) -> dict[str, Any]:
    client = _client(card, binding, http, streaming=False)
    events = [event async for event in client.send_message(_message(f"from 1.0 {binding}"))]
    request = _message("slow")
    request.configuration.return_immediately = True
    working = [event async for event in client.send_message(request)]
    await client.close()
    return {"done": events[0].task.id, "working": working[0].task.id}


async def main(base_url: str, mode: str, ids: str = "{}") -> None:
    async with httpx.AsyncClient(timeout=WAIT) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
        if mode == "create":
            result = {b: await create(card, b, http) for b in BINDINGS}
        else:
            result = {b: await read(card, b, http, task_ids)
                      for b, task_ids in json.loads(ids).items()}
    print(json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
