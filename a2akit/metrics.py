"""Metrics as CloudWatch Embedded Metric Format (EMF): one JSON line on stdout per event,
which CloudWatch Logs turns into a metric. No API call, no dependency, written synchronously.

Namespace `A2AKit`. Every metric has the dimension `Service` (the Lambda function's name, or
"grpc" / "local" / "worker" outside Lambda) and at most one more: `State`, `Operation` or
`Reason`. Nothing per task or per caller is a dimension; the context's ids (task id, trace id)
ride along as plain properties, so a metric line can be found from a task and back.
docs/observability.md lists the metrics.
"""

from __future__ import annotations

import json
import sys
import time
from json.encoder import encode_basestring as _quote
from typing import Any

from a2akit import logs

__all__ = [
    "AUTH_REFUSED",
    "CONFLICTS",
    "LEASE_EXPIRED",
    "NAMESPACE",
    "PUSH_DEAD_LETTERED",
    "PUSH_DELIVERED",
    "PUSH_RETRIES",
    "QUOTA_REFUSED",
    "TASKS_ENDED",
    "TASK_DURATION",
    "THROTTLES",
    "TIME_QUEUED",
    "count",
    "document",
    "emit",
    "emit_all",
    "task_ended",
]

NAMESPACE = "A2AKit"
SERVICE_DIMENSION = "Service"
TASKS_ENDED = "TasksEnded"  # Count, dimension State: tasks that reached a terminal state
TASK_DURATION = "TaskDuration"  # Milliseconds, dimension State: a run's task, start to end
TIME_QUEUED = "TimeQueued"  # Milliseconds: enqueue to the worker's start (queue mode)
LEASE_EXPIRED = "LeaseExpired"  # Count: tasks ended FAILED because their runner's lease ended
CONFLICTS = "VersionConflicts"  # Count: optimistic-concurrency conflicts, retried
THROTTLES = "DynamoDBThrottles"  # Count, dimension Operation: throttled store calls
PUSH_DELIVERED = "PushDelivered"  # Count: webhook deliveries that got a 2xx
PUSH_RETRIES = "PushRetries"  # Count: attempts after the first, over all deliveries
PUSH_DEAD_LETTERED = "PushDeadLettered"  # Count: deliveries given up (dead-letter queue)
QUOTA_REFUSED = "QuotaRefused"  # Count: new tasks refused by the per-caller limit
AUTH_REFUSED = "AuthRefused"  # Count, dimension Reason: requests refused authentication


def document(values: dict[str, tuple[float, str]], dimensions: dict[str, str],
             properties: dict[str, Any], timestamp_ms: int | None = None) -> str:
    """One EMF line: each metric of `values` (name -> (value, unit)) under `dimensions`,
    plus `properties`."""
    stamp = int(time.time() * 1000) if timestamp_ms is None else timestamp_ms
    shape = (tuple((name, unit) for name, (_, unit) in values.items()), tuple(dimensions))
    directive = _DIRECTIVES.get(shape)
    if directive is None:  # the same few shapes over and over: encoded once each
        directive = _DIRECTIVES[shape] = json.dumps([{
            "Namespace": NAMESPACE, "Dimensions": [list(shape[1])],
            "Metrics": [{"Name": name, "Unit": unit} for name, unit in shape[0]]}],
            separators=(",", ":"))
    # Field by field, the strings through json's C quoting: a json.dumps of the whole line
    # costs several times more, on every SendMessage.
    fields = [f"{_quote(key)}:{_value(value)}" for key, value in properties.items()]
    fields += [f"{_quote(key)}:{_quote(value)}" for key, value in dimensions.items()]
    fields += [f"{_quote(name)}:{value!r}" for name, (value, _) in values.items()]
    return (f'{{"_aws":{{"Timestamp":{stamp},"CloudWatchMetrics":{directive}}},'
            f'{",".join(fields)}}}')


def _value(value: Any) -> str:
    if isinstance(value, str):
        return _quote(value)
    return json.dumps(value, separators=(",", ":"), default=str)


_DIRECTIVES: dict[tuple[tuple[tuple[str, str], ...], tuple[str, ...]], str] = {}


def emit_all(values: dict[str, tuple[float, str]],
             dimension: tuple[str, str] | None = None) -> None:
    """Write the metrics of `values` (name -> (value, unit)) for this service in one line,
    with one more dimension when given, and the current context's ids as properties."""
    dimensions = {SERVICE_DIMENSION: logs.service()}
    if dimension is not None:
        dimensions[dimension[0]] = dimension[1]
    properties = {key: value for key, value in logs.fields().items()
                  if not key.startswith("_")}
    sys.stdout.write(document(values, dimensions, properties) + "\n")
    sys.stdout.flush()


def emit(metric: str, value: float, unit: str = "Count",
         dimension: tuple[str, str] | None = None) -> None:
    emit_all({metric: (value, unit)}, dimension)


def count(metric: str, dimension: tuple[str, str] | None = None) -> None:
    emit(metric, 1, "Count", dimension)


def task_ended(state: str, started_ms: int | None = None) -> None:
    """A task reached terminal `state` (COMPLETED, FAILED, ...): one TasksEnded, and its
    TaskDuration when the writer knows when it started."""
    values = {TASKS_ENDED: (1.0, "Count")}
    if started_ms is not None:
        values[TASK_DURATION] = (float(max(0, int(time.time() * 1000) - started_ms)),
                                 "Milliseconds")
    emit_all(values, ("State", state.removeprefix("TASK_STATE_")))
