"""The kit's side of bench/perf.py: the same modes as bench/_sdk_baseline.py, on the kit.

Settings come from the environment perf.py gives (anonymous callers, the embedded store or a
DynamoDB table), exactly as on Lambda or in the container.
"""

from __future__ import annotations

import asyncio
import sys

from _bench_common import lambda_context, print_result, rss_now, time_invocations, with_body
from _bench_common import preload as preload_tasks

__all__: list[str] = []


def serve_jsonrpc(port: int, preload: int) -> None:
    import uvicorn

    from handlers.jsonrpc import app

    asyncio.run(preload_tasks(app, preload))
    print("READY", flush=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error", access_log=False)


async def _serve_grpc(port: int) -> None:
    from a2akit.settings import Settings
    from grpc_service.server import serve

    running = await serve(Settings.from_env(), port=port, host="127.0.0.1")
    print("READY", flush=True)
    await running.server.wait_for_termination()


def lambda_cold(event_path: str, body: str, t0: float) -> None:
    import json
    import time

    from handlers.jsonrpc import handler

    reply = handler(with_body(event_path, body), lambda_context())
    wall = time.time() - t0
    assert reply["statusCode"] == 200 and "result" in json.loads(reply["body"]), reply
    print_result({"wall_ms": wall * 1000, **rss_now()})


def mangum_warm(event_path: str, n: int, warmup: int) -> None:
    from handlers.jsonrpc import handler

    print_result(time_invocations(handler, event_path, n, warmup))


def main() -> None:
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "serve-jsonrpc":
        serve_jsonrpc(int(args[0]), int(args[1]))
    elif mode == "serve-grpc":
        asyncio.run(_serve_grpc(int(args[0])))
    elif mode == "lambda-cold":
        lambda_cold(args[0], args[1], float(args[2]))
    elif mode == "mangum-warm":
        mangum_warm(args[0], int(args[1]), int(args[2]))
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
