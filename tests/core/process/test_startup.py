"""A kit that cannot start says why in one line naming the setting, from every entry point.

Each entry point runs as its own process with one bad variable: `./dev serve`
(scripts.serve_local), the gRPC container (`python -m grpc_service`) and the Lambda handler
module (handlers.jsonrpc, imported as Lambda's runtime does at init).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from a2akit.runtime import STARTUP_EXIT_CODE
from scripts.dynamodb_local import CREDENTIALS, free_port
from tests.support.processes import ROOT

pytestmark = pytest.mark.slow

PREFIX = "a2akit: cannot start: "
# The container logs at INFO (botocore announces where it found credentials); only the
# explanation may be more than that.
_INFO_LOG = re.compile(r"^\S+ \S+ INFO ")

# Imports the handler module as Lambda's runtime does, and shows what it raised on stdout.
_LAMBDA_INIT = """
import sys
from a2akit.runtime import StartupError
try:
    import handlers.jsonrpc
except StartupError as error:
    print(error)
    sys.exit(3)
"""

ENTRY_POINTS = {
    "serve": [sys.executable, "-m", "scripts.serve_local", "--port", "0", "--grpc-port", "0"],
    "grpc": [sys.executable, "-m", "grpc_service"],
    "lambda": [sys.executable, "-c", _LAMBDA_INIT],
}


def _unreachable_dynamodb() -> dict[str, str]:
    return {"A2A_TABLE": "a2a-tasks",
            "AWS_ENDPOINT_URL_DYNAMODB": f"http://127.0.0.1:{free_port()}", **CREDENTIALS}


BAD_SETTINGS = {
    "agent": ("A2A_AGENT", {"A2A_AGENT": "no_such_module:agent"}),
    "anonymous": ("A2A_ALLOW_ANONYMOUS", {"A2A_ALLOW_ANONYMOUS": "maybe"}),
    "tokens": ("A2A_BEARER_TOKENS", {"A2A_BEARER_TOKENS": "alice"}),
    "endpoint-url": ("AWS_ENDPOINT_URL_DYNAMODB",
                     {"A2A_TABLE": "a2a-tasks", "AWS_ENDPOINT_URL_DYNAMODB": "localhost:8001",
                      **CREDENTIALS}),
    "anonymous-yes": ("A2A_ALLOW_ANONYMOUS", {"A2A_ALLOW_ANONYMOUS": "yes"}),
    # The worker could never see a task in this process's embedded store.
    "queue-without-table": ("A2A_TABLE", {"A2A_EXECUTION": "queue",
                                          "A2A_QUEUE_URL": "http://127.0.0.1:9/1/q"}),
    "agent-not-callable": ("A2A_AGENT", {"A2A_AGENT": "a2akit.limits:MAX_JSON_DEPTH"}),
    "agent-factory-wants-arguments": ("A2A_AGENT", {"A2A_AGENT": "a2akit.runtime:load_agent"}),
    "project-missing": ("A2A_AGENT_PROJECT", {"A2A_AGENT_PROJECT": "/no/such/agent-project"}),
    "secrets-malformed": ("A2A_AGENT_SECRETS", {"A2A_AGENT_SECRETS": "MODEL_KEY"}),
    # URLs the kit cannot serve or print (issue 33, item 13).
    "public-url-not-a-url": ("A2A_PUBLIC_URL", {"A2A_PUBLIC_URL": "notaurl"}),
    "public-url-ftp": ("A2A_PUBLIC_URL", {"A2A_PUBLIC_URL": "ftp://x"}),
    "public-url-no-host": ("A2A_PUBLIC_URL", {"A2A_PUBLIC_URL": "https:///a2a"}),
    "public-url-query": ("A2A_PUBLIC_URL", {"A2A_PUBLIC_URL": "https://x.example/?a=1"}),
    "public-url-port": ("A2A_PUBLIC_URL", {"A2A_PUBLIC_URL": "http://127.0.0.1:99999/"}),
    # Agents that call agents: read on the first call, refused at start all the same.
    "peer-grpc-without-port": ("A2A_PEERS", {"A2A_PEERS": "counter=grpc://counter.internal"}),
    "peer-key-for-no-peer": ("A2A_PEER_API_KEYS", {"A2A_PEER_API_KEYS": "counter=KEY"}),
}


def _run(entry_point: str, bad: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("A2A_", "AWS_", "GRPC_"))}
    env.update(PYTHONPATH=str(ROOT), GRPC_PORT="0", **bad)
    return subprocess.run(ENTRY_POINTS[entry_point], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)


def _logged(line: str) -> tuple[str | None, str]:
    """(level, text) of a stderr line: a JSON log line (a2akit.logs, once the entry point
    configured logging) by its fields, any other line as it is."""
    try:
        record = json.loads(line)
    except ValueError:
        return None, line
    return record["level"], record["message"]


def _check_one_line(run: subprocess.CompletedProcess[str], variable: str) -> str:
    assert "Traceback" not in run.stdout + run.stderr
    lines = [_logged(line) for line in run.stderr.splitlines() if not _INFO_LOG.match(line)]
    lines = [(level, text) for level, text in lines if level != "INFO"]
    assert len(lines) == 1, run.stderr
    ((level, line),) = lines
    assert level in (None, "ERROR")
    assert line.startswith(PREFIX) and variable in line, line
    return line


@pytest.mark.parametrize("entry_point", ["serve", "grpc"])
@pytest.mark.parametrize("case", [*BAD_SETTINGS, "unreachable"])
def test_command_line_entry_points_explain_and_exit(entry_point: str, case: str) -> None:
    variable, bad = (("AWS_ENDPOINT_URL_DYNAMODB", _unreachable_dynamodb())
                     if case == "unreachable" else BAD_SETTINGS[case])
    run = _run(entry_point, bad)
    assert run.returncode == STARTUP_EXIT_CODE, run.stderr
    _check_one_line(run, variable)
    assert run.stdout == ""  # no banner from a server that is not running


@pytest.mark.parametrize("case", [*BAD_SETTINGS, "unreachable"])
def test_lambda_init_logs_the_line_once_and_raises_it(case: str) -> None:
    variable, bad = (("AWS_ENDPOINT_URL_DYNAMODB", _unreachable_dynamodb())
                     if case == "unreachable" else BAD_SETTINGS[case])
    run = _run("lambda", bad)
    assert run.returncode == 3, run.stderr
    line = _check_one_line(run, variable)
    assert run.stdout.strip() == line  # the init error Lambda reports carries the same line


def test_agent_module_that_fails_says_where(tmp_path: Path) -> None:
    (tmp_path / "broken_agent.py").write_text("import os\n\nagent = undefined_name\n")
    env = {key: value for key, value in os.environ.items() if not key.startswith("A2A_")}
    env.update(PYTHONPATH=f"{ROOT}{os.pathsep}{tmp_path}", A2A_AGENT="broken_agent:agent",
               GRPC_PORT="0")
    run = subprocess.run(ENTRY_POINTS["grpc"], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == STARTUP_EXIT_CODE
    line = _check_one_line(run, "A2A_AGENT")
    assert "NameError" in line and "broken_agent.py:3" in line


def test_agent_class_that_cannot_be_made_says_why(tmp_path: Path) -> None:
    (tmp_path / "fussy_agent.py").write_text(
        "class Agent:\n"
        "    def __init__(self):\n"
        "        raise RuntimeError('no model file')\n")
    env = {key: value for key, value in os.environ.items() if not key.startswith("A2A_")}
    env.update(PYTHONPATH=f"{ROOT}{os.pathsep}{tmp_path}", A2A_AGENT="fussy_agent:Agent",
               GRPC_PORT="0")
    for entry_point in ("serve", "grpc"):
        run = subprocess.run(ENTRY_POINTS[entry_point], cwd=ROOT, env=env, capture_output=True,
                             text=True, timeout=120)
        assert run.returncode == STARTUP_EXIT_CODE, run.stderr
        line = _check_one_line(run, "A2A_AGENT")
        assert "RuntimeError: no model file" in line and "fussy_agent.py:3" in line, line


@pytest.mark.parametrize(("option", "port"), [("--port", "99999"), ("--grpc-port", "65536"),
                                              ("--port", "-1")])
def test_serve_with_a_port_out_of_range_says_so(option: str, port: str) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("A2A_")}
    env.update(PYTHONPATH=str(ROOT))
    command = [sys.executable, "-m", "scripts.serve_local", "--port", "0", "--grpc-port", "0",
               option, port]
    run = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == STARTUP_EXIT_CODE, run.stderr
    line = _check_one_line(run, option)
    assert "0-65535" in line, line
    assert run.stdout == ""


def test_queue_mode_with_aws_region_alone_serves_both_clients(
        ddb_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """AWS_REGION alone (as Lambda sets it) serves the kit's DynamoDB client and its SQS
    client alike: boto3 read only AWS_DEFAULT_REGION, and queue mode stopped at start
    without it before the SQS client joined the kit's family (issue 36, item 5)."""
    from a2akit.execution.executor import QueueExecutor
    from a2akit.runtime import build_operations
    from a2akit.settings import Settings
    from a2akit.store._client import SqsClient
    from tests.store.conftest import TABLE

    for name in ("AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    environment = {**CREDENTIALS, "AWS_REGION": "us-east-1", "A2A_TABLE": TABLE,
                   "AWS_ENDPOINT_URL_DYNAMODB": ddb_endpoint, "A2A_EXECUTION": "queue",
                   "A2A_QUEUE_URL": "http://127.0.0.1:9/1/q", "A2A_ALLOW_ANONYMOUS": "true"}
    environment.pop("AWS_DEFAULT_REGION", None)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    executor = build_operations(Settings.from_env()).executor
    assert isinstance(executor, QueueExecutor)
    queue_client = executor.queue.client  # type: ignore[attr-defined]
    assert isinstance(queue_client, SqsClient)
    assert queue_client.meta.region_name == "us-east-1"


# A table in AWS with no credentials anywhere (issue 33, item 14): nothing is sent (botocore
# finds no credentials before any request), and the process stops naming what to set.
NO_CREDENTIALS = {"A2A_TABLE": "a2a-tasks", "AWS_DEFAULT_REGION": "us-east-1",
                  "AWS_CONFIG_FILE": "/nonexistent", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
                  "AWS_EC2_METADATA_DISABLED": "true", "HOME": "/nonexistent"}


@pytest.mark.parametrize("entry_point", ["serve", "grpc"])
def test_a_table_without_credentials_stops_the_command_line_entry_points(
        entry_point: str) -> None:
    run = _run(entry_point, NO_CREDENTIALS)
    assert run.returncode == STARTUP_EXIT_CODE, run.stderr
    line = _check_one_line(run, "A2A_TABLE")
    assert "credentials" in line and "AWS_ENDPOINT_URL_DYNAMODB" in line, line
