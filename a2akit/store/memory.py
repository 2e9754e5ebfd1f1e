"""The embedded store: the task store in process memory, for local runs and fast tests.

Messages are stored serialized, so what goes in and what comes out are always copies.
Writers notify waiters on whatever event loop they wait in (the local server runs the
JSON-RPC app and the gRPC server in one loop; test clients may use another thread).
"""

from __future__ import annotations

import asyncio
import builtins
import dataclasses
import threading
from collections.abc import Sequence

from a2akit.generated import a2a_pb2 as pb
from a2akit.store import cursor
from a2akit.store.base import (
    DuplicateMessageError,
    Scope,
    StoredEvent,
    StoredTask,
    TaskPage,
    TaskQuery,
    TaskStore,
    VersionConflictError,
)

__all__ = ["MemoryStore"]


@dataclasses.dataclass
class _Record:
    snapshot: bytes
    version: int
    events: list[bytes]
    position: cursor.Position  # taken under the store's lock: positions follow write order
    configs: dict[str, bytes] = dataclasses.field(default_factory=dict)


_Key = tuple[str, str, str]  # tenant, owner, id


class MemoryStore(TaskStore):
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tasks: dict[_Key, _Record] = {}
        self._messages: dict[_Key, str] = {}
        self._waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()

    async def get(self, scope: Scope, task_id: str) -> StoredTask | None:
        with self._lock:
            record = self._tasks.get(_key(scope, task_id))
            if record is None:
                return None
            return StoredTask(_task(record.snapshot), record.version, len(record.events))

    async def create(
        self,
        scope: Scope,
        task: pb.Task,
        events: Sequence[pb.StreamResponse],
        message_id: str | None = None,
    ) -> StoredTask:
        key = _key(scope, task.id)
        with self._lock:
            self._claim(scope, message_id, task.id)
            if key in self._tasks:
                raise VersionConflictError(task.id)
            record = _Record(task.SerializeToString(), 1, [e.SerializeToString() for e in events],
                             cursor.position(task))
            self._tasks[key] = record
            stored = StoredTask(_task(record.snapshot), 1, len(record.events))
        self._notify()
        return stored

    async def update(
        self,
        scope: Scope,
        task_id: str,
        expected_version: int,
        task: pb.Task,
        events: Sequence[pb.StreamResponse],
        message_id: str | None = None,
    ) -> StoredTask:
        with self._lock:
            record = self._tasks.get(_key(scope, task_id))
            if record is None or record.version != expected_version:
                raise VersionConflictError(task_id)
            self._claim(scope, message_id, task_id)
            record.snapshot = task.SerializeToString()
            record.version += 1
            record.events.extend(e.SerializeToString() for e in events)
            record.position = cursor.position(task)
            stored = StoredTask(_task(record.snapshot), record.version, len(record.events))
        self._notify()
        return stored

    def _claim(self, scope: Scope, message_id: str | None, task_id: str) -> None:
        if not message_id:
            return
        claimed = self._messages.get(_key(scope, message_id))
        if claimed is not None:
            raise DuplicateMessageError(claimed)
        self._messages[_key(scope, message_id)] = task_id

    async def events_after(self, scope: Scope, task_id: str, seq: int) -> list[StoredEvent]:
        with self._lock:
            record = self._tasks.get(_key(scope, task_id))
            raw = [] if record is None else record.events[seq:]
        return [StoredEvent(seq + i + 1, _event(data)) for i, data in enumerate(raw)]

    async def wait_events(
        self, scope: Scope, task_id: str, seq: int, timeout: float
    ) -> list[StoredEvent]:
        waiter = (asyncio.get_running_loop(), asyncio.Event())
        self._waiters.add(waiter)
        try:
            events = await self.events_after(scope, task_id, seq)
            if events:
                return events
            try:
                await asyncio.wait_for(waiter[1].wait(), timeout)
            except TimeoutError:
                return []
            return await self.events_after(scope, task_id, seq)
        finally:
            self._waiters.discard(waiter)

    def _notify(self) -> None:
        for loop, event in list(self._waiters):
            if not loop.is_closed():
                loop.call_soon_threadsafe(event.set)

    async def find_message(self, scope: Scope, message_id: str) -> str | None:
        with self._lock:
            return self._messages.get(_key(scope, message_id))

    async def list(self, scope: Scope, query: TaskQuery) -> TaskPage:
        after = cursor.decode(query.page_token) if query.page_token else None
        with self._lock:
            rows = [
                (record.position, record.snapshot)
                for key, record in self._tasks.items()
                if key[:2] == (scope.tenant, scope.owner)
            ]
        matches = []
        for position, raw in rows:
            task = _task(raw)
            if query.context_id and task.context_id != query.context_id:
                continue
            if query.state and task.status.state != query.state:
                continue
            if query.status_after_ms is not None and position.status_ms < query.status_after_ms:
                continue
            matches.append((position, task))
        matches.sort(key=lambda row: row[0], reverse=True)
        start = 0
        if after is not None:
            start = next((i for i, row in enumerate(matches) if row[0] < after), len(matches))
        page = matches[start:start + query.page_size]
        more = start + query.page_size < len(matches)
        token = cursor.encode(page[-1][0]) if more and page else ""
        return TaskPage([task for _, task in page], token, len(matches))

    async def put_push_config(self, scope: Scope, config: pb.TaskPushNotificationConfig) -> None:
        with self._lock:
            record = self._tasks.get(_key(scope, config.task_id))
            if record is not None:
                record.configs[config.id] = config.SerializeToString()

    async def get_push_config(
        self, scope: Scope, task_id: str, config_id: str
    ) -> pb.TaskPushNotificationConfig | None:
        with self._lock:
            record = self._tasks.get(_key(scope, task_id))
            raw = None if record is None else record.configs.get(config_id)
        return None if raw is None else pb.TaskPushNotificationConfig.FromString(raw)

    async def list_push_configs(
        self, scope: Scope, task_id: str
    ) -> builtins.list[pb.TaskPushNotificationConfig]:
        with self._lock:
            record = self._tasks.get(_key(scope, task_id))
            raws = [] if record is None else list(record.configs.values())
        return [pb.TaskPushNotificationConfig.FromString(raw) for raw in raws]

    async def delete_push_config(self, scope: Scope, task_id: str, config_id: str) -> None:
        with self._lock:
            record = self._tasks.get(_key(scope, task_id))
            if record is not None:
                record.configs.pop(config_id, None)


def _key(scope: Scope, item_id: str) -> _Key:
    return (scope.tenant, scope.owner, item_id)


def _task(raw: bytes) -> pb.Task:
    return pb.Task.FromString(raw)


def _event(raw: bytes) -> pb.StreamResponse:
    return pb.StreamResponse.FromString(raw)
