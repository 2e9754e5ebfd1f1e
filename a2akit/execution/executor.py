"""Where an agent runs, decided once when the operations are assembled (`make_executor`):

    InlineExecutor   this process runs the agent (a `Run`) under the call's budget
    QueueExecutor    this process records the task and queues it; a worker runs the agent,
                     and the call follows the task's stored events. With a long queue
                     (A2A_LONG_QUEUE_URL) the tasks `goes_long` picks go there, to the
                     long-task lane's worker (no time limit), the others to the Lambda worker

The operations start a SendMessage with `Executor.begin` and read what it comes to from the
`Execution` it returns, the same way in both modes.
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator, Sequence
from typing import Any

from a2akit.agent import Agent, RequestContext
from a2akit.execution.budget import call_budget
from a2akit.execution.follow import follow
from a2akit.execution.leases import current
from a2akit.execution.outcomes import Outcome, Started, Terms
from a2akit.execution.queue import SqsQueue, TaskQueue, enqueue, make_queue
from a2akit.execution.run import Run
from a2akit.generated import a2a_pb2 as pb
from a2akit.settings import ALL, QUEUE, Settings
from a2akit.states import closes_stream
from a2akit.store.base import PushTarget, Scope, StoredTask, TaskStore

__all__ = ["Execution", "Executor", "InlineExecutor", "QueueExecutor", "goes_long",
           "make_executor"]

Events = AsyncIterator[pb.StreamResponse]


class Execution(abc.ABC):
    """One SendMessage under way."""

    @abc.abstractmethod
    async def started(self) -> Outcome:
        """The outcome as soon as the task exists (or the agent answered without one)."""

    @abc.abstractmethod
    async def settled(self) -> Outcome:
        """The outcome once the task is terminal or interrupted, or the call's budget ran
        out (then the task as it stands)."""

    @abc.abstractmethod
    def stream(self) -> tuple[pb.Task, Events]:
        """After `started()` gave `Started`: what a stream shows first, then the task's
        status and artifact events, until one closes the stream or the call's budget ends."""


class Executor(abc.ABC):
    @abc.abstractmethod
    async def begin(self, context: RequestContext, stored: StoredTask | None, claim: str,
                    push_configs: Sequence[PushTarget],
                    deadline: float | None) -> Execution:
        """Start the task's work for the message in `context` (`stored`: the task it
        continues), `claim` its idempotency key; `deadline` is the platform's end of the
        request (`Call.deadline`)."""


class _Inline(Execution):
    def __init__(self, run: Run, wait: float | None) -> None:
        self._run = run
        self._wait = wait

    async def started(self) -> Outcome:
        return await self._run.started()

    async def settled(self) -> Outcome:
        return await self._run.settled(self._wait)

    def stream(self) -> tuple[pb.Task, Events]:
        return self._run.first_snapshot, self._run.events(self._wait)


class InlineExecutor(Executor):
    """Runs the agent in this process."""

    def __init__(self, settings: Settings, store: TaskStore, agent: Agent) -> None:
        self.settings = settings
        self.store = store
        self.agent = agent

    async def begin(self, context: RequestContext, stored: StoredTask | None, claim: str,
                    push_configs: Sequence[PushTarget],
                    deadline: float | None) -> Execution:
        budget = call_budget(self.settings, deadline)
        wait = budget
        run_budget = None
        if deadline is not None and budget is not None:
            # On Lambda the process freezes once it answers: the agent gets this request's
            # budget, then the task ends FAILED rather than WORKING with nobody running it;
            # the call waits half the margin longer, so that FAILED write is in the answer.
            run_budget = budget
            wait = budget + self.settings.budget_margin_seconds / 2
        terms = Terms.within(self.settings, run_budget,
                             "this request on AWS Lambda")
        run = Run(self.store, self.agent, context, stored=stored, claim=claim, terms=terms,
                  push_configs=push_configs)
        run.start()
        return _Inline(run, wait)


class _Queued(Execution):
    def __init__(self, store: TaskStore, scope: Scope, outcome: Outcome, budget: float | None,
                 lease_seconds: float) -> None:
        self._store = store
        self._scope = scope
        self._outcome = outcome
        self._budget = budget
        self._lease_seconds = lease_seconds

    async def started(self) -> Outcome:
        return self._outcome

    async def settled(self) -> Outcome:
        if not isinstance(self._outcome, Started):
            return self._outcome
        # Follow the task as the worker writes it, up to the budget; then read it.
        _, events = self.stream()
        async for event in events:
            if closes_stream(event):
                break
        stored = self._outcome.stored
        now = await current(self._store, self._scope, stored.task.id)
        return Started(stored if now is None else now)

    def stream(self) -> tuple[pb.Task, Events]:
        assert isinstance(self._outcome, Started), "a stream follows a started task"
        stored = self._outcome.stored
        return stored.task, follow(self._store, self._scope, stored, self._budget,
                                   lease_seconds=self._lease_seconds)


def goes_long(settings: Settings, agent: Any, context: RequestContext) -> bool:
    """Whether the task of `context` goes to the long-task lane: every task with
    A2A_LONG_TASKS=all, else when the agent declares it: `long_running = True`, or a
    `long_running(context)` method answering per task. False without a long queue."""
    if settings.long_queue_url is None:
        return False
    if settings.long_tasks == ALL:
        return True
    declared = getattr(agent, "long_running", False)
    return bool(declared(context) if callable(declared) else declared)


class QueueExecutor(Executor):
    """Records the task and queues it for a worker (`a2akit.execution.worker`): on the long
    queue when `goes_long` says so, else on the Lambda worker's."""

    def __init__(self, settings: Settings, store: TaskStore, queue: TaskQueue,
                 long_queue: TaskQueue | None = None, agent: Agent | None = None) -> None:
        self.settings = settings
        self.store = store
        self.queue = queue
        self.long_queue = long_queue
        self.agent = agent

    def queue_for(self, context: RequestContext) -> TaskQueue:
        if self.long_queue is not None and goes_long(self.settings, self.agent, context):
            return self.long_queue
        return self.queue

    async def begin(self, context: RequestContext, stored: StoredTask | None, claim: str,
                    push_configs: Sequence[PushTarget],
                    deadline: float | None) -> Execution:
        budget = call_budget(self.settings, deadline)
        outcome = await enqueue(self.store, self.queue_for(context), self.settings, context,
                                stored, claim, push_configs)
        return _Queued(self.store, context.caller, outcome, budget, self.settings.lease_seconds)


def make_executor(settings: Settings, store: TaskStore, agent: Agent) -> Executor:
    """The executor `settings.execution` names."""
    if settings.execution == QUEUE:
        # The SQS client (and with it boto3) is made only here, in queue mode.
        queue = make_queue(settings)
        long_queue = (None if settings.long_queue_url is None
                      else SqsQueue(settings.long_queue_url, queue.client))
        return QueueExecutor(settings, store, queue, long_queue, agent)
    return InlineExecutor(settings, store, agent)
