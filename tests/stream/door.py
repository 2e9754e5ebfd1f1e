"""`python -m handlers.stream` started as the Lambda Web Adapter starts it (PORT set, under the
adapter's exec wrapper), and a client that reads its SSE lines with their arrival times."""

from __future__ import annotations

import contextlib
import json
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from handlers.stream import LWA_WRAPPER
from tests.support.processes import free_port, python_env, running

__all__ = ["STAMPED", "Line", "door", "lags", "lambda_context", "read_stream", "results", "rpc"]

STAMPED = "tests.stream.agents:agent"
# What Lambda sets in an environment the adapter runs in (the runtime API is never called
# here: the test plays the adapter's part).
ADAPTER_ENV = {"AWS_LAMBDA_EXEC_WRAPPER": LWA_WRAPPER, "AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9"}

Line = tuple[float, str]  # (time.time() at arrival, the line)


@contextlib.contextmanager
def door(log: Path, *, adapter: bool, path: str = "/", **env: str) -> Iterator[str]:
    """The streaming door on a free loopback port; yields its base URL."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    environ = python_env(**{"PORT": str(port), "A2A_AGENT": STAMPED,
                            "A2A_ALLOW_ANONYMOUS": "true", "A2A_PUBLIC_URL": base + path,
                            **(ADAPTER_ENV if adapter else {}), **env})
    if not adapter:
        for name in ADAPTER_ENV:
            environ.pop(name, None)
    with running([sys.executable, "-m", "handlers.stream"], ports=[port], env=environ, log=log):
        yield base + "/"


def lambda_context(seconds_left: float) -> str:
    """The adapter's x-amzn-lambda-context: lambda_runtime's Context as JSON."""
    return json.dumps({"request_id": str(uuid.uuid4()),
                       "deadline": int((time.time() + seconds_left) * 1000),
                       "invoked_function_arn": "arn:aws:lambda:us-east-1:111111111111:function:f",
                       "xray_trace_id": None, "client_context": None, "identity": None,
                       "env_config": {"function_name": "f", "memory": 512, "version": "1",
                                      "log_stream": "", "log_group": ""}})


def rpc(method: str, text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"message": {
        "messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}}}


def read_stream(url: str, chunks: int, headers: dict[str, str] | None = None
                ) -> tuple[float, int, list[Line]]:
    """SendStreamingMessage for `chunks` stamped chunks; returns when the request started,
    the status and every line with its arrival time."""
    started = time.time()
    lines: list[Line] = []
    with httpx.Client(timeout=60) as client, client.stream(
            "POST", url, json=rpc("SendStreamingMessage", str(chunks)),
            headers={"A2A-Version": "1.0", **(headers or {})}) as response:
        for line in response.iter_lines():
            lines.append((time.time(), line))
        return started, response.status_code, lines


def results(lines: list[Line]) -> list[tuple[float, dict[str, Any]]]:
    """The `result` of each `data:` line, with its arrival time."""
    return [(at, json.loads(line[len("data: "):])["result"])
            for at, line in lines if line.startswith("data: ")]


def lags(lines: list[Line]) -> list[float]:
    """For each artifact chunk: arrival time less the emit time the agent wrote into it."""
    out = []
    for at, result in results(lines):
        update = result.get("artifactUpdate")
        if update:
            text = update["artifact"]["parts"][0]["text"]
            emitted = float(text.split("@")[1].rstrip(";"))
            out.append(at - emitted)
    return out
