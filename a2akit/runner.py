"""The runner: runs an agent for one task and turns what it reports into store writes.

Events the agent reports in one burst (between two real awaits) are written together, in
one conditional write: an echo agent costs a single write. Each write is conditional on the
version read; on a conflict the runner re-reads, re-folds its pending events onto the newer
snapshot through the state machine, and tries again (`retry_on_conflict`), so no writer loses
another's update. A CANCELED state written by any process stops the agent: its next write
conflicts, and a watcher re-reads the task every `store.poll_interval` seconds while the
agent is silent.

The run holds a lease on the task (`Terms`, rules in `a2akit.leases`): every write carries
it, a write into a terminal or interrupted state clears it, and the watcher renews it every
third of its length (the renewal, one conditional UpdateItem, doubles as that re-read). A run
with a deadline (a Lambda invocation's time, a worker's) stops its agent then and ends the
task FAILED with `Terms.deadline_text`; so does `drain()` for the runs still going when the
container shuts down.

The agent runs inline, in the run's own asyncio task, and the writer task, the watcher task
and the deadline timer are only started once the agent outlives its first burst (it awaits
something not ready yet). An agent that finishes in one burst (echo, most one-shot agents)
costs one task and one write, made by the run's task after the agent returned: none of
those helpers could have run during the burst anyway, since the event loop never got control.

What a caller learns from a run is one `Outcome`: the task as stored (`Started`), the agent's
single reply message (`Replied`), or that the message id was already used (`Duplicate`). An
error the agent raised before reporting anything, or a store failure before the task
existed, is raised from `started()` / `settled()` instead; a store failure after the task
exists is raised from `settled()` and `events()`, so no caller mistakes it for an end.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncIterator, Sequence

from a2akit.agent import Agent, RequestContext, TaskHandle
from a2akit.clock import now
from a2akit.conflicts import retry_on_conflict
from a2akit.errors import A2AError, InternalError, InvalidAgentResponseError
from a2akit.generated import a2a_pb2 as pb
from a2akit.leases import lease_for
from a2akit.states import apply_event, ends_stream, is_terminal, status_event
from a2akit.store.base import (
    DuplicateMessageError,
    Lease,
    LeaseLostError,
    StoredTask,
    TaskStore,
    VersionConflictError,
)

__all__ = [
    "Duplicate",
    "Outcome",
    "Replied",
    "Run",
    "Started",
    "Terms",
    "drain",
    "live_runs",
    "recording",
]

log = logging.getLogger("a2akit.runner")

# Runs whose agent is still going: referenced here so they are not collected, and so the
# container can drain them on shutdown.
_LIVE: dict[Run, asyncio.Task[None]] = {}


@dataclasses.dataclass(frozen=True)
class Terms:
    """What a run holds and how long it may take."""

    lease_owner: str
    lease_seconds: float
    # Loop time (`loop.time()`) at which the agent is stopped and the task ends FAILED with
    # `deadline_text`; None: no limit (the container runs agents as long as they take).
    deadline: float | None = None
    deadline_text: str = ""


def recording(context: RequestContext, stored: StoredTask | None
              ) -> tuple[pb.Task, list[pb.StreamResponse]]:
    """The snapshot and events that record the user's message: a new task (SUBMITTED, the
    message in its history) or the message appended to `stored`. The runner writes them with
    the agent's first events; in queue mode the front door writes them alone."""
    snapshot = pb.Task()
    if stored is None:
        # Built inside its event: constructor arguments would each be copied in.
        event = pb.StreamResponse()
        first = event.task
        first.id, first.context_id = context.task_id, context.context_id
        first.status.state = pb.TASK_STATE_SUBMITTED
        first.status.timestamp.CopyFrom(now())
        first.history.append(context.message)
        events = [event]
    else:
        snapshot.CopyFrom(stored.task)
        events = [pb.StreamResponse(message=context.message)]
    for event in events:
        apply_event(snapshot, event)
    return snapshot, events


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


@dataclasses.dataclass(frozen=True)
class Started:
    """The task exists; `stored` is its latest snapshot as written."""

    stored: StoredTask


@dataclasses.dataclass(frozen=True)
class Replied:
    """The agent answered with one message and no task."""

    message: pb.Message


@dataclasses.dataclass(frozen=True)
class Duplicate:
    """The caller already sent this message id; `task_id` is the task it created or continued."""

    task_id: str


Outcome = Started | Replied | Duplicate


class Run:
    """One execution of an agent for one task (new or continued).

    `start()` launches the agent in the run's own asyncio task, so a client that goes away
    never cancels the work. `first_snapshot` is what a stream shows first; `events()` yields
    the persisted events after it."""

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
        push_configs: Sequence[pb.TaskPushNotificationConfig] = (),
    ) -> None:
        """`recorded`: the message is already in `stored` (a queue worker runs a task the
        front door wrote), so the run starts from the stored task as it is. `push_configs`
        are stored with a new task (its first write)."""
        self._store = store
        self._agent = agent
        self._context = context
        self._scope = context.caller
        self._claim = claim  # the message's idempotency key, claimed with the first write
        self._push_configs = push_configs
        self._stored = stored  # what the store holds; None until the task is created
        self._terms = terms
        self._recorded = recorded
        self.snapshot = pb.Task()
        if recorded:
            assert stored is not None, "a recorded message belongs to a stored task"
            self.snapshot.CopyFrom(stored.task)
            self._pending: list[pb.StreamResponse] = []
        else:
            self.snapshot, self._pending = recording(context, stored)
        self.first_snapshot = pb.Task()
        self.first_snapshot.CopyFrom(self.snapshot)
        # How the run ended for its caller, when not with a stored task.
        self._reply: pb.Message | None = None
        self._duplicate_of: str | None = None
        self._error: A2AError | None = None
        self._canceled = False
        self._stopping = False
        self._closing = False  # the agent returned; the writer drains what is pending
        self._settled = False  # this run stored a terminal or interrupted state
        self._catch_up_lock = asyncio.Lock()
        self._seen_seq = 0 if stored is None else stored.last_seq
        self._written: list[pb.StreamResponse] = []  # persisted events, for events()
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
        self._failure: A2AError | None = None  # the store failed after the task existed
        self._writing = False  # a write is in flight

    @property
    def _reported_nothing(self) -> bool:
        """No task exists yet and the agent reported nothing beyond the first snapshot."""
        return self._stored is None and len(self._pending) == 1

    # --- TaskSink, called by TaskHandle ------------------------------------------------------

    @property
    def canceled(self) -> bool:
        return self._canceled

    def emit(self, event: pb.StreamResponse) -> None:
        if self._reply is not None:
            raise InvalidAgentResponseError("the agent already replied with a message")
        if event.HasField("status_update"):
            event.status_update.status.timestamp.CopyFrom(now())
        apply_event(self.snapshot, event)  # raises into the agent on an invalid transition
        self._pending.append(event)
        self._dirty.set()

    def reply(self, message: pb.Message) -> None:
        if self._recorded and not self._pending and not self._written:
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
        while self._stored is None and not self._done:
            await self._next_change()
        return self._outcome()

    async def settled(self, budget: float | None) -> Outcome:
        """The outcome once the task is terminal or interrupted, the run ended, or `budget`
        ran out (then the task as it stands)."""
        deadline = None if budget is None else asyncio.get_running_loop().time() + budget
        while not self._done and not self._settled:
            if not await self._next_change(deadline):
                break
        if self._failure is not None and not self._settled:
            raise self._failure
        return self._outcome()

    def _outcome(self) -> Outcome:
        if self._duplicate_of is not None:
            return Duplicate(self._duplicate_of)
        if self._stored is not None:
            return Started(self._stored)
        if self._reply is not None:
            return Replied(self._reply)
        if self._error is not None:
            raise self._error
        # started() only returns once the task exists or the run is done, and a finished run
        # without a task always has a reply or an error.
        raise InternalError("the run ended without a task")  # pragma: no cover

    async def events(self, budget: float | None = None) -> AsyncIterator[pb.StreamResponse]:
        """Status and artifact events as persisted, in order, until the run ends or the budget
        runs out. Events other writers added (a cancel) are included. Raises the store's
        error (UnavailableError) when a write failed after the task existed."""
        deadline = None if budget is None else asyncio.get_running_loop().time() + budget
        index = 0
        while True:
            while index < len(self._written):
                event = self._written[index]
                index += 1
                if event.HasField("status_update") or event.HasField("artifact_update"):
                    yield event
            if self._failure is not None and index == len(self._written):
                raise self._failure
            if self._done or not await self._next_change(deadline):
                return

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
                    self._error = exc  # raised before reporting anything: the caller gets it
                else:
                    self._fail_safely(exc.message)
            except Exception:
                log.exception("agent failed on task %s", self._context.task_id)
                self._fail_safely("The agent failed while working on this task")
            else:
                self._finish_contract()
            if self._watcher is not None:
                self._watcher.cancel()
            self._closing = True
            if self._writer is None:
                await self._write_pending()  # the agent finished in its first burst
            else:
                self._dirty.set()
                await self._writer
            await self._release()
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
        self._watcher = asyncio.create_task(self._watch())
        if self._terms.deadline is not None:
            self._timer = asyncio.get_running_loop().call_at(
                self._terms.deadline, self.cut, self._terms.deadline_text)

    def _finish_contract(self) -> None:
        """An agent must end in a terminal or interrupted state, or with a reply."""
        if self._stopping or self._reply is not None:
            return
        if self._reported_nothing:
            self._error = InvalidAgentResponseError("the agent reported nothing")
            return
        if not ends_stream(self.snapshot.status.state):
            self._fail_safely("The agent stopped before finishing the task")

    def _fail_safely(self, text: str) -> None:
        if self._stopping or self._reply is not None or is_terminal(
            self.snapshot.status.state
        ):
            return
        status = pb.TaskStatus(state=pb.TASK_STATE_FAILED)
        status.message.parts.add(text=text)
        status.message.message_id = f"{self._context.task_id}-failure"
        status.message.role = pb.ROLE_AGENT
        self.emit(status_event(self._task_id, self._context.context_id, status))

    @property
    def _task_id(self) -> str:
        return self._context.task_id

    def _lease(self, snapshot: pb.Task) -> Lease | None:
        """The lease a write of `snapshot` carries: none once the task is terminal or waits
        for the client (nobody runs it then), this run's renewed lease otherwise."""
        if ends_stream(snapshot.status.state):
            return None
        return lease_for(self._terms.lease_owner, self._terms.lease_seconds)

    async def _release(self) -> None:
        """Give the lease back when the run ends holding it without having written a state
        that clears it (a worker whose agent reported nothing on an interrupted task)."""
        stored = self._stored
        if (stored is None or stored.lease is None or self._failure is not None
                or stored.lease.owner != self._terms.lease_owner
                or not ends_stream(stored.task.status.state)):
            return
        try:
            self._stored = await self._store.update(self._scope, self._task_id, stored.version,
                                                    stored.task, [])
        except (VersionConflictError, A2AError):
            log.info("task %s: lease left to expire", self._task_id, exc_info=True)

    async def _write_loop(self) -> None:
        while True:
            await self._dirty.wait()
            self._dirty.clear()
            if not await self._write_pending():
                return
            if self._closing and not self._dirty.is_set():
                return

    async def _write_pending(self) -> bool:
        """Write everything pending; False when the store refused it (the run stops)."""
        if self._pending and self._reply is None and self._error is None:
            try:
                await self._flush()
            except A2AError as exc:
                self._abort(exc)
                return False
            except Exception as exc:
                log.exception("store write failed for task %s", self._context.task_id)
                self._abort(InternalError("The task store failed"))
                raise InternalError("The task store failed") from exc
        return True

    def _abort(self, error: A2AError) -> None:
        """The store refused a write: stop the agent. The caller gets the error: instead of
        the task if none exists yet, otherwise from `settled()` and `events()` (the task
        stays as last written, and its lease, no longer renewed, expires)."""
        if self._stored is None:
            self._error = error
        else:
            self._failure = error
        self._pending.clear()
        self._stop_agent()
        self._changed.set()

    async def _flush(self) -> None:
        """Write everything pending in one conditional write (retried on conflicts)."""

        async def attempt(number: int) -> None:
            if number and not await self._refold():
                return
            # A copy: the agent may report more while the write is in flight.
            batch = list(self._pending)
            snapshot = pb.Task()
            snapshot.CopyFrom(self.snapshot)
            lease = self._lease(snapshot)
            self._writing = True
            try:
                if self._stored is None:
                    stored = await self._store.create(self._scope, snapshot, batch,
                                                      self._claim, lease=lease,
                                                      push_configs=self._push_configs)
                else:
                    claim = self._claim if not self._written else None
                    stored = await self._store.update(self._scope, snapshot.id,
                                                      self._stored.version, snapshot, batch,
                                                      claim, lease=lease)
            except DuplicateMessageError as exc:
                self._duplicate_of = exc.task_id
                self._stop_agent()
                return
            finally:
                self._writing = False
            del self._pending[:len(batch)]
            self._stored = stored
            self._written.extend(batch)
            self._seen_seq = stored.last_seq
            self._settled = self._settled or (ends_stream(stored.task.status.state) and any(
                e.HasField("status_update") for e in batch))
            self._changed.set()

        await retry_on_conflict(attempt, lambda: InvalidAgentResponseError(
            "the task kept changing under the agent"))

    async def _refold(self) -> bool:
        """Rebuild the snapshot from the newer stored one plus every pending event.
        Returns False when the agent must stop (the task was canceled or ended elsewhere)."""
        current = await self._store.get(self._scope, self._context.task_id)
        if current is None:
            return False
        await self._catch_up(current)
        if is_terminal(current.task.status.state):
            self._ended_elsewhere(current)
            return False
        # No await from here to the write's copy: the fold sees every pending event.
        snapshot = pb.Task()
        snapshot.CopyFrom(current.task)
        for event in self._pending:
            apply_event(snapshot, event)
        self.snapshot = snapshot
        return True

    async def _catch_up(self, current: StoredTask) -> None:
        """Take in what other writers stored since our last write, so streams show it."""
        async with self._catch_up_lock:
            self._stored = current
            for stored_event in await self._store.events_after(
                self._scope, self._context.task_id, self._seen_seq
            ):
                if stored_event.seq > self._seen_seq:
                    self._written.append(stored_event.event)
                    self._seen_seq = stored_event.seq
        self._changed.set()

    def _ended_elsewhere(self, current: StoredTask) -> None:
        self._settled = True
        self._canceled = current.task.status.state == pb.TASK_STATE_CANCELED
        self.snapshot.CopyFrom(current.task)
        self._pending.clear()
        self._stop_agent()

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

    async def _watch(self) -> None:
        """Renew the lease every third of its length and re-read the task every
        `poll_interval` in between: a task another process ended (CancelTask; a reader that
        found our lease expired while we were frozen) stops the agent. The renewal is one
        conditional write that returns the task, so it stands in for one of those reads."""
        loop = asyncio.get_running_loop()
        renew_every = self._terms.lease_seconds / 3
        # From the agent's start, not this task's: a first burst that held the loop for long
        # (synchronous work) aged a lease the task already held (a worker's, a continued
        # task's), and the renewal is due that much sooner.
        renewed_at = self._began
        while True:
            await asyncio.sleep(min(self._store.poll_interval, renew_every))
            stored = self._stored
            if stored is None:
                continue
            lost = False
            try:
                if stored.lease is not None and loop.time() - renewed_at >= renew_every * 0.9:
                    try:
                        current: StoredTask | None = await self._store.swap_lease(
                            self._scope, self._task_id, self._terms.lease_owner,
                            lease_for(self._terms.lease_owner, self._terms.lease_seconds))
                        renewed_at = loop.time()
                    except LeaseLostError as exc:
                        current, lost = exc.current, True
                else:
                    current = await self._store.get(self._scope, self._task_id)
            except A2AError:
                # The store is away: keep trying. Past the lease a reader may end the task;
                # our next write then conflicts and stops the agent.
                log.warning("task %s: lease renewal or cancel watch failed", self._task_id,
                            exc_info=True)
                continue
            if current is None or self._ended_by_another(current, lost):
                if current is not None:
                    await self._catch_up(current)
                    self._ended_elsewhere(current)
                else:
                    self._stop_agent()
                return

    def _ended_by_another(self, current: StoredTask, lease_lost: bool) -> bool:
        """Whether `current` shows the task taken from this run. A CANCELED state always
        counts: the agent's own writes never cancel. Another end, or a lease lost to
        nobody, counts only while no write of ours is in flight, which could be it."""
        if current.task.status.state == pb.TASK_STATE_CANCELED:
            return True
        if self._writing or self._stored is None or current.version == self._stored.version:
            return False
        return is_terminal(current.task.status.state) or (
            lease_lost and not ends_stream(current.task.status.state))
