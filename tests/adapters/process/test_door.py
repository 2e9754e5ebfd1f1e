"""Every adapter in a kit process chosen by A2A_AGENT: the streaming door (`python -m
handlers.stream`, as the Lambda Web Adapter runs it) streams the answer live over JSON-RPC and
HTTP+JSON, on both stores."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adapters.script import DELAY_ENV
from tests.adapters.support import live_text, message, post_stream
from tests.execution.processes import kit_env
from tests.stream.door import door

pytestmark = pytest.mark.slow

AGENTS = ["tests.adapters.graphs:agent", "tests.adapters.strands_agent:agent",
          "tests.adapters.openai_agent:agent"]
DELAY = 0.05


@pytest.mark.parametrize("on", ["memory", "dynamodb"])
@pytest.mark.parametrize("agent", AGENTS)
def test_the_streaming_door_streams_the_answer_live(
        agent: str, on: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    env = {"A2A_AGENT": agent, DELAY_ENV: str(DELAY)}
    if on == "dynamodb":
        env.update({key: value for key, value in kit_env(
            request.getfixturevalue("ddb_endpoint"), agent).items()
            if key in ("A2A_TABLE", "AWS_ENDPOINT_URL_DYNAMODB")})
    with door(tmp_path / "door.log", adapter=True, **env) as url:
        rpc = post_stream(url, {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
                                "params": message("hello door")})
        rest = post_stream(url + "message:stream", message("hello rest"))
    assert live_text([(at, e["result"]) for at, e in rpc], DELAY).startswith(
        "You said: hello door.")
    assert "task" in rest[0][1]  # HTTP+JSON: bare StreamResponses
    assert live_text(rest, DELAY).startswith("You said: hello rest.")
