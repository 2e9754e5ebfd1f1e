"""Following a task that runs elsewhere: its stored events, each once and in order.

SubscribeToTask, and SendMessage in queue mode, read what another process (the gRPC
container, a queue worker) writes. The store is polled adaptively (`TaskStore.wait_events`:
fast while events flow, backing off to `poll_interval` while idle; the embedded store
notifies instead). While nothing arrives the task is re-read as often as its runner renews
its lease (at least every `poll_interval`), and a task whose runner is gone is settled
(`a2akit.execution.leases`): its FAILED event then ends the stream instead of the budget.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from a2akit.execution.leases import renewal_interval, settle
from a2akit.generated import a2a_pb2 as pb
from a2akit.states import closes_stream
from a2akit.store.base import Scope, StoredTask, TaskStore

__all__ = ["follow"]


async def follow(store: TaskStore, scope: Scope, stored: StoredTask, budget: float | None,
                 *, lease_seconds: float) -> AsyncIterator[pb.StreamResponse]:
    """The status and artifact events written after `stored` (sequence `stored.last_seq`),
    until one closes the stream (a terminal or interrupted state) or `budget` seconds pass.
    A store error is raised, never turned into an end."""
    loop = asyncio.get_running_loop()
    check_every = max(renewal_interval(lease_seconds), store.poll_interval)
    deadline = None if budget is None else loop.time() + budget
    next_check = loop.time() + check_every
    seq = stored.last_seq
    while deadline is None or loop.time() < deadline:
        until = next_check if deadline is None else min(next_check, deadline)
        items = await store.wait_events(scope, stored.task.id, seq, max(until - loop.time(), 0))
        for item in items:
            seq = item.seq
            event = item.event
            if event.HasField("artifact_update") or event.HasField("status_update"):
                yield event
                if closes_stream(event):
                    return
        if not items and loop.time() >= next_check:
            current = await store.get(scope, stored.task.id)
            if current is None:
                return
            await settle(store, scope, current)
            next_check = loop.time() + check_every
