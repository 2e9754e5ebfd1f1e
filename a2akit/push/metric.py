"""The failed-delivery record as a log line that CloudWatch also counts as a metric (Embedded
Metric Format): the one definition the dispatcher writes and the stack's alarm reads."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

__all__ = ["DIMENSION", "FAILED_METRIC", "METRIC_NAMESPACE", "failure_line"]

METRIC_NAMESPACE = "A2AKit"
FAILED_METRIC = "PushDeliveryFailed"
# On Lambda the metric carries the function's name, so two stacks in one account and region
# (dev and prod) each alarm on their own failures only.
DIMENSION = "FunctionName"


def failure_line(record: Mapping[str, Any]) -> str:
    """One JSON line: the structured log record of a failed delivery (without its event) and,
    in CloudWatch, one count of `A2AKit/PushDeliveryFailed`."""
    function = os.environ.get("AWS_LAMBDA_FUNCTION_NAME")
    dimensions: dict[str, str] = {DIMENSION: function} if function else {}
    fields = {key: value for key, value in record.items() if key != "event"}
    return json.dumps({
        "_aws": {"Timestamp": record["failedAt"], "CloudWatchMetrics": [{
            "Namespace": METRIC_NAMESPACE, "Dimensions": [list(dimensions)],
            "Metrics": [{"Name": FAILED_METRIC, "Unit": "Count"}]}]},
        FAILED_METRIC: 1,
        **dimensions,
        "message": "push notification not delivered",
        **fields,
    }, separators=(",", ":"))
