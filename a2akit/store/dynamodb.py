"""The DynamoDB task store: one table, optimistic concurrency, events written with the snapshot.

The table, its key layout and size limits are `a2akit.store.table`; botocore errors become
the kit's in `a2akit.store._errors` (with `a2akit.aws`); the ListTasks order and page tokens are
`a2akit.store.cursor`, shared with the embedded store. See docs/store.md.

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
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from a2akit import aws
from a2akit.errors import InternalError, InvalidParamsError, UnavailableError
from a2akit.generated import a2a_pb2 as pb
from a2akit.states import is_terminal
from a2akit.store import cursor, table
from a2akit.store._client import Client, default_endpoint
from a2akit.store._credentials import credential_source
from a2akit.store._errors import Cancellation, Interpret, error_code, translated
from a2akit.store._listing import list_tasks
from a2akit.store.base import (
    DuplicateMessageError,
    Lease,
    LeaseLostError,
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

log = logging.getLogger(__name__)

_CACHE_SIZE = 4096

T = TypeVar("T")


def make_client(endpoint_url: str | None = None, region_name: str | None = None) -> Any:
    """A boto3 DynamoDB client with the store's retries (create once per process)."""
    return aws.client("dynamodb", endpoint_url=endpoint_url, region_name=region_name)


def env_client(endpoint_url: str | None = None,
               environ: Mapping[str, str] | None = None) -> Client | None:
    """The kit's own client when the environment names credentials (static keys or a
    container credentials endpoint, as Lambda and ECS do) and a region; None otherwise
    (profiles, SSO, instance roles: use `make_client`). The endpoint is `endpoint_url`, else
    boto3's own variables (AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL), else the region's."""
    env = os.environ if environ is None else environ
    credentials = credential_source(env)
    region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
    variants = ("AWS_USE_FIPS_ENDPOINT", "AWS_USE_DUALSTACK_ENDPOINT")
    if credentials is None or not region or any(
            env.get(name, "").lower() == "true" for name in variants):
        return None
    if not endpoint_url and env.get("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "").lower() != "true":
        endpoint_url = env.get("AWS_ENDPOINT_URL_DYNAMODB") or env.get("AWS_ENDPOINT_URL")
    return Client(endpoint_url or default_endpoint(region), region, credentials,
                  max_attempts=aws.MAX_ATTEMPTS, connect_timeout=3, read_timeout=10)


class DynamoDBStore(TaskStore):
    # A runner re-reads its task this often to notice a cancel from another process.
    poll_interval = 1.0

    def __init__(
        self,
        table_name: str,
        client: DynamoDBClient | Client,
        *,
        retention_days: float = 30,
        owns_client: bool = False,
    ) -> None:
        self.table_name = table_name
        self._client = client
        self._retention_s = int(retention_days * 86400)
        self._owns_client = owns_client
        # (pk, version) -> last_seq of what this store last read or wrote, so an update
        # after a get needs no extra read; the write is conditional on both anyway.
        self._seqs: collections.OrderedDict[tuple[str, int], tuple[int, bool]] = (
            collections.OrderedDict()
        )
        self._seqs_lock = threading.Lock()

    # --- plumbing ----------------------------------------------------------------------

    async def _call(
        self, fn: Callable[..., T], /, interpret: Interpret | None = None, **kwargs: Any
    ) -> T:
        with translated(getattr(fn, "__name__", str(fn)), interpret):
            return await asyncio.to_thread(fn, **kwargs)

    def _remember(self, pk: str, version: int, last_seq: int, terminal: bool) -> None:
        with self._seqs_lock:
            self._seqs[(pk, version)] = (last_seq, terminal)
            self._seqs.move_to_end((pk, version))
            while len(self._seqs) > _CACHE_SIZE:
                self._seqs.popitem(last=False)

    def _recall(self, pk: str, version: int) -> tuple[int, bool] | None:
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
        return None if item is None else self._stored(pk, item)

    def _stored(self, pk: str, item: Item) -> StoredTask:
        version = int(item["version"]["N"])
        last_seq = int(item["last_seq"]["N"])
        task = pb.Task.FromString(item["task"]["B"])
        self._remember(pk, version, last_seq, is_terminal(task.status.state))
        return StoredTask(task, version, last_seq, _lease(item))

    async def create(
        self,
        scope: Scope,
        task: pb.Task,
        events: Sequence[pb.StreamResponse],
        message_id: str | None = None,
        *,
        lease: Lease | None = None,
        push_configs: Sequence[pb.TaskPushNotificationConfig] = (),
    ) -> StoredTask:
        pk = table.task_pk(scope, task.id)
        snapshot, writes = self._writes(scope, task, events, version=1, first_seq=1,
                                        lease=lease)
        writes[0]["Put"]["ConditionExpression"] = "attribute_not_exists(pk)"
        claim = self._claim(scope, message_id, task.id, writes)
        writes += [{"Put": {"TableName": self.table_name,
                            "Item": self._config_item(pk, config, snapshot)}}
                   for config in push_configs]
        if push_configs:
            table.check_transaction([write["Put"]["Item"] for write in writes])
        await self._transact(writes, _created(task.id, claim))
        stored = self._stored(pk, snapshot)
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
            known = (current.last_seq, is_terminal(current.task.status.state))
        last_seq, was_terminal = known
        for _attempt in range(2):
            snapshot, writes = self._writes(
                scope, task, events, version=expected_version + 1, first_seq=last_seq + 1,
                lease=lease,
            )
            put = writes[0]["Put"]
            put["ConditionExpression"] = "version = :v AND last_seq = :s"
            put["ExpressionAttributeValues"] = {
                ":v": {"N": str(expected_version)},
                ":s": {"N": str(last_seq)},
            }
            if lease_expired_by is not None:
                # Expiry: a renewal that landed since the read keeps the runner's task.
                put["ConditionExpression"] += f" AND {table.LEASE_UNTIL} < :expired_by"
                put["ExpressionAttributeValues"][":expired_by"] = {"N": str(lease_expired_by)}
            put["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
            claim = self._claim(scope, message_id, task_id, writes)
            try:
                await self._transact(writes, _updated(task_id, expected_version, last_seq, claim))
            except _StaleSeq as stale:
                # A stale cache entry (the same version, another task): once more.
                last_seq, was_terminal = stale.last_seq, stale.terminal
                continue
            stored = self._stored(pk, snapshot)
            self._wrote(scope, stored, events)
            if table.TTL_ATTRIBUTE in snapshot and not was_terminal:
                # Just terminal: give the older events and configs the same expiry, once.
                await self._expire_partition(pk, snapshot[table.TTL_ATTRIBUTE])
            return stored
        raise VersionConflictError(task_id)

    def _writes(
        self,
        scope: Scope,
        task: pb.Task,
        events: Sequence[pb.StreamResponse],
        *,
        version: int,
        first_seq: int,
        lease: Lease | None = None,
    ) -> tuple[Item, list[Item]]:
        """The snapshot item and the transaction items that write it with its events."""
        pk = table.task_pk(scope, task.id)
        position = cursor.position(task)
        last_seq = first_seq + len(events) - 1
        expires = self._expires_at() if is_terminal(task.status.state) else None
        snapshot: Item = {
            table.PK: {"S": pk},
            table.SK: {"S": table.SNAPSHOT_SK},
            table.LIST_INDEX_PK: {"S": table.list_pk(scope, table.list_shard(task.id))},
            table.LIST_INDEX_SK: {"S": table.list_sk(position)},
            "task": {"B": task.SerializeToString()},
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
        elif lease is not None:
            # Only a leased task enters the (sparse) lease index; a terminal one never does.
            snapshot.update(_lease_attributes(pk, lease))
        table.check_size(snapshot, "the task")
        writes: list[Item] = [{"Put": {"TableName": self.table_name, "Item": snapshot}}]
        for offset, event in enumerate(events):
            seq = first_seq + offset
            item: Item = {
                table.PK: {"S": pk},
                table.SK: {"S": table.event_sk(seq)},
                "seq": {"N": str(seq)},
                "event": {"B": event.SerializeToString()},
            }
            if expires is not None:
                item[table.TTL_ATTRIBUTE] = {"N": str(expires)}
            table.check_size(item, "an event")
            writes.append({"Put": {"TableName": self.table_name, "Item": item}})
        table.check_transaction([write["Put"]["Item"] for write in writes])
        return snapshot, writes

    def _claim(
        self, scope: Scope, message_id: str | None, task_id: str, writes: list[Item]
    ) -> int | None:
        """Append the idempotency claim for `message_id`; its index in the transaction."""
        if not message_id:
            return None
        writes.append({
            "Put": {
                "TableName": self.table_name,
                "Item": {
                    table.PK: {"S": table.message_pk(scope, message_id)},
                    table.SK: {"S": table.MESSAGE_SK},
                    "task_id": {"S": task_id},
                    table.TTL_ATTRIBUTE: {"N": str(self._expires_at())},
                },
                "ConditionExpression": "attribute_not_exists(pk)",
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            }
        })
        return len(writes) - 1

    async def swap_lease(
        self, scope: Scope, task_id: str, expected_owner: str, lease: Lease
    ) -> StoredTask:
        pk = table.task_pk(scope, task_id)
        attributes = _lease_attributes(pk, lease)
        lost: list[Item | None] = []

        def interpret(cancellation: Cancellation) -> Exception | None:
            if not cancellation.failed(0):
                return None
            lost.append(cancellation.old_item(0))
            return LeaseLostError(task_id, None)

        try:
            # One UpdateItem: conditional on the owner, the version untouched, the task
            # returned, so a renewal is also the runner's cancel watch.
            response = await self._call(
                self._client.update_item,
                interpret,
                TableName=self.table_name,
                Key=table.key(pk, table.SNAPSHOT_SK),
                UpdateExpression="SET #o = :o, #u = :u, #s = :s",
                ConditionExpression="#o = :expected",
                ExpressionAttributeNames={"#o": table.LEASE_OWNER, "#u": table.LEASE_UNTIL,
                                          "#s": table.LEASE_SHARD},
                ExpressionAttributeValues={
                    ":o": attributes[table.LEASE_OWNER], ":u": attributes[table.LEASE_UNTIL],
                    ":s": attributes[table.LEASE_SHARD], ":expected": {"S": expected_owner},
                },
                ReturnValues="ALL_NEW",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except LeaseLostError:
            old = lost[0] if lost else None
            current = self._stored(pk, old) if old else await self.get(scope, task_id)
            raise LeaseLostError(task_id, current) from None
        return self._stored(pk, response["Attributes"])

    async def expired_leases(self, now_ms: int, limit: int) -> builtins.list[tuple[Scope, str]]:
        found: list[tuple[int, str]] = []
        for shard in range(table.LEASE_SHARDS):
            kwargs: dict[str, Any] = {
                "TableName": self.table_name,
                "IndexName": table.LEASE_INDEX,
                "KeyConditionExpression": "#s = :s AND #u < :now",
                "ExpressionAttributeNames": {"#s": table.LEASE_SHARD, "#u": table.LEASE_UNTIL},
                "ExpressionAttributeValues": {":s": {"S": f"L#{shard}"},
                                              ":now": {"N": str(now_ms)}},
                "Limit": limit,
            }
            page = await self._call(self._client.query, **kwargs)
            found.extend((int(item[table.LEASE_UNTIL]["N"]), item[table.PK]["S"])
                         for item in page.get("Items", []))
        found.sort()
        return [table.parse_task_pk(pk) for _, pk in found[:limit]]

    async def _transact(self, writes: list[Item], interpret: Interpret) -> None:
        await self._call(self._client.transact_write_items, interpret, TransactItems=writes)

    async def _expire_partition(self, pk: str, expires: Item) -> None:
        try:
            items: list[Item] = []
            kwargs: dict[str, Any] = {
                "TableName": self.table_name,
                "KeyConditionExpression": "pk = :pk",
                "FilterExpression": "attribute_not_exists(expires_at)",
                "ExpressionAttributeValues": {":pk": {"S": pk}},
            }
            while True:
                page = await self._call(self._client.query, **kwargs)
                items.extend(page.get("Items", []))
                if "LastEvaluatedKey" not in page:
                    break
                kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
            for start in range(0, len(items), 25):
                requests: Any = {
                    self.table_name: [
                        {"PutRequest": {"Item": {**item, table.TTL_ATTRIBUTE: expires}}}
                        for item in items[start:start + 25]
                    ]
                }
                for _ in range(5):
                    result = await self._call(self._client.batch_write_item, RequestItems=requests)
                    requests = result.get("UnprocessedItems") or {}
                    if not requests:
                        break
                    await asyncio.sleep(0.1)
        except (UnavailableError, InternalError):
            # Best effort: the task is stored; its older items merely outlive it.
            log.warning("could not set the expiry of the items of %s", pk, exc_info=True)

    async def events_after(self, scope: Scope, task_id: str, seq: int) -> list[StoredEvent]:
        kwargs: dict[str, Any] = {
            "TableName": self.table_name,
            "KeyConditionExpression": "pk = :pk AND sk BETWEEN :lo AND :hi",
            "ExpressionAttributeValues": {
                ":pk": {"S": table.task_pk(scope, task_id)},
                ":lo": {"S": table.event_sk(max(0, seq) + 1)},
                ":hi": {"S": table.LAST_EVENT_SK},
            },
            "ConsistentRead": True,
        }
        events: list[StoredEvent] = []
        while True:
            page = await self._call(self._client.query, **kwargs)
            events.extend(
                StoredEvent(int(item["seq"]["N"]), pb.StreamResponse.FromString(item["event"]["B"]))
                for item in page.get("Items", [])
            )
            if "LastEvaluatedKey" not in page:
                return events
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

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

    # --- push notification configs -----------------------------------------------------

    async def put_push_config(self, scope: Scope, config: pb.TaskPushNotificationConfig) -> None:
        pk = table.task_pk(scope, config.task_id)
        response = await self._call(
            self._client.get_item,
            TableName=self.table_name,
            Key=table.key(pk, table.SNAPSHOT_SK),
            ConsistentRead=True,
            ProjectionExpression="pk, expires_at",
        )
        snapshot = response.get("Item")
        if snapshot is None:
            return  # like the embedded store: no task, nothing stored
        item = self._config_item(pk, config, snapshot)
        await self._call(self._client.put_item, TableName=self.table_name, Item=item)

    @staticmethod
    def _config_item(pk: str, config: pb.TaskPushNotificationConfig, snapshot: Item) -> Item:
        """A config's item; it expires with its task (the snapshot's TTL)."""
        item: Item = {
            table.PK: {"S": pk},
            table.SK: {"S": table.push_sk(config.id)},
            "config": {"B": config.SerializeToString()},
        }
        if table.TTL_ATTRIBUTE in snapshot:
            item[table.TTL_ATTRIBUTE] = snapshot[table.TTL_ATTRIBUTE]
        table.check_size(item, "the push notification config")
        return item

    async def get_push_config(
        self, scope: Scope, task_id: str, config_id: str
    ) -> pb.TaskPushNotificationConfig | None:
        response = await self._call(
            self._client.get_item,
            TableName=self.table_name,
            Key=table.key(table.task_pk(scope, task_id), table.push_sk(config_id)),
            ConsistentRead=True,
        )
        item = response.get("Item")
        if item is None:
            return None
        config = pb.TaskPushNotificationConfig()
        config.ParseFromString(item["config"]["B"])
        return config

    async def list_push_configs(
        self, scope: Scope, task_id: str
    ) -> builtins.list[pb.TaskPushNotificationConfig]:
        kwargs: dict[str, Any] = {
            "TableName": self.table_name,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :p)",
            "ExpressionAttributeValues": {
                ":pk": {"S": table.task_pk(scope, task_id)},
                ":p": {"S": table.PUSH_PREFIX},
            },
            "ConsistentRead": True,
        }
        configs: list[pb.TaskPushNotificationConfig] = []
        while True:
            page = await self._call(self._client.query, **kwargs)
            configs.extend(
                pb.TaskPushNotificationConfig.FromString(item["config"]["B"])
                for item in page.get("Items", [])
            )
            if "LastEvaluatedKey" not in page:
                return configs
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    async def delete_push_config(self, scope: Scope, task_id: str, config_id: str) -> None:
        await self._call(
            self._client.delete_item,
            TableName=self.table_name,
            Key=table.key(table.task_pk(scope, task_id), table.push_sk(config_id)),
        )


# --- what a cancelled transaction means ------------------------------------------------
# The snapshot is always item 0 of a write; `claim` is the index of the message claim.


class _StaleSeq(Exception):
    """The remembered last_seq of this version was another writer's: the old item's instead."""

    def __init__(self, last_seq: int, terminal: bool) -> None:
        super().__init__(last_seq)
        self.last_seq = last_seq
        self.terminal = terminal


def _created(task_id: str, claim: int | None) -> Interpret:
    """For a create, a claimed message id wins over an existing task."""

    def interpret(cancellation: Cancellation) -> Exception | None:
        if claim is not None and cancellation.failed(claim):
            return DuplicateMessageError(_claimed_task(cancellation, claim))
        if cancellation.failed(0):
            return VersionConflictError(task_id)
        return None

    return interpret


def _updated(task_id: str, expected_version: int, last_seq: int, claim: int | None) -> Interpret:
    """For an update, a version conflict wins over a claimed message id."""

    def interpret(cancellation: Cancellation) -> Exception | None:
        if cancellation.failed(0) or cancellation.code(0) == "TransactionConflict":
            old = cancellation.old_item(0)
            if (
                old is not None
                and int(old["version"]["N"]) == expected_version
                and int(old["last_seq"]["N"]) != last_seq
            ):
                return _StaleSeq(int(old["last_seq"]["N"]), is_terminal(int(old["state"]["N"])))
            return VersionConflictError(task_id)
        if claim is not None and cancellation.failed(claim):
            return DuplicateMessageError(_claimed_task(cancellation, claim))
        return None

    return interpret


def _claimed_task(cancellation: Cancellation, claim: int) -> str:
    item = cancellation.old_item(claim) or {}
    return str(item.get("task_id", {}).get("S", ""))


def _lease_attributes(pk: str, lease: Lease) -> Item:
    return {
        table.LEASE_OWNER: {"S": lease.owner},
        table.LEASE_UNTIL: {"N": str(lease.until_ms)},
        table.LEASE_SHARD: {"S": table.lease_shard(pk)},
    }


def _lease(item: Item) -> Lease | None:
    if table.LEASE_OWNER not in item or table.LEASE_UNTIL not in item:
        return None
    return Lease(item[table.LEASE_OWNER]["S"], int(item[table.LEASE_UNTIL]["N"]))
