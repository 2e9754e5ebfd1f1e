"""Where the stack goes: its region and partition, checked at synth against what the functions
depend on there: the Lambda Web Adapter's layer and SnapStart on the door, and, with
`a2a:otel=true`, the ADOT Python layer on every function that runs the kit (infra/otel.py).

- The region must be known at synth (`a2a:region`, else the CDK CLI's default region): the
  layer's ARN names it, and SnapStart is offered only in some regions. An environment-agnostic
  stack (no region at all) is refused rather than deployed with a guess.
- The adapter's published layer is in the `aws` partition only (one account publishes it in
  every commercial region). Elsewhere (China, GovCloud, ISO regions) `a2a:lwaLayerArn` must
  name a layer published there.
- The ADOT layer (`a2a:otel=true`) likewise: one account publishes it in the `aws` partition,
  and only in the regions its page lists (`ADOT_REGIONS`); anywhere else `a2a:otelLayerArn`
  must name one.
- A layer given by ARN must be in the stack's partition and region (Lambda takes layers from
  the function's region only), and, as far as its name tells, built for arm64, the functions'
  architecture (the adapter publishes `LambdaAdapterLayerArm64` and `LambdaAdapterLayerX86`,
  ADOT `aws-otel-python-arm64-ver-...` and `aws-otel-python-amd64-ver-...`).
- SnapStart (`a2a:snapStart`): on where the kit knows AWS offers it for Python, refused with
  one line elsewhere unless set: `false` turns it off, `true` turns it on anyway (AWS added the
  region after this list was written).

Each refusal is a ConfigError of one line naming the setting that fixes it.
"""

from __future__ import annotations

import dataclasses
import re

from aws_cdk.region_info import RegionInfo

from .config import CONTEXT, ConfigError, DeployConfig

__all__ = ["ADOT", "ADOT_REGIONS", "LWA", "LWA_ACCOUNT", "LWA_LAYER_NAME", "LWA_LAYER_VERSION",
           "SNAPSTART_REGIONS", "Placement", "PublishedLayer", "lwa_layer_arn", "place"]

# The Lambda Web Adapter's published arm64 layer (aws/aws-lambda-web-adapter, "Zip Packages"):
# the same account and version in every commercial region.
LWA_ACCOUNT = "753240598075"
LWA_LAYER_NAME = "LambdaAdapterLayerArm64"
LWA_LAYER_VERSION = 30
# The AWS Distro for OpenTelemetry's Python layer for arm64 (aws-otel.github.io/docs/
# getting-started/lambda/lambda-python): OpenTelemetry Python and a reduced ADOT collector
# (a Lambda extension) that exports to X-Ray. One account publishes it, the same name and
# version in each region its page lists. The version is the one public configurations quote
# from that page (`aws-otel-python-arm64-ver-1-32-0:2`), not checked against the live page:
# a2a:otelLayerArn picks another. The page calls this layer the legacy approach; AWS's newer
# `AWSOpenTelemetryDistroPython` layers (other accounts, no bundled collector; the same
# /opt/otel-instrument wrapper, as CDK's documentation says) can be given the same way.
ADOT_ACCOUNT = "901920570463"
ADOT_LAYER_NAME = "aws-otel-python-arm64-ver-1-32-0"
ADOT_LAYER_VERSION = 2
# The regions the ADOT page listed for its Python layers, both architectures (as of its
# 1.25 layer; the list for the current one was not checked).
ADOT_REGIONS = frozenset({
    "us-east-1", "us-east-2", "us-west-1", "us-west-2", "ca-central-1", "sa-east-1",
    "eu-central-1", "eu-north-1", "eu-west-1", "eu-west-2", "eu-west-3",
    "ap-northeast-1", "ap-northeast-2", "ap-south-1", "ap-southeast-1", "ap-southeast-2",
})
# The regions where Lambda SnapStart is offered for Python, as the kit knows them: AWS's
# launch list for Python and .NET (2024-11-18). AWS's page (docs.aws.amazon.com/lambda/latest/
# dg/snapstart.html, "Supported regions") may list more now: a2a:snapStart=true uses it there.
SNAPSTART_REGIONS = frozenset({
    "us-east-1", "us-east-2", "us-west-2",
    "ap-northeast-1", "ap-southeast-1", "ap-southeast-2",
    "eu-central-1", "eu-west-1", "eu-north-1",
})
_REGION = re.compile(r"^[a-z]{2}(-[a-z]+)+-\d+$")
_LAYER_ARN = re.compile(r"^arn:(?P<partition>aws[a-z-]*):lambda:(?P<region>[a-z0-9-]+):"
                        r"(?P<account>\d{12}):layer:(?P<name>[A-Za-z0-9_-]+):(?P<version>\d+)$")
# Layer names that say they are for another architecture than the functions' arm64.
_OTHER_ARCHITECTURE = re.compile(r"x86|amd64", re.IGNORECASE)
# Region prefixes of the partitions other than `aws`, for regions newer than the installed
# CDK's facts.
_PARTITION_PREFIXES = (("cn-", "aws-cn"), ("us-gov-", "aws-us-gov"), ("us-isob-", "aws-iso-b"),
                       ("us-iso-", "aws-iso"), ("eu-isoe-", "aws-iso-e"),
                       ("us-isof-", "aws-iso-f"))


@dataclasses.dataclass(frozen=True)
class PublishedLayer:
    """A layer the stack takes from its publisher unless a context key names another: the
    key, what the messages call it, and where and under which name it is published."""

    key: str
    what: str  # "the Lambda Web Adapter": in "the Lambda Web Adapter's published layer"
    kind: str  # "adapter": in "an arm64 adapter layer"
    account: str
    name: str
    version: int
    regions: frozenset[str] | None  # None: every region of the aws partition

    def arn(self, region: str) -> str:
        """The published arm64 layer in `region` (a commercial one)."""
        return (f"arn:aws:lambda:{region}:{self.account}:layer:{self.name}:"
                f"{self.version}")


LWA = PublishedLayer(CONTEXT.LWA_LAYER_ARN, "the Lambda Web Adapter", "adapter", LWA_ACCOUNT,
                     LWA_LAYER_NAME, LWA_LAYER_VERSION, None)
ADOT = PublishedLayer(CONTEXT.OTEL_LAYER_ARN, "the ADOT Python layer", "ADOT Python",
                      ADOT_ACCOUNT, ADOT_LAYER_NAME, ADOT_LAYER_VERSION, ADOT_REGIONS)


@dataclasses.dataclass(frozen=True)
class Placement:
    """The checked region and partition, and what the functions use there: the door's
    adapter layer and SnapStart, and the ADOT layer with a2a:otel=true (None without)."""

    region: str
    partition: str
    layer_arn: str
    snap_start: bool
    otel_layer_arn: str | None = None


def lwa_layer_arn(region: str) -> str:
    """The adapter's published arm64 layer in `region` (a commercial one)."""
    return LWA.arn(region)


def _partition(region: str) -> str:
    known = RegionInfo.get(region).partition
    if known:
        return known
    for prefix, partition in _PARTITION_PREFIXES:
        if region.startswith(prefix):
            return partition
    return "aws"


def place(config: DeployConfig, region: str | None) -> Placement:
    """Check `region` (the stack's: a2a:region, else the CLI's default) against the door's
    settings. Raises ConfigError, one line naming the setting to fix."""
    if not region:
        raise ConfigError(f"the region is unknown at synth ({CONTEXT.REGION} is unset and the "
                          "CDK CLI gave no default region): set -c "
                          f"{CONTEXT.REGION}=REGION; the adapter's layer and SnapStart depend "
                          "on it")
    if not _REGION.match(region):
        raise ConfigError(f"{CONTEXT.REGION} must be a region name like us-east-1, got "
                          f"{region!r}")
    partition = _partition(region)
    layer = _layer(LWA, config.lwa_layer_arn, region, partition)
    otel_layer = _layer(ADOT, config.otel_layer_arn, region, partition) if config.otel else None
    snap_start = config.snap_start
    if snap_start is None:
        if region not in SNAPSTART_REGIONS:
            raise ConfigError(f"SnapStart for Python is not offered in {region} as far as the "
                              f"kit knows (infra/region.py): set {CONTEXT.SNAP_START}=false, or "
                              f"{CONTEXT.SNAP_START}=true if AWS's SnapStart page lists "
                              f"{region} now")
        snap_start = True
    return Placement(region=region, partition=partition, layer_arn=layer, snap_start=snap_start,
                     otel_layer_arn=otel_layer)


def _layer(layer: PublishedLayer, given: str | None, region: str, partition: str) -> str:
    """`given` checked against the stack's partition, region and arm64, else the published
    layer where it is published."""
    key = layer.key
    if given is None:
        if partition != "aws":
            raise ConfigError(f"{layer.what}'s published layer is in the aws partition only, "
                              f"and {region} is in {partition}: set {key} to an arm64 "
                              f"{layer.kind} layer published in {region}")
        if layer.regions is not None and region not in layer.regions:
            raise ConfigError(f"{layer.what}'s published layer is not in {region} as far as "
                              f"the kit knows (infra/region.py): set {key} to an arm64 "
                              f"{layer.kind} layer published in {region}")
        return layer.arn(region)
    found = _LAYER_ARN.match(given)
    if found is None:
        raise ConfigError(f"{key} must be a layer version ARN, arn:PARTITION:lambda:REGION:"
                          f"ACCOUNT:layer:NAME:VERSION, got {given!r}")
    if found["partition"] != partition:
        raise ConfigError(f"{key} is in the {found['partition']} partition, the stack's region "
                          f"{region} in {partition}: use the layer published in {region}")
    if found["region"] != region:
        raise ConfigError(f"{key} is in {found['region']}, and Lambda takes layers from the "
                          f"function's region only ({region}): use the layer published in "
                          f"{region}")
    if _OTHER_ARCHITECTURE.search(found["name"]):
        raise ConfigError(f"{key} names an x86_64 layer ({found['name']}), and the functions "
                          f"run on arm64: use {layer.what}'s arm64 layer ({layer.name})")
    return given
