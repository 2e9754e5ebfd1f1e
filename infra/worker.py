"""Queue mode: the task queue and its dead-letter queue, and the worker Lambda that runs
agents from it (the JSON-RPC bundle, another handler: infra/functions.py)."""

from __future__ import annotations

from collections.abc import Mapping

from aws_cdk import Duration
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from .functions import bundle_function
from .queue_timing import QueueTiming

__all__ = ["WORKER_HANDLER", "QueueWorker"]

WORKER_HANDLER = "handlers.worker.handler"


class QueueWorker(Construct):
    """Exposes `queue`, `dead_letter_queue` and `function` (the worker), so the stack can
    grant, wire and alarm."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        code_dir: str,
        environment: Mapping[str, str],
        timing: QueueTiming,
        max_concurrency: int,
        memory_mb: int = 512,
    ) -> None:
        super().__init__(scope, construct_id)
        self.timing = timing
        self.dead_letter_queue = sqs.Queue(
            self,
            "DeadLetters",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=Duration.days(14),
        )
        self.queue = sqs.Queue(
            self,
            "Queue",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            visibility_timeout=Duration.seconds(timing.visibility_timeout_seconds),
            dead_letter_queue=sqs.DeadLetterQueue(
                max_receive_count=timing.max_receives, queue=self.dead_letter_queue
            ),
        )
        self.function = bundle_function(
            self,
            "Function",
            handler=WORKER_HANDLER,
            code_dir=code_dir,
            timeout=Duration.seconds(timing.worker_timeout_seconds),
            environment=environment,
            memory_mb=memory_mb,
        )
        # One record per invocation: its whole remaining time is that task's budget. Failed
        # records are retried alone (partial batch responses). At most `max_concurrency`
        # workers at once: a flood of tasks waits in the queue instead of taking the account's
        # concurrency.
        self.function.add_event_source(
            sources.SqsEventSource(self.queue, batch_size=1, report_batch_item_failures=True,
                                   max_concurrency=max_concurrency)
        )
