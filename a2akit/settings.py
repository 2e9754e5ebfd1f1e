"""Settings: read from the environment once, into one frozen, typed object.

Code receives a `Settings`; tests build one directly instead of patching the environment.
The names below are the kit's public interface (DESIGN.md); infra/ imports them from here.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import math
import os
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from a2akit.agent_project import AgentProject

__all__ = ["ALL_OPERATIONS", "DEFAULT_MAX_TASK_BYTES", "ENV", "EXECUTION_MODES", "INLINE",
           "JWT_ALGORITHMS", "PUSH_DELIVERY_MODES", "QUEUE", "STREAM", "Settings", "SettingsError",
           "check_fetch_url", "name_map"]

N = TypeVar("N", int, float)


class SettingsError(ValueError):
    """An environment variable has a value the kit cannot use; the message names it."""


# Environment variable names, one place.
class ENV:
    AGENT = "A2A_AGENT"
    # The user's agent project (a2akit/agent_project.py): its folder.
    AGENT_PROJECT = "A2A_AGENT_PROJECT"
    # What the agent reads at run time (a2akit/agent_secrets.py): NAME=where,... in AWS, and
    # the families A2A_SECRET_<NAME> / A2A_PARAMETER_<NAME> (their prefixes) locally.
    AGENT_SECRETS = "A2A_AGENT_SECRETS"
    AGENT_PARAMETERS = "A2A_AGENT_PARAMETERS"
    SECRETS_MAX_AGE_SECONDS = "A2A_SECRETS_MAX_AGE_SECONDS"
    SECRET_PREFIX = "A2A_SECRET_"
    PARAMETER_PREFIX = "A2A_PARAMETER_"
    TABLE = "A2A_TABLE"
    DYNAMODB_ENDPOINT = "AWS_ENDPOINT_URL_DYNAMODB"
    PUBLIC_URL = "A2A_PUBLIC_URL"
    GRPC_ADDRESS = "A2A_GRPC_ADDRESS"
    REST_BASE_PATH = "A2A_REST_BASE_PATH"
    ALLOW_ANONYMOUS = "A2A_ALLOW_ANONYMOUS"
    BEARER_TOKENS = "A2A_BEARER_TOKENS"
    GRPC_PORT = "GRPC_PORT"
    MAX_REQUEST_BYTES = "A2A_MAX_REQUEST_BYTES"
    PUSH_NOTIFICATIONS = "A2A_PUSH_NOTIFICATIONS"
    EXTENDED_AGENT_CARD = "A2A_EXTENDED_AGENT_CARD"
    STREAM_BUDGET_SECONDS = "A2A_STREAM_BUDGET_SECONDS"
    RETENTION_DAYS = "A2A_RETENTION_DAYS"
    SHUTDOWN_GRACE_SECONDS = "A2A_GRPC_SHUTDOWN_GRACE_SECONDS"
    LOG_LEVEL = "LOG_LEVEL"
    # Powertools for AWS Lambda's name for it: the service outside Lambda (a2akit.logs).
    SERVICE_NAME = "POWERTOOLS_SERVICE_NAME"
    EXECUTION = "A2A_EXECUTION"
    QUEUE_URL = "A2A_QUEUE_URL"
    SQS_ENDPOINT = "AWS_ENDPOINT_URL_SQS"
    LEASE_SECONDS = "A2A_LEASE_SECONDS"
    INPUT_WAIT_SECONDS = "A2A_INPUT_WAIT_SECONDS"
    BUDGET_MARGIN_SECONDS = "A2A_BUDGET_MARGIN_SECONDS"
    QUEUE_GRACE_SECONDS = "A2A_QUEUE_GRACE_SECONDS"
    QUEUE_MAX_RECEIVES = "A2A_QUEUE_MAX_RECEIVES"
    SWEEP_SECONDS = "A2A_SWEEP_SECONDS"
    SSE_KEEPALIVE_SECONDS = "A2A_SSE_KEEPALIVE_SECONDS"
    MAX_ACTIVE_TASKS_PER_CALLER = "A2A_MAX_ACTIVE_TASKS_PER_CALLER"
    MAX_TASK_BYTES = "A2A_MAX_TASK_BYTES"
    # Authentication (docs/authentication.md).
    JWT_ISSUER = "A2A_JWT_ISSUER"
    JWT_JWKS_URL = "A2A_JWT_JWKS_URL"
    JWT_AUDIENCE = "A2A_JWT_AUDIENCE"
    JWT_ALGORITHMS = "A2A_JWT_ALGORITHMS"
    JWT_TENANT_CLAIM = "A2A_JWT_TENANT_CLAIM"
    JWT_REQUIRED_SCOPES = "A2A_JWT_REQUIRED_SCOPES"
    JWT_LEEWAY_SECONDS = "A2A_JWT_LEEWAY_SECONDS"
    JWKS_MAX_AGE_SECONDS = "A2A_JWKS_MAX_AGE_SECONDS"
    API_KEY_HEADER = "A2A_API_KEY_HEADER"
    API_KEYS = "A2A_API_KEYS"
    API_KEYS_SECRET = "A2A_API_KEYS_SECRET"
    API_KEYS_PARAMETER = "A2A_API_KEYS_PARAMETER"
    API_KEYS_MAX_AGE_SECONDS = "A2A_API_KEYS_MAX_AGE_SECONDS"
    AUTH_REFRESH_SECONDS = "A2A_AUTH_REFRESH_SECONDS"
    AUTH_TIMEOUT_SECONDS = "A2A_AUTH_TIMEOUT_SECONDS"
    # Push notification delivery (docs/push.md).
    PUSH_DELIVERY = "A2A_PUSH_DELIVERY"
    PUSH_ALLOW_HTTP = "A2A_PUSH_ALLOW_HTTP"
    PUSH_ALLOW_CIDRS = "A2A_PUSH_ALLOW_CIDRS"
    PUSH_TIMEOUT_SECONDS = "A2A_PUSH_TIMEOUT_SECONDS"
    PUSH_ATTEMPTS = "A2A_PUSH_ATTEMPTS"
    PUSH_BACKOFF_SECONDS = "A2A_PUSH_BACKOFF_SECONDS"
    PUSH_BACKOFF_CAP_SECONDS = "A2A_PUSH_BACKOFF_CAP_SECONDS"
    PUSH_MAX_CONFIGS = "A2A_PUSH_MAX_CONFIGS"
    PUSH_DLQ_URL = "A2A_PUSH_DLQ_URL"
    # Framework adapters (docs/frameworks.md).
    LANGGRAPH_CHECKPOINT_TABLE = "A2A_LANGGRAPH_CHECKPOINT_TABLE"
    # Agents that call agents (a2akit/peers; docs/peers.md).
    PEERS = "A2A_PEERS"
    PEER_API_KEYS = "A2A_PEER_API_KEYS"
    PEER_TOKEN_URL = "A2A_PEER_TOKEN_URL"
    PEER_CLIENT_ID = "A2A_PEER_CLIENT_ID"
    PEER_SCOPES = "A2A_PEER_SCOPES"


DEFAULT_AGENT = "a2akit.examples.echo:agent"
# The largest task (serialized: history, artifacts, status, metadata) and the largest event
# a store keeps; both stores refuse more the same way (docs/store.md, "Large tasks").
DEFAULT_MAX_TASK_BYTES = 16 * 1024 * 1024

# Where an agent runs (DESIGN.md, "Execution"): in the process that took the request, or on
# a queue worker.
INLINE = "inline"
QUEUE = "queue"
EXECUTION_MODES = (INLINE, QUEUE)
# Who sends push notifications (docs/push.md): the process that wrote the events (`inline`),
# or the dispatcher Lambda fed by the table's stream (`stream`, on AWS: a Lambda freezes once
# it answers, so it cannot deliver in the background).
STREAM = "stream"
PUSH_DELIVERY_MODES = (INLINE, STREAM)
# Asymmetric signatures only: `none` and the HMAC family (whose "key" would be the issuer's
# public key, RFC 8725 2.1) can never be configured.
JWT_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512",
                  "ES256", "ES384", "ES512", "EdDSA")
# Key of the scopes every operation requires (`A2A_JWT_REQUIRED_SCOPES` entries without `=`).
ALL_OPERATIONS = "*"


@dataclasses.dataclass(frozen=True)
class Settings:
    # `module:attribute`: A2A_AGENT, else the agent project's [tool.a2akit] agent, else echo.
    agent: str = DEFAULT_AGENT
    # The agent project (A2A_AGENT_PROJECT): its folders are where `agent` is imported from.
    agent_project: AgentProject | None = None
    # Secret and parameter names -> their Secrets Manager id, SSM path (a2akit.agent_secrets).
    agent_secrets: Mapping[str, str] = dataclasses.field(default_factory=dict)
    agent_parameters: Mapping[str, str] = dataclasses.field(default_factory=dict)
    secrets_max_age_seconds: float = 300.0
    table: str | None = None
    dynamodb_endpoint: str | None = None
    public_url: str = "http://127.0.0.1:8000/"
    grpc_address: str | None = None
    # The HTTP+JSON interface's path on public_url's host ("" = the root); None: public_url's.
    rest_base_path: str | None = None
    allow_anonymous: bool = False
    # bearer token -> owner, in plain text: local development only (a warning at start).
    bearer_tokens: Mapping[str, str] = dataclasses.field(default_factory=dict)
    grpc_port: int = 50051
    # One limit for both bindings: JSON-RPC body bytes and gRPC message bytes.
    max_request_bytes: int = 1024 * 1024
    push_notifications: bool = False
    extended_agent_card: bool = False
    # Longest a stream (or a blocking wait) may run; Lambda needs one below its timeout.
    stream_budget_seconds: float | None = None
    # At most this many unfinished tasks per caller (its owner, across every tenant it
    # names); None: no limit. The store counts them in the writes that create and end a task.
    max_active_tasks_per_caller: int | None = None
    retention_days: int = 30
    # The largest task a store keeps (a2akit.store.base.TaskStore.check_size).
    max_task_bytes: int = DEFAULT_MAX_TASK_BYTES
    # How long the gRPC container lets running calls finish after SIGTERM.
    shutdown_grace_seconds: float = 20.0
    log_level: str = "INFO"
    # inline: the process that took the request runs the agent; queue: it enqueues the task
    # on `queue_url` (SQS) and a worker runs it.
    execution: str = INLINE
    queue_url: str | None = None
    sqs_endpoint: str | None = None
    # A runner renews its lease on a task every third of this; a lease not renewed for this
    # long means the runner stopped, and the task ends FAILED (a2akit.execution.leases).
    lease_seconds: float = 30.0
    # A task waiting for the client (input- or auth-required) with no new message for this
    # long is ended CANCELED by the sweeper (a2akit.execution.leases): 30 days.
    input_wait_seconds: float = 30 * 86400.0
    # Kept free of an invocation's remaining time (Lambda) for the answer to leave.
    budget_margin_seconds: float = 5.0
    # How long a queued task may wait for a worker before it counts as lost.
    queue_grace_seconds: float = 900.0
    # The queue's maxReceiveCount: on the last receive, a message that fails again ends its
    # task FAILED before SQS moves it to the dead-letter queue.
    queue_max_receives: int = 3
    # How often the in-process sweeper (container, local server) looks for expired leases.
    sweep_seconds: float = 60.0
    # An idle SSE stream gets a comment line this often, well under any proxy's idle timeout.
    sse_keepalive_seconds: float = 15.0
    # --- push notifications (a2akit/push) -------------------------------------------------------
    push_delivery: str = INLINE
    # Development and tests only: plain-http webhooks, and private targets inside these
    # networks (the SSRF guard refuses loopback, private, link-local... addresses otherwise).
    push_allow_http: bool = False
    push_allow_cidrs: tuple[str, ...] = ()
    push_timeout_seconds: float = 10.0  # one webhook request
    push_attempts: int = 5  # per event and config, then the dead-letter queue
    push_backoff_seconds: float = 1.0  # first retry waits up to this (full jitter), doubling
    push_backoff_cap_seconds: float = 30.0  # longest wait between attempts, Retry-After too
    push_max_configs: int = 10  # per task
    push_dlq_url: str | None = None  # SQS; unset: a failed delivery is only logged
    # --- authentication (a2akit/auth); each scheme is on when its source is set ----------------
    # OAuth 2.0 / OpenID Connect bearer JWTs from one issuer.
    jwt_issuer: str | None = None
    jwt_jwks_url: str | None = None  # None: from the issuer's discovery document
    jwt_audiences: tuple[str, ...] = ()  # `aud`, or Cognito's `client_id` in access tokens
    jwt_algorithms: tuple[str, ...] = ("RS256",)
    jwt_tenant_claim: str | None = None
    # operation name (or ALL_OPERATIONS) -> scopes a token must carry for it
    jwt_required_scopes: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    jwt_leeway_seconds: float = 30.0
    jwks_max_age_seconds: float = 600.0
    # API keys, stored as SHA-256 hashes in one source: inline JSON, a Secrets Manager secret
    # or an SSM parameter.
    api_key_header: str = "x-api-key"
    api_keys: str | None = None
    api_keys_secret: str | None = None
    api_keys_parameter: str | None = None
    api_keys_max_age_seconds: float = 300.0
    # Least time between two loads of one source (unknown key id or API key, failed load).
    auth_refresh_seconds: float = 60.0
    # Timeout of one fetch (discovery document, JWKS, secret or parameter).
    auth_timeout_seconds: float = 3.0
    # --- framework adapters (a2akit/adapters) ---------------------------------------------------
    # LangGraph's checkpoints (a2akit.adapters.langgraph): a DynamoDB table of their own, so a
    # graph waiting for input resumes in any process; None: in memory, this process only.
    langgraph_checkpoint_table: str | None = None
    # --- agents that call agents (a2akit/peers) -------------------------------------------------
    # peer name -> its agent card URL, its base URL, or grpc://host:port (grpcs:// with TLS)
    peers: Mapping[str, str] = dataclasses.field(default_factory=dict)
    # peer name -> the name of the secret (a2akit.agent_secrets) holding its API key
    peer_api_keys: Mapping[str, str] = dataclasses.field(default_factory=dict)
    # OAuth 2.0 client credentials (Cognito's token endpoint) for every peer without an API
    # key; the client secret is the secret PEER_CLIENT_SECRET.
    peer_token_url: str | None = None
    peer_client_id: str | None = None
    peer_scopes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _check_auth(self)
        _check_peers(self)

    @property
    def jwt_enabled(self) -> bool:
        return self.jwt_issuer is not None

    @property
    def api_keys_enabled(self) -> bool:
        return any((self.api_keys, self.api_keys_secret, self.api_keys_parameter))

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        agent, project = _agent(env)
        return cls(
            agent=agent,
            agent_project=project,
            agent_secrets=name_map(env, ENV.AGENT_SECRETS),
            agent_parameters=name_map(env, ENV.AGENT_PARAMETERS),
            secrets_max_age_seconds=_seconds(env, ENV.SECRETS_MAX_AGE_SECONDS,
                                             cls.secrets_max_age_seconds),
            table=env.get(ENV.TABLE) or None,
            dynamodb_endpoint=env.get(ENV.DYNAMODB_ENDPOINT) or None,
            public_url=_public_url(env.get(ENV.PUBLIC_URL)) or cls.public_url,
            grpc_address=_grpc_address(env.get(ENV.GRPC_ADDRESS)),
            rest_base_path=_base_path(env.get(ENV.REST_BASE_PATH)),
            allow_anonymous=_bool(env, ENV.ALLOW_ANONYMOUS),
            bearer_tokens=_tokens(env.get(ENV.BEARER_TOKENS, "")),
            grpc_port=_int(env, ENV.GRPC_PORT, cls.grpc_port, minimum=0, maximum=65535),
            max_request_bytes=_int(env, ENV.MAX_REQUEST_BYTES, cls.max_request_bytes, minimum=1024),
            push_notifications=_bool(env, ENV.PUSH_NOTIFICATIONS),
            extended_agent_card=_bool(env, ENV.EXTENDED_AGENT_CARD),
            stream_budget_seconds=_float(env, ENV.STREAM_BUDGET_SECONDS),
            max_active_tasks_per_caller=(
                None if not env.get(ENV.MAX_ACTIVE_TASKS_PER_CALLER)
                else _int(env, ENV.MAX_ACTIVE_TASKS_PER_CALLER, 0, minimum=1)),
            retention_days=_int(env, ENV.RETENTION_DAYS, cls.retention_days, minimum=1),
            max_task_bytes=_int(env, ENV.MAX_TASK_BYTES, cls.max_task_bytes,
                                minimum=65536, maximum=128 * 1024 * 1024),
            shutdown_grace_seconds=_float(env, ENV.SHUTDOWN_GRACE_SECONDS)
            or cls.shutdown_grace_seconds,
            log_level=_log_level(env.get(ENV.LOG_LEVEL)),
            execution=_execution(env),
            queue_url=env.get(ENV.QUEUE_URL) or None,
            sqs_endpoint=env.get(ENV.SQS_ENDPOINT) or None,
            lease_seconds=_seconds(env, ENV.LEASE_SECONDS, cls.lease_seconds),
            input_wait_seconds=_seconds(env, ENV.INPUT_WAIT_SECONDS, cls.input_wait_seconds),
            budget_margin_seconds=_seconds(env, ENV.BUDGET_MARGIN_SECONDS,
                                           cls.budget_margin_seconds),
            queue_grace_seconds=_seconds(env, ENV.QUEUE_GRACE_SECONDS, cls.queue_grace_seconds),
            queue_max_receives=_int(env, ENV.QUEUE_MAX_RECEIVES, cls.queue_max_receives,
                                    minimum=1, maximum=1000),
            sweep_seconds=_seconds(env, ENV.SWEEP_SECONDS, cls.sweep_seconds),
            sse_keepalive_seconds=_seconds(env, ENV.SSE_KEEPALIVE_SECONDS,
                                           cls.sse_keepalive_seconds),
            jwt_issuer=env.get(ENV.JWT_ISSUER) or None,
            jwt_jwks_url=env.get(ENV.JWT_JWKS_URL) or None,
            jwt_audiences=_list(env.get(ENV.JWT_AUDIENCE)),
            jwt_algorithms=_list(env.get(ENV.JWT_ALGORITHMS)) or cls.jwt_algorithms,
            jwt_tenant_claim=env.get(ENV.JWT_TENANT_CLAIM) or None,
            jwt_required_scopes=_scopes(env.get(ENV.JWT_REQUIRED_SCOPES, "")),
            jwt_leeway_seconds=_seconds(env, ENV.JWT_LEEWAY_SECONDS, cls.jwt_leeway_seconds),
            jwks_max_age_seconds=_seconds(env, ENV.JWKS_MAX_AGE_SECONDS,
                                          cls.jwks_max_age_seconds),
            api_key_header=(env.get(ENV.API_KEY_HEADER) or cls.api_key_header).strip().lower(),
            api_keys=env.get(ENV.API_KEYS) or None,
            api_keys_secret=env.get(ENV.API_KEYS_SECRET) or None,
            api_keys_parameter=env.get(ENV.API_KEYS_PARAMETER) or None,
            api_keys_max_age_seconds=_seconds(env, ENV.API_KEYS_MAX_AGE_SECONDS,
                                              cls.api_keys_max_age_seconds),
            auth_refresh_seconds=_seconds(env, ENV.AUTH_REFRESH_SECONDS,
                                          cls.auth_refresh_seconds),
            auth_timeout_seconds=_seconds(env, ENV.AUTH_TIMEOUT_SECONDS,
                                          cls.auth_timeout_seconds),
            push_delivery=_push_delivery(env),
            push_allow_http=_bool(env, ENV.PUSH_ALLOW_HTTP),
            push_allow_cidrs=_cidrs(env.get(ENV.PUSH_ALLOW_CIDRS)),
            push_timeout_seconds=_seconds(env, ENV.PUSH_TIMEOUT_SECONDS,
                                          cls.push_timeout_seconds),
            push_attempts=_int(env, ENV.PUSH_ATTEMPTS, cls.push_attempts, minimum=1,
                               maximum=20),
            push_backoff_seconds=_seconds(env, ENV.PUSH_BACKOFF_SECONDS,
                                          cls.push_backoff_seconds),
            push_backoff_cap_seconds=_seconds(env, ENV.PUSH_BACKOFF_CAP_SECONDS,
                                              cls.push_backoff_cap_seconds),
            push_max_configs=_int(env, ENV.PUSH_MAX_CONFIGS, cls.push_max_configs, minimum=1,
                                  maximum=100),
            push_dlq_url=env.get(ENV.PUSH_DLQ_URL) or None,
            langgraph_checkpoint_table=env.get(ENV.LANGGRAPH_CHECKPOINT_TABLE) or None,
            peers=name_map(env, ENV.PEERS),
            peer_api_keys=name_map(env, ENV.PEER_API_KEYS),
            peer_token_url=env.get(ENV.PEER_TOKEN_URL) or None,
            peer_client_id=env.get(ENV.PEER_CLIENT_ID) or None,
            peer_scopes=_list(env.get(ENV.PEER_SCOPES)),
        )


def _agent(env: Mapping[str, str]) -> tuple[str, AgentProject | None]:
    """The agent's import path and the project it comes from: A2A_AGENT wins over the
    project's own entry (a requirements.txt project has none: A2A_AGENT names it)."""
    explicit = env.get(ENV.AGENT) or None
    folder = env.get(ENV.AGENT_PROJECT)
    if not folder:
        return explicit or DEFAULT_AGENT, None
    # Only with a project: tomllib and the file stay off the Lambda door's path otherwise.
    from a2akit.agent_project import load_project

    project = load_project(folder)
    return explicit or project.entry(), project


_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def name_map(env: Mapping[str, str], variable: str) -> dict[str, str]:
    """`NAME=value,NAME2=value2` in `variable` -> {NAME: value}; NAME is an identifier (it
    also names A2A_SECRET_<NAME>). Raises SettingsError naming the variable."""
    names: dict[str, str] = {}
    for item in _list(env.get(variable)):
        name, sep, value = (part.strip() for part in item.partition("="))
        if not sep or not _NAME.match(name) or not value or name in names:
            raise SettingsError(f"{variable} entries must look like NAME=value, each NAME once "
                                f"(letters, digits, _), not {item!r}")
        names[name] = value
    return names


def _bool(env: Mapping[str, str], name: str) -> bool:
    """The kit's one boolean form: true or false, in any case (unset or empty: false).
    Nothing else, so `yes`, `1` or `off` never mean what a reader guesses."""
    raw = env.get(name, "")
    value = raw.strip().lower()
    if value in ("", "false"):
        return False
    if value == "true":
        return True
    raise SettingsError(f"{name} must be true or false, not {raw!r}")


def _int(env: Mapping[str, str], name: str, default: int, *, minimum: int,
         maximum: int | None = None) -> int:
    value = _number(env, name, int, "an integer")
    if value is None:
        return default
    if value < minimum:
        raise SettingsError(f"{name} must be at least {minimum}, not {value}")
    if maximum is not None and value > maximum:
        raise SettingsError(f"{name} must be at most {maximum}, not {value}")
    return value


def _float(env: Mapping[str, str], name: str) -> float | None:
    value = _number(env, name, float, "a number of seconds")
    if value is not None and (not math.isfinite(value) or value <= 0):
        raise SettingsError(f"{name} must be a positive, finite number, not {env[name]!r}")
    return value


def _number(env: Mapping[str, str], name: str, convert: Callable[[str], N],
            what: str) -> N | None:
    """The variable converted, None when unset or empty; names it when it does not convert."""
    raw = env.get(name)
    if not raw:
        return None
    try:
        return convert(raw)
    except ValueError:
        raise SettingsError(f"{name} must be {what}, not {raw!r}") from None


def _execution(env: Mapping[str, str]) -> str:
    mode = (env.get(ENV.EXECUTION) or INLINE).strip().lower()
    if mode not in EXECUTION_MODES:
        raise SettingsError(f"{ENV.EXECUTION} must be one of {', '.join(EXECUTION_MODES)}, "
                            f"not {env.get(ENV.EXECUTION)!r}")
    if mode == QUEUE and not env.get(ENV.QUEUE_URL):
        raise SettingsError(f"{ENV.EXECUTION}={QUEUE} needs {ENV.QUEUE_URL}")
    if mode == QUEUE and not env.get(ENV.TABLE):
        # The worker is another process: it cannot see the embedded store's tasks, so every
        # blocking call would wait for a result that never comes.
        raise SettingsError(f"{ENV.EXECUTION}={QUEUE} needs a shared store the worker can "
                            f"reach: set {ENV.TABLE}")
    return mode


_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def _push_delivery(env: Mapping[str, str]) -> str:
    # On Lambda only the stream dispatcher can deliver: a function freezes once it answers.
    on_lambda = bool(env.get("AWS_LAMBDA_FUNCTION_NAME"))
    value = (env.get(ENV.PUSH_DELIVERY) or (STREAM if on_lambda else INLINE)).strip().lower()
    if value not in PUSH_DELIVERY_MODES:
        raise SettingsError(f"{ENV.PUSH_DELIVERY} must be one of "
                            f"{', '.join(PUSH_DELIVERY_MODES)}, not {value!r}")
    if on_lambda and value == INLINE:
        raise SettingsError(f"{ENV.PUSH_DELIVERY}=inline cannot work on AWS Lambda (a "
                            "function freezes once it answers); use stream and the dispatcher "
                            "(a2a:push=true in the CDK stack)")
    return value


def _cidrs(raw: str | None) -> tuple[str, ...]:
    """`10.0.0.0/8, ::1` -> normalized network strings; raises SettingsError for a bad one."""
    networks = []
    for item in _list(raw):
        try:
            networks.append(str(ipaddress.ip_network(item, strict=False)))
        except ValueError as exc:
            raise SettingsError(f"{ENV.PUSH_ALLOW_CIDRS} entries must be IP networks "
                                f"(like 127.0.0.0/8), not {item!r}") from exc
    return tuple(networks)


def _log_level(raw: str | None) -> str:
    level = (raw or "INFO").strip().upper()
    if level not in _LOG_LEVELS:
        raise SettingsError(f"{ENV.LOG_LEVEL} must be one of {', '.join(_LOG_LEVELS)}, "
                            f"not {raw!r}")
    return level


def _tokens(raw: str) -> dict[str, str]:
    """`owner=token,owner2=token2` -> {token: owner}."""
    tokens: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in raw.split(","))):
        owner, sep, token = item.partition("=")
        if not sep or not owner or not token:
            raise SettingsError(f"{ENV.BEARER_TOKENS} entries must look like owner=token")
        if token in tokens and tokens[token] != owner:
            raise SettingsError(f"{ENV.BEARER_TOKENS} gives one token to two owners")
        tokens[token] = owner
    return tokens


def _grpc_address(raw: str | None) -> str | None:
    """The card publishes gRPC as host:port (bindings.md 4); strip a scheme if given."""
    if not raw:
        return None
    return raw.split("://", 1)[-1].rstrip("/")


_BASE_PATH = re.compile(r"^(/[A-Za-z0-9._~-]+)*/?$")


def _public_url(raw: str | None) -> str | None:
    """An http(s) URL with a host, a valid port and a plain path: what the card names and
    the routes are placed under (a query or fragment could not be either)."""
    if not raw:
        return None
    parts = urlsplit(raw)
    try:
        parts.port  # noqa: B018 - raises ValueError when out of range or not a number
        valid = (parts.scheme in ("http", "https") and bool(parts.hostname)
                 and not parts.query and not parts.fragment and "\\" not in raw
                 and not any(ch.isspace() for ch in raw))
    except ValueError:
        valid = False
    if not valid:
        raise SettingsError(f"{ENV.PUBLIC_URL} must be an http:// or https:// URL with a host, "
                            f"such as https://agent.example.com/, not {raw!r}")
    return raw


def _base_path(raw: str | None) -> str | None:
    """`/a2a` (a trailing / dropped; `/` is the root, ""): plain path segments only, no
    template braces, `:` verbs or escapes that the routes could mistake for their own."""
    if not raw:
        return None
    if not _BASE_PATH.fullmatch(raw) or raw.startswith("//"):
        raise SettingsError(f"{ENV.REST_BASE_PATH} must be a path such as /a2a (segments of "
                            f"letters, digits and -._~), not {raw!r}")
    return raw.rstrip("/")


def _seconds(env: Mapping[str, str], name: str, default: float) -> float:
    value = _float(env, name)
    return default if value is None else value


def _list(raw: str | None) -> tuple[str, ...]:
    """`a, b,c` -> ("a", "b", "c"): comma-separated, blanks dropped."""
    return tuple(filter(None, (part.strip() for part in (raw or "").split(","))))


def _scopes(raw: str) -> dict[str, tuple[str, ...]]:
    """`scope` (every operation) or `Operation=scope`, comma-separated -> {name: scopes}."""
    scopes: dict[str, tuple[str, ...]] = {}
    for item in _list(raw):
        operation, sep, scope = item.rpartition("=")
        operation = operation.strip() if sep else ALL_OPERATIONS
        if not scope.strip() or not operation:
            raise SettingsError(f"{ENV.JWT_REQUIRED_SCOPES} entries must look like scope or "
                                f"Operation=scope, not {item!r}")
        scopes[operation] = (*scopes.get(operation, ()), scope.strip())
    return scopes


_HEADER_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


def check_fetch_url(url: str, name: str) -> None:
    """Keys come only over HTTPS; plain HTTP only on loopback (tests, local issuers).

    Raises SettingsError naming `name`."""
    parts = urlsplit(url)
    if parts.hostname and (parts.scheme == "https" or (
            parts.scheme == "http" and parts.hostname in _LOOPBACK_HOSTS)):
        return
    raise SettingsError(f"{name} must be an https:// URL (http:// only on loopback), "
                        f"not {url!r}")


def _check_auth(settings: Settings) -> None:
    """What the schemes need from each other; every message names the variable."""
    if settings.jwt_issuer is not None:
        check_fetch_url(settings.jwt_issuer, ENV.JWT_ISSUER)
        if settings.jwt_jwks_url is not None:
            check_fetch_url(settings.jwt_jwks_url, ENV.JWT_JWKS_URL)
        if not settings.jwt_audiences:
            # Without one, any token the issuer signs for any other application would do.
            raise SettingsError(f"{ENV.JWT_AUDIENCE} is required with {ENV.JWT_ISSUER}")
        if settings.bearer_tokens:
            raise SettingsError(f"{ENV.BEARER_TOKENS} (local development only) cannot be "
                                f"combined with {ENV.JWT_ISSUER}: both use Authorization: "
                                "Bearer")
    elif settings.jwt_jwks_url or settings.jwt_audiences or settings.jwt_required_scopes:
        raise SettingsError(f"{ENV.JWT_ISSUER} is required by the other A2A_JWT_* settings")
    bad = [alg for alg in settings.jwt_algorithms if alg not in JWT_ALGORITHMS]
    if bad or not settings.jwt_algorithms:
        raise SettingsError(f"{ENV.JWT_ALGORITHMS} must name some of {', '.join(JWT_ALGORITHMS)}"
                            f" (never none or HS*), not {', '.join(bad) or 'nothing'}")
    unknown = set(settings.jwt_required_scopes) - {ALL_OPERATIONS, *_operation_names()}
    if unknown:
        raise SettingsError(f"{ENV.JWT_REQUIRED_SCOPES} names unknown operations: "
                            f"{', '.join(sorted(unknown))}")
    sources = [name for name, value in ((ENV.API_KEYS, settings.api_keys),
                                        (ENV.API_KEYS_SECRET, settings.api_keys_secret),
                                        (ENV.API_KEYS_PARAMETER, settings.api_keys_parameter))
               if value]
    if len(sources) > 1:
        raise SettingsError(f"API keys come from one source; set only one of {', '.join(sources)}")
    header = settings.api_key_header
    # gRPC metadata keys are lower-case and `-bin` ones carry bytes; Authorization is Bearer's.
    if (not _HEADER_NAME.match(header) or header.endswith("-bin")
            or header in ("authorization", "a2a-version", "a2a-extensions")):
        raise SettingsError(f"{ENV.API_KEY_HEADER} must be a lower-case header name of its own,"
                            f" not {header!r}")
    for name, value in ((ENV.JWKS_MAX_AGE_SECONDS, settings.jwks_max_age_seconds),
                        (ENV.API_KEYS_MAX_AGE_SECONDS, settings.api_keys_max_age_seconds)):
        if value < settings.auth_refresh_seconds:
            raise SettingsError(f"{name} must be at least {ENV.AUTH_REFRESH_SECONDS} "
                                f"({settings.auth_refresh_seconds:g} s), not {value:g}")


_PEER_SCHEMES = ("http", "https", "grpc", "grpcs")


def _peer_address_error(address: str) -> str | None:
    """What is wrong with a peer's address (None: nothing). http(s): a card or base URL with a
    host and no query or fragment; grpc(s): host:port and nothing else."""
    parts = urlsplit(address)
    try:
        port = parts.port
    except ValueError:
        return "its port is not a port number"
    if parts.scheme not in _PEER_SCHEMES:
        return "it must start with http://, https://, grpc:// or grpcs://"
    if not parts.hostname or parts.query or parts.fragment or parts.username or any(
            ch.isspace() for ch in address):
        return "it needs a host, and no query, fragment or user"
    if parts.scheme.startswith("grpc") and (port is None or parts.path not in ("", "/")):
        return "a gRPC address is grpc://host:port, with no path"
    return None


def _check_peers(settings: Settings) -> None:
    """The peers' addresses and credentials; every message names the variable."""
    for name, address in settings.peers.items():
        problem = _peer_address_error(address)
        if problem:
            raise SettingsError(f"{ENV.PEERS} entry {name}={address}: {problem}")
    for name, secret_name in settings.peer_api_keys.items():
        if name not in settings.peers:
            raise SettingsError(f"{ENV.PEER_API_KEYS} names {name}, which {ENV.PEERS} does not")
        if not _NAME.match(secret_name):
            raise SettingsError(f"{ENV.PEER_API_KEYS} entry {name}={secret_name}: the value is the"
                                " name of a secret (letters, digits, _)")
    if settings.peer_token_url is not None:
        check_fetch_url(settings.peer_token_url, ENV.PEER_TOKEN_URL)
        if not settings.peer_client_id:
            raise SettingsError(f"{ENV.PEER_CLIENT_ID} is required with {ENV.PEER_TOKEN_URL}")
    elif settings.peer_client_id or settings.peer_scopes:
        raise SettingsError(f"{ENV.PEER_TOKEN_URL} is required by {ENV.PEER_CLIENT_ID} and "
                            f"{ENV.PEER_SCOPES}")


def _operation_names() -> set[str]:
    # The operations are the service's rpcs; a2akit.operations checks its table against them.
    from a2akit.generated import a2a_pb2 as pb

    return {method.name for method in pb.DESCRIPTOR.services_by_name["A2AService"].methods}
