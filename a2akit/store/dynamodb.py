"""The DynamoDB task store: one table, optimistic concurrency, events written with the snapshot.

The table, its key layout and size limits are `a2akit.store.table`; botocore errors become
the kit's in `a2akit.store._errors` (with `a2akit.aws`); the ListTasks order and page tokens are
`a2akit.store.cursor`, shared with the embedded store; writes of any size are planned in
`_writes` and `_plan`, retention in `_expiry`, ListTasks in `_listing`, leases in `_leasing`, push
configs in `_configs`, event reads in `_events` and large items in `_parts`. See docs/store.md.

The store runs on boto3's low-level client or on the kit's own (`_client`, what `env_client`
gives on Lambda: no botocore at cold start); both are synchronous, and every call runs in a
worker thread (`asyncio.to_thread`).
"""

from __future__ import annotations

import asyncio
import builtins
import collections
import logging
import os
import random
import threading
import time
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from a2akit import aws
from a2akit.clock import epoch_ms
from a2akit.errors import InvalidParamsError, UnavailableError
from a2akit.generated import a2a_pb2 as pb
from a2akit.service_params import SUPPORTED_VERSION
from a2akit.states import is_terminal
from a2akit.store import _configs, _events, _leasing, _parts, cursor, table
from a2akit.store._client import Client, env_client
from a2akit.store._errors import Interpret, error_code, translated
from a2akit.store._expiry import expire_finished, expire_task
from a2akit.store._listing import count_states, list_tasks
from a2akit.store._plan import fits, transactions
from a2akit.store._writes import (
    Condition,
    Contended,
    Reserved,
    StaleSeq,
    bookkeeping,
    check,
    interpret,
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

log = logging.getLogger(__name__)

_CACHE_SIZE = 4096
_REREADS = 5  # a large snapshot replaced while its parts were read: read again so often
# A version's last_seq, state, parts, and whether it is in its owner's quota count.
_Known = tuple[int, int, _parts.Ref | None, bool]
# The whole bytes of the large snapshots this store last wrote or read (docs/store.md,
# "Large tasks"): a runner's own reads of its task then read no parts.
_PART_CACHE_BYTES = 32 * 1024 * 1024

T = TypeVar("T")


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
        self._client = client
        self._retention_s = int(retention_days * 86400)
        self._owns_client = owns_client
        # (pk, version) -> last_seq, state and parts (a large snapshot's, deleted once it is
        # replaced) of what this store last read or wrote, so an update after a get needs no
        # extra read; the write is conditional on the version and last_seq anyway.
        self._seqs: collections.OrderedDict[tuple[str, int], _Known] = (
            collections.OrderedDict()
        )
        self._seqs_lock = threading.Lock()
        self._part_cache = _parts.Cache(_PART_CACHE_BYTES)

    # --- plumbing ----------------------------------------------------------------------

    async def _call(
        self, fn: Callable[..., T], /, interpret: Interpret | None = None, **kwargs: Any
    ) -> T:
        with translated(getattr(fn, "__name__", str(fn)), interpret):
            return await asyncio.to_thread(fn, **kwargs)

    def _remember(self, pk: str, version: int, last_seq: int, state: int,
                  parts: _parts.Ref | None, counted: bool) -> None:
        with self._seqs_lock:
            self._seqs[(pk, version)] = (last_seq, state, parts, counted)
            self._seqs.move_to_end((pk, version))
            while len(self._seqs) > _CACHE_SIZE:
                self._seqs.popitem(last=False)

    def _recall(self, pk: str, version: int) -> _Known | None:
        with self._seqs_lock:
            return self._seqs.get((pk, version))

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
        endpoint = self._client.meta.endpoint_url
        if "amazonaws.com" in endpoint:
            raise RuntimeError("create_table_if_missing is for a local emulator endpoint")
        try:
            await asyncio.to_thread(self._client.describe_table, TableName=self.table_name)
            return
        except Exception as exc:
            if error_code(exc) != "ResourceNotFoundException":
                raise
        client: Any = self._client  # either client; the arguments are boto3's
        try:
            await asyncio.to_thread(client.create_table, **table.create_table_kwargs(
                self.table_name))
        except Exception as exc:
            if error_code(exc) != "ResourceInUseException":  # created by someone else
                raise
        for _ in range(60):
            described: Any = await asyncio.to_thread(
                self._client.describe_table, TableName=self.table_name)
            if described["Table"]["TableStatus"] == "ACTIVE":
                return
            await asyncio.sleep(0.5)
        raise RuntimeError(f"table {self.table_name} did not become active")

    # --- tasks -------------------------------------------------------------------------

    async def get(self, scope: Scope, task_id: str) -> StoredTask | None:
        pk = table.task_pk(scope, task_id)
        response = await self._call(
            self._client.get_item,
            TableName=self.table_name,
            Key=table.key(pk, table.SNAPSHOT_SK),
            ConsistentRead=True,
        )
        item = response.get("Item")
        return None if item is None else await self._whole(pk, item)

    async def _whole(self, pk: str, item: Item | None) -> StoredTask | None:
        """The task of a snapshot item read from the table, its parts joined when it is
        large; one replaced since it was read (its parts deleted) is read again."""
        for _attempt in range(_REREADS):
            if item is None:
                return None
            parts = _parts.ref(item)
            if await _parts.join_by_query(self._call, self._client, self.table_name, item,
                                          "task", self._part_cache):
                return self._stored(pk, item, parts)
            response = await self._call(
                self._client.get_item, TableName=self.table_name,
                Key=table.key(pk, table.SNAPSHOT_SK), ConsistentRead=True)
            item = response.get("Item")
        raise UnavailableError("a large task kept changing while it was read")

    def _stored(self, pk: str, item: Item, parts: _parts.Ref | None,
                task: pb.Task | None = None) -> StoredTask:
        """The stored task of a snapshot item whose bytes are whole, or of one just written
        (`task`, the item's `parts`)."""
        version = int(item["version"]["N"])
        last_seq = int(item["last_seq"]["N"])
        if task is None:
            task = pb.Task.FromString(item["task"]["B"])
        self._remember(pk, version, last_seq, task.status.state, parts, table.COUNTED in item)
        return StoredTask(task, version, last_seq, table.lease_of(item),
                          table.CANCEL_REQUESTED in item)

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
        pk = table.task_pk(scope, task.id)
        counted = quota is not None and not is_terminal(task.status.state)
        snapshot, puts = self._items(scope, task, events, version=1, first_seq=1, lease=lease,
                                     counted=counted)
        put = self._put(snapshot, "attribute_not_exists(pk)")
        claim = self._claim(scope, message_id, task.id)
        configs = [self._put(_configs.config_item(pk, target, snapshot))
                   for target in push_configs]
        configs += bookkeeping(self.table_name, scope, task, snapshot, None)
        # The owner's quota is taken in the transaction that creates the task, on its
        # condition: of a burst of creates, those past the limit are cancelled whole.
        take = [quota_take(self.table_name, scope, quota)] if counted and quota else []
        meaning = {"quota": quota} if take else {}
        single = [put, *claim, *take, *configs, *puts]
        if fits(single):
            await self._transact(single, task.id, **meaning)
        else:
            # Several transactions: the first checks that the task and the claim do not
            # exist yet and that the quota has room; the last writes them with the snapshot
            # (docs/store.md, "Writes of any size").
            checks = [check(entry) for entry in (*claim, put)]
            checks += [quota_check(entry) for entry in take]
            for batch in transactions(checks, puts, [put, *claim, *take, *configs]):
                await self._transact(batch, task.id, **meaning)
        stored = self._stored(pk, snapshot, _parts.ref(snapshot), task)
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
        pk = table.task_pk(scope, task_id)
        known = self._recall(pk, expected_version)
        if known is None:
            current = await self.get(scope, task_id)
            if current is None or current.version != expected_version:
                raise VersionConflictError(task_id)
            known = self._recall(pk, expected_version)
            if known is None:  # read, and already forgotten: the parts are not known
                known = (current.last_seq, current.task.status.state, None,
                         await self._counted(pk))
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
                last_seq = await _events.last_seq(self, pk, held.last_seq)
                continue
            stored = self._stored(pk, snapshot, _parts.ref(snapshot), task)
            self._wrote(scope, stored, events)
            if old_parts is not None:
                # The replaced snapshot's parts: nobody reads them any more (a reader that
                # read that snapshot reads again).
                await _parts.delete(self._call, self._client, self.table_name, old_parts)
            if table.TTL_ATTRIBUTE in snapshot and not is_terminal(old_state):
                # Just terminal: the older events and configs get the same expiry, once
                # (if this fails, the sweeper does it: `expire_finished`).
                await expire_task(self._call, self._client, self.table_name, pk,
                                  snapshot[table.TTL_ATTRIBUTE])
            return stored
        raise VersionConflictError(task_id)

    async def _update(self, scope: Scope, task: pb.Task, events: Sequence[pb.StreamResponse],
                      message_id: str | None, lease: Lease | None,
                      condition: Condition, old_state: int, counted: bool) -> Item:
        """Write the update, in one transaction or several; the snapshot written. `counted`:
        the task is in its owner's quota count (it stays there until this write ends it)."""
        snapshot, puts = self._items(scope, task, events, version=condition.version + 1,
                                     first_seq=condition.last_seq + 1, lease=lease,
                                     counted=counted)
        extra = bookkeeping(self.table_name, scope, task, snapshot, old_state, counted=counted)
        expression, values = condition.expression()
        put = self._put(snapshot, expression, values)
        put["Put"]["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
        claim = self._claim(scope, message_id, task.id)
        meaning = {"expected_version": condition.version, "last_seq": condition.last_seq,
                   "breaking": condition.breaking}
        single = [put, *claim, *extra, *puts]
        if fits(single):
            await self._transact(single, task.id, **meaning)
            return snapshot
        token = os.urandom(12).hex()
        until = (epoch_ms() + self.reservation_ms
                 + self.reservation_ms_per_batch * (len(puts) // 90 + 1))
        hold = {":w": {"S": token}, ":wu": {"N": str(until)}}
        reserve: Item = {"Update": {
            "TableName": self.table_name,
            "Key": table.key(snapshot[table.PK]["S"], table.SNAPSHOT_SK),
            "UpdateExpression": "SET #w = :w, #wu = :wu",
            "ConditionExpression": expression,
            "ExpressionAttributeNames": {"#w": table.WRITER, "#wu": table.WRITER_UNTIL},
            "ExpressionAttributeValues": {**values, **hold},
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }}
        final = self._put(snapshot, f"version = :v AND {table.WRITER} = :w",
                          {":v": values[":v"], ":w": hold[":w"]})
        batches = transactions([reserve, *claim], puts, [final, *extra])
        await self._transact(batches[0], task.id, **meaning)
        for batch in batches[1:]:
            # Only a writer that broke this reservation (we outlived it) makes these fail.
            await self._transact(batch, task.id)
        return snapshot

    async def _outwait(self, pk: str, held: Reserved) -> None:
        """Wait while the snapshot is reserved by `held` (until it commits, or may be broken)."""
        delay = self.min_poll_interval
        while epoch_ms() < held.until_ms:
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.poll_interval)
            response = await self._call(
                self._client.get_item, TableName=self.table_name,
                Key=table.key(pk, table.SNAPSHOT_SK), ConsistentRead=True,
                ProjectionExpression="#w", ExpressionAttributeNames={"#w": table.WRITER})
            if response.get("Item", {}).get(table.WRITER, {}).get("S") != held.token:
                return

    def _put(self, item: Item, condition: str | None = None, values: Item | None = None
             ) -> Item:
        put: Item = {"TableName": self.table_name, "Item": item}
        if condition:
            put["ConditionExpression"] = condition
        if values:
            put["ExpressionAttributeValues"] = values
        return {"Put": put}

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
            self._part_cache.put(pk, snapshot[table.PART_TOKEN]["S"], data)
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
            puts += [self._put(part) for part in _parts.split(item, "event")]
            table.check_size(item, "an event")
            puts.append(self._put(item, "attribute_not_exists(sk)"))
        puts += [self._put(part) for part in snapshot_parts]
        return snapshot, puts

    def _claim(self, scope: Scope, message_id: str | None, task_id: str) -> list[Item]:
        """The idempotency claim for `message_id` (none without one)."""
        if not message_id:
            return []
        put = self._put({
            table.PK: {"S": table.message_pk(scope, message_id)},
            table.SK: {"S": table.MESSAGE_SK},
            "task_id": {"S": task_id},
            table.TTL_ATTRIBUTE: {"N": str(self._expires_at())},
        }, "attribute_not_exists(pk)")
        put["Put"]["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
        return [put]

    async def request_cancel(self, scope: Scope, task_id: str) -> StoredTask | None:
        return await _leasing.request_cancel(self, scope, task_id)

    async def swap_lease(
        self, scope: Scope, task_id: str, expected_owner: str, lease: Lease
    ) -> StoredTask:
        return await _leasing.swap_lease(self, scope, task_id, expected_owner, lease)

    async def expired_leases(self, now_ms: int, limit: int) -> builtins.list[tuple[Scope, str]]:
        return await _leasing.expired_leases(self, now_ms, limit)

    async def _transact(self, writes: list[Item], task_id: str, **meaning: Any) -> None:
        for attempt in range(_CONTENDED_ATTEMPTS):
            try:
                await self._call(self._client.transact_write_items,
                                 interpret(writes, task_id, **meaning), TransactItems=writes)
                return
            except Contended:
                # Cancelled, nothing written: another task's write held the scope's count.
                await asyncio.sleep(random.uniform(0, 0.01 * 2**attempt))
        raise UnavailableError("the task's scope is too busy; try again")

    async def expire_finished(self, limit: int) -> int:
        return await expire_finished(self._call, self._client, self.table_name, limit)

    async def events_after(self, scope: Scope, task_id: str, seq: int) -> list[StoredEvent]:
        return await _events.events_after(self, scope, task_id, seq)

    async def event(self, scope: Scope, task_id: str, seq: int) -> pb.StreamResponse | None:
        return await _events.event(self, scope, task_id, seq)

    async def find_message(self, scope: Scope, message_id: str) -> str | None:
        response = await self._call(
            self._client.get_item,
            TableName=self.table_name,
            Key=table.key(table.message_pk(scope, message_id), table.MESSAGE_SK),
            ConsistentRead=True,
        )
        item = response.get("Item")
        return None if item is None else item["task_id"]["S"]

    # --- listing -----------------------------------------------------------------------

    async def list(self, scope: Scope, query: TaskQuery) -> TaskPage:
        return await list_tasks(self._call, self._client, self.table_name, scope, query)

    async def count(self, scope: Scope, states: Collection[int]) -> int:
        return await count_states(self._call, self._client, self.table_name, scope, states)

    async def active_tasks(self, owner: str) -> int:
        # Eventually consistent (half the read): the count only spares a run that the
        # create's conditional write would refuse anyway (docs/store.md, the quota).
        response = await self._call(
            self._client.get_item, TableName=self.table_name, Key=table.quota_key(owner),
            ProjectionExpression="#a",
            ExpressionAttributeNames={"#a": table.QUOTA_ACTIVE})
        return int(response.get("Item", {}).get(table.QUOTA_ACTIVE, {"N": "0"})["N"])

    async def _counted(self, pk: str) -> bool:
        """Whether the task's snapshot is in its owner's quota count (read)."""
        response = await self._call(
            self._client.get_item, TableName=self.table_name,
            Key=table.key(pk, table.SNAPSHOT_SK), ConsistentRead=True,
            ProjectionExpression="#c", ExpressionAttributeNames={"#c": table.COUNTED})
        return table.COUNTED in response.get("Item", {})

    # --- push notification configs -----------------------------------------------------



    async def put_push_config(self, scope: Scope, config: pb.TaskPushNotificationConfig,
                              protocol_version: str = SUPPORTED_VERSION) -> None:
        await _configs.put_config(self, scope, PushTarget(config, protocol_version))

    async def get_push_config(
        self, scope: Scope, task_id: str, config_id: str
    ) -> pb.TaskPushNotificationConfig | None:
        return await _configs.get_config(self, scope, task_id, config_id)

    async def list_push_targets(self, scope: Scope, task_id: str) -> builtins.list[PushTarget]:
        return await _configs.list_targets(self, scope, task_id)

    async def delete_push_config(self, scope: Scope, task_id: str, config_id: str) -> None:
        await _configs.delete_config(self, scope, task_id, config_id)

_CONTENDED_ATTEMPTS = 8  # a transaction cancelled on a shared count item: tries in all
