"""Leases: who runs a task's agent, and what happens when nobody does any more.

Whoever runs an agent (a front door in inline mode, the gRPC container, a queue worker)
holds a lease on the task and renews it while the agent works (`a2akit.runner`); a task
waiting on the queue holds a lease owned by the queue, for `queue_grace_seconds`. The rule,
in this one place:

    A task that is not terminal and whose lease ended before now has lost its runner. It
    ends FAILED, with a status message saying why, by a write conditional on the version
    read AND on the lease still being over at write time: a renewal that lands first wins,
    so a live runner is never overridden.

Readers apply it when they meet such a task (GetTask, SubscribeToTask, ListTasks, a
redelivered queue message), and so does the sweeper (`sweep`), which finds expired leases
through the store's lease index instead of reading every task.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time

from a2akit.clock import now
from a2akit.conflicts import retry_on_conflict
from a2akit.errors import A2AError, UnavailableError
from a2akit.generated import a2a_pb2 as pb
from a2akit.states import apply_event, is_terminal, status_event
from a2akit.store.base import Lease, Scope, StoredTask, TaskStore

__all__ = [
    "QUEUE_PREFIX",
    "RUNNER_PREFIX",
    "epoch_ms",
    "fail",
    "lease_for",
    "lost",
    "queue_owner",
    "runner_owner",
    "settle",
    "sweep",
    "sweep_periodically",
]

log = logging.getLogger("a2akit.leases")

QUEUE_PREFIX = "queue#"
RUNNER_PREFIX = "run#"
_PROCESS = f"{socket.gethostname()}#{os.getpid()}"

RUNNER_STOPPED = ("The agent's runner stopped before the task finished: its lease expired "
                  "without being renewed (the process died, froze or lost the task store)")
NEVER_PICKED_UP = ("No worker took the task from the queue before its queue lease expired; "
                   "the agent never ran")


def epoch_ms() -> int:
    return time.time_ns() // 1_000_000


def runner_owner() -> str:
    """A lease owner for one run: the process and a random part (two runs never share one)."""
    return f"{RUNNER_PREFIX}{_PROCESS}#{os.urandom(6).hex()}"


def queue_owner() -> str:
    """The owner of a queued task's lease; the worker that takes the task swaps it for its own."""
    return f"{QUEUE_PREFIX}{os.urandom(16).hex()}"


def lease_for(owner: str, seconds: float) -> Lease:
    return Lease(owner, epoch_ms() + int(seconds * 1000))


def lost(stored: StoredTask, now_ms: int | None = None) -> bool:
    """Whether the task's runner is gone: not terminal, and its lease ended before now."""
    lease = stored.lease
    return (lease is not None and lease.until_ms < (epoch_ms() if now_ms is None else now_ms)
            and not is_terminal(stored.task.status.state))


def _reason(lease: Lease) -> str:
    return NEVER_PICKED_UP if lease.owner.startswith(QUEUE_PREFIX) else RUNNER_STOPPED


def _failed(stored: StoredTask, text: str, suffix: str) -> tuple[pb.Task, pb.StreamResponse]:
    task = pb.Task()
    task.CopyFrom(stored.task)
    status = pb.TaskStatus(state=pb.TASK_STATE_FAILED, timestamp=now())
    status.message.message_id = f"{task.id}-{suffix}"
    status.message.role = pb.ROLE_AGENT
    status.message.task_id = task.id
    status.message.context_id = task.context_id
    status.message.parts.add(text=text)
    event = status_event(task.id, task.context_id, status)
    apply_event(task, event)
    return task, event


async def settle(store: TaskStore, scope: Scope, stored: StoredTask) -> StoredTask:
    """The task as it stands, after ending it FAILED if its runner is gone (see the rule
    above). Raises what the store raises (UnavailableError) when it cannot write."""
    if not lost(stored):
        return stored
    task_id = stored.task.id

    async def attempt(number: int) -> StoredTask:
        current = stored if number == 0 else await store.get(scope, task_id)
        at = epoch_ms()
        if current is None or current.lease is None or not lost(current, at):
            return stored if current is None else current
        task, event = _failed(current, _reason(current.lease), "lease-expired")
        written = await store.update(scope, task_id, current.version, task, [event],
                                     lease_expired_by=at)
        log.warning("task %s ended FAILED: lease of %s expired at %d", task_id,
                    current.lease.owner, current.lease.until_ms)
        return written

    return await retry_on_conflict(attempt, lambda: UnavailableError(
        "The task kept changing while its expired lease was being settled"))


async def fail(store: TaskStore, scope: Scope, task_id: str, text: str,
               *, unless_held: bool = True) -> StoredTask | None:
    """End the task FAILED with `text` unless it is terminal (or, with `unless_held`, a live
    runner holds its lease: that runner, or its lease expiry, decides). Returns the task as
    it stands, None when it does not exist."""

    async def attempt(_: int) -> StoredTask | None:
        current = await store.get(scope, task_id)
        if current is None or is_terminal(current.task.status.state):
            return current
        lease = current.lease
        if (unless_held and lease is not None and lease.owner.startswith(RUNNER_PREFIX)
                and not lost(current)):
            return current
        task, event = _failed(current, text, "failure")
        return await store.update(scope, task_id, current.version, task, [event])

    return await retry_on_conflict(attempt, lambda: UnavailableError(
        "The task kept changing while it was being failed"))


async def sweep(store: TaskStore, *, limit: int = 100) -> int:
    """End FAILED every task whose lease expired (at most `limit` per call, oldest first);
    returns how many it ended. Safe to run in several processes at once: every write is
    conditional."""
    ended = 0
    for scope, task_id in await store.expired_leases(epoch_ms(), limit):
        try:
            stored = await store.get(scope, task_id)
            if stored is None:
                continue
            after = await settle(store, scope, stored)
        except A2AError:
            log.warning("sweeper could not settle task %s", task_id, exc_info=True)
            continue
        if after.version != stored.version and after.task.status.state == pb.TASK_STATE_FAILED:
            ended += 1
    await store.expire_finished(limit)  # retention whose setting failed (docs/store.md, TTL)
    return ended


async def sweep_periodically(store: TaskStore, interval: float) -> None:
    """`sweep` every `interval` seconds until cancelled (the container and the local server
    run it in process; on AWS a scheduled Lambda, handlers.sweeper, does)."""
    while True:
        await asyncio.sleep(interval)
        try:
            ended = await sweep(store)
        except A2AError:
            log.warning("lease sweep failed", exc_info=True)
            continue
        if ended:
            log.info("lease sweep ended %d task(s) FAILED", ended)
