"""The run: one execution of an agent for one task, and what its caller learns of it.

The agent runs inline, in the run's own asyncio task, so a client that goes away never
cancels the work. What it reports goes to the store through the run's `TaskWriter`
(`a2akit.execution.writer`); the writer task, the watcher (`a2akit.execution.watch`: lease
renewal, cancels from other processes) and the deadline timer are only started once the
agent outlives its first burst (it awaits something not ready yet). An agent that finishes
in one burst (echo, most one-shot agents) costs one task and one write, made by the run's
task after the agent returned: none of those helpers could have run during the burst
anyway, since the event loop never got control.

A run with a deadline (a Lambda invocation's time, a worker's) stops its agent then and ends
the task FAILED with `Terms.deadline_text`; so does `drain()` for the runs still going when
the container shuts down.

What a caller learns from a run is one `Outcome`: the task as stored (`Started`), the agent's
single reply message (`Replied`), or that the message id was already used (`Duplicate`). An
error the agent raised before reporting anything, or a store failure before the task
existed, is raised from `started()` / `settled()` instead; a store failure after the task
exists is raised from `settled()` and `events()`, so no caller mistakes it for an end.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence

from a2akit.agent import Agent, AgentFailure, RequestContext, TaskHandle
from a2akit.clock import now
from a2akit.errors import A2AError, InternalError, InvalidAgentResponseError
from a2akit.execution.outcomes import Duplicate, Outcome, Replied, Started, Terms, recording
from a2akit.execution.watch import watch
from a2akit.execution.writer import TaskWriter
from a2akit.generated import a2a_pb2 as pb
from a2akit.states import ends_stream, failed_event, is_terminal, status_event
from a2akit.store.base import PushTarget, StoredTask, TaskStore

__all__ = ["Run", "drain", "live_runs"]

log = logging.getLogger("a2akit.runner")

# Runs whose agent is still going: referenced here so they are not collected, and so the
# container can drain them on shutdown.
_LIVE: dict[Run, asyncio.Task[None]] = {}


def _here() -> dict[Run, asyncio.Task[None]]:
    loop = asyncio.get_running_loop()
    # `done()`: a run cancelled before its first step never ran the `finally` that removes it.
    return {run: task for run, task in _LIVE.items()
            if task.get_loop() is loop and not task.done()}


def live_runs() -> int:
    """How many agents run in this event loop."""
    return len(_here())


async def drain(grace: float, text: str) -> int:
    """Let the runs of this event loop finish for up to `grace` seconds, then stop each agent
    still going and end its task FAILED with `text`; returns how many were stopped."""
    if live := _here():
        await asyncio.wait(list(live.values()), timeout=grace)
    stopped = list(_here().items())
    for run, _ in stopped:
        run.cut(text)
    if stopped:
        # The final writes: bounded, the store's own retries are.
        await asyncio.wait([task for _, task in stopped], timeout=30)
    return len(stopped)


class Run:
    """One execution of an agent for one task (new or continued).

    `start()` launches the agent in the run's own asyncio task. `first_snapshot` is what a
    stream shows first; `events()` yields the persisted events after it."""

    def __init__(
        self,
        store: TaskStore,
        agent: Agent,
        context: RequestContext,
        *,
        stored: StoredTask | None,
        claim: str | None,
        terms: Terms,
        recorded: bool = False,
        push_configs: Sequence[PushTarget] = (),
    ) -> None:
        """`recorded`: the message is already in `stored` (a queue worker runs a task the
        front door wrote), so the run starts from the stored task as it is. `push_configs`
        are stored with a new task (its first write)."""
        self._agent = agent
        self._context = context
        self._terms = terms
        self._recorded = recorded
        if recorded:
            assert stored is not None, "a recorded message belongs to a stored task"
            snapshot = pb.Task()
            snapshot.CopyFrom(stored.task)
            pending: list[pb.StreamResponse] = []
        else:
            snapshot, pending = recording(context, stored)
        self._writes = TaskWriter(store, context.caller, context.task_id, terms,
                                  stored=stored, snapshot=snapshot, pending=pending,
                                  claim=claim, push_configs=push_configs,
                                  on_change=self._changed_now, on_stop=self._stop_agent)
        self.first_snapshot = pb.Task()
        self.first_snapshot.CopyFrom(snapshot)
        # How the run ended for its caller, when not with a stored task.
        self._reply: pb.Message | None = None
        self._error: A2AError | None = None
        self._stopping = False
        self._closing = False  # the agent returned; the writer drains what is pending
        self._changed = asyncio.Event()
        self._dirty = asyncio.Event()
        self._done = False
        self._task: asyncio.Task[None] | None = None  # the run's task; the agent runs in it
        self._began = 0.0  # loop time the agent started: the lease's age counts from there
        self._in_agent = False  # the run's task is inside the agent (it may be stopped)
        self._agent_cancels = 0  # how often the run cancelled its own task to stop the agent
        # Started only for an agent that outlives its first burst (`_outlived_first_burst`).
        self._writer: asyncio.Task[None] | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._cut_reason: str | None = None  # why the run stopped the agent itself

    @property
    def _reported_nothing(self) -> bool:
        """No task exists yet and the agent reported nothing beyond the first snapshot."""
        return self._writes.stored is None and len(self._writes.pending) == 1

    @property
    def snapshot(self) -> pb.Task:
        """The task as the agent has reported it so far."""
        return self._writes.snapshot

    # --- TaskSink, called by TaskHandle ------------------------------------------------------

    @property
    def canceled(self) -> bool:
        return self._writes.canceled

    def emit(self, event: pb.StreamResponse) -> None:
        if self._reply is not None:
            raise InvalidAgentResponseError("the agent already replied with a message")
        if event.HasField("status_update"):
            event.status_update.status.timestamp.CopyFrom(now())
        self._writes.add(event)  # raises into the agent on an invalid transition
        self._dirty.set()

    def reply(self, message: pb.Message) -> None:
        writes = self._writes
        if self._recorded and not writes.pending and not writes.written:
            # Queue mode: the task existed before the agent ran, so an agent that answers
            # with one message completes it, the message as the final status message.
            message.task_id = self._context.task_id
            self.emit(status_event(self._context.task_id, self._context.context_id,
                                   pb.TaskStatus(state=pb.TASK_STATE_COMPLETED, message=message)))
            return
        if not self._reported_nothing:
            # A task exists for this exchange: the reply becomes part of its history.
            message.task_id = self._context.task_id
            self.emit(pb.StreamResponse(message=message))
            return
        if self._reply is not None:
            raise InvalidAgentResponseError("an agent replies with one message at most")
        self._reply = message
        writes.held = True

    # --- what callers use ----------------------------------------------------------------------

    def start(self) -> None:
        task = asyncio.create_task(self._main())
        # `_main` removes the run from _LIVE when it ends (no done callback to schedule); an
        # eager task factory may have run it to its end already.
        if not task.done():
            _LIVE[self] = task

    async def finished(self) -> None:
        """Wait until the agent returned or was stopped and the last write is done."""
        while not self._done:
            await self._next_change()

    def cut(self, text: str) -> None:
        """Stop the agent now and end the task FAILED with `text` (a deadline, a shutdown)."""
        if self._cut_reason is None:
            self._cut_reason = text
        self._cancel_agent()

    async def started(self) -> Outcome:
        """The outcome once the task exists in the store, or the run ended without one."""
        while self._writes.stored is None and not self._done:
            await self._next_change()
        return self._outcome()

    async def settled(self, budget: float | None) -> Outcome:
        """The outcome once the task is terminal or interrupted, the run ended, or `budget`
        ran out (then the task as it stands)."""
        deadline = None if budget is None else asyncio.get_running_loop().time() + budget
        while not self._done and not self._writes.settled:
            if not await self._next_change(deadline):
                break
        if self._writes.failure is not None and not self._writes.settled:
            raise self._writes.failure
        return self._outcome()

    def _outcome(self) -> Outcome:
        writes = self._writes
        if writes.refused is not None:
            raise writes.refused
        if writes.duplicate_of is not None:
            return Duplicate(writes.duplicate_of)
        if writes.stored is not None:
            return Started(writes.stored)
        if self._reply is not None:
            return Replied(self._reply)
        error = self._error or writes.error
        if error is not None:
            raise error
        # started() only returns once the task exists or the run is done, and a finished run
        # without a task always has a reply or an error.
        raise InternalError("the run ended without a task")  # pragma: no cover

    async def events(self, budget: float | None = None) -> AsyncIterator[pb.StreamResponse]:
        """Status and artifact events as persisted, in order, until the run ends or the budget
        runs out. Events other writers added (a cancel) are included. Raises the store's
        error (UnavailableError) when a write failed after the task existed."""
        deadline = None if budget is None else asyncio.get_running_loop().time() + budget
        written = self._writes.written
        index = 0
        while True:
            while index < len(written):
                event = written[index]
                index += 1
                if event.HasField("status_update") or event.HasField("artifact_update"):
                    yield event
            if self._writes.refused is not None:
                raise self._writes.refused
            if self._writes.failure is not None and index == len(written):
                raise self._writes.failure
            if self._done or not await self._next_change(deadline):
                return

    def _changed_now(self) -> None:
        self._changed.set()

    async def _next_change(self, deadline: float | None = None) -> bool:
        self._changed.clear()
        if deadline is None:
            await self._changed.wait()
            return True
        if deadline <= asyncio.get_running_loop().time():
            return False
        try:
            # A timeout scope, not wait_for: no task per wait.
            async with asyncio.timeout_at(deadline):
                await self._changed.wait()
        except TimeoutError:
            return False
        return True

    # --- the run -------------------------------------------------------------------------------

    async def _main(self) -> None:
        handle = TaskHandle(self, self._context.task_id, self._context.context_id)
        this = self._task = asyncio.current_task()
        assert this is not None, "a run starts through start()"
        self._began = asyncio.get_running_loop().time()
        # The agent runs inline, in this task. Should it still be running after its first
        # burst (it awaits something not ready), this callback starts the writer, the
        # watcher and the deadline timer; an agent that finishes in one burst cancels it, and
        # this task writes what it reported, in one write.
        first_burst = asyncio.get_running_loop().call_soon(self._outlived_first_burst)
        self._in_agent = True
        try:
            try:
                try:
                    await self._agent.execute(self._context, handle)
                finally:
                    self._in_agent = False
                    first_burst.cancel()
                    # Our own stops (`_cancel_agent`) are not cancellations of this task:
                    # take them back, so only the loop's own (closing) remains counted.
                    for _ in range(self._agent_cancels):
                        this.uncancel()
            except asyncio.CancelledError:
                if this.cancelling():
                    raise  # the run itself is being cancelled (the loop is closing)
                if self._cut_reason is not None and not self._stopping:
                    log.warning("task %s stopped: %s", self._context.task_id, self._cut_reason)
                    self._fail_safely(self._cut_reason)
                elif not self._stopping:
                    raise
            except A2AError as exc:
                if self._reported_nothing:
                    # Raised before reporting anything: the caller gets it.
                    self._error = exc
                    self._writes.held = True
                else:
                    self._fail_safely(exc.message)
            except AgentFailure as exc:
                # Its message is meant for the caller; a traceback would add nothing.
                log.warning("agent failed on task %s: %s", self._context.task_id, exc)
                self._fail_safely(str(exc))
            except Exception:
                log.exception("agent failed on task %s", self._context.task_id)
                self._fail_safely("The agent failed while working on this task")
            else:
                self._finish_contract()
            if self._watcher is not None:
                self._watcher.cancel()
            self._closing = True
            if self._writer is None:
                await self._writes.write_pending()  # the agent finished in its first burst
            else:
                self._dirty.set()
                await self._writer
            await self._writes.release()
        finally:
            if self._timer is not None:
                self._timer.cancel()
            if self._watcher is not None:
                self._watcher.cancel()
            if self._writer is not None:
                self._writer.cancel()
            self._done = True
            self._changed.set()
            _LIVE.pop(self, None)

    def _outlived_first_burst(self) -> None:
        """The agent awaits something: from now on the loop runs while the agent works, so
        write its events as it reports them, renew the lease and watch for a cancel, and stop
        it at the deadline. (Before this point none of them could have run.)"""
        self._writer = asyncio.create_task(self._write_loop())
        self._watcher = asyncio.create_task(watch(self._writes, self._began))
        if self._terms.deadline is not None:
            self._timer = asyncio.get_running_loop().call_at(
                self._terms.deadline, self.cut, self._terms.deadline_text)

    async def _write_loop(self) -> None:
        while True:
            await self._dirty.wait()
            self._dirty.clear()
            if not await self._writes.write_pending():
                return
            if self._closing and not self._dirty.is_set():
                return

    def _finish_contract(self) -> None:
        """An agent must end in a terminal or interrupted state, or with a reply."""
        if self._stopping or self._reply is not None:
            return
        if self._reported_nothing:
            self._error = InvalidAgentResponseError("the agent reported nothing")
            self._writes.held = True
            return
        if not ends_stream(self.snapshot.status.state):
            self._fail_safely("The agent stopped before finishing the task")

    def _fail_safely(self, text: str) -> None:
        if self._stopping or self._reply is not None or is_terminal(
            self.snapshot.status.state
        ):
            return
        self.emit(failed_event(self._context.task_id, self._context.context_id, text))

    def _stop_agent(self) -> None:
        self._stopping = True
        self._cancel_agent()

    def _cancel_agent(self) -> None:
        """Stop the agent where it awaits: it runs inside the run's task, so cancel that task,
        but only while it is in the agent (after, it is writing what the agent left). The
        agent sees CancelledError; `_main` takes the cancellation back (`uncancel`)."""
        if self._in_agent and self._task is not None:
            self._agent_cancels += 1
            self._task.cancel()
