"""`./dev serve` (scripts.serve_local): binds, then tells; a taken port is one line, no banner.

And the two calls its banner offers (the curl line's request and `./dev grpc-call`) work.
"""

from __future__ import annotations

import json
import shlex
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from a2akit.runtime import STARTUP_EXIT_CODE
from tests.scripts.processes import ROOT, Start, clean_env, send_hello
from tests.support.webhooks import Receiver

pytestmark = pytest.mark.slow

SERVE = [sys.executable, "-m", "scripts.serve_local"]


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A loopback port some other program is listening on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


@pytest.mark.parametrize("option", ["--port", "--grpc-port"])
def test_taken_port_is_one_line_and_no_banner(taken_port: int, option: str) -> None:
    ports = {"--port": "0", "--grpc-port": "0", option: str(taken_port)}
    run = subprocess.run([*SERVE, *(item for pair in ports.items() for item in pair)],
                         cwd=ROOT, env=clean_env(), capture_output=True, text=True, timeout=60)
    assert run.returncode == STARTUP_EXIT_CODE
    assert run.stdout == ""
    assert "Traceback" not in run.stderr
    assert run.stderr.splitlines() == [
        f"a2akit: cannot start: {option} {taken_port}: 127.0.0.1:{taken_port} is already in "
        f"use (another ./dev serve?); pick another with {option}"]


def test_banner_names_the_store_and_both_calls_work(start: Start) -> None:
    server = start([*SERVE, "--port", "0", "--grpc-port", "0"], clean_env())
    url = server.wait_for("JSON-RPC").split()[-1]
    rest_url = server.wait_for("HTTP+JSON").split()[1]
    assert rest_url == url  # one URL for both HTTP bindings by default
    grpc_address = server.lines[0].split()[1]
    assert server.wait_for("Store") == (
        "Store     embedded (in memory: tasks go when the server stops)")
    rest_curl = shlex.split(server.wait_for("/message:send").strip())
    grpc_call = server.wait_for("./dev grpc-call").strip()
    assert grpc_call == f"./dev grpc-call hello --address {grpc_address}"

    # The curl line's request: the port is listening once the banner is out.
    task = send_hello(url, "hello-1")["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"

    # The HTTP+JSON curl line, as it is printed.
    words = rest_curl
    assert words[:3] == ["curl", "-s", rest_url.rstrip("/") + "/message:send"]
    headers = dict(words[i + 1].split(": ", 1) for i, w in enumerate(words) if w == "-H")
    request = urllib.request.Request(words[2], data=words[words.index("-d") + 1].encode(),
                                     headers=headers)
    with urllib.request.urlopen(request, timeout=30) as response:
        rest_task = json.load(response)["task"]
    assert rest_task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert rest_task["artifacts"][0]["parts"] == [{"text": "hello"}]

    # The banner's gRPC line, as `./dev grpc-call` runs it.
    args = grpc_call.removeprefix("./dev grpc-call ").split()
    run = subprocess.run([sys.executable, "-m", "scripts.grpc_call", *args], cwd=ROOT,
                         env=clean_env(), capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    task = json.loads(run.stdout)["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"text": "hello"}]


def test_grpc_call_without_a_server_is_one_line() -> None:
    with socket.socket() as sock:  # bound, not listening: connections are refused
        sock.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{sock.getsockname()[1]}"
        run = subprocess.run([sys.executable, "-m", "scripts.grpc_call", "hi",
                              "--address", address], cwd=ROOT, env=clean_env(),
                             capture_output=True, text=True, timeout=60)
    assert run.returncode == 1
    (line,) = run.stderr.splitlines()
    assert line.startswith(f"grpc-call: UNAVAILABLE from {address}: ")
    assert line.endswith("is ./dev serve running?")


@pytest.mark.anyio
async def test_grpc_call_sends_headers_as_metadata() -> None:
    """`./dev grpc-call --header 'x-api-key: ...'`, the README's API-key example, reaches an
    API-key server: the key authenticates, and without it the call is refused."""
    import asyncio

    import grpc

    from a2akit.auth.api_keys import hash_key, new_key
    from a2akit.generated import a2a_pb2 as pb
    from a2akit.settings import Settings
    from scripts.grpc_call import send
    from tests.support.harness import grpc_server, memory_operations

    key = new_key()
    record = {"principal": "alice", "sha256": hash_key(key)}
    settings = Settings(api_keys=json.dumps([record]))

    # On the suite's event loop, not a loop of its own (tests.support.harness.background_loop).
    async with grpc_server(memory_operations(settings=settings)) as server:
        address = f"127.0.0.1:{server.port}"
        answer = await asyncio.to_thread(send, address, "hi", headers=(("x-api-key", key),))
        assert answer.task.status.state == pb.TASK_STATE_COMPLETED
        with pytest.raises(grpc.RpcError) as refused:
            await asyncio.to_thread(send, address, "hi")
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED


def _send_with_webhook(url: str, webhook: str) -> dict[str, Any]:
    return send_hello(url, "hello-1", push_config={"url": webhook, "token": "readme-token"})


def test_serve_delivers_push_notifications_with_the_readmes_settings(start: Start) -> None:
    """The README's push commands: with push on, the guard refuses a loopback webhook; with
    the development allowances, `./dev serve` delivers the task's events to it."""
    with Receiver() as hook:
        guarded = start([*SERVE, "--port", "0", "--grpc-port", "0"],
                        clean_env(A2A_PUSH_NOTIFICATIONS="true"))
        answer = _send_with_webhook(guarded.wait_for("JSON-RPC").split()[-1], hook.url())
        assert answer["error"]["code"] == -32602
        guarded.stop()

        server = start([*SERVE, "--port", "0", "--grpc-port", "0"], clean_env(
            A2A_PUSH_NOTIFICATIONS="true", A2A_PUSH_ALLOW_HTTP="true",
            A2A_PUSH_ALLOW_CIDRS="127.0.0.1/32"))
        task = _send_with_webhook(server.wait_for("JSON-RPC").split()[-1],
                                  hook.url())["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        received = hook.wait_for(3)  # the task, WORKING... up to COMPLETED
        deadline = time.monotonic() + 10
        while json.loads(received[-1].body).get("statusUpdate", {}).get("status", {}).get(
                "state") != "TASK_STATE_COMPLETED" and time.monotonic() < deadline:
            received = hook.wait_for(len(received) + 1)
    bodies = [json.loads(request.body) for request in received]
    assert bodies[0]["task"]["id"] == task["id"]
    assert bodies[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert all(r.headers["x-a2a-notification-token"] == "readme-token" for r in received)
