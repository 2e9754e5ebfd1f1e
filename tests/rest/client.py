"""HTTP+JSON test clients: any method and path through the ASGI app or the real Mangum handler
(the JSON-RPC clients of tests/jsonrpc/client.py, which serve the same app), with helpers that
check the shape of every answer: ProtoJSON as application/a2a+json, or the spec's error body."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from a2akit.operations import Operations
from tests.jsonrpc.client import KINDS, V1, Client, Reply, serve

__all__ = ["KINDS", "V1", "Rest", "serve_rest"]

A2A_JSON = "application/a2a+json"


class Rest:
    def __init__(self, client: Client, prefix: str = "") -> None:
        self.client = client
        self.kind = client.kind
        self.prefix = prefix

    def call(self, method: str, path: str, body: Any = None, query: str = "",
             headers: Mapping[str, str | None] | None = None, raw: bytes | None = None) -> Reply:
        """`body` is sent as JSON (with Content-Type application/json), `raw` as given; the
        A2A-Version header is 1.0 unless `headers` say otherwise."""
        sent = {**V1}
        data = raw if raw is not None else b""
        if body is not None:
            data = json.dumps(body).encode()
            sent["content-type"] = "application/json"
        return self.client.request(method, self.prefix + path, data,
                                   {**sent, **(headers or {})}, query)

    def ok(self, method: str, path: str, body: Any = None, query: str = "",
           **kw: Any) -> Any:
        reply = self.call(method, path, body, query, **kw)
        assert reply.status == 200, (reply.status, reply.body[:500])
        assert reply.headers["content-type"] == A2A_JSON, reply.headers
        return reply.json()

    def events(self, method: str, path: str, body: Any = None, **kw: Any) -> list[Any]:
        reply = self.call(method, path, body, **kw)
        assert reply.status == 200, (reply.status, reply.body[:500])
        return reply.events()

    def error(self, method: str, path: str, body: Any = None, query: str = "",
              status: int | None = None, **kw: Any) -> dict[str, Any]:
        """The `error` member of a failed call, checked against the spec's shape (11.6)."""
        reply = self.call(method, path, body, query, **kw)
        return error_of(reply, status)


def error_of(reply: Reply, status: int | None = None) -> dict[str, Any]:
    assert reply.status >= 400, (reply.status, reply.body[:500])
    assert status is None or reply.status == status, (reply.status, reply.body[:500])
    assert reply.headers["content-type"] == A2A_JSON, reply.headers
    assert b"Traceback" not in reply.body
    answer = reply.json()
    assert set(answer) == {"error"}, answer
    error: dict[str, Any] = answer["error"]
    assert set(error) == {"code", "status", "message", "details"}, error
    assert error["code"] == reply.status and isinstance(error["status"], str)
    info = error["details"][0]
    assert info["@type"] == "type.googleapis.com/google.rpc.ErrorInfo", error
    assert info["domain"] == "a2a-protocol.org"
    return error


def reason(error: Mapping[str, Any]) -> str:
    value: str = error["details"][0]["reason"]
    return value


def violations(error: Mapping[str, Any]) -> dict[str, str]:
    bad = [d for d in error["details"] if d["@type"].endswith("google.rpc.BadRequest")]
    assert bad, error
    return {v["field"]: v["description"] for v in bad[0]["fieldViolations"]}


def serve_rest(kind: str, ops: Operations, prefix: str = "") -> Iterator[Rest]:
    """A client of `kind` in front of the app over `ops` (see tests.jsonrpc.client.serve)."""
    for client in serve(kind, ops):
        yield Rest(client, prefix)
