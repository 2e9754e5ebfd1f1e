"""The streaming door as Lambda starts it: the bundle's `run.sh` (the function's handler, which
the Lambda Web Adapter's bootstrap runs), with the door's environment from the template and
only the bundle and the runtime's SDK importable. The adapter itself is AWS's binary and is not
here: the test sends what it forwards, plain HTTP on 127.0.0.1:PORT."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from a2akit.settings import ENV
from infra.bundle import RUN_SCRIPT
from infra.jsonrpc_api import HANDLER
from scripts.dynamodb_local import CREDENTIALS
from tests.auth.issuer import Issuer, make_keys
from tests.rehearsal.permissions import local_environment, resource_names
from tests.rehearsal.process.test_lambda_rehearsal import LOOPBACK_WEBHOOKS, deployed_values
from tests.rehearsal.sqs import take_message
from tests.support.processes import free_port, running

pytestmark = pytest.mark.slow


def _post(port: int, body: dict[str, Any], token: str) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/", data=json.dumps(body).encode(), method="POST",
        headers={"content-type": "application/json", "a2a-version": "1.0",
                 "authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def test_run_sh_starts_the_door_from_the_bundle_alone(
    native_bundle: Path, runtime_sdk_folder: Path, deployed_template: dict[str, Any],
    rehearsal_table: str, deployed_queues: dict[str, str], ddb_endpoint: str,
    moto_endpoint: str, runtime_interpreter: str, tmp_path: Path,
) -> None:
    (door,) = [r["Properties"] for r in deployed_template["Resources"].values()
               if r["Type"] == "AWS::Lambda::Function"
               and r["Properties"].get("Handler") == HANDLER]
    assert HANDLER == RUN_SCRIPT
    # `python` for run.sh: Lambda's version without site packages, so only PYTHONPATH (the
    # task root, which run.sh puts first, and the runtime's SDK) can provide modules.
    shim = tmp_path / "bin" / "python"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec "{runtime_interpreter}" -S "$@"\n')
    shim.chmod(0o755)
    issuer = Issuer(make_keys())
    issuer.publish("k1")
    names = resource_names(deployed_template, rehearsal_table, deployed_queues)
    port = free_port()
    env = {
        **CREDENTIALS, "AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL_DYNAMODB": ddb_endpoint, "AWS_ENDPOINT_URL_SQS": moto_endpoint,
        **local_environment(door["Environment"]["Variables"], names, deployed_values(issuer)),
        **LOOPBACK_WEBHOOKS,
        "PORT": str(port), "LAMBDA_TASK_ROOT": str(native_bundle),
        "PYTHONPATH": str(runtime_sdk_folder), "PATH": f"{shim.parent}:/usr/bin:/bin",
    }
    try:
        with running(["sh", str(native_bundle / RUN_SCRIPT)], ports=[port], env=env,
                     cwd=native_bundle, log=tmp_path / "door.log"):
            token = issuer.token("k1", sub="dora")
            status, sent = _post(port, {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                                        "params": {"message": {
                                            "messageId": "m-door", "role": "ROLE_USER",
                                            "parts": [{"text": "door"}]},
                                            "configuration": {"returnImmediately": True}}},
                                 token)
            assert status == 200 and sent["result"]["task"]["status"]["state"] == (
                "TASK_STATE_SUBMITTED"), sent
            # Queued, as deployed: take the message off the queue (the other rehearsals'
            # workers take theirs).
            take_message(moto_endpoint, env[ENV.QUEUE_URL], sent["result"]["task"]["id"])
            status, refused = _post(port, {"jsonrpc": "2.0", "id": 2, "method": "GetTask",
                                           "params": {"id": "x"}}, "not-a-token")
            assert status == 401, refused
    finally:
        issuer.close()
