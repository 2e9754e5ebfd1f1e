"""Where every HTTP request becomes a core call, the same way for the three JSON bindings:

    exchange.route  (the binding: Content-Type, body size, JSON, envelope or route -> operation)
    -> the request's logging context -> exchange.decode (the request message)
    -> the caller (headers, `A2A-Version` query parameter, and from the entry point's
       `a2akit.invocation.Invocation` the identity API Gateway verified and the deadline)
    -> exchange.run / exchange.open (the core)
    -> the answer: the result, or SSE frames, or the binding's error (`error_response`)

An `Exchange` is one request as one binding reads and answers it (`http_service.jsonrpc`
for both JSON-RPC generations, `http_service.rest` for HTTP+JSON).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from a2akit import telemetry
from a2akit.auth import platform_principal
from a2akit.caller import Call
from a2akit.errors import A2AError, InternalError
from a2akit.invocation import NO_INVOCATION, SCOPE_KEY, Invocation
from a2akit.operations import Operations
from a2akit.trace import begin_request, from_asgi
from http_service.sse import SSE_HEADERS, Framing, sse_frames

__all__ = ["Exchange", "answer", "error_response", "extension_headers", "stream_response"]

log = logging.getLogger("a2akit.http")


class Exchange(Protocol):
    """One request, read and answered by one binding."""

    binding: str  # for the log line of an unexpected failure
    operation: str  # set by `route`: the name the request's logs carry
    protocol_version: str  # the generation the method chose ("0.3" for 0.3 names)
    streaming: bool  # set by `route`

    async def route(self, request: Request) -> None:
        """Read the request up to its operation; raises A2AError."""

    def decode(self) -> Any:
        """The operation's request; raises A2AError (invalid params)."""

    async def run(self, request: Any, call: Call) -> Response:
        """Run a unary operation and write its answer."""

    async def open(self, request: Any, call: Call) -> AsyncIterator[Any]:
        """Open a streaming operation; raises the errors found before its first event."""

    def framing(self) -> Framing[Any]:
        """How this binding writes one event and one error of a stream."""

    def extension_headers(self, call: Call) -> dict[str, str]:
        """The response header naming the extensions the call activated, if any."""

    def failure(self, error: A2AError) -> Response:
        """The binding's answer to an error."""


async def answer(ops: Operations, new_exchange: Callable[[], Exchange],
                 request: Request) -> Response:
    """The one path of every HTTP request to the core; `new_exchange()` is the binding's
    exchange for it. (Arguments in this order: a route's endpoint is
    `functools.partial(answer, ops, new_exchange)`, with no coroutine of its own.)"""
    exchange = new_exchange()
    try:
        await exchange.route(request)
        scope = request.scope
        invocation: Invocation = scope.get(SCOPE_KEY, NO_INVOCATION)
        traceparent = from_asgi(scope["headers"])
        begin_request(exchange.operation, invocation.request_id, traceparent)
        with telemetry.NOTHING if telemetry.off else telemetry.server_span(
                exchange.operation, exchange.binding, exchange.protocol_version, traceparent):
            message = exchange.decode()
            call = await ops.resolve_call(
                request.headers,
                verified_principal=platform_principal(invocation.request_context),
                # Parsed only when there is a query: most requests have none.
                version=(request.query_params.get("A2A-Version") if scope["query_string"]
                         else None),
                # On Lambda the invocation's end bounds blocking and streaming calls.
                deadline=invocation.deadline, protocol_version=exchange.protocol_version)
            if not exchange.streaming:
                return await exchange.run(message, call)
            events = await exchange.open(message, call)
            return stream_response(events, exchange.framing(),
                                   ops.settings.sse_keepalive_seconds,
                                   exchange.extension_headers(call))
    except A2AError as error:
        return exchange.failure(error)
    except Exception:
        log.exception("unexpected failure in %s request", exchange.binding)
        return exchange.failure(InternalError())


def stream_response(events: AsyncIterator[Any], framing: Framing[Any], keepalive: float,
                    headers: dict[str, str]) -> Response:
    """A stream of events as an SSE response (http_service.sse)."""
    return StreamingResponse(sse_frames(events, framing, keepalive),
                             headers={**headers, **SSE_HEADERS}, media_type="text/event-stream")


def error_response(error: A2AError, status: int, body: bytes, media_type: str, challenge: str,
                   headers: dict[str, str] | None = None) -> Response:
    """An error's HTTP response on any binding: Retry-After when the error has one,
    WWW-Authenticate (naming the configured schemes) on a 401."""
    headers = dict(headers or {})
    if error.retry_after_seconds is not None:
        headers["Retry-After"] = str(error.retry_after_seconds)
    if status == 401:
        headers["WWW-Authenticate"] = challenge
    return Response(body, status_code=status, media_type=media_type, headers=headers)


def extension_headers(name: str, call: Call) -> dict[str, str]:
    """The response header `name` listing the extensions the call activated, if any."""
    return {name: ",".join(call.active_extensions)} if call.active_extensions else {}
