"""The gRPC side for production: at least two tasks across two AZs with target-tracking
autoscaling, a NAT gateway per AZ, and the container enqueueing by default so its deploys do
not cut agents short. Asserted by type and properties."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aws_cdk.assertions import Template

from a2akit.settings import ENV, QUEUE
from infra.config import CONTEXT
from infra.grpc_service import (
    CPU_TARGET_PERCENT,
    IDLE_TIMEOUT_MARGIN_SECONDS,
    STOP_TIMEOUT_MARGIN_SECONDS,
)
from tests.support.template import CONTAINER, Synth, environments, only

pytestmark = pytest.mark.slow


def _routes_to_nat(template: Template) -> dict[str, Any]:
    """Route table -> the NAT gateway its default route uses."""
    return {route["Properties"]["RouteTableId"]["Ref"]: route["Properties"]["NatGatewayId"]
            for route in template.find_resources("AWS::EC2::Route").values()
            if "NatGatewayId" in route["Properties"]}


def test_two_to_six_tasks_scale_on_cpu(template: Template) -> None:
    target = only(template, "AWS::ApplicationAutoScaling::ScalableTarget")["Properties"]
    assert (target["MinCapacity"], target["MaxCapacity"]) == (2, 6)
    assert target["ScalableDimension"] == "ecs:service:DesiredCount"
    policy = only(template, "AWS::ApplicationAutoScaling::ScalingPolicy")["Properties"]
    assert policy["PolicyType"] == "TargetTrackingScaling"
    tracking = policy["TargetTrackingScalingPolicyConfiguration"]
    assert tracking["PredefinedMetricSpecification"] == {
        "PredefinedMetricType": "ECSServiceAverageCPUUtilization"}
    assert tracking["TargetValue"] == CPU_TARGET_PERCENT
    # No desired count in the service: a deploy keeps what autoscaling chose.
    assert "DesiredCount" not in only(template, "AWS::ECS::Service")["Properties"]


def test_the_task_counts_are_context_keys(synth: Synth, empty_bundle: Path,
                                          tmp_path: Path) -> None:
    _, template, _ = synth(empty_bundle, tmp_path, **{CONTEXT.GRPC_MIN_TASKS: "3",
                                                      CONTEXT.GRPC_MAX_TASKS: "10"})
    target = only(template, "AWS::ApplicationAutoScaling::ScalableTarget")["Properties"]
    assert (target["MinCapacity"], target["MaxCapacity"]) == (3, 10)


def test_tasks_run_in_two_azs_each_with_its_own_nat_gateway(template: Template) -> None:
    subnets = template.find_resources("AWS::EC2::Subnet")
    service = only(template, "AWS::ECS::Service")["Properties"]
    task_subnets = [ref["Ref"] for ref in
                    service["NetworkConfiguration"]["AwsvpcConfiguration"]["Subnets"]]
    zones = {str(subnets[s]["Properties"]["AvailabilityZone"]) for s in task_subnets}
    assert len(task_subnets) == 2 and len(zones) == 2
    template.resource_count_is("AWS::EC2::NatGateway", 2)
    associations = {a["Properties"]["SubnetId"]["Ref"]: a["Properties"]["RouteTableId"]["Ref"]
                    for a in template.find_resources(
                        "AWS::EC2::SubnetRouteTableAssociation").values()}
    routes = _routes_to_nat(template)
    # Each AZ's private subnet leaves through a NAT gateway of its own.
    assert len({str(routes[associations[s]]) for s in task_subnets}) == 2


def test_one_nat_gateway_when_asked(synth: Synth, empty_bundle: Path, tmp_path: Path) -> None:
    _, template, _ = synth(empty_bundle, tmp_path, **{CONTEXT.NAT_GATEWAYS: "1"})
    template.resource_count_is("AWS::EC2::NatGateway", 1)


def test_dynamodb_and_s3_stay_off_the_nat_gateways(template: Template) -> None:
    endpoints = [e["Properties"] for e in
                 template.find_resources("AWS::EC2::VPCEndpoint").values()]
    services = sorted(str(e["ServiceName"]) for e in endpoints)
    assert len(services) == 2 and any("dynamodb" in s for s in services) and any(
        "s3" in s for s in services)
    assert all(e["VpcEndpointType"] == "Gateway" for e in endpoints)


def test_the_container_enqueues_by_default(template: Template) -> None:
    environment = environments(template)[CONTAINER]
    assert environment[ENV.EXECUTION] == QUEUE
    assert ENV.QUEUE_URL in environment and ENV.QUEUE_GRACE_SECONDS in environment


def test_streams_end_at_their_budget_not_at_the_load_balancer(template: Template) -> None:
    """ALBs forward no HTTP/2 PINGs: an idle SubscribeToTask lives only as long as the idle
    timeout, and a deploy cuts what is still open when draining ends. Both follow the
    container's stream budget, and ECS waits out the server's shutdown grace after SIGTERM."""
    (container,) = only(template, "AWS::ECS::TaskDefinition")["Properties"][
        "ContainerDefinitions"]
    variables = {v["Name"]: v["Value"] for v in container["Environment"]}
    budget = float(variables[ENV.STREAM_BUDGET_SECONDS])
    grace = float(variables[ENV.SHUTDOWN_GRACE_SECONDS])
    assert budget == 300 and grace == 20
    attributes = {a["Key"]: a["Value"] for a in only(
        template, "AWS::ElasticLoadBalancingV2::LoadBalancer")["Properties"][
        "LoadBalancerAttributes"]}
    assert int(attributes["idle_timeout.timeout_seconds"]) == budget + IDLE_TIMEOUT_MARGIN_SECONDS
    group = {a["Key"]: a["Value"] for a in only(
        template, "AWS::ElasticLoadBalancingV2::TargetGroup")["Properties"][
        "TargetGroupAttributes"]}
    assert int(group["deregistration_delay.timeout_seconds"]) == budget
    assert container["StopTimeout"] == grace + STOP_TIMEOUT_MARGIN_SECONDS <= 120
