"""The embedded store: the task store in process memory, for local runs and fast tests.

Messages are stored serialized, so what goes in and what comes out are always copies.
Writers notify waiters on whatever event loop they wait in (the local server runs the
JSON-RPC app and the gRPC server in one loop; test clients may use another thread).

ListTasks reads ordered indexes, kept on every write: one sorted list of positions
(`cursor.Position`, oldest first) per scope, per (scope, context), per (scope, state) and per
(scope, context, state). Every query names exactly one of them, the status-time bound and the
page token are two bisections, so a page costs O(log n + page) and its totalSize O(log n),
and only the page's tasks are decoded.
"""

from __future__ import annotations

import asyncio
import bisect
import builtins
import dataclasses
import threading
from collections.abc import Iterator, Sequence

from a2akit.generated import a2a_pb2 as pb
from a2akit.service_params import SUPPORTED_VERSION
from a2akit.states import is_terminal
from a2akit.store import cursor
from a2akit.store.base import (
    DEFAULT_MAX_TASK_BYTES,
    DuplicateMessageError,
    Lease,
    LeaseLostError,
    PushTarget,
    Scope,
    StoredEvent,
    StoredTask,
    TaskPage,
    TaskQuery,
    TaskStore,
    VersionConflictError,
    quota_refused,
)

__all__ = ["MemoryStore"]


@dataclasses.dataclass
class _Record:
    snapshot: bytes
    version: int
    events: list[bytes]
    position: cursor.Position  # taken under the store's lock: positions follow write order
    context_id: str
    state: int
    lease: Lease | None = None
    # config id -> (the config, serialized; the generation that stored it: PushTarget)
    configs: dict[str, tuple[bytes, str]] = dataclasses.field(default_factory=dict)
    cancel_requested: bool = False
    counted: bool = False  # in its owner's count of unfinished tasks (the quota)

    def stored(self) -> StoredTask:
        return StoredTask(_task(self.snapshot), self.version, len(self.events), self.lease,
                          self.cancel_requested)


_Key = tuple[str, str, str]  # tenant, owner, id
_IndexKey = tuple[str, str, str, int]  # tenant, owner, context id ("" any), state (0 any)
# A position as a plain tuple (status ms, write ns, task id): the same order as
# `cursor.Position`, compared in C by bisect.
_Sort = tuple[int, int, str]


class MemoryStore(TaskStore):
    def __init__(self, *, max_task_bytes: int = DEFAULT_MAX_TASK_BYTES) -> None:
        self.max_task_bytes = max_task_bytes
        self._lock = threading.Lock()
        self._tasks: dict[_Key, _Record] = {}
        self._messages: dict[_Key, str] = {}
        self._indexes: dict[_IndexKey, list[_Sort]] = {}
        self._active: dict[str, int] = {}  # owner -> its counted unfinished tasks
        self._waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()

    async def get(self, scope: Scope, task_id: str) -> StoredTask | None:
        with self._lock:
            record = self._tasks.get(_key(scope, task_id))
            return None if record is None else record.stored()

    async def request_cancel(self, scope: Scope, task_id: str) -> StoredTask | None:
        with self._lock:
            record = self._tasks.get(_key(scope, task_id))
            if record is None:
                return None
            if not is_terminal(record.state):
                record.cancel_requested = True
            return record.stored()

    async def create(
        self,
        scope: Scope,
        task: pb.Task,
        events: Sequence[pb.StreamResponse],
        message_id: str | None = None,
        *,
        lease: Lease | None = None,
        push_configs: Sequence[PushTarget] = (),
        quota: int | None = None,
    ) -> StoredTask:
        key = _key(scope, task.id)
        raw, raw_events = task.SerializeToString(), [e.SerializeToString() for e in events]
        self.check_size(raw, raw_events)
        counted = quota is not None and not is_terminal(task.status.state)
        with self._lock:
            # Checked and counted under the lock, with the write: no burst gets past it.
            active = self._active.get(scope.owner, 0)
            if counted and quota is not None and active >= quota:
                # A message id already used still answers with its task, as on DynamoDB.
                claimed = self._messages.get(_key(scope, message_id or ""))
                if message_id and claimed is not None:
                    raise DuplicateMessageError(claimed)
                raise quota_refused(quota)
            self._claim(scope, message_id, task.id)
            if key in self._tasks:
                raise VersionConflictError(task.id)
            record = _Record(raw, 1, raw_events,
                             cursor.position(task), task.context_id, task.status.state,
                             _held(task, lease), counted=counted)
            if counted:
                self._active[scope.owner] = active + 1
            for target in push_configs:
                record.configs[target.config.id] = (target.config.SerializeToString(),
                                                    target.protocol_version)
            self._tasks[key] = record
            self._index(scope, record)
            stored = record.stored()
        self._notify()
        self._wrote(scope, stored, events)
        return stored

    async def update(
        self,
        scope: Scope,
        task_id: str,
        expected_version: int,
        task: pb.Task,
        events: Sequence[pb.StreamResponse],
        message_id: str | None = None,
        *,
        lease: Lease | None = None,
        lease_expired_by: int | None = None,
    ) -> StoredTask:
        raw, raw_events = task.SerializeToString(), [e.SerializeToString() for e in events]
        self.check_size(raw, raw_events)
        with self._lock:
            record = self._tasks.get(_key(scope, task_id))
            if record is None or record.version != expected_version:
                raise VersionConflictError(task_id)
            if lease_expired_by is not None and (
                record.lease is None or record.lease.until_ms >= lease_expired_by
            ):
                raise VersionConflictError(task_id)
            if record.cancel_requested and not is_terminal(task.status.state):
                raise VersionConflictError(task_id, cancel_requested=True)
            self._claim(scope, message_id, task_id)
            if record.counted and is_terminal(task.status.state):
                record.counted = False
                self._active[scope.owner] -= 1
            self._unindex(scope, record)
            record.snapshot = raw
            record.version += 1
            record.events.extend(raw_events)
            record.position = cursor.position(task)
            record.context_id, record.state = task.context_id, task.status.state
            record.lease = _held(task, lease)
            record.cancel_requested = False  # a write that ends the task answers it (others: above)
            self._index(scope, record)
            stored = record.stored()
        self._notify()
        self._wrote(scope, stored, events)
        return stored

    async def swap_lease(
        self, scope: Scope, task_id: str, expected_owner: str, lease: Lease
    ) -> StoredTask:
        with self._lock:
            record = self._tasks.get(_key(scope, task_id))
            if record is None or record.lease is None or record.lease.owner != expected_owner:
                raise LeaseLostError(task_id, None if record is None else record.stored())
            record.lease = lease
            return record.stored()

    async def expired_leases(self, now_ms: int, limit: int) -> builtins.list[tuple[Scope, str]]:
        with self._lock:
            expired = sorted(
                (record.lease.until_ms, key)
                for key, record in self._tasks.items()
                if record.lease is not None and record.lease.until_ms < now_ms
            )
        return [(Scope(tenant, owner), task_id) for _, (tenant, owner, task_id) in expired][:limit]

    async def active_tasks(self, owner: str) -> int:
        with self._lock:
            return self._active.get(owner, 0)

    def _index(self, scope: Scope, record: _Record) -> None:
        sort = _sort(record.position)
        for key in _index_keys(scope, record):
            bisect.insort(self._indexes.setdefault(key, []), sort)

    def _unindex(self, scope: Scope, record: _Record) -> None:
        sort = _sort(record.position)
        for key in _index_keys(scope, record):
            positions = self._indexes[key]
            del positions[bisect.bisect_left(positions, sort)]
            if not positions:
                del self._indexes[key]

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
            positions = self._indexes.get(
                (scope.tenant, scope.owner, query.context_id, query.state), [])
            low = 0
            if query.status_after_ms is not None:
                # Below every position of that millisecond: write stamps are never negative.
                low = bisect.bisect_left(positions, (query.status_after_ms, -1, ""))
            high = len(positions) if after is None else bisect.bisect_left(positions,
                                                                            _sort(after))
            start = max(low, high - query.page_size)
            page = positions[start:high][::-1]
            records = [self._tasks[_key(scope, task_id)] for _, _, task_id in page]
            raws = [record.snapshot for record in records]
            leases = {task_id: record.lease for (_, _, task_id), record in zip(page, records,
                                                                               strict=True)
                      if record.lease is not None}
            total = len(positions) - low
        token = cursor.encode(cursor.Position(*page[-1])) if start > low and page else ""
        return TaskPage([_task(raw) for raw in raws], token, total, leases)

    async def put_push_config(self, scope: Scope, config: pb.TaskPushNotificationConfig,
                              protocol_version: str = SUPPORTED_VERSION) -> None:
        with self._lock:
            record = self._tasks.get(_key(scope, config.task_id))
            if record is not None:
                record.configs[config.id] = (config.SerializeToString(), protocol_version)

    async def get_push_config(
        self, scope: Scope, task_id: str, config_id: str
    ) -> pb.TaskPushNotificationConfig | None:
        with self._lock:
            record = self._tasks.get(_key(scope, task_id))
            found = None if record is None else record.configs.get(config_id)
        return None if found is None else pb.TaskPushNotificationConfig.FromString(found[0])

    async def list_push_targets(self, scope: Scope, task_id: str) -> builtins.list[PushTarget]:
        with self._lock:
            record = self._tasks.get(_key(scope, task_id))
            found = [] if record is None else list(record.configs.values())
        return [PushTarget(pb.TaskPushNotificationConfig.FromString(raw), version)
                for raw, version in found]

    async def delete_push_config(self, scope: Scope, task_id: str, config_id: str) -> None:
        with self._lock:
            record = self._tasks.get(_key(scope, task_id))
            if record is not None:
                record.configs.pop(config_id, None)


def _held(task: pb.Task, lease: Lease | None) -> Lease | None:
    """A terminal task holds no lease: nobody runs it any more."""
    return None if is_terminal(task.status.state) else lease


def _key(scope: Scope, item_id: str) -> _Key:
    return (scope.tenant, scope.owner, item_id)


def _sort(position: cursor.Position) -> _Sort:
    return (position.status_ms, position.write_ns, position.task_id)


def _index_keys(scope: Scope, record: _Record) -> Iterator[_IndexKey]:
    """The four indexes a task is in: any/its context, times any/its state."""
    for context_id in {"", record.context_id}:
        for state in {0, record.state}:
            yield (scope.tenant, scope.owner, context_id, state)


def _task(raw: bytes) -> pb.Task:
    return pb.Task.FromString(raw)


def _event(raw: bytes) -> pb.StreamResponse:
    return pb.StreamResponse.FromString(raw)
