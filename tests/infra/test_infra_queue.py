"""Queue mode in the template: the queue and its dead-letter queue, the worker and the sweeper
functions, least-privilege queue grants, the settings each function gets, the DLQ alarm."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aws_cdk.assertions import Match, Template

from a2akit.settings import ENV
from infra.config import ConfigError, DeployConfig
from infra.jsonrpc_api import HANDLER
from infra.queue_timing import MIN_MAX_RECEIVES, VISIBILITY_FACTOR, QueueTiming
from infra.sweeper import SWEEPER_HANDLER
from infra.worker import WORKER_HANDLER
from tests.support.template import (
    CONTAINER,
    Synth,
    actions_of,
    environments,
    lambda_function,
    role_of,
    statements,
    task_role,
    tls_only_queues,
)

pytestmark = pytest.mark.slow

_SEND = {"sqs:SendMessage"}  # the kit only sends (tests/rehearsal records it)
_CONSUME = {"sqs:ReceiveMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueUrl",
            "sqs:DeleteMessage", "sqs:GetQueueAttributes"}


def _failed_sweeps(template: Template) -> str:
    """The id of the sweeper's queue (its asynchronous invocations' on-failure destination)."""
    (config,) = template.find_resources("AWS::Lambda::EventInvokeConfig").values()
    queue_id: str = config["Properties"]["DestinationConfig"]["OnFailure"]["Destination"][
        "Fn::GetAtt"][0]
    return queue_id


def _queues(template: Template) -> tuple[str, dict[str, Any], str, dict[str, Any]]:
    """(task queue id, its properties, dead-letter queue id, its properties)."""
    queues = template.find_resources("AWS::SQS::Queue")
    queues.pop(_failed_sweeps(template))
    assert len(queues) == 2
    (task_id,) = [key for key, q in queues.items() if "RedrivePolicy" in q["Properties"]]
    (dlq_id,) = [key for key in queues if key != task_id]
    return task_id, queues[task_id]["Properties"], dlq_id, queues[dlq_id]["Properties"]


def test_the_queue_has_a_dead_letter_queue_encryption_and_tls(template: Template) -> None:
    _, worker = lambda_function(template, WORKER_HANDLER)
    task_id, task, dlq_id, dlq = _queues(template)
    # AWS's guidance for SQS event sources: at least 5 receives, and a visibility timeout of
    # at least six times the function's timeout.
    assert task["RedrivePolicy"] == {
        "deadLetterTargetArn": {"Fn::GetAtt": [dlq_id, "Arn"]}, "maxReceiveCount": 5}
    assert task["VisibilityTimeout"] >= 6 * worker["Timeout"]
    assert task["VisibilityTimeout"] == 5400 and worker["Timeout"] == 900
    for queue in (task, dlq):
        assert queue["SqsManagedSseEnabled"] is True
    assert dlq["MessageRetentionPeriod"] == 14 * 86400
    assert tls_only_queues(template) == {task_id, dlq_id, _failed_sweeps(template)}


def test_the_worker_consumes_one_record_at_a_time_with_partial_failures(
    template: Template
) -> None:
    task_id, _, _, _ = _queues(template)
    worker_id, worker = lambda_function(template, WORKER_HANDLER)
    assert worker["Architectures"] == ["arm64"] and worker["Runtime"] == "python3.13"
    template.has_resource_properties("AWS::Lambda::EventSourceMapping", {
        "FunctionName": {"Ref": worker_id},
        "EventSourceArn": {"Fn::GetAtt": [task_id, "Arn"]},
        "BatchSize": 1,
        "FunctionResponseTypes": ["ReportBatchItemFailures"],
    })
    variables = worker["Environment"]["Variables"]
    assert variables[ENV.QUEUE_MAX_RECEIVES] == "5"
    assert variables[ENV.LEASE_SECONDS] == "30"
    assert {ENV.TABLE, ENV.AGENT} <= set(variables)
    assert ENV.EXECUTION not in variables  # the worker runs agents; it never enqueues
    assert ENV.JWT_ISSUER not in variables  # nor does it take calls: no sign-in settings


def test_the_sweeper_runs_every_minute(template: Template) -> None:
    sweeper_id, sweeper = lambda_function(template, SWEEPER_HANDLER)
    assert set(sweeper["Environment"]["Variables"]) == {ENV.TABLE}
    template.has_resource_properties("AWS::Events::Rule", {
        "ScheduleExpression": "rate(1 minute)",
        "State": "ENABLED",
        "Targets": [Match.object_like({"Arn": {"Fn::GetAtt": [sweeper_id, "Arn"]}})],
    })
    template.has_resource_properties("AWS::Lambda::Permission", {
        "Action": "lambda:InvokeFunction", "Principal": "events.amazonaws.com",
        "FunctionName": {"Fn::GetAtt": [sweeper_id, "Arn"]}})


def test_a_failed_sweep_is_kept_and_alarmed(template: Template) -> None:
    """The schedule invokes the sweeper asynchronously: no retry (the next sweep is a minute
    later, and one older than a minute is dropped), and an invocation that failed, or that
    EventBridge could not deliver, leaves a record in the sweeper's own queue, which alarms."""
    sweeper_id, sweeper = lambda_function(template, SWEEPER_HANDLER)
    (config,) = [c["Properties"] for c in template.find_resources(
        "AWS::Lambda::EventInvokeConfig").values()
        if c["Properties"]["FunctionName"] == {"Ref": sweeper_id}]
    assert config["MaximumRetryAttempts"] == 0
    assert config["MaximumEventAgeInSeconds"] == 60
    failed_id = config["DestinationConfig"]["OnFailure"]["Destination"]["Fn::GetAtt"][0]
    failed = template.to_json()["Resources"][failed_id]
    assert failed["Type"] == "AWS::SQS::Queue"
    assert failed["Properties"]["SqsManagedSseEnabled"] is True
    assert failed["Properties"]["MessageRetentionPeriod"] == 14 * 86400
    assert failed_id in tls_only_queues(template)
    (rule,) = template.find_resources("AWS::Events::Rule").values()
    (target,) = rule["Properties"]["Targets"]
    assert target["RetryPolicy"]["MaximumRetryAttempts"] == 0
    assert target["DeadLetterConfig"] == {"Arn": {"Fn::GetAtt": [failed_id, "Arn"]}}
    # Lambda sends with the function's role: SendMessage on that queue and nothing else.
    assert [(s["Action"], s["Resource"]) for s in statements(template, role_of(sweeper))
            if str(s["Action"]).startswith("sqs:")] == [
        ("sqs:SendMessage", {"Fn::GetAtt": [failed_id, "Arn"]})]
    template.has_resource_properties("AWS::CloudWatch::Alarm", {
        "MetricName": "ApproximateNumberOfMessagesVisible", "Namespace": "AWS/SQS",
        "Dimensions": [{"Name": "QueueName",
                        "Value": {"Fn::GetAtt": [failed_id, "QueueName"]}}],
        "Threshold": 1, "AlarmActions": Match.any_value()})


def test_queue_grants_are_least_privilege(template: Template) -> None:
    _, front = lambda_function(template, HANDLER)
    _, worker = lambda_function(template, WORKER_HANDLER)
    _, sweeper = lambda_function(template, SWEEPER_HANDLER)
    assert actions_of(template, role_of(front), "sqs:") == _SEND
    assert actions_of(template, role_of(worker), "sqs:") == _CONSUME
    assert actions_of(template, role_of(sweeper), "sqs:") == _SEND  # its failed sweeps
    # The gRPC container enqueues by default (its agents outlive its deploys).
    assert actions_of(template, task_role(template), "sqs:") == _SEND


def test_the_dead_letter_queue_has_an_alarm(template: Template) -> None:
    _, _, dlq_id, _ = _queues(template)
    template.has_resource_properties("AWS::CloudWatch::Alarm", {
        "MetricName": "ApproximateNumberOfMessagesVisible",
        "Namespace": "AWS/SQS",
        "Dimensions": [{"Name": "QueueName", "Value": {"Fn::GetAtt": [dlq_id, "QueueName"]}}],
        "Threshold": 1,
        "AlarmActions": Match.any_value(),
    })
    assert {"QueueUrl", "DeadLetterQueueUrl"} <= set(template.find_outputs("*"))


def test_inline_context_deploys_no_queue_but_keeps_the_sweeper(
    synth: Synth, empty_bundle: Path, tmp_path: Path
) -> None:
    _, template, _ = synth(empty_bundle, tmp_path, **{"a2a:execution": "inline",
                                                      "a2a:grpcExecution": "inline"})
    assert list(template.find_resources("AWS::SQS::Queue")) == [_failed_sweeps(template)]
    _, front = lambda_function(template, HANDLER)
    assert ENV.EXECUTION not in front["Environment"]["Variables"]
    assert [r["Properties"]["Handler"]
            for r in template.find_resources("AWS::Lambda::Function").values()
            if r["Properties"]["Handler"] == WORKER_HANDLER] == []
    lambda_function(template, SWEEPER_HANDLER)


def test_the_container_may_enqueue(synth: Synth, empty_bundle: Path, tmp_path: Path) -> None:
    _, template, _ = synth(empty_bundle, tmp_path, **{"a2a:execution": "inline",
                                                      "a2a:grpcExecution": "queue",
                                                      "a2a:workerTimeoutSeconds": "300"})
    task_id, task, _, _ = _queues(template)
    assert task["VisibilityTimeout"] == 6 * 300
    environment = environments(template)[CONTAINER]
    assert environment[ENV.EXECUTION] == "queue"
    assert environment[ENV.QUEUE_URL] == {"Ref": task_id}
    # Five receives of 1800 s each, plus a minute: then a queued task counts as lost.
    assert environment[ENV.QUEUE_GRACE_SECONDS] == str(5 * 1800 + 60)
    assert actions_of(template, task_role(template), "sqs:") == _SEND
    _, front = lambda_function(template, HANDLER)
    assert actions_of(template, role_of(front), "sqs:") == set()


@pytest.mark.parametrize(("key", "value"), [
    ("a2a:execution", "lambda"),
    ("a2a:grpcExecution", "later"),
    ("a2a:workerTimeoutSeconds", 901),
    ("a2a:workerTimeoutSeconds", "long"),
    ("a2a:leaseSeconds", 1),
    ("a2a:queueMaxReceives", 0),
    ("a2a:queueMaxReceives", 4),  # below AWS's advice for SQS event sources
])
def test_bad_queue_context_values_name_their_key(key: str, value: Any) -> None:
    with pytest.raises(ConfigError, match=key):
        DeployConfig.from_context({"a2a:grpc": False, key: value}.get)


def test_the_grace_and_the_queue_come_from_one_rule(template: Template) -> None:
    # Every number the processes read agrees with the queue's own: the front door's grace
    # covers every receive's visibility timeout, the worker's count is the redrive's.
    _, task, _, _ = _queues(template)
    _, worker = lambda_function(template, WORKER_HANDLER)
    _, front = lambda_function(template, HANDLER)
    receives = task["RedrivePolicy"]["maxReceiveCount"]
    assert worker["Environment"]["Variables"][ENV.QUEUE_MAX_RECEIVES] == str(receives)
    grace = int(front["Environment"]["Variables"][ENV.QUEUE_GRACE_SECONDS])
    assert grace >= receives * task["VisibilityTimeout"]
    assert grace == QueueTiming(worker["Timeout"], receives).grace_seconds


def test_queue_timing_follows_aws_guidance() -> None:
    timing = QueueTiming(120, MIN_MAX_RECEIVES)
    assert timing.visibility_timeout_seconds == VISIBILITY_FACTOR * 120 == 720
    assert timing.grace_seconds == 5 * 720 + 60
    assert DeployConfig().queue_max_receives == MIN_MAX_RECEIVES == 5
