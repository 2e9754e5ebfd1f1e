"""Deployment settings, read once from CDK context (`cdk.json` or `-c key=value`).

Constructs receive a `DeployConfig`; they never read context or the environment themselves.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from a2akit.agent_project import AgentProject, load_project
from a2akit.settings import DEFAULT_AGENT, EXECUTION_MODES, QUEUE, SettingsError, name_map

from .queue_timing import MIN_MAX_RECEIVES, QueueTiming

__all__ = ["AUTH", "CONTEXT", "DEFAULT_AGENT_POLICY", "LONG_TASKS", "AgentPolicy",
           "ConfigError", "DeployConfig"]

# The streaming door (REST API, response streaming) carries a response for up to 15 minutes,
# Lambda's ceiling too; the function's timeout is the budget plus a few seconds
# (infra/jsonrpc_api.py), so the budget stays under both.
_MAX_STREAM_BUDGET_SECONDS = 890.0
# An ALB's idle timeout is at most 4000 s; the container's streams stay a minute under it.
_MAX_GRPC_STREAM_BUDGET_SECONDS = 3600.0
# AWS Lambda's ceiling for any invocation.
_MAX_WORKER_TIMEOUT_SECONDS = 900
# ECS's longest stop timeout (SIGTERM to SIGKILL) on Fargate, and the least the long lane's
# worker needs: its receive under way (5 s) and a margin for the FAILED writes (10 s).
_MAX_STOP_TIMEOUT_SECONDS = 120
_MIN_STOP_TIMEOUT_SECONDS = 20
# The internal ALB's clients by default: the VPC itself (infra/grpc_service.py: VPC_CIDR).
DEFAULT_GRPC_ALLOWED_CIDRS = ("10.0.0.0/16",)
# The agent project's own IAM policy, when a2a:agentPolicy names none.
DEFAULT_AGENT_POLICY = "iam-policy.json"
# What the agent's read grants may name: a managed policy, a secret, a parameter.
_MANAGED_POLICY_ARN = re.compile(r"^arn:aws[a-z-]*:iam::(aws|\d{12}):policy/\S+$")
_SECRET_ARN = re.compile(r"^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[\w/+=.@-]+$")
_SECRET_NAME = re.compile(r"^[\w/+=.@-]{1,512}$")
_PARAMETER_ARN = re.compile(r"^arn:aws[a-z-]*:ssm:[a-z0-9-]+:\d{12}:parameter/[\w/.-]+$")
_PARAMETER_NAME = re.compile(r"^[\w/.-]{1,2048}$")


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


@dataclasses.dataclass(frozen=True, kw_only=True)
class DeployConfig:
    """Everything that differs between deployments of the same stack code."""

    account: str | None = None
    region: str | None = None
    stack_name: str = "A2AKit"
    agent: str = DEFAULT_AGENT
    # The user's agent project (a2a:agentProject): its packages and locked dependencies go
    # into the bundle and the image; its entry is the agent unless a2a:agent names another.
    agent_project: AgentProject | None = None
    # What the processes that run agents may do and read, besides the kit's own grants.
    agent_policy: AgentPolicy | None = None
    agent_managed_policies: tuple[str, ...] = ()
    agent_secrets: Mapping[str, str] = dataclasses.field(default_factory=dict)
    agent_parameters: Mapping[str, str] = dataclasses.field(default_factory=dict)
    # A folder holding the Lambda code; None means "build it" (see infra/bundle.py).
    lambda_bundle: str | None = None
    # Off by default: the gRPC side needs a name and a certificate, and costs while idle.
    grpc: bool = False
    domain_name: str | None = None
    certificate_arn: str | None = None
    hosted_zone_id: str | None = None
    hosted_zone_name: str | None = None
    grpc_domain_name: str | None = None
    grpc_certificate_arn: str | None = None
    grpc_hosted_zone_id: str | None = None
    grpc_hosted_zone_name: str | None = None
    grpc_allowed_cidrs: tuple[str, ...] = DEFAULT_GRPC_ALLOWED_CIDRS
    # Stage throttling of the REST API (requests per second, steady and burst).
    throttle_rate_limit: float = 50.0
    throttle_burst_limit: int = 100
    # The front door never takes more of the account's concurrency (1000 by default) than
    # this, so the worker, the sweeper and the push dispatcher always find some. None
    # (`none`): nothing reserved, for accounts whose quota is below 200 (Lambda keeps 100
    # unreserved); stage throttling alone then bounds a flood (a synth warning says so).
    reserved_concurrency: int | None = 100
    # At most this many worker invocations at once (the SQS event source's maximum).
    worker_max_concurrency: int = 20
    waf: bool = False
    waf_rate_limit: int = 1000  # requests per IP in 5 minutes
    # A streaming Function URL next to the REST API (no throttling or WAF in front of it).
    function_url: bool = False
    lwa_layer_arn: str | None = None  # None: the published layer (infra/region.py)
    # SnapStart on the door: None (unset) turns it on where the kit knows AWS offers it for
    # Python and stops synth elsewhere (infra/region.py); true or false decides.
    snap_start: bool | None = None
    max_active_tasks_per_caller: int | None = None  # None: no per-caller quota
    # The gRPC service scales on CPU between these (two tasks: one per AZ survives either AZ).
    grpc_min_tasks: int = 2
    grpc_max_tasks: int = 6
    # One NAT gateway per AZ (an AZ's outage leaves the other's egress); 1 saves one.
    nat_gateways: int = 2
    allow_anonymous: bool = False
    stream_budget_seconds: float = 20.0
    # The container's streams end after this (the client resubscribes); the ALB's idle timeout
    # and its draining at a deploy or scale-in follow it (infra/grpc_service.py).
    grpc_stream_budget_seconds: float = 300.0
    retain_table: bool = True
    # DynamoDB deletion protection on the table; off only for throwaway (test) stacks.
    deletion_protection: bool = True
    alarm_email: str | None = None
    # Without a subscriber the alarms notify nobody: synth warns, or with this fails.
    require_alarm_subscriber: bool = False
    # Where agents run: the JSON-RPC front door queues them by default (a worker Lambda runs
    # them, up to its timeout); `inline` runs quick agents in the request.
    execution: str = QUEUE
    # The container enqueues by default: agents run in the worker Lambda and outlive the
    # container's deploys; `inline` runs them in the container (cut short by a deploy).
    grpc_execution: str = QUEUE
    worker_timeout_seconds: int = _MAX_WORKER_TIMEOUT_SECONDS
    lease_seconds: float = 30.0
    queue_max_receives: int = MIN_MAX_RECEIVES  # AWS's advice: at least 5
    # Push notifications: the capability on every binding, and the stream dispatcher that
    # delivers them (infra/push.py). Off by default: it lets agents' callers make the stack
    # send HTTP requests to the internet.
    push: bool = False
    # The playground page on the front door (A2A_PLAYGROUND), behind the same authentication
    # as every call; off by default.
    playground: bool = False
    # Signed agent cards: a KMS key (retained) only the front door's role may sign with.
    card_signing: bool = False
    # The long-task lane: a queue worker on ECS Fargate with no time limit and no task while
    # its queue is empty (infra/long_lane.py). Off by default.
    long_tasks: str = LONG_TASKS.OFF
    # public: public subnets, a public IP, no inbound rule, no NAT gateway (the cheaper);
    # nat: private subnets behind NAT gateways (the gRPC side's VPC when it is on).
    long_tasks_network: str = "public"
    long_tasks_spot: bool = False
    long_tasks_stop_timeout: int = _MAX_STOP_TIMEOUT_SECONDS
    long_tasks_max_tasks: int = 10
    auth: str = AUTH.JWT
    jwt_issuer: str | None = None  # None with auth=jwt: the stack's own Cognito user pool
    jwt_audience: str | None = None  # comma-separated; the Cognito app client by default
    jwt_required_scopes: str | None = None  # A2A_JWT_REQUIRED_SCOPES; Cognito: a2a/invoke
    jwt_tenant_claim: str | None = None
    cognito_domain_prefix: str | None = None  # None: derived from the stack name and account
    api_key_header: str | None = None  # None: the kit's default (x-api-key)

    @property
    def agent_access(self) -> bool:
        """Whether the agent has permissions or values of its own to be granted."""
        return bool(self.agent_policy or self.agent_managed_policies or self.agent_secrets
                    or self.agent_parameters)

    @property
    def uses_queue(self) -> bool:
        """Whether a binding queues tasks, so the queue and the worker are deployed."""
        return self.execution == QUEUE or (self.grpc and self.grpc_execution == QUEUE)

    @property
    def long_lane(self) -> bool:
        return self.long_tasks != LONG_TASKS.OFF

    @property
    def queue_timing(self) -> QueueTiming:
        return QueueTiming(self.worker_timeout_seconds, self.queue_max_receives)

    def __post_init__(self) -> None:
        if not 0 <= self.grpc_min_tasks <= self.grpc_max_tasks <= 100:
            raise ConfigError(f"{CONTEXT.GRPC_MIN_TASKS} and {CONTEXT.GRPC_MAX_TASKS} must "
                              f"satisfy 0 <= min <= max <= 100, got {self.grpc_min_tasks} and "
                              f"{self.grpc_max_tasks}")
        if self.nat_gateways not in (1, 2):
            raise ConfigError(f"{CONTEXT.NAT_GATEWAYS} must be 1 or 2 (one per AZ), got "
                              f"{self.nat_gateways}")
        if not 0 < self.stream_budget_seconds <= _MAX_STREAM_BUDGET_SECONDS:
            raise ConfigError(
                f"{CONTEXT.STREAM_BUDGET_SECONDS} must be in (0, {_MAX_STREAM_BUDGET_SECONDS:g}]"
                f" (Lambda's 15 minutes less the function's margin), got "
                f"{self.stream_budget_seconds}"
            )
        if not 1 <= self.grpc_stream_budget_seconds <= _MAX_GRPC_STREAM_BUDGET_SECONDS:
            raise ConfigError(
                f"{CONTEXT.GRPC_STREAM_BUDGET_SECONDS} must be in [1, "
                f"{_MAX_GRPC_STREAM_BUDGET_SECONDS:g}] (the load balancer's longest idle timeout "
                f"and draining), got {self.grpc_stream_budget_seconds}")
        self._check_names()
        self._check_limits()
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
        if not MIN_MAX_RECEIVES <= self.queue_max_receives <= 1000:
            raise ConfigError(f"{CONTEXT.QUEUE_MAX_RECEIVES} must be in [{MIN_MAX_RECEIVES}, "
                              f"1000] (a throttled receive counts too), got "
                              f"{self.queue_max_receives}")
        if self.require_alarm_subscriber and not self.alarm_email:
            raise ConfigError(f"{CONTEXT.ALARM_EMAIL} is unset, so the alarms notify nobody: "
                              f"set it, or {CONTEXT.REQUIRE_ALARM_SUBSCRIBER}=false")
        if not self.retain_table and self.deletion_protection:
            raise ConfigError(f"{CONTEXT.RETAIN_TABLE}=false needs "
                              f"{CONTEXT.DELETION_PROTECTION}=false: cdk destroy cannot delete "
                              "a table with deletion protection")
        if ":" not in self.agent:
            raise ConfigError(f"{CONTEXT.AGENT} must be module:attribute, got {self.agent!r}")
        self._check_auth()
        self._check_agent_access()
        self._check_long_tasks()

    def _check_long_tasks(self) -> None:
        if self.long_tasks not in LONG_TASKS.VALUES:
            raise ConfigError(f"{CONTEXT.LONG_TASKS} must be one of "
                              f"{', '.join(LONG_TASKS.VALUES)}, got {self.long_tasks!r}")
        if self.long_tasks_network not in ("public", "nat"):
            raise ConfigError(f"{CONTEXT.LONG_TASKS_NETWORK} must be public or nat, got "
                              f"{self.long_tasks_network!r}")
        if not _MIN_STOP_TIMEOUT_SECONDS <= self.long_tasks_stop_timeout <= (
                _MAX_STOP_TIMEOUT_SECONDS):
            raise ConfigError(f"{CONTEXT.LONG_TASKS_STOP_TIMEOUT} must be in "
                              f"[{_MIN_STOP_TIMEOUT_SECONDS}, {_MAX_STOP_TIMEOUT_SECONDS}] "
                              f"(ECS's longest stop timeout), got {self.long_tasks_stop_timeout}")
        if not 1 <= self.long_tasks_max_tasks <= 100:
            raise ConfigError(f"{CONTEXT.LONG_TASKS_MAX_TASKS} must be in [1, 100], got "
                              f"{self.long_tasks_max_tasks}")
        if self.long_lane and not self.uses_queue:
            raise ConfigError(f"{CONTEXT.LONG_TASKS} needs a binding that queues its tasks "
                              f"({CONTEXT.EXECUTION}=queue, the default, or "
                              f"{CONTEXT.GRPC_EXECUTION}=queue with gRPC)")

    def _check_agent_access(self) -> None:
        for policy in self.agent_managed_policies:
            if not _MANAGED_POLICY_ARN.match(policy):
                raise ConfigError(f"{CONTEXT.AGENT_MANAGED_POLICIES} entries must be IAM "
                                  f"policy ARNs (arn:aws:iam::aws:policy/NAME or "
                                  f"arn:aws:iam::ACCOUNT:policy/NAME), got {policy!r}")
        for key, values, arn, name in (
                (CONTEXT.AGENT_SECRETS, self.agent_secrets, _SECRET_ARN, _SECRET_NAME),
                (CONTEXT.AGENT_PARAMETERS, self.agent_parameters, _PARAMETER_ARN,
                 _PARAMETER_NAME)):
            for entry, where in values.items():
                pattern = arn if where.startswith("arn:") else name
                if not pattern.match(where):
                    raise ConfigError(f"{key}: {entry}={where!r} is neither a name nor an ARN "
                                      "of its service")

    def _check_names(self) -> None:
        """Each door's domain name and certificate; every message names one key."""
        if self.domain_name:
            if not (self.certificate_arn or self.hosted_zone_id):
                raise ConfigError(f"{CONTEXT.DOMAIN_NAME} needs {CONTEXT.CERTIFICATE_ARN} or "
                                  f"{CONTEXT.HOSTED_ZONE_ID} (to issue one)")
        else:
            for key, value in ((CONTEXT.CERTIFICATE_ARN, self.certificate_arn),
                               (CONTEXT.HOSTED_ZONE_ID, self.hosted_zone_id)):
                if value:
                    raise ConfigError(f"{key} needs {CONTEXT.DOMAIN_NAME}")
        if bool(self.hosted_zone_id) != bool(self.hosted_zone_name):
            raise ConfigError(f"{CONTEXT.HOSTED_ZONE_ID} and {CONTEXT.HOSTED_ZONE_NAME} go "
                              "together")
        if not self.grpc:
            return  # the gRPC side's settings wait, like its task counts, until it is on
        # An ALB forwards gRPC only from an HTTPS listener, and a client that follows the
        # card checks the certificate against the advertised name: both are required.
        for key, value in ((CONTEXT.GRPC_CERTIFICATE_ARN, self.grpc_certificate_arn),
                           (CONTEXT.GRPC_DOMAIN_NAME, self.grpc_domain_name)):
            if not value:
                raise ConfigError(f"{key} is required with {CONTEXT.GRPC}=true (or leave gRPC "
                                  "off)")
        if bool(self.grpc_hosted_zone_id) != bool(self.grpc_hosted_zone_name):
            raise ConfigError(f"{CONTEXT.GRPC_HOSTED_ZONE_ID} and "
                              f"{CONTEXT.GRPC_HOSTED_ZONE_NAME} go together")

    def _check_limits(self) -> None:
        if not self.throttle_rate_limit > 0:
            raise ConfigError(f"{CONTEXT.THROTTLE_RATE_LIMIT} must be > 0, got "
                              f"{self.throttle_rate_limit:g}")
        if self.throttle_burst_limit < 1:
            raise ConfigError(f"{CONTEXT.THROTTLE_BURST_LIMIT} must be >= 1, got "
                              f"{self.throttle_burst_limit}")
        if self.reserved_concurrency is not None and self.reserved_concurrency < 1:
            raise ConfigError(f"{CONTEXT.RESERVED_CONCURRENCY} must be >= 1 or none, got "
                              f"{self.reserved_concurrency}")
        if not 2 <= self.worker_max_concurrency <= 1000:  # SQS event sources' range
            raise ConfigError(f"{CONTEXT.WORKER_MAX_CONCURRENCY} must be in [2, 1000], got "
                              f"{self.worker_max_concurrency}")
        if not 10 <= self.waf_rate_limit <= 2_000_000_000:  # WAF rate-based rules' range
            raise ConfigError(f"{CONTEXT.WAF_RATE_LIMIT} must be in [10, 2000000000], got "
                              f"{self.waf_rate_limit}")
        if self.max_active_tasks_per_caller is not None and self.max_active_tasks_per_caller < 1:
            raise ConfigError(f"{CONTEXT.MAX_ACTIVE_TASKS_PER_CALLER} must be >= 1, got "
                              f"{self.max_active_tasks_per_caller}")

    def _check_auth(self) -> None:
        if self.auth not in AUTH.ALL:
            raise ConfigError(f"{CONTEXT.AUTH} must be one of {', '.join(AUTH.ALL)}, "
                              f"got {self.auth!r}")
        jwt_only = {CONTEXT.JWT_ISSUER: self.jwt_issuer, CONTEXT.JWT_AUDIENCE: self.jwt_audience,
                    CONTEXT.JWT_REQUIRED_SCOPES: self.jwt_required_scopes,
                    CONTEXT.JWT_TENANT_CLAIM: self.jwt_tenant_claim,
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
        if get(CONTEXT.HTTP_API_JWT_AUTHORIZER) not in (None, "", False, "false"):
            raise ConfigError(f"{CONTEXT.HTTP_API_JWT_AUTHORIZER} is gone with the HTTP API: the "
                              "public door is a streaming REST API (docs/public-door.md)")

        if get(CONTEXT.DESIRED_COUNT) not in (None, ""):
            raise ConfigError(f"{CONTEXT.DESIRED_COUNT} is gone: the gRPC service scales between "
                              f"{CONTEXT.GRPC_MIN_TASKS} and {CONTEXT.GRPC_MAX_TASKS}")

        # Reading the default from the field keeps one source for it.
        def default(name: str) -> Any:
            return defaults[name].default

        project = _project(get)
        agent = _str(get, CONTEXT.AGENT)
        if agent is None and project is not None:
            if project.agent is None:
                raise ConfigError(
                    f"{CONTEXT.AGENT_PROJECT}={project.root} names no agent: add [tool.a2akit] "
                    'agent = "package.module:attribute" to its pyproject.toml, or set '
                    f"{CONTEXT.AGENT}=module:attribute")
            agent = project.agent
        return cls(
            account=_str(get, CONTEXT.ACCOUNT),
            region=_str(get, CONTEXT.REGION),
            stack_name=_str(get, CONTEXT.STACK_NAME) or default("stack_name"),
            agent=agent or default("agent"),
            agent_project=project,
            agent_policy=_policy(get, project),
            agent_managed_policies=_items(get, CONTEXT.AGENT_MANAGED_POLICIES),
            agent_secrets=_names(get, CONTEXT.AGENT_SECRETS),
            agent_parameters=_names(get, CONTEXT.AGENT_PARAMETERS),
            lambda_bundle=_str(get, CONTEXT.LAMBDA_BUNDLE),
            grpc=_bool(get, CONTEXT.GRPC, default("grpc")),
            domain_name=_str(get, CONTEXT.DOMAIN_NAME),
            certificate_arn=_str(get, CONTEXT.CERTIFICATE_ARN),
            hosted_zone_id=_str(get, CONTEXT.HOSTED_ZONE_ID),
            hosted_zone_name=_str(get, CONTEXT.HOSTED_ZONE_NAME),
            grpc_domain_name=_str(get, CONTEXT.GRPC_DOMAIN_NAME),
            grpc_certificate_arn=_str(get, CONTEXT.GRPC_CERTIFICATE_ARN),
            grpc_hosted_zone_id=_str(get, CONTEXT.GRPC_HOSTED_ZONE_ID),
            grpc_hosted_zone_name=_str(get, CONTEXT.GRPC_HOSTED_ZONE_NAME),
            grpc_allowed_cidrs=_cidrs(get, CONTEXT.GRPC_ALLOWED_CIDRS,
                                      default("grpc_allowed_cidrs")),
            throttle_rate_limit=_float(get, CONTEXT.THROTTLE_RATE_LIMIT,
                                       default("throttle_rate_limit")),
            throttle_burst_limit=_int(get, CONTEXT.THROTTLE_BURST_LIMIT,
                                      default("throttle_burst_limit")),
            reserved_concurrency=(
                None if get(CONTEXT.RESERVED_CONCURRENCY) == "none"
                else _int(get, CONTEXT.RESERVED_CONCURRENCY, default("reserved_concurrency"))),
            worker_max_concurrency=_int(get, CONTEXT.WORKER_MAX_CONCURRENCY,
                                        default("worker_max_concurrency")),
            waf=_bool(get, CONTEXT.WAF, default("waf")),
            waf_rate_limit=_int(get, CONTEXT.WAF_RATE_LIMIT, default("waf_rate_limit")),
            function_url=_bool(get, CONTEXT.FUNCTION_URL, default("function_url")),
            lwa_layer_arn=_str(get, CONTEXT.LWA_LAYER_ARN),
            snap_start=(None if get(CONTEXT.SNAP_START) in (None, "")
                        else _bool(get, CONTEXT.SNAP_START, False)),
            max_active_tasks_per_caller=(
                None if get(CONTEXT.MAX_ACTIVE_TASKS_PER_CALLER) in (None, "")
                else _int(get, CONTEXT.MAX_ACTIVE_TASKS_PER_CALLER, 0)),
            grpc_min_tasks=_int(get, CONTEXT.GRPC_MIN_TASKS, default("grpc_min_tasks")),
            grpc_max_tasks=_int(get, CONTEXT.GRPC_MAX_TASKS, default("grpc_max_tasks")),
            nat_gateways=_int(get, CONTEXT.NAT_GATEWAYS, default("nat_gateways")),
            allow_anonymous=_bool(get, CONTEXT.ALLOW_ANONYMOUS, default("allow_anonymous")),
            stream_budget_seconds=_float(
                get, CONTEXT.STREAM_BUDGET_SECONDS, default("stream_budget_seconds")
            ),
            grpc_stream_budget_seconds=_float(get, CONTEXT.GRPC_STREAM_BUDGET_SECONDS,
                                              default("grpc_stream_budget_seconds")),
            retain_table=_bool(get, CONTEXT.RETAIN_TABLE, default("retain_table")),
            deletion_protection=_bool(get, CONTEXT.DELETION_PROTECTION,
                                      default("deletion_protection")),
            alarm_email=_str(get, CONTEXT.ALARM_EMAIL),
            require_alarm_subscriber=_bool(get, CONTEXT.REQUIRE_ALARM_SUBSCRIBER,
                                           default("require_alarm_subscriber")),
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
            playground=_bool(get, CONTEXT.PLAYGROUND, default("playground")),
            card_signing=_bool(get, CONTEXT.CARD_SIGNING, default("card_signing")),
            long_tasks=_long_tasks(get),
            long_tasks_network=_str(get, CONTEXT.LONG_TASKS_NETWORK)
            or default("long_tasks_network"),
            long_tasks_spot=_bool(get, CONTEXT.LONG_TASKS_SPOT, default("long_tasks_spot")),
            long_tasks_stop_timeout=_int(get, CONTEXT.LONG_TASKS_STOP_TIMEOUT,
                                         default("long_tasks_stop_timeout")),
            long_tasks_max_tasks=_int(get, CONTEXT.LONG_TASKS_MAX_TASKS,
                                      default("long_tasks_max_tasks")),
            auth=_str(get, CONTEXT.AUTH) or default("auth"),
            jwt_issuer=_str(get, CONTEXT.JWT_ISSUER),
            jwt_audience=_str(get, CONTEXT.JWT_AUDIENCE),
            jwt_required_scopes=_str(get, CONTEXT.JWT_REQUIRED_SCOPES),
            jwt_tenant_claim=_str(get, CONTEXT.JWT_TENANT_CLAIM),
            cognito_domain_prefix=_str(get, CONTEXT.COGNITO_DOMAIN_PREFIX),
            api_key_header=_str(get, CONTEXT.API_KEY_HEADER),
        )


def _long_tasks(get: Callable[[str], Any]) -> str:
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


def _project(get: Callable[[str], Any]) -> AgentProject | None:
    """The agent project a2a:agentProject names (a path; relative to the working folder,
    which `./dev` makes the caller's)."""
    path = _str(get, CONTEXT.AGENT_PROJECT)
    if path is None:
        return None
    try:
        return load_project(path)
    except SettingsError as exc:
        # Its messages name the local variable; here the context key is what to fix.
        raise ConfigError(str(exc).replace("A2A_AGENT_PROJECT", CONTEXT.AGENT_PROJECT)) from exc


def _policy(get: Callable[[str], Any], project: AgentProject | None) -> AgentPolicy | None:
    """a2a:agentPolicy's document, else the project's iam-policy.json when it has one."""
    given = _str(get, CONTEXT.AGENT_POLICY)
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


def _items(get: Callable[[str], Any], key: str) -> tuple[str, ...]:
    """`a, b` (or a JSON list) -> ("a", "b")."""
    value = get(key)
    if value is None or value == "":
        return ()
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not all(isinstance(i, str) for i in items):
        raise ConfigError(f"{key} must be comma-separated, got {value!r}")
    return tuple(filter(None, (item.strip() for item in items)))


def _names(get: Callable[[str], Any], key: str) -> dict[str, str]:
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


# `-c key=value` always arrives as a string; cdk.json can carry real JSON types.
def _str(get: Callable[[str], Any], key: str) -> str | None:
    value = get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ConfigError(f"{key} must be a string, got {value!r}")
    return value


def _cidrs(get: Callable[[str], Any], key: str, default: tuple[str, ...]) -> tuple[str, ...]:
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
