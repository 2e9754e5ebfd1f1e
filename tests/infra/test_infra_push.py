"""Push notification delivery in the template (`a2a:push`): the stream dispatcher, its
filtered stream mapping, its queues and alarms, its read-only grants, and the push settings
on every process; and with push off, none of it. Asserted by type and properties."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aws_cdk.assertions import Template

from a2akit.push.metric import FAILED_METRIC, METRIC_NAMESPACE
from a2akit.settings import ENV, STREAM, Settings
from infra import app as app_module
from infra import bundle
from infra.config import ConfigError, DeployConfig
from infra.jsonrpc_api import HANDLER
from infra.lock import read_lock, requirements_text
from infra.push import (
    DISPATCHER_TIMEOUT_SECONDS,
    ITERATOR_AGE_ALARM_SECONDS,
    PUSH_HANDLER,
    READ_ACTIONS,
)
from infra.push_filter import PUSH_FILTER_PATTERN
from infra.stack import A2AStack
from infra.sweeper import SWEEPER_HANDLER
from infra.worker import WORKER_HANDLER
from tests.infra.conftest import PUSH_CONTEXT
from tests.support.template import (
    Synth,
    as_list,
    environments,
    lambda_function,
    logical_id,
    role_of,
    statements,
    tls_only_queues,
)

pytestmark = pytest.mark.slow

_PUSH_ENVIRONMENT = {ENV.PUSH_NOTIFICATIONS: "true", ENV.PUSH_DELIVERY: STREAM}
_STREAM_READ = {"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"}


def _table_id(template: Template) -> str:
    return logical_id(template, "AWS::DynamoDB::Table")


def _push_queues(template: Template) -> tuple[str, str]:
    """(dead-letter queue id, failed-batches queue id): what the dispatcher's environment and
    its mapping's on-failure destination name."""
    _, dispatcher = lambda_function(template, PUSH_HANDLER)
    dlq_id: str = dispatcher["Environment"]["Variables"][ENV.PUSH_DLQ_URL]["Ref"]
    (mapping,) = _push_mappings(template)
    failed_id: str = mapping["DestinationConfig"]["OnFailure"]["Destination"]["Fn::GetAtt"][0]
    return dlq_id, failed_id


def _push_mappings(template: Template) -> list[dict[str, Any]]:
    return [m["Properties"] for m in template.find_resources(
                "AWS::Lambda::EventSourceMapping").values()
            if m["Properties"]["EventSourceArn"] == {
                "Fn::GetAtt": [_table_id(template), "StreamArn"]}]


# --- the dispatcher and its mapping ------------------------------------------------------


def test_the_dispatcher_is_a_bundle_function_outside_any_vpc(push_template: Template) -> None:
    _, dispatcher = lambda_function(push_template, PUSH_HANDLER)
    assert dispatcher["Architectures"] == ["arm64"] and dispatcher["Runtime"] == "python3.13"
    assert dispatcher["Timeout"] == DISPATCHER_TIMEOUT_SECONDS == 300
    assert dispatcher["TracingConfig"] == {"Mode": "Active"}
    # Webhooks are on the internet; the kit's SSRF guard keeps it off private ranges.
    assert "VpcConfig" not in dispatcher
    assert "SnapStart" not in dispatcher
    assert "ReservedConcurrentExecutions" not in dispatcher
    dlq_id, _ = _push_queues(push_template)
    assert dispatcher["Environment"]["Variables"] == {
        ENV.TABLE: {"Ref": _table_id(push_template)},
        ENV.PUSH_DLQ_URL: {"Ref": dlq_id},
        **_PUSH_ENVIRONMENT,
    }
    # One delivery's worst case with the default retries fits well inside the timeout.
    waits = sum(min(Settings.push_backoff_seconds * 2**n, Settings.push_backoff_cap_seconds)
                for n in range(Settings.push_attempts - 1))
    worst = Settings.push_attempts * Settings.push_timeout_seconds + waits
    assert worst < DISPATCHER_TIMEOUT_SECONDS


def test_the_stream_mapping_filters_event_inserts_and_fails_records_singly(
    push_template: Template,
) -> None:
    dispatcher_id, _ = lambda_function(push_template, PUSH_HANDLER)
    _, failed_id = _push_queues(push_template)
    (mapping,) = _push_mappings(push_template)
    assert mapping["FunctionName"] == {"Ref": dispatcher_id}
    (criteria,) = mapping["FilterCriteria"]["Filters"]
    assert json.loads(criteria["Pattern"]) == PUSH_FILTER_PATTERN
    assert mapping["StartingPosition"] == "LATEST"
    assert mapping["BatchSize"] == 100
    assert 0 < mapping["MaximumBatchingWindowInSeconds"] <= 1
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert mapping["BisectBatchOnFunctionError"] is True
    # Bounded: a poisoned batch is given up on (into the failed-batches queue), not retried
    # until it leaves the stream 24 hours later while the shard waits.
    assert 0 < mapping["MaximumRetryAttempts"] <= 10
    assert 60 <= mapping["MaximumRecordAgeInSeconds"] <= 6 * 3600
    assert mapping["ParallelizationFactor"] == 10
    assert mapping["DestinationConfig"] == {
        "OnFailure": {"Destination": {"Fn::GetAtt": [failed_id, "Arn"]}}}


def test_the_push_settings_reach_processes_only_once_the_mapping_exists(
    push_template: Template,
) -> None:
    (mapping_id,) = [key for key, m in push_template.find_resources(
        "AWS::Lambda::EventSourceMapping").items()
        if m["Properties"]["EventSourceArn"] == {
            "Fn::GetAtt": [_table_id(push_template), "StreamArn"]}]
    writers = [key for key, r in push_template.find_resources("AWS::Lambda::Function").items()
               if r["Properties"]["Handler"] in (HANDLER, WORKER_HANDLER, SWEEPER_HANDLER)]
    writers += list(push_template.find_resources("AWS::ECS::TaskDefinition"))
    resources = push_template.to_json()["Resources"]
    assert len(writers) == 4
    for writer in writers:
        assert mapping_id in resources[writer]["DependsOn"], writer


def test_the_dispatcher_holds_the_mapping_it_made(
    synth: Synth, empty_bundle: Path, tmp_path: Path
) -> None:
    """PushDispatcher.mapping is the stream mapping in the template (a reference, not a search
    of the function's children), under the id DynamoEventSource gave it: deployed stacks keep
    their mapping."""
    app, template, _ = synth(empty_bundle, tmp_path, **PUSH_CONTEXT)
    (stack,) = (child for child in app.node.children if isinstance(child, A2AStack))
    assert stack.push is not None
    mapping = stack.push.mapping
    assert mapping.node.id.startswith("DynamoDBEventSource:")
    (mapping_id,) = [key for key, m in template.find_resources(
        "AWS::Lambda::EventSourceMapping").items()
        if m["Properties"]["EventSourceArn"] == {"Fn::GetAtt": [_table_id(template), "StreamArn"]}]
    assert stack.get_logical_id(mapping.node.default_child) == mapping_id  # type: ignore[arg-type]


# --- settings on every process ------------------------------------------------------------


def test_every_process_gets_the_push_settings(push_template: Template) -> None:
    processes = environments(push_template)
    assert set(processes) == {HANDLER, WORKER_HANDLER, SWEEPER_HANDLER, PUSH_HANDLER,
                              "container"}
    for name, environment in processes.items():
        assert {k: environment.get(k) for k in _PUSH_ENVIRONMENT} == _PUSH_ENVIRONMENT, name
        # On AWS nothing loosens the SSRF guard.
        assert ENV.PUSH_ALLOW_HTTP not in environment, name
        assert ENV.PUSH_ALLOW_CIDRS not in environment, name
    # Only the dispatcher writes dead letters.
    assert [n for n, e in processes.items() if ENV.PUSH_DLQ_URL in e] == [PUSH_HANDLER]


def test_without_push_there_is_no_dispatcher_and_no_push_setting(template: Template) -> None:
    assert PUSH_HANDLER not in {r["Properties"]["Handler"] for r in
                                template.find_resources("AWS::Lambda::Function").values()}
    assert _push_mappings(template) == []
    for name, environment in environments(template).items():
        assert [k for k in environment if k.startswith("A2A_PUSH_")] == [], name
    assert not {"PushDeadLetterQueueUrl", "PushFailedBatchesQueueUrl"} & set(
        template.find_outputs("*"))
    assert not [a for a in template.find_resources("AWS::CloudWatch::Alarm").values()
                if a["Properties"].get("MetricName") in (FAILED_METRIC, "IteratorAge")]


# --- queues and alarms ---------------------------------------------------------------------


def test_the_push_queues_are_encrypted_tls_only_and_keep_14_days(
    push_template: Template,
) -> None:
    queue_ids = set(_push_queues(push_template))
    assert len(queue_ids) == 2
    queues = push_template.find_resources("AWS::SQS::Queue")
    for queue_id in queue_ids:
        assert queues[queue_id]["Properties"]["SqsManagedSseEnabled"] is True
        assert queues[queue_id]["Properties"]["MessageRetentionPeriod"] == 14 * 86400
    assert queue_ids <= tls_only_queues(push_template)
    assert {"PushDeadLetterQueueUrl", "PushFailedBatchesQueueUrl"} <= set(
        push_template.find_outputs("*"))


def test_push_alarms(push_template: Template) -> None:
    dispatcher_id, _ = lambda_function(push_template, PUSH_HANDLER)
    dlq_id, failed_id = _push_queues(push_template)
    (topic_id,) = push_template.find_resources("AWS::SNS::Topic")
    common = {"AlarmActions": [{"Ref": topic_id}], "EvaluationPeriods": 1,
              "ComparisonOperator": "GreaterThanOrEqualToThreshold"}
    for queue_id in (dlq_id, failed_id):
        push_template.has_resource_properties("AWS::CloudWatch::Alarm", {
            **common, "Namespace": "AWS/SQS", "MetricName": "ApproximateNumberOfMessagesVisible",
            "Statistic": "Maximum", "Threshold": 1,
            "Dimensions": [{"Name": "QueueName", "Value": {"Fn::GetAtt": [queue_id, "QueueName"]}}],
        })
    dimensions = [{"Name": "FunctionName", "Value": {"Ref": dispatcher_id}}]
    # The dispatcher's Embedded Metric Format count, by its function name (a2akit.push.metric).
    push_template.has_resource_properties("AWS::CloudWatch::Alarm", {
        **common, "Namespace": METRIC_NAMESPACE, "MetricName": FAILED_METRIC,
        "Statistic": "Sum", "Threshold": 1, "Dimensions": dimensions,
    })
    assert (METRIC_NAMESPACE, FAILED_METRIC) == ("A2AKit", "PushDeliveryFailed")
    push_template.has_resource_properties("AWS::CloudWatch::Alarm", {
        **common, "Namespace": "AWS/Lambda", "MetricName": "Errors", "Threshold": 1,
        "Dimensions": dimensions,
    })
    push_template.has_resource_properties("AWS::CloudWatch::Alarm", {
        **common, "Namespace": "AWS/Lambda", "MetricName": "IteratorAge",
        "Statistic": "Maximum", "Threshold": ITERATOR_AGE_ALARM_SECONDS * 1000,  # ms
        "Dimensions": dimensions,
    })


# --- least privilege -------------------------------------------------------------------


def test_the_dispatcher_only_reads_the_table_and_sends_to_its_queues(
    push_template: Template,
) -> None:
    _, dispatcher = lambda_function(push_template, PUSH_HANDLER)
    table_id = _table_id(push_template)
    dlq_id, failed_id = _push_queues(push_template)
    granted: dict[str, list[Any]] = {}
    for statement in statements(push_template, role_of(dispatcher)):
        assert statement["Effect"] == "Allow"
        for action in as_list(statement["Action"]):
            granted.setdefault(action, []).extend(as_list(statement["Resource"]))
    table_arn = {"Fn::GetAtt": [table_id, "Arn"]}
    assert sorted(READ_ACTIONS) == ["dynamodb:GetItem", "dynamodb:Query"]
    assert {action: granted[action] for action in READ_ACTIONS} == {
        action: [table_arn] for action in READ_ACTIONS}
    assert {action: granted[action] for action in _STREAM_READ} == {
        action: [{"Fn::GetAtt": [table_id, "StreamArn"]}] for action in _STREAM_READ}
    assert granted["dynamodb:ListStreams"] == ["*"]  # no resource-level permission exists
    assert sorted(granted["sqs:SendMessage"], key=str) == sorted(
        [{"Fn::GetAtt": [dlq_id, "Arn"]}, {"Fn::GetAtt": [failed_id, "Arn"]}], key=str)
    assert set(granted) == {*READ_ACTIONS, *_STREAM_READ, "dynamodb:ListStreams",
                            "sqs:SendMessage", "xray:PutTraceSegments",
                            "xray:PutTelemetryRecords", "logs:CreateLogStream",
                            "logs:PutLogEvents"}


def test_the_other_processes_need_no_new_permission(
    template: Template, push_template: Template,
) -> None:
    def actions(of: Template, handler: str) -> list[tuple[str, str]]:
        _, function = lambda_function(of, handler)
        return sorted((action, json.dumps(statement["Resource"], sort_keys=True))
                      for statement in statements(of, role_of(function))
                      for action in as_list(statement["Action"]))

    for handler in (HANDLER, WORKER_HANDLER, SWEEPER_HANDLER):
        assert actions(push_template, handler) == actions(template, handler), handler


# --- configuration and the bundle ----------------------------------------------------------


def test_push_is_off_unless_asked_for() -> None:
    assert DeployConfig.from_context({"a2a:grpc": False}.get).push is False
    assert DeployConfig.from_context({"a2a:grpc": False, "a2a:push": "true"}.get).push is True
    assert DeployConfig.from_context({"a2a:grpc": False, "a2a:push": True}.get).push is True
    with pytest.raises(ConfigError, match="a2a:push"):
        DeployConfig.from_context({"a2a:grpc": False, "a2a:push": "on"}.get)


@pytest.mark.parametrize("push", [False, True])
def test_the_bundle_installs_httpx_only_with_push(push: bool) -> None:
    _, entries = read_lock()
    names = {line.split("==")[0] for line in requirements_text(
        entries, bundle.bundle_groups(jwt=True, push=push)).splitlines()}
    assert ("httpx" in names) is push


def test_the_app_builds_the_bundle_with_httpx_when_push_is_on(
    cdk_context: dict[str, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    from aws_cdk import App

    calls: list[dict[str, Any]] = []

    def build(target: Path, **options: Any) -> int:
        calls.append(options)
        target.mkdir()
        (target / "placeholder.txt").write_text("unit tests only\n")
        return 0

    monkeypatch.setattr(app_module, "build_bundle", build)
    monkeypatch.setattr(app_module, "DEFAULT_DIR", tmp_path / "lambda")
    app = App(context={**cdk_context, "a2a:push": "true"}, outdir=str(tmp_path / "out"))
    app_module.build_app(app)
    assert [(c["jwt"], c["push"], c["agent"]) for c in calls] == [(True, True, None)]
