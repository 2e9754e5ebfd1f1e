"""LangGraphAgent in kit processes chosen by A2A_AGENT (tests/adapters/graphs.py): the
streaming door (`python -m handlers.stream`, as the Lambda Web Adapter runs it) streams the
answer live over JSON-RPC and HTTP+JSON on both stores; and a graph interrupted in one process
resumes in another, its checkpoint in DynamoDB Local (A2A_LANGGRAPH_CHECKPOINT_TABLE)."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from a2akit.generated import a2a_pb2 as pb
from tests.adapters.graphs import DELAY_ENV
from tests.execution.processes import container, kit_env
from tests.stream.door import door, lambda_context
from tests.support.messages import V1, send_request

pytestmark = pytest.mark.slow

AGENT = "tests.adapters.graphs:agent"
INTERVIEWER = "tests.adapters.graphs:interviewer"
CHECKPOINTS = "a2akit-test-langgraph-checkpoints"
DELAY = 0.05


def _post_stream(url: str, body: dict[str, Any]) -> list[tuple[float, dict[str, Any]]]:
    """POST `body`, read the SSE response as it arrives: each `data:` payload with its
    arrival time."""
    events = []
    with httpx.Client(timeout=60) as client, client.stream(
            "POST", url, json=body,
            headers={**dict(V1), "x-amzn-lambda-context": lambda_context(60)}) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line.startswith("data: "):
                events.append((time.time(), json.loads(line[len("data: "):])))
    return events


def _message(text: str, **fields: str) -> dict[str, Any]:
    return {"message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                        "parts": [{"text": text}], **fields}}


def _check_live(events: list[tuple[float, dict[str, Any]]]) -> str:
    """At least three chunks of one artifact, arrived while the model wrote (not all at the
    end), then COMPLETED; returns the artifact's text."""
    chunks = [(at, e["artifactUpdate"]) for at, e in events if "artifactUpdate" in e]
    assert len(chunks) >= 3, events
    completed_at, last = events[-1]
    assert last["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED", last
    assert completed_at - chunks[0][0] >= (len(chunks) - 1) * DELAY * 0.5
    assert chunks[-1][1]["lastChunk"] is True
    assert len({chunk["artifact"]["artifactId"] for _, chunk in chunks}) == 1
    return "".join(part["text"] for _, chunk in chunks for part in chunk["artifact"]["parts"])


@pytest.mark.parametrize("on", ["memory", "dynamodb"])
def test_the_streaming_door_streams_the_answer_live(
        on: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    env = {"A2A_AGENT": AGENT, DELAY_ENV: str(DELAY)}
    if on == "dynamodb":
        env.update({key: value for key, value in kit_env(
            request.getfixturevalue("ddb_endpoint"), AGENT).items()
            if key in ("A2A_TABLE", "AWS_ENDPOINT_URL_DYNAMODB")})
    with door(tmp_path / "door.log", adapter=True, **env) as url:
        rpc = _post_stream(url, {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
                                 "params": _message("hello door")})
        rest = _post_stream(url + "message:stream", _message("hello rest"))
    text = _check_live([(at, e["result"]) for at, e in rpc])
    assert text.startswith("You said: hello door.")
    assert "task" in rest[0][1]  # HTTP+JSON: bare StreamResponses
    assert _check_live(rest).startswith("You said: hello rest.")


def test_an_interrupted_graph_resumes_in_another_process(
        ddb_endpoint: str, tmp_path: Path) -> None:
    """Asked over JSON-RPC by the streaming door, answered over gRPC by the container: the
    first process is gone by then; the run goes on from the checkpoint in DynamoDB."""
    env = kit_env(ddb_endpoint, INTERVIEWER, A2A_LANGGRAPH_CHECKPOINT_TABLE=CHECKPOINTS,
                  **{DELAY_ENV: str(DELAY)})
    with door(tmp_path / "door.log", adapter=True,
              **{k: v for k, v in env.items() if k.startswith(("A2A_", "AWS_ENDPOINT"))},
              **{DELAY_ENV: str(DELAY)}) as url:
        asked = _post_stream(url, {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
                                   "params": _message("hi")})
    task = asked[0][1]["result"]["task"]
    status = asked[-1][1]["result"]["statusUpdate"]["status"]
    assert status["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert status["message"]["parts"][0]["text"] == "What is your name?"
    with container(env, tmp_path / "grpc.log") as (_, stub):
        events = list(stub.SendStreamingMessage(
            send_request("Ann", task_id=task["id"], context_id=task["contextId"]),
            metadata=V1, timeout=60))
    assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    text = "".join(part.text for e in events if e.HasField("artifact_update")
                   for part in e.artifact_update.artifact.parts)
    # The thread holds the first process's message and the answer the resumed node made.
    assert text == "You said: My name is Ann. I have seen 2 messages in this thread so far."
