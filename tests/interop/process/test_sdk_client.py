"""Interop: the official a2a-sdk client against our local server, over JSON-RPC, HTTP+JSON and
gRPC, every operation, on both stores (the embedded one and DynamoDB Local); tasks created on
each binding are read on the other two.

The SDK lives in its own venv (.cache/sdk-venv, installed on first use) and the client script
(sdk_client.py) imports nothing from the kit, so this checks the wire, not shared code.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.store.conftest import TABLE
from tests.support import sdk
from tests.support.processes import free_port, python_env, running

pytestmark = pytest.mark.slow

CLIENT = Path(__file__).with_name("sdk_client.py")
BINDINGS = ["JSONRPC", "HTTP+JSON", "GRPC"]
SERVER_ENV = {"A2A_AGENT": "tests.interop.agent:agent", "A2A_PUSH_NOTIFICATIONS": "true",
              # Configs only: nothing is delivered to the webhook, which is not on loopback.
              "A2A_PUSH_DELIVERY": "stream", "A2A_EXTENDED_AGENT_CARD": "true",
              "A2A_STREAM_BUDGET_SECONDS": "20"}


@pytest.fixture(scope="session")
def sdk_python() -> Path:
    return sdk.sdk_python("import a2a.client, grpc, httpx")


@pytest.fixture(scope="module", params=["embedded", "dynamodb"])
def server(request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port, grpc_port = free_port(), free_port()
    log = tmp_path_factory.mktemp("serve_local") / "server.log"
    command = [sys.executable, "-m", "scripts.serve_local", "--port", str(port),
               "--grpc-port", str(grpc_port)]
    env = dict(SERVER_ENV)
    if request.param == "dynamodb":
        env.update(A2A_TABLE=TABLE, AWS_REGION="us-east-1",
                   AWS_ENDPOINT_URL_DYNAMODB=request.getfixturevalue("ddb_endpoint"))
    with running(command, ports=[port, grpc_port], env=python_env(**env), log=log):
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def results(sdk_python: Path, server: str) -> dict[str, Any]:
    run = subprocess.run([str(sdk_python), str(CLIENT), server], capture_output=True,
                         text=True, timeout=120, cwd=CLIENT.parent)
    assert run.returncode == 0, run.stderr[-4000:]
    parsed: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    return parsed


def test_card_resolves(results: dict[str, Any]) -> None:
    interfaces = results["card"]["supportedInterfaces"]
    # The 1.0 interfaces first, then the 0.3 ones on the same endpoints (docs/a2a-0.3.md).
    assert [i["protocolBinding"] for i in interfaces if i["protocolVersion"] == "1.0"] == (
        BINDINGS)
    assert [i["protocolBinding"] for i in interfaces if i["protocolVersion"] == "0.3"] == [
        "JSONRPC", "GRPC"]
    assert results["card"]["capabilities"]["streaming"] is True


@pytest.mark.parametrize("binding", BINDINGS)
def test_operations(results: dict[str, Any], binding: str) -> None:
    got = results[binding]
    send = got["send"]
    assert send["kind"] == "task" and send["events"] == 1
    assert send["state"] == "TASK_STATE_COMPLETED"
    assert send["text"] == f"hello {binding}"
    assert got["get"] == {"id": send["id"], "state": "TASK_STATE_COMPLETED",
                          "text": f"hello {binding}"}
    assert send["id"] in got["list"]["ids"]
    assert got["cancel"]["type"] == "TaskNotCancelableError", got["cancel"]
    assert got["get_missing"]["type"] == "TaskNotFoundError", got["get_missing"]
    stream = got["stream"]
    assert stream["kinds"], stream
    assert stream["final_state"] == "TASK_STATE_COMPLETED", stream
    assert stream["text"] == f"stream {binding}", stream
    subscribe = got["subscribe"]
    assert subscribe == {"first": "task", "id": True, "canceled": "TASK_STATE_CANCELED"}
    push = got["push"]
    assert push["created"] == [f"cfg-{binding}", send["id"], "https://93.184.216.34/hook"]
    assert push["same"] is True and push["listed"] == [f"cfg-{binding}"] and push["after"] == []
    # Anonymous callers never get the extended card: each binding reports the 401 its way.
    refused = got["extended_card"]
    assert refused["type"] is not None and ("401" in refused["message"]
                                            or "UNAUTHENTICATED" in refused["message"]), refused


def test_a_task_created_on_one_binding_is_read_on_the_others(results: dict[str, Any]) -> None:
    for origin, readers in results["across"].items():
        assert readers == {binding: ["TASK_STATE_COMPLETED", f"from {origin}"]
                           for binding in BINDINGS}, origin
