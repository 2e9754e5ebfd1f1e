"""The public door in the template: a REST API whose Lambda integration streams, the function
running the Lambda Web Adapter in response_stream mode, the limits at the edge (stage
throttling, reserved concurrency, the worker's maximum concurrency, the optional WAF), a
domain name for each door, and one line naming the key when a required value is missing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aws_cdk.assertions import Match, Template

from a2akit.settings import ENV, Settings
from infra.config import ConfigError, DeployConfig
from infra.jsonrpc_api import ADAPTER_ENVIRONMENT, HANDLER, STAGE
from infra.stack import PROJECT_ROOT
from infra.worker import WORKER_HANDLER
from tests.support.template import Synth, lambda_function, logical_id, only

CERTIFICATE = "arn:aws:acm:us-east-1:111111111111:certificate/11111111-1111-1111-1111-111111111111"


def _function(template: Template, handler: str) -> dict[str, Any]:
    return lambda_function(template, handler)[1]


def test_the_public_door_is_a_regional_rest_api_that_streams(template: Template) -> None:
    template.has_resource_properties(
        "AWS::ApiGateway::RestApi", {"EndpointConfiguration": {"Types": ["REGIONAL"]}})
    methods = template.find_resources("AWS::ApiGateway::Method")
    assert len(methods) == 2  # ANY / and ANY /{proxy+}
    for method in methods.values():
        integration = method["Properties"]["Integration"]
        assert integration["Type"] == "AWS_PROXY"
        assert integration["ResponseTransferMode"] == "STREAM"
        # Lambda's streaming invoke, for as long as the function may run.
        assert "/response-streaming-invocations" in integration["Uri"]["Fn::Join"][1]
        assert integration["TimeoutInMillis"] == _function(template, HANDLER)["Timeout"] * 1000
    template.resource_count_is("AWS::ApiGatewayV2::Api", 0)
    template.resource_count_is("AWS::Lambda::Url", 0)


def test_the_function_runs_the_adapter_in_response_stream_mode(template: Template) -> None:
    function = _function(template, HANDLER)
    assert function["Handler"] == "run.sh"
    (layer,) = function["Layers"]
    assert ":layer:LambdaAdapterLayerArm64:" in json.dumps(layer)
    variables = function["Environment"]["Variables"]
    assert variables["AWS_LAMBDA_EXEC_WRAPPER"] == "/opt/bootstrap"
    assert variables["AWS_LWA_INVOKE_MODE"] == "response_stream"
    assert {k: variables[k] for k in ADAPTER_ENVIRONMENT} == ADAPTER_ENVIRONMENT
    # The card advertises the stage URL, which streams.
    url = variables[ENV.PUBLIC_URL]["Fn::Join"][1]
    assert url[0] == "https://" and url[-1] == f"/{STAGE}/"


def test_limits_at_the_edge_are_on_by_default(template: Template) -> None:
    template.has_resource_properties("AWS::ApiGateway::Stage", {
        "StageName": STAGE,
        "MethodSettings": [Match.object_like({
            "HttpMethod": "*", "ResourcePath": "/*",
            "ThrottlingRateLimit": 50, "ThrottlingBurstLimit": 100})],
        "AccessLogSetting": Match.object_like({}),
    })
    assert _function(template, HANDLER)["ReservedConcurrentExecutions"] == 100
    template.has_resource_properties("AWS::Lambda::EventSourceMapping", {
        "FunctionName": Match.any_value(), "ScalingConfig": {"MaximumConcurrency": 20}})
    template.resource_count_is("AWS::WAFv2::WebACL", 0)


def test_the_limits_follow_their_keys_and_waf_comes_with_a_rate_rule(
    synth: Synth, empty_bundle: Path, tmp_path: Path
) -> None:
    _, template, _ = synth(empty_bundle, tmp_path, **{
        "a2a:throttleRateLimit": "7.5", "a2a:throttleBurstLimit": "15",
        "a2a:reservedConcurrency": "40", "a2a:workerMaxConcurrency": "5",
        "a2a:waf": "true", "a2a:wafRateLimit": "300", "a2a:maxActiveTasksPerCaller": "3"})
    template.has_resource_properties("AWS::ApiGateway::Stage", {"MethodSettings": [
        Match.object_like({"ThrottlingRateLimit": 7.5, "ThrottlingBurstLimit": 15})]})
    assert _function(template, HANDLER)["ReservedConcurrentExecutions"] == 40
    template.has_resource_properties("AWS::Lambda::EventSourceMapping",
                                     {"ScalingConfig": {"MaximumConcurrency": 5}})
    template.has_resource_properties("AWS::WAFv2::WebACL", {
        "Scope": "REGIONAL", "DefaultAction": {"Allow": {}},
        "Rules": [Match.object_like({
            "Action": {"Block": {}},
            "Statement": {"RateBasedStatement": Match.object_like(
                {"AggregateKeyType": "IP", "Limit": 300})}})]})
    (association,) = template.find_resources("AWS::WAFv2::WebACLAssociation").values()
    stage_arn = json.dumps(association["Properties"]["ResourceArn"])
    assert "/restapis/" in stage_arn and "/stages/" in stage_arn
    # The stack passes the per-caller quota to the bindings; the worker creates no tasks.
    assert _function(template, HANDLER)["Environment"]["Variables"][
        ENV.MAX_ACTIVE_TASKS_PER_CALLER] == "3"
    assert ENV.MAX_ACTIVE_TASKS_PER_CALLER not in _function(
        template, WORKER_HANDLER)["Environment"]["Variables"]


def test_each_door_gets_its_domain_name(
    synth: Synth, empty_bundle: Path, tmp_path: Path
) -> None:
    _, template, _ = synth(empty_bundle, tmp_path, **{
        "a2a:domainName": "agent.example.com", "a2a:hostedZoneId": "Z0PUBLIC",
        "a2a:hostedZoneName": "example.com",
        "a2a:grpcDomainName": "grpc.example.internal", "a2a:grpcCertificateArn": CERTIFICATE,
        "a2a:grpcHostedZoneId": "Z0PRIVATE", "a2a:grpcHostedZoneName": "example.internal",
        "a2a:grpcAllowedCidrs": "10.0.0.0/16, 172.16.0.0/12"})
    # The public door: a certificate validated in the zone, the name, its alias record, and
    # no second (execute-api) URL.
    template.has_resource_properties("AWS::CertificateManager::Certificate", {
        "DomainName": "agent.example.com", "ValidationMethod": "DNS"})
    template.has_resource_properties("AWS::ApiGateway::DomainName", {
        "DomainName": "agent.example.com", "EndpointConfiguration": {"Types": ["REGIONAL"]}})
    template.has_resource_properties("AWS::ApiGateway::RestApi",
                                     {"DisableExecuteApiEndpoint": True})
    records = {r["Properties"]["Name"]: r["Properties"]["HostedZoneId"]
               for r in template.find_resources("AWS::Route53::RecordSet").values()}
    assert records == {"agent.example.com.": "Z0PUBLIC", "grpc.example.internal.": "Z0PRIVATE"}
    # Both bindings advertise the names the certificates cover.
    variables = _function(template, HANDLER)["Environment"]["Variables"]
    assert variables[ENV.PUBLIC_URL] == "https://agent.example.com/"
    assert variables[ENV.GRPC_ADDRESS] == "grpc.example.internal:443"
    outputs = template.find_outputs("*")
    assert outputs["GrpcAddress"]["Value"] == "grpc.example.internal:443"
    # The zones hold the alias records: no DNS target to point a name at by hand, and the
    # one URL is the domain's.
    assert set(outputs) & {"DomainNameTarget", "DomainNameTargetZoneId",
                           "GrpcLoadBalancerDnsName"} == set()
    assert [key for key, output in outputs.items() if "execute-api" in json.dumps(output)] == []
    template.has_resource_properties("AWS::ElasticLoadBalancingV2::Listener",
                                     {"Certificates": [{"CertificateArn": CERTIFICATE}]})
    ingress = [rule["CidrIp"] for group in
               template.find_resources("AWS::EC2::SecurityGroup").values()
               for rule in group["Properties"].get("SecurityGroupIngress", [])]
    assert sorted(ingress) == ["10.0.0.0/16", "172.16.0.0/12"]


def test_names_without_a_zone_get_their_dns_targets_as_outputs(
    synth: Synth, empty_bundle: Path, tmp_path: Path
) -> None:
    """With a certificate by ARN and no zone, the user points the name at the regional domain
    name; a gRPC name without a zone, at the ALB: both are outputs. The execute-api URL,
    which the domain turns off, is not."""
    _, template, _ = synth(empty_bundle, tmp_path, **{
        "a2a:domainName": "agent.example.com", "a2a:certificateArn": CERTIFICATE})
    outputs = template.find_outputs("*")
    domain_id = logical_id(template, "AWS::ApiGateway::DomainName")
    assert outputs["DomainNameTarget"]["Value"] == {
        "Fn::GetAtt": [domain_id, "RegionalDomainName"]}
    assert outputs["DomainNameTargetZoneId"]["Value"] == {
        "Fn::GetAtt": [domain_id, "RegionalHostedZoneId"]}
    assert outputs["JsonRpcUrl"]["Value"] == "https://agent.example.com/"
    assert [key for key, output in outputs.items() if "execute-api" in json.dumps(output)] == []
    balancer_id = logical_id(template, "AWS::ElasticLoadBalancingV2::LoadBalancer")
    assert outputs["GrpcLoadBalancerDnsName"]["Value"] == {
        "Fn::GetAtt": [balancer_id, "DNSName"]}


def test_without_a_domain_the_stage_url_is_output_once(template: Template) -> None:
    urls = [key for key, output in template.find_outputs("*").items()
            if "execute-api" in json.dumps(output)]
    assert urls == ["JsonRpcUrl"]


def test_a_streaming_function_url_only_when_asked_for(
    synth: Synth, empty_bundle: Path, tmp_path: Path
) -> None:
    _, template, _ = synth(empty_bundle, tmp_path, **{"a2a:functionUrl": "true"})
    template.has_resource_properties("AWS::Lambda::Url", {
        "AuthType": "NONE", "InvokeMode": "RESPONSE_STREAM", "Qualifier": "live"})
    assert "FunctionUrl" in template.find_outputs("*")


@pytest.mark.parametrize(("context", "key"), [
    ({"a2a:grpc": "true", "a2a:grpcDomainName": "g.example"}, "a2a:grpcCertificateArn"),
    ({"a2a:grpc": "true", "a2a:grpcCertificateArn": CERTIFICATE}, "a2a:grpcDomainName"),
    ({"a2a:domainName": "agent.example.com"}, "a2a:domainName"),
    ({"a2a:certificateArn": CERTIFICATE}, "a2a:domainName"),
    ({"a2a:domainName": "a.example.com", "a2a:hostedZoneId": "Z1"}, "a2a:hostedZoneName"),
    ({"a2a:grpcAllowedCidrs": "10.0.0.1/16"}, "a2a:grpcAllowedCidrs"),
    ({"a2a:throttleRateLimit": "0"}, "a2a:throttleRateLimit"),
    ({"a2a:throttleBurstLimit": "0"}, "a2a:throttleBurstLimit"),
    ({"a2a:reservedConcurrency": "0"}, "a2a:reservedConcurrency"),
    ({"a2a:workerMaxConcurrency": "1"}, "a2a:workerMaxConcurrency"),
    ({"a2a:wafRateLimit": "5"}, "a2a:wafRateLimit"),
    ({"a2a:waf": "maybe"}, "a2a:waf"),
    ({"a2a:maxActiveTasksPerCaller": "0"}, "a2a:maxActiveTasksPerCaller"),
])
def test_door_context_mistakes_name_their_key(context: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError, match=key) as raised:
        DeployConfig.from_context(context.get)
    assert "\n" not in str(raised.value)


def test_the_committed_context_needs_no_certificate() -> None:
    committed = json.loads((PROJECT_ROOT / "cdk.json").read_text())["context"]
    assert not [key for key in committed
                if key.startswith("a2a:") and "certificate" in key.lower()]
    config = DeployConfig.from_context(committed.get)
    assert config.grpc is False and config.domain_name is None


def test_the_stream_lasts_its_whole_budget(template: Template) -> None:
    """One margin: the function's timeout is the budget plus the margin the kit keeps free of
    the invocation's remaining time, so a stream ends at its budget (20 s), not a second early."""
    function = _function(template, HANDLER)
    variables = function["Environment"]["Variables"]
    budget = float(variables[ENV.STREAM_BUDGET_SECONDS])
    margin = float(variables.get(ENV.BUDGET_MARGIN_SECONDS, Settings.budget_margin_seconds))
    assert function["Timeout"] - margin == budget == 20


def test_the_api_is_named_after_its_stack(template: Template) -> None:
    # API Gateway's metrics, and so the door's alarms, are keyed by the API's name.
    api = only(template, "AWS::ApiGateway::RestApi")["Properties"]
    assert api["Name"] == "A2AKit"


def test_the_account_logging_role_outlives_the_stack(template: Template) -> None:
    """AWS::ApiGateway::Account is one setting for every API in the region: deleting a stack
    must leave the role it names."""
    account = only(template, "AWS::ApiGateway::Account")
    assert account["DeletionPolicy"] == "Retain"
    role_id = account["Properties"]["CloudWatchRoleArn"]["Fn::GetAtt"][0]
    assert template.to_json()["Resources"][role_id]["DeletionPolicy"] == "Retain"


def test_reserved_concurrency_can_be_left_off(
    synth: Synth, empty_bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Accounts whose concurrency quota is under 200 cannot reserve 100 for the door (Lambda
    keeps 100 unreserved): `none` reserves nothing and the synth says what is left."""
    _, template, _ = synth(empty_bundle, tmp_path, **{"a2a:reservedConcurrency": "none"})
    assert "ReservedConcurrentExecutions" not in _function(template, HANDLER)
    warnings = [line for line in capsys.readouterr().err.splitlines()
                if "a2a:reservedConcurrency" in line]
    assert len(warnings) == 1 and "stage throttling" in warnings[0]


def test_a_table_that_goes_with_the_stack_cannot_be_protected() -> None:
    with pytest.raises(ConfigError, match="a2a:deletionProtection=false") as raised:
        DeployConfig.from_context({"a2a:retainTable": "false"}.get)
    assert "\n" not in str(raised.value)
    DeployConfig.from_context({"a2a:retainTable": "false",
                               "a2a:deletionProtection": "false"}.get)
