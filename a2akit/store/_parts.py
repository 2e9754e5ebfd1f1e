"""Large snapshots and events on DynamoDB: an item over 400 KB is split into parts, items
under the task's partition, and joined again when read (docs/store.md, "Large tasks").

The item keeps its key, its other attributes and the first part of its bytes (as much as
fits), plus ``parts`` (how many) and ``part_token`` (random, new for every split); part
``i`` (1..parts-1) is the item ``PART#<token>#<i, 6 digits>`` holding ``part``. A write puts
the parts in the same transaction as the item or in earlier ones (they precede it in the
write's order, `_plan.transactions`), so whoever can read the item can read its parts. A new
token per split means parts are never overwritten: a snapshot's parts stay valid until the
write after it commits and deletes them (`delete`); a reader that finds them gone read a
snapshot that was replaced meanwhile, and reads it again (`join`). Event parts live as long
as their event.

Items that fit are stored as before: reading them costs no more than before. Since parts are
never overwritten, the whole bytes of a token never change: the gateway keeps those of the
large snapshots it wrote or read (`Cache`), so a runner that reads its own task again (its
cancel watch, its lease renewals) reads the item only, not its parts.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

from a2akit.errors import A2AError, UnavailableError
from a2akit.store import table
from a2akit.store.table import Item

__all__ = ["Cache", "Call", "Ref", "batch_get", "delete", "join", "join_by_query", "query_pages",
           "ref", "sk_between", "split"]

log = logging.getLogger("a2akit.store.dynamodb")

# `_gateway.Gateway.call`: one client method in a worker thread, its errors translated. This
# module sits below the gateway (whose reads join parts), so it takes the call, the client
# and the table name rather than the gateway.
Call = Callable[..., Awaitable[Any]]

PART = "part"  # B: the bytes of one part
_SPARE = 256  # bytes kept free of each item, for the attributes the split adds
_BATCH_GET_KEYS = 100  # DynamoDB's BatchGetItem limit
_DELETES_AT_ONCE = 8  # DeleteItem calls in flight for one replaced snapshot
_ATTEMPTS = 5

Ref = tuple[str, str, int]  # a split item's parts: pk, token, how many


class Cache:
    """The whole bytes of split items by (pk, token), least recently used dropped past
    `max_bytes`. Safe to share between threads."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._entries: collections.OrderedDict[tuple[str, str], bytes] = (
            collections.OrderedDict())
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, pk: str, token: str) -> bytes | None:
        with self._lock:
            data = self._entries.get((pk, token))
            if data is not None:
                self._entries.move_to_end((pk, token))
            return data

    def put(self, pk: str, token: str, data: bytes) -> None:
        if len(data) > self.max_bytes:
            return
        with self._lock:
            old = self._entries.pop((pk, token), None)
            self._bytes += len(data) - (0 if old is None else len(old))
            self._entries[(pk, token)] = data
            while self._bytes > self.max_bytes:
                _, dropped = self._entries.popitem(last=False)
                self._bytes -= len(dropped)


def split(item: Item, attribute: str) -> list[Item]:
    """If `item` is over DynamoDB's item size, move all but the first part of its bytes
    (`attribute`, B) to part items, which it returns (it marks `item` with their count and
    token); else nothing. Each part carries the item's expiry, if it has one."""
    size = table.item_size(item)
    if size <= table.MAX_ITEM_BYTES:
        return []
    data: bytes = item[attribute]["B"]
    pk = item[table.PK]["S"]
    token = os.urandom(8).hex()
    first = table.MAX_ITEM_BYTES - (size - len(data)) - _SPARE
    empty: Item = {**table.key(pk, table.part_sk(token, 0)), PART: {"B": b""}}
    if table.TTL_ATTRIBUTE in item:
        empty[table.TTL_ATTRIBUTE] = item[table.TTL_ATTRIBUTE]
    each = table.MAX_ITEM_BYTES - table.item_size(empty) - _SPARE
    chunks = [data[:first]] + [data[start:start + each] for start in range(first, len(data), each)]
    item[attribute] = {"B": chunks[0]}
    item[table.PARTS] = {"N": str(len(chunks))}
    item[table.PART_TOKEN] = {"S": token}
    parts = [{**empty, table.SK: {"S": table.part_sk(token, index)}, PART: {"B": chunk}}
             for index, chunk in enumerate(chunks) if index]
    for part in parts:
        table.check_size(part, "a part of a large item")
    table.check_size(item, "a split item")
    return parts


def ref(item: Item) -> Ref | None:
    """Where a split item's other parts are; None for an item stored whole."""
    if table.PARTS not in item:
        return None
    return item[table.PK]["S"], item[table.PART_TOKEN]["S"], int(item[table.PARTS]["N"])


def _keys(where: Ref) -> list[Item]:
    pk, token, count = where
    return [table.key(pk, table.part_sk(token, index)) for index in range(1, count)]


async def batch_get(call: Call, client: Any, table_name: str, keys: Sequence[Item],
                    extra: Item) -> list[Item]:
    """The items of `keys` (in any order; absent ones left out), 100 keys per call,
    unprocessed keys read again with backoff."""
    found: list[Item] = []
    for start in range(0, len(keys), _BATCH_GET_KEYS):
        request: Any = {table_name: {"Keys": list(keys[start:start + _BATCH_GET_KEYS]),
                                     **extra}}
        for attempt in range(_ATTEMPTS):
            response = await call(client.batch_get_item, RequestItems=request)
            found.extend(response.get("Responses", {}).get(table_name, []))
            request = response.get("UnprocessedKeys") or {}
            if not request:
                break
            await asyncio.sleep(0.05 * 2**attempt)
        else:
            raise UnavailableError()
    return found


async def join(call: Call, client: Any, table_name: str, items: Sequence[Item],
               attribute: str, cache: Cache | None = None) -> list[Item]:
    """Put the whole bytes back into each split item of `items` (in place): from `cache`, or
    reading all their parts in one BatchGetItem (strongly consistent), then kept in `cache`;
    returns the items whose parts are gone (left as they were)."""
    split_items = []
    for item in items:
        where = ref(item)
        if where is None:
            continue
        known = None if cache is None else cache.get(where[0], where[1])
        if known is not None:
            _whole(item, attribute, known)
        else:
            split_items.append((item, where))
    if not split_items:
        return []
    keys = [key for _, where in split_items for key in _keys(where)]
    found = await batch_get(call, client, table_name, keys, {"ConsistentRead": True})
    parts = {(item[table.PK]["S"], item[table.SK]["S"]): item[PART]["B"] for item in found}
    gone: list[Item] = []
    for item, (pk, token, count) in split_items:
        chunks = [parts.get((pk, table.part_sk(token, index))) for index in range(1, count)]
        if any(chunk is None for chunk in chunks):
            gone.append(item)
            continue
        data = b"".join([item[attribute]["B"], *(c for c in chunks if c)])
        if cache is not None:
            cache.put(pk, token, data)
        _whole(item, attribute, data)
    return gone


async def query_pages(call: Call, client: Any, **request: Any) -> AsyncIterator[list[Item]]:
    """The items of a strongly consistent Query, a page (up to 1 MB) at a time, followed to
    its last page."""
    kwargs: Item = {**request, "ConsistentRead": True}
    while True:
        page = await call(client.query, **kwargs)
        yield page.get("Items", [])
        if "LastEvaluatedKey" not in page:
            return
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def sk_between(table_name: str, pk: str, lo: str, hi: str) -> Item:
    """A Query's request for the items of partition `pk` whose sort keys are from `lo` to
    `hi`."""
    return {"TableName": table_name,
            "KeyConditionExpression": "pk = :pk AND sk BETWEEN :lo AND :hi",
            "ExpressionAttributeValues": {":pk": {"S": pk}, ":lo": {"S": lo}, ":hi": {"S": hi}}}


async def join_by_query(call: Call, client: Any, table_name: str, item: Item,
                        attribute: str, cache: Cache | None = None) -> bool:
    """`join` for one item: from `cache`, or its parts read by `Query` (strongly
    consistent, 1 MB a page) rather than BatchGetItem, then kept in `cache`. Every role may
    Query (infra/table.py, infra/push.py); only the door may BatchGetItem, for a page of
    listed tasks. Returns False when its parts are gone."""
    where = ref(item)
    if where is None:
        return True
    pk, token, count = where
    known = None if cache is None else cache.get(pk, token)
    if known is not None:
        _whole(item, attribute, known)
        return True
    chunks: list[bytes] = []
    async for parts in query_pages(
            call, client, TableName=table_name,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :p)",
            ExpressionAttributeValues={":pk": {"S": pk},
                                       ":p": {"S": table.part_sk(token, 0)[:-6]}}):
        chunks += [part[PART]["B"] for part in parts]  # in sk order
    if len(chunks) != count - 1:
        return False
    data = b"".join([item[attribute]["B"], *chunks])
    if cache is not None:
        cache.put(pk, token, data)
    _whole(item, attribute, data)
    return True


def _whole(item: Item, attribute: str, data: bytes) -> None:
    item[attribute] = {"B": data}
    for name in (table.PARTS, table.PART_TOKEN):
        del item[name]


async def delete(call: Call, client: Any, table_name: str, where: Ref) -> None:
    """Delete the parts of a replaced snapshot (DeleteItem, a few at a time: the permission
    every writer of a task already has). A failure is logged only: the parts stay under the
    task's partition and expire with the task."""
    limit = asyncio.Semaphore(_DELETES_AT_ONCE)

    async def one(key: Item) -> None:
        async with limit:
            await call(client.delete_item, TableName=table_name, Key=key)

    try:
        await asyncio.gather(*(one(key) for key in _keys(where)))
    except A2AError:
        log.warning("could not delete the parts of a replaced snapshot of %s; they expire "
                    "with the task", where[0], exc_info=True)
