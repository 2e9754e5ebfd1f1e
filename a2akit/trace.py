"""One trace per task across hops: W3C Trace Context (`traceparent`), without a tracing SDK.

The door takes the caller's `traceparent` (JSON-RPC header, gRPC metadata) or starts a trace;
the trace id then rides in the logging context (`trace_id`, `span_id`), in the SQS job
(`a2akit.execution.queue.Job.traceparent`), into the worker, and out to webhooks as their
`traceparent` header: every hop keeps the trace id and starts its own span id.
docs/observability.md says how this relates to X-Ray's `_X_AMZN_TRACE_ID`.
"""

from __future__ import annotations

import os
import re
from random import getrandbits

from a2akit import logs

__all__ = ["HEADER", "begin_request", "continue_trace", "current_traceparent", "from_asgi", "parse"]

HEADER = "traceparent"
# version 00: 2 hex version, 32 hex trace id (not all zero), 16 hex parent id (not all
# zero), 2 hex flags; a later version may append fields after a dash.
_TRACEPARENT = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?")
_ZERO_TRACE = "0" * 32
_ZERO_SPAN = "0" * 16


def parse(value: str | None) -> tuple[str, str] | None:
    """(trace id, flags) of a valid `traceparent`, else None (then a new trace starts)."""
    if not value or len(value) > 512:
        return None
    match = _TRACEPARENT.fullmatch(value.strip())
    if match is None:
        return None
    version, trace_id, parent, flags, rest = match.groups()
    if version == "ff" or (version == "00" and rest) or trace_id == _ZERO_TRACE or (
            parent == _ZERO_SPAN):
        return None
    return trace_id, flags


def _hop(traceparent: str | None) -> dict[str, str]:
    """The context fields of this hop: the trace `traceparent` names (or a new one) and a new
    span (an all-zero span id is invalid; 2**-64 odds, not worth a check)."""
    parsed = parse(traceparent) if traceparent else None
    ids = os.urandom(24).hex()
    trace_id, flags = parsed if parsed is not None else (ids[:32], "01")
    return {"trace_id": trace_id, "span_id": ids[32:], "_trace_flags": flags}


def from_asgi(headers: list[tuple[bytes, bytes]]) -> str | None:
    """The `traceparent` of an ASGI scope's raw headers (names are lower case there): a plain
    scan, cheaper than a Headers lookup on every request."""
    for name, value in headers:
        if name == b"traceparent":
            return value.decode("latin-1")
    return None


def continue_trace(traceparent: str | None) -> None:
    """Put the trace `traceparent` names (or a new one) with a new span into the context."""
    logs.bind(**_hop(traceparent))


def current_traceparent() -> str | None:
    """The `traceparent` a call out of this hop sends (its parent is this hop's span)."""
    context = logs.fields()
    trace_id, span_id = context.get("trace_id"), context.get("span_id")
    if not trace_id or not span_id:
        return None
    return f"00-{trace_id}-{span_id}-{context.get('_trace_flags', '01')}"


def begin_request(operation: str, request_id: str | None, traceparent: str | None) -> None:
    """A binding's one call per request: a new logging context with the request id (Lambda's
    when there is one, else a new id), the operation and the trace. One dict made here and
    set once: this runs on every request."""
    parsed = parse(traceparent) if traceparent else None
    ids = os.urandom(24).hex()  # a trace id and a span id in one draw
    fields = {
        "request_id": request_id if type(request_id) is str and request_id
        else f"{getrandbits(64):016x}",
        "operation": operation,
        "trace_id": parsed[0] if parsed is not None else ids[:32],
        "span_id": ids[32:],
    }
    if parsed is not None and parsed[1] != "01":
        fields["_trace_flags"] = parsed[1]
    logs.begin_with(fields)
