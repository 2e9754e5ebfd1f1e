"""docs/cost.md against the synthesized template: the counts it bills (alarms and the metrics
they read, the dashboard, the Cognito client, NAT gateways and their addresses, the load
balancer) are the template's, and each fixed-cost table adds up to its total."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from aws_cdk.assertions import Template

from infra.stack import PROJECT_ROOT
from tests.infra.conftest import PUSH_CONTEXT
from tests.support.template import Synth

pytestmark = pytest.mark.slow

_DOC = (PROJECT_ROOT / "docs" / "cost.md").read_text()
_NO_GRPC = {"a2a:grpc": "false"}


def _alarms(template: Template) -> tuple[int, int]:
    """(alarms, the metrics they read): a metric-math alarm reads each of its metrics."""
    alarms = [alarm["Properties"]
              for alarm in template.find_resources("AWS::CloudWatch::Alarm").values()]
    metrics = sum(1 if "MetricName" in alarm else
                  sum(1 for metric in alarm["Metrics"] if "MetricStat" in metric)
                  for alarm in alarms)
    return len(alarms), metrics


def _count(template: Template, resource_type: str) -> int:
    return len(template.find_resources(resource_type))


def _section(heading: str) -> str:
    """The text under a heading, to the next heading of any level."""
    (body,) = re.findall(rf"^#+ {re.escape(heading)}\n(.*?)(?=^#|\Z)", _DOC, re.S | re.M)
    return body


def _rows(section: str) -> list[list[str]]:
    return [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in section.splitlines() if line.startswith("| ")]


def _price(name: str) -> float:
    (row,) = [row for row in _rows(_section("Prices")) if row[0] == name]
    return float(row[1])


def _find(section: str, pattern: str) -> tuple[int, ...]:
    (found,) = re.findall(pattern, section)
    return tuple(int(n) for n in (found if isinstance(found, tuple) else (found,)))


@pytest.fixture(scope="module")
def default_template(synth: Synth, empty_bundle: Path,
                     tmp_path_factory: pytest.TempPathFactory) -> Template:
    """`./dev synth`'s stack: cdk.json's context, no gRPC."""
    return synth(empty_bundle, tmp_path_factory.mktemp("cost_default"), **_NO_GRPC)[1]


@pytest.mark.parametrize("heading", ["Fixed monthly cost",
                                     "The gRPC side (`a2a:grpc=true`), added"])
def test_each_fixed_cost_table_adds_up(heading: str) -> None:
    rows = _rows(_section(heading))[2:]  # past the header and the rule
    *items, total = rows
    assert total[0] == "**total**"
    assert round(sum(float(row[-1]) for row in items), 2) == float(total[-1].strip("*"))


def test_the_default_stack_s_fixed_costs_are_the_template_s(default_template: Template) -> None:
    section = _section("Fixed monthly cost")
    alarms, metrics = _alarms(default_template)
    assert _find(section, r"\| (\d+) alarms reading (\d+) metrics \|") == (alarms, metrics)
    (alarm_row,) = [row for row in _rows(section) if row[0] == "CloudWatch alarms"]
    assert float(alarm_row[-1]) == round(metrics * _price(
        "CloudWatch alarm, standard resolution"), 2)
    assert _find(section, r"\| (\d+) dashboard \|") == (
        _count(default_template, "AWS::CloudWatch::Dashboard"),)
    assert _find(section, r"\| (\d+) app client \|") == (
        _count(default_template, "AWS::Cognito::UserPoolClient"),)


def test_the_alarms_with_push_are_the_template_s(
    synth: Synth, empty_bundle: Path, tmp_path: Path
) -> None:
    _, template, _ = synth(empty_bundle, tmp_path, **_NO_GRPC, **PUSH_CONTEXT)
    assert _find(_section("Fixed monthly cost"),
                 r"with push \(`a2a:push=true`\), (\d+) alarms reading\s+(\d+) metrics") == (
        _alarms(template))


def test_the_grpc_side_s_fixed_costs_are_the_template_s(
    template: Template, default_template: Template
) -> None:
    # `template`: cdk.json's context with gRPC on.
    section = _section("The gRPC side (`a2a:grpc=true`), added")
    alarms, metrics = _alarms(template)
    default_metrics = _alarms(default_template)[1]
    assert _find(section, r"\| (\d+) alarms reading (\d+) metrics instead of (\d+) \|") == (
        alarms, metrics, default_metrics)
    assert _find(section, r"\| (\d+) NAT gateways \|") == (
        _count(template, "AWS::EC2::NatGateway"),)
    assert _find(section, r"\| (\d+) Elastic IPs \|") == (_count(template, "AWS::EC2::EIP"),)
    assert _find(section, r"\| (\d+) load balancer \|") == (
        _count(template, "AWS::ElasticLoadBalancingV2::LoadBalancer"),)
    service: dict[str, Any] = template.find_resources(
        "AWS::ApplicationAutoScaling::ScalableTarget")
    ((_, target),) = service.items()
    assert _find(section, r"`a2a:grpcMinTasks` (\d+)") == (target["Properties"]["MinCapacity"],)


_LANE = "The long-task lane (`a2a:longTasks=true`), added"


def test_the_long_lane_s_costs_add_up_and_its_alarms_are_the_template_s(
    synth: Synth, empty_bundle: Path, tmp_path: Path, default_template: Template
) -> None:
    section = _section(_LANE)
    rows = _rows(section)
    (per_task_total,) = [row for row in rows if row[0] == "**total**"]
    per_task = float(per_task_total[-1].strip("*"))
    per_task_rows = rows[rows.index(per_task_total) - 4:rows.index(per_task_total)]
    assert round(sum(float(row[-1]) for row in per_task_rows), 5) == per_task
    _, template, _ = synth(empty_bundle, tmp_path, **_NO_GRPC, **{"a2a:longTasks": "true"})
    alarms, metrics = _alarms(template)
    added = (alarms - _alarms(default_template)[0], metrics - _alarms(default_template)[1])
    assert _find(section, r"\((\d+) alarms reading (\d+) metrics:") == added
    alarm_cost = round(added[1] * _price("CloudWatch alarm, standard resolution"), 2)
    days = 730 / 24
    for row in rows:
        if row[0] in ("0", "10", "1,000"):
            per_day = int(row[0].replace(",", ""))
            assert float(row[1]) == alarm_cost
            tasks = float(row[2].rsplit("=", 1)[-1]) if "=" in row[2] else 0.0
            assert abs(tasks - round(per_day * days) * per_task) < 0.01
            assert float(row[3]) == round(alarm_cost + tasks, 2)
    # Nothing runs idle: no NAT gateway or address of the lane's own on the default network.
    assert _count(template, "AWS::EC2::NatGateway") == 0
    assert _count(template, "AWS::EC2::EIP") == 0
