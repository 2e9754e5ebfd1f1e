"""The one stack: composes the constructs, wires settings, grants least privilege, exports URLs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aws_cdk import Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_route53 as route53
from constructs import Construct

from a2akit.settings import ALL, ENV, QUEUE, STREAM, Settings

from .agent_access import AgentAccess
from .alarms import Alarms
from .auth import ApiKeySecret, CognitoIssuer
from .card_signing import CardSigningKey
from .config import AUTH, LONG_TASKS, DeployConfig
from .dashboard import Dashboard
from .edge import RateLimitAcl
from .grpc_service import GrpcService
from .jsonrpc_api import DomainConfig, JsonRpcApi
from .long_lane import LongLane
from .nag import acknowledge_findings
from .otel import instrument
from .outputs import add_outputs
from .push import PushDispatcher
from .region import Placement
from .sweeper import LeaseSweeper
from .table import INDEX_ACTIONS, TaskTable, table_actions
from .worker import QueueWorker

__all__ = ["PROJECT_ROOT", "A2AStack"]

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def _flag(value: bool) -> str:
    return "true" if value else "false"


class A2AStack(Stack):
    """Table, the callers' issuer or key secret, the JSON-RPC Lambda behind its streaming REST
    API (throttled, optionally behind WAF and on its own domain), the task queue and its worker
    Lambda (when a binding queues), the lease sweeper, optional gRPC on Fargate, the push
    dispatcher (with push), alarms."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: DeployConfig,
        lambda_bundle: str,
        placement: Placement,
        image_context: Path | None = None,
        **kwargs: Any,
    ) -> None:
        """`placement`: the checked region and what the door uses there (infra/region.py);
        `image_context`: the gRPC image's staged build context (an agent project's); None
        builds it from the kit's tree."""
        super().__init__(scope, construct_id, **kwargs)
        self.table = TaskTable(self, "Tasks", retain=config.retain_table,
                               deletion_protection=config.deletion_protection)
        self.issuer: CognitoIssuer | None = None
        self.api_keys: ApiKeySecret | None = None
        auth_environment = self._configure_auth(config)

        # Push: every process has the capability, and only the stream dispatcher delivers
        # (a Lambda freezes once it answers, so no front door or worker can send in the
        # background). Without push, none of these: the capability stays off.
        push_environment = (
            {ENV.PUSH_NOTIFICATIONS: "true", ENV.PUSH_DELIVERY: STREAM} if config.push else {}
        )
        self.push: PushDispatcher | None = None
        if config.push:
            self.push = PushDispatcher(
                self,
                "Push",
                code_dir=lambda_bundle,
                table=self.table.table,
                environment={ENV.TABLE: self.table.table.table_name, **push_environment},
            )
        # The agent's own permissions and values: only where it runs (the worker, the door
        # and the container when they run agents inline), never on the other roles.
        self.agent_access: AgentAccess | None = None
        agent_environment: dict[str, str] = {}
        if config.agent_access:
            self.agent_access = AgentAccess(
                self, "Agent", policy=config.agent_policy,
                managed_policy_arns=config.agent_managed_policies,
                secrets=config.agent_secrets, parameters=config.agent_parameters)
            agent_environment = self.agent_access.environment
        # What every process that runs agents reads; the bindings add how callers sign in.
        runtime = {
            ENV.AGENT: config.agent,
            ENV.TABLE: self.table.table.table_name,
            ENV.RETENTION_DAYS: str(Settings.retention_days),
            ENV.LEASE_SECONDS: f"{config.lease_seconds:g}",
            **push_environment,
        }
        common = {
            **runtime,
            ENV.ALLOW_ANONYMOUS: _flag(config.allow_anonymous),
            **auth_environment,
        }
        if config.max_active_tasks_per_caller is not None:
            # The core's per-caller quota, where tasks are created (both bindings).
            common[ENV.MAX_ACTIVE_TASKS_PER_CALLER] = str(config.max_active_tasks_per_caller)
        # Queue mode: whoever enqueues gets these settings and may only send.
        queued: dict[str, str] = {}
        self.worker: QueueWorker | None = None
        if config.uses_queue:
            self.worker = QueueWorker(
                self,
                "Worker",
                code_dir=lambda_bundle,
                environment={**runtime, **config.queue_timing.worker_environment,
                             **agent_environment},
                timing=config.queue_timing,
                max_concurrency=config.worker_max_concurrency,
            )
            self._grant_table(self.worker.function.role, table_actions(runs=True))
            self._grant_agent(self.worker.function.role)
            # A queued task counts as lost once SQS has given up on its message.
            queued = {
                ENV.EXECUTION: QUEUE,
                ENV.QUEUE_URL: self.worker.queue.queue_url,
                **config.queue_timing.enqueuer_environment,
            }
        self.jsonrpc = JsonRpcApi(
            self,
            "JsonRpc",
            code_dir=lambda_bundle,
            environment={
                **common,
                ENV.STREAM_BUDGET_SECONDS: f"{config.stream_budget_seconds:g}",
                **(queued if config.execution == QUEUE else agent_environment),
            },
            stream_budget_seconds=config.stream_budget_seconds,
            rate_limit=config.throttle_rate_limit,
            burst_limit=config.throttle_burst_limit,
            reserved_concurrency=config.reserved_concurrency,
            domain=DomainConfig(config.domain_name, certificate_arn=config.certificate_arn,
                                zone_id=config.hosted_zone_id,
                                zone_name=config.hosted_zone_name)
            if config.domain_name else None,
            function_url=config.function_url,
            layer_arn=placement.layer_arn,
            snap_start=placement.snap_start,
        )
        self.waf: RateLimitAcl | None = None
        if config.waf:
            self.waf = RateLimitAcl(self, "Waf", stage_arn=self.jsonrpc.stage.stage_arn,
                                    limit=config.waf_rate_limit)
        self.jsonrpc.function.add_environment(ENV.PUBLIC_URL, self.jsonrpc.url)
        if config.playground:
            self.jsonrpc.function.add_environment(ENV.PLAYGROUND, "true")
        self.card_key: CardSigningKey | None = None
        if config.card_signing:
            self.card_key = CardSigningKey(self, "CardSigning")
            self.card_key.grant_sign(self.jsonrpc.function.role)
            self.jsonrpc.function.add_environment(ENV.CARD_SIGNING_KMS_KEY_ID,
                                                  self.card_key.key.key_arn)
        self._grant_table(self.jsonrpc.function.role,
                          table_actions(serves=True, runs=config.execution != QUEUE),
                          *self.table.index_arns)
        if config.execution == QUEUE:
            assert self.worker is not None
            self._grant_send(self.jsonrpc.function.role)
        else:
            self._grant_agent(self.jsonrpc.function.role)

        self.sweeper = LeaseSweeper(
            self,
            "Sweeper",
            code_dir=lambda_bundle,
            environment={ENV.TABLE: common[ENV.TABLE], **push_environment},
        )
        self._grant_table(self.sweeper.function.role, table_actions(sweeps=True),
                          self.table.lease_index_arn)
        self._grant_keys(self.jsonrpc.function.role)

        self.grpc: GrpcService | None = None
        grpc_zone: route53.IHostedZone | None = None
        if config.grpc:
            # DeployConfig requires both with gRPC.
            assert config.grpc_certificate_arn is not None and config.grpc_domain_name
            if config.grpc_hosted_zone_id and config.grpc_hosted_zone_name:
                grpc_zone = route53.HostedZone.from_hosted_zone_attributes(
                    self, "GrpcZone", hosted_zone_id=config.grpc_hosted_zone_id,
                    zone_name=config.grpc_hosted_zone_name)
            self.grpc = GrpcService(
                self,
                "Grpc",
                project_root=PROJECT_ROOT,
                environment={
                    **common,
                    ENV.PUBLIC_URL: self.jsonrpc.url,
                    ENV.GRPC_PORT: str(Settings.grpc_port),
                    ENV.STREAM_BUDGET_SECONDS: f"{config.grpc_stream_budget_seconds:g}",
                    ENV.SHUTDOWN_GRACE_SECONDS: f"{Settings.shutdown_grace_seconds:g}",
                    **(queued if config.grpc_execution == QUEUE else agent_environment),
                },
                runs_agents=config.grpc_execution != QUEUE,
                certificate_arn=config.grpc_certificate_arn,
                domain_name=config.grpc_domain_name,
                min_tasks=config.grpc_min_tasks,
                max_tasks=config.grpc_max_tasks,
                nat_gateways=config.nat_gateways,
                port=Settings.grpc_port,
                stream_budget_seconds=config.grpc_stream_budget_seconds,
                shutdown_grace_seconds=Settings.shutdown_grace_seconds,
                allowed_cidrs=config.grpc_allowed_cidrs,
                zone=grpc_zone,
                image_context=image_context,
            )
            # Both bindings advertise the same card, so the Lambda names the gRPC address too.
            self.jsonrpc.function.add_environment(ENV.GRPC_ADDRESS, self.grpc.address)
            self.grpc.service.task_definition.default_container.add_environment(  # type: ignore[union-attr]
                ENV.GRPC_ADDRESS, self.grpc.address
            )
            # The container also sweeps expired leases in process.
            self._grant_table(
                self.grpc.task_role,
                table_actions(serves=True, runs=config.grpc_execution != QUEUE, sweeps=True),
                *self.table.index_arns, self.table.lease_index_arn,
            )
            if config.grpc_execution == QUEUE:
                assert self.worker is not None
                self._grant_send(self.grpc.task_role)
            else:
                self._grant_agent(self.grpc.task_role)
            self._grant_keys(self.grpc.task_role)

        self.long_lane: LongLane | None = None
        if config.long_lane:
            self._add_long_lane(config, runtime, agent_environment, image_context)
        if placement.otel_layer_arn is not None:  # a2a:otel=true (infra/region.py: place)
            self._add_otel(placement.otel_layer_arn)

        self.alarms = Alarms(
            self,
            "Alarms",
            function=self.jsonrpc.function,
            rest_api=self.jsonrpc.rest_api,
            stream_budget_seconds=config.stream_budget_seconds,
            sweeper=self.sweeper.function,
            failed_sweeps=self.sweeper.failed,
            table=self.table.table,
            worker=self.worker,
            grpc=self.grpc,
            push=self.push,
            email=config.alarm_email,
        )
        if self.long_lane is not None:
            self.alarms.add_long_lane(self.long_lane)
        Dashboard(self, "Dashboard", alarms=self.alarms.alarms, table=self.table.table,
                  jsonrpc=self.jsonrpc, worker=self.worker, sweeper=self.sweeper.function,
                  grpc=self.grpc, push=self.push)
        self._deliver_from_the_start()

        add_outputs(self, config, grpc_zone)
        acknowledge_findings(self)

    def _add_long_lane(self, config: DeployConfig, runtime: dict[str, str],
                       agent_environment: dict[str, str], image_context: Path | None) -> None:
        """The long-task lane: its queue and its worker service (infra/long_lane.py), with
        the Lambda worker's table grants and settings; whoever enqueues learns its queue."""
        assert self.worker is not None  # DeployConfig: the lane needs a binding that queues
        lane = self.long_lane = LongLane(
            self,
            "LongLane",
            project_root=PROJECT_ROOT,
            environment={**runtime, **config.queue_timing.worker_environment,
                         **agent_environment},
            max_receives=config.queue_timing.max_receives,
            max_tasks=config.long_tasks_max_tasks,
            network=config.long_tasks_network,
            spot=config.long_tasks_spot,
            stop_timeout_seconds=config.long_tasks_stop_timeout,
            nat_vpc=self.grpc.vpc if self.grpc is not None else None,
            nat_gateways=config.nat_gateways,
            image_context=image_context,
        )
        self._grant_table(lane.task_role, table_actions(runs=True))
        self._grant_agent(lane.task_role)
        routing = {ENV.LONG_QUEUE_URL: lane.queue.queue_url}
        if config.long_tasks == LONG_TASKS.ALL:
            routing[ENV.LONG_TASKS] = ALL
        if config.execution == QUEUE:
            for name, value in routing.items():
                self.jsonrpc.function.add_environment(name, value)
            self._grant_send(self.jsonrpc.function.role, lane.queue.queue_arn)
        if self.grpc is not None and config.grpc_execution == QUEUE:
            for name, value in routing.items():
                self.grpc.service.task_definition.default_container.add_environment(  # type: ignore[union-attr]
                    name, value)
            self._grant_send(self.grpc.task_role, lane.queue.queue_arn)

    def _add_otel(self, layer_arn: str) -> None:
        """The ADOT layer and the spans' settings on every function that runs the kit: the
        door, the worker, the sweeper and the push dispatcher (infra/otel.py)."""
        functions = [self.sweeper.function]
        if self.worker is not None:
            functions.append(self.worker.function)
        if self.push is not None:
            functions.append(self.push.function)
        instrument(self, layer_arn=layer_arn, service_name=self.stack_name,
                   door=self.jsonrpc.function, functions=functions,
                   webhooks=self.push.function if self.push is not None else None)

    def _deliver_from_the_start(self) -> None:
        """The push settings reach the processes that write events only once the stream
        mapping exists: it starts at LATEST, so a task that may have push configs never
        writes an event the dispatcher does not see."""
        if self.push is None:
            return
        writers: list[Construct] = [self.jsonrpc.function, self.sweeper.function]
        if self.worker is not None:
            writers.append(self.worker.function)
        if self.grpc is not None:
            writers.append(self.grpc.service.task_definition)
        if self.long_lane is not None:
            writers.append(self.long_lane.service.task_definition)
        for writer in writers:
            writer.node.add_dependency(self.push.mapping)

    def _configure_auth(self, config: DeployConfig) -> dict[str, str]:
        """The scheme `a2a:auth` chooses, as the environment both bindings read."""
        if config.auth == AUTH.API_KEY:
            self.api_keys = ApiKeySecret(self, "ApiKeys")
            environment = {ENV.API_KEYS_SECRET: self.api_keys.secret.secret_arn}
            if config.api_key_header:
                environment[ENV.API_KEY_HEADER] = config.api_key_header
            return environment
        if config.auth != AUTH.JWT:
            return {}
        scopes: str | None
        if config.jwt_issuer is None:
            self.issuer = CognitoIssuer(self, "Issuer", domain_prefix=config.cognito_domain_prefix,
                                        stack_name=config.stack_name)
            issuer, audience = self.issuer.issuer, self.issuer.audience
            scopes = config.jwt_required_scopes or self.issuer.scope
        else:
            assert config.jwt_audience is not None  # DeployConfig checks it
            issuer, audience, scopes = (config.jwt_issuer, config.jwt_audience,
                                        config.jwt_required_scopes)
        environment = {ENV.JWT_ISSUER: issuer, ENV.JWT_AUDIENCE: audience}
        if scopes:
            environment[ENV.JWT_REQUIRED_SCOPES] = scopes
        if config.jwt_tenant_claim:
            environment[ENV.JWT_TENANT_CLAIM] = config.jwt_tenant_claim
        return environment

    def _grant_send(self, role: iam.IRole | None, queue_arn: str | None = None) -> None:
        """SendMessage on the task queue (or `queue_arn`) and nothing else: the kit's queue
        client only sends (`grant_send_messages` adds GetQueueAttributes and GetQueueUrl,
        never called; tests/rehearsal records the calls)."""
        assert role is not None and self.worker is not None
        role.add_to_principal_policy(iam.PolicyStatement(
            actions=["sqs:SendMessage"], resources=[queue_arn or self.worker.queue.queue_arn]))

    def _grant_agent(self, role: iam.IRole | None) -> None:
        """The agent's permissions and values on a role that runs it."""
        if self.agent_access is not None:
            self.agent_access.grant(role)

    def _grant_keys(self, role: iam.IRole | None) -> None:
        # Read access to the API-key secret and nothing else of Secrets Manager.
        if self.api_keys is not None:
            assert role is not None
            self.api_keys.secret.grant_read(role)

    def _grant_table(self, role: iam.IRole | None, actions: tuple[str, ...],
                     *index_arns: str) -> None:
        """`actions` on the table, and Query on the named indexes only."""
        # Explicit statements instead of grant_read_write_data: that one adds `index/*` and
        # table-management actions the kit never uses.
        assert role is not None
        role.add_to_principal_policy(
            iam.PolicyStatement(actions=list(actions), resources=[self.table.table.table_arn])
        )
        if index_arns:
            role.add_to_principal_policy(
                iam.PolicyStatement(actions=list(INDEX_ACTIONS), resources=list(index_arns))
            )
