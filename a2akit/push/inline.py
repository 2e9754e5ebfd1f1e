"""In-process delivery (`A2A_PUSH_DELIVERY=inline`: `./dev serve`, the container without the
stream dispatcher): the store this process writes through hands every event it stored to
the dispatcher, in the background, in order per task.

It is the same feed the stream gives the dispatcher Lambda on AWS (each stored event, after
its write committed, with its sequence number), only without the stream: events written by
other processes are theirs to deliver, and deliveries still pending when the process ends
are lost (the embedded store is lost with it anyway).
"""

from __future__ import annotations

import asyncio
import builtins
import collections
import logging
from collections.abc import Sequence

from a2akit.generated import a2a_pb2 as pb
from a2akit.push.dispatcher import Delivery, Dispatcher
from a2akit.store.base import (
    Lease,
    Scope,
    StoredEvent,
    StoredTask,
    TaskPage,
    TaskQuery,
    TaskStore,
)

__all__ = ["DeliveringStore", "InlineDelivery"]

log = logging.getLogger("a2akit.push")

CLOSE_GRACE_SECONDS = 5.0


class InlineDelivery:
    """One background task per task with events waiting, so each task's events go out in
    order while tasks proceed independently; the task ends when its queue is empty."""

    def __init__(self, dispatcher: Dispatcher) -> None:
        self.dispatcher = dispatcher
        self._queues: dict[tuple[Scope, str], collections.deque[Delivery]] = {}
        self._workers: set[asyncio.Task[None]] = set()

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
        """Wait up to `timeout` seconds for pending deliveries, then cancel the rest;
        returns how many tasks still had deliveries pending."""
        pending = set(self._workers)
        if pending:
            _, pending = await asyncio.wait(pending, timeout=timeout)
        for worker in pending:
            worker.cancel()
        if pending:
            await asyncio.wait(pending)
        return len(pending)


class DeliveringStore(TaskStore):
    """A store that hands each event it wrote to an `InlineDelivery` once the write has
    committed (a refused write delivers nothing). Everything else is the wrapped store's."""

    def __init__(self, store: TaskStore, delivery: InlineDelivery) -> None:
        self.inner = store
        self.delivery = delivery
        self.poll_interval = store.poll_interval
        self.min_poll_interval = store.min_poll_interval

    def _written(self, scope: Scope, stored: StoredTask,
                 events: Sequence[pb.StreamResponse]) -> None:
        first = stored.last_seq - len(events) + 1
        deliveries = []
        for offset, event in enumerate(events):
            copy = pb.StreamResponse()
            copy.CopyFrom(event)  # the writer may reuse its objects
            deliveries.append(Delivery(scope, stored.task.id, first + offset, copy))
        self.delivery.submit(deliveries)

    async def create(self, scope: Scope, task: pb.Task, events: Sequence[pb.StreamResponse],
                     message_id: str | None = None, *, lease: Lease | None = None,
                     push_configs: Sequence[pb.TaskPushNotificationConfig] = ()
                     ) -> StoredTask:
        stored = await self.inner.create(scope, task, events, message_id, lease=lease,
                                         push_configs=push_configs)
        self._written(scope, stored, events)
        return stored

    async def update(self, scope: Scope, task_id: str, expected_version: int, task: pb.Task,
                     events: Sequence[pb.StreamResponse], message_id: str | None = None, *,
                     lease: Lease | None = None, lease_expired_by: int | None = None
                     ) -> StoredTask:
        stored = await self.inner.update(scope, task_id, expected_version, task, events,
                                         message_id, lease=lease,
                                         lease_expired_by=lease_expired_by)
        self._written(scope, stored, events)
        return stored

    async def get(self, scope: Scope, task_id: str) -> StoredTask | None:
        return await self.inner.get(scope, task_id)

    async def swap_lease(self, scope: Scope, task_id: str, expected_owner: str,
                         lease: Lease) -> StoredTask:
        return await self.inner.swap_lease(scope, task_id, expected_owner, lease)

    async def expired_leases(self, now_ms: int, limit: int) -> builtins.list[tuple[Scope, str]]:
        return await self.inner.expired_leases(now_ms, limit)

    async def events_after(self, scope: Scope, task_id: str, seq: int) -> list[StoredEvent]:
        return await self.inner.events_after(scope, task_id, seq)

    async def wait_events(self, scope: Scope, task_id: str, seq: int,
                          timeout: float) -> builtins.list[StoredEvent]:
        return await self.inner.wait_events(scope, task_id, seq, timeout)

    async def find_message(self, scope: Scope, message_id: str) -> str | None:
        return await self.inner.find_message(scope, message_id)

    async def list(self, scope: Scope, query: TaskQuery) -> TaskPage:
        return await self.inner.list(scope, query)

    async def put_push_config(self, scope: Scope, config: pb.TaskPushNotificationConfig) -> None:
        await self.inner.put_push_config(scope, config)

    async def get_push_config(self, scope: Scope, task_id: str,
                              config_id: str) -> pb.TaskPushNotificationConfig | None:
        return await self.inner.get_push_config(scope, task_id, config_id)

    async def list_push_configs(self, scope: Scope,
                                task_id: str) -> builtins.list[pb.TaskPushNotificationConfig]:
        return await self.inner.list_push_configs(scope, task_id)

    async def delete_push_config(self, scope: Scope, task_id: str, config_id: str) -> None:
        await self.inner.delete_push_config(scope, task_id, config_id)

    async def flush(self, timeout: float) -> None:
        left = await self.delivery.drain(timeout)
        if left:
            log.warning("push: %d task(s) had deliveries still pending; dropped", left)

    async def close(self) -> None:
        """Give pending deliveries a few seconds, then close the wrapped store."""
        left = await self.delivery.drain(CLOSE_GRACE_SECONDS)
        if left:
            log.warning("push: %d task(s) had deliveries pending at shutdown", left)
        await self.delivery.dispatcher.aclose()
        await self.inner.close()

    def after_restore(self) -> None:
        self.inner.after_restore()
