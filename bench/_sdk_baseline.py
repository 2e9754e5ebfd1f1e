"""The official a2a-sdk's side of bench/perf.py: an echo agent on its own server stack.

Run by perf.py with the python of .cache/bench-sdk-venv; it imports nothing from the kit, and
bench/_kit.py answers the same modes for the kit:

    serve-jsonrpc PORT PRELOAD      uvicorn on 127.0.0.1:PORT; PRELOAD tasks stored first
    serve-grpc PORT                 grpc.aio on 127.0.0.1:PORT
    lambda-cold EVENT BODY T0 [--boto3]
                                    one cold Lambda start: import, build, one invocation;
                                    --boto3 adds `import boto3; boto3.client("dynamodb")`,
                                    what the SDK would need to reach DynamoDB
    mangum-warm EVENT N WARMUP      p50 wall time of N warm invocations of the Mangum handler

Servers print READY once listening; the other modes print one JSON line.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from _bench_common import lambda_context, print_result, rss_now, time_invocations, with_body
from _bench_common import preload as preload_tasks

__all__: list[str] = []


def build_handler() -> Any:
    from a2a.helpers import new_task, new_text_part
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.events import EventQueue
    from a2a.server.request_handlers import DefaultRequestHandlerV2
    from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
    from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, TaskState

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
    return DefaultRequestHandlerV2(agent_executor=Echo(), task_store=InMemoryTaskStore(),
                                   agent_card=card), card


def build_app() -> Any:
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from starlette.applications import Starlette

    handler, card = build_handler()
    routes = create_agent_card_routes(card) + create_jsonrpc_routes(handler, rpc_url="/")
    return Starlette(routes=routes)


def serve_jsonrpc(port: int, preload: int) -> None:
    import uvicorn

    app = build_app()
    asyncio.run(preload_tasks(app, preload))
    print("READY", flush=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error", access_log=False)


async def _serve_grpc(port: int) -> None:
    import grpc
    from a2a.server.request_handlers import GrpcHandler
    from a2a.types import a2a_pb2_grpc

    handler, _ = build_handler()
    server = grpc.aio.server()
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    print("READY", flush=True)
    await server.wait_for_termination()


def lambda_cold(event_path: str, body: str, t0: float, boto: bool) -> None:
    import json
    import time

    if boto:
        import boto3

        boto3.client("dynamodb")
    from mangum import Mangum

    handler = Mangum(build_app(), lifespan="off")
    reply = handler(with_body(event_path, body), lambda_context())
    wall = time.time() - t0
    assert reply["statusCode"] == 200 and "result" in json.loads(reply["body"]), reply
    print_result({"wall_ms": wall * 1000, **rss_now()})


def mangum_warm(event_path: str, n: int, warmup: int) -> None:
    from mangum import Mangum

    handler = Mangum(build_app(), lifespan="off")
    print_result(time_invocations(handler, event_path, n, warmup))


def main() -> None:
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "serve-jsonrpc":
        serve_jsonrpc(int(args[0]), int(args[1]))
    elif mode == "serve-grpc":
        asyncio.run(_serve_grpc(int(args[0])))
    elif mode == "lambda-cold":
        lambda_cold(args[0], args[1], float(args[2]), "--boto3" in args)
    elif mode == "mangum-warm":
        mangum_warm(args[0], int(args[1]), int(args[2]))
    elif mode == "version":
        from importlib import metadata

        print_result({"version": metadata.version("a2a-sdk")})
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
