"""a2akit.agent_secrets: `secret(NAME)` and `parameter(NAME)` from the local environment, and
from Secrets Manager and SSM (a moto server, over HTTP; nothing patched) kept for a max age."""

from __future__ import annotations

import pytest

from a2akit import parameter, secret
from a2akit.agent_secrets import AgentValues, UnknownNameError
from a2akit.settings import ENV, Settings, SettingsError


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
