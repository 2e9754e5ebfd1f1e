"""One synchronous way to call an operation through each front door, and one shape for what
came back, so the same cases run unchanged against:

- `asgi`: the Starlette JSON-RPC app (TestClient);
- `apigw_http_v2` (or `function_url`): the real Mangum handler fed that Lambda event shape;
- `rest-asgi`, `rest-apigw_http_v2`: the same app and handler over HTTP+JSON (requests built
  by tests/support/rest.py);
- `grpc`: a real grpc.aio server on a loopback port (its own event loop in a thread), called
  through a blocking channel.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Callable, Iterator
from typing import Any

import grpc
from google.protobuf import any_pb2, json_format
from google.protobuf.message import Message
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from a2akit.operations import OPERATIONS, Operations
from a2akit.protojson import from_json, to_json
from grpc_service.generated import a2a_pb2_grpc
from grpc_service.server import RunningServer, serve
from http_service.app import create_app
from tests.jsonrpc.client import Client as JsonRpcClient
from tests.jsonrpc.client import make_client
from tests.support.harness import background_loop, end_tasks
from tests.support.rest import rest_request

# One Lambda event shape per binding: a Function URL's event takes the same path through the
# kit as API Gateway's (tests/jsonrpc/client.py, KINDS); test_matrix.py checks where it differs.
TRANSPORTS = ["asgi", "apigw_http_v2", "rest-asgi", "rest-apigw_http_v2", "grpc"]
REST = "rest-"


@dataclasses.dataclass
class Outcome:
    """`reason` is None on success, else the ErrorInfo reason; `status` the HTTP status
    (JSON-RPC) or the gRPC code number; `text` everything the client received."""

    reason: str | None
    status: int
    text: str
    result: Any = None  # the response message, or the list of stream events
    challenge: str | None = None  # WWW-Authenticate (JSON-RPC)
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.reason is None


def _reason(detail: dict[str, Any]) -> str:
    packed = json_format.ParseDict(detail, any_pb2.Any())
    info = error_details_pb2.ErrorInfo()
    assert packed.Unpack(info), detail
    return info.reason


class JsonRpcTransport:
    def __init__(self, kind: str, ops: Operations) -> None:
        self.name = kind
        self._loop: asyncio.AbstractEventLoop | None = None
        if kind != "asgi":
            # Mangum runs each invocation on the thread's event loop, as in a Lambda container.
            self._loop = asyncio.new_event_loop()
            asyncio.set_event_loop(self._loop)
        self.client: JsonRpcClient = make_client(kind, create_app(ops))
        self._ids = iter(range(1, 1_000_000))

    def call(self, method: str, request: Message, headers: dict[str, str]) -> Outcome:
        if self._loop is not None:
            asyncio.set_event_loop(self._loop)
        body = {"jsonrpc": "2.0", "id": next(self._ids), "method": method,
                "params": to_json(request)}
        reply = self.client.post(json.dumps(body).encode(),
                                  {"A2A-Version": "1.0", **headers})
        text = reply.body.decode()
        challenge = reply.headers.get("www-authenticate")
        operation = OPERATIONS[method]
        if reply.headers.get("content-type", "").startswith("text/event-stream"):
            events = reply.events()
            errors = [e["error"] for e in events if "error" in e]
            if errors:
                return Outcome(_reason(errors[0]["data"][0]), reply.status, text,
                               message=errors[0]["message"])
            return Outcome(None, reply.status, text,
                           [from_json(e["result"], operation.response) for e in events])
        payload = reply.json()
        if "error" in payload:
            error = payload["error"]
            return Outcome(_reason(error["data"][0]), reply.status, text,
                           challenge=challenge, message=error["message"])
        return Outcome(None, reply.status, text, from_json(payload["result"], operation.response))

    def close(self) -> None:
        self.client.close()
        if self._loop is not None:
            _drain(self._loop)
            asyncio.set_event_loop(None)


class RestTransport(JsonRpcTransport):
    """The JSON-RPC transport's client and event loop, calling the HTTP+JSON routes."""

    def __init__(self, name: str, ops: Operations) -> None:
        super().__init__(name.removeprefix(REST), ops)
        self.name = name

    def call(self, method: str, request: Message, headers: dict[str, str]) -> Outcome:
        if self._loop is not None:
            asyncio.set_event_loop(self._loop)
        verb, path, body, query = rest_request(method, request)
        sent: dict[str, str | None] = {"A2A-Version": "1.0", "content-type": None}
        if body is not None:
            sent["content-type"] = "application/json"
        reply = self.client.request(verb, path, b"" if body is None else json.dumps(
            body).encode(), {**sent, **headers}, query)
        text = reply.body.decode()
        operation = OPERATIONS[method]
        if reply.status != 200:
            error = reply.json()["error"]
            return Outcome(_reason(error["details"][0]), reply.status, text,
                           challenge=reply.headers.get("www-authenticate"),
                           message=error["message"])
        if reply.headers.get("content-type", "").startswith("text/event-stream"):
            events = reply.events()
            errors = [e["error"] for e in events if "error" in e]
            if errors:
                return Outcome(_reason(errors[0]["details"][0]), reply.status, text,
                               message=errors[0]["message"])
            return Outcome(None, reply.status, text,
                           [from_json(e, operation.response) for e in events])
        return Outcome(None, reply.status, text, from_json(reply.json(), operation.response))


class GrpcTransport:
    name = "grpc"

    def __init__(self, ops: Operations) -> None:
        self._loop = background_loop()
        self._server: RunningServer = self._run(
            serve(ops.settings, ops, port=0, host="127.0.0.1"))
        self._channel = grpc.insecure_channel(f"127.0.0.1:{self._server.port}")
        self._stub = a2a_pb2_grpc.A2AServiceStub(self._channel)

    def _run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(30)

    def call(self, method: str, request: Message, headers: dict[str, str]) -> Outcome:
        metadata = (("a2a-version", "1.0"), *((k.lower(), v) for k, v in headers.items()))
        rpc: Callable[..., Any] = getattr(self._stub, method)
        try:
            if OPERATIONS[method].streaming:
                stream = rpc(request, metadata=metadata, timeout=10)
                # The first event is enough: success is what the tests look for.
                result: Any = [next(stream)]
                stream.cancel()
            else:
                result = rpc(request, metadata=metadata, timeout=10)
        except grpc.RpcError as error:
            status = rpc_status.from_call(error)
            assert status is not None, error
            info = error_details_pb2.ErrorInfo()
            assert status.details[0].Unpack(info)
            return Outcome(info.reason, error.code().value[0],
                           f"{error.details()} {status}",
                           message=error.details() or "")
        return Outcome(None, grpc.StatusCode.OK.value[0], str(result), result)

    def close(self) -> None:
        self._channel.close()
        self._run(self._server.shutdown(0))
        self._run(end_tasks())


Transport = JsonRpcTransport | GrpcTransport  # RestTransport is a JsonRpcTransport


def _drain(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what the calls left running (agents still working), then close the loop."""
    pending = asyncio.all_tasks(loop)
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.close()


def open_transport(name: str, ops: Operations) -> Transport:
    if name == "grpc":
        return GrpcTransport(ops)
    return RestTransport(name, ops) if name.startswith(REST) else JsonRpcTransport(name, ops)


def transport(name: str, ops: Operations) -> Iterator[Transport]:
    """For fixtures: `yield from transport(name, ops)`."""
    opened = open_transport(name, ops)
    try:
        yield opened
    finally:
        opened.close()
