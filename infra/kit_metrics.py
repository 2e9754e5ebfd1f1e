"""The kit's own metrics (namespace A2AKit: the EMF lines of a2akit/metrics.py) as CloudWatch
metrics and expressions, for the alarms and the dashboard: their names, dimensions and
statistics in the stack come from here and from a2akit.metrics, nowhere else.

Every metric has the dimension `Service` and at most one more. `Service` is the function's name
on Lambda and the stack's name for the gRPC container (GrpcService.service_name, set as
POWERTOOLS_SERVICE_NAME), so two stacks in one account never mix. Alarms cannot SEARCH, so
they read metrics by their full dimensions: `TasksEnded` per terminal state,
`DynamoDBThrottles` by its Service-only rollup (a2akit.metrics.ROLLED_UP). Graphs break
figures down with SEARCH.
"""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch

from a2akit import metrics
from a2akit.states import TERMINAL

__all__ = ["ENDED_STATES", "failed_rate", "kit_metric", "search", "total"]

# The states a task ends in, as the metric's State dimension names them.
ENDED_STATES = tuple(sorted(metrics.STATE_NAMES[state] for state in TERMINAL))


def kit_metric(name: str, service: str, period: Duration, statistic: str = "Sum",
               label: str | None = None, **dimension: str) -> cloudwatch.Metric:
    """A2AKit/`name` of one service (a function's name, the container's), with at most one
    more dimension."""
    return cloudwatch.Metric(namespace=metrics.NAMESPACE, metric_name=name,
                             dimensions_map={metrics.SERVICE_DIMENSION: service, **dimension},
                             statistic=statistic, period=period, label=label)


def failed_rate(service: str, period: Duration, name: str) -> cloudwatch.MathExpression:
    """The share (%) of the tasks `service` ended in a period that ended FAILED; no value for
    a period in which it ended none (missing data, never breaching). `name` (lower case)
    labels it and prefixes its metric ids, unique in one graph."""
    ended = {state: kit_metric(metrics.TASKS_ENDED, service, period, State=state)
             for state in ENDED_STATES}
    ids = {state: f"{name}_{state.lower()}" for state in ended}
    # A state without a task in the period has no data point: 0 for the sum.
    all_ended = " + ".join(f"FILL({metric_id}, 0)" for metric_id in ids.values())
    return cloudwatch.MathExpression(
        expression=f"IF(({all_ended}) > 0, 100 * FILL({ids['FAILED']}, 0) / ({all_ended}))",
        using_metrics={ids[state]: metric for state, metric in ended.items()},
        period=period, label=f"{name} failed %")


def total(name: str, services: dict[str, str], period: Duration,
          label: str | None = None) -> cloudwatch.MathExpression:
    """A2AKit/`name` summed over `services` (metric id -> service), each missing one as
    0 (a sum of series only has points where all of them do)."""
    return cloudwatch.MathExpression(
        expression=" + ".join(f"FILL({metric_id}, 0)" for metric_id in services),
        using_metrics={metric_id: kit_metric(name, service, period)
                       for metric_id, service in services.items()},
        period=period, label=label or name)


def search(name: str, dimension: str, service: str, period: Duration,
           statistic: str = "Sum", label: str | None = None) -> cloudwatch.MathExpression:
    """Every series of A2AKit/`name` of one service by its `dimension` (for graphs: an alarm
    cannot search)."""
    schema = f"{{{metrics.NAMESPACE},{metrics.SERVICE_DIMENSION},{dimension}}}"
    return cloudwatch.MathExpression(
        expression=(f"SEARCH('{schema} MetricName=\"{name}\" "
                    f"{metrics.SERVICE_DIMENSION}=\"{service}\"', '{statistic}', "
                    f"{int(period.to_seconds())})"),
        using_metrics={}, period=period, label=label or "")
