"""Lambda events the adapter (Mangum) cannot read get a 400 with a JSON-RPC error and one log
line, never an unhandled exception, which API Gateway would turn into a 502.

Two shapes API Gateway can deliver (a Host header with two colons, an X-Forwarded-Port that
is not a number: both from the client) and some it never sends (a body that is not base64
although flagged so, a body that is not text, no headers, no request context). Each is a
copy of tests/events/*.json changed in one place, given to `handlers.jsonrpc.handler`
itself, imported as Lambda's runtime imports it."""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.jsonrpc.client import EVENTS, _Context

_BODY = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}})


def _header(name: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda event: event["headers"].__setitem__(name, value)


def _member(name: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda event: event.__setitem__(name, value)


def _base64_garbage(event: dict[str, Any]) -> None:
    event.update(isBase64Encoded=True, body="@@ not base64 @@!")


MUTATIONS: dict[str, Callable[[dict[str, Any]], None]] = {
    "host-with-two-colons": _header("host", "a:b:c"),
    "port-not-a-number": _header("x-forwarded-port", "443abc"),
    "bad-base64-body": _base64_garbage,
    "dict-body": _member("body", {"jsonrpc": "2.0"}),
    "list-body": _member("body", [1]),
    "null-headers": _member("headers", None),
    "number-header": _header("x-custom", 5),
    "no-request-context": lambda event: event.pop("requestContext"),
    "empty-event": lambda event: event.clear(),
}


@pytest.fixture
def handler(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., dict[str, Any]]]:
    """`handlers.jsonrpc.handler`, imported afresh with anonymous callers allowed."""
    for name in [n for n in os.environ if n.startswith(("A2A_", "AWS_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("A2A_ALLOW_ANONYMOUS", "true")
    monkeypatch.delitem(sys.modules, "handlers.jsonrpc", raising=False)
    loop = asyncio.new_event_loop()  # Mangum's, as in one Lambda container
    asyncio.set_event_loop(loop)
    try:
        yield importlib.import_module("handlers.jsonrpc").handler
    finally:
        sys.modules.pop("handlers.jsonrpc", None)
        asyncio.set_event_loop(None)
        loop.close()


def _event(kind: str) -> dict[str, Any]:
    event: dict[str, Any] = json.loads((EVENTS / f"{kind}.json").read_text())
    event["headers"]["a2a-version"] = "1.0"
    event["body"] = _BODY
    return event


@pytest.mark.parametrize("kind", ["apigw_http_v2", "function_url"])
@pytest.mark.parametrize("mutation", list(MUTATIONS))
def test_unreadable_events_get_a_400_and_one_log_line(
        handler: Callable[..., dict[str, Any]], kind: str, mutation: str,
        caplog: pytest.LogCaptureFixture) -> None:
    event = _event(kind)
    MUTATIONS[mutation](event)
    caplog.clear()
    response = handler(event, _Context(30_000))
    assert response["statusCode"] == 400, response
    assert response["headers"]["content-type"] == "application/json"
    assert not response.get("isBase64Encoded")
    answer = json.loads(response["body"])
    assert answer["jsonrpc"] == "2.0" and answer["id"] is None
    assert answer["error"]["code"] == -32600
    records = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(records) == 1, caplog.text
    assert "\n" not in records[0].getMessage() and records[0].exc_info is None


@pytest.mark.parametrize("kind", ["apigw_http_v2", "function_url"])
def test_the_same_handler_serves_a_readable_event(handler: Callable[..., dict[str, Any]],
                                                  kind: str) -> None:
    response = handler(_event(kind), _Context(30_000))
    assert response["statusCode"] == 200, response
    assert json.loads(response["body"])["error"]["code"] == -32001  # no task x: it ran
