"""Settings: read from the environment once, into one frozen, typed object.

Code receives a `Settings`; tests build one directly instead of patching the environment.
The variable names (`a2akit.env.ENV`) are the kit's public interface (DESIGN.md); infra/ imports
them from here, with `Settings`.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from a2akit.env import (
    ALL,
    ALL_OPERATIONS,
    DECLARED,
    DEFAULT_AGENT,
    DEFAULT_MAX_TASK_BYTES,
    ENV,
    EXECUTION_MODES,
    INLINE,
    JWT_ALGORITHMS,
    LONG_TASK_MODES,
    PUSH_DELIVERY_MODES,
    QUEUE,
    STREAM,
    SettingsError,
    base_path,
    bearer_tokens,
    boolean,
    check_fetch_url,
    cidrs,
    execution_mode,
    grpc_address,
    integer,
    is_name,
    items,
    log_level_name,
    long_tasks_mode,
    name_map,
    peer_address_error,
    port,
    positive,
    public_url,
    push_delivery_mode,
    required_scopes,
    seconds,
)

if TYPE_CHECKING:
    from a2akit.agent_project import AgentProject

# ENV, the modes and SettingsError live in a2akit.env; they are named here too, where the
# kit's code and infra/ take them with `Settings`.
__all__ = ["ALL", "ALL_OPERATIONS", "DECLARED", "DEFAULT_AGENT", "DEFAULT_MAX_TASK_BYTES", "ENV",
           "EXECUTION_MODES", "INLINE", "JWT_ALGORITHMS", "LONG_TASK_MODES",
           "PUSH_DELIVERY_MODES", "QUEUE", "STREAM", "Settings", "SettingsError",
           "check_fetch_url", "name_map"]


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
    # The browser page at {interface path}/playground (http_service.playground): on under
    # ./dev serve, off elsewhere unless asked (docs/playground.md).
    playground: bool = False
    # OpenTelemetry spans through the process's tracer provider (a2akit/telemetry.py).
    otel: bool = False
    # Signed agent cards (a2akit/card_signing.py): one of a PEM private key file or a KMS key.
    card_signing_key: str | None = None
    card_signing_kms_key_id: str | None = None
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
    # The long-task lane (handlers/long_worker.py, on ECS Fargate): whoever enqueues sends the
    # tasks `long_tasks` picks (an agent's `long_running`, or all) to this queue instead.
    long_queue_url: str | None = None
    long_tasks: str = DECLARED
    # The lane's worker: agents it runs at once, and after SIGTERM how long running agents
    # may go on before each ends FAILED (under ECS's stop timeout, at most 120 s).
    long_concurrency: int = 1
    long_shutdown_grace_seconds: float = 100.0
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
    # peer name -> a JWKS file: the peer's card is verified against these keys before a call
    peer_jwks: Mapping[str, str] = dataclasses.field(default_factory=dict)

    # --- the process ------------------------------------------------------------------------
    # The Lambda function this process runs in (AWS_LAMBDA_FUNCTION_NAME); None elsewhere.
    function_name: str | None = None
    # POWERTOOLS_SERVICE_NAME: what a process outside Lambda reports as (the gRPC container).
    service_name: str | None = None
    # The streaming door's HTTP server (handlers.stream): AWS_LWA_PORT, then PORT (the Lambda
    # Web Adapter's order), and AWS_LWA_HOST, then HOST: the adapter connects to localhost.
    http_port: int = 8080
    http_host: str = "127.0.0.1"
    # ECS's task metadata endpoint (ECS_CONTAINER_METADATA_URI_V4); None outside ECS.
    ecs_metadata_uri: str | None = None

    def __post_init__(self) -> None:
        if self.card_signing_key and self.card_signing_kms_key_id:
            raise SettingsError(f"{ENV.CARD_SIGNING_KEY} and {ENV.CARD_SIGNING_KMS_KEY_ID} are "
                                "both set: sign the card with one key, set one of them")
        _check_auth(self)
        _check_peers(self)

    @property
    def on_lambda(self) -> bool:
        return self.function_name is not None

    def service(self, default: str) -> str:
        """The name this process reports as (the `service` of its log lines, the `Service`
        dimension of its metrics): the Lambda function's, else POWERTOOLS_SERVICE_NAME (the
        stack sets it on the gRPC container), else the entry point's `default`."""
        return self.function_name or self.service_name or default

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
            secrets_max_age_seconds=seconds(env, ENV.SECRETS_MAX_AGE_SECONDS,
                                             cls.secrets_max_age_seconds),
            table=env.get(ENV.TABLE) or None,
            dynamodb_endpoint=env.get(ENV.DYNAMODB_ENDPOINT) or None,
            public_url=public_url(env.get(ENV.PUBLIC_URL)) or cls.public_url,
            grpc_address=grpc_address(env.get(ENV.GRPC_ADDRESS)),
            rest_base_path=base_path(env.get(ENV.REST_BASE_PATH)),
            allow_anonymous=boolean(env, ENV.ALLOW_ANONYMOUS),
            bearer_tokens=bearer_tokens(env.get(ENV.BEARER_TOKENS, "")),
            grpc_port=integer(env, ENV.GRPC_PORT, cls.grpc_port, minimum=0, maximum=65535),
            max_request_bytes=integer(env, ENV.MAX_REQUEST_BYTES, cls.max_request_bytes,
                                      minimum=1024),
            push_notifications=boolean(env, ENV.PUSH_NOTIFICATIONS),
            extended_agent_card=boolean(env, ENV.EXTENDED_AGENT_CARD),
            playground=boolean(env, ENV.PLAYGROUND),
            otel=boolean(env, ENV.OTEL),
            card_signing_key=env.get(ENV.CARD_SIGNING_KEY) or None,
            card_signing_kms_key_id=env.get(ENV.CARD_SIGNING_KMS_KEY_ID) or None,
            stream_budget_seconds=positive(env, ENV.STREAM_BUDGET_SECONDS),
            max_active_tasks_per_caller=(
                None if not env.get(ENV.MAX_ACTIVE_TASKS_PER_CALLER)
                else integer(env, ENV.MAX_ACTIVE_TASKS_PER_CALLER, 0, minimum=1)),
            retention_days=integer(env, ENV.RETENTION_DAYS, cls.retention_days, minimum=1),
            max_task_bytes=integer(env, ENV.MAX_TASK_BYTES, cls.max_task_bytes,
                                minimum=65536, maximum=128 * 1024 * 1024),
            shutdown_grace_seconds=positive(env, ENV.SHUTDOWN_GRACE_SECONDS)
            or cls.shutdown_grace_seconds,
            log_level=log_level_name(env.get(ENV.LOG_LEVEL)),
            execution=execution_mode(env),
            queue_url=env.get(ENV.QUEUE_URL) or None,
            sqs_endpoint=env.get(ENV.SQS_ENDPOINT) or None,
            long_queue_url=env.get(ENV.LONG_QUEUE_URL) or None,
            long_tasks=long_tasks_mode(env),
            long_concurrency=integer(env, ENV.LONG_CONCURRENCY, cls.long_concurrency,
                                     minimum=1, maximum=100),
            long_shutdown_grace_seconds=seconds(env, ENV.LONG_SHUTDOWN_GRACE_SECONDS,
                                                cls.long_shutdown_grace_seconds),
            lease_seconds=seconds(env, ENV.LEASE_SECONDS, cls.lease_seconds),
            input_wait_seconds=seconds(env, ENV.INPUT_WAIT_SECONDS, cls.input_wait_seconds),
            budget_margin_seconds=seconds(env, ENV.BUDGET_MARGIN_SECONDS,
                                           cls.budget_margin_seconds),
            queue_grace_seconds=seconds(env, ENV.QUEUE_GRACE_SECONDS, cls.queue_grace_seconds),
            queue_max_receives=integer(env, ENV.QUEUE_MAX_RECEIVES, cls.queue_max_receives,
                                    minimum=1, maximum=1000),
            sweep_seconds=seconds(env, ENV.SWEEP_SECONDS, cls.sweep_seconds),
            sse_keepalive_seconds=seconds(env, ENV.SSE_KEEPALIVE_SECONDS,
                                           cls.sse_keepalive_seconds),
            jwt_issuer=env.get(ENV.JWT_ISSUER) or None,
            jwt_jwks_url=env.get(ENV.JWT_JWKS_URL) or None,
            jwt_audiences=items(env.get(ENV.JWT_AUDIENCE)),
            jwt_algorithms=items(env.get(ENV.JWT_ALGORITHMS)) or cls.jwt_algorithms,
            jwt_tenant_claim=env.get(ENV.JWT_TENANT_CLAIM) or None,
            jwt_required_scopes=required_scopes(env.get(ENV.JWT_REQUIRED_SCOPES, "")),
            jwt_leeway_seconds=seconds(env, ENV.JWT_LEEWAY_SECONDS, cls.jwt_leeway_seconds),
            jwks_max_age_seconds=seconds(env, ENV.JWKS_MAX_AGE_SECONDS,
                                          cls.jwks_max_age_seconds),
            api_key_header=(env.get(ENV.API_KEY_HEADER) or cls.api_key_header).strip().lower(),
            api_keys=env.get(ENV.API_KEYS) or None,
            api_keys_secret=env.get(ENV.API_KEYS_SECRET) or None,
            api_keys_parameter=env.get(ENV.API_KEYS_PARAMETER) or None,
            api_keys_max_age_seconds=seconds(env, ENV.API_KEYS_MAX_AGE_SECONDS,
                                              cls.api_keys_max_age_seconds),
            auth_refresh_seconds=seconds(env, ENV.AUTH_REFRESH_SECONDS,
                                          cls.auth_refresh_seconds),
            auth_timeout_seconds=seconds(env, ENV.AUTH_TIMEOUT_SECONDS,
                                          cls.auth_timeout_seconds),
            push_delivery=push_delivery_mode(env),
            push_allow_http=boolean(env, ENV.PUSH_ALLOW_HTTP),
            push_allow_cidrs=cidrs(env.get(ENV.PUSH_ALLOW_CIDRS)),
            push_timeout_seconds=seconds(env, ENV.PUSH_TIMEOUT_SECONDS,
                                          cls.push_timeout_seconds),
            push_attempts=integer(env, ENV.PUSH_ATTEMPTS, cls.push_attempts, minimum=1,
                               maximum=20),
            push_backoff_seconds=seconds(env, ENV.PUSH_BACKOFF_SECONDS,
                                          cls.push_backoff_seconds),
            push_backoff_cap_seconds=seconds(env, ENV.PUSH_BACKOFF_CAP_SECONDS,
                                              cls.push_backoff_cap_seconds),
            push_max_configs=integer(env, ENV.PUSH_MAX_CONFIGS, cls.push_max_configs, minimum=1,
                                  maximum=100),
            push_dlq_url=env.get(ENV.PUSH_DLQ_URL) or None,
            langgraph_checkpoint_table=env.get(ENV.LANGGRAPH_CHECKPOINT_TABLE) or None,
            peers=name_map(env, ENV.PEERS),
            peer_api_keys=name_map(env, ENV.PEER_API_KEYS),
            peer_token_url=env.get(ENV.PEER_TOKEN_URL) or None,
            peer_client_id=env.get(ENV.PEER_CLIENT_ID) or None,
            peer_scopes=items(env.get(ENV.PEER_SCOPES)),
            peer_jwks=name_map(env, ENV.PEER_JWKS),
            function_name=env.get(ENV.LAMBDA_FUNCTION) or None,
            service_name=env.get(ENV.SERVICE_NAME) or None,
            http_port=port(env, (ENV.LWA_PORT, ENV.PORT), cls.http_port),
            http_host=env.get(ENV.LWA_HOST) or env.get(ENV.HOST) or cls.http_host,
            ecs_metadata_uri=env.get(ENV.ECS_METADATA_URI) or None,
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













_HEADER_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")




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




def _check_peers(settings: Settings) -> None:
    """The peers' addresses and credentials; every message names the variable."""
    for name, address in settings.peers.items():
        problem = peer_address_error(address)
        if problem:
            raise SettingsError(f"{ENV.PEERS} entry {name}={address}: {problem}")
    for name, secret_name in settings.peer_api_keys.items():
        if name not in settings.peers:
            raise SettingsError(f"{ENV.PEER_API_KEYS} names {name}, which {ENV.PEERS} does not")
        if not is_name(secret_name):
            raise SettingsError(f"{ENV.PEER_API_KEYS} entry {name}={secret_name}: the value is the"
                                " name of a secret (letters, digits, _)")
    for name, path in settings.peer_jwks.items():
        if name not in settings.peers:
            raise SettingsError(f"{ENV.PEER_JWKS} names {name}, which {ENV.PEERS} does not")
        if settings.peers[name].startswith("grpc"):
            raise SettingsError(f"{ENV.PEER_JWKS} entry {name}: a gRPC peer's card is not "
                                "read, so it cannot be checked; give the peer an https address")
        if not os.path.isfile(path):
            raise SettingsError(f"{ENV.PEER_JWKS} entry {name}={path}: no such file (a JWKS, "
                                "the keys that sign the peer's card)")
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
