"""What both sides of bench/perf.py share: requests, the Lambda event and context, timing.

Standard library only: it runs in the kit's venv and in the SDK's.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import time
from collections.abc import Callable
from typing import Any

HEADERS = {"content-type": "application/json", "a2a-version": "1.0"}
PRELOAD_CONTEXT = "ctx-target"
PRELOAD_EVERY = 220  # one stored task in 220 is in PRELOAD_CONTEXT: 20 of 4,400
_RUN = f"{os.getpid()}-{time.time_ns()}"  # message ids never repeat across runs


def send_body(i: int, *, preload: bool = False) -> dict[str, Any]:
    message: dict[str, Any] = {"messageId": f"{'pre' if preload else 'm'}-{_RUN}-{i}",
                               "role": "ROLE_USER", "parts": [{"text": "hello"}]}
    if preload:
        message["contextId"] = PRELOAD_CONTEXT if i % PRELOAD_EVERY == 0 else f"ctx-{i}"
    return {"jsonrpc": "2.0", "id": i, "method": "SendMessage", "params": {"message": message}}


async def preload(app: Any, count: int) -> None:
    """Store `count` tasks through the JSON-RPC app in process, before a server is timed.
    With none to store, httpx is not imported: the memory figures are of servers as they run,
    without the benchmark's client in them."""
    if count == 0:
        return
    import httpx

    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://bench") as client:
        for i in range(count):
            reply = await client.post("/", json=send_body(i, preload=True), headers=HEADERS)
            assert "result" in reply.json(), reply.text


def with_body(event_path: str, body: str) -> dict[str, Any]:
    """The API Gateway (HTTP API, payload 2.0) event of tests/events with this body."""
    with open(event_path) as f:
        event: dict[str, Any] = json.load(f)
    event["headers"]["a2a-version"] = "1.0"
    event["body"] = body
    return event


class _Context:
    function_name = "bench"
    function_version = "$LATEST"
    aws_request_id = "r-1"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:bench"

    def get_remaining_time_in_millis(self) -> int:
        return 30_000


def lambda_context() -> Any:
    return _Context()


def rss_now() -> dict[str, float]:
    """This process's peak RSS. VmHWM, not ru_maxrss: Linux carries ru_maxrss over exec from
    the forked parent, so a child of a large parent would report the parent's size."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return {"maxrss_kb": int(line.split()[1])}
    except OSError:
        pass
    return {"maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}


def time_invocations(handler: Callable[[Any, Any], Any], event_path: str, n: int,
                     warmup: int) -> dict[str, float]:
    """Wall time of each of `n` invocations after `warmup`, each a new SendMessage."""
    events = [with_body(event_path, json.dumps(send_body(i))) for i in range(n + warmup)]
    context = lambda_context()
    for event in events[:warmup]:
        reply = handler(event, context)
        assert reply["statusCode"] == 200 and '"result"' in reply["body"], reply
    times = []
    for event in events[warmup:]:
        start = time.perf_counter()
        handler(event, context)
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return {"p50_ms": statistics.median(times), "p90_ms": times[int(len(times) * 0.9)]}


def print_result(result: dict[str, Any]) -> None:
    print(json.dumps(result), flush=True)
