"""Push notification delivery (`a2a:push`): the dispatcher Lambda fed by the table's stream,
its dead-letter queue, and the queue for stream batches it could not process.

On AWS only this function delivers (`A2A_PUSH_DELIVERY=stream` everywhere): the front door
and the worker are Lambdas that freeze once they answer, so they cannot deliver in the
background. The dispatcher reads each event INSERT from the stream (`infra/push_filter.py`),
looks up the task's push configs in the table and POSTs the event to each webhook, with
retries inside the invocation; a delivery that still fails goes to `dead_letter_queue` as a
JSON record, and is counted in the `A2AKit/PushDeliveryFailed` metric (Embedded Metric
Format in its log).
"""

from __future__ import annotations

from collections.abc import Mapping

import jsii
from aws_cdk import Duration, Names
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from a2akit.settings import ENV

from .functions import bundle_function
from .push_filter import PUSH_FILTER_PATTERN

__all__ = [
    "DISPATCHER_TIMEOUT_SECONDS",
    "ITERATOR_AGE_ALARM_SECONDS",
    "PUSH_HANDLER",
    "READ_ACTIONS",
    "PushDispatcher",
]

PUSH_HANDLER = "handlers.push.handler"
# Retries of a slow webhook happen inside the invocation (A2A_PUSH_ATTEMPTS x
# A2A_PUSH_TIMEOUT_SECONDS plus backoff: 65 s for one event and config with the defaults). A
# batch can hold more than that: what the dispatcher cannot finish in time it reports as
# batch item failures, and the mapping retries from there.
DISPATCHER_TIMEOUT_SECONDS = 300
# Records that reach the dispatcher this long after they were written: the stream is stuck
# (a batch failing again and again) or far behind.
ITERATOR_AGE_ALARM_SECONDS = 60
# The dispatcher only reads the store: a task's configs (Query on its partition key), one
# config (GetItem) and, for a config a 0.3 caller created, the task (GetItem; the parts of a
# large one by Query). No writes: delivery state lives in the invocation, failures in the
# queue.
READ_ACTIONS = ("dynamodb:GetItem", "dynamodb:Query")

# The stream mapping. Records of one partition key (one task) are processed in order even
# with a parallelization factor above 1, so a task's notifications keep their order while one
# slow webhook holds up only its own tasks' records, not the whole shard.
_BATCH_SIZE = 100
_BATCHING_WINDOW = Duration.seconds(1)  # the most a notification waits to be batched
_PARALLELIZATION_FACTOR = 10  # Lambda's maximum per shard
_RETRY_ATTEMPTS = 5
_MAX_RECORD_AGE = Duration.hours(1)


@jsii.implements(lambda_.IEventSourceDlq)
class _SendOnlyDestination:
    """An SQS on-failure destination that grants `sqs:SendMessage` and nothing else
    (`SqsDlq` also grants GetQueueAttributes and GetQueueUrl, which Lambda does not use)."""

    def __init__(self, queue: sqs.IQueue) -> None:
        self._queue = queue

    def bind(self, _target: lambda_.IEventSourceMapping,
             target_handler: lambda_.IFunction) -> lambda_.DlqDestinationConfig:
        target_handler.add_to_role_policy(
            iam.PolicyStatement(actions=["sqs:SendMessage"], resources=[self._queue.queue_arn])
        )
        return lambda_.DlqDestinationConfig(destination=self._queue.queue_arn)


def _queue(scope: Construct, construct_id: str) -> sqs.Queue:
    return sqs.Queue(
        scope,
        construct_id,
        encryption=sqs.QueueEncryption.SQS_MANAGED,
        enforce_ssl=True,
        retention_period=Duration.days(14),
    )


class PushDispatcher(Construct):
    """Exposes `function`, `dead_letter_queue` (failed deliveries, the dispatcher's own
    records) and `failed_batches` (Lambda's records of stream batches the dispatcher could
    not process), so the stack can alarm and output."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        code_dir: str,
        table: dynamodb.ITable,
        environment: Mapping[str, str],
        memory_mb: int = 512,
    ) -> None:
        super().__init__(scope, construct_id)
        # A2A_PUSH_DLQ_URL: one JSON record per delivery that failed after all its attempts.
        self.dead_letter_queue = _queue(self, "DeadLetters")
        # The mapping's on-failure destination: after its retries, Lambda sends a record of
        # the batch (shard, sequence numbers; not the events, which stay in the table).
        self.failed_batches = _queue(self, "FailedBatches")
        # Not in a VPC: webhooks are on the internet. The kit's SSRF guard keeps deliveries
        # off private, loopback, link-local and other non-global addresses
        # (A2A_PUSH_ALLOW_HTTP and A2A_PUSH_ALLOW_CIDRS stay unset here), so the function
        # cannot be aimed at internal endpoints; nor is it in a network that has any.
        self.function = bundle_function(
            self,
            "Function",
            handler=PUSH_HANDLER,
            code_dir=code_dir,
            timeout=Duration.seconds(DISPATCHER_TIMEOUT_SECONDS),
            environment=environment,
            memory_mb=memory_mb,
        )
        self.function.add_environment(ENV.PUSH_DLQ_URL, self.dead_letter_queue.queue_url)
        # Reads only: Query and GetItem on the table itself, no index.
        self.function.add_to_role_policy(
            iam.PolicyStatement(actions=list(READ_ACTIONS), resources=[table.table_arn])
        )
        self.dead_letter_queue.grant(self.function, "sqs:SendMessage")
        # The mapping, held here (the stack makes the event writers depend on it). Its id is
        # the one DynamoEventSource gave it, so its logical id stays that of deployed stacks.
        assert table.table_stream_arn is not None  # infra/table.py turns the stream on
        self.mapping = self.function.add_event_source_mapping(
            f"DynamoDBEventSource:{Names.node_unique_id(table.node)}",
            event_source_arn=table.table_stream_arn,
            # LATEST: a new or replaced mapping delivers from now on. TRIM_HORIZON would
            # resend up to 24 hours of old notifications whenever the mapping is recreated;
            # the stack keeps the push settings away from the front doors until the mapping
            # exists (infra/stack.py), so no event of a push-enabled task comes before it.
            starting_position=lambda_.StartingPosition.LATEST,
            batch_size=_BATCH_SIZE,
            max_batching_window=_BATCHING_WINDOW,
            filters=[lambda_.FilterCriteria.filter(PUSH_FILTER_PATTERN)],
            report_batch_item_failures=True,
            bisect_batch_on_error=True,
            retry_attempts=_RETRY_ATTEMPTS,
            max_record_age=_MAX_RECORD_AGE,
            parallelization_factor=_PARALLELIZATION_FACTOR,
            on_failure=_SendOnlyDestination(self.failed_batches),
        )
        # Reading the stream: DescribeStream, GetRecords, GetShardIterator on it; ListStreams,
        # which has no resource.
        table.grant_stream_read(self.function)
