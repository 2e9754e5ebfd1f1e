"""The files around the CDK app agree with it: samconfig.toml, cdk.json, the Lambda bundle,
infra/README.md's list of context keys."""

from __future__ import annotations

import json
import re
import tarfile
import tomllib
from pathlib import Path
from typing import Any

import aws_cdk

from infra.config import CONTEXT, DeployConfig
from infra.stack import PROJECT_ROOT


def test_samconfig_points_at_the_synthesized_templates() -> None:
    config = tomllib.loads((PROJECT_ROOT / "samconfig.toml").read_text())
    default_stack = DeployConfig.__dataclass_fields__["stack_name"].default
    assert config["default"]["global"]["parameters"]["stack_name"] == default_stack
    for env, sections in config.items():
        if env == "version":
            continue
        stack = sections["global"]["parameters"]["stack_name"]
        for command in ("validate",):  # no build: tests/infra/process/test_sam_cli.py
            template = sections[command]["parameters"]["template"]
            assert template == f"cdk.out/{stack}.template.json", (env, command)


# Keys that are gone: reading one stops synth with a line that says what replaced it.
_GONE_KEYS = {CONTEXT.DESIRED_COUNT, CONTEXT.HTTP_API_JWT_AUTHORIZER}


def test_the_readme_lists_every_context_key() -> None:
    readme = (PROJECT_ROOT / "infra" / "README.md").read_text()
    (settings,) = re.findall(r"^## Settings \(CDK context.*?\n(.*?)(?=^##)", readme, re.S | re.M)
    listed = {key for line in settings.splitlines() if line.startswith("| `a2a:")
              for key in re.findall(r"`(a2a:\w+)`", line.split("|")[1])}
    keys = {value for name, value in vars(CONTEXT).items() if not name.startswith("_")}
    assert sorted(keys - _GONE_KEYS - listed) == [], "add a row to infra/README.md, Settings"
    assert sorted(listed - keys) == [], "infra/README.md lists keys infra/context.py lacks"


def test_cdk_json_synthesizes_offline() -> None:
    cdk: dict[str, Any] = json.loads((PROJECT_ROOT / "cdk.json").read_text())
    assert cdk["notices"] is False
    context = cdk["context"]
    zones = (
        f"availability-zones:account={context[CONTEXT.ACCOUNT]}:region={context[CONTEXT.REGION]}"
    )
    assert len(context[zones]) >= 2  # the VPC needs two AZs without asking AWS


def test_bundle_bytecode_is_checked_by_hash(tmp_path: Any) -> None:
    # Lambda's code folder is read-only and a zip keeps no reliable times: the bytecode the
    # bundle ships must be used without looking at the sources' times.
    import importlib.util
    import sys

    from infra.bundle import compile_bytecode

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("VALUE = 1\n")
    compile_bytecode(tmp_path, sys.executable)
    cached = tmp_path / "pkg" / importlib.util.cache_from_source("mod.py")
    flags = int.from_bytes(cached.read_bytes()[4:8], "little")
    assert flags == 0b01  # hash-based, unchecked (PEP 552)


def test_cdk_json_sets_the_recommended_feature_flags_of_the_pinned_library() -> None:
    """What `cdk init` writes for the pinned aws-cdk-lib (its recommended-feature-flags.json,
    read from the package's jsii bundle): every flag, at its recommended value, so synth leaves
    none unset and a library bump that adds flags fails here until cdk.json follows."""
    (bundle,) = (Path(aws_cdk.__file__).parent / "_jsii").glob("aws-cdk-lib@*.jsii.tgz")
    with tarfile.open(bundle) as archive:
        member = archive.extractfile("package/recommended-feature-flags.json")
        assert member is not None
        recommended: dict[str, Any] = json.load(member)
    context = json.loads((PROJECT_ROOT / "cdk.json").read_text())["context"]
    assert {flag: context.get(flag) for flag in recommended} == recommended
