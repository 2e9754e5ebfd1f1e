"""The gRPC binding: Fargate in a VPC behind an internal ALB, HTTP/2 end to end."""

from __future__ import annotations

import math
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from aws_cdk import Aws, Duration, IgnoreMode, RemovalPolicy
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_ecr_assets as ecr_assets
from aws_cdk import aws_ecs as ecs
from aws_cdk import aws_elasticloadbalancingv2 as elbv2
from aws_cdk import aws_logs as logs
from aws_cdk import aws_route53 as route53
from aws_cdk import aws_route53_targets as targets
from constructs import Construct

from a2akit.settings import ENV

from .agent_code import AgentCode

__all__ = ["AGENT_CODE_FOLDER", "CPU_TARGET_PERCENT", "GRPC_HEALTH_CHECK_PATH", "HTTPS_PORT",
           "IDLE_TIMEOUT_MARGIN_SECONDS", "STOP_TIMEOUT_MARGIN_SECONDS", "VPC_CIDR",
           "GrpcService", "kit_image", "stage_agent_image"]

HTTPS_PORT = 443
# A literal, not a token, so security group rules (and their checks) see the real range.
VPC_CIDR = "10.0.0.0/16"
# The standard health service (grpc_service serves it); "0" is status OK.
GRPC_HEALTH_CHECK_PATH = "/grpc.health.v1.Health/Check"
# Autoscaling's target: below the alarm (infra/alarms.py, 80 %), so scaling acts first.
CPU_TARGET_PERCENT = 60
# ALBs do not forward HTTP/2 PINGs, so an idle stream lives only as long as the ALB's idle
# timeout: it outlasts the container's stream budget by this much, and the stream ends at
# its budget (the client resubscribes), never by the ALB cutting it.
IDLE_TIMEOUT_MARGIN_SECONDS = 60
# After its draining, ECS sends SIGTERM and waits this long (its stopTimeout) before SIGKILL:
# the server's shutdown grace (running calls finish) and time to end what is left.
STOP_TIMEOUT_MARGIN_SECONDS = 10

# The image installs the lock and copies the kit's packages, so its build context is the
# repository root; only what the image needs is staged (and never cdk.out, which would recurse).
_IMAGE_CONTEXT_INCLUDE = (
    "requirements.lock",
    "a2akit",
    "handlers",
    "grpc_service",
)
_IMAGE_EXCLUDE = [
    "*",
    *(f"!{name}" for name in _IMAGE_CONTEXT_INCLUDE),
    "**/__pycache__",
    "**/*.pyc",
]
_DOCKERFILE = "grpc_service/Dockerfile"
# With an agent project the context is staged instead (stage_agent_image): the kit's files,
# the project's lock in place of the kit's, the project's packages in this folder, and the
# kit's Dockerfile with one more COPY after the kit's own.
AGENT_CODE_FOLDER = "agent"
_LAST_KIT_COPY = "COPY grpc_service ./grpc_service\n"
_AGENT_COPY = (f"# The agent project's packages (a2a:agentProject), importable from /app.\n"
               f"COPY {AGENT_CODE_FOLDER} ./\n")


def stage_agent_image(project_root: Path, agent: AgentCode, lock: Path, target: Path) -> Path:
    """Write the image's build context for an agent project into `target` (emptied first):
    what the kit's context holds, with `lock` (the project's a2akit.lock, a superset of the
    kit's) as requirements.lock, and the project's code. Returns `target`."""
    dockerfile = (project_root / _DOCKERFILE).read_text()
    # The Dockerfile is the kit's; the project's line goes after its last COPY of the kit.
    assert dockerfile.count(_LAST_KIT_COPY) == 1, f"{_DOCKERFILE} changed: update {__name__}"
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in _IMAGE_CONTEXT_INCLUDE:
        source = project_root / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=ignore)
    shutil.copyfile(lock, target / "requirements.lock")
    (target / AGENT_CODE_FOLDER).mkdir()
    agent.copy(target / AGENT_CODE_FOLDER)
    (target / _DOCKERFILE).write_text(dockerfile.replace(_LAST_KIT_COPY,
                                                         _LAST_KIT_COPY + _AGENT_COPY))
    return target


def kit_image(project_root: Path, image_context: Path | None = None) -> ecs.ContainerImage:
    """The kit's image: the kit's tree (only what the image needs), or an agent project's
    staged context (`stage_agent_image`). The gRPC container runs its CMD; the long-task
    lane's worker the same image with another command (infra/long_lane.py)."""
    if image_context is not None:
        return ecs.ContainerImage.from_asset(str(image_context), file=_DOCKERFILE,
                                             platform=ecr_assets.Platform.LINUX_ARM64)
    return ecs.ContainerImage.from_asset(
        str(project_root),
        file=_DOCKERFILE,
        platform=ecr_assets.Platform.LINUX_ARM64,
        exclude=_IMAGE_EXCLUDE,
        ignore_mode=IgnoreMode.DOCKER,
    )


class GrpcService(Construct):
    """Exposes `vpc`, `cluster`, `service`, `task_role`, `load_balancer`, `listener` and
    `target_group` so the stack can grant, alarm and output; `service_name`, the name its
    logs and metrics report as, and `runs_agents` (False: it enqueues them) for the alarms and
    the dashboard."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        project_root: Path,
        environment: Mapping[str, str],
        runs_agents: bool,
        certificate_arn: str,
        domain_name: str,
        min_tasks: int,
        max_tasks: int,
        nat_gateways: int,
        port: int,
        stream_budget_seconds: float,
        shutdown_grace_seconds: float,
        allowed_cidrs: Sequence[str] = (VPC_CIDR,),
        zone: route53.IHostedZone | None = None,
        image_context: Path | None = None,
        cpu: int = 256,
        memory_mb: int = 512,
    ) -> None:
        super().__init__(scope, construct_id)
        # Its logs' `service` and its metrics' Service dimension: unique to the stack (in the
        # account and region), as the functions' generated names are, so two stacks' containers
        # never mix (AWS::StackName: the name it is deployed under).
        self.service_name = f"{Aws.STACK_NAME}-grpc"
        self.runs_agents = runs_agents
        # Two AZs (the ALB's minimum), a NAT gateway in each by default: the tasks need the
        # internet for the JWT issuer's keys (Cognito's JWKS is on its public endpoint, another
        # issuer anywhere), besides ECR, CloudWatch Logs, SQS and Secrets Manager, which
        # interface endpoints could serve at about 15 USD a month each for two AZs: more
        # than the second NAT gateway, and the first would still be needed.
        self.vpc = ec2.Vpc(
            self, "Vpc", ip_addresses=ec2.IpAddresses.cidr(VPC_CIDR), max_azs=2,
            nat_gateways=nat_gateways,
            # The default security group is left as EC2 makes it: nothing here uses it (the
            # ALB and the tasks have their own). Stripping its rules takes a Node.js custom
            # resource (the recommended flag's default) whose role has the managed
            # AWSLambdaBasicExecutionRole (`*`) and whose log group never expires.
            restrict_default_security_group=False,
        )
        # Kept like the stack's other logs: a month, deleted with the stack (the default
        # group keeps two years and outlives it).
        self.flow_logs = logs.LogGroup(
            self,
            "FlowLogs",
            retention=logs.RetentionDays.ONE_MONTH,
            removal_policy=RemovalPolicy.DESTROY,
        )
        self.vpc.add_flow_log(
            "FlowLog", destination=ec2.FlowLogDestination.to_cloud_watch_logs(self.flow_logs))
        # DynamoDB traffic and the image's layers (ECR keeps them in S3) stay off the NAT
        # gateways and their per-GB charge: gateway endpoints are free.
        self.vpc.add_gateway_endpoint("DynamoDb", service=ec2.GatewayVpcEndpointAwsService.DYNAMODB)
        self.vpc.add_gateway_endpoint("S3", service=ec2.GatewayVpcEndpointAwsService.S3)
        self.cluster = ecs.Cluster(
            self,
            "Cluster",
            vpc=self.vpc,
            container_insights_v2=ecs.ContainerInsights.ENABLED,
        )
        task = ecs.FargateTaskDefinition(
            self,
            "Task",
            cpu=cpu,
            memory_limit_mib=memory_mb,
            runtime_platform=ecs.RuntimePlatform(
                cpu_architecture=ecs.CpuArchitecture.ARM64,
                operating_system_family=ecs.OperatingSystemFamily.LINUX,
            ),
        )
        self.task_role = task.task_role
        self.log_group = logs.LogGroup(
            self,
            "Logs",
            retention=logs.RetentionDays.ONE_MONTH,
            removal_policy=RemovalPolicy.DESTROY,
        )
        task.add_container(
            "Server",
            # The kit's tree (only what the image needs), or an agent project's staged context.
            image=kit_image(project_root, image_context),
            environment={**environment, ENV.SERVICE_NAME: self.service_name},
            port_mappings=[ecs.PortMapping(container_port=port)],
            logging=ecs.LogDriver.aws_logs(stream_prefix="grpc", log_group=self.log_group),
            readonly_root_filesystem=True,
            stop_timeout=Duration.seconds(
                math.ceil(shutdown_grace_seconds) + STOP_TIMEOUT_MARGIN_SECONDS),
        )
        self.service = ecs.FargateService(
            self,
            "Service",
            cluster=self.cluster,
            task_definition=task,
            # No desired count: a deploy keeps the count autoscaling chose instead of resetting
            # it (ECS creates the service with one task; autoscaling raises it to the minimum).
            assign_public_ip=False,
            vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS),
            circuit_breaker=ecs.DeploymentCircuitBreaker(enable=True, rollback=True),
            # Written out: CDK's feature flags dropped it from the template, and a change of
            # DeploymentController can replace a deployed service.
            deployment_controller=ecs.DeploymentController(type=ecs.DeploymentControllerType.ECS),
            min_healthy_percent=100,
        )
        # Fargate spreads a service's tasks over the subnets' AZs; the minimum keeps one in
        # each. Target tracking on CPU adds tasks under load and removes them after it.
        self.scaling = self.service.auto_scale_task_count(min_capacity=min_tasks,
                                                          max_capacity=max_tasks)
        self.scaling.scale_on_cpu_utilization(
            "Cpu", target_utilization_percent=CPU_TARGET_PERCENT,
            scale_out_cooldown=Duration.seconds(60), scale_in_cooldown=Duration.seconds(300))
        self.load_balancer = elbv2.ApplicationLoadBalancer(
            self,
            "LoadBalancer",
            vpc=self.vpc,
            internet_facing=False,
            drop_invalid_header_fields=True,
            idle_timeout=Duration.seconds(
                math.ceil(stream_budget_seconds) + IDLE_TIMEOUT_MARGIN_SECONDS),
        )
        # An ALB forwards gRPC only from an HTTPS listener: there is deliberately no HTTP one.
        self.listener = self.load_balancer.add_listener(
            "Https",
            port=HTTPS_PORT,
            protocol=elbv2.ApplicationProtocol.HTTPS,
            certificates=[elbv2.ListenerCertificate.from_arn(certificate_arn)],
            ssl_policy=elbv2.SslPolicy.RECOMMENDED_TLS,
            open=False,
        )
        # Only the configured networks (a2a:grpcAllowedCidrs; the VPC by default) may connect.
        for cidr in allowed_cidrs:
            peer = ec2.Peer.ipv6(cidr) if ":" in cidr else ec2.Peer.ipv4(cidr)
            self.load_balancer.connections.allow_from(
                peer, ec2.Port.tcp(HTTPS_PORT), f"gRPC clients in {cidr}")
        # The card advertises this name, which the certificate covers (the ALB's own DNS name
        # never can); with a zone, the stack points the name at the ALB.
        self.domain_name = domain_name
        if zone is not None:
            route53.ARecord(self, "Alias", zone=zone, record_name=domain_name,
                            target=route53.RecordTarget.from_alias(
                                targets.LoadBalancerTarget(self.load_balancer)))
        self.target_group = self.listener.add_targets(
            "Grpc",
            port=port,
            protocol=elbv2.ApplicationProtocol.HTTP,
            protocol_version=elbv2.ApplicationProtocolVersion.GRPC,
            targets=[self.service],
            health_check=elbv2.HealthCheck(
                path=GRPC_HEALTH_CHECK_PATH,
                healthy_grpc_codes="0",
                interval=Duration.seconds(15),
            ),
            # A deploy or scale-in drains a task for as long as its streams may still run, so
            # they end at their budget rather than being cut; then SIGTERM (stop_timeout).
            deregistration_delay=Duration.seconds(math.ceil(stream_budget_seconds)),
        )

    @property
    def address(self) -> str:
        """`host:port` as the agent card advertises it: the certificate's name."""
        return f"{self.domain_name}:{HTTPS_PORT}"
