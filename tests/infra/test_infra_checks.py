"""Checks on the whole template: cdk-nag (AwsSolutions), CloudFormation validation, cfn-lint."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from aws_cdk import App, Stack
from aws_cdk import aws_sqs as sqs
from aws_cdk.assertions import Template
from cfnlint.api import ManualArgs, lint_file  # type: ignore[import-untyped]

from infra.app import build_app
from infra.stack import PROJECT_ROOT
from tests.infra.conftest import PUSH_CONTEXT

# Each synth runs the CDK's node process (jsii); validation costs 11-15 s more.
pytestmark = pytest.mark.slow

# Warnings about what CDK itself generates, listed (with the reasons) in .cfnlintrc, which
# `sam validate --lint` reads too; read here so the test does not depend on the working folder.
_IGNORED_LINT_CHECKS = yaml.safe_load((PROJECT_ROOT / ".cfnlintrc").read_text())["ignore_checks"]


def _conclusions(report: dict[str, Any]) -> dict[str, str]:
    """Plugin name -> success or failure, for the plugins that reported."""
    return {plugin["pluginName"]: plugin["conclusion"] for plugin in report["pluginReports"]}


def test_validation_on_with_cdk_nag(
    synth: Callable[..., tuple[Any, Template, Path]], empty_bundle: Path, tmp_path: Path
) -> None:
    # The one synth with CloudFormation validation on, of the fullest stack (cdk.json's, with
    # push); cdk-nag runs in every synth (build_app registers it) and fails synthesis on any
    # unacknowledged finding.
    synth(empty_bundle, tmp_path, validate=True, **PUSH_CONTEXT)
    report = json.loads((tmp_path / "validation-report.json").read_text())
    # Without validation the report is written too, but no plugin reports in it.
    assert _conclusions(report).get("CloudFormation Validate") == "success", report
    failures = [
        (plugin["pluginName"], violation["ruleName"])
        for plugin in report["pluginReports"]
        for violation in plugin["violations"]
        if violation["severity"] in ("error", "fatal")
    ]
    assert failures == []


def test_cdk_nag_fails_synthesis_on_an_unacknowledged_finding(
    cdk_context: dict[str, Any], empty_bundle: Path, tmp_path: Path
) -> None:
    # What the test above relies on: a resource nobody acknowledged stops the synth.
    app = App(context=cdk_context, outdir=str(tmp_path), builtin_cloud_formation_validation=False)
    build_app(app, lambda_bundle=str(empty_bundle))
    (stack,) = (child for child in app.node.children if isinstance(child, Stack))
    sqs.Queue(stack, "QueueWithoutDlqOrTls")
    with pytest.raises(RuntimeError, match="ValidationFailed"):
        app.synth()
    report = json.loads((tmp_path / "validation-report.json").read_text())
    assert _conclusions(report).get("AwsSolutions") == "failure", report


@pytest.mark.parametrize("fixture", ["synthesized", "synthesized_push"])
def test_cfn_lint_finds_nothing(fixture: str, request: pytest.FixtureRequest) -> None:
    _, path = request.getfixturevalue(fixture)
    matches = lint_file(path, config=ManualArgs(ignore_checks=_IGNORED_LINT_CHECKS))
    assert [str(match) for match in matches] == []


# Documented variants beyond the two fixtures, each in one synth: the door's own domain by
# certificate with the other edge and auth settings, and a stack outside the aws partition
# (infra/README.md, "Regions and partitions").
_CERTIFICATE = "arn:aws:acm:us-east-1:111111111111:certificate/11111111-1111-1111-1111-111111111111"
_LINTED_VARIANTS = {
    "domain-by-certificate": {
        "a2a:grpc": "false", "a2a:domainName": "agent.example.com",
        "a2a:certificateArn": _CERTIFICATE, "a2a:auth": "apiKey", "a2a:waf": "true",
        "a2a:functionUrl": "true", "a2a:execution": "inline"},
    # The long-task lane: public (its own VPC, no NAT), and every task on Spot in the gRPC
    # side's VPC.
    "long-tasks-public": {"a2a:grpc": "false", "a2a:longTasks": "true"},
    "long-tasks-all-nat-spot": {"a2a:longTasks": "all", "a2a:longTasksNetwork": "nat",
                                "a2a:longTasksSpot": "true"},
    # OpenTelemetry on every function (push on, so that the dispatcher is one of them).
    "otel": {"a2a:grpc": "false", "a2a:otel": "true", "a2a:push": "true"},
    "china": {
        "a2a:grpc": "false", "a2a:region": "cn-north-1", "a2a:snapStart": "false",
        "a2a:lwaLayerArn":
            "arn:aws-cn:lambda:cn-north-1:041581134020:layer:LambdaAdapterLayerArm64:30"},
}


@pytest.mark.parametrize("variant", sorted(_LINTED_VARIANTS))
def test_cfn_lint_finds_nothing_in_other_variants(
    variant: str, synth: Callable[..., tuple[Any, Template, Path]], empty_bundle: Path,
    tmp_path: Path
) -> None:
    _, _, path = synth(empty_bundle, tmp_path, **_LINTED_VARIANTS[variant])
    matches = lint_file(path, config=ManualArgs(ignore_checks=_IGNORED_LINT_CHECKS))
    assert [str(match) for match in matches] == []

