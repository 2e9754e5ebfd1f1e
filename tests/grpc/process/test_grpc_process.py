"""`python -m grpc_service` as a real process: serves, answers health, stops on SIGTERM."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from a2akit.generated import a2a_pb2 as pb
from grpc_service.generated import a2a_pb2_grpc
from tests.support.messages import V1, send_request
from tests.support.processes import free_port, python_env, running

pytestmark = pytest.mark.slow


def test_module_serves_and_exits_cleanly_on_sigterm(tmp_path: Path) -> None:
    port = free_port()
    env = python_env(GRPC_PORT=str(port), A2A_ALLOW_ANONYMOUS="true",
                     A2A_GRPC_SHUTDOWN_GRACE_SECONDS="2")
    log = tmp_path / "grpc_service.log"
    with running([sys.executable, "-m", "grpc_service"], ports=[port], env=env,
                 log=log) as process:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            health = health_pb2_grpc.HealthStub(channel)
            response = health.Check(health_pb2.HealthCheckRequest(service=""), timeout=10)
            assert response.status == health_pb2.HealthCheckResponse.SERVING
            stub = a2a_pb2_grpc.A2AServiceStub(channel)
            response = stub.SendMessage(send_request("smoke"), metadata=V1, timeout=10)
            assert response.task.status.state == pb.TASK_STATE_COMPLETED
            assert response.task.artifacts[0].parts[0].text == "smoke"
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=30)
        output = log.read_text()
        assert code == 0, output
        assert "Traceback" not in output, output


@pytest.mark.parametrize(("settings", "warned"), [
    ({}, True),  # nothing configured: every call is refused
    ({"A2A_ALLOW_ANONYMOUS": "false"}, True),
    ({"A2A_ALLOW_ANONYMOUS": "true"}, False),
    ({"A2A_BEARER_TOKENS": "alice=tok-a"}, False),
])
def test_a_server_nobody_can_call_says_so_at_start(tmp_path: Path, settings: dict[str, str],
                                                   warned: bool) -> None:
    port = free_port()
    log = tmp_path / "grpc_service.log"
    with running([sys.executable, "-m", "grpc_service"], ports=[port],
                 env=python_env(GRPC_PORT=str(port), **settings), log=log) as process:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = a2a_pb2_grpc.A2AServiceStub(channel)
            if warned:
                with pytest.raises(grpc.RpcError) as refused:
                    stub.SendMessage(send_request("x"), metadata=V1, timeout=10)
                assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    lines = [line for line in log.read_text().splitlines()
             if "no caller can be authenticated" in line]
    if not warned:
        assert lines == []
        return
    assert len(lines) == 1, log.read_text()
    assert json.loads(lines[0])["level"] == "WARNING"  # a JSON log line (a2akit.logs)
    for variable in ("A2A_JWT_ISSUER", "A2A_API_KEYS", "A2A_ALLOW_ANONYMOUS"):
        assert variable in lines[0]
