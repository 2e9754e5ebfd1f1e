"""LangGraphAgent in kit processes chosen by A2A_AGENT (tests/adapters/graphs.py): a graph
interrupted in one process resumes in another, its checkpoint in DynamoDB Local
(A2A_LANGGRAPH_CHECKPOINT_TABLE)."""

from __future__ import annotations

from pathlib import Path

import pytest

from a2akit.generated import a2a_pb2 as pb
from tests.adapters.script import DELAY_ENV, QUESTION
from tests.adapters.support import message, post_stream
from tests.execution.processes import container, kit_env
from tests.stream.door import door
from tests.support.messages import V1, send_request

pytestmark = pytest.mark.slow

INTERVIEWER = "tests.adapters.graphs:interviewer"
CHECKPOINTS = "a2akit-test-langgraph-checkpoints"
DELAY = 0.05


def test_an_interrupted_graph_resumes_in_another_process(
        ddb_endpoint: str, tmp_path: Path) -> None:
    """Asked over JSON-RPC by the streaming door, answered over gRPC by the container: the
    first process is gone by then; the run goes on from the checkpoint in DynamoDB."""
    env = kit_env(ddb_endpoint, INTERVIEWER, A2A_LANGGRAPH_CHECKPOINT_TABLE=CHECKPOINTS,
                  **{DELAY_ENV: str(DELAY)})
    with door(tmp_path / "door.log", adapter=True,
              **{k: v for k, v in env.items() if k.startswith(("A2A_", "AWS_ENDPOINT"))},
              **{DELAY_ENV: str(DELAY)}) as url:
        asked = post_stream(url, {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
                                  "params": message("hi")})
    task = asked[0][1]["result"]["task"]
    status = asked[-1][1]["result"]["statusUpdate"]["status"]
    assert status["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert status["message"]["parts"][0]["text"] == QUESTION
    with container(env, tmp_path / "grpc.log") as (_, stub):
        events = list(stub.SendStreamingMessage(
            send_request("Ann", task_id=task["id"], context_id=task["contextId"]),
            metadata=V1, timeout=60))
    assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    text = "".join(part.text for e in events if e.HasField("artifact_update")
                   for part in e.artifact_update.artifact.parts)
    # The thread holds the first process's message and the answer the resumed node made.
    assert text == "You said: My name is Ann. I have seen 2 messages in this thread so far."
