"""`./dev dynamodb` (scripts.dynamodb_local), then `./dev serve` with the lines it prints.

The README's "Against a local DynamoDB" recipe, end to end: the emulator in the foreground,
the kit pointed at it by exactly the variables it printed, one request stored there.
"""

from __future__ import annotations

import shlex
import signal
import socket
import subprocess
import sys

import pytest

from scripts.dynamodb_local import free_port
from tests.scripts.processes import ROOT, Start, clean_env, send_hello

pytestmark = pytest.mark.slow

DYNAMODB = [sys.executable, "-m", "scripts.dynamodb_local"]


def _printed_env(lines: list[str]) -> dict[str, str]:
    """The NAME=value words of the printed `... ./dev serve` command."""
    start = next(i for i, line in enumerate(lines) if "A2A_TABLE=" in line)
    words = shlex.split(" ".join(line.rstrip("\\") for line in lines[start:]))
    assert words[-2:] == ["./dev", "serve"], words
    return dict(word.split("=", 1) for word in words[:-2])


def test_serve_against_the_emulator_it_started(start: Start) -> None:
    port = free_port()
    emulator = start([*DYNAMODB, "--port", str(port)], clean_env())
    emulator.wait_for("./dev serve", timeout=600)  # the first run installs it from npm
    env = _printed_env(emulator.lines)
    assert env["AWS_ENDPOINT_URL_DYNAMODB"] == f"http://127.0.0.1:{port}"
    assert env["A2A_TABLE"] == "a2a-tasks"

    server = start([sys.executable, "-m", "scripts.serve_local", "--port", "0",
                    "--grpc-port", "0"], clean_env(**env))
    url = server.wait_for("JSON-RPC").split()[-1]
    assert server.wait_for("Store") == (
        f"Store     DynamoDB table a2a-tasks at http://127.0.0.1:{port}")
    task = send_hello(url, "hello-ddb")["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"

    # SIGTERM (or Ctrl-C) stops the emulator with the command, and the command exits 0.
    emulator.process.send_signal(signal.SIGTERM)
    assert emulator.process.wait(timeout=30) == 0
    with socket.socket() as sock:  # free again: the Java process is gone
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))


def test_taken_port_is_one_line() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        run = subprocess.run([*DYNAMODB, "--port", str(port)], cwd=ROOT, env=clean_env(),
                             capture_output=True, text=True, timeout=60)
    assert run.returncode == 1
    assert run.stderr.splitlines() == [
        f"dynamodb: port {port} is already in use; pick another with --port"]
