"""In-process delivery (`A2A_PUSH_DELIVERY=inline`: `./dev serve`, the container without the
stream dispatcher): an observer of the store this process writes through
(`TaskStore.observe`) hands every event the store committed to the dispatcher, in the
background, in order per task.

It is the same feed the stream gives the dispatcher Lambda on AWS (each stored event, after
its write committed, with its sequence number), only without the stream: events written by
other processes are theirs to deliver, and deliveries still pending when the process ends
are lost (the embedded store is lost with it anyway).
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Sequence

from a2akit.generated import a2a_pb2 as pb
from a2akit.push.dispatcher import Delivery, Dispatcher
from a2akit.store.base import Scope, StoredTask
from a2akit.trace import current_traceparent

__all__ = ["InlineDelivery"]

log = logging.getLogger("a2akit.push")

CLOSE_GRACE_SECONDS = 5.0


class InlineDelivery:
    """One background task per task with events waiting, so each task's events go out in
    order while tasks proceed independently; the task ends when its queue is empty.
    `observe` is the store's write observer."""

    def __init__(self, dispatcher: Dispatcher) -> None:
        self.dispatcher = dispatcher
        self._queues: dict[tuple[Scope, str], collections.deque[Delivery]] = {}
        self._workers: set[asyncio.Task[None]] = set()

    def observe(self, scope: Scope, stored: StoredTask,
                events: Sequence[pb.StreamResponse]) -> None:
        """A committed write (a refused one is never observed): deliver its events."""
        first = stored.last_seq - len(events) + 1
        # Called in the writer's context: its trace, as the stream feed reads it from the
        # event items (a task's background worker keeps the context of whoever started it).
        traceparent = current_traceparent()
        deliveries = []
        for offset, event in enumerate(events):
            copy = pb.StreamResponse()
            copy.CopyFrom(event)  # the writer may reuse its objects
            deliveries.append(Delivery(scope, stored.task.id, first + offset, copy,
                                       traceparent))
        self.submit(deliveries)

    def submit(self, deliveries: Sequence[Delivery]) -> None:
        if not deliveries:
            return
        key = (deliveries[0].scope, deliveries[0].task_id)
        queue = self._queues.get(key)
        if queue is not None:  # its worker is running and will get to them
            queue.extend(deliveries)
            return
        self._queues[key] = collections.deque(deliveries)
        worker = asyncio.get_running_loop().create_task(self._work(key))
        self._workers.add(worker)
        worker.add_done_callback(self._workers.discard)

    async def _work(self, key: tuple[Scope, str]) -> None:
        queue = self._queues[key]
        try:
            while queue:
                delivery = queue[0]
                try:
                    await self.dispatcher.dispatch(delivery)
                except Exception:
                    # The store or the dead-letter queue failed: nobody would offer the event
                    # again in process, so say so loudly and go on with the next one.
                    log.exception("push: task %s event %d could not be dispatched",
                                  delivery.task_id, delivery.seq)
                queue.popleft()
        finally:
            del self._queues[key]

    async def drain(self, timeout: float) -> int:
        """Wait up to `timeout` seconds for pending deliveries, then cancel the rest (before
        a Lambda-style loop stops running between invocations, or at shutdown); returns how
        many tasks still had deliveries pending."""
        pending = set(self._workers)
        if pending:
            _, pending = await asyncio.wait(pending, timeout=timeout)
        for worker in pending:
            worker.cancel()
        if pending:
            await asyncio.wait(pending)
            log.warning("push: %d task(s) had deliveries still pending; dropped", len(pending))
        return len(pending)

    async def close(self) -> None:
        """Give pending deliveries a few seconds, then close the dispatcher's connections."""
        await self.drain(CLOSE_GRACE_SECONDS)
        await self.dispatcher.aclose()
