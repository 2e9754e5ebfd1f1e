"""Reading a task's events on the DynamoDB store: the items ``EV#<seq>`` under the task's
partition, in order, large ones joined with their parts (`_parts`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from a2akit.errors import InternalError
from a2akit.generated import a2a_pb2 as pb
from a2akit.store import _parts, table
from a2akit.store.base import Scope, StoredEvent
from a2akit.store.table import Item

if TYPE_CHECKING:
    from a2akit.store._gateway import Gateway

__all__ = ["event", "events_after", "last_seq"]


async def events_after(gateway: Gateway, scope: Scope, task_id: str,
                       seq: int) -> list[StoredEvent]:
    request = _parts.sk_between(gateway.name, table.task_pk(scope, task_id),
                                table.event_sk(max(0, seq) + 1), table.LAST_EVENT_SK)
    events: list[StoredEvent] = []
    async for items in _parts.query_pages(gateway.call, gateway.client, **request):
        await _join(gateway, items)
        events.extend(
            StoredEvent(int(item["seq"]["N"]), pb.StreamResponse.FromString(item["event"]["B"]))
            for item in items
        )
    return events


async def event(gateway: Gateway, scope: Scope, task_id: str,
                seq: int) -> pb.StreamResponse | None:
    response = await gateway.call(
        gateway.client.get_item, TableName=gateway.name,
        Key=table.key(table.task_pk(scope, task_id), table.event_sk(seq)),
        ConsistentRead=True)
    item = response.get("Item")
    if item is None:
        return None
    await _join(gateway, [item])
    return pb.StreamResponse.FromString(item["event"]["B"])


async def _join(gateway: Gateway, items: list[Item]) -> None:
    """Join the parts of the large events among `items`, which live as long as they do: by
    Query, one event at a time (rare: an event over 400 KB), as every role may."""
    for item in items:
        if not await _parts.join_by_query(gateway.call, gateway.client, gateway.name, item,
                                          "event"):
            raise InternalError("a stored event is missing a part")


async def last_seq(gateway: Gateway, pk: str, floor: int) -> int:
    """The highest event sequence number written under `pk` (at least `floor`)."""
    page = await gateway.call(
        gateway.client.query, TableName=gateway.name,
        KeyConditionExpression="pk = :pk AND sk BETWEEN :lo AND :hi",
        ExpressionAttributeValues={":pk": {"S": pk}, ":lo": {"S": table.event_sk(0)},
                                   ":hi": {"S": table.LAST_EVENT_SK}},
        ScanIndexForward=False, Limit=1, ConsistentRead=True, ProjectionExpression="seq")
    items = page.get("Items", [])
    return max([floor, *(int(item["seq"]["N"]) for item in items)])
