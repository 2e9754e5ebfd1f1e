"""The JSON-RPC 2.0 binding (spec section 9), both generations on one POST route.

Checks run in the reference order, after the Content-Type (JSON only, else 415): JSON parse ->
envelope -> method -> params -> version -> caller -> operation. The method name picks the
generation (facts 1.2): 1.0 names are PascalCase (`a2akit.operations.OPERATIONS`); a name
with a "/" is a 0.3 name, answered by `http_service.jsonrpc03`, which is imported on the first
such request. Errors answer with the catalogue's code and its HTTP status: 200 for A2A
errors, 401 (with WWW-Authenticate) for missing or bad credentials. Streaming methods answer
`text/event-stream`, each event a whole JSON-RPC response; in 1.0 an error found before the
first event is a plain JSON response.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Protocol

from google.protobuf import json_format
from starlette.requests import Request
from starlette.responses import Response

from a2akit.caller import Call
from a2akit.errors import A2AError, InvalidRequestError, MethodNotFoundError
from a2akit.operations import OPERATIONS, Operation, Operations
from a2akit.protojson import dumps, from_json, to_json
from a2akit.service_params import SUPPORTED_VERSION
from http_service.json_body import check_content_type, parse_json_body, read_body
from http_service.pipeline import error_response, extension_headers
from http_service.sse import ERROR_EVENT, Framing

__all__ = ["JSON", "Generation", "JsonRpc", "error_json"]

JSON = "application/json"
Id = str | int | None


class Generation(Protocol):
    """What differs between the two JSON-RPC generations once the envelope is read."""

    protocol_version: str
    extensions_header: str
    error_event: bytes  # what precedes an error's `data:` line in a stream

    def find(self, method: str) -> Any | None:
        """The operation a method names, or None."""

    def decode(self, operation: Any, params: Any) -> Any: ...

    def call(self, operation: Any, request: Any, call: Call) -> Awaitable[Any]:
        """Run a unary operation: its answer, a message `result` writes as JSON. A plain
        function returning the operation's own awaitable: one coroutine less per call."""

    def result(self, answer: Any) -> Any:
        """A unary answer as a JSON value."""

    async def open(self, operation: Any, request: Any, call: Call) -> AsyncIterator[Any]: ...

    def event(self, event: Any) -> Any:
        """One stream event as a JSON value."""

    def error(self, error: A2AError) -> dict[str, Any]:
        """The `error` member of a response."""

    def failure(self, exchange: Exchange, error: A2AError) -> Response | None:
        """A generation's own answer to an error, or None for the HTTP error response."""


class _Generation10:
    protocol_version = SUPPORTED_VERSION
    extensions_header = "A2A-Extensions"
    error_event = ERROR_EVENT

    def __init__(self, ops: Operations) -> None:
        self.ops = ops

    def find(self, method: str) -> Operation | None:
        return OPERATIONS.get(method)

    def decode(self, operation: Operation, params: Any) -> Any:
        return from_json(params, operation.request)

    def call(self, operation: Any, request: Any, call: Call) -> Awaitable[Any]:
        return self.ops.unary(operation, request, call)

    def result(self, answer: Any) -> Any:
        return to_json(answer)

    async def open(self, operation: Any, request: Any, call: Call) -> AsyncIterator[Any]:
        return await self.ops.stream(operation, request, call)

    def event(self, event: Any) -> Any:
        return to_json(event)

    def error(self, error: A2AError) -> dict[str, Any]:
        return _error(error)

    def failure(self, exchange: Exchange, error: A2AError) -> Response | None:
        return None


def _error(error: A2AError) -> dict[str, Any]:
    data = [json_format.MessageToDict(detail) for detail in error.to_status().details]
    return {"code": error.jsonrpc_code, "message": error.message, "data": data}


def error_json(error: A2AError) -> bytes:
    """The JSON-RPC response (id null) that reports `error`, for a request never read."""
    return dumps({"jsonrpc": "2.0", "id": None, "error": _error(error)})


class JsonRpc:
    """The binding: one `Exchange` per request (http_service.pipeline)."""

    def __init__(self, operations: Operations) -> None:
        self.ops = operations
        self.limit = operations.settings.max_request_bytes
        self.challenge = operations.authenticator.challenge
        self.current: Generation = _Generation10(operations)
        self._legacy: Generation | None = None

    def legacy(self) -> Generation:
        """The 0.3 generation, loaded on its first request: a 1.0 request never imports it."""
        if self._legacy is None:
            from http_service.jsonrpc03 import Generation03

            self._legacy = Generation03(self.ops)
        return self._legacy

    def exchange(self) -> Callable[[], Exchange]:
        """What makes one request's exchange (the pipeline calls it once per request)."""
        return functools.partial(Exchange, self)


class Exchange:
    """One JSON-RPC request (http_service.pipeline.Exchange)."""

    binding = "JSON-RPC"
    operation = ""
    streaming = False

    def __init__(self, rpc: JsonRpc) -> None:
        self.rpc = rpc
        self.generation = rpc.current
        self.protocol_version = self.generation.protocol_version
        self.request_id: Id = None
        self._operation: Any = None
        self._params: Any = None

    async def route(self, request: Request) -> None:
        check_content_type(request)
        payload = parse_json_body(await read_body(request, self.rpc.limit))
        if isinstance(payload, list):
            raise InvalidRequestError("Batch requests are not supported")
        if not isinstance(payload, dict):
            raise InvalidRequestError("The request must be a JSON object")
        raw_id = payload.get("id")
        if raw_id is not None and (isinstance(raw_id, bool) or not isinstance(raw_id, str | int)):
            raise InvalidRequestError("id must be a string, an integer or null")
        if "id" not in payload:
            # A request without id is a JSON-RPC notification, which A2A does not define:
            # every operation has a result the client needs (a task id at least), and a
            # notification could not be told of a failure. Executing it silently would
            # create work nobody can find, so it is refused unexecuted; JSON-RPC 2.0
            # (section 5) lets a server answer an invalid request, with id null.
            raise InvalidRequestError("A request needs an id: notifications are not "
                                      "supported by A2A")
        self.request_id = raw_id
        if payload.get("jsonrpc") != "2.0":
            raise InvalidRequestError('jsonrpc must be exactly "2.0"')
        method = payload.get("method")
        if not isinstance(method, str):
            raise InvalidRequestError("method must be a string")
        operation = self.generation.find(method)
        if operation is None and "/" in method:
            # 0.3 names are `category/action`, 1.0 names PascalCase: the name alone picks
            # the generation (facts 1.2); the version header is checked against it after.
            self.generation = self.rpc.legacy()
            self.protocol_version = self.generation.protocol_version
            operation = self.generation.find(method)
        if operation is None:
            raise MethodNotFoundError(f"Method not found: {method}", metadata={"method": method})
        self.operation = method
        self.streaming = operation.streaming  # both generations' entries say it
        self._operation = operation
        self._params = payload.get("params")

    def decode(self) -> Any:
        return self.generation.decode(self._operation, self._params)

    async def run(self, request: Any, call: Call) -> Response:
        generation = self.generation
        answer = await generation.call(self._operation, request, call)
        body = {"jsonrpc": "2.0", "id": self.request_id, "result": generation.result(answer)}
        return Response(dumps(body), media_type=JSON, headers=self.extension_headers(call))

    async def open(self, request: Any, call: Call) -> AsyncIterator[Any]:
        return await self.generation.open(self._operation, request, call)

    def framing(self) -> Framing[Any]:
        generation, request_id = self.generation, self.request_id
        return Framing(
            lambda event: dumps({"jsonrpc": "2.0", "id": request_id,
                                 "result": generation.event(event)}),
            self.error_body, error_event=generation.error_event)

    def extension_headers(self, call: Call) -> dict[str, str]:
        if not call.active_extensions:  # the usual case, decided here
            return {}
        return extension_headers(self.generation.extensions_header, call)

    def error_body(self, error: A2AError) -> bytes:
        return dumps({"jsonrpc": "2.0", "id": self.request_id,
                      "error": self.generation.error(error)})

    def failure(self, error: A2AError) -> Response:
        own = self.generation.failure(self, error)
        if own is not None:
            return own
        return error_response(error, error.http_status, self.error_body(error), JSON,
                              self.rpc.challenge)
