"""The environment the kit reads: every variable's name (`ENV`, one place), the values some
of them take, and how each value is read (the kit's one boolean form, numbers with bounds,
seconds, lists, NAME=value maps, URLs, modes). Each reader raises SettingsError naming the
variable, so a misconfiguration stops the process with one line. `a2akit.settings` puts the
values together into one `Settings`."""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Callable, Mapping
from typing import TypeVar
from urllib.parse import urlsplit

__all__ = [
    "ALL",
    "ALL_OPERATIONS",
    "DECLARED",
    "DEFAULT_AGENT",
    "DEFAULT_MAX_TASK_BYTES",
    "ENV",
    "EXECUTION_MODES",
    "INLINE",
    "JWT_ALGORITHMS",
    "LONG_TASK_MODES",
    "PUSH_DELIVERY_MODES",
    "QUEUE",
    "STREAM",
    "SettingsError",
    "base_path",
    "bearer_tokens",
    "boolean",
    "check_fetch_url",
    "cidrs",
    "execution_mode",
    "grpc_address",
    "integer",
    "is_name",
    "items",
    "log_level_name",
    "long_tasks_mode",
    "name_map",
    "number",
    "peer_address_error",
    "port",
    "positive",
    "public_url",
    "push_delivery_mode",
    "required_scopes",
    "seconds",
]

N = TypeVar("N", int, float)
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


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
    PLAYGROUND = "A2A_PLAYGROUND"
    OTEL = "A2A_OTEL"  # OpenTelemetry spans (a2akit/telemetry.py)
    # Signed agent cards (a2akit/card_signing.py): a PEM private key file, or a KMS key id.
    CARD_SIGNING_KEY = "A2A_CARD_SIGNING_KEY"
    CARD_SIGNING_KMS_KEY_ID = "A2A_CARD_SIGNING_KMS_KEY_ID"
    STREAM_BUDGET_SECONDS = "A2A_STREAM_BUDGET_SECONDS"
    RETENTION_DAYS = "A2A_RETENTION_DAYS"
    SHUTDOWN_GRACE_SECONDS = "A2A_GRPC_SHUTDOWN_GRACE_SECONDS"
    LOG_LEVEL = "LOG_LEVEL"
    # Powertools for AWS Lambda's name for it: the service outside Lambda (a2akit.logs).
    SERVICE_NAME = "POWERTOOLS_SERVICE_NAME"
    # Set by the platforms, read once here: Lambda names its function; the streaming door
    # listens where the Lambda Web Adapter connects (its variables first, as it reads them).
    LAMBDA_FUNCTION = "AWS_LAMBDA_FUNCTION_NAME"
    LWA_PORT = "AWS_LWA_PORT"
    PORT = "PORT"
    LWA_HOST = "AWS_LWA_HOST"
    HOST = "HOST"
    # ECS gives every container its task metadata endpoint (the long lane's worker reads its
    # cluster and task ARN there to protect itself from scale-in).
    ECS_METADATA_URI = "ECS_CONTAINER_METADATA_URI_V4"
    EXECUTION = "A2A_EXECUTION"
    QUEUE_URL = "A2A_QUEUE_URL"
    # The long-task lane (docs/execution.md, "Where an agent can run"): its queue, which
    # tasks go there, and the lane's worker (handlers/long_worker.py).
    LONG_QUEUE_URL = "A2A_LONG_QUEUE_URL"
    LONG_TASKS = "A2A_LONG_TASKS"
    LONG_CONCURRENCY = "A2A_LONG_CONCURRENCY"
    LONG_SHUTDOWN_GRACE_SECONDS = "A2A_LONG_SHUTDOWN_GRACE_SECONDS"
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
    # peer name -> a JWKS file pinned for it: its agent card must be signed by one of those keys
    PEER_JWKS = "A2A_PEER_JWKS"


DEFAULT_AGENT = "a2akit.examples.echo:agent"
# The largest task (serialized: history, artifacts, status, metadata) and the largest event
# a store keeps; both stores refuse more the same way (docs/store.md, "Large tasks").
DEFAULT_MAX_TASK_BYTES = 16 * 1024 * 1024

# Where an agent runs (DESIGN.md, "Execution"): in the process that took the request, or on
# a queue worker.
INLINE = "inline"
QUEUE = "queue"
EXECUTION_MODES = (INLINE, QUEUE)
# Which queued tasks go to the long-task lane (A2A_LONG_TASKS): those of an agent that says
# `long_running = True` (`declared`, the default), or every one (`all`).
DECLARED = "declared"
ALL = "all"
LONG_TASK_MODES = (DECLARED, ALL)
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


def name_map(env: Mapping[str, str], variable: str) -> dict[str, str]:
    """`NAME=value,NAME2=value2` in `variable` -> {NAME: value}; NAME is an identifier (it
    also names A2A_SECRET_<NAME>). Raises SettingsError naming the variable."""
    names: dict[str, str] = {}
    for item in items(env.get(variable)):
        name, sep, value = (part.strip() for part in item.partition("="))
        if not sep or not _NAME.match(name) or not value or name in names:
            raise SettingsError(f"{variable} entries must look like NAME=value, each NAME once "
                                f"(letters, digits, _), not {item!r}")
        names[name] = value
    return names


def boolean(env: Mapping[str, str], name: str) -> bool:
    """The kit's one boolean form: true or false, in any case (unset or empty: false).
    Nothing else, so `yes`, `1` or `off` never mean what a reader guesses."""
    raw = env.get(name, "")
    value = raw.strip().lower()
    if value in ("", "false"):
        return False
    if value == "true":
        return True
    raise SettingsError(f"{name} must be true or false, not {raw!r}")


def integer(env: Mapping[str, str], name: str, default: int, *, minimum: int,
         maximum: int | None = None) -> int:
    value = number(env, name, int, "an integer")
    if value is None:
        return default
    if value < minimum:
        raise SettingsError(f"{name} must be at least {minimum}, not {value}")
    if maximum is not None and value > maximum:
        raise SettingsError(f"{name} must be at most {maximum}, not {value}")
    return value


def positive(env: Mapping[str, str], name: str) -> float | None:
    value = number(env, name, float, "a number of seconds")
    if value is not None and (not math.isfinite(value) or value <= 0):
        raise SettingsError(f"{name} must be a positive, finite number, not {env[name]!r}")
    return value


def number(env: Mapping[str, str], name: str, convert: Callable[[str], N],
            what: str) -> N | None:
    """The variable converted, None when unset or empty; names it when it does not convert."""
    raw = env.get(name)
    if not raw:
        return None
    try:
        return convert(raw)
    except ValueError:
        raise SettingsError(f"{name} must be {what}, not {raw!r}") from None


def seconds(env: Mapping[str, str], name: str, default: float) -> float:
    value = positive(env, name)
    return default if value is None else value


def items(raw: str | None) -> tuple[str, ...]:
    """`a, b,c` -> ("a", "b", "c"): comma-separated, blanks dropped."""
    return tuple(filter(None, (part.strip() for part in (raw or "").split(","))))


def is_name(value: str) -> bool:
    """An identifier: what a NAME in a name map, and a secret's name, must be."""
    return bool(_NAME.match(value))


def port(env: Mapping[str, str], names: tuple[str, ...], default: int) -> int:
    """The first of `names` that is set, as a TCP port (1-65535); else `default`."""
    for name in names:
        raw = env.get(name)
        if raw:
            if not raw.isdigit() or not 0 < int(raw) < 65536:
                raise SettingsError(f"{name} must be a TCP port (1-65535), not {raw!r}")
            return int(raw)
    return default


def execution_mode(env: Mapping[str, str]) -> str:
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


def long_tasks_mode(env: Mapping[str, str]) -> str:
    """A2A_LONG_TASKS; `all` needs the long queue to send them to."""
    value = (env.get(ENV.LONG_TASKS) or DECLARED).strip().lower()
    if value not in LONG_TASK_MODES:
        raise SettingsError(f"{ENV.LONG_TASKS} must be one of {', '.join(LONG_TASK_MODES)}, "
                            f"not {env.get(ENV.LONG_TASKS)!r}")
    if value == ALL and not env.get(ENV.LONG_QUEUE_URL):
        raise SettingsError(f"{ENV.LONG_TASKS}={ALL} needs {ENV.LONG_QUEUE_URL}")
    return value


def push_delivery_mode(env: Mapping[str, str]) -> str:
    # On Lambda only the stream dispatcher can deliver: a function freezes once it answers.
    on_lambda = bool(env.get(ENV.LAMBDA_FUNCTION))
    value = (env.get(ENV.PUSH_DELIVERY) or (STREAM if on_lambda else INLINE)).strip().lower()
    if value not in PUSH_DELIVERY_MODES:
        raise SettingsError(f"{ENV.PUSH_DELIVERY} must be one of "
                            f"{', '.join(PUSH_DELIVERY_MODES)}, not {value!r}")
    if on_lambda and value == INLINE:
        raise SettingsError(f"{ENV.PUSH_DELIVERY}=inline cannot work on AWS Lambda (a "
                            "function freezes once it answers); use stream and the dispatcher "
                            "(a2a:push=true in the CDK stack)")
    return value


def cidrs(raw: str | None) -> tuple[str, ...]:
    """`10.0.0.0/8, ::1` -> normalized network strings; raises SettingsError for a bad one."""
    networks = []
    for item in items(raw):
        try:
            networks.append(str(ipaddress.ip_network(item, strict=False)))
        except ValueError as exc:
            raise SettingsError(f"{ENV.PUSH_ALLOW_CIDRS} entries must be IP networks "
                                f"(like 127.0.0.0/8), not {item!r}") from exc
    return tuple(networks)


def log_level_name(raw: str | None) -> str:
    level = (raw or "INFO").strip().upper()
    if level not in _LOG_LEVELS:
        raise SettingsError(f"{ENV.LOG_LEVEL} must be one of {', '.join(_LOG_LEVELS)}, "
                            f"not {raw!r}")
    return level


def bearer_tokens(raw: str) -> dict[str, str]:
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


def grpc_address(raw: str | None) -> str | None:
    """The card publishes gRPC as host:port (bindings.md 4); strip a scheme if given."""
    if not raw:
        return None
    return raw.split("://", 1)[-1].rstrip("/")


_BASE_PATH = re.compile(r"^(/[A-Za-z0-9._~-]+)*/?$")


def public_url(raw: str | None) -> str | None:
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


def base_path(raw: str | None) -> str | None:
    """`/a2a` (a trailing / dropped; `/` is the root, ""): plain path segments only, no
    template braces, `:` verbs or escapes that the routes could mistake for their own."""
    if not raw:
        return None
    if not _BASE_PATH.fullmatch(raw) or raw.startswith("//"):
        raise SettingsError(f"{ENV.REST_BASE_PATH} must be a path such as /a2a (segments of "
                            f"letters, digits and -._~), not {raw!r}")
    return raw.rstrip("/")






def required_scopes(raw: str) -> dict[str, tuple[str, ...]]:
    """`scope` (every operation) or `Operation=scope`, comma-separated -> {name: scopes}."""
    scopes: dict[str, tuple[str, ...]] = {}
    for item in items(raw):
        operation, sep, scope = item.rpartition("=")
        operation = operation.strip() if sep else ALL_OPERATIONS
        if not scope.strip() or not operation:
            raise SettingsError(f"{ENV.JWT_REQUIRED_SCOPES} entries must look like scope or "
                                f"Operation=scope, not {item!r}")
        scopes[operation] = (*scopes.get(operation, ()), scope.strip())
    return scopes


_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
_PEER_SCHEMES = ("http", "https", "grpc", "grpcs")


def check_fetch_url(url: str, name: str) -> None:
    """Keys come only over HTTPS; plain HTTP only on loopback (tests, local issuers).

    Raises SettingsError naming `name`."""
    parts = urlsplit(url)
    if parts.hostname and (parts.scheme == "https" or (
            parts.scheme == "http" and parts.hostname in _LOOPBACK_HOSTS)):
        return
    raise SettingsError(f"{name} must be an https:// URL (http:// only on loopback), "
                        f"not {url!r}")


def peer_address_error(address: str) -> str | None:
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
