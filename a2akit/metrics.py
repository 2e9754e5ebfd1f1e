"""Metrics as CloudWatch Embedded Metric Format (EMF): one JSON line on stdout per event,
which CloudWatch Logs turns into a metric. No API call, no dependency, written synchronously.

Namespace `A2AKit`. Every metric has the dimension `Service` (the Lambda function's name, or
"grpc" / "local" / "worker" outside Lambda) and at most one more: `State`, `Operation` or
`Reason`; those of ROLLED_UP are also published under `Service` alone (alarms cannot SEARCH).
Nothing per task or per caller is a dimension; the context's ids (task id, trace id) ride
along as plain properties, so a metric line can be found from a task and back.
docs/observability.md lists the metrics.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping
from json.encoder import encode_basestring as _quote
from typing import Any

from a2akit import logs
from a2akit.generated import a2a_pb2 as pb

__all__ = [
    "AUTH_REFUSED",
    "CONFLICTS",
    "LEASE_EXPIRED",
    "NAMESPACE",
    "PUSH_DEAD_LETTERED",
    "PUSH_DELIVERED",
    "PUSH_RETRIES",
    "QUOTA_REFUSED",
    "ROLLED_UP",
    "SERVICE_DIMENSION",
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


# The unit of each metric, so a line names its metrics only.
UNITS = {TASKS_ENDED: "Count", TASK_DURATION: "Milliseconds", TIME_QUEUED: "Milliseconds",
         LEASE_EXPIRED: "Count", CONFLICTS: "Count", THROTTLES: "Count",
         PUSH_DELIVERED: "Count", PUSH_RETRIES: "Count", QUOTA_REFUSED: "Count",
         AUTH_REFUSED: "Count"}
# Metrics whose line also publishes them under `Service` alone, as a second dimension set: one
# alarm per function covers every store operation (infra/kit_metrics.py).
ROLLED_UP = frozenset({THROTTLES})
# pb.TaskState.Name without its prefix, looked up once: the runner names every ended task.
STATE_NAMES = {value: name.removeprefix("TASK_STATE_") for name, value in pb.TaskState.items()}


def _directive(metrics: tuple[str, ...], dimensions: tuple[str, ...]) -> str:
    """The `_aws` member's CloudWatchMetrics of a line: the same few shapes over and over,
    each encoded once."""
    shape = (metrics, dimensions)
    text = _DIRECTIVES.get(shape)
    if text is None:
        sets = [list(dimensions)]
        if len(dimensions) > 1 and ROLLED_UP.intersection(metrics):
            sets.append([SERVICE_DIMENSION])
        text = _DIRECTIVES[shape] = json.dumps([{
            "Namespace": NAMESPACE, "Dimensions": sets,
            "Metrics": [{"Name": name, "Unit": UNITS.get(name, "Count")} for name in metrics]}],
            separators=(",", ":"))
    return text


_DIRECTIVES: dict[tuple[tuple[str, ...], tuple[str, ...]], str] = {}


def document(values: Mapping[str, float], dimensions: dict[str, str],
             properties: Mapping[str, Any], timestamp_ms: int | None = None) -> str:
    """One EMF line: each metric of `values` (name -> value, in its unit of UNITS) under
    `dimensions`, plus `properties` (those not starting with "_")."""
    stamp = int(time.time() * 1000) if timestamp_ms is None else timestamp_ms
    fields = [f"{_quote(key)}:{_quote(value) if type(value) is str else _json(value)}"
              for key, value in properties.items() if key[0] != "_"]
    fields += [f"{_quote(key)}:{_quote(value)}" for key, value in dimensions.items()]
    fields += [f"{_quote(name)}:{value!r}" for name, value in values.items()]
    return (f'{{"_aws":{{"Timestamp":{stamp},"CloudWatchMetrics":'
            f'{_directive(tuple(values), tuple(dimensions))}}},{",".join(fields)}}}')


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), default=str)


# The ids a metric line carries, from the logging context: enough to get from the line to the
# task, its trace and its request; the rest of the context is in the log lines.
PROPERTIES = ("request_id", "trace_id", "task_id")


def _ids() -> str:
    context = logs.fields()
    return "".join([f'"{key}":{_quote(context[key])},' for key in PROPERTIES
                    if key in context])


def emit_all(values: Mapping[str, float], dimension: tuple[str, str] | None = None) -> None:
    """Write the metrics of `values` (name -> value) for this service in one line, with one
    more dimension when given, and the context's ids (PROPERTIES) as properties."""
    dimensions = {SERVICE_DIMENSION: logs.service()}
    if dimension is not None:
        dimensions[dimension[0]] = dimension[1]
    _write(f'{{"_aws":{{"Timestamp":{int(time.time() * 1000)},"CloudWatchMetrics":'
           f'{_directive(tuple(values), tuple(dimensions))}}},{_ids()}'
           + ",".join([f"{_quote(key)}:{_quote(value)}" for key, value in dimensions.items()]
                      + [f"{_quote(name)}:{value!r}" for name, value in values.items()])
           + "}\n")


def _write(line: str) -> None:
    sys.stdout.write(line)
    sys.stdout.flush()


def emit(metric: str, value: float, dimension: tuple[str, str] | None = None) -> None:
    emit_all({metric: value}, dimension)


def count(metric: str, dimension: tuple[str, str] | None = None) -> None:
    emit_all({metric: 1}, dimension)


def task_ended(state: int, started_ms: int | None = None) -> None:
    """A task reached terminal `state`: one TasksEnded, and its TaskDuration when the writer
    knows when it started. The runner writes one for every task, so the line's fixed parts
    are made once per service, state and shape."""
    now = int(time.time() * 1000)
    shape = (logs.service(), state, started_ms is not None)
    parts = _ENDED.get(shape)
    if parts is None:
        parts = _ENDED[shape] = _ended_parts(*shape)
    middle, end = parts
    duration = "" if started_ms is None else f',"{TASK_DURATION}":{max(0, now - started_ms)}'
    _write(f'{{"_aws":{{"Timestamp":{now},{middle}{_ids()}{end}{duration}}}\n')


def _ended_parts(service: str, state: int, timed: bool) -> tuple[str, str]:
    metrics = (TASKS_ENDED, TASK_DURATION) if timed else (TASKS_ENDED,)
    dimensions = {SERVICE_DIMENSION: service, "State": STATE_NAMES.get(state, str(state))}
    middle = f'"CloudWatchMetrics":{_directive(metrics, tuple(dimensions))}}},'
    end = ",".join([f"{_quote(key)}:{_quote(value)}" for key, value in dimensions.items()]
                   + [f'"{TASKS_ENDED}":1'])
    return middle, end


_ENDED: dict[tuple[str, int, bool], tuple[str, str]] = {}
