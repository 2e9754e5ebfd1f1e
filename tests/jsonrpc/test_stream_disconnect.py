"""A client that leaves an SSE stream, through uvicorn on a loopback port with a real HTTP
client: a disconnect is normal, so the server logs no error and leaves nothing running."""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import uvicorn

from a2akit.agent import RequestContext, TaskHandle
from http_service.app import create_app
from tests.jsonrpc.client import V1
from tests.support.harness import memory_operations
from tests.support.messages import user_message


class _SlowAgent:
    """Reports working, then stays silent: the stream waits for its next event."""

    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        await task.working("thinking")
        await asyncio.sleep(2.0)
        await task.complete("done")


@pytest.fixture
def uvicorn_url() -> Iterator[tuple[str, Any]]:
    ops = memory_operations(_SlowAgent())
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    # log_config=None: uvicorn's loggers propagate to the root logger, where caplog listens.
    server = uvicorn.Server(uvicorn.Config(create_app(ops), log_config=None, lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]})
    thread.start()
    try:
        for _ in range(500):
            if server.started:
                break
            time.sleep(0.01)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/", server
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def test_client_leaving_a_stream_logs_no_error(uvicorn_url: tuple[str, Any],
                                               caplog: pytest.LogCaptureFixture) -> None:
    url, server = uvicorn_url
    caplog.set_level(logging.INFO)
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
            "params": {"message": user_message()}}
    with httpx.Client(timeout=10) as http:
        for _ in range(2):  # the second time on a fresh connection
            with http.stream("POST", url, json=body, headers=V1) as reply:
                assert reply.headers["content-type"].startswith("text/event-stream")
                lines = reply.iter_lines()
                assert next(lines).startswith("data: ")
            body["params"] = {"message": user_message()}
    # The server notices the disconnect and ends the request: no connection or task left.
    state = server.server_state
    for _ in range(500):
        if not state.connections and not state.tasks:
            break
        time.sleep(0.01)
    assert not state.connections and not state.tasks
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not errors, [r.getMessage() for r in errors]
