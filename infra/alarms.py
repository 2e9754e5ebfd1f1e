"""Alarms on the signals that mean callers are failing: errors, throttles, unhealthy targets,
and (with push) failed deliveries and a stuck stream."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cw_actions
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_elasticloadbalancingv2 as elbv2
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from a2akit.push.metric import DIMENSION, FAILED_METRIC, METRIC_NAMESPACE

from .push import ITERATOR_AGE_ALARM_SECONDS, PushDispatcher

__all__ = ["Alarms"]

_PERIOD = Duration.minutes(5)


class Alarms(Construct):
    """Every alarm notifies `topic`; `alarms` lists them for tests and dashboards."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        function: lambda_.IFunction,
        table: dynamodb.Table,
        target_group: elbv2.ApplicationTargetGroup | None,
        email: str | None,
        worker: lambda_.IFunction | None = None,
        dead_letter_queue: sqs.IQueue | None = None,
        push: PushDispatcher | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        self.topic = sns.Topic(self, "Topic", enforce_ssl=True)
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
        if worker is not None:
            self._add("WorkerErrors", worker.metric_errors(period=_PERIOD), "Queue worker errors")
        if dead_letter_queue is not None:
            # Each message here is a task the workers gave up on (it ended FAILED).
            self._add(
                "DeadLetters",
                dead_letter_queue.metric_approximate_number_of_messages_visible(
                    period=_PERIOD, statistic="Maximum"
                ),
                "Queue messages in the dead-letter queue",
            )
        if push is not None:
            self._add_push(push)
        if target_group is not None:
            self._add(
                "UnhealthyTargets",
                target_group.metrics.unhealthy_host_count(period=_PERIOD, statistic="Maximum"),
                "gRPC targets failing their health check",
            )

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
             threshold: float = 1) -> None:
        alarm = cloudwatch.Alarm(
            self,
            construct_id,
            metric=metric,
            threshold=threshold,
            evaluation_periods=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description=description,
        )
        alarm.add_alarm_action(cw_actions.SnsAction(self.topic))
        self.alarms.append(alarm)
