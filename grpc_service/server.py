"""The gRPC binding as a grpc.aio server (spec section 10), over the shared core.

Each rpc of `OPERATIONS` is registered with `grpc.method_handlers_generic_handler`: one
unary and one streaming behaviour, bound to the operation's entry. Requests arrive as raw
bytes and are decoded here, so a malformed message is INVALID_ARGUMENT with the same
ErrorInfo reason JSON-RPC uses for a parse error, not grpc's UNKNOWN. Checks run in the
reference order: decode -> version -> caller -> operation. A2A errors abort with the
catalogue's gRPC code and the google.rpc.Status (ErrorInfo first) in
`grpc-status-details-bin`; anything unexpected is INTERNAL with no details.

A client that goes away cancels only this handler: the core runs agents in their own asyncio
task, so the work continues and stays readable through GetTask and SubscribeToTask.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import signal
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any, TypeAlias

import grpc
from google.protobuf.message import DecodeError
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1.health import aio as health_aio
from grpc_reflection.v1alpha import reflection
from grpc_status import rpc_status

from a2akit import logs, trace
from a2akit.caller import Call
from a2akit.errors import A2AError, InternalError, JSONParseError
from a2akit.execution import drain, live_runs
from a2akit.execution.leases import sweep_periodically
from a2akit.generated import a2a_pb2 as pb
from a2akit.operations import OPERATIONS, Operation, Operations, Streaming, Unary
from a2akit.runtime import StartupError, build_operations, explain_startup_errors
from a2akit.settings import Settings
from a2akit.validation import check_enum_values

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

Message = Any  # protobuf messages; the binding needs no protobuf stubs
Context: TypeAlias = grpc.aio.ServicerContext


class _Metadata:
    """gRPC metadata as the core's `Headers`: values by lower-case key."""

    def __init__(self, context: Context) -> None:
        self._items = context.invocation_metadata() or ()

    def getlist(self, key: str) -> list[str]:
        return [value for name, value in self._items
                if name.lower() == key and isinstance(value, str)]


async def _abort(context: Context, error: A2AError) -> None:
    """End the call with the error's code, message and Status details (raises AbortError)."""
    await context.abort_with_status(rpc_status.to_status(error.to_status()))


class _Binding:
    """What every rpc shares: the core, request decoding and caller resolution."""

    def __init__(self, operations: Operations) -> None:
        self.ops = operations

    def decode(self, operation: Operation, raw: bytes) -> Message:
        try:
            request = operation.request.FromString(raw)
        except DecodeError as exc:
            raise JSONParseError(
                f"The request is not a valid {operation.request.DESCRIPTOR.name} message"
            ) from exc
        check_enum_values(request)
        return request

    async def call(self, context: Context, operation: str) -> Call:
        """Version, then caller: the same checks and errors as the JSON-RPC binding. First the
        request's logging context: the operation and the caller's `traceparent` metadata."""
        metadata = _Metadata(context)
        traceparent = metadata.getlist(trace.HEADER)
        trace.begin_request(operation, None, traceparent[0] if traceparent else None)
        call = await self.ops.resolve_call(metadata)
        if call.active_extensions:
            await context.send_initial_metadata(
                (("a2a-extensions", ",".join(call.active_extensions)),))
        return call


# What a call's body may raise and still end the call itself: cancellation, and the abort
# that ends it with a status.
_PASSED_THROUGH = (asyncio.CancelledError, grpc.aio.AbortError)


async def _answer(context: Context, name: str, exc: Exception) -> None:
    """End the call for what its body raised: an A2AError as itself, anything unexpected as
    INTERNAL with no details (logged here). Raises AbortError."""
    if isinstance(exc, A2AError):
        await _abort(context, exc)
    log.error("unexpected failure in gRPC %s", name, exc_info=exc)
    await _abort(context, InternalError())


@contextlib.asynccontextmanager
async def _errors_answered(context: Context, name: str) -> AsyncIterator[None]:
    """`_answer` around a block (the streaming calls)."""
    try:
        yield
    except _PASSED_THROUGH:
        raise
    except Exception as exc:
        await _answer(context, name, exc)


def _unary(binding: _Binding, operation: Unary[Any, Any]
           ) -> Callable[[bytes, Context], Awaitable[Message]]:
    async def behaviour(raw: bytes, context: Context) -> Message:
        # `_answer` without the context manager: a unary call is the hot path, and the
        # manager's generator per call costs more than the call's own checks.
        try:
            request = binding.decode(operation, raw)
            call = await binding.call(context, operation.name)
            return await binding.ops.unary(operation, request, call)
        except _PASSED_THROUGH:
            raise
        except Exception as exc:
            await _answer(context, operation.name, exc)
        raise AssertionError("unreachable: abort raises")  # pragma: no cover

    return behaviour


def _streaming(binding: _Binding, operation: Streaming[Any]
               ) -> Callable[[bytes, Context], AsyncIterator[pb.StreamResponse]]:
    async def behaviour(raw: bytes, context: Context) -> AsyncIterator[pb.StreamResponse]:
        events: AsyncIterator[pb.StreamResponse] | None = None
        try:
            async with _errors_answered(context, operation.name):
                request = binding.decode(operation, raw)
                call = await binding.call(context, operation.name)
                events = await binding.ops.stream(operation, request, call)
                async for event in events:
                    yield event
        finally:
            # Closes only this reader; the agent's task is not ours to cancel.
            if events is not None:
                await events.aclose()  # type: ignore[attr-defined]

    return behaviour


def _method_handlers(operations: Operations) -> dict[str, grpc.RpcMethodHandler]:
    binding = _Binding(operations)
    handlers: dict[str, grpc.RpcMethodHandler] = {}
    for name, operation in OPERATIONS.items():
        serialize = operation.response.SerializeToString
        if isinstance(operation, Unary):
            handlers[name] = grpc.unary_unary_rpc_method_handler(
                _unary(binding, operation), response_serializer=serialize)
        else:
            handlers[name] = grpc.unary_stream_rpc_method_handler(
                _streaming(binding, operation), response_serializer=serialize)
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


def _configure_service(server: grpc.aio.Server, operations: Operations) -> None:
    server.add_generic_rpc_handlers((
        grpc.method_handlers_generic_handler(SERVICE_NAME, _method_handlers(operations)),
    ))


async def _configure_health(server: grpc.aio.Server) -> health_aio.HealthServicer:
    health = health_aio.HealthServicer()
    for service in ("", SERVICE_NAME):
        await health.set(service, health_pb2.HealthCheckResponse.SERVING)
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    return health


def _configure_reflection(server: grpc.aio.Server) -> None:
    names: Iterable[str] = (
        SERVICE_NAME,
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
    _configure_service(server, ops)
    health = await _configure_health(server)
    _configure_reflection(server)
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
        logs.configure(settings.log_level, "grpc")
        asyncio.run(_run(settings))
