"""Settings.from_env: every variable parsed, every bad value refused with its name."""

from __future__ import annotations

import pytest

from a2akit.runtime import load_agent
from a2akit.settings import ENV, Settings, SettingsError

BOOLEANS = {ENV.ALLOW_ANONYMOUS: "allow_anonymous", ENV.PUSH_NOTIFICATIONS: "push_notifications",
            ENV.EXTENDED_AGENT_CARD: "extended_agent_card"}


def test_empty_environment_gives_the_defaults() -> None:
    assert Settings.from_env({}) == Settings()


def test_empty_values_count_as_unset() -> None:
    names = [value for key, value in vars(ENV).items() if key.isupper()]
    assert Settings.from_env(dict.fromkeys(names, "")) == Settings()


def test_every_variable_is_read() -> None:
    settings = Settings.from_env({
        ENV.AGENT: "my_agent.main:agent",
        ENV.TABLE: "tasks",
        ENV.DYNAMODB_ENDPOINT: "http://127.0.0.1:8000",
        ENV.PUBLIC_URL: "https://agent.example.com/",
        ENV.GRPC_ADDRESS: "grpc.internal:50051",
        ENV.ALLOW_ANONYMOUS: "true",
        ENV.BEARER_TOKENS: "alice=tok-a, bob=tok-b,",
        ENV.GRPC_PORT: "0",
        ENV.MAX_REQUEST_BYTES: "1024",
        ENV.PUSH_NOTIFICATIONS: "yes",
        ENV.EXTENDED_AGENT_CARD: "1",
        ENV.STREAM_BUDGET_SECONDS: "12.5",
        ENV.RETENTION_DAYS: "1",
    })
    assert settings == Settings(
        agent="my_agent.main:agent", table="tasks", dynamodb_endpoint="http://127.0.0.1:8000",
        public_url="https://agent.example.com/", grpc_address="grpc.internal:50051",
        allow_anonymous=True, bearer_tokens={"tok-a": "alice", "tok-b": "bob"}, grpc_port=0,
        max_request_bytes=1024, push_notifications=True, extended_agent_card=True,
        stream_budget_seconds=12.5, retention_days=1)


@pytest.mark.parametrize("name", list(BOOLEANS))
@pytest.mark.parametrize(("raw", "value"), [
    ("true", True), ("TRUE", True), (" yes ", True), ("1", True),
    ("false", False), ("No", False), ("0", False),
])
def test_booleans(name: str, raw: str, value: bool) -> None:
    assert getattr(Settings.from_env({name: raw}), BOOLEANS[name]) is value


@pytest.mark.parametrize("raw", ["grpc.internal:50051", "https://grpc.internal:50051/",
                                 "grpcs://grpc.internal:50051"])
def test_grpc_address_is_published_as_host_and_port(raw: str) -> None:
    assert Settings.from_env({ENV.GRPC_ADDRESS: raw}).grpc_address == "grpc.internal:50051"


BAD_VALUES = [
    # Booleans: only true/false, yes/no, 1/0.
    *[(name, raw) for name in BOOLEANS for raw in ("maybe", "on", "2", "t")],
    # Integers: not a number, not an integer, below the minimum.
    (ENV.GRPC_PORT, "http"), (ENV.GRPC_PORT, "50051.0"), (ENV.GRPC_PORT, "-1"),
    (ENV.MAX_REQUEST_BYTES, "1MB"), (ENV.MAX_REQUEST_BYTES, "2e6"),
    (ENV.MAX_REQUEST_BYTES, "1023"), (ENV.MAX_REQUEST_BYTES, "0"),
    (ENV.RETENTION_DAYS, "a month"), (ENV.RETENTION_DAYS, "1.5"), (ENV.RETENTION_DAYS, "0"),
    (ENV.RETENTION_DAYS, "-30"),
    # Seconds: a positive number.
    (ENV.STREAM_BUDGET_SECONDS, "soon"), (ENV.STREAM_BUDGET_SECONDS, "10s"),
    (ENV.STREAM_BUDGET_SECONDS, "0"), (ENV.STREAM_BUDGET_SECONDS, "-1.5"),
    # Tokens: owner=token entries, comma separated.
    (ENV.BEARER_TOKENS, "tok-a"), (ENV.BEARER_TOKENS, "alice="), (ENV.BEARER_TOKENS, "=tok-a"),
    (ENV.BEARER_TOKENS, "alice=tok-a,bob"), (ENV.BEARER_TOKENS, "alice:tok-a"),
]


@pytest.mark.parametrize(("name", "raw"), BAD_VALUES)
def test_bad_value_is_refused_naming_the_variable(name: str, raw: str) -> None:
    with pytest.raises(SettingsError, match=name):
        Settings.from_env({name: raw})


@pytest.mark.parametrize(("name", "raw"), [
    (ENV.GRPC_PORT, "65536"),  # above the last TCP port
    (ENV.STREAM_BUDGET_SECONDS, "nan"),  # compares false with everything, so never runs out
    (ENV.STREAM_BUDGET_SECONDS, "inf"),
    (ENV.SHUTDOWN_GRACE_SECONDS, "-1"),
    (ENV.LOG_LEVEL, "LOUD"),
    (ENV.BEARER_TOKENS, "alice=same,bob=same"),  # one token, two owners: the last one wins
])
def test_odd_values_are_refused(name: str, raw: str) -> None:
    with pytest.raises(SettingsError, match=name):
        Settings.from_env({name: raw})


@pytest.mark.parametrize("raw", ["no_colon", "a2akit.examples.echo:", ":agent",
                                 "no_such_module_here:agent", "a2akit.examples.echo:missing",
                                 "a2akit.settings:ENV"])
def test_bad_agent_is_refused_naming_the_variable(raw: str) -> None:
    with pytest.raises(SettingsError, match=ENV.AGENT):
        load_agent(Settings.from_env({ENV.AGENT: raw}).agent)


def test_agent_may_be_an_instance_or_a_class() -> None:
    from a2akit.examples.echo import EchoAgent, agent

    assert load_agent("a2akit.examples.echo:agent") is agent
    assert isinstance(load_agent("a2akit.examples.echo:EchoAgent"), EchoAgent)
