"""JSON-RPC test clients: the same calls through the ASGI app or the real Mangum handler
fed API Gateway HTTP API (payload 2.0) and Lambda Function URL events."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import copy
import json
import pathlib
import time
import urllib.parse
from collections.abc import Iterator, Mapping
from typing import Any

from starlette.applications import Starlette
from starlette.testclient import TestClient

from a2akit.operations import Operations
from a2akit.settings import Settings
from handlers.lambda_adapter import lambda_handler
from http_service.app import create_app
from tests.support.harness import ANON, memory_operations

EVENTS = pathlib.Path(__file__).parent.parent / "events"
V1 = {"A2A-Version": "1.0"}


class Reply:
    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status = status
        self.headers = {k.lower(): v for k, v in headers.items()}
        self.body = body

    def json(self) -> Any:
        return json.loads(self.body)

    def events(self) -> list[dict[str, Any]]:
        """SSE `data:` payloads, in order; an `event: error` frame yields its data too."""
        assert self.headers["content-type"].startswith("text/event-stream"), self.body
        out = []
        for frame in self.body.decode().split("\n\n"):
            for line in frame.splitlines():
                if line.startswith("data: "):
                    out.append(json.loads(line[6:]))
        return out


class Client:
    kind = "asgi"

    def __init__(self, app: Starlette) -> None:
        self.app = app
        self.ids = iter(range(1, 1_000_000))

    def post(self, body: bytes, headers: Mapping[str, str | None], query: str = "") -> Reply:
        """POST `body` as application/json unless `headers` name another Content-Type; a
        header given as None is left out (None for content-type sends none)."""
        raise NotImplementedError

    def call(self, method: str, params: Any = None, headers: dict[str, str] | None = None,
             **extra: Any) -> Reply:
        payload: dict[str, Any] = {"jsonrpc": "2.0", "id": next(self.ids), "method": method}
        if params is not None:
            payload["params"] = params
        payload.update(extra)
        return self.post(json.dumps(payload).encode(), {**V1, **(headers or {})})

    def result(self, method: str, params: Any = None, **kw: Any) -> Any:
        reply = self.call(method, params, **kw).json()
        assert "error" not in reply, reply
        return reply["result"]

    def error(self, method: str, params: Any = None, **kw: Any) -> dict[str, Any]:
        reply = self.call(method, params, **kw).json()
        assert "error" in reply, reply
        error: dict[str, Any] = reply["error"]
        return error

    def get(self, path: str, headers: dict[str, str] | None = None) -> Reply:
        raise NotImplementedError

    def request(self, method: str, path: str, body: bytes = b"",
                headers: Mapping[str, str | None] | None = None, query: str = "") -> Reply:
        """Any method at any path, headers as given (HTTP+JSON: tests/rest/client.py)."""
        raise NotImplementedError


class AsgiClient(Client):
    def __init__(self, app: Starlette) -> None:
        super().__init__(app)
        self._client = TestClient(app)
        self._client.__enter__()

    def post(self, body: bytes, headers: Mapping[str, str | None], query: str = "") -> Reply:
        r = self._client.post("/?" + query if query else "/", content=body,
                              headers=_present({"content-type": "application/json",
                                                **{k.lower(): v for k, v in headers.items()}}))
        return Reply(r.status_code, dict(r.headers), r.content)

    def get(self, path: str, headers: dict[str, str] | None = None) -> Reply:
        r = self._client.get(path, headers=headers or {})
        return Reply(r.status_code, dict(r.headers), r.content)

    def request(self, method: str, path: str, body: bytes = b"",
                headers: Mapping[str, str | None] | None = None, query: str = "") -> Reply:
        # An absolute URL: a path starting "//" would otherwise be read as a host.
        url = str(self._client.base_url).rstrip("/") + path
        r = self._client.request(method, url + ("?" + query if query else ""), content=body,
                                 headers=_present({k.lower(): v for k, v in
                                                   (headers or {}).items()}))
        return Reply(r.status_code, dict(r.headers), r.content)

    def close(self) -> None:
        self._client.__exit__(None, None, None)


class LambdaClient(Client):
    """Drives the real Lambda handler (Mangum behind its guard), as handlers.jsonrpc makes it."""

    def __init__(self, app: Starlette, event_file: str) -> None:
        super().__init__(app)
        self.kind = event_file.removesuffix(".json")
        self.template = json.loads((EVENTS / event_file).read_text())
        self.handler = lambda_handler(app)
        self.authorizer: dict[str, Any] | None = None
        self.remaining_ms = 30_000  # what the Lambda context says is left of an invocation

    def _invoke(self, method: str, path: str, body: bytes, headers: Mapping[str, str | None],
                query: str = "") -> Reply:
        event = copy.deepcopy(self.template)
        event["rawPath"] = event["requestContext"]["http"]["path"] = path
        if query:
            event["rawQueryString"] = query
            event["queryStringParameters"] = dict(urllib.parse.parse_qsl(query))
        event["requestContext"]["http"]["method"] = method
        event["headers"] = _present({**event["headers"],
                                     **{k.lower(): v for k, v in headers.items()}})
        try:
            event["body"] = body.decode()
        except UnicodeDecodeError:
            # API Gateway hands a body that is not UTF-8 text over base64-encoded.
            event["body"], event["isBase64Encoded"] = base64.b64encode(body).decode(), True
        if self.authorizer is not None:
            event["requestContext"]["authorizer"] = self.authorizer
        response = self.handler(event, _Context(self.remaining_ms))
        raw = response.get("body", "")
        data = base64.b64decode(raw) if response.get("isBase64Encoded") else raw.encode()
        # Text responses must not be base64: API Gateway would hand clients base64.
        if response["headers"].get("content-type", "").startswith(("application/json",
                                                                     "text/event-stream")):
            assert not response.get("isBase64Encoded"), response
        return Reply(response["statusCode"], response["headers"], data)

    def post(self, body: bytes, headers: Mapping[str, str | None], query: str = "") -> Reply:
        return self._invoke("POST", "/", body, headers, query)

    def get(self, path: str, headers: dict[str, str] | None = None) -> Reply:
        return self._invoke("GET", path, b"", headers or {})

    def request(self, method: str, path: str, body: bytes = b"",
                headers: Mapping[str, str | None] | None = None, query: str = "") -> Reply:
        return self._invoke(method, path, body, headers or {}, query)

    def close(self) -> None:
        pass


def _present(headers: Mapping[str, str | None]) -> dict[str, str]:
    return {name: value for name, value in headers.items() if value is not None}


class _Context:
    function_name = "a2a-jsonrpc"
    aws_request_id = "test"

    def __init__(self, remaining_ms: int) -> None:
        self._end = time.monotonic() + remaining_ms / 1000

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._end - time.monotonic()) * 1000))


def make_client(kind: str, app: Starlette) -> Client:
    if kind == "asgi":
        return AsgiClient(app)
    return LambdaClient(app, f"{kind}.json")


# The front ends the HTTP bindings' tests run through: the ASGI app, and the Lambda handler
# (Mangum) fed API Gateway's HTTP API event. A Function URL's event takes the very same path
# through the kit (measured: with coverage contexts, every test's arcs were identical on the two
# shapes); what differs is Mangum's reading of the event, which test_lambda_events.py and
# tests/auth/test_matrix.py check on both shapes.
KINDS = ["asgi", "apigw_http_v2"]


@contextlib.contextmanager
def lambda_event_loop() -> Iterator[asyncio.AbstractEventLoop]:
    """The event loop a Lambda client's invocations run on, as in one Lambda container: set as
    current for Mangum, and closed on exit with whatever the invocations left running."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        yield loop
    finally:
        for task in asyncio.all_tasks(loop):
            task.cancel()
        loop.run_until_complete(asyncio.sleep(0))
        loop.close()
        asyncio.set_event_loop(None)


def serve(kind: str, ops: Operations) -> Iterator[Client]:
    """A client of `kind` in front of the JSON-RPC app over `ops`; a Lambda kind runs on an
    event loop of its own, as in one Lambda container."""
    with contextlib.ExitStack() as stack:
        if kind != "asgi":
            stack.enter_context(lambda_event_loop())
        client = make_client(kind, create_app(ops))
        stack.callback(client.close)
        yield client


def app_client(kind: str, agent: Any = None, settings: Settings = ANON) -> Iterator[Client]:
    """A client of `kind` in front of the JSON-RPC app over a fresh memory store, `agent` (the
    echo agent when None) and `settings`."""
    yield from serve(kind, memory_operations(agent, settings))


def iter_kinds() -> Iterator[str]:
    yield from KINDS
