"""The DynamoDB task store: one table, optimistic concurrency, events written with the snapshot.

The table, its key layout and size limits are `a2akit.store.table`; botocore errors become
the kit's in `a2akit.store._errors` (with `a2akit.aws`); the ListTasks order and page tokens are
`a2akit.store.cursor`, shared with the embedded store; writes of any size are made in
`_writes` (cut into transactions by `_plan`), retention in `_expiry`, ListTasks in
`_listing`, leases in `_leasing`, push configs in `_configs`, event reads in `_events` and
large items in `_parts`. See docs/store.md.

The store runs on boto3's low-level client or on the kit's own (`_client`, what `env_client`
gives on Lambda: no botocore at cold start); both are synchronous. Every helper reaches the
table through one `_gateway.Gateway` (the client, the table name, each call in a worker
thread, snapshot reads), never through the store, which only composes them.
"""

from __future__ import annotations

import builtins
import time
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

from a2akit import aws
from a2akit.clock import epoch_ms
from a2akit.errors import InvalidParamsError
from a2akit.generated import a2a_pb2 as pb
from a2akit.service_params import SUPPORTED_VERSION
from a2akit.states import is_terminal
from a2akit.store import _bodies, _configs, _events, _leasing, _parts, _writes, table
from a2akit.store._client import Client, env_client
from a2akit.store._expiry import expire_finished, expire_task
from a2akit.store._gateway import Gateway
from a2akit.store._listing import count_states, list_tasks
from a2akit.store._writes import Condition, Reserved, StaleSeq, bookkeeping, quota_take
from a2akit.store.base import (
    DEFAULT_MAX_TASK_BYTES,
    Lease,
    PushTarget,
    Scope,
    StoredEvent,
    StoredTask,
    TaskPage,
    TaskQuery,
    TaskStore,
    VersionConflictError,
)
from a2akit.store.table import Item

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient

__all__ = ["DynamoDBStore", "env_client", "make_client"]

def make_client(endpoint_url: str | None = None, region_name: str | None = None) -> Any:
    """A boto3 DynamoDB client with the store's retries (create once per process)."""
    return aws.client("dynamodb", endpoint_url=endpoint_url, region_name=region_name)


class DynamoDBStore(TaskStore):
    # A runner re-reads its task this often to notice a cancel from another process.
    poll_interval = 1.0
    # How long a write in several transactions holds the snapshot, plus this per
    # transaction: other writers wait so long before they take it for dead.
    reservation_ms = 60_000
    reservation_ms_per_batch = 1_000

    def __init__(
        self,
        table_name: str,
        client: DynamoDBClient | Client,
        *,
        retention_days: float = 30,
        owns_client: bool = False,
        max_task_bytes: int = DEFAULT_MAX_TASK_BYTES,
    ) -> None:
        self.table_name = table_name
        self.max_task_bytes = max_task_bytes
        self._gateway = Gateway(table_name, client)
        self._retention_s = int(retention_days * 86400)
        self._owns_client = owns_client

    @property
    def _client(self) -> DynamoDBClient | Client:
        return self._gateway.client

    def _expires_at(self) -> int:
        return int(time.time()) + self._retention_s

    async def close(self) -> None:
        if self._owns_client:
            self._client.close()

    def after_restore(self) -> None:
        # Closing either client only empties its connection pool (and the kit's client
        # forgets fetched credentials); the next call opens a connection of this copy's own.
        self._client.close()

    async def create_table_if_missing(self) -> None:
        """Create the table (local emulator only: on AWS the CDK stack owns it)."""
        await self._gateway.create_if_missing()

    # --- tasks -------------------------------------------------------------------------

    async def get(self, scope: Scope, task_id: str) -> StoredTask | None:
        return await self._gateway.read(table.task_pk(scope, task_id))

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
        gateway = self._gateway
        pk = table.task_pk(scope, task.id)
        counted = quota is not None and not is_terminal(task.status.state)
        snapshot, puts = self._items(scope, task, events, version=1, first_seq=1, lease=lease,
                                     counted=counted)
        puts, bodies = _writes.bodies_apart(puts)
        claim = _writes.claim(gateway, scope, message_id, task.id, self._expires_at())
        others = [gateway.put(_configs.config_item(pk, target, snapshot))
                  for target in push_configs]
        others += bookkeeping(gateway, scope, task, snapshot, None) + bodies
        take = [quota_take(gateway, scope, quota)] if counted and quota else []
        await _writes.create(gateway, task.id, snapshot, puts, claim, take, others, quota)
        _writes.wrote_bodies(gateway, bodies)
        _bodies.remember_tail(gateway.body_cache, pk, _bodies.layout_of(snapshot), task,
                              events, 1)
        stored = gateway.stored(pk, snapshot, _parts.ref(snapshot), task)
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
        if task.id != task_id:
            raise InvalidParamsError("task id does not match the stored task")
        gateway = self._gateway
        pk = table.task_pk(scope, task_id)
        known = gateway.recall(pk, expected_version)
        if known is None:
            current = await self.get(scope, task_id)
            if current is None or current.version != expected_version:
                raise VersionConflictError(task_id)
            known = gateway.recall(pk, expected_version)
            if known is None:  # read, and already forgotten: the parts are not known
                known = (current.last_seq, current.task.status.state, None,
                         *await gateway.counted(pk))
        last_seq, old_state, old_parts, counted, body = known
        breaking: str | None = None  # the token of a dead writer's reservation
        for _attempt in range(3):
            condition = Condition(expected_version, last_seq, lease_expired_by, breaking,
                                  unfinished=not is_terminal(task.status.state))
            try:
                snapshot = await self._update(scope, task, events, message_id, lease,
                                              condition, old_state, counted, body)
            except StaleSeq as stale:
                # A stale cache entry (the same version, another task): once more.
                last_seq, old_state, old_parts = stale.last_seq, stale.state, stale.parts
                counted, body = stale.counted, stale.body
                continue
            except Reserved as held:
                if held.until_ms > epoch_ms():
                    await _writes.outwait(gateway, pk, held, self.min_poll_interval,
                                          self.poll_interval)
                    raise VersionConflictError(task_id) from None  # the caller re-reads
                # Its writer died mid-way: keep the events it wrote, write after them.
                breaking, old_state, old_parts = held.token, held.state, held.parts
                counted, body = held.counted, held.body
                last_seq = await _events.last_seq(gateway, pk, held.last_seq)
                continue
            stored = gateway.stored(pk, snapshot, _parts.ref(snapshot), task)
            self._wrote(scope, stored, events)
            if old_parts is not None:
                # The replaced snapshot's parts: nobody reads them any more (a reader that
                # read that snapshot reads again).
                await _parts.delete(gateway.call, gateway.client, gateway.name, old_parts)
            if table.TTL_ATTRIBUTE in snapshot and not is_terminal(old_state):
                # Just terminal: the older events and configs get the same expiry, once
                # (if this fails, the sweeper does it: `expire_finished`).
                await expire_task(gateway, pk, snapshot[table.TTL_ATTRIBUTE])
            return stored
        raise VersionConflictError(task_id)

    async def _update(self, scope: Scope, task: pb.Task, events: Sequence[pb.StreamResponse],
                      message_id: str | None, lease: Lease | None,
                      condition: Condition, old_state: int, counted: bool,
                      body: _bodies.Layout | None) -> Item:
        """Write the update, in one transaction or several; the snapshot written. `counted`:
        the task is in its owner's quota count (it stays there until this write ends it);
        `body`: the replaced snapshot's body layout."""
        gateway = self._gateway
        snapshot, puts = self._items(scope, task, events, version=condition.version + 1,
                                     first_seq=condition.last_seq + 1, lease=lease,
                                     counted=counted, body=body,
                                     tails=condition.breaking is None)
        puts, bodies = _writes.bodies_apart(puts)
        extra = bookkeeping(gateway, scope, task, snapshot, old_state, counted=counted)
        extra += bodies
        claim = _writes.claim(gateway, scope, message_id, task.id, self._expires_at())
        await _writes.update(gateway, task.id, snapshot, puts, claim, extra, condition,
                             hold_ms=self.reservation_ms,
                             hold_ms_per_batch=self.reservation_ms_per_batch)
        _writes.wrote_bodies(gateway, bodies)
        _bodies.remember_tail(gateway.body_cache, snapshot[table.PK]["S"],
                              _bodies.layout_of(snapshot), task, events,
                              condition.last_seq + 1)
        return snapshot

    def _items(
        self,
        scope: Scope,
        task: pb.Task,
        events: Sequence[pb.StreamResponse],
        *,
        version: int,
        first_seq: int,
        lease: Lease | None = None,
        counted: bool = False,
        body: _bodies.Layout | None = None,
        tails: bool = True,
    ) -> tuple[Item, list[Item]]:
        """The snapshot item, the puts of its events and of its new body, last
        (`_writes.items`), once the task and its events are within this store's size
        limit."""
        data, raw_events = task.SerializeToString(), [e.SerializeToString() for e in events]
        self.check_size(data, raw_events)
        expires = self._expires_at() if is_terminal(task.status.state) else None
        snapshot, puts, bodies = _writes.items(
            self._gateway, scope, task, raw_events, version=version, first_seq=first_seq,
            expires=expires, lease=lease, counted=counted, body=body, events=events,
            tails=tails)
        return snapshot, puts + bodies

    async def request_cancel(self, scope: Scope, task_id: str) -> StoredTask | None:
        return await _leasing.request_cancel(self._gateway, scope, task_id)

    async def swap_lease(
        self, scope: Scope, task_id: str, expected_owner: str, lease: Lease
    ) -> StoredTask:
        return await _leasing.swap_lease(self._gateway, scope, task_id, expected_owner, lease)

    async def expired_leases(self, now_ms: int, limit: int) -> builtins.list[tuple[Scope, str]]:
        return await _leasing.expired_leases(self._gateway, now_ms, limit)

    async def expire_finished(self, limit: int) -> int:
        return await expire_finished(self._gateway, limit)

    async def events_after(self, scope: Scope, task_id: str, seq: int) -> list[StoredEvent]:
        return await _events.events_after(self._gateway, scope, task_id, seq)

    async def event(self, scope: Scope, task_id: str, seq: int) -> pb.StreamResponse | None:
        return await _events.event(self._gateway, scope, task_id, seq)

    async def find_message(self, scope: Scope, message_id: str) -> str | None:
        gateway = self._gateway
        response = await gateway.call(
            gateway.client.get_item,
            TableName=gateway.name,
            Key=table.key(table.message_pk(scope, message_id), table.MESSAGE_SK),
            ConsistentRead=True,
        )
        item = response.get("Item")
        return None if item is None else item["task_id"]["S"]

    # --- listing -----------------------------------------------------------------------

    async def list(self, scope: Scope, query: TaskQuery) -> TaskPage:
        return await list_tasks(self._gateway, scope, query)

    async def count(self, scope: Scope, states: Collection[int]) -> int:
        return await count_states(self._gateway, scope, states)

    async def active_tasks(self, owner: str) -> int:
        # Eventually consistent (half the read): the count only spares a run that the
        # create's conditional write would refuse anyway (docs/store.md, the quota).
        gateway = self._gateway
        response = await gateway.call(
            gateway.client.get_item, TableName=gateway.name, Key=table.quota_key(owner),
            ProjectionExpression="#a",
            ExpressionAttributeNames={"#a": table.QUOTA_ACTIVE})
        return int(response.get("Item", {}).get(table.QUOTA_ACTIVE, {"N": "0"})["N"])

    # --- push notification configs -----------------------------------------------------

    async def put_push_config(self, scope: Scope, config: pb.TaskPushNotificationConfig,
                              protocol_version: str = SUPPORTED_VERSION) -> None:
        await _configs.put_config(self._gateway, scope, PushTarget(config, protocol_version))

    async def get_push_config(
        self, scope: Scope, task_id: str, config_id: str
    ) -> pb.TaskPushNotificationConfig | None:
        return await _configs.get_config(self._gateway, scope, task_id, config_id)

    async def list_push_targets(self, scope: Scope, task_id: str) -> builtins.list[PushTarget]:
        return await _configs.list_targets(self._gateway, scope, task_id)

    async def delete_push_config(self, scope: Scope, task_id: str, config_id: str) -> None:
        await _configs.delete_config(self._gateway, scope, task_id, config_id)
