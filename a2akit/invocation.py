"""The invocation a request runs in, as its entry point knows it: when it ends, its id, and the
request context API Gateway verified. Each entry point builds one (Mangum's Lambda context
and event in handlers.lambda_adapter, the Lambda Web Adapter's headers in handlers.stream)
and puts it in the ASGI scope under `SCOPE_KEY`; the bindings read only that. Elsewhere (a
local server, tests) there is none: no deadline, a new request id, no verified caller.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from typing import Any

__all__ = ["NO_INVOCATION", "SCOPE_KEY", "Invocation"]

SCOPE_KEY = "a2a.invocation"


@dataclasses.dataclass(frozen=True, slots=True)
class Invocation:
    deadline: float | None = None  # the time.monotonic() instant at which the invocation ends
    request_id: str | None = None  # Lambda's request id: the request's log lines carry it
    # API Gateway's request context (its authorizer's verified caller), trusted as given.
    request_context: Mapping[str, Any] | None = None

    @classmethod
    def from_lambda(cls, context: object, event: Mapping[str, Any] | None) -> Invocation:
        """From a Lambda context (`get_remaining_time_in_millis`, `aws_request_id`) and the
        invocation's event, as Mangum passes them."""
        remaining = getattr(context, "get_remaining_time_in_millis", None)
        request_id = getattr(context, "aws_request_id", None)
        request_context = (event or {}).get("requestContext")
        return cls(
            deadline=None if remaining is None
            else time.monotonic() + float(remaining()) / 1000,
            request_id=request_id if isinstance(request_id, str) and request_id else None,
            request_context=request_context if isinstance(request_context, Mapping) else None)

    @classmethod
    def until(cls, deadline_epoch_ms: float, request_id: str | None,
              request_context: Mapping[str, Any] | None) -> Invocation:
        """One that ends at an epoch time (the Lambda Web Adapter's `deadline`)."""
        left = max(0.0, deadline_epoch_ms / 1000 - time.time())
        return cls(time.monotonic() + left, request_id, request_context)


NO_INVOCATION = Invocation()
