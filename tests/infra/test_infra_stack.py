"""The synthesized template, asserted by resource type and properties (never logical ids)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aws_cdk import cx_api as cxapi
from aws_cdk.assertions import Match, Template

from a2akit.settings import ENV, Settings
from a2akit.store.table import (
    LEASE_INDEX,
    LIST_INDEX,
    LIST_INDEX_PK,
    LIST_INDEX_SK,
    LIST_INDEXES,
    PK,
    SK,
    TTL_ATTRIBUTE,
    create_table_kwargs,
)
from infra.config import ConfigError, DeployConfig
from infra.grpc_service import GRPC_HEALTH_CHECK_PATH, HTTPS_PORT
from infra.jsonrpc_api import ALIAS, HANDLER, STAGE
from infra.sweeper import SWEEPER_HANDLER
from infra.table import INDEX_ACTIONS, RUN_ACTIONS, SERVE_ACTIONS, SWEEP_ACTIONS
from infra.worker import WORKER_HANDLER
from tests.support.template import (
    Synth,
    as_list,
    lambda_function,
    logical_id,
    only,
    role_of,
    statements,
    task_role,
)

# The CDK synthesizes through its node process (jsii).
pytestmark = pytest.mark.slow


def _is_task_queue(resource: dict[str, Any]) -> bool:
    return "RedrivePolicy" in resource["Properties"]


# --- table -------------------------------------------------------------------------------


def test_table_matches_the_store_definition(template: Template) -> None:
    store = create_table_kwargs("unused")
    template.has_resource_properties(
        "AWS::DynamoDB::Table",
        {
            "BillingMode": "PAY_PER_REQUEST",
            "KeySchema": store["KeySchema"],
            "AttributeDefinitions": Match.array_equals(store["AttributeDefinitions"]),
            "GlobalSecondaryIndexes": Match.array_equals(store["GlobalSecondaryIndexes"]),
            "StreamSpecification": {"StreamViewType": "NEW_AND_OLD_IMAGES"},
            "TimeToLiveSpecification": {"AttributeName": TTL_ATTRIBUTE, "Enabled": True},
            "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
        },
    )
    assert {k["AttributeName"] for k in store["KeySchema"]} == {PK, SK}
    assert [i["IndexName"] for i in store["GlobalSecondaryIndexes"]] == [
        *(index for index, _ in LIST_INDEXES), LEASE_INDEX]
    assert LIST_INDEXES[0][0] == LIST_INDEX
    assert store["GlobalSecondaryIndexes"][0]["KeySchema"] == [
        {"AttributeName": LIST_INDEX_PK, "KeyType": "HASH"},
        {"AttributeName": LIST_INDEX_SK, "KeyType": "RANGE"},
    ]
    assert only(template, "AWS::DynamoDB::Table")["DeletionPolicy"] == "Retain"


# --- JSON-RPC Lambda and API -------------------------------------------------------------


def test_lambda_is_arm64_python_313_with_settings_from_env_names(
    template: Template, cdk_context: dict[str, Any]
) -> None:
    template.has_resource_properties(
        "AWS::Lambda::Function",
        {
            "Architectures": ["arm64"],
            "Runtime": "python3.13",
            "Handler": HANDLER,
            "Timeout": Match.any_value(),
            "Environment": {
                "Variables": Match.object_like(
                    {
                        ENV.AGENT: cdk_context.get("a2a:agent", Settings.agent),
                        ENV.TABLE: {"Ref": logical_id(template, "AWS::DynamoDB::Table")},
                        ENV.ALLOW_ANONYMOUS: "false",
                        ENV.STREAM_BUDGET_SECONDS: "20",
                        ENV.PUBLIC_URL: Match.any_value(),
                        ENV.GRPC_ADDRESS: Match.any_value(),
                        ENV.EXECUTION: "queue",
                        ENV.QUEUE_URL: {"Ref": logical_id(template, "AWS::SQS::Queue",
                                                           _is_task_queue)},
                        ENV.LEASE_SECONDS: "30",
                    }
                )
            },
        },
    )
    _, function = lambda_function(template, HANDLER)
    # The function outlives the stream budget (20 s) by the kit's budget margin (5 s), which it
    # keeps free of the remaining time: the stream lasts its whole budget.
    assert function["Timeout"] == 25


def test_snapstart_on_published_versions_and_callers_reach_the_alias(
    template: Template,
) -> None:
    function_id, function = lambda_function(template, HANDLER)
    assert function["SnapStart"] == {"ApplyOn": "PublishedVersions"}
    # Only the JSON-RPC function: the worker and the sweeper run without SnapStart.
    others = [r["Properties"] for r in template.find_resources("AWS::Lambda::Function").values()
              if r["Properties"].get("Handler") != HANDLER]
    assert others and not any("SnapStart" in p for p in others)
    version_id = logical_id(template, "AWS::Lambda::Version")
    template.has_resource_properties(
        "AWS::Lambda::Version", {"FunctionName": {"Ref": function_id}}
    )
    alias_id = logical_id(template, "AWS::Lambda::Alias")
    template.has_resource_properties(
        "AWS::Lambda::Alias",
        {
            "Name": ALIAS,
            "FunctionName": {"Ref": function_id},
            "FunctionVersion": {"Fn::GetAtt": [version_id, "Version"]},
        },
    )
    # SnapStart never applies to $LATEST: every method of the API must invoke the alias.
    methods = template.find_resources("AWS::ApiGateway::Method")
    assert methods
    for method in methods.values():
        uri = method["Properties"]["Integration"]["Uri"]["Fn::Join"][1]
        assert {"Ref": alias_id} in uri


# --- gRPC on Fargate behind the ALB ------------------------------------------------------


def test_grpc_target_group_sits_behind_an_https_listener(
    template: Template, cdk_context: dict[str, Any]
) -> None:
    group_id = logical_id(template, "AWS::ElasticLoadBalancingV2::TargetGroup")
    group = only(template, "AWS::ElasticLoadBalancingV2::TargetGroup")["Properties"]
    assert group["ProtocolVersion"] == "GRPC"
    assert group["Port"] == Settings.grpc_port
    assert group["TargetType"] == "ip"
    assert group["HealthCheckPath"] == GRPC_HEALTH_CHECK_PATH
    assert group["Matcher"] == {"GrpcCode": "0"}

    listeners = template.find_resources("AWS::ElasticLoadBalancingV2::Listener")
    # Every listener is HTTPS (an ALB forwards gRPC from nothing else), and one forwards here.
    assert listeners
    for listener in listeners.values():
        props = listener["Properties"]
        assert props["Protocol"] == "HTTPS"
        assert props["Port"] == HTTPS_PORT
        assert props["Certificates"] == [{"CertificateArn": cdk_context["a2a:grpcCertificateArn"]}]
    assert any(
        action.get("TargetGroupArn") == {"Ref": group_id}
        for listener in listeners.values()
        for action in listener["Properties"]["DefaultActions"]
    )
    template.has_resource_properties(
        "AWS::ElasticLoadBalancingV2::LoadBalancer", {"Scheme": "internal"}
    )


def test_fargate_service_runs_arm64_non_public(
    template: Template, cdk_context: dict[str, Any]
) -> None:
    template.has_resource_properties(
        "AWS::ECS::TaskDefinition",
        {
            "RuntimePlatform": {"CpuArchitecture": "ARM64", "OperatingSystemFamily": "LINUX"},
            "ContainerDefinitions": [
                Match.object_like(
                    {
                        "PortMappings": [Match.object_like({"ContainerPort": Settings.grpc_port})],
                        "ReadonlyRootFilesystem": True,
                        "Environment": Match.array_with(
                            [{"Name": ENV.GRPC_PORT, "Value": str(Settings.grpc_port)}]
                        ),
                    }
                )
            ],
        },
    )
    template.has_resource_properties(
        "AWS::ECS::Service",
        {
            "NetworkConfiguration": {
                "AwsvpcConfiguration": Match.object_like({"AssignPublicIp": "DISABLED"})
            },
        },
    )


# --- least privilege ---------------------------------------------------------------------


def _table_statements(template: Template) -> list[dict[str, Any]]:
    return [statement for statement in statements(template)
            if any(str(a).startswith("dynamodb:") for a in as_list(statement["Action"]))]


def _index_arn(template: Template, index: str) -> dict[str, Any]:
    table_arn = {"Fn::GetAtt": [logical_id(template, "AWS::DynamoDB::Table"), "Arn"]}
    return {"Fn::Join": ["", [table_arn, f"/index/{index}"]]}


def test_table_grants_name_the_table_and_its_indexesonly(template: Template) -> None:
    table_id = logical_id(template, "AWS::DynamoDB::Table")
    table_arn = {"Fn::GetAtt": [table_id, "Arn"]}
    statements = _table_statements(template)
    # The table for each of the four roles (JSON-RPC, worker, sweeper, ECS task); indexes
    # for the JSON-RPC (the two list indexes), the sweeper (lease) and the container (all).
    assert len(statements) == 7
    index_grants = []
    for statement in statements:
        assert statement["Effect"] == "Allow"
        actions = sorted(as_list(statement["Action"]))
        resources = as_list(statement["Resource"])
        if resources != [table_arn]:
            assert actions == sorted(INDEX_ACTIONS)
            index_grants.append(sorted(resources, key=str))  # in any order
        assert "dynamodb:Scan" not in actions
        assert not any(a.endswith("*") for a in actions)
    lists = [_index_arn(template, index) for index, _ in LIST_INDEXES]
    leases = [_index_arn(template, LEASE_INDEX)]
    assert sorted(index_grants, key=len) == [
        sorted(grant, key=str) for grant in (leases, lists, lists + leases)]


def _table_actions(template: Template, role: str) -> set[str]:
    table_arn = {"Fn::GetAtt": [logical_id(template, "AWS::DynamoDB::Table"), "Arn"]}
    return {action for statement in statements(template, role)
            if as_list(statement["Resource"]) == [table_arn]
            for action in as_list(statement["Action"])}


def test_each_role_gets_the_table_actions_of_its_code(
    template: Template, synth: Synth, empty_bundle: Path, tmp_path: Path
) -> None:
    def role(of: Template, handler: str) -> str:
        return role_of(lambda_function(of, handler)[1])

    # Queue mode at the door: it answers callers; the worker runs agents (it alone renews
    # leases); the sweeper only ends expired tasks. Each set is exactly what that code calls
    # (tests/rehearsal records the calls).
    assert _table_actions(template, role(template, HANDLER)) == set(SERVE_ACTIONS)
    assert _table_actions(template, role(template, WORKER_HANDLER)) == set(RUN_ACTIONS)
    assert _table_actions(template, role(template, SWEEPER_HANDLER)) == set(SWEEP_ACTIONS)
    # The container answers, enqueues (by default) and sweeps in process.
    assert _table_actions(template, task_role(template)) == {*SERVE_ACTIONS, *SWEEP_ACTIONS}
    assert "dynamodb:BatchGetItem" not in RUN_ACTIONS + SWEEP_ACTIONS  # only listing reads
    assert "dynamodb:ConditionCheckItem" not in RUN_ACTIONS + SWEEP_ACTIONS  # only creating
    # An inline door runs agents too, and so does an inline container.
    _, inline, _ = synth(empty_bundle, tmp_path, **{"a2a:execution": "inline",
                                                    "a2a:grpcExecution": "inline"})
    assert _table_actions(inline, role(inline, HANDLER)) == {*SERVE_ACTIONS, *RUN_ACTIONS}
    assert _table_actions(inline, task_role(inline)) == {
        *SERVE_ACTIONS, *RUN_ACTIONS, *SWEEP_ACTIONS}


def test_each_function_writes_only_its_own_log_group(template: Template) -> None:
    functions = template.find_resources("AWS::Lambda::Function")
    roles = template.find_resources("AWS::IAM::Role")
    for function in functions.values():
        properties = function["Properties"]
        role = role_of(properties)
        # No managed policy (AWSLambdaBasicExecutionRole allows logs on `*`).
        assert "ManagedPolicyArns" not in roles[role]["Properties"], properties["Handler"]
        group = properties["LoggingConfig"]["LogGroup"]["Ref"]
        logs = [statement for statement in statements(template, role)
                if any(a.startswith("logs:") for a in as_list(statement["Action"]))]
        assert logs == [{
            "Action": ["logs:CreateLogStream", "logs:PutLogEvents"], "Effect": "Allow",
            "Resource": {"Fn::GetAtt": [group, "Arn"]}}], properties["Handler"]


# --- alarms and outputs ------------------------------------------------------------------


def test_every_log_group_keeps_a_month_and_goes_with_the_stack(template: Template) -> None:
    """The functions', the container's, the access log's, the VPC flow log's and API Gateway's
    execution log (whose name API Gateway fixes; it would otherwise create the group itself,
    kept forever): 30 days, deleted with the stack."""
    groups = template.find_resources("AWS::Logs::LogGroup")
    for key, group in groups.items():
        assert group["Properties"]["RetentionInDays"] == 30, key
        assert group["DeletionPolicy"] == "Delete", key
    (flow_log,) = template.find_resources("AWS::EC2::FlowLog").values()
    assert flow_log["Properties"]["LogGroupName"]["Ref"] in groups
    api_id = logical_id(template, "AWS::ApiGateway::RestApi")
    execution = [key for key, group in groups.items()
                 if group["Properties"].get("LogGroupName") == {"Fn::Join": ["", [
                     "API-Gateway-Execution-Logs_", {"Ref": api_id}, f"/{STAGE}"]]}]
    assert len(execution) == 1
    # The stage logs only once its group exists (else API Gateway creates one first).
    (stage,) = template.find_resources("AWS::ApiGateway::Stage").values()
    assert execution[0] in stage["DependsOn"]


def test_alarms_cover_errors_throttles_and_unhealthy_targets(template: Template) -> None:
    alarms = template.find_resources("AWS::CloudWatch::Alarm")
    metric_names = set()
    for alarm in alarms.values():
        props = alarm["Properties"]
        assert props["AlarmActions"]
        if "MetricName" in props:
            metric_names.add(props["MetricName"])
        for query in props.get("Metrics", []):
            if "MetricStat" in query:
                metric_names.add(query["MetricStat"]["Metric"]["MetricName"])
    assert {
        "Errors",
        "Throttles",
        "ReadThrottleEvents",
        "WriteThrottleEvents",
        "UnHealthyHostCount",
    } <= metric_names


def test_outputs_name_the_endpoints_and_table(template: Template) -> None:
    outputs = template.find_outputs("*")
    assert {"JsonRpcUrl", "GrpcAddress", "TableName"} <= set(outputs)
    # No Function URL unless asked for: it would be a door without the edge's limits.
    assert "FunctionUrl" not in outputs


def test_synth_leaves_no_warning_for_the_cli_to_print(
    synth: Synth, empty_bundle: Path, tmp_path: Path
) -> None:
    """The CDK CLI prints each construct warning with the last frame of its trace, the jsii
    runtime's program.js: the stack acknowledges what it does on purpose (SnapStart with a
    published version behind the alias), so nothing stray reaches the terminal."""
    app, _, _ = synth(empty_bundle, tmp_path, **{"a2a:push": "true"})
    (stack,) = app.synth().stacks
    assert [(m.id, m.entry.data) for m in stack.messages
            if m.level != cxapi.SynthesisMessageLevel.INFO] == []


# --- configuration -----------------------------------------------------------------------


def test_grpc_can_be_turned_off(synth: Synth, empty_bundle: Path, tmp_path: Path) -> None:
    _, template, _ = synth(empty_bundle, tmp_path, **{"a2a:grpc": "false"})
    template.resource_count_is("AWS::ECS::Service", 0)
    template.resource_count_is("AWS::EC2::VPC", 0)
    template.resource_count_is("AWS::ElasticLoadBalancingV2::TargetGroup", 0)
    assert len(_table_statements(template)) == 5  # JSON-RPC (2), worker, sweeper (2)
    assert "GrpcAddress" not in template.find_outputs("*")


def test_grpc_without_a_certificate_is_refused() -> None:
    with pytest.raises(ConfigError, match="a2a:grpcCertificateArn"):
        DeployConfig.from_context({"a2a:grpc": True}.get)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("a2a:desiredCount", 1),  # gone: the service scales
        ("a2a:grpcMinTasks", "many"),
        ("a2a:grpcMinTasks", -1),
        ("a2a:grpcMaxTasks", 1),  # below the default minimum, 2
        ("a2a:natGateways", 3),
        ("a2a:streamBudgetSeconds", 900),
        ("a2a:allowAnonymous", "yes"),
        ("a2a:agent", "no_colon"),
    ],
)
def test_bad_context_values_name_their_key(key: str, value: Any) -> None:
    context = {"a2a:grpc": False, key: value}
    with pytest.raises(ConfigError, match=key):
        DeployConfig.from_context(context.get)


def test_context_strings_are_parsed() -> None:
    config = DeployConfig.from_context(
        {
            "a2a:grpc": "false",
            "a2a:grpcMinTasks": "0",
            "a2a:allowAnonymous": "true",
            "a2a:streamBudgetSeconds": "12.5",
            "a2a:agent": "my_agent.main:agent",
        }.get
    )
    assert config == DeployConfig(
        grpc=False,
        grpc_min_tasks=0,
        allow_anonymous=True,
        stream_budget_seconds=12.5,
        agent="my_agent.main:agent",
    )
