"""a2akit.agent_secrets: `secret(NAME)` and `parameter(NAME)` from the local environment, and
from Secrets Manager and SSM (a moto server, over HTTP; nothing patched) kept for a max age."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from a2akit import parameter, secret
from a2akit.agent_secrets import AgentValues, UnavailableError, UnknownNameError
from a2akit.settings import ENV, Settings, SettingsError
from tests.support import moto as aws

ROOT = Path(__file__).resolve().parents[2]


class Clock:
    """The cache's monotonic clock, moved by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_local_values_come_from_the_environment() -> None:
    values = AgentValues(Settings(), environ={"A2A_SECRET_MODEL_KEY": "sk-local",
                                              "A2A_PARAMETER_MODEL_ID": "model-1"})
    assert values.secret("MODEL_KEY") == "sk-local"
    assert values.parameter("MODEL_ID") == "model-1"


def test_the_module_functions_read_the_environment_at_each_call(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("A2A_SECRET_GREETING_KEY", "first")
    assert secret("GREETING_KEY") == "first"
    monkeypatch.setenv("A2A_SECRET_GREETING_KEY", "second")
    assert secret("GREETING_KEY") == "second"
    monkeypatch.setenv("A2A_PARAMETER_GREETING", "hello")
    assert parameter("GREETING") == "hello"


@pytest.mark.parametrize(("kind", "local", "listed"), [
    ("secret", "A2A_SECRET_MISSING", "A2A_AGENT_SECRETS"),
    ("parameter", "A2A_PARAMETER_MISSING", "A2A_AGENT_PARAMETERS"),
])
def test_an_unknown_name_says_which_variable_to_set(kind: str, local: str, listed: str) -> None:
    values = AgentValues(Settings(), environ={})
    with pytest.raises(UnknownNameError) as raised:
        getattr(values, kind)("MISSING")
    message = str(raised.value)
    assert "'MISSING'" in message and local in message and listed in message
    assert isinstance(raised.value, LookupError)


@pytest.mark.parametrize("raw", ["MODEL_KEY", "=arn", "A B=x", "K=a,K=b", "K="])
def test_a_malformed_list_is_refused_at_start(raw: str) -> None:
    with pytest.raises(SettingsError, match=ENV.AGENT_SECRETS):
        Settings.from_env({ENV.AGENT_SECRETS: raw})


def test_lists_are_read() -> None:
    settings = Settings.from_env({
        ENV.AGENT_SECRETS: "MODEL_KEY=arn:aws:secretsmanager:us-east-1:1:secret:k-AbCdEf, "
                           "OTHER=plain/name",
        ENV.AGENT_PARAMETERS: "MODEL_ID=/agent/model", ENV.SECRETS_MAX_AGE_SECONDS: "30"})
    assert settings.agent_secrets == {
        "MODEL_KEY": "arn:aws:secretsmanager:us-east-1:1:secret:k-AbCdEf", "OTHER": "plain/name"}
    assert settings.agent_parameters == {"MODEL_ID": "/agent/model"}
    assert settings.secrets_max_age_seconds == 30


# --- AWS: moto in server mode ------------------------------------------------------------------

def _aws(endpoint: str) -> tuple[Any, Any, str, str]:
    """A secret and a SecureString parameter of their own; (secrets client, ssm client,
    secret name, parameter path)."""
    secrets, ssm = aws.client("secretsmanager", endpoint), aws.client("ssm", endpoint)
    name, path = f"agent/model-key-{uuid.uuid4()}", f"/agent/{uuid.uuid4()}/model"
    secrets.create_secret(Name=name, SecretString="sk-one")
    ssm.put_parameter(Name=path, Value="model-one", Type="SecureString")
    return secrets, ssm, name, path


@pytest.mark.slow  # a moto server
def test_aws_values_are_kept_for_their_max_age(moto_endpoint: str) -> None:
    secrets, ssm, name, path = _aws(moto_endpoint)
    clock = Clock()
    values = AgentValues(
        Settings(agent_secrets={"MODEL_KEY": name}, agent_parameters={"MODEL_ID": path},
                 secrets_max_age_seconds=60),
        # A listed name is read from AWS even where the local variable is set too.
        environ={"A2A_SECRET_MODEL_KEY": "sk-local"},
        clients={"secretsmanager": secrets, "ssm": ssm}, clock=clock)
    assert (values.secret("MODEL_KEY"), values.parameter("MODEL_ID")) == ("sk-one", "model-one")
    secrets.put_secret_value(SecretId=name, SecretString="sk-two")
    ssm.put_parameter(Name=path, Value="model-two", Type="SecureString", Overwrite=True)
    clock.now += 59
    assert (values.secret("MODEL_KEY"), values.parameter("MODEL_ID")) == ("sk-one", "model-one")
    clock.now += 1
    assert (values.secret("MODEL_KEY"), values.parameter("MODEL_ID")) == ("sk-two", "model-two")


@pytest.mark.slow  # a moto server
def test_a_value_aws_does_not_have_is_unavailable_naming_it(moto_endpoint: str) -> None:
    secrets, ssm, _, _ = _aws(moto_endpoint)
    clock = Clock()
    values = AgentValues(Settings(agent_secrets={"GONE": "agent/no-such-secret"},
                                  agent_parameters={"GONE": "/agent/no/such/parameter"}),
                         environ={}, clients={"secretsmanager": secrets, "ssm": ssm},
                         clock=clock)
    with pytest.raises(UnavailableError, match=r"secret 'GONE': .*agent/no-such-secret: "
                                               "ResourceNotFoundException"):
        values.secret("GONE")
    with pytest.raises(UnavailableError, match=r"parameter 'GONE': .*ParameterNotFound"):
        values.parameter("GONE")
    # Created now: read again once the retry interval has passed, not before.
    secrets.create_secret(Name="agent/no-such-secret", SecretString="here")
    with pytest.raises(UnavailableError, match="retrying later"):
        values.secret("GONE")
    clock.now += 5
    assert values.secret("GONE") == "here"


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
