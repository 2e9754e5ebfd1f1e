"""Settings.from_env: every variable parsed, every bad value refused with its name."""

from __future__ import annotations

import pytest

from a2akit.runtime import load_agent
from a2akit.settings import ENV, Settings, SettingsError

BOOLEANS = {ENV.ALLOW_ANONYMOUS: "allow_anonymous", ENV.PUSH_NOTIFICATIONS: "push_notifications",
            ENV.PUSH_ALLOW_HTTP: "push_allow_http",
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
        ENV.PUSH_NOTIFICATIONS: "True",
        ENV.EXTENDED_AGENT_CARD: " TRUE ",
        ENV.STREAM_BUDGET_SECONDS: "12.5",
        ENV.RETENTION_DAYS: "1",
        ENV.EXECUTION: "Queue",
        ENV.QUEUE_URL: "https://sqs.us-east-1.amazonaws.com/1/q",
        ENV.SQS_ENDPOINT: "http://127.0.0.1:5000",
        ENV.LEASE_SECONDS: "3",
        ENV.BUDGET_MARGIN_SECONDS: "0.5",
        ENV.QUEUE_GRACE_SECONDS: "60",
        ENV.QUEUE_MAX_RECEIVES: "5",
        ENV.SWEEP_SECONDS: "2",
    })
    assert settings == Settings(
        agent="my_agent.main:agent", table="tasks", dynamodb_endpoint="http://127.0.0.1:8000",
        public_url="https://agent.example.com/", grpc_address="grpc.internal:50051",
        allow_anonymous=True, bearer_tokens={"tok-a": "alice", "tok-b": "bob"}, grpc_port=0,
        max_request_bytes=1024, push_notifications=True, extended_agent_card=True,
        stream_budget_seconds=12.5, retention_days=1, execution="queue",
        queue_url="https://sqs.us-east-1.amazonaws.com/1/q", sqs_endpoint="http://127.0.0.1:5000",
        lease_seconds=3.0, budget_margin_seconds=0.5, queue_grace_seconds=60.0,
        queue_max_receives=5, sweep_seconds=2.0)


@pytest.mark.parametrize("name", list(BOOLEANS))
@pytest.mark.parametrize(("raw", "value"), [
    ("true", True), ("TRUE", True), (" True ", True),
    ("false", False), ("False", False), ("", False),
])
def test_booleans(name: str, raw: str, value: bool) -> None:
    assert getattr(Settings.from_env({name: raw}), BOOLEANS[name]) is value


@pytest.mark.parametrize("raw", ["grpc.internal:50051", "https://grpc.internal:50051/",
                                 "grpcs://grpc.internal:50051"])
def test_grpc_address_is_published_as_host_and_port(raw: str) -> None:
    assert Settings.from_env({ENV.GRPC_ADDRESS: raw}).grpc_address == "grpc.internal:50051"


BAD_VALUES = [
    # Booleans: only true or false (what every message and document says), in any case.
    *[(name, raw) for name in BOOLEANS
      for raw in ("maybe", "on", "2", "t", "yes", "no", "1", "0", "Y", "truee")],
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
    (ENV.EXECUTION, "lambda"),
    (ENV.QUEUE_MAX_RECEIVES, "0"),
    (ENV.LEASE_SECONDS, "0"),
    (ENV.BUDGET_MARGIN_SECONDS, "-1"),
    (ENV.PUSH_DELIVERY, "webhook"),
    (ENV.PUSH_ALLOW_CIDRS, "127.0.0.1/33"),
    (ENV.PUSH_ALLOW_CIDRS, "10.0.0.0/8, localhost"),
    (ENV.PUSH_ATTEMPTS, "0"),
    (ENV.PUSH_ATTEMPTS, "21"),
    (ENV.PUSH_MAX_CONFIGS, "0"),
    (ENV.PUSH_TIMEOUT_SECONDS, "0"),
    (ENV.PUSH_BACKOFF_CAP_SECONDS, "inf"),
])
def test_odd_values_are_refused(name: str, raw: str) -> None:
    with pytest.raises(SettingsError, match=name):
        Settings.from_env({name: raw})


def test_queue_execution_needs_a_queue_url() -> None:
    with pytest.raises(SettingsError, match=ENV.QUEUE_URL):
        Settings.from_env({ENV.EXECUTION: "queue"})


def test_queue_execution_needs_a_shared_store() -> None:
    # The worker is another process: with the embedded store it would never see the task,
    # and every blocking call would wait for a result that cannot come.
    with pytest.raises(SettingsError, match=f"shared store.*{ENV.TABLE}"):
        Settings.from_env({ENV.EXECUTION: "queue", ENV.QUEUE_URL: "https://sqs.example/1/q"})
    settings = Settings.from_env({ENV.EXECUTION: "queue", ENV.QUEUE_URL: "https://sqs.example/1/q",
                                  ENV.TABLE: "tasks"})
    assert (settings.execution, settings.table) == ("queue", "tasks")


@pytest.mark.parametrize("raw", ["no_colon", "a2akit.examples.echo:", ":agent",
                                 "no_such_module_here:agent", "a2akit.examples.echo:missing",
                                 "a2akit.settings:ENV"])
def test_bad_agent_is_refused_naming_the_variable(raw: str) -> None:
    with pytest.raises(SettingsError, match=ENV.AGENT):
        load_agent(Settings.from_env({ENV.AGENT: raw}))


def test_agent_may_be_an_instance_or_a_class() -> None:
    from a2akit.examples.echo import EchoAgent, agent

    assert load_agent(Settings(agent="a2akit.examples.echo:agent")) is agent
    assert isinstance(load_agent(Settings(agent="a2akit.examples.echo:EchoAgent")), EchoAgent)


def test_push_settings_are_read() -> None:
    settings = Settings.from_env({
        ENV.PUSH_DELIVERY: "Stream", ENV.PUSH_ALLOW_CIDRS: "127.0.0.1, 10.1.2.0/24 ,::1",
        ENV.PUSH_TIMEOUT_SECONDS: "2.5", ENV.PUSH_ATTEMPTS: "3", ENV.PUSH_BACKOFF_SECONDS: "0.5",
        ENV.PUSH_BACKOFF_CAP_SECONDS: "8", ENV.PUSH_MAX_CONFIGS: "4",
        ENV.PUSH_DLQ_URL: "https://sqs.us-east-1.amazonaws.com/1/push-dlq",
    })
    assert (settings.push_delivery, settings.push_allow_cidrs) == (
        "stream", ("127.0.0.1/32", "10.1.2.0/24", "::1/128"))
    assert (settings.push_timeout_seconds, settings.push_attempts, settings.push_backoff_seconds,
            settings.push_backoff_cap_seconds, settings.push_max_configs) == (2.5, 3, 0.5, 8, 4)
    assert settings.push_dlq_url == "https://sqs.us-east-1.amazonaws.com/1/push-dlq"


def test_on_lambda_push_is_delivered_by_the_stream_dispatcher() -> None:
    lambda_env = {"AWS_LAMBDA_FUNCTION_NAME": "front-door"}
    assert Settings.from_env(lambda_env).push_delivery == "stream"
    assert Settings.from_env({}).push_delivery == "inline"
    with pytest.raises(SettingsError, match=ENV.PUSH_DELIVERY):
        Settings.from_env({**lambda_env, ENV.PUSH_DELIVERY: "inline"})
