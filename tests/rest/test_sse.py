"""SSE framing of the HTTP+JSON binding (http_service.sse with http_service.rest's framing): bare
StreamResponse events, keep-alive comments while idle, an error after the first event as a
last `event: error` frame holding the spec's error body."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from a2akit.errors import UnavailableError
from a2akit.generated import a2a_pb2 as pb
from a2akit.settings import Settings
from http_service.rest import FRAMING
from http_service.sse import sse_frames
from tests.rest.client import serve_rest
from tests.support.harness import SlowOrEcho, memory_operations

pytestmark = pytest.mark.anyio


def _framing() -> Any:
    return FRAMING


async def _frames(events: AsyncIterator[pb.StreamResponse], keepalive: float) -> list[bytes]:
    return [frame async for frame in sse_frames(events, _framing(), keepalive)]


async def test_an_error_after_the_first_event_is_a_last_error_frame() -> None:
    async def events() -> AsyncIterator[pb.StreamResponse]:
        yield pb.StreamResponse(task=pb.Task(id="t", context_id="c"))
        raise UnavailableError()

    frames = await _frames(events(), 10)
    assert frames[0] == b'data: {"task":{"id":"t","contextId":"c"}}\n\n'
    kind, data = frames[1].decode().split("\n")[:2]
    assert kind == "event: error" and len(frames) == 2
    error = json.loads(data.removeprefix("data: "))["error"]
    assert (error["code"], error["status"]) == (503, "UNAVAILABLE")
    assert error["details"][0]["reason"] == "UNAVAILABLE"


async def test_an_idle_stream_carries_keepalive_comments() -> None:
    # The event comes only once two keep-alives went out: no timing to guess.
    seen_two = asyncio.Event()

    async def events() -> AsyncIterator[pb.StreamResponse]:
        await seen_two.wait()
        yield pb.StreamResponse(task=pb.Task(id="t"))

    frames = []
    async for frame in sse_frames(events(), _framing(), 0.01):
        frames.append(frame)
        if frames.count(b": keep-alive\n\n") == 2:
            seen_two.set()
    assert frames[:2] == [b": keep-alive\n\n"] * 2
    assert frames[-1] == b'data: {"task":{"id":"t"}}\n\n'


def test_a_subscription_ends_at_its_budget() -> None:
    settings = Settings(allow_anonymous=True, stream_budget_seconds=0.5)
    for rest in serve_rest("asgi", memory_operations(SlowOrEcho(), settings)):
        task = rest.ok("POST", "/message:send", {"message": {
            "messageId": "m", "role": "ROLE_USER", "parts": [{"text": "slow"}]},
            "configuration": {"returnImmediately": True}})["task"]
        reply = rest.call("GET", f"/tasks/{task['id']}:subscribe")
        assert reply.status == 200
        assert reply.headers["content-type"].startswith("text/event-stream")
        events = reply.events()  # the task still works: only the budget ended the stream
        assert events[0]["task"]["id"] == task["id"]
        assert all(e["statusUpdate"]["status"]["state"] == "TASK_STATE_WORKING"
                   for e in events[1:] if "statusUpdate" in e)
