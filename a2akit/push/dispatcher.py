"""The dispatcher: sends one stored event to every push config its task has, whoever feeds it
(the writing process in `a2akit.push.inline`, the table's stream in `handlers.push`).

One POST per event per config (the sender retries); events of one task are dispatched in
order by the feeders. The body is in the shape of the protocol generation that created the
config (`PushTarget.protocol_version`): the event's 1.0 StreamResponse, or for a config a 0.3
caller created the task's current 0.3 JSON (a bare Task, `kind: "task"`: 0.3 spec 9.5),
written by the `task_body03` the composition gives (a2akit.runtime: a2akit.compat03, imported
on the first such delivery). Configs are read when the event
is sent, and again before each retry, so a deleted config gets nothing more; they live
under the task's owner, so nobody else's webhooks are ever called. A delivery that fails for
good is reported once, as a JSON line that is both the operator's log record and a
CloudWatch metric (Embedded Metric Format, `A2AKit/PushDeliveryFailed`: no PutMetricData
call), and is put on the dead-letter queue.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import sys
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from a2akit import logs, metrics, protojson, trace
from a2akit.generated import a2a_pb2 as pb
from a2akit.push.metric import failure_line
from a2akit.push.sender import CONTENT_TYPE, Delivered, Dropped, Failed, RetryPolicy, Sender
from a2akit.service_params import LEGACY_VERSION
from a2akit.settings import Settings
from a2akit.store.base import Scope, TaskStore

if TYPE_CHECKING:
    from mypy_boto3_sqs.client import SQSClient

__all__ = ["DeadLetters", "Delivery", "Dispatcher", "LoggedDeadLetters", "SqsDeadLetters",
           "make_dispatcher"]

log = logging.getLogger("a2akit.push")

# The 0.3 payload is plain JSON (0.3 spec 9.5), the 1.0 one the binding's type.
_CONTENT_TYPE_03 = "application/json"


@dataclasses.dataclass(frozen=True)
class Delivery:
    """One stored event of a task, to send to the task's webhooks."""

    scope: Scope
    task_id: str
    seq: int
    event: pb.StreamResponse
    # The `traceparent` of the write that stored the event: its deliveries continue that
    # trace (a span of their own); None for an event stored without one.
    traceparent: str | None = None


class DeadLetters(Protocol):
    async def put(self, record: Mapping[str, Any]) -> None:
        """Keep a delivery that failed for good. Raises when it cannot be kept."""


class LoggedDeadLetters:
    """No dead-letter queue configured (local development): the failure line is all."""

    async def put(self, record: Mapping[str, Any]) -> None:
        return None


class SqsDeadLetters:
    """The push dead-letter queue (SQS, through boto3 in a worker thread)."""

    def __init__(self, url: str, client: SQSClient) -> None:
        self.url = url
        self._client = client

    async def put(self, record: Mapping[str, Any]) -> None:
        await asyncio.to_thread(self._client.send_message, QueueUrl=self.url,
                                MessageBody=json.dumps(record, separators=(",", ":")))


TaskBody = Callable[[pb.Task], bytes]


class Dispatcher:
    def __init__(self, store: TaskStore, sender: Sender, dead_letters: DeadLetters, *,
                 task_body03: TaskBody, function_name: str | None = None) -> None:
        self.store = store
        self.task_body03 = task_body03
        self.function_name = function_name  # the failure metric's dimension on Lambda
        self.sender = sender
        self.dead_letters = dead_letters

    async def aclose(self) -> None:
        """Close the sender's connections."""
        await self.sender.aclose()

    async def dispatch(self, delivery: Delivery, *, deadline: float | None = None) -> None:
        """Send the event to each of its task's configs, concurrently.

        `deadline` (loop time) bounds the retries; a delivery cut by it fails for good.
        Raises only when a failed delivery could not be kept (store or dead-letter queue
        unreachable): the feeder must then offer the event again."""
        if delivery.traceparent is not None:
            trace.continue_trace(delivery.traceparent)
        logs.bind_caller(delivery.scope.tenant, delivery.scope.owner)
        logs.bind_task(delivery.task_id)
        targets = await self.store.list_push_targets(delivery.scope, delivery.task_id)
        if not targets:
            return
        bodies = {version: await self._body(delivery, version)
                  for version in {target.protocol_version for target in targets}}
        sends = []
        for target in targets:
            body = bodies[target.protocol_version]
            if body is not None:
                sends.append(self._send(delivery, target.config, *body, deadline))
        results = await asyncio.gather(*sends, return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result

    async def _body(self, delivery: Delivery, protocol_version: str
                    ) -> tuple[bytes, str] | None:
        """The body (and its content type) a config of `protocol_version` gets for this
        delivery; None when there is nothing to send (the task is gone)."""
        if protocol_version != LEGACY_VERSION:
            return (json.dumps(protojson.to_json(delivery.event), separators=(",", ":"))
                    .encode(), CONTENT_TYPE)
        stored = await self.store.get(delivery.scope, delivery.task_id)
        if stored is None:  # expired since: nobody is waiting for it any more
            log.warning("task %s event %d: the task is gone; its 0.3 configs get nothing",
                        delivery.task_id, delivery.seq)
            return None
        return self.task_body03(stored.task), _CONTENT_TYPE_03

    async def _send(self, delivery: Delivery, config: pb.TaskPushNotificationConfig,
                    body: bytes, content_type: str, deadline: float | None) -> None:
        async def still_wanted() -> bool:
            found = await self.store.get_push_config(delivery.scope, delivery.task_id,
                                                     config.id)
            return found is not None

        outcome = await self.sender.deliver(config, body, still_wanted=still_wanted,
                                            deadline=deadline, content_type=content_type)
        if outcome.attempts > 1:
            metrics.emit(metrics.PUSH_RETRIES, outcome.attempts - 1)
        if isinstance(outcome, Delivered):
            metrics.count(metrics.PUSH_DELIVERED)
            log.debug("task %s event %d -> config %s: %d after %d attempt(s)",
                      delivery.task_id, delivery.seq, config.id, outcome.status,
                      outcome.attempts)
        elif isinstance(outcome, Dropped):
            log.info("task %s event %d: config %s was deleted; not sent",
                     delivery.task_id, delivery.seq, config.id)
        elif isinstance(outcome, Failed):
            await self._failed(delivery, config, outcome)

    async def _failed(self, delivery: Delivery, config: pb.TaskPushNotificationConfig,
                      outcome: Failed) -> None:
        record = dead_letter(delivery, config, outcome)
        sys.stdout.write(failure_line(record, self.function_name) + "\n")
        sys.stdout.flush()
        await self.dead_letters.put(record)


def dead_letter(delivery: Delivery, config: pb.TaskPushNotificationConfig,
                outcome: Failed) -> dict[str, Any]:
    """What the dead-letter queue keeps: enough to find the task and config and to send the
    event again, never the config's credentials or token."""
    return {
        "tenant": delivery.scope.tenant,
        "owner": delivery.scope.owner,
        "taskId": delivery.task_id,
        "configId": config.id,
        "url": config.url.split("?", 1)[0],  # a query string may carry a secret
        "seq": delivery.seq,
        "attempts": outcome.attempts,
        "status": outcome.status,
        "error": outcome.error,
        "failedAt": int(time.time() * 1000),
        "event": protojson.to_json(delivery.event),
    }


def make_dispatcher(settings: Settings, store: TaskStore, *, task_body03: TaskBody
                    ) -> Dispatcher:
    """The dispatcher the settings describe: the sender's guard and retries, and the SQS
    dead-letter queue when one is set; `task_body03` writes what a 0.3 caller's config gets."""
    from a2akit.push.guard import Policy

    dead_letters: DeadLetters = LoggedDeadLetters()
    if settings.push_dlq_url:
        from a2akit import aws

        dead_letters = SqsDeadLetters(settings.push_dlq_url, aws.client(
            "sqs", endpoint_url=settings.sqs_endpoint))
    sender = Sender(Policy.from_settings(settings), RetryPolicy.from_settings(settings))
    return Dispatcher(store, sender, dead_letters, task_body03=task_body03,
                      function_name=settings.function_name)
