"""The long-task lane in the template (`a2a:longTasks`, infra/long_lane.py): the Fargate
worker service at zero tasks, scaled on its queue from 0, the task role's grants (the Lambda
worker's table and queue rights, its own task protection, nothing more), the stop timeout,
the queue with its dead-letter queue and alarms; and nothing of it in the default synth."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aws_cdk.assertions import Template

from a2akit.settings import ENV
from infra.config import ConfigError, DeployConfig
from infra.jsonrpc_api import HANDLER
from infra.long_lane import COMMAND, LANE_QUEUE_ACTIONS, VISIBILITY_TIMEOUT_SECONDS
from infra.worker import WORKER_HANDLER
from tests.support.template import (
    CONTAINER,
    Synth,
    actions_of,
    as_list,
    environments,
    lambda_function,
    role_of,
    statements,
    tls_only_queues,
)

pytestmark = pytest.mark.slow

LANE = "LongLane"


@pytest.fixture(scope="module")
def lane_template(synth: Synth, empty_bundle: Path,
                  tmp_path_factory: pytest.TempPathFactory) -> Iterator[Template]:
    """`-c a2a:longTasks=true` on cdk.json's context (gRPC on, as every synth here)."""
    _, template, _ = synth(empty_bundle, tmp_path_factory.mktemp("cdk_out_long"),
                           **{"a2a:longTasks": "true"})
    yield template


@pytest.fixture(scope="module")
def all_template(synth: Synth, empty_bundle: Path,
                 tmp_path_factory: pytest.TempPathFactory) -> Iterator[Template]:
    """Every task on the lane, in the gRPC side's VPC behind its NAT gateways, on Spot."""
    _, template, _ = synth(empty_bundle, tmp_path_factory.mktemp("cdk_out_long_all"),
                           **{"a2a:longTasks": "all", "a2a:longTasksNetwork": "nat",
                              "a2a:longTasksSpot": "true", "a2a:longTasksStopTimeout": "60"})
    yield template


def _lane(template: Template, resource_type: str) -> dict[str, dict[str, Any]]:
    return {key: value for key, value in template.find_resources(resource_type).items()
            if key.startswith(LANE)}


def _one(template: Template, resource_type: str) -> tuple[str, dict[str, Any]]:
    (found,) = _lane(template, resource_type).items()
    return found


def _queue_ids(template: Template) -> tuple[str, str]:
    queues = _lane(template, "AWS::SQS::Queue")
    (queue,) = [key for key, q in queues.items() if "RedrivePolicy" in q["Properties"]]
    (dlq,) = [key for key in queues if key != queue]
    return queue, dlq


def _lane_role(template: Template) -> str:
    _, task = _one(template, "AWS::ECS::TaskDefinition")
    role: str = task["Properties"]["TaskRoleArn"]["Fn::GetAtt"][0]
    return role


def _lane_environment(template: Template) -> dict[str, Any]:
    _, task = _one(template, "AWS::ECS::TaskDefinition")
    (container,) = task["Properties"]["ContainerDefinitions"]
    return {e["Name"]: e["Value"] for e in container["Environment"]}


def test_the_default_synth_has_no_long_lane(template: Template) -> None:
    assert not any(key.startswith(LANE) for key in template.to_json()["Resources"])
    for environment in environments(template).values():
        assert not [name for name in environment if name.startswith("A2A_LONG_")]
    assert not [s for s in statements(template) if "ecs:UpdateTaskProtection"
                in as_list(s["Action"])]


def test_the_worker_service_starts_at_zero_and_scales_on_its_queue_from_zero(
    lane_template: Template,
) -> None:
    service_id, service = _one(lane_template, "AWS::ECS::Service")
    assert service["Properties"]["DesiredCount"] == 0
    network = service["Properties"]["NetworkConfiguration"]["AwsvpcConfiguration"]
    # public (the default): a public IP in the lane's public subnets, no NAT gateway.
    assert network["AssignPublicIp"] == "ENABLED"
    assert all("PublicSubnet" in subnet["Ref"] for subnet in network["Subnets"])
    assert _lane(lane_template, "AWS::EC2::NatGateway") == {}
    ((group_id, group),) = _lane(lane_template, "AWS::EC2::SecurityGroup").items()
    assert network["SecurityGroups"] == [{"Fn::GetAtt": [group_id, "GroupId"]}]
    assert "SecurityGroupIngress" not in group["Properties"]
    assert not [rule for rule in lane_template.find_resources(
        "AWS::EC2::SecurityGroupIngress").values()
        if rule["Properties"].get("GroupId") == {"Fn::GetAtt": [group_id, "GroupId"]}]
    _, target = _one(lane_template, "AWS::ApplicationAutoScaling::ScalableTarget")
    assert target["Properties"]["MinCapacity"] == 0
    assert target["Properties"]["MaxCapacity"] == 10
    assert service_id in str(target["Properties"]["ResourceId"])
    queue_id, _ = _queue_ids(lane_template)
    # Both step policies' alarms read the long queue's waiting jobs, every minute.
    alarms = [alarm["Properties"] for key, alarm in
              _lane(lane_template, "AWS::CloudWatch::Alarm").items() if "QueueDepth" in key]
    assert len(alarms) == 2
    for alarm in alarms:
        assert alarm["MetricName"] == "ApproximateNumberOfMessagesVisible"
        assert alarm["Dimensions"] == [{"Name": "QueueName", "Value": {
            "Fn::GetAtt": [queue_id, "QueueName"]}}]
        assert alarm["Period"] == 60
    policies = [p["Properties"] for p in _lane(
        lane_template, "AWS::ApplicationAutoScaling::ScalingPolicy").values()]
    adjustments = sorted(step["ScalingAdjustment"] for p in policies
                         for step in p["StepScalingPolicyConfiguration"]["StepAdjustments"])
    assert adjustments[0] == -10 and adjustments[-1] > 0  # an empty queue: back to 0


def test_the_task_role_has_the_lambda_workers_rights_its_own_protection_and_nothing_more(
    lane_template: Template,
) -> None:
    role = _lane_role(lane_template)
    _, worker = lambda_function(lane_template, WORKER_HANDLER)
    worker_role = role_of(worker)
    assert actions_of(lane_template, role, "dynamodb:") == actions_of(
        lane_template, worker_role, "dynamodb:")
    # The queue: what the Lambda worker's event source may do, on the long queue only.
    assert set(LANE_QUEUE_ACTIONS) <= actions_of(lane_template, worker_role, "sqs:")
    queue_id, _ = _queue_ids(lane_template)
    cluster_id, _ = _one(lane_template, "AWS::ECS::Cluster")
    table_statements = []
    for statement in statements(lane_template, role):
        actions = set(as_list(statement["Action"]))
        if actions == set(LANE_QUEUE_ACTIONS):
            assert statement["Resource"] == {"Fn::GetAtt": [queue_id, "Arn"]}
        elif actions == {"ecs:UpdateTaskProtection"}:
            # Its own tasks: those of the lane's cluster.
            parts = statement["Resource"]["Fn::Join"][1]
            assert parts[-3:] == [":task/", {"Ref": cluster_id}, "/*"]
        else:
            assert {a.split(":")[0] for a in actions} == {"dynamodb"}, statement
            table_statements.append(statement)
    assert len(table_statements) == 1


def test_the_container_runs_the_long_worker_with_the_workers_settings_and_a_stop_timeout(
    lane_template: Template,
) -> None:
    _, task = _one(lane_template, "AWS::ECS::TaskDefinition")
    (container,) = task["Properties"]["ContainerDefinitions"]
    assert container["Command"] == COMMAND
    assert container["StopTimeout"] == 120
    assert container["ReadonlyRootFilesystem"] is True
    environment = _lane_environment(lane_template)
    queue_id, _ = _queue_ids(lane_template)
    assert environment[ENV.LONG_QUEUE_URL] == {"Ref": queue_id}
    assert environment[ENV.LONG_SHUTDOWN_GRACE_SECONDS] == "110"  # the margin for the writes
    worker = environments(lane_template)[WORKER_HANDLER]
    for name in (ENV.AGENT, ENV.TABLE, ENV.LEASE_SECONDS, ENV.QUEUE_MAX_RECEIVES):
        assert environment[name] == worker[name]


def test_the_long_queue_has_its_dead_letter_queue_encryption_tls_and_alarms(
    lane_template: Template,
) -> None:
    queue_id, dlq_id = _queue_ids(lane_template)
    queues = lane_template.find_resources("AWS::SQS::Queue")
    queue, dlq = queues[queue_id]["Properties"], queues[dlq_id]["Properties"]
    assert queue["RedrivePolicy"] == {"deadLetterTargetArn": {"Fn::GetAtt": [dlq_id, "Arn"]},
                                      "maxReceiveCount": 5}
    assert queue["VisibilityTimeout"] == VISIBILITY_TIMEOUT_SECONDS
    assert queue["SqsManagedSseEnabled"] is True and dlq["SqsManagedSseEnabled"] is True
    assert {queue_id, dlq_id} <= tls_only_queues(lane_template)
    alarms = {key: alarm["Properties"] for key, alarm in
              lane_template.find_resources("AWS::CloudWatch::Alarm").items()
              if key.startswith("AlarmsLong")}
    watched = {str(alarm.get("Dimensions")) for alarm in alarms.values()}
    assert any(dlq_id in dims for dims in watched) and any(queue_id in dims for dims in watched)
    assert all(alarm["AlarmActions"] for alarm in alarms.values())


def test_the_door_sends_long_tasks_to_the_long_queue(lane_template: Template) -> None:
    queue_id, _ = _queue_ids(lane_template)
    _, door = lambda_function(lane_template, HANDLER)
    environment = door["Environment"]["Variables"]
    assert environment[ENV.LONG_QUEUE_URL] == {"Ref": queue_id}
    assert ENV.LONG_TASKS not in environment  # declared by the agent, the default
    sends = [s for s in statements(lane_template, role_of(door))
             if s["Action"] == "sqs:SendMessage"]
    assert {"Fn::GetAtt": [queue_id, "Arn"]} in [r for s in sends for r in as_list(s["Resource"])]


def test_all_nat_and_spot(all_template: Template) -> None:
    queue_id, _ = _queue_ids(all_template)
    envs = environments(all_template)
    # Both bindings enqueue (the container's default too): every task to the lane.
    door = lambda_function(all_template, HANDLER)[1]["Environment"]["Variables"]
    grpc = [env for env in (
        {e["Name"]: e["Value"] for e in task["Properties"]["ContainerDefinitions"][0][
            "Environment"]}
        for key, task in all_template.find_resources("AWS::ECS::TaskDefinition").items()
        if not key.startswith(LANE))]
    assert len(grpc) == 1 and CONTAINER in envs
    for environment in (door, grpc[0]):
        assert environment[ENV.LONG_TASKS] == "all"
        assert environment[ENV.LONG_QUEUE_URL] == {"Ref": queue_id}
    _, service = _one(all_template, "AWS::ECS::Service")
    properties = service["Properties"]
    network = properties["NetworkConfiguration"]["AwsvpcConfiguration"]
    assert network["AssignPublicIp"] == "DISABLED"
    # The gRPC side's private subnets: no VPC of its own.
    assert all(subnet["Ref"].startswith("GrpcVpcPrivate") for subnet in network["Subnets"])
    assert _lane(all_template, "AWS::EC2::VPC") == {}
    assert properties["CapacityProviderStrategy"] == [
        {"CapacityProvider": "FARGATE_SPOT", "Weight": 1}]
    assert "LaunchType" not in properties
    _, task = _one(all_template, "AWS::ECS::TaskDefinition")
    assert task["Properties"]["ContainerDefinitions"][0]["StopTimeout"] == 60
    assert _lane_environment(all_template)[ENV.LONG_SHUTDOWN_GRACE_SECONDS] == "50"


@pytest.mark.parametrize(("context", "key"), [
    ({"a2a:longTasks": "maybe"}, "a2a:longTasks"),
    ({"a2a:longTasks": "true", "a2a:longTasksNetwork": "private"}, "a2a:longTasksNetwork"),
    ({"a2a:longTasks": "true", "a2a:longTasksStopTimeout": "121"}, "a2a:longTasksStopTimeout"),
    ({"a2a:longTasks": "true", "a2a:longTasksStopTimeout": "10"}, "a2a:longTasksStopTimeout"),
    ({"a2a:longTasks": "true", "a2a:longTasksMaxTasks": "0"}, "a2a:longTasksMaxTasks"),
    ({"a2a:longTasks": "true", "a2a:longTasksSpot": "yes"}, "a2a:longTasksSpot"),
    # Nothing would ever enqueue to it.
    ({"a2a:longTasks": "true", "a2a:execution": "inline"}, "a2a:longTasks"),
])
def test_bad_long_task_settings_name_their_key(context: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError, match=key):
        DeployConfig.from_context(context.get)


def test_long_task_context_is_parsed() -> None:
    assert DeployConfig.from_context({}.get).long_lane is False
    config = DeployConfig.from_context({"a2a:longTasks": True}.get)
    assert (config.long_tasks, config.long_tasks_network, config.long_tasks_spot,
            config.long_tasks_stop_timeout) == ("true", "public", False, 120)
    assert DeployConfig.from_context({"a2a:longTasks": "ALL"}.get).long_tasks == "all"
