"""Server-sent events for the HTTP bindings: a stream of events as SSE frames, with keep-alive
comments while the stream is idle, and a stream closed properly when its client leaves.
JSON-RPC, HTTP+JSON and 0.3 JSON-RPC differ only in how one event and one error are written
(`Framing`); the framing rules (one `data:` line per event, the end of the response as the
end of the stream) are the same. A failure after the stream began is an `event: error` frame
in 1.0; 0.3 has no event names, so there it is a plain `data:` frame (`Framing.error_event`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any, Generic, TypeVar

from a2akit.errors import A2AError, InternalError

__all__ = ["SSE_HEADERS", "Framing", "sse_frames"]

log = logging.getLogger("a2akit.sse")

# Set on every stream: no cache keeps it, no proxy (nginx and the like) buffers it.
SSE_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}

E = TypeVar("E")
Events = AsyncIterator[Any]
ERROR_EVENT = b"event: error\n"


class Framing(Generic[E]):
    """How one binding writes an event's and an error's JSON text (bytes), and what precedes
    an error's `data:` line (1.0: `event: error`; 0.3: nothing)."""

    def __init__(self, event: Callable[[E], bytes], error: Callable[[A2AError], bytes], *,
                 error_event: bytes = ERROR_EVENT) -> None:
        self.event = event
        self.error = error
        self.error_event = error_event


async def sse_frames(events: AsyncIterator[E], framing: Framing[E],
                     keepalive: float) -> AsyncIterator[bytes]:
    """SSE frames; a comment line every `keepalive` seconds (15 by default) keeps idle
    proxies and API Gateway's idle timeout from closing the stream."""
    pending: asyncio.Task[E] | None = None
    try:
        while True:
            if pending is None:
                pending = asyncio.ensure_future(anext(events))
            done, _ = await asyncio.wait({pending}, timeout=keepalive)
            if not done:
                yield b": keep-alive\n\n"
                continue
            task, pending = pending, None
            try:
                event = task.result()
            except StopAsyncIteration:
                return
            yield b"data: " + framing.event(event) + b"\n\n"
    except A2AError as error:
        yield framing.error_event + b"data: " + framing.error(error) + b"\n\n"
    except Exception:
        log.exception("stream failed")
        yield framing.error_event + b"data: " + framing.error(InternalError()) + b"\n\n"
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


def _close_later(pending: asyncio.Task[Any], events: Events) -> None:
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
