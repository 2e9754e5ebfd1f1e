"""An agent's process reads its secrets and parameters from AWS with the stack's variables alone,
and loads no boto3 for it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.core.test_agent_secrets_aws import _aws
from tests.support import moto as aws
from tests.support.processes import ROOT


@pytest.mark.slow  # a moto server and a process of its own
def test_an_agents_process_reads_aws_from_the_stacks_variables(moto_endpoint: str) -> None:
    """As on AWS: the lists in the environment, boto3 finding credentials and region there;
    `secret()` and `parameter()` as an agent calls them."""
    _, _, name, path = _aws(moto_endpoint)
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("A2A_", "AWS_"))}
    env.update(PYTHONPATH=str(ROOT), A2A_AGENT_SECRETS=f"MODEL_KEY={name}",
               A2A_AGENT_PARAMETERS=f"MODEL_ID={path}",
               # boto3's own per-service endpoint variables (the service ids, upper-cased).
               AWS_ENDPOINT_URL_SECRETS_MANAGER=moto_endpoint,
               AWS_ENDPOINT_URL_SSM=moto_endpoint, AWS_ACCESS_KEY_ID="test",
               AWS_SECRET_ACCESS_KEY="test", AWS_DEFAULT_REGION=aws.REGION)
    code = ("import sys; from a2akit import parameter, secret; "
            "assert 'boto3' not in sys.modules; "
            "print(secret('MODEL_KEY'), parameter('MODEL_ID'))")
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["sk-one", "model-one"]
