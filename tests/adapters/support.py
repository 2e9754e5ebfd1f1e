"""What every adapter's tests read a stream with: SendStreamingMessage over gRPC in process,
and over JSON-RPC or HTTP+JSON from a kit process (the streaming door), each event with its
arrival time; and the checks that the answer arrived live, as chunks of one artifact."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from typing import Any

import httpx

from a2akit.generated import a2a_pb2 as pb
from tests.stream.door import lambda_context
from tests.support.harness import GrpcHarness
from tests.support.messages import V1, send_request

__all__ = ["Timed", "chunks", "live_text", "message", "post_stream", "statuses", "stream",
           "text"]

Timed = list[tuple[float, pb.StreamResponse]]


async def stream(env: GrpcHarness, said: str, **fields: str) -> Timed:
    """SendStreamingMessage; each event with its arrival (loop time)."""
    loop = asyncio.get_running_loop()
    return [(loop.time(), event) async for event in env.stub.SendStreamingMessage(
        send_request(said, **fields), metadata=V1)]


def chunks(events: Timed) -> list[tuple[float, pb.TaskArtifactUpdateEvent]]:
    return [(at, e.artifact_update) for at, e in events if e.HasField("artifact_update")]


def text(events: Timed) -> str:
    return "".join(part.text for _, chunk in chunks(events) for part in chunk.artifact.parts)


def statuses(events: Timed) -> list[tuple[int, str]]:
    return [(e.status_update.status.state,
             "".join(p.text for p in e.status_update.status.message.parts))
            for _, e in events if e.HasField("status_update")]


def post_stream(url: str, body: dict[str, Any]) -> list[tuple[float, dict[str, Any]]]:
    """POST `body` to a kit process, read the SSE response as it arrives: each `data:`
    payload with its arrival time."""
    events = []
    with httpx.Client(timeout=60) as client, client.stream(
            "POST", url, json=body,
            headers={**dict(V1), "x-amzn-lambda-context": lambda_context(60)}) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line.startswith("data: "):
                events.append((time.time(), json.loads(line[len("data: "):])))
    return events


def message(said: str, **fields: str) -> dict[str, Any]:
    """SendMessage params in ProtoJSON."""
    return {"message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                        "parts": [{"text": said}], **fields}}


def live_text(events: list[tuple[float, dict[str, Any]]], delay: float) -> str:
    """At least three chunks of one artifact, arrived while the model wrote (one word per
    `delay`, not all at the end), then COMPLETED; returns the artifact's text."""
    updates = [(at, e["artifactUpdate"]) for at, e in events if "artifactUpdate" in e]
    assert len(updates) >= 3, events
    completed_at, last = events[-1]
    assert last["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED", last
    assert completed_at - updates[0][0] >= (len(updates) - 1) * delay * 0.5
    assert updates[-1][1]["lastChunk"] is True
    assert len({chunk["artifact"]["artifactId"] for _, chunk in updates}) == 1
    return "".join(part["text"] for _, chunk in updates for part in chunk["artifact"]["parts"])
