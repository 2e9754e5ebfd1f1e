"""The queue worker: runs queued tasks, one SQS record at a time (`handlers.worker` on
Lambda, `scripts.run_worker` locally, and the long-task lane's `a2akit.execution.lane` on
ECS, with no budget).

For each record the worker reads the task and, in this order:

1. the task is gone or terminal: nothing to do (a redelivery of a finished task);
2. its lease expired: end it FAILED (`a2akit.execution.leases`, as any reader would) and
   stop;
3. its lease is not the queue's lease this job names: another run holds or held it (a
   redelivery while it runs): nothing to do;
4. take the lease, a conditional swap from the queue's owner to this run's: of two
   deliveries of one message only one wins, the other stops at 3;
5. run the agent on the task as recorded, with the invocation's remaining time less the
   margin as its deadline (the long lane: none); past it the agent is stopped and the task
   ends FAILED, naming the limit. A caller's `started` hook runs as the agent starts (the
   long lane protects its ECS task and deletes the message: the lease holds the task now).

A record that cannot be handled (the store is down, the body is not a job) is reported as
a batch item failure, so SQS delivers it again. On its last allowed receive
(`queue_max_receives`, the queue's maxReceiveCount) the worker first ends its task FAILED:
SQS then moves the message to the dead-letter queue, and no task waits on it.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from a2akit import logs, metrics, telemetry, trace
from a2akit.agent import Agent
from a2akit.clock import epoch_ms
from a2akit.errors import A2AError
from a2akit.execution.leases import fail, lease_for, runner_owner, settle
from a2akit.execution.outcomes import Terms
from a2akit.execution.queue import Job, JobError
from a2akit.execution.run import Run
from a2akit.settings import Settings
from a2akit.states import is_terminal
from a2akit.store.base import LeaseLostError, TaskStore

__all__ = ["DEAD_LETTER_TEXT", "Worker"]

log = logging.getLogger("a2akit.worker")

DEAD_LETTER_TEXT = ("The task's queue message failed on every delivery and went to the "
                    "dead-letter queue; the agent did not finish it")


class Worker:
    def __init__(self, settings: Settings, store: TaskStore, agent: Agent) -> None:
        telemetry.configure(settings)
        self.settings = settings
        self.store = store
        self.agent = agent

    async def run_job(self, job: Job, budget: float | None,
                      started: Callable[[], Awaitable[None]] | None = None) -> None:
        """Handle one job (steps 1-5 above); `budget` None: no limit. Raises A2AError when
        the store fails, JobError when the task does not hold the job's message."""
        scope = job.scope
        stored = await self.store.get(scope, job.task_id)
        if stored is None or is_terminal(stored.task.status.state):
            log.info("task %s: nothing to run (%s)", job.task_id,
                     "gone" if stored is None else "already finished")
            return
        logs.bind_task(job.task_id, stored.task.context_id)
        stored = await settle(self.store, scope, stored)
        lease = stored.lease
        if is_terminal(stored.task.status.state) or lease is None or (
                lease.owner != job.lease_owner):
            log.info("task %s: run by another, or its runner is gone", job.task_id)
            return
        context = job.context(stored)  # before taking the lease: a bad job leaves it queued
        owner = runner_owner()
        try:
            stored = await self.store.swap_lease(scope, job.task_id, job.lease_owner,
                                                 lease_for(owner, self.settings.lease_seconds))
        except LeaseLostError:
            log.info("task %s: another delivery took it first", job.task_id)
            return
        if job.enqueued_ms is not None:
            metrics.emit(metrics.TIME_QUEUED, max(0, epoch_ms() - job.enqueued_ms))
        terms = Terms.within(self.settings, budget, "this worker's invocation",
                             owner)
        run = Run(self.store, self.agent, context, stored=stored, claim=None, recorded=True,
                  terms=terms)
        run.start()
        if started is not None:
            # While the agent starts: the lease is this run's, and renewed by it from now.
            await started()
        await run.finished()

    async def give_up(self, job: Job) -> None:
        """The job's last delivery failed: end its task FAILED unless a live runner holds
        it (best effort: the queue lease's expiry ends it otherwise)."""
        try:
            await fail(self.store, job.scope, job.task_id, DEAD_LETTER_TEXT)
        except A2AError:
            log.warning("task %s: could not be failed before dead-lettering", job.task_id,
                        exc_info=True)

    async def handle_batch(
        self, records: Iterable[Mapping[str, Any]], budget: Callable[[], float | None],
        started: Callable[[Mapping[str, Any]], Awaitable[None]] | None = None,
    ) -> dict[str, list[dict[str, str]]]:
        """An SQS event's records, one after the other; the partial batch response lists
        those to deliver again. `budget()` is the time the next run may take (None: no
        limit); `started(record)` runs once a record's run holds its task's lease."""
        failures: list[dict[str, str]] = []
        # Each record starts from the invocation's ids (a job's own are the record's alone).
        invocation = {key: value for key, value in logs.fields().items()
                      if key in ("request_id", "operation")}
        for record in records:
            message_id = str(record.get("messageId", ""))
            receives = _receive_count(record)
            logs.begin_with({**invocation, "sqs_message_id": message_id})
            job = None
            try:
                job = Job.decode(str(record.get("body", "")))
                # The door's trace goes on here; the lines about this job name its task.
                trace.continue_trace(job.traceparent)
                logs.bind_caller(job.scope.tenant, job.scope.owner)
                logs.bind_task(job.task_id)
                hook = None if started is None else functools.partial(started, record)
                with (telemetry.NOTHING if telemetry.off
                      else telemetry.consumer_span("RunTask", job.traceparent)):
                    await self.run_job(job, budget(), hook)
            except (A2AError, JobError):
                log.exception("queue message %s failed (receive %d)", message_id, receives)
                if job is not None and receives >= self.settings.queue_max_receives:
                    await self.give_up(job)
                failures.append({"itemIdentifier": message_id})
        return {"batchItemFailures": failures}


def _receive_count(record: Mapping[str, Any]) -> int:
    try:
        return int(record.get("attributes", {}).get("ApproximateReceiveCount", "1"))
    except (TypeError, ValueError):
        return 1
