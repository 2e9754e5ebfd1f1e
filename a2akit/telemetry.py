"""OpenTelemetry spans, optional (docs/observability.md, "OpenTelemetry").

With A2A_OTEL=true the kit emits spans through the OpenTelemetry API to whatever tracer
provider the process has (the ADOT Lambda layer's, or one the user's code sets up): each
operation is a server span named after the A2A method, with `a2a.*` attributes (method,
binding, protocol version, task id, context id, tenant, outcome; never the owner), and its
store writes and queue sends are child spans. The span continues the caller's W3C
`traceparent`, and the kit's own trace fields (log lines, the queue job, webhooks) take the
span's ids, so the worker's span (a consumer span continuing the job's `traceparent`) lands
in the same trace.

Off (the default), nothing of OpenTelemetry is imported and a hook costs one check of a
module global at its call site, which enters no function of this module when off:

    with telemetry.NOTHING if telemetry.off else telemetry.span("a2a.store.write"):
        ...

so the door's cold start and warm path do not change.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from a2akit import logs
from a2akit.errors import A2AError
from a2akit.settings import ENV, Settings, SettingsError

__all__ = ["NOTHING", "configure", "consumer_span", "off", "server_span", "span"]

_tracer: Any = None  # an opentelemetry Tracer once configure() turned spans on
off = True  # no spans: the call sites take NOTHING instead of a span
NOTHING = contextlib.nullcontext()
# Log context fields -> span attributes (the owner is never one: it names a person).
_ATTRIBUTES = {"task_id": "a2a.task.id", "context_id": "a2a.context.id", "tenant": "a2a.tenant"}


def configure(settings: Settings) -> None:
    """Turn spans on when the settings ask; SettingsError when the API is not installed."""
    global _tracer, off
    if not settings.otel:
        _tracer, off = None, True
        return
    try:
        from opentelemetry import trace
    except ImportError:
        raise SettingsError(f"{ENV.OTEL}=true needs the OpenTelemetry API: install the kit's "
                            "otel extra (opentelemetry-api) or use the ADOT layer") from None
    _tracer, off = trace.get_tracer("a2akit"), False


def enabled() -> bool:
    return _tracer is not None


def span(name: str, **attributes: Any) -> contextlib.AbstractContextManager[Any]:
    """A child span of the current one (a store write, a queue send); nothing when off."""
    if _tracer is None:
        return NOTHING
    child: contextlib.AbstractContextManager[Any] = _tracer.start_as_current_span(
        name, attributes=attributes)
    return child


def server_span(method: str, binding: str, protocol_version: str,
                traceparent: str | None) -> contextlib.AbstractContextManager[Any]:
    """The span of one request, from the binding that read it; nothing when off."""
    if _tracer is None:
        return NOTHING
    return _span(method, "SERVER", traceparent, {"a2a.method": method, "a2a.binding": binding,
                                                  "a2a.protocol.version": protocol_version,
                                                  "rpc.system": "a2a"})


def consumer_span(method: str, traceparent: str | None) -> contextlib.AbstractContextManager[Any]:
    """The worker's span of one queued job, continuing the door's trace; nothing when off."""
    if _tracer is None:
        return NOTHING
    return _span(method, "CONSUMER", traceparent, {"a2a.method": method})


@contextlib.contextmanager
def _span(name: str, kind: str, traceparent: str | None,
          attributes: dict[str, Any]) -> Iterator[Any]:
    from opentelemetry import trace
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    parent = (TraceContextTextMapPropagator().extract({"traceparent": traceparent})
              if traceparent else None)
    with _tracer.start_as_current_span(name, context=parent, kind=getattr(trace.SpanKind, kind),
                                       attributes=attributes,
                                       record_exception=False,
                                       set_status_on_exception=False) as current:
        ids = current.get_span_context()
        if ids.is_valid:
            # The kit's trace fields become the span's: log lines, the queue job and webhook
            # deliveries then carry this span as their parent.
            logs.bind(trace_id=f"{ids.trace_id:032x}", span_id=f"{ids.span_id:016x}")
        outcome = "ok"
        try:
            yield current
        except A2AError as error:
            outcome = type(error).__name__
            raise
        except BaseException as error:
            outcome = type(error).__name__
            current.set_status(trace.Status(trace.StatusCode.ERROR))
            raise
        finally:
            fields = logs.fields()
            for field, attribute in _ATTRIBUTES.items():
                if fields.get(field):
                    current.set_attribute(attribute, fields[field])
            current.set_attribute("a2a.outcome", outcome)
