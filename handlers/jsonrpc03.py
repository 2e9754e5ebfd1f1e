"""The A2A 0.3 JSON-RPC family on the 1.0 POST route (facts 1.2, 2; brief of issue 28).

handlers.jsonrpc_app checks the envelope (Content-Type, size, JSON, batch, id, `jsonrpc`,
method) for both families, then hands a request whose method is not a 1.0 name but has a "/"
here, importing this module on the first such request. From here on everything is 0.3:

    method (one of the ten 0.3 names, else -32601) -> params (a2akit.compat03.json03: 0.3
    JSON -> 0.3 message, -32602 naming the field) -> caller (the version checked against
    0.3: no A2A-Version, empty or 0.3) -> Calls03 (the same operations as 1.0) -> 0.3 JSON

Errors keep the catalogue's code (-32008 and -32009 too: they lie in the range 0.3 leaves to
servers); `data` is an object, `{"reason": ..., **metadata}` plus `errors` for the fields at
fault, never 1.0's array. Missing or bad credentials stay HTTP-level (401 with
WWW-Authenticate, 403), as on 1.0. Streams are SSE with no event names: each event, and an
error (after the first event or before it), is one compact `data:` line, HTTP 200.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from a2akit.caller import Call
from a2akit.compat03 import json03
from a2akit.compat03.calls import Calls03
from a2akit.compat03.card_json import card_json
from a2akit.compat03.errors import jsonrpc_error
from a2akit.errors import A2AError, InternalError, MethodNotFoundError
from a2akit.operations import Operations
from a2akit.protojson import dumps
from a2akit.service_params import LEGACY_VERSION
from handlers.http_call import begin_http_request, resolve_http_call
from handlers.jsonrpc_app import error_response
from handlers.sse import SSE_HEADERS, Framing, sse_frames

__all__ = ["JsonRpc03"]

log = logging.getLogger("a2akit.jsonrpc")

JSON = "application/json"
_Id = str | int | None
_STREAMING = frozenset({"message/stream", "tasks/resubscribe"})


def error_body(error: A2AError, request_id: _Id) -> dict[str, Any]:
    """A 0.3 JSON-RPC error response (a2akit.compat03.errors), its `data` naming the fields
    at fault as REF's 0.3 validation errors do: `errors: [{field, message}]`."""
    body = jsonrpc_error(error)
    if error.violations:
        body["data"]["errors"] = [{"field": field, "message": problem}
                                  for field, problem in error.violations]
    return {"jsonrpc": "2.0", "id": request_id, "error": body}


async def _failed(error: A2AError) -> AsyncIterator[Any]:
    """A stream that fails at once: an error found before the first event is an SSE event."""
    raise error
    yield  # pragma: no cover  (makes this an async generator)


class JsonRpc03:
    """Answers the 0.3 requests `handlers.jsonrpc_app` hands over."""

    def __init__(self, operations: Operations) -> None:
        self.ops = operations
        self.calls = Calls03(operations)
        self.challenge = operations.authenticator.challenge
        self.keepalive = operations.settings.sse_keepalive_seconds

    async def handle(self, request: Request, payload: dict[str, Any], request_id: _Id,
                     method: str) -> Response:
        streaming = method in _STREAMING
        try:
            if method not in json03.METHODS:
                raise MethodNotFoundError(f"Method not found: {method}",
                                          metadata={"method": method})
            begin_http_request(request, method)
            params = json03.decode_params(method, payload.get("params"))
            call = await resolve_http_call(self.ops, request, protocol_version=LEGACY_VERSION)
            headers = _extension_headers(call)
            if streaming:
                return self._stream(await self._open(method, params, call), request_id,
                                    headers)
            result = await self._unary(method, params, call)
            body = {"jsonrpc": "2.0", "id": request_id, "result": result}
            return Response(dumps(body), media_type=JSON, headers=headers)
        except A2AError as error:
            if streaming and error.http_status == 200:
                return self._stream(_failed(error), request_id, {})
            return self._error(error, request_id)
        except Exception:
            log.exception("unexpected failure in JSON-RPC 0.3 request")
            return self._error(InternalError(), request_id)

    async def _unary(self, method: str, params: Any, call: Call) -> Any:
        calls = self.calls
        if method == "message/send":
            request, references = params
            return json03.encode(await calls.send_message(
                request, call, reference_task_ids=references))
        if method == "tasks/get":
            return json03.encode(await calls.get_task(params, call))
        if method == "tasks/cancel":
            return json03.encode(await calls.cancel_task(params, call))
        if method == "tasks/pushNotificationConfig/set":
            return json03.encode(await calls.create_push_config(params, call))
        if method == "tasks/pushNotificationConfig/get":
            return json03.encode(await calls.get_push_config(params, call))
        if method == "tasks/pushNotificationConfig/list":
            return json03.encode(await calls.list_push_configs(params, call))
        if method == "tasks/pushNotificationConfig/delete":
            await calls.delete_push_config(params, call)
            return None  # written as "result": null (0.3 schema; REF omits it)
        # agent/getAuthenticatedExtendedCard: 1.0's GetExtendedAgentCard (its checks and
        # errors, -32007 when none is configured), answered in the 0.3 shape.
        return card_json(await calls.get_agent_card(call, public_fallback=False))

    async def _open(self, method: str, params: Any, call: Call) -> AsyncIterator[Any]:
        if method == "message/stream":
            request, references = params
            return await self.calls.send_streaming_message(request, call,
                                                           reference_task_ids=references)
        return await self.calls.task_subscription(params, call)

    def _stream(self, events: AsyncIterator[Any], request_id: _Id,
                headers: dict[str, str]) -> Response:
        framing: Framing[Any] = Framing(
            lambda event: dumps({"jsonrpc": "2.0", "id": request_id,
                                 "result": json03.encode(event)}),
            lambda error: dumps(error_body(error, request_id)),
            error_event=b"")  # 0.3 has no `event: error` (facts 2.7)
        return StreamingResponse(sse_frames(events, framing, self.keepalive),
                                 headers={**headers, **SSE_HEADERS},
                                 media_type="text/event-stream")

    def _error(self, error: A2AError, request_id: _Id) -> Response:
        return error_response(error, error_body(error, request_id), self.challenge)


def _extension_headers(call: Call) -> dict[str, str]:
    """The activated extensions, under 0.3's response header name (facts 1.1)."""
    if not call.active_extensions:
        return {}
    return {"X-A2A-Extensions": ",".join(call.active_extensions)}
