"""The SAM CLI path as samconfig.toml and the README give it, with the real `sam`: validate
(with cfn-lint) for each environment; no build.

SAM CLI pins its own boto3, so it lives in its own venv (.cache/sam-venv, installed on first
use). Each test lays out a project folder the way a user has it after `./dev synth`:
samconfig.toml and .cfnlintrc copied from the repository, the synthesized assembly in cdk.out.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
from aws_cdk.assertions import Template

from infra.stack import PROJECT_ROOT
from tests.support.tools import tool_or_skip

pytestmark = pytest.mark.slow

SAM_VENV = PROJECT_ROOT / ".cache" / "sam-venv"
SAM_SPEC = "aws-sam-cli>=1.170,<2"
SAMCONFIG: dict[str, Any] = tomllib.loads((PROJECT_ROOT / "samconfig.toml").read_text())


@pytest.fixture(scope="session")
def sam() -> Path:
    return tool_or_skip(SAM_VENV, [SAM_SPEC], ["sam", "--version"], "aws-sam-cli") / "sam"


def _project(tmp_path: Path, assembly: Path, template_file: str) -> Path:
    """A folder like the repository after synth: SAM's and cfn-lint's settings, cdk.out."""
    for name in ("samconfig.toml", ".cfnlintrc"):
        shutil.copy(PROJECT_ROOT / name, tmp_path / name)
    shutil.copytree(assembly, tmp_path / "cdk.out")
    template = tmp_path / template_file
    if not template.exists():  # another environment's stack name: the same template
        shutil.copy(next(assembly.glob("*.template.json")), template)
    return tmp_path


def _sam(sam: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("AWS_", "SAM_"))}
    # Offline and without credentials, as the README promises for validate and build.
    env.update(SAM_CLI_TELEMETRY="0", AWS_EC2_METADATA_DISABLED="true")
    return subprocess.run([str(sam), *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)


@pytest.mark.parametrize("config_env", ["default", "dev", "prod"])
def test_sam_validate_with_lint(sam: Path, synthesized: tuple[Template, Path], tmp_path: Path,
                                config_env: str) -> None:
    parameters = SAMCONFIG[config_env]["validate"]["parameters"]
    assert parameters["lint"] is True
    _, template = synthesized
    project = _project(tmp_path, template.parent, parameters["template"])
    run = _sam(sam, project, "validate", "--config-env", config_env)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "is a valid SAM Template" in run.stdout


def test_no_sam_build_is_offered() -> None:
    # `sam build` drops the bundle's native extensions (cryptography, cffi, protobuf's upb):
    # the build that deploys is infra/bundle.py's, which the rehearsal runs
    # (tests/rehearsal). Neither samconfig.toml nor the docs' commands offer `sam build`.
    assert all("build" not in section for section in SAMCONFIG.values()
               if isinstance(section, dict)), SAMCONFIG
    for doc in ("infra/README.md", "docs/deployment.md", "samconfig.toml"):
        text = (PROJECT_ROOT / doc).read_text()
        assert not re.search(r"^[#\s]*sam build", text, re.MULTILINE), doc
