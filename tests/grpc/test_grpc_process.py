"""`python -m grpc_service` as a real process: serves, answers health, stops on SIGTERM."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_support import V1, send_request

from a2akit.generated import a2a_pb2 as pb
from grpc_service.generated import a2a_pb2_grpc

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def _wait_serving(channel: grpc.aio.Channel, process: Any) -> None:
    health = health_pb2_grpc.HealthStub(channel)
    for _ in range(150):
        assert process.returncode is None, "the server exited early"
        try:
            response = await health.Check(health_pb2.HealthCheckRequest(service=""), timeout=1)
        except grpc.aio.AioRpcError:
            await asyncio.sleep(0.1)
            continue
        assert response.status == health_pb2.HealthCheckResponse.SERVING
        return
    raise AssertionError("the server never became healthy")


async def test_module_serves_and_exits_cleanly_on_sigterm() -> None:
    port = _free_port()
    env = {**os.environ, "GRPC_PORT": str(port), "A2A_ALLOW_ANONYMOUS": "true",
           "A2A_GRPC_SHUTDOWN_GRACE_SECONDS": "2", "PYTHONPATH": str(ROOT)}
    process = await anyio.open_process([sys.executable, "-m", "grpc_service"], cwd=ROOT,
                                       env=env, stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT)
    async with process:
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                await _wait_serving(channel, process)
                stub = a2a_pb2_grpc.A2AServiceStub(channel)
                response = await stub.SendMessage(send_request("smoke"), metadata=V1,
                                                  timeout=10)
                assert response.task.status.state == pb.TASK_STATE_COMPLETED
                assert response.task.artifacts[0].parts[0].text == "smoke"
            process.send_signal(signal.SIGTERM)
            with anyio.fail_after(30):
                code = await process.wait()
            output = b""
            assert process.stdout is not None
            async for chunk in process.stdout:
                output += chunk
            assert code == 0, output.decode()
            assert b"Traceback" not in output, output.decode()
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
