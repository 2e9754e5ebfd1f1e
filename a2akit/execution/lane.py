"""The long-task lane's worker loop: long-polls its SQS queue and runs each job with the
queue worker's own `Worker.handle_batch` (`a2akit.execution.worker`), with no time limit.
`handlers.long_worker` runs it on ECS Fargate; `Lane.run` until `stop` is set.

- At most `A2A_LONG_CONCURRENCY` jobs at once; a receive is made only for a free slot.
- The message is deleted as soon as the run holds the task's lease (the worker's `started`
  hook): from then on the lease, not the message, keeps the task. A redelivery could never
  run it again (the worker stops at "run by another"), and no visibility timeout has to
  outlast an agent that may run for hours. A worker that dies mid-run leaves its task to the
  lease rule (FAILED at its expiry), as a Lambda worker that dies does. A job that fails
  before its run starts (the store is away) stays on the queue and comes back after the
  queue's visibility timeout, its receives counted as SQS counts them.
- While an agent runs, the ECS task is protected from scale-in (`a2akit.execution.protection`).
- `stop` (SIGTERM: a deploy or a scale-in): no more receives; a message the receive under
  way brings back, or a job not yet started, goes back to the queue at once (visibility 0),
  for another worker; running agents get `long_shutdown_grace_seconds`, then each still
  running ends FAILED with `STOP_TEXT`, as the gRPC container ends its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import Any

from a2akit import aws
from a2akit.execution.protection import NoProtection, Protection
from a2akit.execution.run import drain
from a2akit.execution.worker import Worker
from a2akit.settings import Settings

__all__ = ["POLL_SECONDS", "STOP_TEXT", "Lane", "sqs_record"]

log = logging.getLogger("a2akit.lane")

STOP_TEXT = ("The long-task worker stopped (a deploy or a scale-in) before the agent finished: "
             "it was stopped after the shutdown grace period")
# A receive's wait. A stopping worker waits for the receive under way (to give back what it
# brings), so this bounds how long a SIGTERM takes when no agent runs; the empty receives it
# costs while a task is up and idle (12 a minute) are about 0.01 USD a day.
POLL_SECONDS = 5
# After a receive failed (SQS away), the next one waits this long.
RETRY_SECONDS = 5.0


def sqs_record(message: Mapping[str, Any], arn: str, region: str) -> dict[str, Any]:
    """A received SQS message in the record shape Lambda's SQS event source hands a
    function, which is what `Worker.handle_batch` reads."""
    return {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        "attributes": message.get("Attributes", {}),
        "messageAttributes": message.get("MessageAttributes", {}),
        "md5OfBody": message["MD5OfBody"],
        "eventSource": "aws:sqs",
        "eventSourceARN": arn,
        "awsRegion": region,
    }


class Lane:
    """The loop of one long-lane worker process (see the module docstring)."""

    def __init__(self, settings: Settings, worker: Worker, sqs: Any, queue_url: str, *,
                 protection: Protection | None = None, poll_seconds: int = POLL_SECONDS
                 ) -> None:
        self.settings = settings
        self.worker = worker
        self.sqs = sqs
        self.queue_url = queue_url
        self.protection = protection or NoProtection()
        self.poll_seconds = poll_seconds
        self._slots = asyncio.Semaphore(settings.long_concurrency)
        self._jobs: set[asyncio.Task[None]] = set()
        self._arn = ""
        self._stop = asyncio.Event()

    async def run(self, stop: asyncio.Event) -> int:
        """Take and run jobs until `stop` is set, then stop well (the module docstring);
        returns how many agents were stopped at the end of the grace."""
        self._stop = stop
        attributes = await asyncio.to_thread(self.sqs.get_queue_attributes,
                                             QueueUrl=self.queue_url,
                                             AttributeNames=["QueueArn"])
        self._arn = attributes["Attributes"]["QueueArn"]
        receiving = asyncio.create_task(self._receive_loop())
        await asyncio.wait({receiving, asyncio.create_task(stop.wait())},
                           return_when=asyncio.FIRST_COMPLETED)
        if receiving.done() and not stop.is_set():
            receiving.result()  # the loop ended by itself: raise what ended it
        grace = self.settings.long_shutdown_grace_seconds
        log.info("stopping: no more jobs; %d running job(s) get %.0f s", len(self._jobs), grace)
        # The grace runs while the receive under way ends (its message goes back).
        stopped, _ = await asyncio.gather(drain(grace, STOP_TEXT), receiving)
        # A job that started during the grace: no time is left for it.
        while self._jobs:
            await asyncio.wait(set(self._jobs), timeout=0.5)
            stopped += await drain(0, STOP_TEXT)
        await self.protection.close()
        if stopped:
            log.warning("%d task(s) ended FAILED at shutdown", stopped)
        return stopped

    async def _receive_loop(self) -> None:
        while await self._free_slot():
            try:
                answer = await asyncio.to_thread(
                    self.sqs.receive_message, QueueUrl=self.queue_url, MaxNumberOfMessages=1,
                    WaitTimeSeconds=self.poll_seconds, AttributeNames=["All"],
                    MessageAttributeNames=["All"])
            except Exception as exc:
                self._slots.release()
                failure = aws.failure(exc)
                if failure is None:
                    raise
                log.warning("could not receive from the long queue: %s (%s); again in %.0f s",
                            failure.code, failure.kind, RETRY_SECONDS)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), RETRY_SECONDS)
                continue
            messages = answer.get("Messages", [])
            if not messages:
                self._slots.release()
                continue
            (message,) = messages
            if self._stop.is_set():
                self._slots.release()
                await self._give_back(message)
                return
            job = asyncio.create_task(self._job(message))
            self._jobs.add(job)
            job.add_done_callback(self._job_done)

    def _job_done(self, job: asyncio.Task[None]) -> None:
        self._jobs.discard(job)
        self._slots.release()
        if not job.cancelled() and job.exception() is not None:
            log.error("a long-lane job failed", exc_info=job.exception())

    async def _free_slot(self) -> bool:
        """Wait for a free slot; False once `stop` is set (the slot is not taken)."""
        if self._stop.is_set():
            return False
        acquire = asyncio.create_task(self._slots.acquire())
        stopping = asyncio.create_task(self._stop.wait())
        await asyncio.wait({acquire, stopping}, return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        if not acquire.done():
            acquire.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await acquire
        if acquire.done() and not acquire.cancelled():
            if self._stop.is_set():
                self._slots.release()
                return False
            return True
        return False

    async def _job(self, message: Mapping[str, Any]) -> None:
        if self._stop.is_set():
            await self._give_back(message)  # received, never started: another worker's
            return
        record = sqs_record(message, self._arn, self.sqs.meta.region_name)
        began = False

        async def started(_: Mapping[str, Any]) -> None:
            nonlocal began
            began = True
            await self.protection.hold()
            await self._delete(message)

        try:
            result = await self.worker.handle_batch([record], lambda: None, started)
        finally:
            if began:
                await self.protection.release()
        if not began and not result["batchItemFailures"]:
            await self._delete(message)  # nothing to run (finished, or run by another)

    async def _delete(self, message: Mapping[str, Any]) -> None:
        try:
            await asyncio.to_thread(self.sqs.delete_message, QueueUrl=self.queue_url,
                                    ReceiptHandle=message["ReceiptHandle"])
        except Exception as exc:
            if aws.failure(exc) is None:
                raise
            # It comes back after the visibility timeout and finds its task run by another.
            log.warning("could not delete message %s: %s", message["MessageId"], exc)

    async def _give_back(self, message: Mapping[str, Any]) -> None:
        """Make a message this worker will not run visible again at once."""
        try:
            await asyncio.to_thread(self.sqs.change_message_visibility, QueueUrl=self.queue_url,
                                    ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0)
            log.info("message %s went back to the queue unstarted", message["MessageId"])
        except Exception as exc:
            if aws.failure(exc) is None:
                raise
            log.warning("could not give message %s back (it returns after the queue's "
                        "visibility timeout): %s", message["MessageId"], exc)
