"""Serve the kit on loopback: JSON-RPC and HTTP+JSON (one app, uvicorn) and gRPC in one
process, one embedded store.

Run by `./dev serve`. Settings come from the environment as everywhere else; anonymous
callers are allowed by default here (local development only). With A2A_TABLE set, both
bindings use DynamoDB instead of the embedded store.

It binds both ports before it says anything, so the banner is printed only by a server that
is listening; a taken port, a bad setting or an unreachable store ends it with one line on
stderr (`a2akit.runtime.explain_startup_errors`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import os
import shlex
import socket

import uvicorn

from a2akit import logs
from a2akit.card import rest_url
from a2akit.execution.leases import sweep_periodically
from a2akit.runtime import StartupError, build_operations, explain_startup_errors
from a2akit.settings import ENV, Settings
from http_service.app import create_app


def _curl(url: str) -> str:
    body = ('{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":'
            '{"messageId":"hello-1","role":"ROLE_USER","parts":[{"text":"hello"}]}}}')
    return (f"curl -s {url} -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' "
            f"-d {shlex.quote(body)}")


def _rest_curl(url: str) -> str:
    body = '{"message":{"messageId":"hello-2","role":"ROLE_USER","parts":[{"text":"hello"}]}}'
    return (f"curl -s {url.rstrip('/')}/message:send -H 'Content-Type: application/json' "
            f"-H 'A2A-Version: 1.0' -d {shlex.quote(body)}")


def _grpc_call(host: str, port: int) -> str:
    default = port == 50051 and host == "127.0.0.1"
    return "./dev grpc-call hello" + ("" if default else f" --address {host}:{port}")


def _store(settings: Settings) -> str:
    if not settings.table:
        return "embedded (in memory: tasks go when the server stops)"
    where = settings.dynamodb_endpoint or "AWS (region from the AWS environment)"
    return f"DynamoDB table {settings.table} at {where}"


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def _bind(host: str, port: int, option: str, *, probe: bool = False) -> socket.socket:
    """A socket bound to host:port, as uvicorn binds it, or StartupError naming `option`.

    probe=True only checks the port, because grpc binds its own socket. The probe goes without
    SO_REUSEPORT, so a port that another gRPC server holds (grpc sets SO_REUSEPORT, and would
    share it silently) counts as taken too.
    """
    sock = socket.socket(_family(host), socket.SOCK_STREAM, socket.IPPROTO_TCP)
    # Connections left by a server that just stopped (TIME_WAIT) do not make a port taken.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise StartupError(f"{option} {port}: {host}:{port} is already in use "
                               f"(another ./dev serve?); pick another with {option}") from exc
        raise StartupError(f"--host {host}: cannot listen on {host}:{port}: "
                           f"{exc.strerror or exc}") from exc
    if not probe:
        # Listening from here on: a request sent as soon as the banner shows waits in the
        # backlog until uvicorn accepts it.
        sock.listen(socket.SOMAXCONN)
        sock.set_inheritable(True)
    return sock


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="JSON-RPC port (0: any free)")
    parser.add_argument("--grpc-port", type=int, default=50051, help="gRPC port (0: any free)")
    args = parser.parse_args()
    for option, port in (("--port", args.port), ("--grpc-port", args.grpc_port)):
        if not 0 <= port <= 65535:  # socket.bind would raise OverflowError
            raise StartupError(f"{option} {port}: a port is a number in 0-65535 (0: any free)")
    try:
        import grpc_service.server as grpc_server
    except ImportError:  # the grpc extra is not installed: serve JSON-RPC alone
        grpc_server = None  # type: ignore[assignment]
    web_socket = _bind(args.host, args.port, "--port")
    port = web_socket.getsockname()[1]
    if grpc_server is not None and args.grpc_port:
        _bind(args.host, args.grpc_port, "--grpc-port", probe=True).close()
    os.environ.setdefault(ENV.ALLOW_ANONYMOUS, "true")
    os.environ.setdefault(ENV.PLAYGROUND, "true")
    os.environ.setdefault(ENV.PUBLIC_URL, f"http://{args.host}:{port}/")
    if grpc_server is not None and args.grpc_port:
        os.environ.setdefault(ENV.GRPC_ADDRESS, f"{args.host}:{args.grpc_port}")
    settings = Settings.from_env()
    logs.configure(settings.log_level, settings.service("local"))
    operations = build_operations(settings)
    operations.authenticator.warn_if_nobody_can_call()
    # The same lease sweep the scheduled Lambda runs on AWS (a2akit.execution.leases).
    sweeper = asyncio.ensure_future(sweep_periodically(operations.store, settings.sweep_seconds))
    config = uvicorn.Config(create_app(operations), host=args.host, port=port,
                            log_level="warning", lifespan="off",
                            log_config=None)  # its lines as JSON too (a2akit.logs)
    web = uvicorn.Server(config)
    grpc = None
    lines = []
    if grpc_server is not None:
        grpc = await grpc_server.serve(settings, operations=operations,
                                       port=args.grpc_port, host=args.host)
        bound = grpc.port
        lines.append(f"gRPC      {args.host}:{bound}  (lf.a2a.v1.A2AService, a2a-version: 1.0)")
    lines += [
        f"JSON-RPC  {settings.public_url}",
        f"HTTP+JSON {rest_url(settings)}  (POST message:send, GET tasks/{{id}}: docs/rest.md)",
        f"Card      {settings.public_url.rstrip('/')}/.well-known/agent-card.json",
        *([f"Browser   {settings.public_url.rstrip('/')}/playground  (docs/playground.md)"]
          if settings.playground else []),
        f"Agent     {settings.agent}" + (f"  (project {settings.agent_project.root})"
                                             if settings.agent_project else ""),
        f"Store     {_store(settings)}",
        "Try:",
        "  " + _curl(settings.public_url),
        "  " + _rest_curl(rest_url(settings)),
    ]
    if grpc is not None:
        lines.append("  " + _grpc_call(args.host, bound))
    print("\n".join(lines), flush=True)
    try:
        await web.serve(sockets=[web_socket])
    finally:
        sweeper.cancel()
        if grpc is not None:
            await grpc.shutdown(5)
        await operations.close()  # pending push deliveries get a few seconds


if __name__ == "__main__":
    with explain_startup_errors(), contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())
