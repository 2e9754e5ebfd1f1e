"""The kit's own metrics (namespace A2AKit, written as EMF lines: a2akit/metrics.py) in the
stack: alarms composed with the others (same topic, missing data not breaching) on the
failed-task rate of each function that runs tasks, lease expiries and DynamoDB throttles of
every function (and the gRPC container: tests/infra/test_infra_grpc_metrics.py) that uses the
table, and the dashboard's graphs of them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk.assertions import Template

from a2akit import metrics
from a2akit.settings import ENV
from infra.alarms import FAILED_TASK_RATE_ALARM_PERCENT
from infra.jsonrpc_api import HANDLER
from infra.push import PUSH_HANDLER
from infra.sweeper import SWEEPER_HANDLER
from infra.worker import WORKER_HANDLER
from tests.support.template import CONTAINER, environments, lambda_function, logical_id, only

pytestmark = pytest.mark.slow

TERMINAL = {"COMPLETED", "FAILED", "CANCELED", "REJECTED"}


def _kit_alarms(template: Template, metric: str) -> list[dict[str, Any]]:
    """The alarms that read A2AKit/`metric`, each checked to be one of the stack's (the
    topic) and quiet without data."""
    found = []
    for alarm in template.find_resources("AWS::CloudWatch::Alarm").values():
        props = alarm["Properties"]
        if metric not in {stat["Metric"]["MetricName"] for stat in _stats(props)}:
            continue
        assert props["AlarmActions"] == [{"Ref": logical_id(template, "AWS::SNS::Topic")}]
        assert props["TreatMissingData"] == "notBreaching"
        assert all(stat["Metric"]["Namespace"] == metrics.NAMESPACE for stat in _stats(props))
        found.append(props)
    return found


def _stats(props: dict[str, Any]) -> list[dict[str, Any]]:
    """The metrics an alarm reads, as MetricStat (a single-metric alarm's too)."""
    if "MetricName" in props:
        return [{"Metric": {key: props[key] for key in ("Namespace", "MetricName",
                                                          "Dimensions")},
                 "Stat": props.get("Statistic", props.get("ExtendedStatistic")),
                 "Period": props["Period"]}]
    return [query["MetricStat"] for query in props.get("Metrics", []) if "MetricStat" in query]


def _dimensions(stat: dict[str, Any]) -> dict[str, Any]:
    return {d["Name"]: d["Value"] for d in stat["Metric"]["Dimensions"]}


def _function(template: Template, handler: str) -> dict[str, str]:
    function_id, _ = lambda_function(template, handler)
    return {"Ref": function_id}


def _container(template: Template) -> Any:
    """The gRPC container's Service (the value the stack gives it)."""
    return environments(template)[CONTAINER][ENV.SERVICE_NAME]


def _expression(props: dict[str, Any]) -> str:
    (returned,) = [query for query in props["Metrics"] if query.get("ReturnData", True)]
    text: str = returned["Expression"]
    return text


def test_the_failed_task_rate_of_each_function_that_runs_tasks(template: Template) -> None:
    alarms = _kit_alarms(template, metrics.TASKS_ENDED)
    by_service = {}
    for props in alarms:
        stats = {query["Id"]: query["MetricStat"] for query in props["Metrics"]
                 if "MetricStat" in query}
        (service,) = {json.dumps(_dimensions(stat)["Service"]) for stat in stats.values()}
        states = {_dimensions(stat)["State"]: query_id for query_id, stat in stats.items()}
        assert set(states) == TERMINAL  # FAILED over all that ended
        assert all(stat["Stat"] == "Sum" and stat["Period"] == 300 for stat in stats.values())
        expression = _expression(props)
        numerator, denominator = expression.split("/", 1)
        assert states["FAILED"] in numerator
        assert all(query_id in denominator for query_id in states.values())
        assert props["Threshold"] == FAILED_TASK_RATE_ALARM_PERCENT
        assert props["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
        by_service[service] = props
    # The door runs tasks (or cancels queued ones), the worker runs queued ones; the
    # sweeper only ends tasks FAILED (its figure is LeaseExpired).
    assert set(by_service) == {json.dumps(_function(template, handler))
                               for handler in (HANDLER, WORKER_HANDLER)}


def test_lease_expiries_of_every_function_that_settles_leases(template: Template) -> None:
    (props,) = _kit_alarms(template, metrics.LEASE_EXPIRED)
    services = [_dimensions(stat) for stat in _stats(props)]
    # The gRPC container settles leases too (its sweeper, its reads): under its own name.
    assert sorted(json.dumps(dims) for dims in services) == sorted(
        json.dumps({"Service": service}) for service in (
            *(_function(template, handler)
              for handler in (HANDLER, WORKER_HANDLER, SWEEPER_HANDLER)),
            _container(template)))
    assert (props["Threshold"], props["ComparisonOperator"]) == (
        1, "GreaterThanOrEqualToThreshold")  # any expiry: > 0
    # Every process's count is in the sum, missing ones as 0.
    assert _expression(props).count("FILL(") == 4


def test_dynamodb_throttles_of_every_function_that_uses_the_table(
        push_template: Template) -> None:
    alarms = _kit_alarms(push_template, metrics.THROTTLES)
    services = set()
    for props in alarms:
        (stat,) = _stats(props)
        # The Service-only rollup of the metric (every operation): alarms cannot SEARCH.
        (dimension,) = stat["Metric"]["Dimensions"]
        assert dimension["Name"] == "Service" and stat["Stat"] == "Sum"
        assert props["Threshold"] == 1
        services.add(json.dumps(dimension["Value"]))
    assert services == {json.dumps(_function(push_template, handler)) for handler in
                        (HANDLER, WORKER_HANDLER, SWEEPER_HANDLER, PUSH_HANDLER)} | {
        json.dumps(_container(push_template))}


def test_push_dead_letters_and_dead_letter_queues_stay_alarmed(push_template: Template) -> None:
    (failed,) = [alarm["Properties"] for alarm in
                 push_template.find_resources("AWS::CloudWatch::Alarm").values()
                 if alarm["Properties"].get("MetricName") == "PushDeliveryFailed"]
    assert failed["Namespace"] == metrics.NAMESPACE
    depth = [alarm["Properties"] for alarm in
             push_template.find_resources("AWS::CloudWatch::Alarm").values()
             if alarm["Properties"].get("MetricName") == "ApproximateNumberOfMessagesVisible"]
    # The task queue's DLQ, the push DLQ, the failed stream batches, the failed sweeps.
    assert len(depth) == 4
    assert {alarm["TreatMissingData"] for alarm in depth} == {"notBreaching"}


def test_the_dashboard_graphs_the_kit_metrics(push_template: Template) -> None:
    body = json.dumps(only(push_template, "AWS::CloudWatch::Dashboard")["Properties"][
        "DashboardBody"])
    for name in (metrics.TASKS_ENDED, metrics.TASK_DURATION, metrics.TIME_QUEUED,
                 metrics.LEASE_EXPIRED, metrics.CONFLICTS, metrics.THROTTLES,
                 metrics.PUSH_DELIVERED, metrics.PUSH_RETRIES, metrics.QUOTA_REFUSED,
                 metrics.AUTH_REFUSED):
        assert name in body, name
    # Per-operation and per-state breakdowns come from SEARCH (graphs may search).
    assert "SEARCH(" in body and "{A2AKit,Service,Operation}" in body
    # Its alarm widget lists the new alarms with the others.
    for alarm_id in push_template.find_resources("AWS::CloudWatch::Alarm"):
        assert alarm_id in body, alarm_id
