"""The JSON-RPC app as a Lambda handler: Mangum, configured once, behind a guard for events
it cannot read.

Mangum builds the ASGI scope from the event before the app runs, and raises on shapes it
does not expect: some come from the client through API Gateway (a Host header with two
colons, an X-Forwarded-Port that is not a number), others AWS never sends (a body flagged
base64 that is not, a body that is not text, no headers). An exception out of the handler
is a 502 from API Gateway and a stack trace in the log; such an event is a bad request
instead: 400 with a JSON-RPC error and one WARNING line. Exceptions inside the app never get
here (Mangum answers them with a 500), so the guard costs a normal event a try and nothing
more.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

from mangum import Mangum
from starlette.applications import Starlette

from a2akit.errors import InvalidRequestError
from a2akit.invocation import SCOPE_KEY, Invocation
from http_service.jsonrpc import JSON, error_json

__all__ = ["LambdaHandler", "invocation_of", "lambda_handler"]

log = logging.getLogger("a2akit.jsonrpc")

LambdaHandler = Callable[[dict[str, Any], Any], dict[str, Any]]
# Mangum's text_mime_types replaces its own list, so the JSON types are all named here.
_TEXT_TYPES = ["application/json", "application/a2a+json", "text/event-stream", "text/plain"]
_UNREADABLE = error_json(InvalidRequestError(
    "The request cannot be read: malformed HTTP headers or body")).decode()


def invocation_of(context: object, event: Mapping[str, Any] | None) -> Invocation:
    """The invocation of a Lambda context (`get_remaining_time_in_millis`, `aws_request_id`)
    and its event (the API Gateway request context)."""
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    request_id = getattr(context, "aws_request_id", None)
    request_context = (event or {}).get("requestContext")
    return Invocation(
        deadline=None if remaining is None else time.monotonic() + float(remaining()) / 1000,
        request_id=request_id if isinstance(request_id, str) and request_id else None,
        request_context=request_context if isinstance(request_context, dict) else None)


class _WithInvocation:
    """Mangum's `aws.context` and `aws.event` -> the request's `Invocation`, the one thing
    the bindings read of the invocation."""

    def __init__(self, app: Starlette) -> None:
        self.app = app

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        scope[SCOPE_KEY] = invocation_of(scope.get("aws.context"), scope.get("aws.event"))
        await self.app(scope, receive, send)


def lambda_handler(app: Starlette) -> LambdaHandler:
    """The Lambda handler of `app` (API Gateway HTTP API payload 2.0, Function URLs)."""
    # lifespan off: Mangum would otherwise run startup/shutdown around every invocation.
    adapter = Mangum(_WithInvocation(app), lifespan="off", text_mime_types=_TEXT_TYPES)

    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        try:
            return adapter(event, context)
        except Exception as exc:
            # One line, bounded: the message may quote what the client sent.
            log.warning("refused a Lambda event the adapter cannot read: %s: %.200r",
                        type(exc).__name__, str(exc))
            return {"statusCode": 400, "headers": {"content-type": JSON},
                    "body": _UNREADABLE, "isBase64Encoded": False}

    return handler
