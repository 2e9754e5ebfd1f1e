"""Synth without a certificate the door needs stops with one line (python -m infra.app as cdk runs
it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from infra.stack import PROJECT_ROOT


def test_synth_without_a_required_certificate_stops_with_one_line(tmp_path: Path) -> None:
    # What `cdk synth -c a2a:grpc=true` runs: the app, its context from the CLI.
    context = {"a2a:grpc": "true", "a2a:grpcDomainName": "grpc.example.internal",
               "a2a:lambdaBundle": str(tmp_path)}
    env = {**os.environ, "CDK_CONTEXT_JSON": json.dumps(context), "CDK_OUTDIR": str(tmp_path),
           "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20"}
    result = subprocess.run([sys.executable, "-m", "infra.app"], cwd=PROJECT_ROOT, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "a2akit: cannot synthesize: a2a:grpcCertificateArn is required with a2a:grpc=true "
        "(or leave gRPC off)"]
