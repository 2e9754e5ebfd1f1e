"""Deployment settings, read once from CDK context (`cdk.json` or `-c key=value`; the keys and
how each value is read: infra/context.py) and checked across keys.

Constructs receive a `DeployConfig`; they never read context or the environment themselves.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from a2akit.agent_project import AgentProject
from a2akit.settings import DEFAULT_AGENT, EXECUTION_MODES, QUEUE

from .config_checks import check_agent_access, check_auth
from .context import (
    AUTH,
    CONTEXT,
    DEFAULT_AGENT_POLICY,
    LONG_TASKS,
    AgentPolicy,
    ConfigError,
    read_bool,
    read_cidrs,
    read_float,
    read_int,
    read_items,
    read_long_tasks,
    read_names,
    read_policy,
    read_project,
    read_str,
)
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
# What the agent's read grants may name: a managed policy, a secret, a parameter.


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
    # OpenTelemetry: the ADOT Lambda layer and A2A_OTEL on every function that runs the kit
    # (infra/otel.py); its layer by ARN, None for the published one (infra/region.py).
    otel: bool = False
    otel_layer_arn: str | None = None
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
        if self.otel_layer_arn and not self.otel:
            raise ConfigError(f"{CONTEXT.OTEL_LAYER_ARN} needs {CONTEXT.OTEL}=true")
        if ":" not in self.agent:
            raise ConfigError(f"{CONTEXT.AGENT} must be module:attribute, got {self.agent!r}")
        check_auth(self.auth, jwt_only={
            CONTEXT.JWT_ISSUER: self.jwt_issuer, CONTEXT.JWT_AUDIENCE: self.jwt_audience,
            CONTEXT.JWT_REQUIRED_SCOPES: self.jwt_required_scopes,
            CONTEXT.JWT_TENANT_CLAIM: self.jwt_tenant_claim,
            CONTEXT.COGNITO_DOMAIN_PREFIX: self.cognito_domain_prefix},
            api_key_header=self.api_key_header)
        check_agent_access(self.agent_managed_policies, self.agent_secrets,
                           self.agent_parameters)
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

        project = read_project(get)
        agent = read_str(get, CONTEXT.AGENT)
        if agent is None and project is not None:
            if project.agent is None:
                raise ConfigError(
                    f"{CONTEXT.AGENT_PROJECT}={project.root} names no agent: add [tool.a2akit] "
                    'agent = "package.module:attribute" to its pyproject.toml, or set '
                    f"{CONTEXT.AGENT}=module:attribute")
            agent = project.agent
        return cls(
            account=read_str(get, CONTEXT.ACCOUNT),
            region=read_str(get, CONTEXT.REGION),
            stack_name=read_str(get, CONTEXT.STACK_NAME) or default("stack_name"),
            agent=agent or default("agent"),
            agent_project=project,
            agent_policy=read_policy(get, project),
            agent_managed_policies=read_items(get, CONTEXT.AGENT_MANAGED_POLICIES),
            agent_secrets=read_names(get, CONTEXT.AGENT_SECRETS),
            agent_parameters=read_names(get, CONTEXT.AGENT_PARAMETERS),
            lambda_bundle=read_str(get, CONTEXT.LAMBDA_BUNDLE),
            grpc=read_bool(get, CONTEXT.GRPC, default("grpc")),
            domain_name=read_str(get, CONTEXT.DOMAIN_NAME),
            certificate_arn=read_str(get, CONTEXT.CERTIFICATE_ARN),
            hosted_zone_id=read_str(get, CONTEXT.HOSTED_ZONE_ID),
            hosted_zone_name=read_str(get, CONTEXT.HOSTED_ZONE_NAME),
            grpc_domain_name=read_str(get, CONTEXT.GRPC_DOMAIN_NAME),
            grpc_certificate_arn=read_str(get, CONTEXT.GRPC_CERTIFICATE_ARN),
            grpc_hosted_zone_id=read_str(get, CONTEXT.GRPC_HOSTED_ZONE_ID),
            grpc_hosted_zone_name=read_str(get, CONTEXT.GRPC_HOSTED_ZONE_NAME),
            grpc_allowed_cidrs=read_cidrs(get, CONTEXT.GRPC_ALLOWED_CIDRS,
                                      default("grpc_allowed_cidrs")),
            throttle_rate_limit=read_float(get, CONTEXT.THROTTLE_RATE_LIMIT,
                                       default("throttle_rate_limit")),
            throttle_burst_limit=read_int(get, CONTEXT.THROTTLE_BURST_LIMIT,
                                      default("throttle_burst_limit")),
            reserved_concurrency=(
                None if get(CONTEXT.RESERVED_CONCURRENCY) == "none"
                else read_int(get, CONTEXT.RESERVED_CONCURRENCY, default("reserved_concurrency"))),
            worker_max_concurrency=read_int(get, CONTEXT.WORKER_MAX_CONCURRENCY,
                                        default("worker_max_concurrency")),
            waf=read_bool(get, CONTEXT.WAF, default("waf")),
            waf_rate_limit=read_int(get, CONTEXT.WAF_RATE_LIMIT, default("waf_rate_limit")),
            function_url=read_bool(get, CONTEXT.FUNCTION_URL, default("function_url")),
            lwa_layer_arn=read_str(get, CONTEXT.LWA_LAYER_ARN),
            snap_start=(None if get(CONTEXT.SNAP_START) in (None, "")
                        else read_bool(get, CONTEXT.SNAP_START, False)),
            max_active_tasks_per_caller=(
                None if get(CONTEXT.MAX_ACTIVE_TASKS_PER_CALLER) in (None, "")
                else read_int(get, CONTEXT.MAX_ACTIVE_TASKS_PER_CALLER, 0)),
            grpc_min_tasks=read_int(get, CONTEXT.GRPC_MIN_TASKS, default("grpc_min_tasks")),
            grpc_max_tasks=read_int(get, CONTEXT.GRPC_MAX_TASKS, default("grpc_max_tasks")),
            nat_gateways=read_int(get, CONTEXT.NAT_GATEWAYS, default("nat_gateways")),
            allow_anonymous=read_bool(get, CONTEXT.ALLOW_ANONYMOUS, default("allow_anonymous")),
            stream_budget_seconds=read_float(
                get, CONTEXT.STREAM_BUDGET_SECONDS, default("stream_budget_seconds")
            ),
            grpc_stream_budget_seconds=read_float(get, CONTEXT.GRPC_STREAM_BUDGET_SECONDS,
                                              default("grpc_stream_budget_seconds")),
            retain_table=read_bool(get, CONTEXT.RETAIN_TABLE, default("retain_table")),
            deletion_protection=read_bool(get, CONTEXT.DELETION_PROTECTION,
                                      default("deletion_protection")),
            alarm_email=read_str(get, CONTEXT.ALARM_EMAIL),
            require_alarm_subscriber=read_bool(get, CONTEXT.REQUIRE_ALARM_SUBSCRIBER,
                                           default("require_alarm_subscriber")),
            execution=read_str(get, CONTEXT.EXECUTION) or default("execution"),
            grpc_execution=read_str(get, CONTEXT.GRPC_EXECUTION) or default("grpc_execution"),
            worker_timeout_seconds=read_int(
                get, CONTEXT.WORKER_TIMEOUT_SECONDS, default("worker_timeout_seconds")
            ),
            lease_seconds=read_float(get, CONTEXT.LEASE_SECONDS, default("lease_seconds")),
            queue_max_receives=read_int(
                get, CONTEXT.QUEUE_MAX_RECEIVES, default("queue_max_receives")
            ),
            push=read_bool(get, CONTEXT.PUSH, default("push")),
            playground=read_bool(get, CONTEXT.PLAYGROUND, default("playground")),
            card_signing=read_bool(get, CONTEXT.CARD_SIGNING, default("card_signing")),
            otel=read_bool(get, CONTEXT.OTEL, default("otel")),
            otel_layer_arn=read_str(get, CONTEXT.OTEL_LAYER_ARN),
            long_tasks=read_long_tasks(get),
            long_tasks_network=read_str(get, CONTEXT.LONG_TASKS_NETWORK)
            or default("long_tasks_network"),
            long_tasks_spot=read_bool(get, CONTEXT.LONG_TASKS_SPOT, default("long_tasks_spot")),
            long_tasks_stop_timeout=read_int(get, CONTEXT.LONG_TASKS_STOP_TIMEOUT,
                                         default("long_tasks_stop_timeout")),
            long_tasks_max_tasks=read_int(get, CONTEXT.LONG_TASKS_MAX_TASKS,
                                      default("long_tasks_max_tasks")),
            auth=read_str(get, CONTEXT.AUTH) or default("auth"),
            jwt_issuer=read_str(get, CONTEXT.JWT_ISSUER),
            jwt_audience=read_str(get, CONTEXT.JWT_AUDIENCE),
            jwt_required_scopes=read_str(get, CONTEXT.JWT_REQUIRED_SCOPES),
            jwt_tenant_claim=read_str(get, CONTEXT.JWT_TENANT_CLAIM),
            cognito_domain_prefix=read_str(get, CONTEXT.COGNITO_DOMAIN_PREFIX),
            api_key_header=read_str(get, CONTEXT.API_KEY_HEADER),
        )
