"""Baseline side of bench/perf.py: the official a2a-sdk serving an echo agent over JSON-RPC.

Run by perf.py with the python of .cache/bench-sdk-venv; imports nothing from the kit.
Usage: _sdk_baseline.py N WARMUP COLD_RUNS EVENT_JSON. Prints one JSON line of results.
With `--lambda EVENT_JSON BODY T0`, it is one cold Lambda start instead (Mangum).
"""

from __future__ import annotations

import asyncio
import json
import resource
import statistics
import subprocess
import sys
import time
from importlib import metadata
from typing import Any

HEADERS = {"content-type": "application/json", "a2a-version": "1.0"}


def build_app() -> Any:
    from a2a.helpers import new_task, new_text_part
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.events import EventQueue
    from a2a.server.request_handlers import DefaultRequestHandlerV2
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
    from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, TaskState
    from starlette.applications import Starlette

    class Echo(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            message = context.message
            assert message is not None
            task_id, context_id = context.task_id or "", context.context_id or ""
            if context.current_task is None:
                await event_queue.enqueue_event(new_task(
                    task_id, context_id, TaskState.TASK_STATE_SUBMITTED, history=[message]))
            updater = TaskUpdater(event_queue, task_id, context_id)
            text = "".join(part.text for part in message.parts)
            await updater.add_artifact([new_text_part(text)], name="echo")
            await updater.complete()

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            raise NotImplementedError

    card = AgentCard(
        name="echo", description="Echoes the text it gets.", version="1.0.0",
        supported_interfaces=[AgentInterface(url="http://localhost/", protocol_binding="JSONRPC",
                                             protocol_version="1.0")],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"], default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Echo", tags=["echo"])])
    handler = DefaultRequestHandlerV2(agent_executor=Echo(), task_store=InMemoryTaskStore(),
                                      agent_card=card)
    routes = create_agent_card_routes(card) + create_jsonrpc_routes(handler, rpc_url="/")
    return Starlette(routes=routes)


def _send_body(i: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": i, "method": "SendMessage", "params": {"message": {
        "messageId": f"m-{i}", "role": "ROLE_USER", "parts": [{"text": "hello"}]}}}


async def cpu(n: int, warmup: int) -> dict[str, float]:
    import httpx

    app = build_app()
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://sdk") as client:
        async def send(i: int) -> dict[str, Any]:
            reply = (await client.post("/", json=_send_body(i), headers=HEADERS)).json()
            return reply["result"]["task"]

        task_id = ""
        for i in range(warmup):
            task_id = (await send(i))["id"]
        start = time.process_time()
        for i in range(n):
            await send(warmup + i)
        send_ms = (time.process_time() - start) * 1000 / n
        get = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task_id}}
        for _ in range(warmup):
            reply = (await client.post("/", json=get, headers=HEADERS)).json()
            assert "result" in reply, reply
        start = time.process_time()
        for _ in range(n):
            await client.post("/", json=get, headers=HEADERS)
        get_ms = (time.process_time() - start) * 1000 / n
    return {"send_ms": send_ms, "get_ms": get_ms}


def one_lambda(event_path: str, body: str, t0: float) -> None:
    with open(event_path) as f:
        event = json.load(f)
    event["headers"]["a2a-version"] = "1.0"
    event["body"] = body
    from mangum import Mangum

    handler = Mangum(build_app(), lifespan="off")

    class Ctx:
        function_name = "bench"
        aws_request_id = "r-1"

    reply = handler(event, Ctx())
    wall = time.time() - t0
    assert reply["statusCode"] == 200 and "result" in json.loads(reply["body"]), reply
    print(json.dumps({"wall_ms": wall * 1000,
                      "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))


def cold(runs: int, event_path: str) -> dict[str, float]:
    results = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, __file__, "--lambda", event_path, json.dumps(_send_body(1)),
             repr(time.time())], capture_output=True, text=True, check=True, timeout=60)
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return {"cold_ms": statistics.median(r["wall_ms"] for r in results),
            "rss_mb": statistics.median(r["maxrss_kb"] for r in results) / 1024}


def main() -> None:
    if sys.argv[1] == "--lambda":
        one_lambda(sys.argv[2], sys.argv[3], float(sys.argv[4]))
        return
    n, warmup, runs, event_path = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    result: dict[str, Any] = {**asyncio.run(cpu(n, warmup)), **cold(runs, event_path),
                              "version": metadata.version("a2a-sdk")}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
