"""The DynamoDB task store: one table, optimistic concurrency, events written with the snapshot.

The table, its key layout and size limits are `a2akit.store.table`; botocore errors become
the kit's in `a2akit.store._errors` (with `a2akit.aws`); the ListTasks order and page tokens are
`a2akit.store.cursor`, shared with the embedded store; writes of any size are planned in
`_writes` and `_plan`, retention in `_expiry`, ListTasks in
`_listing`, leases in `_leasing`, push configs in `_configs`, event reads in `_events` and
large items in `_parts`. See docs/store.md.

The store runs on boto3's low-level client or on the kit's own (`_client`, what `env_client`
gives on Lambda: no botocore at cold start); both are synchronous. Every helper reaches the
table through one `_gateway.Gateway` (the client, the table name, each call in a worker
thread, snapshot reads), never through the store, which only composes them.
"""

from __future__ import annotations

import asyncio
import builtins
import os
import time
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

from a2akit import aws
from a2akit.clock import epoch_ms
from a2akit.errors import InvalidParamsError
from a2akit.generated import a2a_pb2 as pb
from a2akit.service_params import SUPPORTED_VERSION
from a2akit.states import is_terminal
from a2akit.store import _configs, _events, _leasing, _parts, _writes, cursor, table
from a2akit.store._client import Client, env_client
from a2akit.store._expiry import expire_finished, expire_task
from a2akit.store._gateway import Gateway
from a2akit.store._listing import count_states, list_tasks
from a2akit.store._plan import fits, transactions
from a2akit.store._writes import (
    Condition,
    Reserved,
    StaleSeq,
    bookkeeping,
    check,
    quota_check,
    quota_take,
)
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
from a2akit.trace import current_traceparent

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
        put = gateway.put(snapshot, "attribute_not_exists(pk)")
        claim = self._claim(scope, message_id, task.id)
        configs = [gateway.put(_configs.config_item(pk, target, snapshot))
                   for target in push_configs]
        configs += bookkeeping(gateway, scope, task, snapshot, None)
        # The owner's quota is taken in the transaction that creates the task, on its
        # condition: of a burst of creates, those past the limit are cancelled whole.
        take = [quota_take(gateway, scope, quota)] if counted and quota else []
        meaning = {"quota": quota} if take else {}
        single = [put, *claim, *take, *configs, *puts]
        if fits(single):
            await _writes.transact(gateway, single, task.id, **meaning)
        else:
            # Several transactions: the first checks that the task and the claim do not
            # exist yet and that the quota has room; the last writes them with the snapshot
            # (docs/store.md, "Writes of any size").
            checks = [check(entry) for entry in (*claim, put)]
            checks += [quota_check(entry) for entry in take]
            for batch in transactions(checks, puts, [put, *claim, *take, *configs]):
                await _writes.transact(gateway, batch, task.id, **meaning)
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
                         await gateway.counted(pk))
        last_seq, old_state, old_parts, counted = known
        breaking: str | None = None  # the token of a dead writer's reservation
        for _attempt in range(3):
            condition = Condition(expected_version, last_seq, lease_expired_by, breaking,
                                  unfinished=not is_terminal(task.status.state))
            try:
                snapshot = await self._update(scope, task, events, message_id, lease,
                                              condition, old_state, counted)
            except StaleSeq as stale:
                # A stale cache entry (the same version, another task): once more.
                last_seq, old_state, old_parts = stale.last_seq, stale.state, stale.parts
                counted = stale.counted
                continue
            except Reserved as held:
                if held.until_ms > epoch_ms():
                    await self._outwait(pk, held)
                    raise VersionConflictError(task_id) from None  # the caller re-reads
                # Its writer died mid-way: keep the events it wrote, write after them.
                breaking, old_state, old_parts = held.token, held.state, held.parts
                counted = held.counted
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
                      condition: Condition, old_state: int, counted: bool) -> Item:
        """Write the update, in one transaction or several; the snapshot written. `counted`:
        the task is in its owner's quota count (it stays there until this write ends it)."""
        gateway = self._gateway
        snapshot, puts = self._items(scope, task, events, version=condition.version + 1,
                                     first_seq=condition.last_seq + 1, lease=lease,
                                     counted=counted)
        extra = bookkeeping(gateway, scope, task, snapshot, old_state, counted=counted)
        expression, values = condition.expression()
        put = gateway.put(snapshot, expression, values)
        put["Put"]["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
        claim = self._claim(scope, message_id, task.id)
        meaning = {"expected_version": condition.version, "last_seq": condition.last_seq,
                   "breaking": condition.breaking}
        single = [put, *claim, *extra, *puts]
        if fits(single):
            await _writes.transact(gateway, single, task.id, **meaning)
            return snapshot
        token = os.urandom(12).hex()
        until = (epoch_ms() + self.reservation_ms
                 + self.reservation_ms_per_batch * (len(puts) // 90 + 1))
        hold = {":w": {"S": token}, ":wu": {"N": str(until)}}
        reserve: Item = {"Update": {
            "TableName": gateway.name,
            "Key": table.key(snapshot[table.PK]["S"], table.SNAPSHOT_SK),
            "UpdateExpression": "SET #w = :w, #wu = :wu",
            "ConditionExpression": expression,
            "ExpressionAttributeNames": {"#w": table.WRITER, "#wu": table.WRITER_UNTIL},
            "ExpressionAttributeValues": {**values, **hold},
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }}
        final = gateway.put(snapshot, f"version = :v AND {table.WRITER} = :w",
                          {":v": values[":v"], ":w": hold[":w"]})
        batches = transactions([reserve, *claim], puts, [final, *extra])
        await _writes.transact(gateway, batches[0], task.id, **meaning)
        for batch in batches[1:]:
            # Only a writer that broke this reservation (we outlived it) makes these fail.
            await _writes.transact(gateway, batch, task.id)
        return snapshot

    async def _outwait(self, pk: str, held: Reserved) -> None:
        """Wait while the snapshot is reserved by `held` (until it commits, or may be broken)."""
        gateway = self._gateway
        delay = self.min_poll_interval
        while epoch_ms() < held.until_ms:
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.poll_interval)
            response = await gateway.call(
                gateway.client.get_item, TableName=gateway.name,
                Key=table.key(pk, table.SNAPSHOT_SK), ConsistentRead=True,
                ProjectionExpression="#w", ExpressionAttributeNames={"#w": table.WRITER})
            if response.get("Item", {}).get(table.WRITER, {}).get("S") != held.token:
                return

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
    ) -> tuple[Item, list[Item]]:
        """The snapshot item, and the puts of its events (each only where none is yet).
        `counted`: the task is in its owner's quota count, which the snapshot says while the
        task is unfinished."""
        gateway = self._gateway
        pk = table.task_pk(scope, task.id)
        data, raw_events = task.SerializeToString(), [e.SerializeToString() for e in events]
        self.check_size(data, raw_events)
        position = cursor.position(task)
        last_seq = first_seq + len(events) - 1
        expires = self._expires_at() if is_terminal(task.status.state) else None
        snapshot: Item = {
            table.PK: {"S": pk},
            table.SK: {"S": table.SNAPSHOT_SK},
            table.LIST_INDEX_PK: {"S": table.list_pk(scope, table.list_shard(task.id))},
            table.LIST_INDEX_SK: {"S": table.list_sk(position)},
            "task": {"B": data},
            "version": {"N": str(version)},
            "last_seq": {"N": str(last_seq)},
            "status_ms": {"N": str(position.status_ms)},
            "state": {"N": str(int(task.status.state))},
            "context_id": {"S": task.context_id},
        }
        if task.context_id:
            snapshot[table.CONTEXT_INDEX_PK] = {"S": table.context_pk(scope, task.context_id)}
        if expires is not None:
            snapshot[table.TTL_ATTRIBUTE] = {"N": str(expires)}
        elif counted:
            snapshot[table.COUNTED] = {"N": "1"}
        if expires is None and lease is not None:
            # Only a leased task enters the (sparse) lease index; a terminal one never does.
            snapshot.update(table.lease_attributes(pk, lease))
        # A large snapshot's parts close the events: they land with it or before it.
        snapshot_parts = _parts.split(snapshot, "task")
        if snapshot_parts:
            gateway.part_cache.put(pk, snapshot[table.PART_TOKEN]["S"], data)
        table.check_size(snapshot, "the task")
        puts: list[Item] = []
        traceparent = current_traceparent()  # the push dispatcher goes on with this trace
        for offset, event in enumerate(raw_events):
            seq = first_seq + offset
            item: Item = {
                table.PK: {"S": pk},
                table.SK: {"S": table.event_sk(seq)},
                "seq": {"N": str(seq)},
                "event": {"B": event},
            }
            if expires is not None:
                item[table.TTL_ATTRIBUTE] = {"N": str(expires)}
            if traceparent is not None:
                item[table.TRACEPARENT] = {"S": traceparent}
            # A large event's parts precede it: whoever sees the event can read them.
            puts += [gateway.put(part) for part in _parts.split(item, "event")]
            table.check_size(item, "an event")
            puts.append(gateway.put(item, "attribute_not_exists(sk)"))
        puts += [gateway.put(part) for part in snapshot_parts]
        return snapshot, puts

    def _claim(self, scope: Scope, message_id: str | None, task_id: str) -> list[Item]:
        """The idempotency claim for `message_id` (none without one)."""
        if not message_id:
            return []
        put = self._gateway.put({
            table.PK: {"S": table.message_pk(scope, message_id)},
            table.SK: {"S": table.MESSAGE_SK},
            "task_id": {"S": task_id},
            table.TTL_ATTRIBUTE: {"N": str(self._expires_at())},
        }, "attribute_not_exists(pk)")
        put["Put"]["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
        return [put]

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
