"""The gRPC binding as a grpc.aio server (spec section 10), over the shared core.

The servicer is built from `OPERATIONS`: one generic unary handler and one generic streaming
handler, bound per rpc name. Checks run in the reference order: version -> caller ->
operation. A2A errors abort with the catalogue's gRPC code and the google.rpc.Status (ErrorInfo
first) in `grpc-status-details-bin`; anything unexpected is INTERNAL with no details.

A client that goes away cancels only this handler: the core runs agents in their own asyncio
task, so the work continues and stays readable through GetTask and SubscribeToTask.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1.health import aio as health_aio
from grpc_reflection.v1alpha import reflection
from grpc_status import rpc_status

from a2akit.auth import resolve_owner
from a2akit.errors import A2AError, InternalError
from a2akit.generated import a2a_pb2 as pb
from a2akit.operations import OPERATIONS, Call, Operation, Operations
from a2akit.runtime import build_operations
from a2akit.service_params import check_version, parse_extensions
from a2akit.settings import Settings
from grpc_service.generated import a2a_pb2_grpc

__all__ = ["SERVICE_NAME", "build_servicer", "main", "serve"]

log = logging.getLogger("a2akit.grpc")

SERVICE_NAME: str = pb.DESCRIPTOR.services_by_name["A2AService"].full_name
GRACE_ENV = "A2A_GRPC_SHUTDOWN_GRACE_SECONDS"
DEFAULT_GRACE_SECONDS = 20.0

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

# Protobuf messages; typed loosely so the binding does not need protobuf stubs.
Message = Any

_Unary = Callable[[Any, Message, grpc.aio.ServicerContext], Awaitable[Message]]
_Streaming = Callable[[Any, Message, grpc.aio.ServicerContext], AsyncIterator[pb.StreamResponse]]


def _metadata(context: grpc.aio.ServicerContext, key: str) -> list[str]:
    values = []
    for item in context.invocation_metadata() or ():
        name, value = item[0], item[1]
        if name.lower() == key and isinstance(value, str):
            values.append(value)
    return values


async def _abort(context: grpc.aio.ServicerContext, error: A2AError) -> None:
    """End the call with the error's code, message and Status details (raises AbortError)."""
    await context.abort_with_status(rpc_status.to_status(error.to_status()))


class _Binding:
    """What every rpc shares: the core, the settings and the call resolution."""

    def __init__(self, operations: Operations) -> None:
        self.ops = operations
        self.settings = operations.settings
        self.supported_extensions = {e.uri for e in operations.card.capabilities.extensions}

    async def call(self, context: grpc.aio.ServicerContext) -> Call:
        """Version, then caller: the same checks and errors as the JSON-RPC binding."""
        versions = _metadata(context, "a2a-version")
        check_version(versions[0] if versions else None)
        authorization = _metadata(context, "authorization")
        owner = resolve_owner(self.settings, authorization[0] if authorization else None)
        extensions = parse_extensions(_metadata(context, "a2a-extensions"))
        active = [uri for uri in extensions if uri in self.supported_extensions]
        if active:
            await context.send_initial_metadata((("a2a-extensions", ",".join(active)),))
        return Call(owner=owner, extensions=extensions)


def _unary_handler(operation: Operation) -> _Unary:
    async def handler(self: Any, request: Message,
                      context: grpc.aio.ServicerContext) -> Message:
        binding: _Binding = self._binding
        try:
            call = await binding.call(context)
            return await binding.ops.unary(operation.name, request, call)
        except A2AError as error:
            await _abort(context, error)
        except (asyncio.CancelledError, grpc.aio.AbortError):
            raise
        except Exception:
            log.exception("unexpected failure in gRPC %s", operation.name)
            await _abort(context, InternalError())
        raise AssertionError("unreachable: abort raises")  # pragma: no cover

    handler.__name__ = handler.__qualname__ = operation.name
    return handler


def _streaming_handler(operation: Operation) -> _Streaming:
    async def handler(self: Any, request: Message,
                      context: grpc.aio.ServicerContext) -> AsyncIterator[pb.StreamResponse]:
        binding: _Binding = self._binding
        events: AsyncIterator[pb.StreamResponse] | None = None
        try:
            call = await binding.call(context)
            events = await binding.ops.stream(operation.name, request, call)
            async for event in events:
                yield event
        except A2AError as error:
            await _abort(context, error)
        except (asyncio.CancelledError, grpc.aio.AbortError):
            raise
        except Exception:
            log.exception("unexpected failure in gRPC stream %s", operation.name)
            await _abort(context, InternalError())
        finally:
            # Closes only this reader; the agent's task is not ours to cancel.
            if events is not None:
                await events.aclose()  # type: ignore[attr-defined]

    handler.__name__ = handler.__qualname__ = operation.name
    return handler


def _servicer_class() -> type[a2a_pb2_grpc.A2AServiceServicer]:
    methods: dict[str, Any] = {
        name: _streaming_handler(op) if op.streaming else _unary_handler(op)
        for name, op in OPERATIONS.items()
    }

    def __init__(self: Any, operations: Operations) -> None:
        self._binding = _Binding(operations)

    methods["__init__"] = __init__
    methods["__doc__"] = "A2AService over the shared Operations, built from OPERATIONS."
    return type("A2AServicer", (a2a_pb2_grpc.A2AServiceServicer,), methods)


A2AServicer = _servicer_class()


def build_servicer(operations: Operations) -> a2a_pb2_grpc.A2AServiceServicer:
    servicer: a2a_pb2_grpc.A2AServiceServicer = A2AServicer(operations)  # type: ignore[call-arg]
    return servicer


# --- server assembly ----------------------------------------------------------------------------


def _server_options(settings: Settings) -> list[tuple[str, int]]:
    return [
        # The request limit matches the JSON-RPC body limit; responses (a ListTasks page
        # with artifacts) are not limited, as on JSON-RPC: gRPC's default send is unbounded.
        ("grpc.max_receive_message_length", settings.max_request_bytes),
        *KEEPALIVE_OPTIONS,
    ]


def _configure_servicer(server: grpc.aio.Server, operations: Operations) -> None:
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(  # type: ignore[no-untyped-call]
        build_servicer(operations), server)


async def _configure_health(server: grpc.aio.Server) -> Any:
    health = health_aio.HealthServicer()
    for service in ("", SERVICE_NAME):
        await health.set(service, health_pb2.HealthCheckResponse.SERVING)
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    return health


def _configure_reflection(server: grpc.aio.Server) -> None:
    names = (
        SERVICE_NAME,
        health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
        reflection.SERVICE_NAME,
    )
    reflection.enable_server_reflection(names, server)


def _configure_port(server: grpc.aio.Server, host: str, port: int) -> int:
    bound: int = server.add_insecure_port(f"{host}:{port}")
    if bound == 0:
        raise RuntimeError(f"cannot bind gRPC port {host}:{port}")
    return bound


async def serve(settings: Settings, operations: Operations | None = None,
                port: int | None = None, host: str = "[::]") -> tuple[grpc.aio.Server, int]:
    """Build and start the server; returns it and the bound port (pass port=0 for any free).

    The health servicer is kept on the server as `server.a2a_health` for graceful shutdown."""
    ops = operations if operations is not None else build_operations(settings)
    server = grpc.aio.server(options=_server_options(settings))
    _configure_servicer(server, ops)
    health = await _configure_health(server)
    _configure_reflection(server)
    bound = _configure_port(server, host, settings.grpc_port if port is None else port)
    server.a2a_health = health
    await server.start()
    return server, bound


async def shutdown(server: grpc.aio.Server, grace: float) -> None:
    """Report NOT_SERVING to health checks, then let in-flight calls finish within `grace`."""
    health = getattr(server, "a2a_health", None)
    if health is not None:
        await health.enter_graceful_shutdown()
    await server.stop(grace)


def _grace(environ: Mapping[str, str]) -> float:
    raw = environ.get(GRACE_ENV)
    return float(raw) if raw else DEFAULT_GRACE_SECONDS


async def _run(settings: Settings, grace: float) -> None:
    server, port = await serve(settings, host="[::]")
    log.info("A2A gRPC server listening on port %d", port)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    wait_stop = asyncio.ensure_future(stop.wait())
    wait_end = asyncio.ensure_future(server.wait_for_termination())
    await asyncio.wait({wait_stop, wait_end}, return_when=asyncio.FIRST_COMPLETED)
    log.info("shutting down (grace %.1f s)", grace)
    await shutdown(server, grace)
    for pending in (wait_stop, wait_end):
        pending.cancel()


def main() -> None:
    logging.basicConfig(level=os.environ.get("LOG_LEVEL", "INFO"),
                        format="%(asctime)s %(levelname)s %(name)s %(message)s")
    from a2akit.runtime import explain_startup_errors

    with explain_startup_errors():
        asyncio.run(_run(Settings.from_env(), _grace(os.environ)))
