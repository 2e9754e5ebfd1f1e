"""Optimistic concurrency, one place: read, fold, write conditionally, retry on conflict.

A writer reads the task, folds its events onto what it read through the state machine and
writes conditionally on the version it read. When another writer got there first the store
raises VersionConflictError, and the attempt runs again from a fresh read. CancelTask, a
lost lease's settlement, failing a task and queueing a message to an existing task all
write through `fold_write`; the runner, which re-folds its own pending events, uses
`retry_on_conflict` directly. So a cancel and a working agent never lose each other's events.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from a2akit import metrics, telemetry
from a2akit.generated import a2a_pb2 as pb
from a2akit.states import apply_event, is_terminal
from a2akit.store.base import Lease, Scope, StoredTask, TaskStore, VersionConflictError

__all__ = ["MAX_CONFLICT_RETRIES", "Change", "fold_write", "retry_on_conflict"]

MAX_CONFLICT_RETRIES = 20
# A retry after a conflict waits a random time up to this, doubling, so two writers that
# collided (say two cancels of one task) do not collide again in lockstep.
_FIRST_BACKOFF = 0.005
_MAX_BACKOFF = 0.1
T = TypeVar("T")


async def retry_on_conflict(attempt: Callable[[int], Awaitable[T]],
                            exhausted: Callable[[], Exception]) -> T:
    """Await `attempt(n)` (n = 0, 1, ...) until it does not raise VersionConflictError.

    Each attempt after the first must start from a fresh read; from the third on it waits
    a jittered, growing moment first. After MAX_CONFLICT_RETRIES conflicts, raise
    `exhausted()`: the task keeps changing faster than we can write."""
    for number in range(MAX_CONFLICT_RETRIES):
        if number > 1:
            await asyncio.sleep(random.uniform(0, min(_MAX_BACKOFF,
                                                      _FIRST_BACKOFF * 2 ** (number - 2))))
        try:
            return await attempt(number)
        except VersionConflictError:
            metrics.count(metrics.CONFLICTS)
            continue
    raise exhausted()


@dataclasses.dataclass(frozen=True)
class Change:
    """What one write adds to a task: events to fold in and store, the lease the snapshot
    then holds (None: none), a message id to claim, and `lease_expired_by` (epoch ms: the
    write also requires the stored lease to have ended before then)."""

    events: Sequence[pb.StreamResponse]
    lease: Lease | None = None
    claim: str | None = None
    lease_expired_by: int | None = None


async def fold_write(store: TaskStore, scope: Scope, task_id: str,
                     decide: Callable[[StoredTask], Change | None],
                     exhausted: Callable[[], Exception], *,
                     read: StoredTask | None = None) -> StoredTask | None:
    """Read the task (the first attempt starts from `read` when given), ask `decide` what to
    write, fold its events into a copy of the snapshot and write it on the version read;
    after a conflict, read and decide again.

    Returns the task as written, as read when `decide` returns None (nothing to write), or
    None when the task does not exist. What `decide` raises (a refusal) propagates, and so
    does `exhausted()` after MAX_CONFLICT_RETRIES conflicts."""

    async def attempt(number: int) -> StoredTask | None:
        current = read if number == 0 and read is not None else await store.get(scope, task_id)
        if current is None:
            return None
        change = decide(current)
        if change is None:
            return current
        task = pb.Task()
        task.CopyFrom(current.task)
        for event in change.events:
            apply_event(task, event)
        with telemetry.NOTHING if telemetry.off else telemetry.span("a2a.store.write"):
            written = await store.update(scope, task_id, current.version, task, change.events,
                                         change.claim, lease=change.lease,
                                         lease_expired_by=change.lease_expired_by)
        if is_terminal(task.status.state) and not is_terminal(current.task.status.state):
            metrics.task_ended(task.status.state)
        return written

    return await retry_on_conflict(attempt, exhausted)
