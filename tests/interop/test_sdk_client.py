"""Interop: the official a2a-sdk client against our local server, over JSON-RPC and gRPC.

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

from tests.support.processes import ROOT, free_port, python_env, running
from tests.support.tools import tool_or_skip

pytestmark = pytest.mark.slow

SDK_VENV = ROOT / ".cache" / "sdk-venv"
SDK_SPEC = "a2a-sdk[grpc]>=1,<2"
CLIENT = Path(__file__).with_name("sdk_client.py")


@pytest.fixture(scope="session")
def sdk_python() -> Path:
    ready = ["python", "-c", "import a2a.client, grpc, httpx"]
    return tool_or_skip(SDK_VENV, [SDK_SPEC], ready, "a2a-sdk") / "python"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port, grpc_port = free_port(), free_port()
    log = tmp_path_factory.mktemp("serve_local") / "server.log"
    command = [sys.executable, "-m", "scripts.serve_local", "--port", str(port),
               "--grpc-port", str(grpc_port)]
    with running(command, ports=[port, grpc_port], env=python_env(), log=log):
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def results(sdk_python: Path, server: str) -> dict[str, Any]:
    run = subprocess.run([str(sdk_python), str(CLIENT), server], capture_output=True,
                         text=True, timeout=120, cwd=CLIENT.parent)
    assert run.returncode == 0, run.stderr[-4000:]
    parsed: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    return parsed


def test_card_resolves(results: dict[str, Any]) -> None:
    bindings = {i["protocolBinding"] for i in results["card"]["supportedInterfaces"]}
    assert {"JSONRPC", "GRPC"} <= bindings
    assert results["card"]["capabilities"]["streaming"] is True


@pytest.mark.parametrize("binding", ["JSONRPC", "GRPC"])
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
