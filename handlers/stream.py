"""The JSON-RPC app as an HTTP server for the AWS Lambda Web Adapter: `python -m handlers.stream`.

On Lambda the adapter (an extension layer, `AWS_LWA_INVOKE_MODE=response_stream`) turns each
invocation into an HTTP request to this server on 127.0.0.1:`PORT` (8080 by default) and
streams the response back as it is written, so SSE events leave live (docs/public-door.md).
The app is the one `handlers.jsonrpc` serves through Mangum; this module adds only what Mangum
gives it from the invocation, taken from the two headers the adapter sets:

- `x-amzn-lambda-context`: the Lambda context as JSON, `deadline` in epoch milliseconds and
  `request_id` -> the request's `a2akit.invocation.Invocation`, so streams and blocking calls
  end at the invocation's end less the margin, exactly as through Mangum.
- `x-amzn-request-context`: API Gateway's request context as JSON (the authorizer's verified
  caller, the path the client used) -> the same `Invocation`.

A client can send headers of those names too. The adapter replaces both on every request
(`HeaderMap::insert` in its `fetch_response`), so they are trusted only when this process runs
under the adapter in Lambda (`AWS_LAMBDA_EXEC_WRAPPER=/opt/bootstrap` with the Lambda runtime
API present). Anywhere else they are dropped unread: a forged header grants no identity and
no longer deadline.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import time
from collections.abc import Callable, Mapping
from typing import Any

from a2akit import logs
from a2akit.invocation import SCOPE_KEY, Invocation
from a2akit.runtime import after_restore, build_operations, explain_startup_errors
from a2akit.settings import Settings
from http_service.app import create_app

__all__ = ["LAMBDA_CONTEXT_HEADER", "LWA_WRAPPER", "REQUEST_CONTEXT_HEADER", "AdapterContext",
           "main", "under_adapter"]

LAMBDA_CONTEXT_HEADER = b"x-amzn-lambda-context"
REQUEST_CONTEXT_HEADER = b"x-amzn-request-context"
# The adapter's layer runs as the runtime's exec wrapper (its documented zip-function setup).
LWA_WRAPPER = "/opt/bootstrap"
# The adapter's SnapStart hook (AWS_LWA_SNAPSTART_AFTER_RESTORE_PATH): it POSTs here after a
# restore, and answers 403 itself to any outside request for the path.
AFTER_RESTORE_ENV = "AWS_LWA_SNAPSTART_AFTER_RESTORE_PATH"

# A request head (request line and headers) must arrive within this many seconds of the
# connection opening or the previous response ending (slowloris); the adapter sends a whole
# head at once, over loopback.
HEAD_SECONDS = 5.0

ASGIApp = Callable[[dict[str, Any], Any, Any], Any]


def under_adapter(environ: Mapping[str, str]) -> bool:
    """Whether this process was started by the Lambda Web Adapter inside Lambda, the only
    place where the two context headers come from the adapter and not from a client."""
    return (environ.get("AWS_LAMBDA_EXEC_WRAPPER") == LWA_WRAPPER
            and bool(environ.get("AWS_LAMBDA_RUNTIME_API")))


def _json_object(raw: bytes | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _deadline_ms(context: Mapping[str, Any] | None) -> float | None:
    # lambda_runtime's Context serializes its deadline as `deadline` (epoch ms).
    value = (context or {}).get("deadline")
    if isinstance(value, bool) or not isinstance(value, int | float) or not (
            math.isfinite(value) and value > 0):
        return None  # NaN and the infinities too: no deadline rather than a failed call
    return float(value)


# A request with both Content-Length and Transfer-Encoding has two lengths (RFC 9112 6.3: a
# server may reject it, and must close the connection after it); h11 would go by the chunks,
# a proxy in front might go by the other: refused, and the connection closed.
_FRAMING = {b"content-length": 1, b"transfer-encoding": 2}
_BOTH_FRAMINGS = 3


async def _ambiguous_length(send: Any) -> None:
    body = b"Bad Request: both Content-Length and Transfer-Encoding\n"
    await send({"type": "http.response.start", "status": 400, "headers": [
        (b"content-type", b"text/plain; charset=utf-8"), (b"connection", b"close"),
        (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class AdapterContext:
    """ASGI layer: the adapter's context headers -> the request's `Invocation`; never passes
    those headers on, so the app reads the invocation only from the scope."""

    def __init__(self, app: ASGIApp, *, trusted: bool,
                 after_restore: Callable[[], None] | None = None,
                 after_restore_path: str | None = None) -> None:
        self.app = app
        self.trusted = trusted
        self.after_restore = after_restore
        self.after_restore_path = after_restore_path if trusted else None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        lambda_raw = request_raw = None
        headers = []
        framing = 0
        for name, value in scope["headers"]:
            if name == LAMBDA_CONTEXT_HEADER:
                lambda_raw = value
            elif name == REQUEST_CONTEXT_HEADER:
                request_raw = value
            else:
                framing |= _FRAMING.get(name, 0)
                headers.append((name, value))
        if framing == _BOTH_FRAMINGS:
            await _ambiguous_length(send)
            return
        scope = {**scope, "headers": headers}
        if (self.after_restore_path is not None and scope["method"] == "POST"
                and scope["path"] == self.after_restore_path):
            await self._restored(send)
            return
        if self.trusted:
            lambda_context = _json_object(lambda_raw) or {}
            deadline = _deadline_ms(lambda_context)
            request_id = lambda_context.get("request_id")
            request_context = _json_object(request_raw)
            if not isinstance(request_id, str) or not request_id:
                request_id = None
            if deadline is not None or request_context is not None:
                scope[SCOPE_KEY] = Invocation(
                    None if deadline is None
                    else time.monotonic() + max(0.0, deadline / 1000 - time.time()),
                    request_id, request_context)
            if request_context is not None:
                path = _client_path(request_context)
                if path is not None:
                    scope["path"], scope["raw_path"] = path, path.encode()
        await self.app(scope, receive, send)

    async def _restored(self, send: Any) -> None:
        if self.after_restore is not None:
            self.after_restore()
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})


def _client_path(request_context: Mapping[str, Any]) -> str | None:
    """The path the client asked for, stage included (REST API request context `path`): the
    adapter forwards the path without the stage, while A2A_PUBLIC_URL and the card carry it."""
    path = request_context.get("path")
    if "http" in request_context or not isinstance(path, str) or not path.startswith("/"):
        return None  # an HTTP API or Function URL context: its path is the one forwarded
    return path


def _head_timeout_protocol() -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol with a limit on reading a request's head (HEAD_SECONDS):
    uvicorn times out only an idle keep-alive connection, and any byte stops that timer, so
    a client dribbling a header could hold a connection forever."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeadTimeout(H11Protocol):
        _head_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
            super().connection_lost(exc)

        def _arm(self) -> None:
            # Cut unless a new request cycle (a whole head) began since this point.
            if self._head_timer is not None:
                self._head_timer.cancel()
            self._head_timer = self.loop.call_later(HEAD_SECONDS, self._cut, self.cycle)

        def _cut(self, cycle_then: object) -> None:
            if self.cycle is cycle_then and not self.transport.is_closing():
                self.transport.close()

    return HeadTimeout


def main() -> None:
    import uvicorn  # only this entry point needs a server

    environ = os.environ
    with explain_startup_errors():
        settings = Settings.from_env()
        logs.configure(settings.log_level, settings.service("jsonrpc"))
        operations = build_operations(settings)
        if not under_adapter(environ):
            # Run by hand: no API Gateway identity can reach it, as with gRPC.
            operations.authenticator.warn_if_nobody_can_call()

    app = AdapterContext(create_app(operations), trusted=under_adapter(environ),
                         after_restore=lambda: after_restore(operations),
                         after_restore_path=environ.get(AFTER_RESTORE_ENV) or None)
    # Events leave as they are written: h11 sends each body chunk at once, and nothing here
    # compresses or buffers (no GZip middleware; the app sets X-Accel-Buffering: no).
    config = uvicorn.Config(
        app, host=settings.http_host, port=settings.http_port, http=_head_timeout_protocol(),
        ws="none",
        loop="asyncio", lifespan="off",
        access_log=False, server_header=False, proxy_headers=False,
        log_level=settings.log_level.lower(),
        log_config=None,  # uvicorn's lines go through the kit's JSON handler (a2akit.logs)
        # Longer than the adapter's idle pool timeout (4 s), so the adapter closes first.
        timeout_keep_alive=5)
    uvicorn.Server(config).run()


if __name__ == "__main__":
    main()
