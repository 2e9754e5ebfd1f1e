"""A user's agent project from the bundle as built (issue 34): the project in a folder of its
own whose agent imports cowsay, its lock, the Lambda folder infra/bundle.py builds from that
lock and the project's code (for this machine's architecture), run as Lambda runs it
(`python -I -S`, only the bundle and the runtime's SDK importable) with the door's environment
from a template synthesized with `a2a:agentProject`: the agent answers from the bundle.

Needs PyPI for the lock and the bundle's wheels (pip's cache after the first run).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from a2akit.agent_project import load_project
from a2akit.settings import ENV
from infra.agent_code import AgentCode
from infra.bundle import build_bundle
from infra.jsonrpc_api import HANDLER
from infra.project_lock import LOCK_NAME
from scripts.dynamodb_local import CREDENTIALS
from tests.infra.conftest import synth_stack
from tests.infra.process.test_agent_bundle import write_cow_project
from tests.rehearsal.lambda_runtime import Function
from tests.rehearsal.permissions import local_environment, resource_names
from tests.support.processes import ROOT

pytestmark = pytest.mark.slow

EVENTS = ROOT / "tests" / "events"
AGENT = "plain_agent.agent:agent"
# The door runs the agent itself (inline) and lets anonymous callers in: no issuer, no queue.
CONTEXT = {"a2a:execution": "inline", "a2a:auth": "none", "a2a:allowAnonymous": "true",
           "a2a:grpc": False}


@pytest.fixture(scope="module")
def door(tmp_path_factory: pytest.TempPathFactory, rehearsal_table: str, ddb_endpoint: str,
         runtime_sdk_folder: Path, runtime_interpreter: str) -> Iterator[Function]:
    root = write_cow_project(tmp_path_factory.mktemp("elsewhere") / "cow-agent")
    task_root = tmp_path_factory.mktemp("cow_task_root")
    build_bundle(task_root, jwt=False, native=True, lock=root / LOCK_NAME,
                 agent=AgentCode(load_project(root), AGENT))
    placeholder = tmp_path_factory.mktemp("placeholder")
    (placeholder / "placeholder.txt").write_text("rehearsal\n")
    _, template, _ = synth_stack(placeholder, tmp_path_factory.mktemp("cdk_out"),
                                 **{"a2a:agentProject": str(root), **CONTEXT})
    resources = template.to_json()["Resources"]
    (properties,) = [r["Properties"] for r in resources.values()
                     if r["Type"] == "AWS::Lambda::Function" and r["Properties"]["Handler"]
                     == HANDLER]
    variables = properties["Environment"]["Variables"]
    assert variables[ENV.AGENT] == AGENT
    env = {
        **CREDENTIALS, "AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL_DYNAMODB": ddb_endpoint, "AWS_LAMBDA_FUNCTION_NAME": "door",
        "LAMBDA_TASK_ROOT": str(task_root),
        **local_environment(variables, resource_names(template.to_json(), rehearsal_table, {}),
                            {ENV.PUBLIC_URL: "https://door.example/"}),
    }
    # The Mangum handler of the same app (the adapter's run.sh is tests/rehearsal's door test).
    function = Function(runtime_interpreter, task_root, runtime_sdk_folder,
                        "handlers.jsonrpc.handler", env,
                        tmp_path_factory.mktemp("logs") / "door.log")
    yield function
    function.close()


def _send(door: Function, text: str) -> dict[str, Any]:
    event: dict[str, Any] = json.loads((EVENTS / "apigw_http_v2.json").read_text())
    event["headers"]["a2a-version"] = "1.0"
    event["body"] = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": {"messageId": "m-cow", "role": "ROLE_USER", "parts": [{"text": text}]}}})
    response = door.invoke(event, 60)
    assert response["statusCode"] == 200, response
    reply: dict[str, Any] = json.loads(response["body"])
    assert "result" in reply, reply
    return reply


def test_the_project_s_agent_answers_from_the_bundle(door: Function) -> None:
    task = _send(door, "moo from the bundle")["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
    (artifact,) = task["artifacts"]
    said = artifact["parts"][0]["text"]
    assert "moo from the bundle" in said and "^__^" in said  # cowsay's cow
    # The agent, its dependency and the kit came from the bundle alone.
    files = door.probe("plain_agent.agent", "cowsay", "a2akit")["files"]
    assert all(str(door.task_root) in path for path in files.values()), files
