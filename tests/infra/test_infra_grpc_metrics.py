"""The gRPC container in the kit's metrics: the stack names it (POWERTOOLS_SERVICE_NAME on its
task definition, unique to the stack), and alarms and the dashboard read its metrics under
that name like the functions': its DynamoDB throttles and lease expiries always, its
failed-task rate when it runs agents (a2a:grpcExecution=inline); nothing of it without gRPC."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aws_cdk.assertions import Template

from a2akit import metrics
from infra.jsonrpc_api import HANDLER
from infra.sweeper import SWEEPER_HANDLER
from infra.worker import WORKER_HANDLER
from tests.support.template import CONTAINER, Synth, environments, lambda_function, only

pytestmark = pytest.mark.slow

SERVICE_VARIABLE = "POWERTOOLS_SERVICE_NAME"
# CloudWatch's limit on the metrics one alarm's metric math reads.
ALARM_METRICS_LIMIT = 10


@pytest.fixture(scope="module")
def inline_template(synth: Synth, empty_bundle: Path,
                    tmp_path_factory: pytest.TempPathFactory) -> Template:
    _, template, _ = synth(empty_bundle, tmp_path_factory.mktemp("cdk_out_grpc_inline"),
                           **{"a2a:grpcExecution": "inline", "a2a:push": "true"})
    return template


@pytest.fixture(scope="module")
def no_grpc_template(synth: Synth, empty_bundle: Path,
                     tmp_path_factory: pytest.TempPathFactory) -> Template:
    _, template, _ = synth(empty_bundle, tmp_path_factory.mktemp("cdk_out_no_grpc"),
                           **{"a2a:grpc": "false"})
    return template


def _container_service(template: Template) -> Any:
    return environments(template)[CONTAINER][SERVICE_VARIABLE]


def _alarms(template: Template) -> dict[str, dict[str, Any]]:
    return {alarm_id: alarm["Properties"]
            for alarm_id, alarm in template.find_resources("AWS::CloudWatch::Alarm").items()}


def _stats(props: dict[str, Any]) -> list[dict[str, Any]]:
    """The metrics an alarm reads, as MetricStat (a single-metric alarm's too)."""
    if "MetricName" in props:
        return [{"Metric": {key: props.get(key) for key in ("Namespace", "MetricName",
                                                              "Dimensions")}}]
    return [query["MetricStat"] for query in props.get("Metrics", []) if "MetricStat" in query]


def _kit_services(props: dict[str, Any], metric: str) -> list[str]:
    """The Service dimensions (as JSON) of the A2AKit/`metric` series an alarm reads."""
    return [json.dumps(dimension["Value"]) for stat in _stats(props)
            if stat["Metric"]["Namespace"] == metrics.NAMESPACE
            and stat["Metric"]["MetricName"] == metric
            for dimension in stat["Metric"]["Dimensions"] if dimension["Name"] == "Service"]


def _alarmed(template: Template, metric: str) -> list[list[str]]:
    """Per alarm on A2AKit/`metric`, the services it reads."""
    return [services for props in _alarms(template).values()
            if (services := _kit_services(props, metric))]


def _functions(template: Template, *handlers: str) -> set[str]:
    return {json.dumps({"Ref": lambda_function(template, handler)[0]}) for handler in handlers}


def _dashboard(template: Template, stack_name: str) -> dict[str, Any]:
    """The dashboard's body as JSON, the stack's name standing for AWS::StackName and every
    other reference for "REF" (they are all inside strings of the body)."""
    body = only(template, "AWS::CloudWatch::Dashboard")["Properties"]["DashboardBody"]
    parts = body["Fn::Join"][1] if isinstance(body, dict) else [body]
    text = "".join(part if isinstance(part, str)
                   else stack_name if part == {"Ref": "AWS::StackName"} else "REF"
                   for part in parts)
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def _graphs_naming(template: Template, service: str) -> set[str]:
    """The titles of the dashboard's graphs that read a series of `service`."""
    return {widget["properties"]["title"]
            for widget in _dashboard(template, "STACK")["widgets"]
            if widget["type"] == "metric" and service in json.dumps(widget["properties"])}


def test_the_container_reports_as_a_name_of_its_stack(template: Template) -> None:
    # Unique to the stack in the account and region, as the functions' generated names are.
    assert _container_service(template) == {
        "Fn::Join": ["", [{"Ref": "AWS::StackName"}, "-grpc"]]}


def test_a_queueing_container_has_its_throttle_alarm_and_its_lease_expiries(
        template: Template) -> None:
    container = json.dumps(_container_service(template))
    throttles = _alarmed(template, metrics.THROTTLES)
    assert [container] in throttles
    assert {service for (service,) in throttles} == {
        container, *_functions(template, HANDLER, WORKER_HANDLER, SWEEPER_HANDLER)}
    (expired,) = _alarmed(template, metrics.LEASE_EXPIRED)
    assert sorted(expired) == sorted(
        {container, *_functions(template, HANDLER, WORKER_HANDLER, SWEEPER_HANDLER)})
    # It enqueues (the default): the worker runs its tasks, and its failed-task rate is the
    # worker's.
    assert all(container not in services
               for services in _alarmed(template, metrics.TASKS_ENDED))


def test_a_container_that_runs_agents_has_its_failed_task_rate_alarmed(
        inline_template: Template) -> None:
    container = json.dumps(_container_service(inline_template))
    (rate,) = [props for props in _alarms(inline_template).values()
               if container in _kit_services(props, metrics.TASKS_ENDED)]
    assert _kit_services(rate, metrics.TASKS_ENDED) == [container] * 4  # one per end state
    assert {json.dumps(dimension) for stat in _stats(rate)
            for dimension in stat["Metric"]["Dimensions"] if dimension["Name"] == "State"} == {
        json.dumps({"Name": "State", "Value": state})
        for state in ("COMPLETED", "FAILED", "CANCELED", "REJECTED")}
    (expired,) = _alarmed(inline_template, metrics.LEASE_EXPIRED)
    assert container in expired  # no worker inline: door, sweeper, container
    assert [container] in _alarmed(inline_template, metrics.THROTTLES)


@pytest.mark.parametrize("which", ["template", "inline_template", "no_grpc_template"])
def test_every_alarm_reads_at_most_ten_metrics(which: str,
                                               request: pytest.FixtureRequest) -> None:
    template: Template = request.getfixturevalue(which)
    for alarm_id, props in _alarms(template).items():
        assert len(_stats(props)) <= ALARM_METRICS_LIMIT, alarm_id


def test_without_grpc_no_alarm_or_graph_reads_a_container(no_grpc_template: Template) -> None:
    assert CONTAINER not in environments(no_grpc_template)
    functions = _functions(no_grpc_template, HANDLER, WORKER_HANDLER, SWEEPER_HANDLER)
    for metric in (metrics.THROTTLES, metrics.LEASE_EXPIRED, metrics.TASKS_ENDED):
        assert {service for services in _alarmed(no_grpc_template, metric)
                for service in services} <= functions, metric
    assert _graphs_naming(no_grpc_template, "STACK-grpc") == set()


def test_the_dashboard_graphs_the_container_like_the_functions(
        template: Template, inline_template: Template) -> None:
    # Always: the tasks it ends (cancels, lease settlements), its store's figures and the
    # callers it refuses.
    always = {"Tasks: ended by state", "Store: lease expiries, version conflicts",
              "Store: DynamoDB throttles by operation", "Refused callers (door, gRPC)"}
    queueing = _graphs_naming(template, "STACK-grpc")
    assert always <= queueing
    assert not {"Tasks: failed (% of ended)", "Tasks: duration p99 (ms)"} & queueing
    # Running agents: its failed-task rate and task duration too.
    assert {"Tasks: failed (% of ended)", "Tasks: duration p99 (ms)"} | always <= \
        _graphs_naming(inline_template, "STACK-grpc")
