"""The JSON-RPC binding executes only requests that say they are JSON.

A browser sends a cross-site POST without a CORS preflight when its Content-Type is
text/plain, form-encoded or multipart (a CORS "simple" request): executing those would let
any web page start tasks with a visitor's browser at an agent that serves anonymous callers.
Anything but application/json or application/a2a+json (parameters allowed, names in any case)
is refused with HTTP 415 and a JSON-RPC error (-32600), before the body is read; nothing is
stored.
Through the ASGI app and the real Mangum handler with both Lambda event shapes."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.jsonrpc.client import KINDS, V1, Client, serve
from tests.support.harness import memory_operations

_SEND = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "SendMessage", "params": {"message": {
    "messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hello"}]}}}).encode()


@pytest.fixture(params=KINDS)
def rpc(request: pytest.FixtureRequest) -> Iterator[Client]:
    yield from serve(str(request.param), memory_operations())


def _stored(rpc: Client) -> int:
    total: int = rpc.result("ListTasks", {})["totalSize"]
    return total


@pytest.mark.parametrize("content_type", [
    None,  # no Content-Type at all
    "text/plain",
    "text/plain; charset=utf-8",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/xml",
    "text/xml",
    "text/json",
    "application/jsonx",
    "application/json-patch+json",
    "",
    "; charset=utf-8",
])
def test_other_content_types_are_refused_unexecuted(rpc: Client, content_type: str | None) -> None:
    reply = rpc.post(_SEND, {**V1, "content-type": content_type})
    assert reply.status == 415, (reply.status, reply.body[:300])
    assert reply.headers["content-type"].startswith("application/json")
    answer = reply.json()
    assert answer["jsonrpc"] == "2.0" and answer["id"] is None
    assert answer["error"]["code"] == -32600
    assert "application/json" in answer["error"]["message"]
    assert _stored(rpc) == 0


def test_the_content_type_is_checked_before_the_body_is_read(rpc: Client) -> None:
    # Over the size limit and not JSON: the Content-Type alone decides, nothing is parsed.
    reply = rpc.post(b"x" * (2 * 1024 * 1024), {**V1, "content-type": "text/plain"})
    assert reply.status == 415
    assert "application/json" in reply.json()["error"]["message"]


@pytest.mark.parametrize("content_type", [
    "application/json",
    "application/json; charset=utf-8",
    "application/json;charset=UTF-8",
    "Application/JSON",
    "application/a2a+json",
    "APPLICATION/A2A+JSON ; charset=utf-8",
    " application/json ",
])
def test_json_content_types_are_executed(rpc: Client, content_type: str) -> None:
    reply = rpc.post(_SEND, {**V1, "content-type": content_type})
    assert reply.status == 200, reply.body[:300]
    assert reply.json()["result"]["task"]["id"]
    assert _stored(rpc) == 1
