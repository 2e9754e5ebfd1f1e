"""The HTTP+JSON binding (spec section 11) over the shared core, served by the same app
(http_service.rest_mount routes to it, importing this module on the first HTTP+JSON request).

Paths are the proto's (http_service.rest_routes) under the interface URL's path
(a2akit.card.rest_url). Checks run in the JSON-RPC binding's order: route (404, or 405 with
Allow), Content-Type for a body (415), body size and JSON, the request message, then the
caller and the operation. Answers are ProtoJSON as `application/a2a+json`; an error is the
spec's body, `{"error": {code, status, message, details}}`, with the catalogue's HTTP status for
HTTP+JSON (`A2AError.rest_status`) and the same ErrorInfo as on the other bindings. Streams are
SSE, each event's data a bare StreamResponse, framed as JSON-RPC frames them (http_service.sse).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message
from google.rpc import code_pb2
from starlette.requests import Request
from starlette.responses import Response

from a2akit.caller import Call
from a2akit.errors import A2AError, InvalidRequestError, MethodNotFoundError
from a2akit.operations import Operations
from a2akit.protojson import dumps, from_json, to_json
from a2akit.service_params import SUPPORTED_VERSION
from http_service.json_body import check_content_type, parse_json_body, read_body
from http_service.pipeline import answer, error_response, extension_headers
from http_service.rest_routes import bind_path, find_route, query_json
from http_service.sse import Framing

__all__ = ["A2A_JSON", "FRAMING", "RestBinding", "rest_error_body"]

A2A_JSON = "application/a2a+json"  # spec 11.1, 14.1


def rest_error_body(error: A2AError) -> dict[str, Any]:
    """The spec's HTTP+JSON error (11.6): `code` the HTTP status, `status` the gRPC code's
    name, the google.rpc.Status details (ErrorInfo first) in ProtoJSON."""
    details = [json_format.MessageToDict(detail) for detail in error.to_status().details]
    return {"error": {"code": error.rest_status, "status": code_pb2.Code.Name(error.grpc_code),
                      "message": error.message, "details": details}}


FRAMING: Framing[Message] = Framing(lambda event: dumps(to_json(event)),
                                     lambda error: dumps(rest_error_body(error)))


class RestBinding:
    """Answers the requests `http_service.rest_mount.RestRoutes` hands over, paths under
    `prefix`."""

    def __init__(self, operations: Operations, prefix: str) -> None:
        self.ops = operations
        self.prefix = prefix
        self.limit = operations.settings.max_request_bytes
        self.challenge = operations.authenticator.challenge

    async def answer(self, request: Request) -> Response:
        return await answer(self.ops, lambda: _Exchange(self), request)


class _Exchange:
    """One HTTP+JSON request (http_service.pipeline.Exchange)."""

    binding = "HTTP+JSON"
    protocol_version = SUPPORTED_VERSION
    operation = ""
    streaming = False

    def __init__(self, rest: RestBinding) -> None:
        self.rest = rest
        self._operation: Any = None  # an Operation, once routed
        self._payload: Any = None
        self._variables: dict[str, str] = {}
        self._allow: dict[str, str] = {}

    async def route(self, request: Request) -> None:
        path = request.scope["path"][len(self.rest.prefix):]
        if path.startswith("//"):
            # A client that joins the interface URL's slash and a route's: one slash.
            # Only the leading ones: an empty segment further in names another resource.
            path = "/" + path.lstrip("/")
        route, variables, allowed = find_route(request.method, path)
        if route is None:
            where = {"method": request.method, "path": path}
            if not allowed:
                raise MethodNotFoundError(f"No operation at {path}", metadata=where)
            self._allow = {"Allow": ", ".join(allowed)}
            raise MethodNotFoundError(f"{path} does not take {request.method}",
                                      metadata=where, http_status=405)
        operation = route.operation
        if route.body:
            check_content_type(request)
            raw = await read_body(request, self.rest.limit)
            payload = parse_json_body(raw) if raw.strip() else {}
            if not isinstance(payload, dict):
                raise InvalidRequestError("The request body must be a JSON object")
        else:
            payload = query_json(operation.request, request.query_params.multi_items(),
                                 variables)
        self.operation = operation.name
        self.streaming = operation.streaming
        self._operation, self._payload, self._variables = operation, payload, variables

    def decode(self) -> Any:
        message = from_json(self._payload, self._operation.request)
        bind_path(message, self._variables)
        return message

    async def run(self, request: Any, call: Call) -> Response:
        result = await self.rest.ops.unary(self._operation, request, call)
        return Response(dumps(to_json(result)), media_type=A2A_JSON,
                        headers=self.extension_headers(call))

    async def open(self, request: Any, call: Call) -> AsyncIterator[Any]:
        return await self.rest.ops.stream(self._operation, request, call)

    def framing(self) -> Framing[Any]:
        return FRAMING

    def extension_headers(self, call: Call) -> dict[str, str]:
        return extension_headers("A2A-Extensions", call)

    def failure(self, error: A2AError) -> Response:
        return error_response(error, error.rest_status, dumps(rest_error_body(error)),
                              A2A_JSON, self.rest.challenge, self._allow)
