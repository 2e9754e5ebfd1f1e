"""The invocation a request runs in, as its entry point knows it: when it ends, its id, and the
request context API Gateway verified. Each entry point builds one from what it gets (Mangum's
Lambda context and event in handlers.lambda_adapter, the Lambda Web Adapter's headers in
handlers.stream) and puts it in the ASGI scope under `SCOPE_KEY`; the bindings read only
that. Elsewhere (a local server, tests) there is none: no deadline, a new request id, no
verified caller.
"""

from __future__ import annotations

import dataclasses
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


NO_INVOCATION = Invocation()
