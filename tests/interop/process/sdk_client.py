"""Drive a running kit server with the official a2a-sdk client; print one JSON line of results.

Run by test_sdk_client.py (beside it) with the python of .cache/sdk-venv. It imports only
the SDK: `sdk_client.py BASE_URL`. The card tells it where the HTTP+JSON and gRPC endpoints
are. Each binding runs every operation; then tasks created on one binding are read on the
others.
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
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
    TaskState,
)
from google.protobuf import json_format

BINDINGS = ("JSONRPC", "HTTP+JSON", "GRPC")


def _message(text: str) -> SendMessageRequest:
    return SendMessageRequest(message=Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER,
                                              parts=[Part(text=text)]))


def _config(binding: str, http: httpx.AsyncClient, streaming: bool) -> ClientConfig:
    return ClientConfig(streaming=streaming, supported_protocol_bindings=[binding],
                        use_client_preference=True, httpx_client=http,
                        grpc_channel_factory=grpc.aio.insecure_channel)


def _artifact_text(task: Any) -> str:
    return "".join(part.text for artifact in task.artifacts for part in artifact.parts)


async def _error_of(call: Any) -> dict[str, Any]:
    try:
        await call
    except Exception as exc:
        return {"type": type(exc).__name__, "message": str(exc)}
    return {"type": None}


async def _binding(card: Any, binding: str, http: httpx.AsyncClient) -> dict[str, Any]:
    out: dict[str, Any] = {}

    def config(streaming: bool) -> ClientConfig:
        return _config(binding, http, streaming)

    client = ClientFactory(config(False)).create(card)
    events = [event async for event in client.send_message(_message(f"hello {binding}"))]
    task = events[0].task
    out["send"] = {"events": len(events), "kind": events[0].WhichOneof("payload"),
                   "id": task.id, "state": TaskState.Name(task.status.state),
                   "text": _artifact_text(task)}
    got = await client.get_task(GetTaskRequest(id=task.id))
    out["get"] = {"id": got.id, "state": TaskState.Name(got.status.state),
                  "text": _artifact_text(got)}
    listed = await client.list_tasks(ListTasksRequest())
    out["list"] = {"ids": [t.id for t in listed.tasks]}
    out["cancel"] = await _error_of(client.cancel_task(CancelTaskRequest(id=task.id)))
    out["get_missing"] = await _error_of(client.get_task(GetTaskRequest(id="no-such-task")))
    out["push"] = await _push(client, task.id, binding)
    out["extended_card"] = await _error_of(
        client.get_extended_agent_card(GetExtendedAgentCardRequest()))
    await client.close()

    streamer = ClientFactory(config(True)).create(card)
    kinds, last_state, text = [], 0, ""
    async for event in streamer.send_message(_message(f"stream {binding}")):
        kind = event.WhichOneof("payload")
        kinds.append(kind)
        if kind == "task":
            last_state = event.task.status.state
        elif kind == "status_update":
            last_state = event.status_update.status.state
        elif kind == "artifact_update":
            text += "".join(part.text for part in event.artifact_update.artifact.parts)
    out["stream"] = {"kinds": kinds, "final_state": TaskState.Name(last_state), "text": text}
    out["subscribe"] = await _subscribe(streamer)
    await streamer.close()
    return out


async def _push(client: Any, task_id: str, binding: str) -> dict[str, Any]:
    config_id = f"cfg-{binding}"
    created = await client.create_task_push_notification_config(TaskPushNotificationConfig(
        task_id=task_id, id=config_id, url="https://93.184.216.34/hook", token="t"))
    got = await client.get_task_push_notification_config(
        GetTaskPushNotificationConfigRequest(task_id=task_id, id=config_id))
    listed = await client.list_task_push_notification_configs(
        ListTaskPushNotificationConfigsRequest(task_id=task_id))
    await client.delete_task_push_notification_config(
        DeleteTaskPushNotificationConfigRequest(task_id=task_id, id=config_id))
    after = await client.list_task_push_notification_configs(
        ListTaskPushNotificationConfigsRequest(task_id=task_id))
    return {"created": [created.id, created.task_id, created.url], "same": got == created,
            "listed": [c.id for c in listed.configs], "after": [c.id for c in after.configs]}


async def _subscribe(streamer: Any) -> dict[str, Any]:
    """A task still working: its first event on a subscription, then a cancel."""
    request = _message("slow")
    request.configuration.return_immediately = True
    task = None
    async for event in streamer.send_message(request):
        task = event.task
        break
    assert task is not None
    first = None
    async for event in streamer.subscribe(SubscribeToTaskRequest(id=task.id)):
        first = event
        break
    canceled = await streamer.cancel_task(CancelTaskRequest(id=task.id))
    return {"first": first.WhichOneof("payload") if first else None,
            "id": first.task.id == task.id if first else None,
            "canceled": TaskState.Name(canceled.status.state)}


async def _across(card: Any, http: httpx.AsyncClient) -> dict[str, Any]:
    """A task created on each binding, as every binding reads it: state and artifact text."""
    clients = {b: ClientFactory(_config(b, http, False)).create(card) for b in BINDINGS}
    out: dict[str, Any] = {}
    for origin, creator in clients.items():
        events = [e async for e in creator.send_message(_message(f"from {origin}"))]
        task_id = events[0].task.id
        out[origin] = {}
        for reader_name, reader in clients.items():
            got = await reader.get_task(GetTaskRequest(id=task_id))
            out[origin][reader_name] = [TaskState.Name(got.status.state), _artifact_text(got)]
    for client in clients.values():
        await client.close()
    return out


async def main(base_url: str) -> None:
    async with httpx.AsyncClient(timeout=20) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
        result: dict[str, Any] = {"card": json_format.MessageToDict(card)}
        for binding in BINDINGS:
            result[binding] = await _binding(card, binding, http)
        result["across"] = await _across(card, http)
    print(json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
