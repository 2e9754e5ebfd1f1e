"""CDK context, key by key: every key's name (`CONTEXT`), the values some of them take
(`AUTH`, `LONG_TASKS`), and how each value is read, from `-c key=value` (always a string) or
cdk.json (real JSON types too). Each reader raises ConfigError naming its key, so a
misconfiguration stops synth with one line. `DeployConfig` (infra/config.py) puts the values
together and checks them across keys.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from a2akit.agent_project import AgentProject, load_project
from a2akit.settings import SettingsError, name_map

__all__ = ["AUTH", "CONTEXT", "DEFAULT_AGENT_POLICY", "LONG_TASKS", "AgentPolicy",
           "ConfigError", "read_bool", "read_cidrs", "read_float", "read_int", "read_items",
           "read_long_tasks", "read_names", "read_number", "read_policy", "read_project",
           "read_str"]

# The agent project's own IAM policy, when a2a:agentPolicy names none.
DEFAULT_AGENT_POLICY = "iam-policy.json"
# `-c key=value` always arrives as a string; cdk.json can carry real JSON types.
N = TypeVar("N", int, float)


class ConfigError(ValueError):
    """A context value the stack cannot use; the message names the key."""


class CONTEXT:
    """Context keys, one place (infra/README.md lists them with their defaults)."""

    ACCOUNT = "a2a:account"
    REGION = "a2a:region"
    STACK_NAME = "a2a:stackName"
    AGENT = "a2a:agent"
    # The user's agent project and what it may do (docs/your-agent.md, "Deploy").
    AGENT_PROJECT = "a2a:agentProject"
    AGENT_POLICY = "a2a:agentPolicy"
    AGENT_MANAGED_POLICIES = "a2a:agentManagedPolicies"
    AGENT_SECRETS = "a2a:agentSecrets"
    AGENT_PARAMETERS = "a2a:agentParameters"
    LAMBDA_BUNDLE = "a2a:lambdaBundle"
    GRPC = "a2a:grpc"
    # The public door's own name (docs/public-door.md): a certificate from ACM, or one the
    # stack issues and validates in a Route 53 zone, which also gets the alias record.
    DOMAIN_NAME = "a2a:domainName"
    CERTIFICATE_ARN = "a2a:certificateArn"
    HOSTED_ZONE_ID = "a2a:hostedZoneId"
    HOSTED_ZONE_NAME = "a2a:hostedZoneName"
    # The gRPC side's name, certificate (required with gRPC) and who may reach it.
    GRPC_DOMAIN_NAME = "a2a:grpcDomainName"
    GRPC_CERTIFICATE_ARN = "a2a:grpcCertificateArn"
    GRPC_HOSTED_ZONE_ID = "a2a:grpcHostedZoneId"
    GRPC_HOSTED_ZONE_NAME = "a2a:grpcHostedZoneName"
    GRPC_ALLOWED_CIDRS = "a2a:grpcAllowedCidrs"
    # Limits at the edge (docs/public-door.md, "Limits").
    THROTTLE_RATE_LIMIT = "a2a:throttleRateLimit"
    THROTTLE_BURST_LIMIT = "a2a:throttleBurstLimit"
    RESERVED_CONCURRENCY = "a2a:reservedConcurrency"
    WORKER_MAX_CONCURRENCY = "a2a:workerMaxConcurrency"
    WAF = "a2a:waf"
    WAF_RATE_LIMIT = "a2a:wafRateLimit"
    FUNCTION_URL = "a2a:functionUrl"
    LWA_LAYER_ARN = "a2a:lwaLayerArn"
    SNAP_START = "a2a:snapStart"
    MAX_ACTIVE_TASKS_PER_CALLER = "a2a:maxActiveTasksPerCaller"
    DESIRED_COUNT = "a2a:desiredCount"  # gone: GRPC_MIN_TASKS / GRPC_MAX_TASKS
    GRPC_MIN_TASKS = "a2a:grpcMinTasks"
    GRPC_MAX_TASKS = "a2a:grpcMaxTasks"
    NAT_GATEWAYS = "a2a:natGateways"
    ALLOW_ANONYMOUS = "a2a:allowAnonymous"
    STREAM_BUDGET_SECONDS = "a2a:streamBudgetSeconds"
    GRPC_STREAM_BUDGET_SECONDS = "a2a:grpcStreamBudgetSeconds"
    RETAIN_TABLE = "a2a:retainTable"
    DELETION_PROTECTION = "a2a:deletionProtection"
    ALARM_EMAIL = "a2a:alarmEmail"
    REQUIRE_ALARM_SUBSCRIBER = "a2a:requireAlarmSubscriber"
    EXECUTION = "a2a:execution"
    GRPC_EXECUTION = "a2a:grpcExecution"
    WORKER_TIMEOUT_SECONDS = "a2a:workerTimeoutSeconds"
    LEASE_SECONDS = "a2a:leaseSeconds"
    QUEUE_MAX_RECEIVES = "a2a:queueMaxReceives"
    # The long-task lane (docs/execution.md, "Where an agent can run"; infra/long_lane.py).
    LONG_TASKS = "a2a:longTasks"
    LONG_TASKS_NETWORK = "a2a:longTasksNetwork"
    LONG_TASKS_SPOT = "a2a:longTasksSpot"
    LONG_TASKS_STOP_TIMEOUT = "a2a:longTasksStopTimeout"
    LONG_TASKS_MAX_TASKS = "a2a:longTasksMaxTasks"
    PUSH = "a2a:push"
    PLAYGROUND = "a2a:playground"  # the browser page on the door (docs/playground.md)
    CARD_SIGNING = "a2a:cardSigning"  # a KMS key signs the agent card (docs/signing.md)
    # OpenTelemetry through the ADOT Lambda layer (docs/observability.md, "In the stack";
    # infra/otel.py).
    OTEL = "a2a:otel"
    OTEL_LAYER_ARN = "a2a:otelLayerArn"
    # Authentication (infra/README.md, "Authentication").
    AUTH = "a2a:auth"
    JWT_ISSUER = "a2a:jwtIssuer"
    JWT_AUDIENCE = "a2a:jwtAudience"
    JWT_REQUIRED_SCOPES = "a2a:jwtRequiredScopes"
    JWT_TENANT_CLAIM = "a2a:jwtTenantClaim"
    HTTP_API_JWT_AUTHORIZER = "a2a:httpApiJwtAuthorizer"
    COGNITO_DOMAIN_PREFIX = "a2a:cognitoDomainPrefix"
    API_KEY_HEADER = "a2a:apiKeyHeader"


class LONG_TASKS:
    """Values of `a2a:longTasks`: no lane, the lane for agents that declare `long_running`,
    or every queued task on the lane."""

    OFF = "false"
    DECLARED = "true"
    ALL = "all"
    VALUES = (OFF, DECLARED, ALL)


class AUTH:
    """Values of `a2a:auth`: the in-process scheme both bindings enforce."""

    JWT = "jwt"  # bearer JWTs; a Cognito user pool unless a2a:jwtIssuer names an issuer
    API_KEY = "apiKey"  # API keys, their hashes in a Secrets Manager secret
    NONE = "none"  # neither: only an authorizer's identity, or anonymous if allowed

    ALL = (JWT, API_KEY, NONE)


@dataclasses.dataclass(frozen=True)
class AgentPolicy:
    """The agent's IAM policy document (a2a:agentPolicy), read and checked at synth."""

    path: Path
    document: Mapping[str, Any]


def read_long_tasks(get: Callable[[str], Any]) -> str:
    """a2a:longTasks: true, false or all (JSON booleans too)."""
    value = get(CONTEXT.LONG_TASKS)
    if value is None or value == "":
        return LONG_TASKS.OFF
    if isinstance(value, bool):
        return LONG_TASKS.DECLARED if value else LONG_TASKS.OFF
    if isinstance(value, str) and value.strip().lower() in LONG_TASKS.VALUES:
        return value.strip().lower()
    raise ConfigError(f"{CONTEXT.LONG_TASKS} must be one of {', '.join(LONG_TASKS.VALUES)}, "
                      f"got {value!r}")


def read_project(get: Callable[[str], Any]) -> AgentProject | None:
    """The agent project a2a:agentProject names (a path; relative to the working folder,
    which `./dev` makes the caller's)."""
    path = read_str(get, CONTEXT.AGENT_PROJECT)
    if path is None:
        return None
    try:
        return load_project(path)
    except SettingsError as exc:
        # Its messages name the local variable; here the context key is what to fix.
        raise ConfigError(str(exc).replace("A2A_AGENT_PROJECT", CONTEXT.AGENT_PROJECT)) from exc


def read_policy(get: Callable[[str], Any], project: AgentProject | None) -> AgentPolicy | None:
    """a2a:agentPolicy's document, else the project's iam-policy.json when it has one."""
    given = read_str(get, CONTEXT.AGENT_POLICY)
    if given is not None:
        path = Path(given).expanduser()
        if not path.is_file():
            raise ConfigError(f"{CONTEXT.AGENT_POLICY}={given}: no such file")
    elif project is not None and (project.root / DEFAULT_AGENT_POLICY).is_file():
        path = project.root / DEFAULT_AGENT_POLICY
    else:
        return None
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{CONTEXT.AGENT_POLICY}: {path} is not JSON: {exc}") from exc
    statements = document.get("Statement") if isinstance(document, dict) else None
    if isinstance(statements, dict):
        statements = [statements]
    if not isinstance(statements, list) or not statements or not all(
            isinstance(s, dict) and "Action" in s and s.get("Effect") in ("Allow", "Deny")
            for s in statements):
        raise ConfigError(f"{CONTEXT.AGENT_POLICY}: {path} must be an IAM policy document: "
                          '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", '
                          '"Action": [...], "Resource": [...]}]}')
    return AgentPolicy(path.resolve(), {**document, "Statement": statements})


def read_items(get: Callable[[str], Any], key: str) -> tuple[str, ...]:
    """`a, b` (or a JSON list) -> ("a", "b")."""
    value = get(key)
    if value is None or value == "":
        return ()
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not all(isinstance(i, str) for i in items):
        raise ConfigError(f"{key} must be comma-separated, got {value!r}")
    return tuple(filter(None, (item.strip() for item in items)))


def read_names(get: Callable[[str], Any], key: str) -> dict[str, str]:
    """`NAME=where,...` (or a JSON object) -> {NAME: where}, as the processes read it."""
    value = get(key)
    if value is None or value == "":
        return {}
    if isinstance(value, dict):
        value = ",".join(f"{name}={where}" for name, where in value.items())
    if not isinstance(value, str):
        raise ConfigError(f"{key} must be NAME=value,... got {value!r}")
    try:
        return name_map({key: value}, key)
    except SettingsError as exc:
        raise ConfigError(str(exc)) from exc


def read_str(get: Callable[[str], Any], key: str) -> str | None:
    value = get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ConfigError(f"{key} must be a string, got {value!r}")
    return value


def read_cidrs(get: Callable[[str], Any], key: str, default: tuple[str, ...]) -> tuple[str, ...]:
    """`10.0.0.0/16, 192.168.0.0/24` (or a JSON list) -> normalized networks."""
    value = get(key)
    if value is None or value == "":
        return default
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list | tuple):
        raise ConfigError(f"{key} must be comma-separated networks, got {value!r}")
    networks = []
    for item in items:
        try:
            networks.append(str(ipaddress.ip_network(str(item).strip(), strict=True)))
        except ValueError as exc:
            raise ConfigError(f"{key} entries must be networks like 10.0.0.0/16, got "
                              f"{item!r}") from exc
    if not networks:
        raise ConfigError(f"{key} names no network")
    return tuple(networks)


def read_bool(get: Callable[[str], Any], key: str, default: bool) -> bool:
    value = get(key)
    if value is None or value == "":
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ConfigError(f"{key} must be true or false, got {value!r}")


def read_int(get: Callable[[str], Any], key: str, default: int) -> int:
    return read_number(get, key, default, int, "an integer")


def read_float(get: Callable[[str], Any], key: str, default: float) -> float:
    return read_number(get, key, default, float, "a number")


def read_number(get: Callable[[str], Any], key: str, default: N, cast: Callable[[Any], N],
            kind: str) -> N:
    """A numeric context value; booleans and non-numbers name the key in the error."""
    value = get(key)
    if value is None or value == "":
        return default
    try:
        if isinstance(value, bool):
            raise ValueError
        return cast(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{key} must be {kind}, got {value!r}") from exc
