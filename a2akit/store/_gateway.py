"""The table gateway: what every helper of the DynamoDB store reaches the table through.

`Gateway` holds the client (boto3's or the kit's own, `_client`: both synchronous), the table
name, and the primitives the helpers share:

- `call`: one client method in a worker thread (`asyncio.to_thread`), its errors the kit's
  (`_errors.translated`, with the caller's reading of a failed condition);
- `put` builds a transaction's Put entry; `transact` runs one transaction, again while only
  a shared count item was contended (`Contended`: nothing was written);
- `read` and `whole`: a task's snapshot, its parts joined when it is large (`_parts`), read
  again when it was replaced meanwhile; `stored` decodes one.

It remembers what this process last read or wrote: per (task key, version) the last_seq,
state, parts and quota count of the snapshot (`recall`), so an update after a read needs no
extra read (its write is conditional on version and last_seq anyway), and the whole bytes of
large snapshots (`part_cache`), so a runner's own re-reads read no parts.

Helpers take the gateway, never the store: `dynamodb.DynamoDBStore` composes them.
"""

from __future__ import annotations

import asyncio
import collections
import random
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from a2akit.errors import UnavailableError
from a2akit.generated import a2a_pb2 as pb
from a2akit.store import _bodies, _parts, table
from a2akit.store._errors import Interpret, error_code, translated
from a2akit.store.base import StoredTask
from a2akit.store.table import Item

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient

    from a2akit.store._client import Client

__all__ = ["Contended", "Gateway", "Known"]

T = TypeVar("T")

_CACHE_SIZE = 4096
_REREADS = 5  # a large snapshot replaced while its parts were read: read again so often
# The whole bytes of the large snapshots this process last wrote or read (docs/store.md,
# "Large tasks").
_PART_CACHE_BYTES = 32 * 1024 * 1024
_CONTENDED_ATTEMPTS = 8  # a transaction cancelled on a shared count item: tries in all

# A version's last_seq, state, parts, whether it is in its owner's quota count, and its
# body layout.
Known = tuple[int, int, _parts.Ref | None, bool, _bodies.Layout | None]


class Contended(Exception):
    """Another transaction held a shared item (a scope's count) at the same moment."""


class Gateway:
    def __init__(self, name: str, client: DynamoDBClient | Client) -> None:
        self.name = name
        self.client = client
        self.part_cache = _parts.Cache(_PART_CACHE_BYTES)
        self.body_cache = _parts.Cache(_PART_CACHE_BYTES)  # bodies, by (pk, number)
        self._known: collections.OrderedDict[tuple[str, int], Known] = (
            collections.OrderedDict())
        self._known_lock = threading.Lock()

    # --- calls -------------------------------------------------------------------------

    async def call(
        self, fn: Callable[..., T], /, interpret: Interpret | None = None, **kwargs: Any
    ) -> T:
        with translated(getattr(fn, "__name__", str(fn)), interpret):
            return await asyncio.to_thread(fn, **kwargs)

    def put(self, item: Item, condition: str | None = None, values: Item | None = None
            ) -> Item:
        """A TransactWriteItems Put entry of `item`."""
        put: Item = {"TableName": self.name, "Item": item}
        if condition:
            put["ConditionExpression"] = condition
        if values:
            put["ExpressionAttributeValues"] = values
        return {"Put": put}

    async def transact(self, writes: list[Item], interpret: Interpret) -> None:
        """One transaction; `interpret` reads its cancellation (`Contended`: try again)."""
        for attempt in range(_CONTENDED_ATTEMPTS):
            try:
                await self.call(self.client.transact_write_items, interpret,
                                TransactItems=writes)
                return
            except Contended:
                # Cancelled, nothing written: another task's write held the scope's count.
                await asyncio.sleep(random.uniform(0, 0.01 * 2**attempt))
        raise UnavailableError("the task's scope is too busy; try again")

    # --- snapshots ---------------------------------------------------------------------

    async def read(self, pk: str) -> StoredTask | None:
        """The task of the snapshot `pk` (strongly consistent), None when there is none."""
        item = await self._snapshot(pk)
        return None if item is None else await self.whole(pk, item)

    async def _snapshot(self, pk: str) -> Item | None:
        response = await self.call(
            self.client.get_item,
            TableName=self.name,
            Key=table.key(pk, table.SNAPSHOT_SK),
            ConsistentRead=True,
        )
        return response.get("Item")

    async def whole(self, pk: str, item: Item | None) -> StoredTask | None:
        """The task of a snapshot item read from the table, its parts joined when it is
        large; one replaced since it was read (its parts deleted) is read again."""
        for _attempt in range(_REREADS):
            if item is None:
                return None
            parts = _parts.ref(item)
            if await _parts.join_by_query(self.call, self.client, self.name, item, "task",
                                          self.part_cache):
                return self.stored(pk, item, parts, await self.joined(pk, item))
            item = await self._snapshot(pk)
        raise UnavailableError("a large task kept changing while it was read")

    async def joined(self, pk: str, item: Item) -> pb.Task:
        """The task of a snapshot item whose bytes are whole, with its bodies."""
        head = pb.Task.FromString(item["task"]["B"])
        layout = _bodies.layout_of(item)
        if layout is None or not layout.joins:
            return head
        bodies = await _bodies.read(self.call, self.client, self.name, pk, layout,
                                    self.body_cache) if layout.live else []
        tail_parts = []
        if layout.tail is not None:
            tail_parts = await _bodies.read_tail(
                self.call, self.client, self.name, pk, layout, int(item["last_seq"]["N"]),
                head.artifacts[layout.tail.artifact].artifact_id, self.body_cache)
        return _bodies.join(head, bodies, layout.tail, tail_parts)

    def stored(self, pk: str, item: Item, parts: _parts.Ref | None,
               task: pb.Task | None = None) -> StoredTask:
        """The stored task of a snapshot item whose bytes are whole, or of one just written
        (`task`, the item's `parts`); its version is remembered."""
        version = int(item["version"]["N"])
        last_seq = int(item["last_seq"]["N"])
        if task is None:
            task = pb.Task.FromString(item["task"]["B"])
        self._remember(pk, version, last_seq, task.status.state, parts, table.COUNTED in item,
                       _bodies.layout_of(item))
        return StoredTask(task, version, last_seq, table.lease_of(item),
                          table.CANCEL_REQUESTED in item)

    async def counted(self, pk: str) -> tuple[bool, _bodies.Layout | None]:
        """Whether the task's snapshot is in its owner's quota count, and its body layout
        (read)."""
        response = await self.call(
            self.client.get_item, TableName=self.name,
            Key=table.key(pk, table.SNAPSHOT_SK), ConsistentRead=True,
            ProjectionExpression="#c, #l, #d, #t",
            ExpressionAttributeNames={"#c": table.COUNTED, "#l": _bodies.LAYOUT,
                                      "#d": _bodies.DIGEST, "#t": _bodies.TAIL_DIGEST})
        item = response.get("Item", {})
        return table.COUNTED in item, _bodies.layout_of(item)

    def _remember(self, pk: str, version: int, last_seq: int, state: int,
                  parts: _parts.Ref | None, counted: bool,
                  body: _bodies.Layout | None) -> None:
        with self._known_lock:
            self._known[(pk, version)] = (last_seq, state, parts, counted, body)
            self._known.move_to_end((pk, version))
            while len(self._known) > _CACHE_SIZE:
                self._known.popitem(last=False)

    def recall(self, pk: str, version: int) -> Known | None:
        """What this process last read or wrote of version `version` of snapshot `pk`."""
        with self._known_lock:
            return self._known.get((pk, version))

    # --- the table itself --------------------------------------------------------------

    async def create_if_missing(self) -> None:
        """Create the table (local emulator only: on AWS the CDK stack owns it)."""
        endpoint = self.client.meta.endpoint_url
        if "amazonaws.com" in endpoint:
            raise RuntimeError("create_table_if_missing is for a local emulator endpoint")
        try:
            await asyncio.to_thread(self.client.describe_table, TableName=self.name)
            return
        except Exception as exc:
            if error_code(exc) != "ResourceNotFoundException":
                raise
        client: Any = self.client  # either client; the arguments are boto3's
        try:
            await asyncio.to_thread(client.create_table, **table.create_table_kwargs(self.name))
        except Exception as exc:
            if error_code(exc) != "ResourceInUseException":  # created by someone else
                raise
        for _ in range(60):
            described: Any = await asyncio.to_thread(
                self.client.describe_table, TableName=self.name)
            if described["Table"]["TableStatus"] == "ACTIVE":
                return
            await asyncio.sleep(0.5)
        raise RuntimeError(f"table {self.name} did not become active")
