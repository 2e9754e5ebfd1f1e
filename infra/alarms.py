"""Alarms on the signals that mean callers are failing: errors, throttles, unhealthy targets."""

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
        if target_group is not None:
            self._add(
                "UnhealthyTargets",
                target_group.metrics.unhealthy_host_count(period=_PERIOD, statistic="Maximum"),
                "gRPC targets failing their health check",
            )

    def _add(self, construct_id: str, metric: cloudwatch.IMetric, description: str) -> None:
        alarm = cloudwatch.Alarm(
            self,
            construct_id,
            metric=metric,
            threshold=1,
            evaluation_periods=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description=description,
        )
        alarm.add_alarm_action(cw_actions.SnsAction(self.topic))
        self.alarms.append(alarm)
