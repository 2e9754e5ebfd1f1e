"""Alarms on the signals that mean callers are failing or about to: errors and latency at the
door, throttles, tasks waiting on the queue or running into the worker's timeout, a failing
sweeper, unhealthy or saturated gRPC tasks, and (with push) failed deliveries and a stuck
stream; from the kit's own metrics (infra/kit_metrics.py) of each function and the gRPC
container, the share of tasks that failed, lease expiries and the store's throttled calls."""

from __future__ import annotations

from aws_cdk import Duration, Stack
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cw_actions
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from a2akit import metrics
from a2akit.push.metric import DIMENSION, FAILED_METRIC, METRIC_NAMESPACE

from .grpc_service import GrpcService
from .kit_metrics import failed_rate, kit_metric, total
from .long_lane import LongLane
from .push import ITERATOR_AGE_ALARM_SECONDS, PushDispatcher
from .worker import QueueWorker

__all__ = ["DOOR_LATENCY_ALARM_FRACTION", "ECS_UTILIZATION_ALARM_PERCENT",
           "FAILED_TASK_RATE_ALARM_PERCENT", "LONG_QUEUE_AGE_ALARM_SECONDS",
           "QUEUE_AGE_ALARM_SECONDS",
           "WORKER_DURATION_ALARM_FRACTION", "Alarms"]

_PERIOD = Duration.minutes(5)
# A task that waited this long for a worker: the workers' concurrency (a2a:workerMaxConcurrency)
# is too low for the load, or the worker keeps failing.
QUEUE_AGE_ALARM_SECONDS = 300
# A long task that waited this long: the lane starts a task within a couple of minutes (a
# cold queue's metrics can lag up to 15), so this is the lane at its most tasks, or failing.
LONG_QUEUE_AGE_ALARM_SECONDS = 1200
# A worker invocation that ran this share of its timeout: agents near the point where the
# invocation is cut off (the task then ends FAILED on a later receive).
WORKER_DURATION_ALARM_FRACTION = 0.9
# The door's p90 latency at this share of the stream budget: most requests run nearly as
# long as a stream may, which callers notice before any request times out (at the budget
# itself the alarm would only ever see timeouts).
DOOR_LATENCY_ALARM_FRACTION = 0.75
# Fargate tasks this busy for 15 minutes: autoscaling is at its maximum or too slow.
ECS_UTILIZATION_ALARM_PERCENT = 80
_ECS_PERIODS = 3
# A function whose ended tasks were this share FAILED over a period (the agent or what it
# calls is failing; one failed task out of one counts too).
FAILED_TASK_RATE_ALARM_PERCENT = 10


class Alarms(Construct):
    """Every alarm notifies `topic`; `alarms` lists them for tests and dashboards."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        function: lambda_.IFunction,
        rest_api: apigw.RestApiBase,
        stream_budget_seconds: float,
        sweeper: lambda_.IFunction,
        failed_sweeps: sqs.IQueue,
        table: dynamodb.Table,
        email: str | None,
        worker: QueueWorker | None = None,
        grpc: GrpcService | None = None,
        push: PushDispatcher | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        self.topic = sns.Topic(self, "Topic", enforce_ssl=True)
        # enforce_ssl writes a topic policy, and a topic policy replaces SNS's default one:
        # without this Allow, CloudWatch may not publish and no alarm ever notifies anyone.
        self.topic.add_to_resource_policy(iam.PolicyStatement(
            principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
            actions=["sns:Publish"],
            resources=[self.topic.topic_arn],
            conditions={"StringEquals": {"aws:SourceAccount": Stack.of(self).account}},
        ))
        if email:
            self.topic.add_subscription(subscriptions.EmailSubscription(email))
        self.alarms: list[cloudwatch.Alarm] = []

        self._add("LambdaErrors", function.metric_errors(period=_PERIOD), "JSON-RPC Lambda errors")
        self._add(
            "LambdaThrottles",
            function.metric_throttles(period=_PERIOD),
            "JSON-RPC Lambda throttled",
        )
        # Table-wide: the sum over every operation, so one alarm covers reads, writes, queries.
        self._add(
            "TableThrottles",
            cloudwatch.MathExpression(
                expression="read + write",
                using_metrics={
                    "read": table.metric("ReadThrottleEvents", period=_PERIOD, statistic="Sum"),
                    "write": table.metric("WriteThrottleEvents", period=_PERIOD, statistic="Sum"),
                },
                period=_PERIOD,
            ),
            "DynamoDB requests throttled",
        )
        # The door itself: the kit answers every request with the spec's errors, so a 5xx is
        # the function failing, timing out or throttled behind API Gateway.
        self._add("Door5xx", rest_api.metric_server_error(period=_PERIOD, statistic="Sum"),
                  "The public door answered 5xx")
        # Streams and blocking calls last up to their budget by design: most requests
        # running nearly that long means the agent or the store is slow.
        latency_seconds = DOOR_LATENCY_ALARM_FRACTION * stream_budget_seconds
        self._add(
            "DoorLatency",
            rest_api.metric_latency(period=_PERIOD, statistic="p90"),
            f"p90 latency at the door reached {latency_seconds:g} s "
            f"({DOOR_LATENCY_ALARM_FRACTION:.0%} of the stream budget)",
            threshold=latency_seconds * 1000,
        )
        self._add("SweeperErrors", sweeper.metric_errors(period=_PERIOD),
                  "Lease sweeper errors (expired tasks are not being ended)")
        # Each message is a sweep that failed or was never delivered (Lambda's or
        # EventBridge's record): seen even when the errors above have aged out.
        self._add(
            "FailedSweeps",
            failed_sweeps.metric_approximate_number_of_messages_visible(period=_PERIOD,
                                                                        statistic="Maximum"),
            "Failed or undelivered sweeps in the sweeper's queue",
        )
        if worker is not None:
            self._add_worker(worker)
        if push is not None:
            self._add_push(push)
        if grpc is not None:
            self._add_grpc(grpc)
        self._add_kit(function, sweeper, worker, grpc, push)

    def _add_kit(self, door: lambda_.IFunction, sweeper: lambda_.IFunction,
                 worker: QueueWorker | None, grpc: GrpcService | None,
                 push: PushDispatcher | None) -> None:
        """The kit's metrics of each process (Service = the function's name; the container's
        is the stack's, GrpcService.service_name)."""
        runners = {"door": door.function_name,
                   **({"worker": worker.function.function_name} if worker else {}),
                   **({"grpc": grpc.service_name} if grpc and grpc.runs_agents else {})}
        # The processes that end tasks as they run them; the sweeper ends them FAILED only,
        # when their lease expired: that is LeaseExpired below.
        for name, service in runners.items():
            self._add(f"FailedTasks{name.title()}", failed_rate(service, _PERIOD, name),
                      f"{FAILED_TASK_RATE_ALARM_PERCENT} % or more of the tasks the {name} "
                      "ended failed", threshold=FAILED_TASK_RATE_ALARM_PERCENT)
        # A runner that stopped renewing its lease: ended by the sweeper or by a reader (the
        # container sweeps in process and reads, whether or not it runs agents).
        settlers = {**runners, "sweeper": sweeper.function_name,
                    **({"grpc": grpc.service_name} if grpc else {})}
        self._add("LeaseExpired", total(metrics.LEASE_EXPIRED, settlers, _PERIOD),
                  "Tasks failed because their runner's lease expired")
        # Throttled store calls the client's retries did not get through (callers saw
        # UNAVAILABLE): the Service-only rollup counts every operation.
        users = {**settlers, **({"push": push.function.function_name} if push else {})}
        for name, service in users.items():
            self._add(f"StoreThrottles{name.title()}",
                      kit_metric(metrics.THROTTLES, service, _PERIOD),
                      f"DynamoDB calls of the {name} throttled past their retries")

    def _add_worker(self, worker: QueueWorker) -> None:
        function = worker.function
        self._add("WorkerErrors", function.metric_errors(period=_PERIOD), "Queue worker errors")
        self._add("WorkerThrottles", function.metric_throttles(period=_PERIOD),
                  "Queue worker throttled (the account's concurrency is exhausted)")
        timeout_ms = worker.timing.worker_timeout_seconds * 1000
        self._add(
            "WorkerDuration",
            function.metric_duration(period=_PERIOD, statistic="Maximum"),
            f"A worker invocation ran {WORKER_DURATION_ALARM_FRACTION:.0%} of its timeout",
            threshold=WORKER_DURATION_ALARM_FRACTION * timeout_ms,
        )
        self._add(
            "QueueAge",
            worker.queue.metric_approximate_age_of_oldest_message(period=_PERIOD,
                                                                  statistic="Maximum"),
            f"A queued task waited {QUEUE_AGE_ALARM_SECONDS} s for a worker",
            threshold=QUEUE_AGE_ALARM_SECONDS,
        )
        # Each message here is a task the workers gave up on (it ended FAILED).
        self._add(
            "DeadLetters",
            worker.dead_letter_queue.metric_approximate_number_of_messages_visible(
                period=_PERIOD, statistic="Maximum"
            ),
            "Queue messages in the dead-letter queue",
        )

    def add_long_lane(self, lane: LongLane) -> None:
        """The long-task lane: jobs waiting too long (the lane at its most tasks, or its
        tasks failing to start), and jobs it gave up on."""
        self._add(
            "LongQueueAge",
            lane.queue.metric_approximate_age_of_oldest_message(period=_PERIOD,
                                                                statistic="Maximum"),
            f"A long task waited {LONG_QUEUE_AGE_ALARM_SECONDS} s for the long lane",
            threshold=LONG_QUEUE_AGE_ALARM_SECONDS,
        )
        self._add(
            "LongDeadLetters",
            lane.dead_letter_queue.metric_approximate_number_of_messages_visible(
                period=_PERIOD, statistic="Maximum"),
            "Long-lane queue messages in its dead-letter queue",
        )
        for name, metric in (("Cpu", lane.service.metric_cpu_utilization(period=_PERIOD)),
                             ("Memory", lane.service.metric_memory_utilization(period=_PERIOD))):
            self._add(f"Long{name}", metric,
                      f"Long-lane tasks' {name.lower()} above {ECS_UTILIZATION_ALARM_PERCENT} % "
                      f"for {_ECS_PERIODS * 5} minutes",
                      threshold=ECS_UTILIZATION_ALARM_PERCENT, periods=_ECS_PERIODS)

    def _add_grpc(self, grpc: GrpcService) -> None:
        self._add(
            "UnhealthyTargets",
            grpc.target_group.metrics.unhealthy_host_count(period=_PERIOD, statistic="Maximum"),
            "gRPC targets failing their health check",
        )
        service = grpc.service
        for name, metric in (("Cpu", service.metric_cpu_utilization(period=_PERIOD)),
                             ("Memory", service.metric_memory_utilization(period=_PERIOD))):
            self._add(f"Grpc{name}", metric,
                      f"gRPC tasks' {name.lower()} above {ECS_UTILIZATION_ALARM_PERCENT} % for "
                      f"{_ECS_PERIODS * 5} minutes",
                      threshold=ECS_UTILIZATION_ALARM_PERCENT, periods=_ECS_PERIODS)

    def _add_push(self, push: PushDispatcher) -> None:
        self._add("PushDispatcherErrors", push.function.metric_errors(period=_PERIOD),
                  "Push dispatcher errors (its stream batches are retried)")
        # Each message is a delivery that failed after all its attempts.
        self._add(
            "PushDeadLetters",
            push.dead_letter_queue.metric_approximate_number_of_messages_visible(
                period=_PERIOD, statistic="Maximum"
            ),
            "Push notifications in the dead-letter queue",
        )
        # The same failures as they happen, from the dispatcher's Embedded Metric Format log
        # lines (dimension: this stack's dispatcher): seen even when someone drains the queue.
        self._add(
            "PushDeliveryFailed",
            cloudwatch.Metric(namespace=METRIC_NAMESPACE, metric_name=FAILED_METRIC,
                              dimensions_map={DIMENSION: push.function.function_name},
                              statistic="Sum", period=_PERIOD),
            "Push deliveries that failed after all their attempts",
        )
        # Each message is a stream batch the dispatcher could not process (store or
        # dead-letter queue unreachable): its notifications were not sent.
        self._add(
            "PushFailedBatches",
            push.failed_batches.metric_approximate_number_of_messages_visible(
                period=_PERIOD, statistic="Maximum"
            ),
            "Stream batches the push dispatcher gave up on",
        )
        # How long after its write the last record of a batch reached the dispatcher (ms): a
        # stuck or lagging stream.
        self._add(
            "PushIteratorAge",
            push.function.metric("IteratorAge", period=_PERIOD, statistic="Maximum"),
            f"Push notifications more than {ITERATOR_AGE_ALARM_SECONDS} s behind the table",
            threshold=ITERATOR_AGE_ALARM_SECONDS * 1000,
        )

    def _add(self, construct_id: str, metric: cloudwatch.IMetric, description: str, *,
             threshold: float = 1, periods: int = 1) -> None:
        alarm = cloudwatch.Alarm(
            self,
            construct_id,
            metric=metric,
            threshold=threshold,
            evaluation_periods=periods,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description=description,
        )
        alarm.add_alarm_action(cw_actions.SnsAction(self.topic))
        self.alarms.append(alarm)
