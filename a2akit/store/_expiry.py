"""Retention on DynamoDB: the items of a finished task get its expiry (TTL), and never by a
write that could re-create or overwrite an item it did not read.

The write that makes a task terminal sets ``expires_at`` on the snapshot and on the events
it writes, and puts a *marker* item (pk ``EXPIRE#<shard>``, sk the task key, the same
expiry) in the same transaction. The older items (events written before, push configs)
then get the expiry one by one: ``UpdateItem SET expires_at`` conditional on
``attribute_exists(sk)``, so a config deleted meanwhile stays deleted. Once all have it the
marker is deleted. When that step fails (DynamoDB unreachable, the process dies) the marker
stays, and `expire_finished`, which the lease sweeper calls, finds it and does the step
again until it holds. Message claims and configs put on a finished task carry the expiry
when written.

The same write puts the task's *retirement* (pk ``RETIRE#<shard>``, sk
``<expires_at>#<task key>``, its state): once the expiry has passed, `expire_finished`
takes the task out of its scope's counts (`totalSize`) and deletes the retirement, in one
transaction.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING

from a2akit.errors import A2AError
from a2akit.store import table
from a2akit.store._errors import Cancellation
from a2akit.store.table import Item

if TYPE_CHECKING:
    from a2akit.store._gateway import Gateway

__all__ = ["expire_finished", "expire_task", "marker"]

log = logging.getLogger("a2akit.store.dynamodb")

_CONCURRENT = 16  # expiry updates in flight per task


def marker(task_key: str, expires: Item) -> Item:
    """The marker item of a finished task whose older items still need `expires`."""
    return {table.PK: {"S": table.expiry_pk(task_key)}, table.SK: {"S": task_key},
            table.TTL_ATTRIBUTE: expires}


class _Gone(Exception):
    """The item was deleted between the read and the update: nothing to expire."""


def _gone(cancellation: Cancellation) -> Exception | None:
    return _Gone() if cancellation.failed(0) else None


async def expire_task(gateway: Gateway, task_key: str, expires: Item) -> bool:
    """Give every item of the task without an expiry `expires`, then drop its marker.
    Returns False (and logs) when a call failed: the marker stays for `expire_finished`."""
    try:
        kwargs: Item = {
            "TableName": gateway.name,
            "KeyConditionExpression": "pk = :pk",
            "FilterExpression": "attribute_not_exists(#e)",
            "ProjectionExpression": "pk, sk",
            "ExpressionAttributeNames": {"#e": table.TTL_ATTRIBUTE},
            "ExpressionAttributeValues": {":pk": {"S": task_key}},
            "ConsistentRead": True,
        }
        while True:
            page = await gateway.call(gateway.client.query, **kwargs)
            items = page.get("Items", [])
            for start in range(0, len(items), _CONCURRENT):
                await asyncio.gather(*(_expire(gateway, item, expires)
                                       for item in items[start:start + _CONCURRENT]))
            if "LastEvaluatedKey" not in page:
                break
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        await gateway.call(gateway.client.delete_item, TableName=gateway.name,
                           Key=table.key(table.expiry_pk(task_key), task_key))
    except A2AError:
        log.warning("could not set the expiry of the items of %s; the sweeper retries",
                    task_key, exc_info=True)
        return False
    return True


async def _expire(gateway: Gateway, item: Item, expires: Item) -> None:
    with contextlib.suppress(_Gone):  # deleted since the read: nothing to expire
        await gateway.call(gateway.client.update_item, _gone, TableName=gateway.name,
                           Key=table.key(item[table.PK]["S"], item[table.SK]["S"]),
                           UpdateExpression="SET #e = :e",
                           ConditionExpression="attribute_exists(sk)",
                           ExpressionAttributeNames={"#e": table.TTL_ATTRIBUTE},
                           ExpressionAttributeValues={":e": expires})


async def expire_finished(gateway: Gateway, limit: int) -> int:
    """Redo the expiry step of up to `limit` finished tasks that still have a marker, and
    retire up to `limit` tasks whose expiry passed; returns how many of each it did."""
    return (await _redo_expiries(gateway, limit)
            + await _retire_expired(gateway, limit))


async def _retire_expired(gateway: Gateway, limit: int) -> int:
    """Take tasks whose expiry passed out of their scope's counts: the marker deleted and
    the counts lowered in one transaction, so each task is retired once."""
    now = f"{int(time.time()):012d}"
    pages = await asyncio.gather(*(gateway.call(
        gateway.client.query, TableName=gateway.name,
        KeyConditionExpression="pk = :pk AND sk < :now",
        ExpressionAttributeValues={":pk": {"S": f"{table.RETIRE_PREFIX}{shard}"},
                                   ":now": {"S": now}},
        Limit=limit) for shard in range(table.EXPIRY_SHARDS)))
    items = [item for page in pages for item in page.get("Items", [])][:limit]
    return sum([await _retire(gateway, item) for item in items])


async def _retire(gateway: Gateway, item: Item) -> bool:
    scope, task_id = table.parse_task_pk(item[table.SK]["S"].split("#", 1)[1])
    count = table.key(table.count_pk(scope, table.list_shard(task_id)), table.COUNT_SK)
    try:
        await gateway.call(gateway.client.transact_write_items, _gone, TransactItems=[
            {"Delete": {"TableName": gateway.name,
                        "Key": table.key(item[table.PK]["S"], item[table.SK]["S"]),
                        "ConditionExpression": "attribute_exists(pk)"}},
            {"Update": {"TableName": gateway.name, "Key": count,
                        "UpdateExpression": "ADD #n :less, #s :less",
                        "ExpressionAttributeNames": {
                            "#n": table.COUNT_ALL,
                            "#s": table.count_of(int(item["state"]["N"]))},
                        "ExpressionAttributeValues": {":less": {"N": "-1"}}}}])
    except _Gone:
        return False  # retired by another sweep meanwhile
    except A2AError:
        log.warning("could not retire %s; the next sweep does", item[table.SK]["S"],
                    exc_info=True)
        return False
    return True


async def _redo_expiries(gateway: Gateway, limit: int) -> int:
    done = 0
    pages = await asyncio.gather(*(gateway.call(
        gateway.client.query, TableName=gateway.name, KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": f"{table.EXPIRY_PREFIX}{shard}"}},
        Limit=limit) for shard in range(table.EXPIRY_SHARDS)))
    for item in [item for page in pages for item in page.get("Items", [])][:limit]:
        if await expire_task(gateway, item[table.SK]["S"],
                             item[table.TTL_ATTRIBUTE]):
            done += 1
    return done
