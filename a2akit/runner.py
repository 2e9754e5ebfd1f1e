"""The inline runner: runs an agent for one task and turns what it reports into store writes.

Events the agent reports in one burst (between two real awaits) are written together, in
one conditional write: an echo agent costs a single write. Each write is conditional on the
version read; on a conflict the runner re-reads, re-folds its pending events onto the newer
snapshot through the state machine, and tries again (`retry_on_conflict`), so no writer loses
another's update. A CANCELED state written by any process stops the agent: its next write
conflicts, and a watcher re-reads the task every `store.poll_interval` seconds while the
agent is silent.

What a caller learns from a run is one `Outcome`: the task as stored (`Started`), the agent's
single reply message (`Replied`), or that the message id was already used (`Duplicate`). An
error the agent raised before reporting anything, or a store failure before the task
existed, is raised from `started()` / `settled()` instead.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncIterator

from a2akit.agent import Agent, RequestContext, TaskHandle
from a2akit.clock import now
from a2akit.conflicts import retry_on_conflict
from a2akit.errors import A2AError, InternalError, InvalidAgentResponseError
from a2akit.generated import a2a_pb2 as pb
from a2akit.states import apply_event, ends_stream, is_terminal, status_event
from a2akit.store.base import DuplicateMessageError, StoredTask, TaskStore

__all__ = ["Duplicate", "Outcome", "Replied", "Run", "Started"]

log = logging.getLogger("a2akit.runner")

# Background runs (returnImmediately) must be referenced somewhere, or they can be collected.
_BACKGROUND: set[asyncio.Task[None]] = set()


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

    `start()` launches the agent in its own asyncio task, so a client that goes away
    never cancels the work. `first_snapshot` is what a stream shows first; `events()` yields
    the persisted events after it."""

    def __init__(
        self,
        store: TaskStore,
        agent: Agent,
        context: RequestContext,
        *,
        stored: StoredTask | None,
        claim: str,
    ) -> None:
        self._store = store
        self._agent = agent
        self._context = context
        self._scope = context.caller
        self._claim = claim  # the message's idempotency key, claimed with the first write
        self._stored = stored  # what the store holds; None until the task is created
        self.snapshot = pb.Task()
        if stored is None:
            first = pb.Task(id=context.task_id, context_id=context.context_id,
                            status=pb.TaskStatus(state=pb.TASK_STATE_SUBMITTED, timestamp=now()))
            first.history.append(context.message)
            self._pending: list[pb.StreamResponse] = [pb.StreamResponse(task=first)]
        else:
            self.snapshot.CopyFrom(stored.task)
            self._pending = [pb.StreamResponse(message=context.message)]
        for event in self._pending:
            apply_event(self.snapshot, event)
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
        self._main_task: asyncio.Task[None] | None = None  # runs the agent, inline
        self._agent_running = False
        self._writer: asyncio.Task[None] | None = None  # only for agents past a first burst
        self._watcher: asyncio.Task[None] | None = None  # started once there is a task to watch

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
        task = self._main_task = asyncio.create_task(self._main())
        _BACKGROUND.add(task)
        task.add_done_callback(_BACKGROUND.discard)

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
        runs out. Events other writers added (a cancel) are included."""
        deadline = None if budget is None else asyncio.get_running_loop().time() + budget
        index = 0
        while True:
            while index < len(self._written):
                event = self._written[index]
                index += 1
                if event.HasField("status_update") or event.HasField("artifact_update"):
                    yield event
            if self._done or not await self._next_change(deadline):
                return

    async def _next_change(self, deadline: float | None = None) -> bool:
        self._changed.clear()
        if deadline is None:
            await self._changed.wait()
            return True
        try:
            # A timeout scope, not wait_for: no extra task per wait.
            async with asyncio.timeout_at(deadline):
                await self._changed.wait()
        except TimeoutError:
            return False
        return True

    # --- the run -------------------------------------------------------------------------------

    async def _main(self) -> None:
        handle = TaskHandle(self, self._context.task_id, self._context.context_id)
        main = asyncio.current_task()
        assert main is not None
        # The agent runs inline, in this task: no task of its own. Should it still be running
        # after its first burst (a real await), the callback below starts the writer (and
        # the watcher of a continued task); an agent that finishes in one burst (echo, most
        # one-shot agents) cancels it and gets one write, made by this task.
        first_burst = asyncio.get_running_loop().call_soon(self._start_writer)
        self._agent_running = True
        try:
            try:
                await self._agent.execute(self._context, handle)
            except asyncio.CancelledError:
                if not self._stopping:
                    raise
                main.uncancel()  # our own stop (`_stop_agent`), not the loop's
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
            finally:
                self._agent_running = False
                first_burst.cancel()
            if self._watcher is not None:
                self._watcher.cancel()
            self._closing = True
            if self._writer is None:
                await self._write_pending()
            else:
                self._dirty.set()
                await self._writer
        finally:
            if self._watcher is not None:
                self._watcher.cancel()
            if self._writer is not None:
                self._writer.cancel()
            self._done = True
            self._changed.set()

    def _start_writer(self) -> None:
        """The agent is still running after its first burst: write while it works."""
        self._writer = asyncio.create_task(self._write_loop())
        if self._stored is not None:
            self._start_watcher()  # a continued task can be canceled from the start

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
        self.emit(status_event(self._context.task_id, self._context.context_id, status))

    async def _write_loop(self) -> None:
        while True:
            await self._dirty.wait()
            self._dirty.clear()
            if not await self._write_pending():
                return
            if self._stored is not None and not self._closing:
                self._start_watcher()  # the task exists and the agent still runs
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

    def _start_watcher(self) -> None:
        if self._watcher is None:
            self._watcher = asyncio.create_task(self._watch_cancel())

    def _abort(self, error: A2AError) -> None:
        """The store refused a write: stop the agent; the caller gets the error if no task
        exists yet, otherwise the task stays as last written."""
        if self._stored is None:
            self._error = error
        self._pending.clear()
        self._stop_agent()

    async def _flush(self) -> None:
        """Write everything pending in one conditional write (retried on conflicts)."""

        async def attempt(number: int) -> None:
            if number and not await self._refold():
                return
            # A copy: the agent may report more while the write is in flight.
            batch = list(self._pending)
            snapshot = pb.Task()
            snapshot.CopyFrom(self.snapshot)
            try:
                if self._stored is None:
                    stored = await self._store.create(self._scope, snapshot, batch,
                                                      self._claim)
                else:
                    claim = self._claim if not self._written else None
                    stored = await self._store.update(self._scope, snapshot.id,
                                                      self._stored.version, snapshot, batch,
                                                      claim)
            except DuplicateMessageError as exc:
                self._duplicate_of = exc.task_id
                self._stop_agent()
                return
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
        # The agent runs inside the run's own task: cancel that task, once, and only while
        # it is in the agent (after, it is writing what the agent left).
        if not self._stopping and self._agent_running and self._main_task is not None:
            self._main_task.cancel()
        self._stopping = True

    async def _watch_cancel(self) -> None:
        while True:
            await asyncio.sleep(self._store.poll_interval)
            if self._stored is None:
                continue
            current = await self._store.get(self._scope, self._context.task_id)
            # Only CANCELED counts: the agent's own writes never cancel, so this cannot be
            # our own completed write seen before we recorded it.
            if current is not None and current.task.status.state == pb.TASK_STATE_CANCELED:
                await self._catch_up(current)
                self._ended_elsewhere(current)
                return
