"""The write side of a run: what the agent reported, folded and written to the store.

Events the agent reports in one burst (between two real awaits) are written together, in
one conditional write: an echo agent costs a single write. Each write is conditional on the
version read; on a conflict the writer re-reads, takes in what other writers stored
(`catch_up`, so streams show it), re-folds its pending events onto the newer snapshot
through the state machine, and tries again (`retry_on_conflict`), so no writer loses
another's update. A task that another process ended (a cancel) stops the agent instead.

Every write carries the run's lease (`Terms`); a write into a terminal or interrupted state
clears it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence

from a2akit import metrics, telemetry
from a2akit.clock import epoch_ms, now, timestamp_ms
from a2akit.errors import (
    A2AError,
    InternalError,
    InvalidAgentResponseError,
    UnsupportedOperationError,
)
from a2akit.execution.fold import retry_on_conflict
from a2akit.execution.leases import lease_for, wait_lease
from a2akit.execution.outcomes import Terms
from a2akit.generated import a2a_pb2 as pb
from a2akit.states import apply_event, ends_stream, is_terminal, status_event
from a2akit.store.base import (
    DuplicateMessageError,
    Lease,
    PushTarget,
    Scope,
    StoredTask,
    TaskStore,
    VersionConflictError,
)

__all__ = ["TaskWriter"]

log = logging.getLogger("a2akit.runner")


class TaskWriter:
    """One task's writes for one run. `on_change` is called whenever what a caller of the
    run can see changed; `on_stop` when the agent must stop (the task ended elsewhere, the
    message id was a duplicate, the store refused a write)."""

    def __init__(self, store: TaskStore, scope: Scope, task_id: str, terms: Terms, *,
                 stored: StoredTask | None, snapshot: pb.Task,
                 pending: list[pb.StreamResponse], claim: str | None,
                 push_configs: Sequence[PushTarget],
                 on_change: Callable[[], None], on_stop: Callable[[], None]) -> None:
        self.store = store
        self.scope = scope
        self.task_id = task_id
        self.terms = terms
        self.stored = stored  # what the store holds; None until the task is created
        self.snapshot = snapshot  # the stored task with every pending event folded in
        self.pending = pending
        self.written: list[pb.StreamResponse] = []  # persisted events, for Run.events()
        self.writing = False  # a write is in flight
        self.held = False  # the run ended without a task (a reply, an early error)
        self.settled = False  # a terminal or interrupted state is stored
        self.canceled = False  # another process canceled the task
        self.duplicate_of: str | None = None  # the message id was already used for this task
        self.error: A2AError | None = None  # the store refused the task's first write
        self.failure: A2AError | None = None  # the store failed after the task existed
        # The task ended elsewhere before this run's first write took the caller's message
        # (a racing turn completed it): the caller gets this error, never a 200 for a
        # message the task does not hold.
        self.refused: A2AError | None = None
        self._turn_unwritten = stored is not None and bool(pending)
        self._claim = claim  # the message's idempotency key, claimed with the first write
        self._push_configs = push_configs  # stored with a new task
        self._seen_seq = 0 if stored is None else stored.last_seq
        self._catch_up_lock = asyncio.Lock()
        self._on_change = on_change
        self._on_stop = on_stop
        # When the task's run began, for TaskDuration: the status it had then (SUBMITTED's
        # time for a new task, also one the door queued).
        status = snapshot.status
        self._began_ms = timestamp_ms(status.timestamp) if status.HasField("timestamp") else None

    def add(self, event: pb.StreamResponse) -> None:
        """Fold an event the agent reported (raises on an invalid transition) and queue it."""
        apply_event(self.snapshot, event)
        self.pending.append(event)

    async def write_pending(self) -> bool:
        """Write everything pending; False when the store refused it (the run stops)."""
        if self.pending and not self.held:
            try:
                await self._flush()
            except A2AError as exc:
                self._abort(exc)
                return False
            except Exception as exc:
                log.exception("store write failed for task %s", self.task_id)
                self._abort(InternalError("The task store failed"))
                raise InternalError("The task store failed") from exc
        return True

    def _abort(self, error: A2AError) -> None:
        """The store refused a write: stop the agent. The caller gets the error: instead of
        the task if none exists yet, otherwise from `settled()` and `events()` (the task
        stays as last written, and its lease, no longer renewed, expires)."""
        if self.stored is None:
            self.error = error
            self.held = True
        else:
            self.failure = error
        self.pending.clear()
        self._on_stop()
        self._on_change()

    def _lease(self, snapshot: pb.Task) -> Lease | None:
        """The lease a write of `snapshot` carries: none once the task is terminal, a wait
        lease while it waits for the client (nobody runs it then; `leases`), this run's
        renewed lease otherwise: the one it last wrote while that still has two thirds of the
        lease to run (the renewals, every third, extend it), so a burst of writes does not
        move the task in the lease index on each one (2 index write units each)."""
        state = snapshot.status.state
        if is_terminal(state):
            return None
        if ends_stream(state):
            return wait_lease(self.terms.input_wait_seconds)
        held = self.stored.lease if self.stored is not None else None
        if (held is not None and held.owner == self.terms.lease_owner
                and held.until_ms - epoch_ms() >= self.terms.lease_seconds * 2000 / 3):
            return held
        return lease_for(self.terms.lease_owner, self.terms.lease_seconds)

    async def _flush(self) -> None:
        """Write everything pending in one conditional write (retried on conflicts)."""

        async def attempt(number: int) -> None:
            if number and not await self._refold():
                return
            # A copy: the agent may report more while the write is in flight.
            batch = list(self.pending)
            snapshot = pb.Task()
            snapshot.CopyFrom(self.snapshot)
            lease = self._lease(snapshot)
            self.writing = True
            try:
                with telemetry.NOTHING if telemetry.off else telemetry.span("a2a.store.write"):
                    if self.stored is None:
                        stored = await self.store.create(
                            self.scope, snapshot, batch, self._claim, lease=lease,
                            push_configs=self._push_configs, quota=self.terms.quota)
                    else:
                        claim = self._claim if not self.written else None
                        stored = await self.store.update(self.scope, snapshot.id,
                                                         self.stored.version, snapshot, batch,
                                                         claim, lease=lease)
            except DuplicateMessageError as exc:
                self.duplicate_of = exc.task_id
                self._on_stop()
                return
            except VersionConflictError as exc:
                if exc.cancel_requested:
                    # Stop the agent now, not after the re-read: the re-fold then ends the
                    # task CANCELED with what is pending (`cancel_requested`).
                    self._on_stop()
                raise
            finally:
                self.writing = False
            del self.pending[:len(batch)]
            self._turn_unwritten = False
            self.stored = stored
            self.written.extend(batch)
            self._seen_seq = stored.last_seq
            self.settled = self.settled or (ends_stream(stored.task.status.state) and any(
                e.HasField("status_update") for e in batch))
            state = stored.task.status.state
            if is_terminal(state):  # a write only ends an unfinished task: once per task
                metrics.task_ended(state, self._began_ms)
            self._on_change()

        await retry_on_conflict(attempt, lambda: InvalidAgentResponseError(
            "the task kept changing under the agent"))

    async def _refold(self) -> bool:
        """Rebuild the snapshot from the newer stored one plus every pending event.
        Returns False when the agent must stop (the task was canceled or ended elsewhere)."""
        current = await self.store.get(self.scope, self.task_id)
        if current is None:
            return False
        await self.catch_up(current)
        if is_terminal(current.task.status.state):
            self.ended_elsewhere(current)
            return False
        # No await from here to the write's copy: the fold sees every pending event.
        snapshot = pb.Task()
        snapshot.CopyFrom(current.task)
        for event in self.pending:
            apply_event(snapshot, event)
        self.snapshot = snapshot
        if current.cancel_requested:
            self.cancel_requested()
        return True

    def cancel_requested(self) -> None:
        """A CancelTask asked for the task to end: the store now refuses our writes that
        leave it unfinished, so end it CANCELED with what is pending (nothing the agent
        reported is lost) and stop the agent."""
        if self.canceled or is_terminal(self.snapshot.status.state):
            return
        self.canceled = True
        self.add(status_event(self.task_id, self.snapshot.context_id, pb.TaskStatus(
            state=pb.TASK_STATE_CANCELED, timestamp=now())))
        self._on_stop()

    async def catch_up(self, current: StoredTask) -> None:
        """Take in what other writers stored since our last write, so streams show it."""
        async with self._catch_up_lock:
            self.stored = current
            for stored_event in await self.store.events_after(self.scope, self.task_id,
                                                              self._seen_seq):
                if stored_event.seq > self._seen_seq:
                    self.written.append(stored_event.event)
                    self._seen_seq = stored_event.seq
        self._on_change()

    def ended_elsewhere(self, current: StoredTask) -> None:
        """Another process ended the task (a cancel, a reader that found our lease expired):
        take its state and stop the agent."""
        self.settled = True
        self.canceled = current.task.status.state == pb.TASK_STATE_CANCELED
        if self._turn_unwritten:
            self.refused = UnsupportedOperationError(
                "The task ended before this message reached it and accepts no more messages",
                metadata={"taskId": self.task_id})
        self.snapshot.CopyFrom(current.task)
        self.pending.clear()
        self._on_stop()

    def vanished(self) -> None:
        """The task is gone from the store: stop the agent."""
        self._on_stop()

    async def release(self) -> None:
        """Give the lease back when the run ends holding it without having written a state
        that replaces it (a worker whose agent reported nothing on an interrupted task): the
        task then holds a wait lease."""
        stored = self.stored
        if (stored is None or stored.lease is None or self.failure is not None
                or stored.lease.owner != self.terms.lease_owner
                or not ends_stream(stored.task.status.state)):
            return
        try:
            self.stored = await self.store.update(self.scope, self.task_id, stored.version,
                                                  stored.task, [],
                                                  lease=self._lease(stored.task))
        except (VersionConflictError, A2AError):
            log.info("task %s: lease left to expire", self.task_id, exc_info=True)
