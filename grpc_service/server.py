"""The gRPC binding as a grpc.aio server (spec section 10), over the shared core.

Each rpc of `OPERATIONS` is registered with `grpc.method_handlers_generic_handler`: one
unary and one streaming behaviour (`grpc_service.binding`: decoding, caller, errors), bound
to the operation's entry. The same server serves A2A 0.3 callers on the 0.3 service
(`a2a.v1.A2AService`, grpc_service.compat03): same port, auth, limits, health and reflection.

A client that goes away cancels only this handler: the core runs agents in their own asyncio
task, so the work continues and stays readable through GetTask and SubscribeToTask.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import signal
from collections.abc import Iterable

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1.health import aio as health_aio
from grpc_reflection.v1alpha import reflection

from a2akit import logs
from a2akit.execution import drain, live_runs
from a2akit.execution.leases import sweep_periodically
from a2akit.generated import a2a_pb2 as pb
from a2akit.operations import OPERATIONS, Operations, Unary
from a2akit.runtime import StartupError, build_operations, explain_startup_errors
from a2akit.settings import Settings
from grpc_service.binding import Binding

__all__ = ["SERVICE_NAME", "RunningServer", "main", "serve"]

log = logging.getLogger("a2akit.grpc")

SERVICE_NAME: str = pb.DESCRIPTOR.services_by_name["A2AService"].full_name

SHUTDOWN_TEXT = ("The server shut down before the agent finished (it was stopped after the "
                 "shutdown grace period)")

# Keepalive below the AWS ALB idle timeout (60 s): a server ping every 30 s keeps quiet streams
# (SubscribeToTask on an idle task) open; clients may ping too, as often as every 10 s
# (min_ping_interval_without_data_ms is the server's receive-side ping policy).
KEEPALIVE_OPTIONS: tuple[tuple[str, int], ...] = (
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
    ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
)


def _method_handlers(operations: Operations) -> dict[str, grpc.RpcMethodHandler]:
    binding = Binding(operations)
    handlers: dict[str, grpc.RpcMethodHandler] = {}
    for name, operation in OPERATIONS.items():
        serialize = operation.response.SerializeToString
        if isinstance(operation, Unary):
            handlers[name] = grpc.unary_unary_rpc_method_handler(
                binding.unary(name, operation.request, functools.partial(operations.unary,
                                                                         operation)),
                response_serializer=serialize)
        else:
            handlers[name] = grpc.unary_stream_rpc_method_handler(
                binding.streaming(name, operation.request,
                                  functools.partial(operations.stream, operation)),
                response_serializer=serialize)
    return handlers


# --- server assembly ----------------------------------------------------------------------------


def server_options(settings: Settings) -> list[tuple[str, int]]:
    return [
        # The request limit matches the JSON-RPC body limit; responses (a ListTasks page
        # with artifacts) are not limited, as on JSON-RPC: gRPC's default send is unbounded.
        ("grpc.max_receive_message_length", settings.max_request_bytes),
        # gRPC sets SO_REUSEPORT by default, so a second server on a used port would
        # silently share it with the first: binding a used port must fail instead.
        ("grpc.so_reuseport", 0),
        *KEEPALIVE_OPTIONS,
    ]


def _configure_services(server: grpc.aio.Server, operations: Operations) -> tuple[str, ...]:
    """Both A2A services; returns their names. The 0.3 one loads here, in the container:
    the JSON-RPC door never imports this module."""
    from grpc_service import compat03

    server.add_generic_rpc_handlers((
        grpc.method_handlers_generic_handler(SERVICE_NAME, _method_handlers(operations)),
        grpc.method_handlers_generic_handler(compat03.SERVICE_NAME,
                                             compat03.method_handlers(operations)),
    ))
    return SERVICE_NAME, compat03.SERVICE_NAME


async def _configure_health(server: grpc.aio.Server,
                            services: Iterable[str]) -> health_aio.HealthServicer:
    health = health_aio.HealthServicer()
    for service in ("", *services):
        await health.set(service, health_pb2.HealthCheckResponse.SERVING)
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    return health


def _configure_reflection(server: grpc.aio.Server, services: Iterable[str]) -> None:
    names: Iterable[str] = (
        *services,
        health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
        reflection.SERVICE_NAME,
    )
    reflection.enable_server_reflection(names, server)


def _configure_port(server: grpc.aio.Server, host: str, port: int) -> int:
    try:
        bound: int = server.add_insecure_port(f"{host}:{port}")
    except RuntimeError:
        bound = 0
    if bound == 0:
        raise StartupError(f"cannot bind gRPC port {host}:{port} (is it already in use?)")
    return bound


@dataclasses.dataclass(frozen=True)
class RunningServer:
    """A started server, the port it bound and its health servicer."""

    server: grpc.aio.Server
    port: int
    health: health_aio.HealthServicer

    async def shutdown(self, grace: float) -> None:
        """Report NOT_SERVING to health checks (the load balancer drains), then let
        in-flight calls finish within `grace` seconds."""
        await self.health.enter_graceful_shutdown()
        await self.server.stop(grace)


async def serve(settings: Settings, operations: Operations | None = None,
                port: int | None = None, host: str = "[::]") -> RunningServer:
    """Build and start the server (pass port=0 for any free port).

    Raises StartupError when the port cannot be bound."""
    ops = operations if operations is not None else build_operations(settings)
    server = grpc.aio.server(options=server_options(settings))
    services = _configure_services(server, ops)
    health = await _configure_health(server, services)
    _configure_reflection(server, services)
    bound = _configure_port(server, host, settings.grpc_port if port is None else port)
    await server.start()
    return RunningServer(server, bound, health)


async def _run(settings: Settings) -> None:
    operations = build_operations(settings)
    operations.authenticator.warn_if_nobody_can_call()
    running = await serve(settings, operations, host="[::]")
    log.info("A2A gRPC server listening on port %d", running.port)
    # Tasks whose runner died (another container, a worker) end FAILED here too.
    sweeper = asyncio.ensure_future(
        sweep_periodically(operations.store, settings.sweep_seconds))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    wait_stop = asyncio.ensure_future(stop.wait())
    wait_end = asyncio.ensure_future(running.server.wait_for_termination())
    await asyncio.wait({wait_stop, wait_end}, return_when=asyncio.FIRST_COMPLETED)
    grace = settings.shutdown_grace_seconds
    log.info("shutting down (grace %.1f s, %d running agent(s))", grace, live_runs())
    sweeper.cancel()
    # No new calls (health NOT_SERVING, the server refuses them) while running agents get
    # the grace period; what still runs then ends FAILED, so no task stays WORKING.
    _, stopped = await asyncio.gather(running.shutdown(grace), drain(grace, SHUTDOWN_TEXT))
    if stopped:
        log.warning("%d task(s) ended FAILED at shutdown", stopped)
    await operations.close()  # pending in-process push deliveries get a few seconds
    for pending in (wait_stop, wait_end):
        pending.cancel()


def main() -> None:
    with explain_startup_errors():
        settings = Settings.from_env()
        logs.configure(settings.log_level, settings.service("grpc"))
        asyncio.run(_run(settings))
