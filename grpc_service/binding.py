"""What the gRPC services of the server share (lf.a2a.v1 and the 0.3 a2a.v1): request
decoding, caller resolution, error answers, and the unary and streaming behaviours built
from them.

Requests arrive as raw bytes and are decoded here, so a malformed message is
INVALID_ARGUMENT with the same ErrorInfo reason JSON-RPC uses for a parse error, not grpc's
UNKNOWN. Checks run in the reference order: decode -> version -> caller -> operation. A2A
errors abort with the catalogue's gRPC code and the google.rpc.Status (ErrorInfo first) in
`grpc-status-details-bin`, as the service's `render` writes it; anything unexpected is
INTERNAL with no details.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeAlias

import grpc
from google.protobuf.message import DecodeError
from google.rpc import status_pb2
from grpc_status import rpc_status

from a2akit import telemetry, trace
from a2akit.caller import Call
from a2akit.errors import A2AError, InternalError, JSONParseError
from a2akit.operations import Operations
from a2akit.service_params import SUPPORTED_VERSION
from a2akit.validation import check_enum_values

__all__ = ["Binding", "Context", "Message", "Render"]

log = logging.getLogger("a2akit.grpc")

Message = Any  # protobuf messages; the binding needs no protobuf stubs
Context: TypeAlias = grpc.aio.ServicerContext
Render = Callable[[A2AError], status_pb2.Status]  # an error as the service's callers read it
Unary = Callable[[bytes, Context], Awaitable[Message]]
Streaming = Callable[[bytes, Context], AsyncIterator[Message]]

# What a call's body may raise and still end the call itself: cancellation, and the abort
# that ends it with a status.
_PASSED_THROUGH = (asyncio.CancelledError, grpc.aio.AbortError)


class _Metadata:
    """gRPC metadata as the core's `Headers`: values by lower-case key."""

    def __init__(self, context: Context) -> None:
        # One pass over the metadata: a call looks up several keys (version, credentials,
        # extensions, traceparent), and gRPC already sends the names in lower case.
        values: dict[str, list[str]] = {}
        for name, value in context.invocation_metadata() or ():
            if isinstance(value, str):
                values.setdefault(name.lower(), []).append(value)
        self._values = values

    def getlist(self, key: str) -> list[str]:
        return self._values.get(key, [])


def _render_10(error: A2AError) -> status_pb2.Status:
    return error.to_status()


class Binding:
    """One service's view of the core: its protocol generation (which version rule its
    callers pass, `Operations.resolve_call`) and how its errors read (`render`)."""

    def __init__(self, operations: Operations, *, protocol_version: str = SUPPORTED_VERSION,
                 render: Render = _render_10) -> None:
        self.ops = operations
        self.protocol_version = protocol_version
        self.render = render

    def decode(self, request_type: type[Message], raw: bytes) -> Message:
        try:
            request = request_type.FromString(raw)
        except DecodeError as exc:
            raise JSONParseError(
                f"The request is not a valid {request_type.DESCRIPTOR.name} message"
            ) from exc
        check_enum_values(request)
        return request

    def begin(self, context: Context, operation: str) -> str | None:
        """The request's logging context: the operation and the caller's `traceparent`
        metadata, which it returns."""
        traceparent = _Metadata(context).getlist(trace.HEADER)
        parent = traceparent[0] if traceparent else None
        trace.begin_request(operation, None, parent)
        return parent

    async def call(self, context: Context) -> Call:
        """Version, then caller: the same checks and errors as the JSON-RPC binding."""
        metadata = _Metadata(context)
        call = await self.ops.resolve_call(metadata, protocol_version=self.protocol_version)
        if call.active_extensions:
            await context.send_initial_metadata(
                (("a2a-extensions", ",".join(call.active_extensions)),))
        return call

    async def answer(self, context: Context, name: str, exc: Exception) -> None:
        """End the call for what its body raised: an A2AError as itself, anything unexpected
        as INTERNAL with no details (logged here). Raises AbortError."""
        if not isinstance(exc, A2AError):
            log.error("unexpected failure in gRPC %s", name, exc_info=exc)
            exc = InternalError()
        await context.abort_with_status(rpc_status.to_status(self.render(exc)))

    def unary(self, name: str, request_type: type[Message],
              run: Callable[[Message, Call], Awaitable[Message]]) -> Unary:
        """The behaviour of a unary rpc: decode, resolve the caller, `run`."""

        async def behaviour(raw: bytes, context: Context) -> Message:
            # `answer` without a context manager: a unary call is the hot path, and the
            # manager's generator per call costs more than the call's own checks.
            try:
                request = self.decode(request_type, raw)
                parent = self.begin(context, name)
                with telemetry.NOTHING if telemetry.off else telemetry.server_span(
                        name, "gRPC", self.protocol_version, parent):
                    call = await self.call(context)
                    return await run(request, call)
            except _PASSED_THROUGH:
                raise
            except Exception as exc:
                await self.answer(context, name, exc)
            raise AssertionError("unreachable: abort raises")  # pragma: no cover

        return behaviour

    def streaming(self, name: str, request_type: type[Message],
                  start: Callable[[Message, Call], Awaitable[AsyncIterator[Message]]]
                  ) -> Streaming:
        """The behaviour of a streaming rpc: decode, resolve the caller, `start` (which
        raises what it finds before the first event), then its events."""

        async def behaviour(raw: bytes, context: Context) -> AsyncIterator[Message]:
            events: AsyncIterator[Message] | None = None
            try:
                async with self._errors_answered(context, name):
                    request = self.decode(request_type, raw)
                    parent = self.begin(context, name)
                    with telemetry.NOTHING if telemetry.off else telemetry.server_span(
                            name, "gRPC", self.protocol_version, parent):
                        call = await self.call(context)
                        events = await start(request, call)
                    async for event in events:
                        yield event
            finally:
                # Closes only this reader; the agent's task is not ours to cancel.
                if events is not None:
                    await events.aclose()  # type: ignore[attr-defined]

        return behaviour

    @contextlib.asynccontextmanager
    async def _errors_answered(self, context: Context, name: str) -> AsyncIterator[None]:
        try:
            yield
        except _PASSED_THROUGH:
            raise
        except Exception as exc:
            await self.answer(context, name, exc)
