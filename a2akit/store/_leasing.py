"""Who may write a task on the DynamoDB store, outside its versioned writes: the conditional
lease swap a renewal or a worker's takeover makes, the sweeper's query of expired leases
through the lease index (sharded, no scan), and a cancel request."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from a2akit.clock import epoch_ms
from a2akit.states import TERMINAL
from a2akit.store import table
from a2akit.store._errors import Cancellation
from a2akit.store.base import Lease, LeaseLostError, Scope, StoredTask
from a2akit.store.table import Item

if TYPE_CHECKING:
    from a2akit.store._gateway import Gateway

__all__ = ["expired_leases", "request_cancel", "swap_lease"]


async def swap_lease(
    gateway: Gateway, scope: Scope, task_id: str, expected_owner: str, lease: Lease
) -> StoredTask:
    pk = table.task_pk(scope, task_id)
    attributes = table.lease_attributes(pk, lease)
    lost: list[Item | None] = []

    def interpret(cancellation: Cancellation) -> Exception | None:
        if not cancellation.failed(0):
            return None
        lost.append(cancellation.old_item(0))
        return LeaseLostError(task_id, None)

    try:
        # One UpdateItem: conditional on the owner, the version untouched, the task
        # returned, so a renewal is also the runner's cancel watch.
        response = await gateway.call(
            gateway.client.update_item,
            interpret,
            TableName=gateway.name,
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
        current = await gateway.whole(pk, old) if old else await gateway.read(pk)
        raise LeaseLostError(task_id, current) from None
    stored = await gateway.whole(pk, response["Attributes"])
    if stored is None:  # a large task that went while its parts were read
        raise LeaseLostError(task_id, None)
    return stored


async def expired_leases(gateway: Gateway, now_ms: int,
                         limit: int) -> list[tuple[Scope, str]]:
    found: list[tuple[int, str]] = []
    for shard in range(table.LEASE_SHARDS):
        kwargs: dict[str, Any] = {
            "TableName": gateway.name,
            "IndexName": table.LEASE_INDEX,
            "KeyConditionExpression": "#s = :s AND #u < :now",
            "ExpressionAttributeNames": {"#s": table.LEASE_SHARD, "#u": table.LEASE_UNTIL},
            "ExpressionAttributeValues": {":s": {"S": f"L#{shard}"},
                                          ":now": {"N": str(now_ms)}},
            "Limit": limit,
        }
        page = await gateway.call(gateway.client.query, **kwargs)
        found.extend((int(item[table.LEASE_UNTIL]["N"]), item[table.PK]["S"])
                     for item in page.get("Items", []))
    found.sort()
    return [table.parse_task_pk(pk) for _, pk in found[:limit]]


class _Ended(Exception):
    """The task to mark is gone or has ended."""


async def request_cancel(gateway: Gateway, scope: Scope, task_id: str) -> StoredTask | None:
    pk = table.task_pk(scope, task_id)
    ended = {f":t{state}": {"N": str(state)} for state in sorted(TERMINAL)}
    try:
        # One UpdateItem on an unfinished snapshot, its version untouched: from now on the
        # versioned writes that would leave the task unfinished fail their condition.
        response = await gateway.call(
            gateway.client.update_item,
            lambda cancellation: _Ended() if cancellation.failed(0) else None,
            TableName=gateway.name,
            Key=table.key(pk, table.SNAPSHOT_SK),
            UpdateExpression="SET #c = :now",
            ConditionExpression=f"attribute_exists(pk) AND NOT #st IN ({', '.join(ended)})",
            ExpressionAttributeNames={"#c": table.CANCEL_REQUESTED, "#st": "state"},
            ExpressionAttributeValues={":now": {"N": str(epoch_ms())}, **ended},
            ReturnValues="ALL_NEW",
        )
    except _Ended:
        return await gateway.read(pk)  # gone, or already ended
    return await gateway.whole(pk, response["Attributes"])
