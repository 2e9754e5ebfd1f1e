"""The stream feed: DynamoDB Streams records (the Lambda event of `handlers.push`) turned into
deliveries and dispatched, in order per task, tasks concurrently.

The event source mapping lets only INSERTs of event items through (infra), and this module
checks again, so snapshots, lease renewals, configs and message claims never reach a
webhook. A record the dispatcher could not settle (store or dead-letter queue unreachable)
is reported by its sequence number, and that task's later records are left for the retry,
which starts there (Lambda's partial batch response for streams). A webhook that fails is
never such a record: it goes to the dead-letter queue, so it blocks no one.

An event too large for one DynamoDB item is stored in parts (docs/store.md, "Large tasks"):
its record carries the first part only, so it is read whole from the store when its turn
comes (its parts are written before it, so they are there).
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from a2akit.generated import a2a_pb2 as pb
from a2akit.push.dispatcher import Delivery, Dispatcher
from a2akit.store import table
from a2akit.store.base import Scope

__all__ = ["Large", "delivery", "dispatch_records"]

log = logging.getLogger("a2akit.push")

Record = Mapping[str, Any]


@dataclasses.dataclass(frozen=True)
class Large:
    """A new event stored in parts: read whole from the store before it is dispatched."""

    scope: Scope
    task_id: str
    seq: int
    traceparent: str | None = None


def delivery(record: Record) -> Delivery | Large | None:
    """The delivery a stream record carries: None for any record but a new event item.

    Raises ValueError (or KeyError) for an event record this kit did not write."""
    if record.get("eventName") != "INSERT":
        return None
    data = record["dynamodb"]
    keys = data["Keys"]
    if not keys[table.SK]["S"].startswith(table.EVENT_PREFIX):
        return None
    scope, task_id = table.parse_task_pk(keys[table.PK]["S"])
    image = data["NewImage"]
    # The trace of the write that stored the event (absent on items of older versions).
    traceparent = image.get(table.TRACEPARENT, {}).get("S")
    if table.PARTS in image:
        return Large(scope, task_id, int(image["seq"]["N"]), traceparent)
    # Lambda's JSON event carries binary attributes base64-encoded.
    event = pb.StreamResponse.FromString(base64.b64decode(image["event"]["B"], validate=True))
    return Delivery(scope, task_id, int(image["seq"]["N"]), event, traceparent)


async def dispatch_records(dispatcher: Dispatcher, records: Iterable[Record],
                           budget: float | None = None) -> list[str]:
    """Dispatch the records' deliveries, starting none after `budget` seconds (retries of one
    that started stop there too, and it fails for good); returns the sequence numbers of the
    records to retry (at most one per task: the earliest it did not settle)."""
    deadline = None if budget is None else asyncio.get_running_loop().time() + budget
    tasks: dict[tuple[Scope, str], list[tuple[str, Delivery | Large]]] = {}
    for record in records:
        try:
            found = delivery(record)
            sequence = str(record["dynamodb"]["SequenceNumber"])
            int(sequence)  # numeric: the retry point is the smallest of them
        except (KeyError, TypeError, ValueError) as exc:
            # Retrying a record that cannot be read would only block its shard.
            log.error("push: skipped a stream record this kit cannot read: %r", exc)
            continue
        if found is not None:
            tasks.setdefault((found.scope, found.task_id), []).append((sequence, found))

    async def in_order(items: list[tuple[str, Delivery | Large]]) -> str | None:
        # The events of one transaction may reach the stream in any order: send by seq.
        items.sort(key=lambda item: item[1].seq)
        loop = asyncio.get_running_loop()
        for index, (_, item) in enumerate(items):
            if deadline is not None and loop.time() >= deadline:
                # Out of time before this event: the mapping offers it again, from here.
                return min((sequence for sequence, _ in items[index:]), key=int)
            try:
                if isinstance(item, Large):
                    event = await dispatcher.store.event(item.scope, item.task_id, item.seq)
                    if event is None:  # expired since: nobody is waiting for it any more
                        log.warning("push: task %s event %d is gone", item.task_id, item.seq)
                        continue
                    item = Delivery(item.scope, item.task_id, item.seq, event,
                                    item.traceparent)
                await dispatcher.dispatch(item, deadline=deadline)
            except Exception:
                log.exception("push: task %s event %d could not be dispatched; retried",
                              item.task_id, item.seq)
                # The retry starts at this record in stream order: the earliest one left.
                return min((sequence for sequence, _ in items[index:]), key=int)
        return None

    failed = await asyncio.gather(*(in_order(items) for items in tasks.values()))
    return [sequence for sequence in failed if sequence is not None]
