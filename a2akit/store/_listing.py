"""ListTasks on DynamoDB: index ranges read newest first, merged into a page, and counted.

A listing reads one or more *ranges*, each one partition of a list index (`table`):

- with a context filter, the context's partition of ``list_by_context``;
- without one, the scope's `table.LIST_SHARDS` partitions of ``list_by_scope``.

Every range is sorted by ``lsk`` (the `cursor.Position`), so the page is a k-way merge of
the ranges, newest first: a row is taken only while every range that is not finished has a
row buffered, so the merge is exact across shards and pages. A page token is the position of
the page's last task, a point in the one global order: the next page is every range's part
below it, whatever shard the task was in, so the token needs no shard.

Ranges are read in small batches (the first ones sized to the range's expected share of the
page, doubling when a range runs dry) and concurrently. Index items hold keys and the task
state only; the page's tasks are then read by key with one BatchGetItem.

totalSize without a context filter or a status-time bound is the scope's counts: one
BatchGetItem of its count items, one per shard, which every snapshot write keeps (store
docs, "totalSize"), so a page costs the same however many tasks the owner has. Otherwise it
counts the matching index items of each range, reading each item at most once: the rows the
page read, plus a `Select=COUNT` query of what lies above the token (if any) and of what the
page did not reach. A range read to its end from the top costs no count query.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import math
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from a2akit.errors import UnavailableError
from a2akit.generated import a2a_pb2 as pb
from a2akit.store import _bodies, _parts, cursor, table
from a2akit.store.base import Lease, Scope, TaskPage, TaskQuery
from a2akit.store.table import Item

if TYPE_CHECKING:
    from a2akit.store._gateway import Gateway

__all__ = ["count_states", "list_tasks"]

_MAX_LIMIT = 1000  # rows per query at most; a query reads 1 MB at most anyway
_REREADS = 5  # a listed snapshot replaced while its parts were read: read again so often


@dataclasses.dataclass
class _Range:
    """One index partition, read newest first."""

    index: str
    partition: str  # the index's partition key attribute
    value: str
    rows: collections.deque[Item] = dataclasses.field(default_factory=collections.deque)
    start: Item | None = None  # LastEvaluatedKey of the last read
    done: bool = False  # read to the end
    matched: int = 0  # rows read (after the state filter)
    reads: int = 0

    def head(self) -> str:
        return str(self.rows[0][table.LIST_INDEX_SK]["S"])


class _Listing:
    def __init__(self, gateway: Gateway, scope: Scope, query: TaskQuery) -> None:
        self._gateway = gateway
        self._query = query
        self._scope = scope
        self._after = cursor.decode(query.page_token) if query.page_token else None
        self._low = (table.list_sk_from(query.status_after_ms)
                     if query.status_after_ms is not None and query.status_after_ms > 0
                     else None)
        self._high = None if self._after is None else table.list_sk(self._after)
        if query.context_id:
            self._ranges = [_Range(table.CONTEXT_INDEX, table.CONTEXT_INDEX_PK,
                                   table.context_pk(scope, query.context_id))]
        else:
            self._ranges = [_Range(table.LIST_INDEX, table.LIST_INDEX_PK,
                                   table.list_pk(scope, shard))
                            for shard in range(table.LIST_SHARDS)]
        if self._high is not None and self._low is not None and self._high < self._low:
            # The token lies below the status-time bound: nothing is left to page through.
            for range_ in self._ranges:
                range_.done = True

    # --- the queries -----------------------------------------------------------------------

    def _kwargs(self, range_: _Range, sort_condition: str, values: dict[str, Any]) -> Item:
        kwargs: Item = {
            "TableName": self._gateway.name,
            "IndexName": range_.index,
            "KeyConditionExpression": f"{range_.partition} = :p{sort_condition}",
            "ExpressionAttributeValues": {":p": {"S": range_.value}, **values},
            "ScanIndexForward": False,
        }
        if self._query.state:
            kwargs["FilterExpression"] = "#st = :st"
            kwargs["ExpressionAttributeNames"] = {"#st": "state"}
            kwargs["ExpressionAttributeValues"][":st"] = {"N": str(int(self._query.state))}
        return kwargs

    def _page_kwargs(self, range_: _Range) -> Item:
        """The range below the token (exclusive) and at or above the status-time bound."""
        low, high = self._low, self._high
        if high is not None and low is not None:
            # BETWEEN is inclusive: the token's own row is dropped when read.
            return self._kwargs(range_, f" AND {table.LIST_INDEX_SK} BETWEEN :lo AND :hi",
                                {":lo": {"S": low}, ":hi": {"S": high}})
        if high is not None:
            return self._kwargs(range_, f" AND {table.LIST_INDEX_SK} < :hi",
                                {":hi": {"S": high}})
        if low is not None:
            return self._kwargs(range_, f" AND {table.LIST_INDEX_SK} >= :lo",
                                {":lo": {"S": low}})
        return self._kwargs(range_, "", {})

    def _above_kwargs(self, range_: _Range) -> Item:
        """What a token skipped: the token's row and everything newer (still >= the bound)."""
        assert self._high is not None
        if self._low is not None and self._high < self._low:
            return self._kwargs(range_, f" AND {table.LIST_INDEX_SK} >= :lo",
                                {":lo": {"S": self._low}})
        return self._kwargs(range_, f" AND {table.LIST_INDEX_SK} >= :hi",
                            {":hi": {"S": self._high}})

    async def _fill(self, range_: _Range, first_limit: int) -> None:
        """Read the range's next batch; loop while a filter leaves a batch empty."""
        while not range_.rows and not range_.done:
            kwargs = self._page_kwargs(range_)
            kwargs["Limit"] = min(_MAX_LIMIT, first_limit << min(range_.reads, 10))
            if range_.start is not None:
                kwargs["ExclusiveStartKey"] = range_.start
            page = await self._gateway.call(self._gateway.client.query, **kwargs)
            range_.reads += 1
            for item in page.get("Items", []):
                if self._high is not None and item[table.LIST_INDEX_SK]["S"] == self._high:
                    continue  # the token's own task, on the previous page
                range_.rows.append(item)
                range_.matched += 1
            range_.start = page.get("LastEvaluatedKey")
            range_.done = range_.start is None

    async def _count(self, kwargs: Item) -> int:
        kwargs = {**kwargs, "Select": "COUNT"}
        total = 0
        while True:
            page = await self._gateway.call(self._gateway.client.query, **kwargs)
            total += int(page.get("Count", 0))
            if "LastEvaluatedKey" not in page:
                return total
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    async def _range_total(self, range_: _Range) -> int:
        total = range_.matched
        if self._high is not None:
            total += await self._count(self._above_kwargs(range_))
        if not range_.done:
            rest = self._page_kwargs(range_)
            if range_.start is not None:
                rest["ExclusiveStartKey"] = range_.start
            total += await self._count(rest)
        return total

    # --- the page --------------------------------------------------------------------------

    async def page(self) -> TaskPage:
        size = max(cursor.MIN_PAGE_SIZE, self._query.page_size)
        want = size + 1  # one more than a page tells whether another page follows
        ranges = self._ranges
        share = want if len(ranges) == 1 else min(want, math.ceil(1.5 * want / len(ranges)) + 2)
        picked: list[Item] = []
        while len(picked) < want:
            dry = [r for r in ranges if not r.rows and not r.done]
            if dry:
                await asyncio.gather(*(self._fill(r, share) for r in dry))
                continue
            live = [r for r in ranges if r.rows]
            if not live:
                break
            picked.append(max(live, key=_Range.head).rows.popleft())
        more = len(picked) > size
        picked = picked[:size]
        (tasks, leases), total = await asyncio.gather(self._tasks(picked), self._total())
        token = ""
        if more and picked:
            token = cursor.encode(table.list_position(picked[-1][table.LIST_INDEX_SK]["S"]))
        return TaskPage(tasks, token, total, leases)

    async def _total(self) -> int:
        """totalSize: the scope's counts when they answer the query (no context, no status
        time bound), else the ranges' index items, each read at most once."""
        if self._query.context_id or self._low is not None:
            return sum(await asyncio.gather(*(self._range_total(r) for r in self._ranges)))
        name = table.count_of(self._query.state) if self._query.state else table.COUNT_ALL
        return await _counted(self._gateway, self._scope, [name])

    async def _batch_get(self, keys: list[Item], extra: Item) -> list[Item]:
        """The items of `keys` (eventually consistent), unprocessed keys read again."""
        return await _parts.batch_get(self._gateway.call, self._gateway.client, self._gateway.name,
                                      keys, extra)

    async def _tasks(self, rows: list[Item]) -> tuple[list[pb.Task], dict[str, Lease]]:
        """The page's snapshots, in the page's order, and the leases of those that hold one.
        A task the index lists but the table no longer holds (expired between the two reads)
        is left out."""
        if not rows:
            return [], {}
        keys = [table.key(row[table.PK]["S"], table.SNAPSHOT_SK) for row in rows]
        found: dict[str, pb.Task] = {}
        held: dict[str, Lease] = {}
        items = await self._whole(await self._batch_get(keys, {
                "ProjectionExpression": "pk, #t, #o, #u, #p, #k, #l, #d, #e, #s",
                "ExpressionAttributeNames": {"#t": "task", "#o": table.LEASE_OWNER,
                                             "#u": table.LEASE_UNTIL, "#p": table.PARTS,
                                             "#k": table.PART_TOKEN, "#l": _bodies.LAYOUT,
                                             "#d": _bodies.DIGEST, "#e": _bodies.TAIL_DIGEST,
                                             "#s": "last_seq"}}))
        # The bodies of the page's tasks that have any: one Query each, concurrently.
        joined = await asyncio.gather(*(self._gateway.joined(item[table.PK]["S"], item)
                                        for item in items))
        for item, task in zip(items, joined, strict=True):
            found[item[table.PK]["S"]] = task
            if table.LEASE_OWNER in item and table.LEASE_UNTIL in item:
                held[item[table.PK]["S"]] = Lease(item[table.LEASE_OWNER]["S"],
                                                  int(item[table.LEASE_UNTIL]["N"]))
        tasks: list[pb.Task] = []
        leases: dict[str, Lease] = {}
        for row in rows:
            pk = row[table.PK]["S"]
            if pk in found:
                task = found[pk]
                tasks.append(task)
                if pk in held:
                    leases[task.id] = held[pk]
        return tasks, leases

    async def _whole(self, items: list[Item]) -> list[Item]:
        """The snapshots with their parts joined (only large ones have any). One replaced
        while it was read (its parts deleted) is read again, strongly consistent; one gone
        meanwhile (TTL) is left out."""
        gone = await _parts.join(self._gateway.call, self._gateway.client, self._gateway.name,
                                 items, "task")
        for _attempt in range(_REREADS):
            if not gone:
                return items
            stale = {id(item) for item in gone}
            items = [item for item in items if id(item) not in stale]
            again = await self._batch_get(
                [table.key(item[table.PK]["S"], table.SNAPSHOT_SK) for item in gone],
                {"ConsistentRead": True})
            items += again
            gone = await _parts.join(self._gateway.call, self._gateway.client, self._gateway.name,
                                     again, "task")
        raise UnavailableError("a large task kept changing while it was listed")


async def count_states(gateway: Gateway, scope: Scope,
                       states: Collection[int]) -> int:
    """How many of the scope's tasks are in one of `states`: one BatchGetItem of the
    scope's count items, whatever the number of tasks."""
    return await _counted(gateway, scope,
                          [table.count_of(state) for state in states])


async def _counted(gateway: Gateway, scope: Scope,
                   names: list[str]) -> int:
    """The sum of the count attributes `names` over the scope's count items (one per list
    shard, kept by every snapshot write)."""
    if not names:
        return 0
    aliases = {f"#c{i}": name for i, name in enumerate(names)}
    keys = [table.key(table.count_pk(scope, shard), table.COUNT_SK)
            for shard in range(table.LIST_SHARDS)]
    found = await _parts.batch_get(gateway.call, gateway.client, gateway.name, keys, {
        "ProjectionExpression": ", ".join(aliases), "ExpressionAttributeNames": aliases})
    return sum(int(item.get(name, {"N": "0"})["N"]) for item in found for name in names)


async def list_tasks(gateway: Gateway, scope: Scope,
                     query: TaskQuery) -> TaskPage:
    """One ListTasks page and its totalSize. Raises InvalidParamsError for a foreign token."""
    return await _Listing(gateway, scope, query).page()
