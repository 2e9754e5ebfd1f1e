"""Regions and partitions at synth: the adapter's layer and SnapStart where the stack goes, and
one line naming the setting to fix when they do not fit (a2a:region, a2a:lwaLayerArn,
a2a:snapStart)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aws_cdk.assertions import Template

from infra.config import ConfigError, DeployConfig
from infra.jsonrpc_api import HANDLER
from infra.region import place
from tests.support.template import Synth, lambda_function

pytestmark = pytest.mark.slow

_PUBLISHED = "arn:aws:lambda:{}:753240598075:layer:LambdaAdapterLayerArm64:30"
_CHINA_LAYER = "arn:aws-cn:lambda:cn-north-1:041581134020:layer:LambdaAdapterLayerArm64:30"


def _door(template: Template) -> dict[str, Any]:
    return lambda_function(template, HANDLER)[1]


def test_the_published_layer_of_the_region_and_snapstart(template: Template) -> None:
    door = _door(template)
    assert door["Layers"] == [_PUBLISHED.format("us-east-1")]
    assert door["Architectures"] == ["arm64"]
    assert door["SnapStart"] == {"ApplyOn": "PublishedVersions"}


@pytest.mark.parametrize(("region", "context", "key"), [
    # No region at all: an environment-agnostic stack is refused, not guessed.
    (None, {}, "a2a:region"),
    ("us-east-1a", {}, "a2a:region"),
    # China and GovCloud: the published layer is in the aws partition only.
    ("cn-north-1", {"a2a:snapStart": "false"}, "a2a:lwaLayerArn"),
    ("us-gov-west-1", {"a2a:snapStart": "false"}, "a2a:lwaLayerArn"),
    # A layer of another partition, region or architecture than the function's.
    ("cn-north-1", {"a2a:snapStart": "false",
                    "a2a:lwaLayerArn": _PUBLISHED.format("us-east-1")}, "a2a:lwaLayerArn"),
    ("eu-west-1", {"a2a:lwaLayerArn": _PUBLISHED.format("us-east-1")}, "a2a:lwaLayerArn"),
    ("us-east-1", {"a2a:lwaLayerArn":
                   "arn:aws:lambda:us-east-1:753240598075:layer:LambdaAdapterLayerX86:30"},
     "a2a:lwaLayerArn"),
    ("us-east-1", {"a2a:lwaLayerArn": "LambdaAdapterLayerArm64:30"}, "a2a:lwaLayerArn"),
    # SnapStart where the kit does not know it to be offered, unless the setting decides.
    ("eu-west-2", {}, "a2a:snapStart=false"),
    ("cn-north-1", {"a2a:lwaLayerArn": _CHINA_LAYER}, "a2a:snapStart=false"),
    ("us-east-1", {"a2a:snapStart": "perhaps"}, "a2a:snapStart"),
])
def test_what_does_not_fit_the_region_names_its_setting(
    region: str | None, context: dict[str, Any], key: str
) -> None:
    with pytest.raises(ConfigError, match=key) as raised:
        place(DeployConfig.from_context(context.get), region)
    assert "\n" not in str(raised.value)


def test_the_settings_decide_snapstart_and_the_layer() -> None:
    london = place(DeployConfig.from_context({"a2a:snapStart": "true"}.get), "eu-west-2")
    assert (london.partition, london.snap_start, london.layer_arn) == (
        "aws", True, _PUBLISHED.format("eu-west-2"))
    china = place(DeployConfig.from_context(
        {"a2a:snapStart": "false", "a2a:lwaLayerArn": _CHINA_LAYER}.get), "cn-north-1")
    assert (china.partition, china.snap_start, china.layer_arn) == (
        "aws-cn", False, _CHINA_LAYER)
    # A region newer than the installed CDK's facts: its partition from its name.
    assert place(DeployConfig.from_context({"a2a:snapStart": "false"}.get),
                 "xx-newplace-1").partition == "aws"


def test_a_china_stack_uses_the_given_layer_without_snapstart(
    synth: Synth, empty_bundle: Path, tmp_path: Path
) -> None:
    _, template, _ = synth(empty_bundle, tmp_path, **{
        "a2a:region": "cn-north-1", "a2a:grpc": "false", "a2a:snapStart": "false",
        "a2a:lwaLayerArn": _CHINA_LAYER})
    door = _door(template)
    assert door["Layers"] == [_CHINA_LAYER]
    assert "SnapStart" not in door
