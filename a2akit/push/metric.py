"""The failed-delivery record as a log line that CloudWatch also counts as a metric (Embedded
Metric Format, `a2akit.metrics`): the one definition the dispatcher writes and the stack's
alarm reads."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from a2akit import logs
from a2akit.metrics import NAMESPACE, document

__all__ = ["DIMENSION", "FAILED_METRIC", "METRIC_NAMESPACE", "failure_line"]

METRIC_NAMESPACE = NAMESPACE
FAILED_METRIC = "PushDeliveryFailed"
# On Lambda the metric carries the function's name, so two stacks in one account and region
# (dev and prod) each alarm on their own failures only. (The stack's alarm reads this
# dimension; the kit's other metrics use `Service`, see a2akit.metrics.)
DIMENSION = "FunctionName"


def failure_line(record: Mapping[str, Any], function: str | None) -> str:
    """One JSON line: the structured log record of a failed delivery (without its event) and,
    in CloudWatch, one count of `A2AKit/PushDeliveryFailed`; `function`: the Lambda function
    delivering (`Settings.function_name`), its dimension."""
    dimensions: dict[str, str] = {DIMENSION: function} if function else {}
    properties = {**logs.fields(), "message": "push notification not delivered",
                  **{key: value for key, value in record.items() if key != "event"}}
    return document({FAILED_METRIC: 1}, dimensions, properties,
                    timestamp_ms=record["failedAt"])
