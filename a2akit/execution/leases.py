"""Leases: who runs a task's agent, and what happens when nobody does any more.

Whoever runs an agent (a front door in inline mode, the gRPC container, a queue worker)
holds a lease on the task and renews it every `renewal_interval` while the agent works
(`a2akit.execution.watch`); a task
waiting on the queue holds a lease owned by the queue, for `queue_grace_seconds`. The rule,
in this one place:

    A task that is not terminal and whose lease ended before now has lost its runner. It
    ends FAILED, with a status message saying why, by a write conditional on the version
    read AND on the lease still being over at write time: a renewal that lands first wins,
    so a live runner is never overridden.

A task that waits for the client (input- or auth-required) is run by nobody; it holds a
*wait lease* (owner `wait#`) for `A2A_INPUT_WAIT_SECONDS` from the write that made it wait,
so it is found the same way. When that lease ends the client sent no new message in time:
the task ends CANCELED (not FAILED: nothing went wrong, the client went away), with a
status message saying so and naming the setting. A new message replaces the wait lease
with a runner's (or the queue's), so the wait counts from the last message.

Readers apply it when they meet such a task (GetTask, SubscribeToTask, ListTasks, a
redelivered queue message), and so does the sweeper (`sweep`), which finds expired leases
through the store's lease index instead of reading every task.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket

from a2akit import logs, metrics
from a2akit.clock import epoch_ms
from a2akit.errors import A2AError, UnavailableError
from a2akit.execution.fold import Change, fold_write
from a2akit.generated import a2a_pb2 as pb
from a2akit.settings import ENV
from a2akit.states import ended_event, is_terminal
from a2akit.store.base import Lease, Scope, StoredTask, TaskStore

__all__ = [
    "QUEUE_PREFIX",
    "RUNNER_PREFIX",
    "WAIT_PREFIX",
    "current",
    "fail",
    "lease_for",
    "lost",
    "queue_owner",
    "renewal_interval",
    "runner_owner",
    "settle",
    "sweep",
    "sweep_periodically",
    "wait_lease",
]

log = logging.getLogger("a2akit.leases")

QUEUE_PREFIX = "queue#"
RUNNER_PREFIX = "run#"
WAIT_PREFIX = "wait#"
_PROCESS = f"{socket.gethostname()}#{os.getpid()}"

RUNNER_STOPPED = ("The agent's runner stopped before the task finished: its lease expired "
                  "without being renewed (the process died, froze or lost the task store)")
WAITED_TOO_LONG = (f"The task waited for the client with no new message for longer than "
                   f"{ENV.INPUT_WAIT_SECONDS} allows; it is canceled")
NEVER_PICKED_UP = ("No worker took the task from the queue before its queue lease expired; "
                   "the agent never ran")


def runner_owner() -> str:
    """A lease owner for one run: the process and a random part (two runs never share one)."""
    return f"{RUNNER_PREFIX}{_PROCESS}#{os.urandom(6).hex()}"


def queue_owner() -> str:
    """The owner of a queued task's lease; the worker that takes the task swaps it for its own."""
    return f"{QUEUE_PREFIX}{os.urandom(16).hex()}"


def lease_for(owner: str, seconds: float) -> Lease:
    return Lease(owner, epoch_ms() + int(seconds * 1000))


def wait_lease(input_wait_seconds: float) -> Lease:
    """The lease of a task that now waits for the client: it ends the wait (see above)."""
    return lease_for(f"{WAIT_PREFIX}client", input_wait_seconds)


def renewal_interval(lease_seconds: float) -> float:
    """How often a runner renews its lease, and a follower re-reads a task for a lost one:
    every third of the lease, so two renewals may fail before it ends."""
    return lease_seconds / 3


def lost(state: int, lease: Lease | None, now_ms: int | None = None) -> bool:
    """Whether the runner of a task in `state` holding `lease` is gone: the task is not
    terminal, and its lease ended before now."""
    return (lease is not None and lease.until_ms < (epoch_ms() if now_ms is None else now_ms)
            and not is_terminal(state))


def _lost(stored: StoredTask, now_ms: int | None = None) -> bool:
    return lost(stored.task.status.state, stored.lease, now_ms)


def _failure(current: StoredTask, text: str, reason: str) -> pb.StreamResponse:
    return ended_event(current.task.id, current.task.context_id, pb.TASK_STATE_FAILED, text,
                       reason=reason)


def _expiry(current: StoredTask, lease: Lease) -> pb.StreamResponse:
    """How a task whose lease ended ends: CANCELED after a wait for the client, FAILED
    when its runner (or the queue) let it go."""
    if lease.owner.startswith(WAIT_PREFIX):
        return ended_event(current.task.id, current.task.context_id, pb.TASK_STATE_CANCELED,
                           WAITED_TOO_LONG, reason="input-wait-expired")
    text = NEVER_PICKED_UP if lease.owner.startswith(QUEUE_PREFIX) else RUNNER_STOPPED
    return _failure(current, text, "lease-expired")


async def settle(store: TaskStore, scope: Scope, stored: StoredTask) -> StoredTask:
    """The task as it stands, after ending it FAILED if its runner is gone (see the rule
    above). Raises what the store raises (UnavailableError) when it cannot write."""
    if not _lost(stored):
        return stored
    task_id = stored.task.id
    expired = False  # the last decision (the one written) ends the task for its lease

    def decide(current: StoredTask) -> Change | None:
        nonlocal expired
        at = epoch_ms()
        expired = current.lease is not None and _lost(current, at)
        if current.lease is None or not expired:
            return None
        log.warning("task %s: lease of %s expired at %d; ending it", task_id,
                    current.lease.owner, current.lease.until_ms)
        return Change([_expiry(current, current.lease)], lease_expired_by=at)

    settled = await fold_write(store, scope, task_id, decide, lambda: UnavailableError(
        "The task kept changing while its expired lease was being settled"), read=stored)
    if (expired and settled is not None
            and settled.task.status.state == pb.TASK_STATE_FAILED):
        metrics.count(metrics.LEASE_EXPIRED)
    return stored if settled is None else settled


async def current(store: TaskStore, scope: Scope, task_id: str) -> StoredTask | None:
    """The task as it stands now, settled (`settle`); None when it does not exist."""
    stored = await store.get(scope, task_id)
    return None if stored is None else await settle(store, scope, stored)


async def fail(store: TaskStore, scope: Scope, task_id: str, text: str,
               *, unless_held: bool = True) -> StoredTask | None:
    """End the task FAILED with `text` unless it is terminal (or, with `unless_held`, a live
    runner holds its lease: that runner, or its lease expiry, decides). Returns the task as
    it stands, None when it does not exist."""

    def decide(current: StoredTask) -> Change | None:
        if is_terminal(current.task.status.state):
            return None
        lease = current.lease
        if (unless_held and lease is not None and lease.owner.startswith(RUNNER_PREFIX)
                and not _lost(current)):
            return None
        return Change([_failure(current, text, "failure")])

    return await fold_write(store, scope, task_id, decide, lambda: UnavailableError(
        "The task kept changing while it was being failed"))


async def sweep(store: TaskStore, *, limit: int = 100) -> int:
    """End every task whose lease expired (at most `limit` per call, oldest first): FAILED,
    or CANCELED when it waited for the client too long; returns how many it ended. Safe to
    run in several processes at once: every write is conditional."""
    ended = 0
    for scope, task_id in await store.expired_leases(epoch_ms(), limit):
        logs.bind_caller(scope.tenant, scope.owner)
        logs.bind_task(task_id)
        try:
            stored = await store.get(scope, task_id)
            if stored is None:
                continue
            after = await settle(store, scope, stored)
        except A2AError:
            log.warning("sweeper could not settle task %s", task_id, exc_info=True)
            continue
        if after.version != stored.version and is_terminal(after.task.status.state):
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
        except A2AError as exc:
            # The store's error was logged where it happened: one line here, no traceback.
            log.warning("lease sweep failed: %s", exc.__cause__ or exc)
            continue
        if ended:
            log.info("lease sweep ended %d task(s)", ended)
