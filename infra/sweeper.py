"""The lease sweeper: a Lambda on an EventBridge schedule that ends FAILED every task whose
runner's lease expired (a2akit.execution.leases). Deployed in every mode: an inline front door's
process can freeze or die as well as a worker's.

The schedule invokes it asynchronously. A sweep is never retried (the next one comes a minute
later, and one that waited longer than that is dropped); a sweep that failed, or that
EventBridge could not deliver, leaves a record in `failed` (its own queue, which alarms)."""

from __future__ import annotations

from collections.abc import Mapping

import jsii
from aws_cdk import Duration
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from .functions import bundle_function

__all__ = ["SWEEPER_HANDLER", "SWEEP_MINUTES", "LeaseSweeper"]

SWEEPER_HANDLER = "handlers.sweeper.handler"
SWEEP_MINUTES = 1  # EventBridge's shortest rate


@jsii.implements(lambda_.IDestination)
class _SendOnlyDestination:
    """An SQS destination of asynchronous invocations that grants `sqs:SendMessage` and
    nothing else (`SqsDestination` also grants GetQueueAttributes and GetQueueUrl, which
    Lambda does not use)."""

    def __init__(self, queue: sqs.IQueue) -> None:
        self._queue = queue

    def bind(self, _scope: Construct, fn: lambda_.IFunction, *,
             type: lambda_.DestinationType) -> lambda_.DestinationConfig:
        fn.add_to_role_policy(
            iam.PolicyStatement(actions=["sqs:SendMessage"], resources=[self._queue.queue_arn])
        )
        return lambda_.DestinationConfig(destination=self._queue.queue_arn)


class LeaseSweeper(Construct):
    """Exposes `function`, `schedule` and `failed` (the queue of failed sweeps)."""

    def __init__(
        self, scope: Construct, construct_id: str, *, code_dir: str, environment: Mapping[str, str]
    ) -> None:
        super().__init__(scope, construct_id)
        self.function = bundle_function(
            self,
            "Function",
            handler=SWEEPER_HANDLER,
            code_dir=code_dir,
            timeout=Duration.seconds(60),
            environment=environment,
            memory_mb=256,
        )
        # Lambda's records of failed sweeps (the request and the error) and EventBridge's of
        # sweeps it could not deliver; only people read them, after the alarm.
        self.failed = sqs.Queue(
            self,
            "Failed",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=Duration.days(14),
        )
        # A missed sweep is made up by the next one a minute later: no retry, and a sweep
        # that waited a whole interval (throttled) is superseded, not run late.
        self.function.configure_async_invoke(
            retry_attempts=0,
            max_event_age=Duration.minutes(SWEEP_MINUTES),
            on_failure=_SendOnlyDestination(self.failed),
        )
        self.schedule = events.Rule(
            self,
            "Schedule",
            description="Ends FAILED the tasks whose runner's lease expired",
            schedule=events.Schedule.rate(Duration.minutes(SWEEP_MINUTES)),
            targets=[targets.LambdaFunction(self.function, retry_attempts=0,
                                            dead_letter_queue=self.failed)],
        )
