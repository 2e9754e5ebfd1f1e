"""The long-task lane (`a2a:longTasks`): its queue and dead-letter queue, and a queue worker
on ECS Fargate with no time limit (`python -m handlers.long_worker`, the gRPC image with
another command) that runs zero tasks while its queue is empty.

- Scaling: step scaling on the queue's visible messages (jobs no worker took yet: a worker
  deletes a message once its run holds the task's lease), from 0 to `max_tasks`. Any waiting
  job adds tasks; an empty queue sets the count back to 0, and ECS stops only the tasks no
  agent runs in: the worker protects its own task from scale-in while an agent runs
  (`ecs:UpdateTaskProtection`, granted on this cluster's tasks only).
- Network (`a2a:longTasksNetwork`): `public` (the default) puts the tasks in public subnets
  with a public IP and a security group with no inbound rule (egress to the model APIs and the
  JWKS, no NAT gateway); `nat` puts them in private subnets behind NAT gateways (the gRPC
  side's VPC when it is on, else one of the lane's own).
- `a2a:longTasksSpot`: Fargate Spot. A reclaimed task gets SIGTERM two minutes ahead, which
  task protection does not hold off: its agents get the shutdown grace, then end FAILED,
  as at a deploy.
- Stopping: ECS's stop timeout (`a2a:longTasksStopTimeout`, at most 120 s) is the worker's
  shutdown grace plus a margin for the FAILED writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from aws_cdk import Aws, Duration, RemovalPolicy
from aws_cdk import aws_applicationautoscaling as scaling
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_ecs as ecs
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from a2akit.execution.lane import POLL_SECONDS
from a2akit.settings import ENV

from .grpc_service import STOP_TIMEOUT_MARGIN_SECONDS, VPC_CIDR, kit_image

__all__ = ["COMMAND", "LANE_QUEUE_ACTIONS", "NETWORKS", "VISIBILITY_TIMEOUT_SECONDS",
           "LongLane"]

COMMAND = ["python", "-m", "handlers.long_worker"]
NETWORKS = ("public", "nat")
# What the worker does with its queue (a2akit/execution/lane.py): the queue's ARN at start,
# receives, deletes once a run holds its lease, gives back unstarted jobs. The Lambda
# worker's event source may do the same (and GetQueueUrl, which the lane never calls).
LANE_QUEUE_ACTIONS = ("sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility",
                      "sqs:GetQueueAttributes")
# A message is invisible only between its receive and its run's start (a worker that dies
# in between: it comes back after this); a stopping worker gives back at once what it has
# not started.
VISIBILITY_TIMEOUT_SECONDS = 300
# Visible messages -> tasks to add: one per waiting job up to 5, then faster.
_SCALE_OUT_STEPS = ((1, 1), (5, 3), (20, 10))


class LongLane(Construct):
    """Exposes `queue`, `dead_letter_queue`, `cluster`, `service`, `task_role` and
    `service_name` for the stack's grants, alarms and outputs."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        project_root: Path,
        environment: Mapping[str, str],
        max_receives: int,
        max_tasks: int,
        network: str,
        spot: bool,
        stop_timeout_seconds: int,
        nat_vpc: ec2.IVpc | None = None,
        nat_gateways: int = 2,
        image_context: Path | None = None,
        cpu: int = 256,
        memory_mb: int = 512,
    ) -> None:
        super().__init__(scope, construct_id)
        assert network in NETWORKS
        self.service_name = f"{Aws.STACK_NAME}-long"
        self.dead_letter_queue = sqs.Queue(
            self, "DeadLetters", encryption=sqs.QueueEncryption.SQS_MANAGED, enforce_ssl=True,
            retention_period=Duration.days(14))
        self.queue = sqs.Queue(
            self, "Queue", encryption=sqs.QueueEncryption.SQS_MANAGED, enforce_ssl=True,
            visibility_timeout=Duration.seconds(VISIBILITY_TIMEOUT_SECONDS),
            dead_letter_queue=sqs.DeadLetterQueue(max_receive_count=max_receives,
                                                  queue=self.dead_letter_queue))
        public = network == "public"
        self.vpc = nat_vpc if (nat_vpc is not None and not public) else self._vpc(
            public, nat_gateways)
        self.cluster = ecs.Cluster(self, "Cluster", vpc=self.vpc,
                                   container_insights_v2=ecs.ContainerInsights.ENABLED,
                                   enable_fargate_capacity_providers=spot)
        task = ecs.FargateTaskDefinition(
            self, "Task", cpu=cpu, memory_limit_mib=memory_mb,
            runtime_platform=ecs.RuntimePlatform(
                cpu_architecture=ecs.CpuArchitecture.ARM64,
                operating_system_family=ecs.OperatingSystemFamily.LINUX))
        self.task_role = task.task_role
        self.log_group = logs.LogGroup(self, "Logs", retention=logs.RetentionDays.ONE_MONTH,
                                       removal_policy=RemovalPolicy.DESTROY)
        grace = stop_timeout_seconds - STOP_TIMEOUT_MARGIN_SECONDS
        task.add_container(
            "Worker",
            image=kit_image(project_root, image_context),
            command=COMMAND,
            environment={**environment, ENV.LONG_QUEUE_URL: self.queue.queue_url,
                         ENV.LONG_SHUTDOWN_GRACE_SECONDS: str(grace),
                         ENV.SERVICE_NAME: self.service_name},
            logging=ecs.LogDriver.aws_logs(stream_prefix="long", log_group=self.log_group),
            readonly_root_filesystem=True,
            stop_timeout=Duration.seconds(stop_timeout_seconds),
        )
        self.security_group = ec2.SecurityGroup(
            self, "Tasks", vpc=self.vpc, allow_all_outbound=True,
            description="The long-task lane workers: egress only, no inbound rule")
        self.service = ecs.FargateService(
            self, "Service", cluster=self.cluster, task_definition=task,
            # Zero tasks until a job waits; scaling sets the count from then on.
            desired_count=0,
            assign_public_ip=public,
            security_groups=[self.security_group],
            vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PUBLIC if public
                                            else ec2.SubnetType.PRIVATE_WITH_EGRESS),
            capacity_provider_strategies=[ecs.CapacityProviderStrategy(
                capacity_provider="FARGATE_SPOT", weight=1)] if spot else None,
            circuit_breaker=ecs.DeploymentCircuitBreaker(enable=True, rollback=True),
            deployment_controller=ecs.DeploymentController(type=ecs.DeploymentControllerType.ECS),
            min_healthy_percent=0, max_healthy_percent=200,
        )
        # The worker protects its own task while an agent runs: this cluster's tasks only.
        self.task_role.add_to_principal_policy(iam.PolicyStatement(
            actions=["ecs:UpdateTaskProtection"],
            resources=[f"arn:{Aws.PARTITION}:ecs:{Aws.REGION}:{Aws.ACCOUNT_ID}:task/"
                       f"{self.cluster.cluster_name}/*"]))
        self.task_role.add_to_principal_policy(iam.PolicyStatement(
            actions=list(LANE_QUEUE_ACTIONS), resources=[self.queue.queue_arn]))
        self.scaling = self.service.auto_scale_task_count(min_capacity=0,
                                                          max_capacity=max_tasks)
        # Any waiting job adds tasks within the next minute's evaluation; an empty queue sets
        # the count back to 0, and ECS stops only the unprotected (idle) tasks.
        self.scaling.scale_on_metric(
            "QueueDepth",
            metric=self.queue.metric_approximate_number_of_messages_visible(
                period=Duration.minutes(1), statistic="Maximum"),
            scaling_steps=[
                scaling.ScalingInterval(upper=0, change=-max_tasks),
                *(scaling.ScalingInterval(lower=lower, change=change)
                  for lower, change in _SCALE_OUT_STEPS),
            ],
            adjustment_type=scaling.AdjustmentType.CHANGE_IN_CAPACITY,
            cooldown=Duration.seconds(60),
            evaluation_periods=1,
        )
        assert stop_timeout_seconds - STOP_TIMEOUT_MARGIN_SECONDS > 0
        assert stop_timeout_seconds >= POLL_SECONDS + STOP_TIMEOUT_MARGIN_SECONDS

    def _vpc(self, public: bool, nat_gateways: int) -> ec2.Vpc:
        """The lane's own VPC: public subnets only (no NAT gateway), or private ones behind
        NAT gateways; DynamoDB and S3 (the image's layers) through free gateway endpoints."""
        subnets = [ec2.SubnetConfiguration(name="Public", subnet_type=ec2.SubnetType.PUBLIC)]
        if not public:
            subnets.append(ec2.SubnetConfiguration(
                name="Private", subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS))
        vpc = ec2.Vpc(self, "Vpc", ip_addresses=ec2.IpAddresses.cidr(VPC_CIDR), max_azs=2,
                      nat_gateways=0 if public else nat_gateways,
                      subnet_configuration=subnets, restrict_default_security_group=False)
        flow_logs = logs.LogGroup(self, "FlowLogs", retention=logs.RetentionDays.ONE_MONTH,
                                  removal_policy=RemovalPolicy.DESTROY)
        vpc.add_flow_log("FlowLog",
                         destination=ec2.FlowLogDestination.to_cloud_watch_logs(flow_logs))
        vpc.add_gateway_endpoint("DynamoDb", service=ec2.GatewayVpcEndpointAwsService.DYNAMODB)
        vpc.add_gateway_endpoint("S3", service=ec2.GatewayVpcEndpointAwsService.S3)
        return vpc
