"""The DynamoDB task store: one table, optimistic concurrency, events written with the snapshot.

Item layout (see docs/store.md); `<scope>` is ``T#<tenant>#O#<owner>`` with both parts
percent-encoded, so a ``#`` in a tenant or owner can never collide with the separators:

    pk                                 sk                 what
    <scope>#TASK#<task id>             TASK               snapshot (task bytes, version, last_seq,
                                                          lpk/lsk for the by_status_time index)
    <scope>#TASK#<task id>             EV#<seq, 20 digits>  one event (StreamResponse bytes)
    <scope>#TASK#<task id>             PUSH#<config id>   one push notification config
    <scope>#MSG#<message id>           MSG                idempotency claim: the task id

The boto3 client is synchronous; every call runs in a worker thread (`asyncio.to_thread`).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import builtins
import collections
import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote

import botocore.config
import botocore.exceptions

from a2akit.clock import timestamp_ms
from a2akit.errors import InternalError, InvalidParamsError, UnavailableError
from a2akit.generated import a2a_pb2 as pb
from a2akit.states import is_terminal
from a2akit.store import table
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

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient

__all__ = ["MAX_ITEM_BYTES", "DynamoDBStore", "client_config", "make_client"]

log = logging.getLogger(__name__)

MAX_ITEM_BYTES = 400 * 1024  # DynamoDB's item size limit (names + values)
MAX_TRANSACTION_ITEMS = 100
MAX_TRANSACTION_BYTES = 4 * 1024 * 1024
_SNAPSHOT_SK = "TASK"
_MESSAGE_SK = "MSG"
_EVENT_PREFIX = "EV#"
_PUSH_PREFIX = "PUSH#"
_SEQ_DIGITS = 20
_MS_DIGITS = 15
_THROTTLING = frozenset({
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
    "InternalServerError",
    "ServiceUnavailable",
    "LimitExceededException",
})
_CACHE_SIZE = 4096

Item = dict[str, Any]
T = TypeVar("T")


def client_config(max_attempts: int = 5) -> botocore.config.Config:
    """Retries with backoff; `standard` mode retries throttling and transient errors."""
    return botocore.config.Config(
        retries={"mode": "standard", "total_max_attempts": max_attempts},
        connect_timeout=3,
        read_timeout=10,
    )


def make_client(
    endpoint_url: str | None = None, region_name: str | None = None
) -> DynamoDBClient:
    """A DynamoDB client with the store's retry configuration (create once per process)."""
    import boto3

    return boto3.client(
        "dynamodb", endpoint_url=endpoint_url, region_name=region_name, config=client_config()
    )


class DynamoDBStore(TaskStore):
    # A runner re-reads its task this often to notice a cancel from another process.
    poll_interval = 1.0

    def __init__(
        self,
        table_name: str,
        client: DynamoDBClient,
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

    async def _call(self, fn: Callable[..., T], **kwargs: Any) -> T:
        try:
            return await asyncio.to_thread(fn, **kwargs)
        except botocore.exceptions.ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            if code == "TransactionCanceledException":
                raise
            if code in _THROTTLING:
                raise UnavailableError() from exc
            log.error("DynamoDB %s failed: %s", getattr(fn, "__name__", fn), exc)
            raise InternalError() from exc
        except (
            botocore.exceptions.ConnectionError,
            botocore.exceptions.HTTPClientError,
        ) as exc:
            raise UnavailableError() from exc
        except botocore.exceptions.BotoCoreError as exc:
            log.error("DynamoDB %s failed: %s", getattr(fn, "__name__", fn), exc)
            raise InternalError() from exc

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

    async def create_table_if_missing(self) -> None:
        """Create the table (local emulator only: on AWS the CDK stack owns it)."""
        endpoint = self._client.meta.endpoint_url
        if "amazonaws.com" in endpoint:
            raise RuntimeError("create_table_if_missing is for a local emulator endpoint")
        try:
            await asyncio.to_thread(self._client.describe_table, TableName=self.table_name)
            return
        except self._client.exceptions.ResourceNotFoundException:
            pass
        with contextlib.suppress(self._client.exceptions.ResourceInUseException):
            await asyncio.to_thread(
                self._client.create_table, **table.create_table_kwargs(self.table_name)
            )
        waiter = self._client.get_waiter("table_exists")
        await asyncio.to_thread(
            waiter.wait, TableName=self.table_name, WaiterConfig={"Delay": 1, "MaxAttempts": 30}
        )

    # --- tasks -------------------------------------------------------------------------

    async def get(self, scope: Scope, task_id: str) -> StoredTask | None:
        pk = _task_pk(scope, task_id)
        response = await self._call(
            self._client.get_item,
            TableName=self.table_name,
            Key=_key(pk, _SNAPSHOT_SK),
            ConsistentRead=True,
        )
        item = response.get("Item")
        return None if item is None else self._stored(pk, item)

    def _stored(self, pk: str, item: Item) -> StoredTask:
        version = int(item["version"]["N"])
        last_seq = int(item["last_seq"]["N"])
        task = pb.Task.FromString(item["task"]["B"])
        self._remember(pk, version, last_seq, is_terminal(task.status.state))
        return StoredTask(task, version, last_seq)

    async def create(
        self,
        scope: Scope,
        task: pb.Task,
        events: Sequence[pb.StreamResponse],
        message_id: str | None = None,
    ) -> StoredTask:
        pk = _task_pk(scope, task.id)
        snapshot, writes = self._writes(scope, task, events, version=1, first_seq=1)
        writes[0]["Put"]["ConditionExpression"] = "attribute_not_exists(pk)"
        claim = self._claim(scope, message_id, task.id, writes)
        try:
            await self._transact(writes)
        except botocore.exceptions.ClientError as exc:
            reasons = _reasons(exc)
            if claim is not None and _failed(reasons, claim):
                raise DuplicateMessageError(_claimed_task(reasons[claim])) from exc
            if _failed(reasons, 0):
                raise VersionConflictError(task.id) from exc
            raise _transaction_error(exc, reasons) from exc
        return self._stored(pk, snapshot)

    async def update(
        self,
        scope: Scope,
        task_id: str,
        expected_version: int,
        task: pb.Task,
        events: Sequence[pb.StreamResponse],
        message_id: str | None = None,
    ) -> StoredTask:
        if task.id != task_id:
            raise InvalidParamsError("task id does not match the stored task")
        pk = _task_pk(scope, task_id)
        known = self._recall(pk, expected_version)
        if known is None:
            current = await self.get(scope, task_id)
            if current is None or current.version != expected_version:
                raise VersionConflictError(task_id)
            known = (current.last_seq, is_terminal(current.task.status.state))
        last_seq, was_terminal = known
        for _attempt in range(2):
            snapshot, writes = self._writes(
                scope, task, events, version=expected_version + 1, first_seq=last_seq + 1
            )
            put = writes[0]["Put"]
            put["ConditionExpression"] = "version = :v AND last_seq = :s"
            put["ExpressionAttributeValues"] = {
                ":v": {"N": str(expected_version)},
                ":s": {"N": str(last_seq)},
            }
            put["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
            claim = self._claim(scope, message_id, task_id, writes)
            try:
                await self._transact(writes)
            except botocore.exceptions.ClientError as exc:
                reasons = _reasons(exc)
                if _failed(reasons, 0) or _reason_code(reasons, 0) == "TransactionConflict":
                    old = reasons[0].get("Item") if reasons else None
                    if (
                        old is not None
                        and int(old["version"]["N"]) == expected_version
                        and int(old["last_seq"]["N"]) != last_seq
                    ):
                        # A stale cache entry (the same version, another task): once more.
                        last_seq = int(old["last_seq"]["N"])
                        was_terminal = is_terminal(int(old["state"]["N"]))
                        continue
                    raise VersionConflictError(task_id) from exc
                if claim is not None and _failed(reasons, claim):
                    raise DuplicateMessageError(_claimed_task(reasons[claim])) from exc
                raise _transaction_error(exc, reasons) from exc
            if table.TTL_ATTRIBUTE in snapshot and not was_terminal:
                # Just terminal: give the older events and configs the same expiry, once.
                await self._expire_partition(pk, snapshot[table.TTL_ATTRIBUTE])
            return self._stored(pk, snapshot)
        raise VersionConflictError(task_id)

    def _writes(
        self,
        scope: Scope,
        task: pb.Task,
        events: Sequence[pb.StreamResponse],
        *,
        version: int,
        first_seq: int,
    ) -> tuple[Item, list[Item]]:
        """The snapshot item and the transaction items that write it with its events."""
        pk = _task_pk(scope, task.id)
        status_ms = max(0, timestamp_ms(task.status.timestamp))
        last_seq = first_seq + len(events) - 1
        expires = self._expires_at() if is_terminal(task.status.state) else None
        snapshot: Item = {
            table.PK: {"S": pk},
            table.SK: {"S": _SNAPSHOT_SK},
            table.LIST_INDEX_PK: {"S": _scope_prefix(scope)},
            table.LIST_INDEX_SK: {"S": _list_sk(status_ms, task.id)},
            "task": {"B": task.SerializeToString()},
            "version": {"N": str(version)},
            "last_seq": {"N": str(last_seq)},
            "status_ms": {"N": str(status_ms)},
            "state": {"N": str(int(task.status.state))},
            "context_id": {"S": task.context_id},
        }
        if expires is not None:
            snapshot[table.TTL_ATTRIBUTE] = {"N": str(expires)}
        _check_size(snapshot, "the task")
        writes: list[Item] = [{"Put": {"TableName": self.table_name, "Item": snapshot}}]
        for offset, event in enumerate(events):
            seq = first_seq + offset
            item: Item = {
                table.PK: {"S": pk},
                table.SK: {"S": _event_sk(seq)},
                "seq": {"N": str(seq)},
                "event": {"B": event.SerializeToString()},
            }
            if expires is not None:
                item[table.TTL_ATTRIBUTE] = {"N": str(expires)}
            _check_size(item, "an event")
            writes.append({"Put": {"TableName": self.table_name, "Item": item}})
        total = sum(_item_size(write["Put"]["Item"]) for write in writes)
        if total > MAX_TRANSACTION_BYTES - 2048:
            raise InvalidParamsError(
                f"one write of {total} bytes is over DynamoDB's 4 MB transaction limit",
                violations=[("message", "content over the 4 MB transaction limit")],
            )
        if len(writes) + 1 > MAX_TRANSACTION_ITEMS:
            raise InvalidParamsError(
                f"too many events in one write (at most {MAX_TRANSACTION_ITEMS - 2})"
            )
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
                    table.PK: {"S": _message_pk(scope, message_id)},
                    table.SK: {"S": _MESSAGE_SK},
                    "task_id": {"S": task_id},
                    table.TTL_ATTRIBUTE: {"N": str(self._expires_at())},
                },
                "ConditionExpression": "attribute_not_exists(pk)",
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            }
        })
        return len(writes) - 1

    async def _transact(self, writes: list[Item]) -> None:
        await self._call(self._client.transact_write_items, TransactItems=writes)

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
                ":pk": {"S": _task_pk(scope, task_id)},
                ":lo": {"S": _event_sk(max(0, seq) + 1)},
                ":hi": {"S": _event_sk(10**_SEQ_DIGITS - 1)},
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
            Key=_key(_message_pk(scope, message_id), _MESSAGE_SK),
            ConsistentRead=True,
        )
        item = response.get("Item")
        return None if item is None else item["task_id"]["S"]

    # --- listing -----------------------------------------------------------------------

    async def list(self, scope: Scope, query: TaskQuery) -> TaskPage:
        after = _decode_token(query.page_token) if query.page_token else None
        lpk = _scope_prefix(scope)
        values: dict[str, Any] = {":lpk": {"S": lpk}}
        key_condition = "lpk = :lpk"
        if query.status_after_ms is not None and query.status_after_ms > 0:
            key_condition += " AND lsk >= :lo"
            values[":lo"] = {"S": f"{query.status_after_ms:0{_MS_DIGITS}d}"}
        filters = []
        if query.context_id:
            filters.append("context_id = :c")
            values[":c"] = {"S": query.context_id}
        if query.state:
            filters.append("#st = :s")
            values[":s"] = {"N": str(int(query.state))}
        base: dict[str, Any] = {
            "TableName": self.table_name,
            "IndexName": table.LIST_INDEX,
            "KeyConditionExpression": key_condition,
            "ExpressionAttributeValues": values,
            "ScanIndexForward": False,
        }
        if filters:
            base["FilterExpression"] = " AND ".join(filters)
            base["ExpressionAttributeNames"] = {"#st": "state"} if query.state else {}
            if not base["ExpressionAttributeNames"]:
                del base["ExpressionAttributeNames"]
        page_size = max(1, query.page_size)

        kwargs = dict(base)
        if after is not None:
            status_ms, task_id = after
            # The key is rebuilt from the caller's scope: the token only holds a position.
            kwargs["ExclusiveStartKey"] = {
                table.LIST_INDEX_PK: {"S": lpk},
                table.LIST_INDEX_SK: {"S": _list_sk(status_ms, task_id)},
                **_key(_task_pk(scope, task_id), _SNAPSHOT_SK),
            }
        # One more than a page tells whether another page follows.
        want = page_size + 1
        kwargs["Limit"] = want if not filters else min(1000, want * 4)
        rows: list[tuple[int, str, pb.Task]] = []
        while len(rows) < want:
            page = await self._call(self._client.query, **kwargs)
            for item in page.get("Items", []):
                task = pb.Task.FromString(item["task"]["B"])
                rows.append((int(item["status_ms"]["N"]), task.id, task))
            if "LastEvaluatedKey" not in page:
                break
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        more = len(rows) > page_size
        rows = rows[:page_size]
        token = _encode_token(rows[-1][0], rows[-1][1]) if more and rows else ""
        total = await self._count(base)
        return TaskPage([row[2] for row in rows], token, total)

    async def _count(self, base: dict[str, Any]) -> int:
        """Matching tasks: a COUNT query reads (and bills) every item under the key condition."""
        kwargs = {**base, "Select": "COUNT"}
        total = 0
        while True:
            page = await self._call(self._client.query, **kwargs)
            total += page.get("Count", 0)
            if "LastEvaluatedKey" not in page:
                return total
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    # --- push notification configs -----------------------------------------------------

    async def put_push_config(self, scope: Scope, config: pb.TaskPushNotificationConfig) -> None:
        pk = _task_pk(scope, config.task_id)
        response = await self._call(
            self._client.get_item,
            TableName=self.table_name,
            Key=_key(pk, _SNAPSHOT_SK),
            ConsistentRead=True,
            ProjectionExpression="pk, expires_at",
        )
        snapshot = response.get("Item")
        if snapshot is None:
            return  # like the embedded store: no task, nothing stored
        item: Item = {
            table.PK: {"S": pk},
            table.SK: {"S": _PUSH_PREFIX + _enc(config.id)},
            "config": {"B": config.SerializeToString()},
        }
        if table.TTL_ATTRIBUTE in snapshot:
            item[table.TTL_ATTRIBUTE] = snapshot[table.TTL_ATTRIBUTE]
        _check_size(item, "the push notification config")
        await self._call(self._client.put_item, TableName=self.table_name, Item=item)

    async def get_push_config(
        self, scope: Scope, task_id: str, config_id: str
    ) -> pb.TaskPushNotificationConfig | None:
        response = await self._call(
            self._client.get_item,
            TableName=self.table_name,
            Key=_key(_task_pk(scope, task_id), _PUSH_PREFIX + _enc(config_id)),
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
                ":pk": {"S": _task_pk(scope, task_id)},
                ":p": {"S": _PUSH_PREFIX},
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
            Key=_key(_task_pk(scope, task_id), _PUSH_PREFIX + _enc(config_id)),
        )


# --- keys ------------------------------------------------------------------------------


def _enc(value: str) -> str:
    """Percent-encode everything but unreserved characters: no `#` survives."""
    return quote(value, safe="")


def _scope_prefix(scope: Scope) -> str:
    return f"T#{_enc(scope.tenant)}#O#{_enc(scope.owner)}"


def _task_pk(scope: Scope, task_id: str) -> str:
    return f"{_scope_prefix(scope)}#TASK#{_enc(task_id)}"


def _message_pk(scope: Scope, message_id: str) -> str:
    return f"{_scope_prefix(scope)}#MSG#{_enc(message_id)}"


def _event_sk(seq: int) -> str:
    return f"{_EVENT_PREFIX}{seq:0{_SEQ_DIGITS}d}"


def _list_sk(status_ms: int, task_id: str) -> str:
    return f"{status_ms:0{_MS_DIGITS}d}#{_enc(task_id)}"


def _key(pk: str, sk: str) -> Item:
    return {table.PK: {"S": pk}, table.SK: {"S": sk}}


# --- sizes and errors ------------------------------------------------------------------


def _item_size(item: Item) -> int:
    """DynamoDB's item size: attribute names plus values (numbers count ~1 byte per 2 digits)."""
    size = 0
    for name, value in item.items():
        size += len(name.encode())
        if "S" in value:
            size += len(value["S"].encode())
        elif "B" in value:
            size += len(value["B"])
        elif "N" in value:
            size += len(value["N"]) // 2 + 2
        else:
            size += len(json.dumps(value))
    return size


def _check_size(item: Item, what: str) -> None:
    size = _item_size(item)
    if size > MAX_ITEM_BYTES:
        raise InvalidParamsError(
            f"{what} is too large to store: {size} bytes, over DynamoDB's 400 KB item limit",
            violations=[("message", "content over the 400 KB item limit")],
        )


def _reasons(exc: botocore.exceptions.ClientError) -> list[Item]:
    if exc.response.get("Error", {}).get("Code") != "TransactionCanceledException":
        raise exc
    reasons: Any = exc.response.get("CancellationReasons", [])
    return [dict(reason) for reason in reasons]


def _reason_code(reasons: list[Item], index: int) -> str:
    return str(reasons[index].get("Code", "")) if index < len(reasons) else ""


def _failed(reasons: list[Item], index: int) -> bool:
    return _reason_code(reasons, index) == "ConditionalCheckFailed"


def _claimed_task(reason: Item) -> str:
    item = reason.get("Item") or {}
    return str(item.get("task_id", {}).get("S", ""))


def _transaction_error(exc: Exception, reasons: list[Item]) -> Exception:
    codes = {str(reason.get("Code", "")) for reason in reasons}
    if codes & {"ThrottlingError", "ProvisionedThroughputExceeded", "TransactionConflict"}:
        return UnavailableError()
    log.error("DynamoDB transaction cancelled: %s %s", exc, codes)
    return InternalError()


# --- page tokens -----------------------------------------------------------------------
# Same format as the embedded store. The token is only a position (status ms, task id): the
# start key is rebuilt from the caller's scope, so a forged token never reaches another's tasks.


def _encode_token(status_ms: int, task_id: str) -> str:
    return base64.urlsafe_b64encode(json.dumps([status_ms, task_id]).encode()).decode()


def _decode_token(token: str) -> tuple[int, str]:
    try:
        status_ms, task_id = json.loads(base64.urlsafe_b64decode(token.encode()))
        if (
            isinstance(status_ms, int)
            and not isinstance(status_ms, bool)
            and 0 <= status_ms < 10**_MS_DIGITS
            and isinstance(task_id, str)
            and task_id
        ):
            return status_ms, task_id
    except (ValueError, TypeError, binascii.Error):
        pass
    raise InvalidParamsError("pageToken is not a token this server issued",
                             violations=[("page_token", "invalid page token")])
