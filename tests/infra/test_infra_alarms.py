"""Data protection and operations in the template: the table's deletion protection, the alarms
on every signal of the issue's list, the dashboard, and the warning (or error) when nobody
subscribes to the alarm topic."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App
from aws_cdk.assertions import Template

from infra.alarms import (
    DOOR_LATENCY_ALARM_FRACTION,
    ECS_UTILIZATION_ALARM_PERCENT,
    QUEUE_AGE_ALARM_SECONDS,
)
from infra.app import build_app
from infra.config import CONTEXT, ConfigError
from infra.jsonrpc_api import HANDLER
from infra.sweeper import SWEEPER_HANDLER
from infra.worker import WORKER_HANDLER
from tests.infra.conftest import CDK_CONTEXT
from tests.support.template import Synth, lambda_function, logical_id, only

pytestmark = pytest.mark.slow


def _alarms(template: Template) -> list[dict[str, Any]]:
    return [alarm["Properties"]
            for alarm in template.find_resources("AWS::CloudWatch::Alarm").values()]


def _alarm(template: Template, namespace: str, metric: str,
           dimension: dict[str, Any] | None = None) -> dict[str, Any]:
    """The one alarm on `namespace`/`metric` (with this dimension, if given)."""
    (found,) = [alarm for alarm in _alarms(template)
                if alarm.get("Namespace") == namespace and alarm.get("MetricName") == metric
                and (dimension is None or dimension in alarm.get("Dimensions", []))]
    assert found["AlarmActions"] == [{"Ref": logical_id(template, "AWS::SNS::Topic")}]
    return found


def _function_dimension(template: Template, handler: str) -> dict[str, Any]:
    function_id, _ = lambda_function(template, handler)
    return {"Name": "FunctionName", "Value": {"Ref": function_id}}


def test_the_table_is_protected_from_deletion(
    template: Template, synth: Synth, empty_bundle: Path, tmp_path: Path
) -> None:
    table = only(template, "AWS::DynamoDB::Table")
    assert table["Properties"]["DeletionProtectionEnabled"] is True
    assert table["DeletionPolicy"] == "Retain"
    _, test_stack, _ = synth(empty_bundle, tmp_path, **{CONTEXT.DELETION_PROTECTION: "false"})
    assert only(test_stack, "AWS::DynamoDB::Table")["Properties"].get(
        "DeletionProtectionEnabled") in (None, False)


def test_alarms_on_the_queue_the_worker_and_the_sweeper(template: Template) -> None:
    (queue_id,) = [key for key, queue in template.find_resources("AWS::SQS::Queue").items()
                   if "RedrivePolicy" in queue["Properties"]]
    age = _alarm(template, "AWS/SQS", "ApproximateAgeOfOldestMessage",
                 {"Name": "QueueName", "Value": {"Fn::GetAtt": [queue_id, "QueueName"]}})
    assert (age["Statistic"], age["Threshold"]) == ("Maximum", QUEUE_AGE_ALARM_SECONDS)
    worker = _function_dimension(template, WORKER_HANDLER)
    _, worker_function = lambda_function(template, WORKER_HANDLER)
    assert _alarm(template, "AWS/Lambda", "Throttles", worker)["Threshold"] == 1
    duration = _alarm(template, "AWS/Lambda", "Duration", worker)
    # Near the worker's timeout (ms): agents about to be cut off.
    assert duration["Statistic"] == "Maximum"
    assert 0.5 * worker_function["Timeout"] * 1000 < duration["Threshold"] < (
        worker_function["Timeout"] * 1000)
    assert _alarm(template, "AWS/Lambda", "Errors",
                  _function_dimension(template, SWEEPER_HANDLER))["Threshold"] == 1


def test_alarms_on_the_door(template: Template) -> None:
    api = {"Name": "ApiName", "Value": only(template, "AWS::ApiGateway::RestApi")[
        "Properties"]["Name"]}
    assert _alarm(template, "AWS/ApiGateway", "5XXError", api)["Statistic"] == "Sum"
    latency = _alarm(template, "AWS/ApiGateway", "Latency", api)
    _, front = lambda_function(template, HANDLER)
    # p90 at three quarters of the stream budget (20 s in cdk.json), in ms: it can fire
    # while requests still end by themselves, not only once they time out.
    assert latency["ExtendedStatistic"] == "p90"
    assert latency["Threshold"] == DOOR_LATENCY_ALARM_FRACTION * 20_000 < 20_000
    assert latency["Threshold"] < front["Timeout"] * 1000


def test_alarms_on_the_grpc_tasks(template: Template, synth: Synth, empty_bundle: Path,
                                  tmp_path: Path) -> None:
    for metric in ("CPUUtilization", "MemoryUtilization"):
        alarm = _alarm(template, "AWS/ECS", metric)
        assert alarm["Threshold"] == ECS_UTILIZATION_ALARM_PERCENT
        assert alarm["EvaluationPeriods"] == 3
    _, without, _ = synth(empty_bundle, tmp_path, **{CONTEXT.GRPC: "false"})
    assert not [a for a in _alarms(without) if a.get("Namespace") == "AWS/ECS"]


def test_the_dashboard_shows_what_the_alarms_watch(template: Template) -> None:
    body = json.dumps(only(template, "AWS::CloudWatch::Dashboard")["Properties"][
        "DashboardBody"])
    for figure in ("5XXError", "Latency", "ApproximateAgeOfOldestMessage", "Throttles",
                   "Duration", "ConsumedWriteCapacityUnits", "CPUUtilization",
                   "MemoryUtilization", "UnHealthyHostCount"):
        assert figure in body, figure
    # Its alarm widget lists every alarm of the stack.
    for alarm_id in template.find_resources("AWS::CloudWatch::Alarm"):
        assert alarm_id in body, alarm_id


def test_synth_warns_once_when_nobody_subscribes(
    cdk_context: dict[str, Any], empty_bundle: Path, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert not cdk_context.get(CONTEXT.ALARM_EMAIL)
    build_app(App(context=cdk_context, outdir=str(tmp_path / "a")),
              lambda_bundle=str(empty_bundle))
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert CONTEXT.ALARM_EMAIL in line and CONTEXT.REQUIRE_ALARM_SUBSCRIBER in line
    app = App(context={**cdk_context, CONTEXT.ALARM_EMAIL: "ops@example.com"},
              outdir=str(tmp_path / "b"))
    build_app(app, lambda_bundle=str(empty_bundle))
    assert capsys.readouterr().err == ""
    (stack,) = app.synth().stacks
    Template.from_json(stack.template).has_resource_properties(
        "AWS::SNS::Subscription", {"Protocol": "email", "Endpoint": "ops@example.com"})


def test_a_required_subscriber_stops_the_synth(
    cdk_context: dict[str, Any], empty_bundle: Path, tmp_path: Path
) -> None:
    app = App(context={**cdk_context, CONTEXT.REQUIRE_ALARM_SUBSCRIBER: "true"},
              outdir=str(tmp_path))
    with pytest.raises(ConfigError, match=CONTEXT.ALARM_EMAIL):
        build_app(app, lambda_bundle=str(empty_bundle))


def test_cloudwatch_may_publish_to_the_alarm_topic(template: Template) -> None:
    """enforce_ssl makes the CDK write a topic policy, which replaces SNS's default one: without
    an Allow for CloudWatch, every alarm action fails with "not authorized to perform
    SNS:Publish" and nobody is ever notified."""
    topic_ref = {"Ref": logical_id(template, "AWS::SNS::Topic")}
    policy = only(template, "AWS::SNS::TopicPolicy")["Properties"]
    assert policy["Topics"] == [topic_ref]
    (allow,) = [statement for statement in policy["PolicyDocument"]["Statement"]
                if statement["Effect"] == "Allow"]
    assert allow["Principal"] == {"Service": "cloudwatch.amazonaws.com"}
    assert allow["Action"] == "sns:Publish" and allow["Resource"] == topic_ref
    account = CDK_CONTEXT[CONTEXT.ACCOUNT]  # the stack's own account, from cdk.json
    assert allow["Condition"] == {"StringEquals": {"aws:SourceAccount": account}}
    # The TLS-only rule stays: it denies plain-HTTP publishes, CloudWatch's included.
    assert [s["Effect"] for s in policy["PolicyDocument"]["Statement"]].count("Deny") == 1
