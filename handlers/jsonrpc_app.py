"""The JSON-RPC 2.0 binding as a Starlette app (spec section 9), over the shared core; the
same app serves the HTTP+JSON binding (handlers.rest_app) and the public agent card.

Checks run in the reference order, after the Content-Type (JSON only, else 415): JSON parse ->
envelope -> method -> params -> version -> caller -> operation. Errors answer with the
catalogue's code and its HTTP status: 200 for A2A errors, 401 (with WWW-Authenticate) for
missing or bad credentials. Streaming methods answer
`text/event-stream`, each event a whole JSON-RPC response; an error found before the first
event is a plain JSON response.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from google.protobuf import json_format
from google.protobuf.message import Message
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from a2akit.errors import (
    A2AError,
    InternalError,
    InvalidRequestError,
    MethodNotFoundError,
)
from a2akit.operations import OPERATIONS, Operations, Unary
from a2akit.protojson import dumps, from_json, to_json
from handlers.agent_cards import (
    AGENT_CARD_PATH,
    LEGACY_CARD_PATH,
    card_route,
    legacy_card,
    merged_card,
)
from handlers.http_call import begin_http_request, extension_headers, resolve_http_call
from handlers.json_body import check_content_type, parse_json_body, read_body
from handlers.rest_mount import RestRoutes
from handlers.sse import SSE_HEADERS, Framing, sse_frames

if TYPE_CHECKING:
    from handlers.jsonrpc03 import JsonRpc03

__all__ = ["AGENT_CARD_PATH", "JSON", "create_app", "error_json", "error_response"]

log = logging.getLogger("a2akit.jsonrpc")

JSON = "application/json"
_Id = str | int | None



def _error_body(error: A2AError, request_id: _Id) -> dict[str, Any]:
    status = error.to_status()
    data = [json_format.MessageToDict(detail) for detail in status.details]
    return {"jsonrpc": "2.0", "id": request_id,
            "error": {"code": error.jsonrpc_code, "message": error.message, "data": data}}


def error_json(error: A2AError) -> bytes:
    """The JSON-RPC response (id null) that reports `error`, for a request never read."""
    return dumps(_error_body(error, None))


def error_response(error: A2AError, body: dict[str, Any], challenge: str) -> Response:
    """The HTTP response that carries the JSON-RPC error `body` (either generation's): the
    error's HTTP status, Retry-After when it has one, WWW-Authenticate on a 401."""
    headers = {}
    if error.retry_after_seconds is not None:
        headers["Retry-After"] = str(error.retry_after_seconds)
    if error.http_status == 401:
        headers["WWW-Authenticate"] = challenge  # names the configured schemes
    return Response(dumps(body), status_code=error.http_status, media_type=JSON,
                    headers=headers)


class _JsonRpc:
    def __init__(self, operations: Operations) -> None:
        self.ops = operations
        self.limit = operations.settings.max_request_bytes
        self.challenge = operations.authenticator.challenge
        self.keepalive = operations.settings.sse_keepalive_seconds
        self._legacy: JsonRpc03 | None = None

    def legacy(self) -> JsonRpc03:
        """The 0.3 family, loaded on its first request: a 1.0 request never imports it."""
        if self._legacy is None:
            from handlers.jsonrpc03 import JsonRpc03

            self._legacy = JsonRpc03(self.ops)
        return self._legacy

    async def handle(self, request: Request) -> Response:
        request_id: _Id = None
        try:
            check_content_type(request)
            payload = parse_json_body(await read_body(request, self.limit))
            if isinstance(payload, list):
                raise InvalidRequestError("Batch requests are not supported")
            if not isinstance(payload, dict):
                raise InvalidRequestError("The request must be a JSON object")
            raw_id = payload.get("id")
            if raw_id is not None and (isinstance(raw_id, bool)
                                       or not isinstance(raw_id, str | int)):
                raise InvalidRequestError("id must be a string, an integer or null")
            if "id" not in payload:
                # A request without id is a JSON-RPC notification, which A2A does not define:
                # every operation has a result the client needs (a task id at least), and a
                # notification could not be told of a failure. Executing it silently would
                # create work nobody can find, so it is refused unexecuted; JSON-RPC 2.0
                # (section 5) lets a server answer an invalid request, with id null.
                raise InvalidRequestError("A request needs an id: notifications are not "
                                          "supported by A2A")
            request_id = raw_id
            if payload.get("jsonrpc") != "2.0":
                raise InvalidRequestError('jsonrpc must be exactly "2.0"')
            method = payload.get("method")
            if not isinstance(method, str):
                raise InvalidRequestError("method must be a string")
            operation = OPERATIONS.get(method)
            if operation is None and "/" in method:
                # 0.3 names are `category/action`, 1.0 names PascalCase: the name alone picks
                # the family (facts 1.2); the version header is checked against it after.
                return await self.legacy().handle(request, payload, request_id, method)
            if operation is None:
                raise MethodNotFoundError(f"Method not found: {method}",
                                          metadata={"method": method})
            begin_http_request(request, method)
            message = from_json(payload.get("params"), operation.request)
            call = await resolve_http_call(self.ops, request)
            headers = extension_headers(call)
            if isinstance(operation, Unary):
                result = await self.ops.unary(operation, message, call)
                body = {"jsonrpc": "2.0", "id": request_id, "result": to_json(result)}
                return Response(dumps(body), media_type=JSON, headers=headers)
            events = await self.ops.stream(operation, message, call)
            framing: Framing[Message] = Framing(
                lambda event: dumps({"jsonrpc": "2.0", "id": request_id,
                                      "result": to_json(event)}),
                lambda error: dumps(_error_body(error, request_id)))
            return StreamingResponse(sse_frames(events, framing, self.keepalive),
                                     headers={**headers, **SSE_HEADERS},
                                     media_type="text/event-stream")
        except A2AError as error:
            return error_response(error, _error_body(error, request_id), self.challenge)
        except Exception:
            log.exception("unexpected failure in JSON-RPC request")
            return error_response(InternalError(), _error_body(InternalError(), request_id),
                                  self.challenge)


def create_app(operations: Operations) -> Starlette:
    """The JSON-RPC app: POST at the interface URL's path (both generations), GET of the
    public agent card (handlers.agent_cards)."""
    path = urlsplit(operations.settings.public_url).path or "/"
    base = path.rstrip("/")
    card_path, legacy_path = base + AGENT_CARD_PATH, base + LEGACY_CARD_PATH
    # The cards sit under the interface URL, where a client that knows that URL looks for them
    # (the root when the URL has no path; `/a2a/.well-known/...` behind an API Gateway stage).
    # HTTP+JSON comes last: every JSON-RPC request is matched before it is looked at.
    return Starlette(routes=[
        Route(card_path, card_route(operations.card, merged_card), methods=["GET"]),
        Route(legacy_path, card_route(operations.card, legacy_card), methods=["GET"]),
        Route(path, _JsonRpc(operations).handle, methods=["POST"]),
        RestRoutes(operations, exclude=frozenset({card_path, legacy_path, path})),
    ])
