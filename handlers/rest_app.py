"""The HTTP+JSON binding (spec section 11) over the shared core, served by the JSON-RPC app
(handlers.rest_mount routes to it, importing this module on the first HTTP+JSON request).

Paths are the proto's (handlers.rest_routes) under the interface URL's path
(a2akit.card.rest_url). Checks run in the JSON-RPC binding's order: route (404, or 405 with
Allow), Content-Type for a body (415), body size and JSON, the request message, then the
caller and the operation. Answers are ProtoJSON as `application/a2a+json`; an error is the
spec's body, `{"error": {code, status, message, details}}`, with the catalogue's HTTP status for
HTTP+JSON (`A2AError.rest_status`) and the same ErrorInfo as on the other bindings. Streams are
SSE, each event's data a bare StreamResponse, framed as JSON-RPC frames them (handlers.sse).
"""

from __future__ import annotations

import logging
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message
from google.rpc import code_pb2
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from a2akit.errors import (
    A2AError,
    InternalError,
    InvalidRequestError,
    MethodNotFoundError,
)
from a2akit.operations import Operations, Unary
from a2akit.protojson import dumps, from_json, to_json
from handlers.http_call import begin_http_request, extension_headers, resolve_http_call
from handlers.json_body import check_content_type, parse_json_body, read_body
from handlers.rest_routes import bind_path, find_route, query_json
from handlers.sse import SSE_HEADERS, Framing, sse_frames

__all__ = ["A2A_JSON", "RestBinding", "rest_error_body"]

log = logging.getLogger("a2akit.rest")

A2A_JSON = "application/a2a+json"  # spec 11.1, 14.1



def rest_error_body(error: A2AError) -> dict[str, Any]:
    """The spec's HTTP+JSON error (11.6): `code` the HTTP status, `status` the gRPC code's
    name, the google.rpc.Status details (ErrorInfo first) in ProtoJSON."""
    details = [json_format.MessageToDict(detail) for detail in error.to_status().details]
    return {"error": {"code": error.rest_status, "status": code_pb2.Code.Name(error.grpc_code),
                      "message": error.message, "details": details}}


class RestBinding:
    """Answers the requests `handlers.rest_mount.RestRoutes` hands over, paths under `prefix`."""

    def __init__(self, operations: Operations, prefix: str) -> None:
        self.ops = operations
        self.prefix = prefix
        self.limit = operations.settings.max_request_bytes
        self.challenge = operations.authenticator.challenge
        self.keepalive = operations.settings.sse_keepalive_seconds
        self.framing: Framing[Message] = Framing(lambda event: dumps(to_json(event)),
                                                 lambda error: dumps(rest_error_body(error)))

    async def answer(self, request: Request) -> Response:
        try:
            path = request.scope["path"][len(self.prefix):]
            if path.startswith("//"):
                # A client that joins the interface URL's slash and a route's: one slash.
                # Only the leading ones: an empty segment further in names another resource.
                path = "/" + path.lstrip("/")
            route, variables, allowed = find_route(request.method, path)
            if route is None:
                return self._no_route(request.method, path, allowed)
            operation = route.operation
            if route.body:
                check_content_type(request)
                raw = await read_body(request, self.limit)
                payload = parse_json_body(raw) if raw.strip() else {}
                if not isinstance(payload, dict):
                    raise InvalidRequestError("The request body must be a JSON object")
            else:
                payload = query_json(operation.request, request.query_params.multi_items(),
                                     variables)
            begin_http_request(request, operation.name)
            message = from_json(payload, operation.request)
            bind_path(message, variables)
            call = await resolve_http_call(self.ops, request)
            headers = extension_headers(call)
            if isinstance(operation, Unary):
                result = await self.ops.unary(operation, message, call)
                return Response(dumps(to_json(result)), media_type=A2A_JSON, headers=headers)
            events = await self.ops.stream(operation, message, call)
            return StreamingResponse(sse_frames(events, self.framing, self.keepalive),
                                     headers={**headers, **SSE_HEADERS},
                                     media_type="text/event-stream")
        except A2AError as error:
            return self._error(error)
        except Exception:
            log.exception("unexpected failure in HTTP+JSON request")
            return self._error(InternalError())

    def _no_route(self, verb: str, path: str, allowed: list[str]) -> Response:
        where = {"method": verb, "path": path}
        if not allowed:
            return self._error(MethodNotFoundError(f"No operation at {path}", metadata=where))
        error = MethodNotFoundError(f"{path} does not take {verb}", metadata=where,
                                    http_status=405)
        return self._error(error, {"Allow": ", ".join(allowed)})

    def _error(self, error: A2AError, headers: dict[str, str] | None = None) -> Response:
        headers = dict(headers or {})
        if error.retry_after_seconds is not None:
            headers["Retry-After"] = str(error.retry_after_seconds)
        if error.rest_status == 401:
            headers["WWW-Authenticate"] = self.challenge  # names the configured schemes
        return Response(dumps(rest_error_body(error)), status_code=error.rest_status,
                        media_type=A2A_JSON, headers=headers)
