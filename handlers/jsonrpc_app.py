"""The JSON-RPC 2.0 binding as a Starlette app (spec section 9), over the shared core.

Checks run in the reference order, after the Content-Type (JSON only, else 415): JSON parse ->
envelope -> method -> params -> version -> caller -> operation. Errors answer with the
catalogue's code and its HTTP status: 200 for A2A errors, 401 (with WWW-Authenticate) for
missing or bad credentials. Streaming methods answer
`text/event-stream`, each event a whole JSON-RPC response; an error found before the first
event is a plain JSON response.
"""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import json
import logging
import time
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

from google.protobuf import json_format
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from a2akit.auth import platform_principal
from a2akit.errors import (
    A2AError,
    InternalError,
    InvalidRequestError,
    MethodNotFoundError,
)
from a2akit.execution.budget import lambda_deadline
from a2akit.generated import a2a_pb2 as pb
from a2akit.operations import OPERATIONS, Operations, Unary
from a2akit.protojson import from_json, to_json
from a2akit.trace import begin_request, from_asgi
from handlers.conditional import not_modified
from handlers.json_body import parse_json_body

__all__ = ["AGENT_CARD_PATH", "JSON", "create_app", "error_json"]

log = logging.getLogger("a2akit.jsonrpc")

AGENT_CARD_PATH = "/.well-known/agent-card.json"
JSON = "application/json"
# The media types a request may declare: JSON-RPC's application/json, and A2A's own.
_JSON_TYPES = frozenset({JSON, "application/a2a+json"})
_Id = str | int | None


def _dumps(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


def _error_body(error: A2AError, request_id: _Id) -> dict[str, Any]:
    status = error.to_status()
    data = [json_format.MessageToDict(detail) for detail in status.details]
    return {"jsonrpc": "2.0", "id": request_id,
            "error": {"code": error.jsonrpc_code, "message": error.message, "data": data}}


def error_json(error: A2AError) -> bytes:
    """The JSON-RPC response (id null) that reports `error`, for a request never read."""
    return _dumps(_error_body(error, None))


def _error_response(error: A2AError, request_id: _Id, challenge: str) -> Response:
    headers = {}
    if error.retry_after_seconds is not None:
        headers["Retry-After"] = str(error.retry_after_seconds)
    if error.http_status == 401:
        headers["WWW-Authenticate"] = challenge  # names the configured schemes
    return Response(_dumps(_error_body(error, request_id)), status_code=error.http_status,
                    media_type=JSON, headers=headers)


class _JsonRpc:
    def __init__(self, operations: Operations) -> None:
        self.ops = operations
        self.limit = operations.settings.max_request_bytes
        self.challenge = operations.authenticator.challenge
        self.keepalive = operations.settings.sse_keepalive_seconds

    def _too_big(self) -> InvalidRequestError:
        # Built only when raised: an exception object per request would be wasted work.
        return InvalidRequestError(f"Request body exceeds the limit of {self.limit} bytes",
                                   metadata={"limitBytes": str(self.limit)})

    @staticmethod
    def _check_content_type(request: Request) -> None:
        """Refuse a request that does not say it is JSON, before its body is read: text/plain,
        form and multipart bodies are what a web page may POST cross-site without a CORS
        preflight, so executing them would let any page start tasks with a visitor's browser."""
        declared = request.headers.get("content-type")
        if declared in _JSON_TYPES:
            return  # the usual exact value: no parsing
        if declared is not None and declared.partition(";")[0].strip().lower() in _JSON_TYPES:
            return
        raise InvalidRequestError(
            "Content-Type must be application/json or application/a2a+json",
            metadata={"contentType": declared or ""}, http_status=415)

    async def _body(self, request: Request) -> bytes:
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.limit:
            raise self._too_big()
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > self.limit:
                raise self._too_big()
        return bytes(body)

    async def handle(self, request: Request) -> Response:
        request_id: _Id = None
        try:
            self._check_content_type(request)
            payload = parse_json_body(await self._body(request))
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
            if operation is None:
                raise MethodNotFoundError(f"Method not found: {method}",
                                          metadata={"method": method})
            scope = request.scope
            # The request's logging context: its id, the operation, the caller's trace.
            begin_request(method, scope.get("aws.context"), from_asgi(scope["headers"]))
            message = from_json(payload.get("params"), operation.request)
            call = await self.ops.resolve_call(
                request.headers, verified_principal=platform_principal(scope.get("aws.event")),
                # Parsed only when there is a query: most requests have none.
                version=request.query_params.get("A2A-Version") if scope["query_string"]
                else None,
                # On Lambda the invocation's end bounds blocking and streaming calls.
                deadline=lambda_deadline(scope.get("aws.context")))
            headers = ({"A2A-Extensions": ",".join(call.active_extensions)}
                       if call.active_extensions else {})
            if isinstance(operation, Unary):
                result = await self.ops.unary(operation, message, call)
                body = {"jsonrpc": "2.0", "id": request_id, "result": to_json(result)}
                return Response(_dumps(body), media_type=JSON, headers=headers)
            events = await self.ops.stream(operation, message, call)
            return StreamingResponse(self._sse(events, request_id), headers={
                **headers, "Cache-Control": "no-store", "X-Accel-Buffering": "no"},
                media_type="text/event-stream")
        except A2AError as error:
            return _error_response(error, request_id, self.challenge)
        except Exception:
            log.exception("unexpected failure in JSON-RPC request")
            return _error_response(InternalError(), request_id, self.challenge)

    async def _sse(self, events: AsyncIterator[pb.StreamResponse],
                   request_id: _Id) -> AsyncIterator[bytes]:
        """SSE frames; a comment line every `keepalive` seconds (15 by default) keeps idle
        proxies and API Gateway's idle timeout from closing the stream."""
        pending: asyncio.Task[pb.StreamResponse] | None = None
        try:
            while True:
                if pending is None:
                    pending = asyncio.ensure_future(anext(events))
                done, _ = await asyncio.wait({pending}, timeout=self.keepalive)
                if not done:
                    yield b": keep-alive\n\n"
                    continue
                task, pending = pending, None
                try:
                    event = task.result()
                except StopAsyncIteration:
                    return
                body = {"jsonrpc": "2.0", "id": request_id, "result": to_json(event)}
                yield b"data: " + _dumps(body) + b"\n\n"
        except A2AError as error:
            yield b"event: error\ndata: " + _dumps(_error_body(error, request_id)) + b"\n\n"
        except Exception:
            log.exception("stream failed")
            body = _error_body(InternalError(), request_id)
            yield b"event: error\ndata: " + _dumps(body) + b"\n\n"
        finally:
            if pending is None or pending.done():
                _forget(pending)
                await events.aclose()  # type: ignore[attr-defined]
            else:
                # The client left while the next event was awaited in `pending`: aclose() on
                # a generator still running there raises RuntimeError, and awaiting anything
                # here could be cancelled again. The generator closes once `pending` ends.
                pending.add_done_callback(lambda done: _close_later(done, events))
                pending.cancel()


def _forget(task: asyncio.Future[Any] | None) -> BaseException | None:
    """Take a finished task's outcome: the stream is gone, nobody reads it any more."""
    if task is not None and task.done() and not task.cancelled():
        return task.exception()
    return None


def _close_later(pending: asyncio.Task[pb.StreamResponse],
                 events: AsyncIterator[pb.StreamResponse]) -> None:
    _forget(pending)
    closing = asyncio.ensure_future(events.aclose())  # type: ignore[attr-defined]
    _CLOSING.add(closing)
    closing.add_done_callback(_closed)


def _closed(closing: asyncio.Future[None]) -> None:
    _CLOSING.discard(closing)
    error = _forget(closing)
    if error is not None:
        log.warning("closing an abandoned stream failed: %r", error)


# Streams left by their client close in the background: keep each closing task referenced.
_CLOSING: set[asyncio.Future[None]] = set()


def create_app(operations: Operations) -> Starlette:
    """The JSON-RPC app: POST at the interface URL's path, GET of the public agent card."""
    card_body = _dumps(to_json(operations.card))
    etag = '"' + hashlib.sha256(card_body).hexdigest()[:32] + '"'
    built = int(time.time())  # the card is built once per process: its Last-Modified
    headers = {"Cache-Control": "public, max-age=300", "ETag": etag,
               "Last-Modified": email.utils.formatdate(built, usegmt=True)}

    async def agent_card(request: Request) -> Response:
        if not_modified(request.headers.get("if-none-match"),
                        request.headers.get("if-modified-since"), etag, built):
            return Response(status_code=304, headers=headers)
        return Response(card_body, media_type=JSON, headers=headers)

    path = urlsplit(operations.settings.public_url).path or "/"
    # The card sits under the interface URL, where a client that knows that URL looks for it
    # (the root when the URL has no path; `/a2a/.well-known/...` behind an API Gateway stage).
    return Starlette(routes=[
        Route(path.rstrip("/") + AGENT_CARD_PATH, agent_card, methods=["GET"]),
        Route(path, _JsonRpc(operations).handle, methods=["POST"]),
    ])
