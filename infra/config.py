"""Deployment settings, read once from CDK context (`cdk.json` or `-c key=value`).

Constructs receive a `DeployConfig`; they never read context or the environment themselves.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

from a2akit.settings import DEFAULT_AGENT, EXECUTION_MODES, INLINE, QUEUE

__all__ = ["AUTH", "CONTEXT", "ConfigError", "DeployConfig"]

# API Gateway HTTP APIs cut every integration at 30 s; a buffered stream must end before.
_MAX_STREAM_BUDGET_SECONDS = 28.0
# AWS Lambda's ceiling for any invocation.
_MAX_WORKER_TIMEOUT_SECONDS = 900


class ConfigError(ValueError):
    """A context value the stack cannot use; the message names the key."""


class CONTEXT:
    """Context keys, one place (infra/README.md lists them with their defaults)."""

    ACCOUNT = "a2a:account"
    REGION = "a2a:region"
    STACK_NAME = "a2a:stackName"
    AGENT = "a2a:agent"
    LAMBDA_BUNDLE = "a2a:lambdaBundle"
    GRPC = "a2a:grpc"
    CERTIFICATE_ARN = "a2a:certificateArn"
    DESIRED_COUNT = "a2a:desiredCount"
    ALLOW_ANONYMOUS = "a2a:allowAnonymous"
    STREAM_BUDGET_SECONDS = "a2a:streamBudgetSeconds"
    RETAIN_TABLE = "a2a:retainTable"
    ALARM_EMAIL = "a2a:alarmEmail"
    EXECUTION = "a2a:execution"
    GRPC_EXECUTION = "a2a:grpcExecution"
    WORKER_TIMEOUT_SECONDS = "a2a:workerTimeoutSeconds"
    LEASE_SECONDS = "a2a:leaseSeconds"
    QUEUE_MAX_RECEIVES = "a2a:queueMaxReceives"
    PUSH = "a2a:push"
    # Authentication (infra/README.md, "Authentication").
    AUTH = "a2a:auth"
    JWT_ISSUER = "a2a:jwtIssuer"
    JWT_AUDIENCE = "a2a:jwtAudience"
    JWT_REQUIRED_SCOPES = "a2a:jwtRequiredScopes"
    JWT_TENANT_CLAIM = "a2a:jwtTenantClaim"
    HTTP_API_JWT_AUTHORIZER = "a2a:httpApiJwtAuthorizer"
    COGNITO_DOMAIN_PREFIX = "a2a:cognitoDomainPrefix"
    API_KEY_HEADER = "a2a:apiKeyHeader"


class AUTH:
    """Values of `a2a:auth`: the in-process scheme both bindings enforce."""

    JWT = "jwt"  # bearer JWTs; a Cognito user pool unless a2a:jwtIssuer names an issuer
    API_KEY = "apiKey"  # API keys, their hashes in a Secrets Manager secret
    NONE = "none"  # neither: only an authorizer's identity, or anonymous if allowed

    ALL = (JWT, API_KEY, NONE)


@dataclasses.dataclass(frozen=True, kw_only=True)
class DeployConfig:
    """Everything that differs between deployments of the same stack code."""

    account: str | None = None
    region: str | None = None
    stack_name: str = "A2AKit"
    agent: str = DEFAULT_AGENT
    # A folder holding the Lambda code; None means "build it" (see infra/bundle.py).
    lambda_bundle: str | None = None
    grpc: bool = True
    certificate_arn: str | None = None
    desired_count: int = 1
    allow_anonymous: bool = False
    stream_budget_seconds: float = 20.0
    retain_table: bool = True
    alarm_email: str | None = None
    # Where agents run: the JSON-RPC front door queues them by default (a worker Lambda runs
    # them, up to its timeout); `inline` runs quick agents in the request.
    execution: str = QUEUE
    grpc_execution: str = INLINE
    worker_timeout_seconds: int = _MAX_WORKER_TIMEOUT_SECONDS
    lease_seconds: float = 30.0
    queue_max_receives: int = 3
    # Push notifications: the capability on every binding, and the stream dispatcher that
    # delivers them (infra/push.py). Off by default: it lets agents' callers make the stack
    # send HTTP requests to the internet.
    push: bool = False
    auth: str = AUTH.JWT
    jwt_issuer: str | None = None  # None with auth=jwt: the stack's own Cognito user pool
    jwt_audience: str | None = None  # comma-separated; the Cognito app client by default
    jwt_required_scopes: str | None = None  # A2A_JWT_REQUIRED_SCOPES; Cognito: a2a/invoke
    jwt_tenant_claim: str | None = None
    http_api_jwt_authorizer: bool = False
    cognito_domain_prefix: str | None = None  # None: derived from the stack name and account
    api_key_header: str | None = None  # None: the kit's default (x-api-key)

    @property
    def uses_queue(self) -> bool:
        """Whether a binding queues tasks, so the queue and the worker are deployed."""
        return self.execution == QUEUE or (self.grpc and self.grpc_execution == QUEUE)

    def __post_init__(self) -> None:
        if self.desired_count < 0:
            raise ConfigError(f"{CONTEXT.DESIRED_COUNT} must be >= 0, got {self.desired_count}")
        if not 0 < self.stream_budget_seconds <= _MAX_STREAM_BUDGET_SECONDS:
            raise ConfigError(
                f"{CONTEXT.STREAM_BUDGET_SECONDS} must be in (0, {_MAX_STREAM_BUDGET_SECONDS}]"
                f" (the HTTP API's 30 s limit), got {self.stream_budget_seconds}"
            )
        if self.grpc and not self.certificate_arn:
            # An ALB forwards gRPC only from an HTTPS listener, so there is no HTTP fallback.
            raise ConfigError(
                f"{CONTEXT.CERTIFICATE_ARN} is required for the gRPC service"
                f" (or turn it off with -c {CONTEXT.GRPC}=false)"
            )
        for key, mode in ((CONTEXT.EXECUTION, self.execution),
                          (CONTEXT.GRPC_EXECUTION, self.grpc_execution)):
            if mode not in EXECUTION_MODES:
                raise ConfigError(f"{key} must be one of {', '.join(EXECUTION_MODES)}, "
                                  f"got {mode!r}")
        if not 60 <= self.worker_timeout_seconds <= _MAX_WORKER_TIMEOUT_SECONDS:
            raise ConfigError(f"{CONTEXT.WORKER_TIMEOUT_SECONDS} must be in [60, "
                              f"{_MAX_WORKER_TIMEOUT_SECONDS}] (Lambda's ceiling), got "
                              f"{self.worker_timeout_seconds}")
        if not 3 <= self.lease_seconds <= 300:
            raise ConfigError(f"{CONTEXT.LEASE_SECONDS} must be in [3, 300], got "
                              f"{self.lease_seconds}")
        if not 1 <= self.queue_max_receives <= 1000:
            raise ConfigError(f"{CONTEXT.QUEUE_MAX_RECEIVES} must be in [1, 1000], got "
                              f"{self.queue_max_receives}")
        if ":" not in self.agent:
            raise ConfigError(f"{CONTEXT.AGENT} must be module:attribute, got {self.agent!r}")
        self._check_auth()

    def _check_auth(self) -> None:
        if self.auth not in AUTH.ALL:
            raise ConfigError(f"{CONTEXT.AUTH} must be one of {', '.join(AUTH.ALL)}, "
                              f"got {self.auth!r}")
        jwt_only = {CONTEXT.JWT_ISSUER: self.jwt_issuer, CONTEXT.JWT_AUDIENCE: self.jwt_audience,
                    CONTEXT.JWT_REQUIRED_SCOPES: self.jwt_required_scopes,
                    CONTEXT.JWT_TENANT_CLAIM: self.jwt_tenant_claim,
                    CONTEXT.HTTP_API_JWT_AUTHORIZER: self.http_api_jwt_authorizer,
                    CONTEXT.COGNITO_DOMAIN_PREFIX: self.cognito_domain_prefix}
        if self.auth != AUTH.JWT:
            for key, value in jwt_only.items():
                if value:
                    raise ConfigError(f"{key} needs {CONTEXT.AUTH}={AUTH.JWT}")
        if self.api_key_header and self.auth != AUTH.API_KEY:
            raise ConfigError(f"{CONTEXT.API_KEY_HEADER} needs {CONTEXT.AUTH}={AUTH.API_KEY}")
        if self.jwt_issuer is not None:
            if not self.jwt_issuer.startswith("https://"):
                raise ConfigError(f"{CONTEXT.JWT_ISSUER} must be an https:// URL, "
                                  f"got {self.jwt_issuer!r}")
            if not self.jwt_audience:
                raise ConfigError(f"{CONTEXT.JWT_AUDIENCE} is required with "
                                  f"{CONTEXT.JWT_ISSUER}")
            if self.cognito_domain_prefix:
                raise ConfigError(f"{CONTEXT.COGNITO_DOMAIN_PREFIX} is for the stack's own "
                                  f"user pool, not with {CONTEXT.JWT_ISSUER}")

    @classmethod
    def from_context(cls, get: Callable[[str], Any]) -> DeployConfig:
        """Build from a context lookup such as `app.node.try_get_context`.

        Raises `ConfigError` naming the first key whose value is unusable.
        """
        defaults = cls.__dataclass_fields__

        # Reading the default from the field keeps one source for it.
        def default(name: str) -> Any:
            return defaults[name].default

        return cls(
            account=_str(get, CONTEXT.ACCOUNT),
            region=_str(get, CONTEXT.REGION),
            stack_name=_str(get, CONTEXT.STACK_NAME) or default("stack_name"),
            agent=_str(get, CONTEXT.AGENT) or default("agent"),
            lambda_bundle=_str(get, CONTEXT.LAMBDA_BUNDLE),
            grpc=_bool(get, CONTEXT.GRPC, default("grpc")),
            certificate_arn=_str(get, CONTEXT.CERTIFICATE_ARN),
            desired_count=_int(get, CONTEXT.DESIRED_COUNT, default("desired_count")),
            allow_anonymous=_bool(get, CONTEXT.ALLOW_ANONYMOUS, default("allow_anonymous")),
            stream_budget_seconds=_float(
                get, CONTEXT.STREAM_BUDGET_SECONDS, default("stream_budget_seconds")
            ),
            retain_table=_bool(get, CONTEXT.RETAIN_TABLE, default("retain_table")),
            alarm_email=_str(get, CONTEXT.ALARM_EMAIL),
            execution=_str(get, CONTEXT.EXECUTION) or default("execution"),
            grpc_execution=_str(get, CONTEXT.GRPC_EXECUTION) or default("grpc_execution"),
            worker_timeout_seconds=_int(
                get, CONTEXT.WORKER_TIMEOUT_SECONDS, default("worker_timeout_seconds")
            ),
            lease_seconds=_float(get, CONTEXT.LEASE_SECONDS, default("lease_seconds")),
            queue_max_receives=_int(
                get, CONTEXT.QUEUE_MAX_RECEIVES, default("queue_max_receives")
            ),
            push=_bool(get, CONTEXT.PUSH, default("push")),
            auth=_str(get, CONTEXT.AUTH) or default("auth"),
            jwt_issuer=_str(get, CONTEXT.JWT_ISSUER),
            jwt_audience=_str(get, CONTEXT.JWT_AUDIENCE),
            jwt_required_scopes=_str(get, CONTEXT.JWT_REQUIRED_SCOPES),
            jwt_tenant_claim=_str(get, CONTEXT.JWT_TENANT_CLAIM),
            http_api_jwt_authorizer=_bool(get, CONTEXT.HTTP_API_JWT_AUTHORIZER,
                                          default("http_api_jwt_authorizer")),
            cognito_domain_prefix=_str(get, CONTEXT.COGNITO_DOMAIN_PREFIX),
            api_key_header=_str(get, CONTEXT.API_KEY_HEADER),
        )


# `-c key=value` always arrives as a string; cdk.json can carry real JSON types.
def _str(get: Callable[[str], Any], key: str) -> str | None:
    value = get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ConfigError(f"{key} must be a string, got {value!r}")
    return value


def _bool(get: Callable[[str], Any], key: str, default: bool) -> bool:
    value = get(key)
    if value is None or value == "":
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ConfigError(f"{key} must be true or false, got {value!r}")


N = TypeVar("N", int, float)


def _int(get: Callable[[str], Any], key: str, default: int) -> int:
    return _number(get, key, default, int, "an integer")


def _float(get: Callable[[str], Any], key: str, default: float) -> float:
    return _number(get, key, default, float, "a number")


def _number(get: Callable[[str], Any], key: str, default: N, cast: Callable[[Any], N],
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
