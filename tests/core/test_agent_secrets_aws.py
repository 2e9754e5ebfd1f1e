"""The agent's secrets and parameters from AWS: Secrets Manager and SSM served by moto."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from a2akit.agent_secrets import AgentValues, UnavailableError
from a2akit.settings import Settings
from tests.support import moto as aws


class Clock:
    """The cache's monotonic clock, moved by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


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
