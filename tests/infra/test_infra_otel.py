"""OpenTelemetry in the template (`a2a:otel=true`, infra/otel.py): the ADOT Python layer of the
stack's region on every function that runs the kit, with the spans' settings and active
tracing; the door keeps the adapter as its exec wrapper; `a2a:otelLayerArn` and where the
published layer is (infra/region.py); and nothing of it in the default synth."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aws_cdk.assertions import Template

from a2akit.settings import ENV
from infra.bundle import BundleTooLargeError, check_size
from infra.config import ConfigError, DeployConfig
from infra.jsonrpc_api import ADAPTER_ENVIRONMENT, HANDLER
from infra.otel import (
    DISABLED_INSTRUMENTATIONS,
    EXEC_WRAPPER,
    OTEL_WRAPPER,
    PROPAGATORS,
    SERVICE_NAME,
)
from infra.push import PUSH_HANDLER
from infra.region import ADOT_REGIONS, place
from infra.sweeper import SWEEPER_HANDLER
from infra.worker import WORKER_HANDLER
from tests.support.template import CONTAINER, Synth, actions_of, environments, role_of

pytestmark = pytest.mark.slow

_ADOT = "arn:aws:lambda:{}:901920570463:layer:aws-otel-python-arm64-ver-1-32-0:2"
_ADAPTER = "arn:aws:lambda:{}:753240598075:layer:LambdaAdapterLayerArm64:30"
_KIT_FUNCTIONS = (HANDLER, WORKER_HANDLER, SWEEPER_HANDLER, PUSH_HANDLER)
_OTEL_NAMES = (ENV.OTEL, SERVICE_NAME, PROPAGATORS, DISABLED_INSTRUMENTATIONS)
_CHINA = {"a2a:region": "cn-north-1", "a2a:snapStart": "false", "a2a:lwaLayerArn":
          "arn:aws-cn:lambda:cn-north-1:041581134020:layer:LambdaAdapterLayerArm64:30"}
_CHINA_ADOT = "arn:aws-cn:lambda:cn-north-1:111111111111:layer:aws-otel-python-arm64-ver-1-32-0:1"


def _functions(template: Template) -> dict[str, dict[str, Any]]:
    """Every function's properties by handler."""
    return {resource["Properties"]["Handler"]: resource["Properties"]
            for resource in template.find_resources("AWS::Lambda::Function").values()}


@pytest.fixture(scope="module")
def otel_template(synth: Synth, empty_bundle: Path,
                  tmp_path_factory: pytest.TempPathFactory) -> Iterator[Template]:
    """`-c a2a:otel=true` with push, so that every function is there (gRPC on, as every synth
    here)."""
    _, template, _ = synth(empty_bundle, tmp_path_factory.mktemp("cdk_out_otel"),
                           **{"a2a:otel": "true", "a2a:push": "true"})
    yield template


def test_the_default_synth_has_no_otel(template: Template) -> None:
    functions = _functions(template)
    assert functions[HANDLER]["Layers"] == [_ADAPTER.format("us-east-1")]
    for handler, function in functions.items():
        variables = function["Environment"]["Variables"]
        assert not [name for name in _OTEL_NAMES if name in variables], handler
        if handler != HANDLER:
            assert "Layers" not in function and EXEC_WRAPPER not in variables, handler


def test_otel_false_synthesizes_as_the_default(template: Template, synth: Synth,
                                                empty_bundle: Path, tmp_path: Path) -> None:
    _, off, _ = synth(empty_bundle, tmp_path, **{"a2a:otel": "false", "a2a:otelLayerArn": ""})
    assert off.to_json() == template.to_json()


def test_every_function_that_runs_the_kit_gets_the_layer_and_the_settings(
        otel_template: Template) -> None:
    functions = _functions(otel_template)
    assert set(_KIT_FUNCTIONS) <= set(functions)
    for handler in _KIT_FUNCTIONS:
        function = functions[handler]
        assert function["Architectures"] == ["arm64"], handler
        assert function["Layers"][-1] == _ADOT.format("us-east-1"), handler
        assert function["TracingConfig"] == {"Mode": "Active"}, handler
        variables = function["Environment"]["Variables"]
        assert variables[ENV.OTEL] == "true"
        assert variables[SERVICE_NAME] == "A2AKit"  # the stack's name, cdk.json's default
        assert variables[PROPAGATORS] == "tracecontext"
        # The layer's collector writes to X-Ray with the role active tracing grants.
        assert {"xray:PutTraceSegments", "xray:PutTelemetryRecords"} <= actions_of(
            otel_template, role_of(function), "xray:"), handler


def test_the_door_keeps_the_adapter_and_the_others_run_otel_sh(otel_template: Template) -> None:
    functions = _functions(otel_template)
    door = functions[HANDLER]
    # The adapter's layer first, its bootstrap the exec wrapper: run.sh starts otel.sh.
    assert door["Layers"] == [_ADAPTER.format("us-east-1"), _ADOT.format("us-east-1")]
    assert door["Environment"]["Variables"][EXEC_WRAPPER] == ADAPTER_ENVIRONMENT[EXEC_WRAPPER]
    assert door["SnapStart"] == {"ApplyOn": "PublishedVersions"}
    for handler in (WORKER_HANDLER, SWEEPER_HANDLER, PUSH_HANDLER):
        assert functions[handler]["Layers"] == [_ADOT.format("us-east-1")], handler
        assert functions[handler]["Environment"]["Variables"][EXEC_WRAPPER] == OTEL_WRAPPER
    assert OTEL_WRAPPER == "/var/task/otel.sh"
    # The webhook's traceparent stays the task's: no httpx instrumentation on the dispatcher.
    variables = {handler: functions[handler]["Environment"]["Variables"]
                 for handler in _KIT_FUNCTIONS}
    assert variables[PUSH_HANDLER][DISABLED_INSTRUMENTATIONS] == "httpx"
    assert not [h for h in (HANDLER, WORKER_HANDLER, SWEEPER_HANDLER)
                if DISABLED_INSTRUMENTATIONS in variables[h]]


def test_the_containers_are_left_as_they_are(otel_template: Template) -> None:
    # No tracer provider there (the layer is Lambda's): A2A_OTEL would need one.
    container = environments(otel_template)[CONTAINER]
    assert not [name for name in _OTEL_NAMES if name in container]


@pytest.mark.parametrize("region", sorted(ADOT_REGIONS))
def test_the_published_layer_of_each_region_it_is_published_in(region: str) -> None:
    placement = place(DeployConfig.from_context({"a2a:otel": "true",
                                                 "a2a:snapStart": "false"}.get), region)
    assert placement.otel_layer_arn == _ADOT.format(region)


def test_without_the_key_no_layer_is_placed() -> None:
    assert place(DeployConfig.from_context({}.get), "us-east-1").otel_layer_arn is None


@pytest.mark.parametrize(("region", "context"), [
    # China: the published layer is in the aws partition only.
    ("cn-north-1", _CHINA),
    # A commercial region the ADOT page does not list.
    ("ap-east-1", {"a2a:snapStart": "false"}),
    # A layer of another partition, region or architecture than the functions'.
    ("cn-north-1", {**_CHINA, "a2a:otelLayerArn": _ADOT.format("us-east-1")}),
    ("eu-west-1", {"a2a:otelLayerArn": _ADOT.format("us-east-1")}),
    ("us-east-1", {"a2a:otelLayerArn": _ADOT.format("us-east-1").replace("arm64", "amd64")}),
    ("us-east-1", {"a2a:otelLayerArn": "aws-otel-python-arm64-ver-1-32-0:2"}),
])
def test_what_does_not_fit_the_region_names_a2a_otel_layer_arn(
        region: str, context: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match="a2a:otelLayerArn") as raised:
        place(DeployConfig.from_context({"a2a:otel": "true", **context}.get), region)
    assert "\n" not in str(raised.value)


def test_the_layer_arn_needs_the_key() -> None:
    with pytest.raises(ConfigError, match="a2a:otelLayerArn needs a2a:otel=true"):
        DeployConfig.from_context({"a2a:otelLayerArn": _ADOT.format("us-east-1")}.get)


def test_a_given_layer_is_taken_where_it_fits() -> None:
    hong_kong = "arn:aws:lambda:ap-east-1:222222222222:layer:AWSOpenTelemetryDistroPython:8"
    assert place(DeployConfig.from_context({"a2a:otel": "true", "a2a:snapStart": "false",
                                            "a2a:otelLayerArn": hong_kong}.get),
                 "ap-east-1").otel_layer_arn == hong_kong


def test_a_china_stack_uses_the_given_layers(synth: Synth, empty_bundle: Path,
                                             tmp_path: Path) -> None:
    _, template, _ = synth(empty_bundle, tmp_path, **{
        **_CHINA, "a2a:grpc": "false", "a2a:otel": "true", "a2a:otelLayerArn": _CHINA_ADOT})
    functions = _functions(template)
    assert functions[HANDLER]["Layers"] == [_CHINA["a2a:lwaLayerArn"], _CHINA_ADOT]
    assert functions[WORKER_HANDLER]["Layers"] == [_CHINA_ADOT]


def test_the_bundle_leaves_room_for_the_adot_layer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # 200 MB fits with the adapter's 5 MB, not with the ADOT layer's 64 MB more.
    (tmp_path / "a2akit").mkdir()
    monkeypatch.setattr("infra.bundle._size", lambda _: 200 * 1024 * 1024)
    assert check_size(tmp_path) == 200 * 1024 * 1024
    with pytest.raises(BundleTooLargeError, match="the adapter's and the ADOT layer"):
        check_size(tmp_path, otel=True)
