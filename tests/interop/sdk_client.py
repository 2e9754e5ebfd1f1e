"""Drive a running kit server with the official a2a-sdk client; print one JSON line of results.

Run by tests/interop/test_sdk_client.py with the python of .cache/sdk-venv. It imports only
the SDK: `sdk_client.py BASE_URL`. The card tells it where the gRPC endpoint is.
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
    TaskState,
)
from google.protobuf import json_format


def _message(text: str) -> SendMessageRequest:
    return SendMessageRequest(message=Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER,
                                              parts=[Part(text=text)]))


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
        return ClientConfig(streaming=streaming, supported_protocol_bindings=[binding],
                            use_client_preference=True, httpx_client=http,
                            grpc_channel_factory=grpc.aio.insecure_channel)

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
    await streamer.close()
    return out


async def main(base_url: str) -> None:
    async with httpx.AsyncClient(timeout=20) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
        result: dict[str, Any] = {"card": json_format.MessageToDict(card)}
        for binding in ("JSONRPC", "GRPC"):
            result[binding] = await _binding(card, binding, http)
    print(json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
