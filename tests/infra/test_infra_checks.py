"""Checks on the whole template: cdk-nag (AwsSolutions), CloudFormation validation, cfn-lint."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from aws_cdk.assertions import Template
from cfnlint.api import ManualArgs, lint_file  # type: ignore[import-untyped]

from infra.stack import PROJECT_ROOT

# Warnings about what CDK itself generates, listed (with the reasons) in .cfnlintrc, which
# `sam validate --lint` reads too; read here so the test does not depend on the working folder.
_IGNORED_LINT_CHECKS = yaml.safe_load((PROJECT_ROOT / ".cfnlintrc").read_text())["ignore_checks"]


def test_validation_on_with_cdk_nag(
    synth: Callable[..., tuple[Any, Template, Path]], empty_bundle: Path, tmp_path: Path
) -> None:
    # The one synth with CloudFormation validation on; cdk-nag runs in every synth
    # (build_app registers it) and fails synthesis on any unacknowledged finding.
    _, template, _ = synth(empty_bundle, tmp_path, validate=True)
    assert isinstance(template, Template)
    report = json.loads((tmp_path / "validation-report.json").read_text())
    failures = [
        (plugin["pluginName"], violation["ruleName"])
        for plugin in report["pluginReports"]
        for violation in plugin["violations"]
        if violation["severity"] in ("error", "fatal")
    ]
    assert failures == []


def test_cfn_lint_finds_nothing(synthesized: tuple[Template, Path]) -> None:
    _, path = synthesized
    matches = lint_file(path, config=ManualArgs(ignore_checks=_IGNORED_LINT_CHECKS))
    assert [str(match) for match in matches] == []
