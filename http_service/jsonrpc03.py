"""The A2A 0.3 JSON-RPC generation on the 1.0 POST route (facts 1.2, 2; brief of issue 28).

`http_service.jsonrpc` reads the envelope (Content-Type, size, JSON, batch, id, `jsonrpc`,
method) for both generations, then hands a method that is not a 1.0 name but has a "/" here,
importing this module on the first such request. From here on everything is 0.3:

    method (one of the ten 0.3 names of `a2akit.compat03.table`, else -32601) -> params
    (a2akit.compat03.json03: 0.3 JSON -> 0.3 message, -32602 naming the field) -> caller (the
    version checked against 0.3: no A2A-Version, empty or 0.3) -> Calls03 (the same
    operations as 1.0) -> 0.3 JSON

Errors keep the catalogue's code (-32008 and -32009 too: they lie in the range 0.3 leaves to
servers); `data` is an object, `{"reason": ..., **metadata}` plus `errors` for the fields at
fault, never 1.0's array. Missing or bad credentials stay HTTP-level (401 with
WWW-Authenticate, 403), as on 1.0. Streams are SSE with no event names: each event, and an
error (after the first event or before it), is one compact `data:` line, HTTP 200.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Mapping
from typing import Any

from starlette.responses import Response

from a2akit.caller import Call
from a2akit.compat03 import json03
from a2akit.compat03.calls import Calls03
from a2akit.compat03.errors import jsonrpc_error
from a2akit.compat03.table import BY_METHOD, Operation03
from a2akit.errors import A2AError
from a2akit.operations import Operations
from a2akit.service_params import LEGACY_VERSION
from http_service.jsonrpc import Exchange
from http_service.pipeline import stream_response

__all__ = ["Generation03"]

if BY_METHOD.keys() != json03.METHODS:
    raise RuntimeError("the 0.3 JSON-RPC decoders differ from the 0.3 operations: "
                       f"{sorted(json03.METHODS ^ BY_METHOD.keys())}")

# What the JSON-RPC names ask beyond the message: "authenticated extended" card is 1.0's
# GetExtendedAgentCard (its checks and errors, -32007 when none is configured).
_OPTIONS: Mapping[str, dict[str, Any]] = {
    "agent/getAuthenticatedExtendedCard": {"public_fallback": False},
}


async def _failed(error: A2AError) -> AsyncIterator[Any]:
    """A stream that fails at once: an error found before the first event is an SSE event."""
    raise error
    yield  # pragma: no cover  (makes this an async generator)


class Generation03:
    """`http_service.jsonrpc.Generation` for the 0.3 names."""

    protocol_version = LEGACY_VERSION
    extensions_header = "X-A2A-Extensions"  # 0.3's response header name (facts 1.1)
    error_event = b""  # 0.3 has no `event: error` (facts 2.7)

    def __init__(self, operations: Operations) -> None:
        self.calls = Calls03(operations)
        self.keepalive = operations.settings.sse_keepalive_seconds

    def find(self, method: str) -> Operation03 | None:
        return BY_METHOD.get(method)

    def decode(self, operation: Operation03, params: Any) -> Any:
        request, options = json03.decode_params(operation.method, params)
        return request, {**options, **_OPTIONS.get(operation.method, {})}

    def call(self, operation: Operation03, request: Any, call: Call) -> Awaitable[Any]:
        message, options = request
        answer: Awaitable[Any] = operation.run(self.calls, message, call, **options)
        return answer

    def result(self, answer: Any) -> Any:
        return json03.encode(answer)

    async def open(self, operation: Operation03, request: Any, call: Call
                   ) -> AsyncIterator[Any]:
        message, options = request
        events: AsyncIterator[Any] = await operation.run(self.calls, message, call, **options)
        return events

    def event(self, event: Any) -> Any:
        return json03.encode(event)

    def error(self, error: A2AError) -> dict[str, Any]:
        """A 0.3 error (a2akit.compat03.errors), its `data` naming the fields at fault as
        REF's 0.3 validation errors do: `errors: [{field, message}]`."""
        body = jsonrpc_error(error)
        if error.violations:
            body["data"]["errors"] = [{"field": field, "message": problem}
                                      for field, problem in error.violations]
        return body

    def failure(self, exchange: Exchange, error: A2AError) -> Response | None:
        if exchange.streaming and error.http_status == 200:
            # A streaming method's A2A error, even before the first event, is an SSE event.
            return stream_response(_failed(error), exchange.framing(), self.keepalive, {})
        return None
