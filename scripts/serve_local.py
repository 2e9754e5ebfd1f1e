"""Serve the kit on loopback: JSON-RPC (uvicorn) and gRPC in one process, one embedded store.

Run by `./dev serve`. Settings come from the environment as everywhere else; anonymous
callers are allowed by default here (local development only). With A2A_TABLE set, both
bindings use DynamoDB instead of the embedded store.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shlex

import uvicorn

from a2akit.runtime import build_operations
from a2akit.settings import ENV, Settings
from handlers.jsonrpc_app import create_app


def _curl(url: str) -> str:
    body = ('{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":'
            '{"messageId":"hello-1","role":"ROLE_USER","parts":[{"text":"hello"}]}}}')
    return (f"curl -s {url} -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' "
            f"-d {shlex.quote(body)}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="JSON-RPC port")
    parser.add_argument("--grpc-port", type=int, default=50051)
    args = parser.parse_args()
    os.environ.setdefault(ENV.ALLOW_ANONYMOUS, "true")
    os.environ.setdefault(ENV.PUBLIC_URL, f"http://{args.host}:{args.port}/")
    try:
        import grpc_service.server as grpc_server
    except ImportError:  # the grpc extra is not installed: serve JSON-RPC alone
        grpc_server = None  # type: ignore[assignment]
    if grpc_server is not None:
        os.environ.setdefault(ENV.GRPC_ADDRESS, f"{args.host}:{args.grpc_port}")
    settings = Settings.from_env()
    operations = build_operations(settings)
    config = uvicorn.Config(create_app(operations), host=args.host, port=args.port,
                            log_level="warning", lifespan="off")
    web = uvicorn.Server(config)
    grpc = None
    if grpc_server is not None:
        grpc = await grpc_server.serve(settings, operations=operations,
                                       port=args.grpc_port, host=args.host)
        print(f"gRPC      {args.host}:{grpc.port}  (lf.a2a.v1.A2AService, a2a-version: 1.0)")
    print(f"JSON-RPC  {settings.public_url}")
    print(f"Card      {settings.public_url.rstrip('/')}/.well-known/agent-card.json")
    print(f"Agent     {settings.agent}")
    print("Try:\n  " + _curl(settings.public_url), flush=True)
    try:
        await web.serve()
    finally:
        if grpc is not None:
            await grpc.shutdown(5)


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())
