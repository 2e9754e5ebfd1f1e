"""DynamoDB calls and consumed capacity of the store's operations, measured on DynamoDB Local.

    .venv/bin/python bench/dynamodb_calls.py

The second table is ListTasks for one owner holding 10,000 tasks (bench/perf.py prints it
too): calls, the index items read, DynamoDB Local's capacity figure and the read capacity by
AWS's published rules (a Query bills the items it reads, rounded up to 4 KB, half a unit per
4 KB eventually consistent; BatchGetItem bills each item rounded up to 4 KB).

Starts DynamoDB Local (installing it if missing, like the tests), then runs each operation
with `ReturnConsumedCapacity=INDEXES` (the TOTAL, split by index) added to every data call
by a botocore `provide-client-params` hook; `before-call` counts the calls and `after-call`
sums the capacity from the responses. The units are DynamoDB Local's own accounting, which
follows the AWS rules only roughly (it bills a small transaction 4 units whatever its item
count); docs/store.md gives the AWS rules. Call counts are exact.
"""

from __future__ import annotations

import asyncio
import collections
import math
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from a2akit.generated import a2a_pb2 as pb  # noqa: E402
from a2akit.store import table  # noqa: E402
from a2akit.store.base import Scope, TaskQuery  # noqa: E402
from a2akit.store.dynamodb import DynamoDBStore, make_client  # noqa: E402
from a2akit.store.table import Item  # noqa: E402
from scripts.dynamodb_local import dynamodb_local, set_dummy_credentials  # noqa: E402

TABLE = "a2akit-bench"
DATA_CALLS = ("GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "TransactWriteItems",
              "BatchWriteItem", "BatchGetItem")


class Meter:
    def __init__(self, client: Any) -> None:
        self.calls: collections.Counter[str] = collections.Counter()
        self.units = 0.0
        self.table_units = 0.0
        self.index_units = 0.0
        self.started = time.perf_counter()
        self.seconds = 0.0
        events = client.meta.events
        for name in DATA_CALLS:
            events.register(f"provide-client-params.dynamodb.{name}", self._ask)
        events.register("before-call.dynamodb", self._count)
        events.register("after-call.dynamodb", self._capacity)

    def _ask(self, params: dict[str, Any], **_: Any) -> None:
        params.setdefault("ReturnConsumedCapacity", "INDEXES")  # TOTAL, split by index

    def _count(self, model: Any, **_: Any) -> None:
        self.calls[model.name] += 1

    def _capacity(self, parsed: dict[str, Any], **_: Any) -> None:
        consumed = parsed.get("ConsumedCapacity")
        for entry in consumed if isinstance(consumed, list) else [consumed] if consumed else []:
            self.units += float(entry.get("CapacityUnits", 0))
            self.table_units += float(entry.get("Table", {}).get("CapacityUnits", 0))
            for index in entry.get("GlobalSecondaryIndexes", {}).values():
                self.index_units += float(index.get("CapacityUnits", 0))

    def reset(self) -> None:
        self.calls.clear()
        self.units = self.table_units = self.index_units = 0.0
        self.started = time.perf_counter()


def echo_task(task_id: str, state: int, ms: int, context_id: str = "ctx-1") -> pb.Task:
    task = pb.Task(id=task_id, context_id=context_id)
    task.status.state = state  # type: ignore[assignment]
    task.status.timestamp.FromMilliseconds(ms)
    task.history.add(message_id=f"m-{task_id}", role=pb.ROLE_USER).parts.add(text="hello")
    return task


def status(task_id: str, state: int) -> pb.StreamResponse:
    event = pb.StreamResponse()
    event.status_update.task_id = task_id
    event.status_update.context_id = "ctx-1"
    event.status_update.status.state = state  # type: ignore[assignment]
    return event


async def run(endpoint: str) -> list[tuple[str, Meter, str]]:
    client = make_client(endpoint, "us-east-1")
    try:
        client.create_table(**table.create_table_kwargs(TABLE))
        client.get_waiter("table_exists").wait(TableName=TABLE)
        meter = Meter(client)
        store = DynamoDBStore(TABLE, client)
        scope = Scope("tenant-1", "alice")
        rows: list[tuple[str, Meter, str]] = []

        def row(name: str, note: str) -> None:
            snapshot = Meter.__new__(Meter)
            snapshot.calls = collections.Counter(meter.calls)
            snapshot.units = meter.units
            snapshot.table_units = meter.table_units
            snapshot.index_units = meter.index_units
            snapshot.seconds = time.perf_counter() - meter.started
            rows.append((name, snapshot, note))
            meter.reset()

        for i in range(60):  # a scope with some history for the list page
            await store.create(scope, echo_task(f"old-{i}", pb.TASK_STATE_WORKING, 1_000 + i), [])
        meter.reset()

        submitted = echo_task("t1", pb.TASK_STATE_SUBMITTED, 10_000)
        first = pb.StreamResponse(task=submitted)
        assert await store.find_message(scope, "m-t1") is None
        created = await store.create(scope, submitted, [first], message_id="m-t1")
        row("echo SendMessage: find_message + create", "1 snapshot + 1 event + 1 claim")

        working = echo_task("t1", pb.TASK_STATE_WORKING, 10_001)
        stored = await store.update(scope, "t1", created.version, working,
                                    [status("t1", pb.TASK_STATE_WORKING)])
        row("event append (update, 1 event)", "version known from the create: no read")

        done = echo_task("t1", pb.TASK_STATE_COMPLETED, 10_002)
        done.artifacts.add(artifact_id="a1").parts.add(text="hello")
        await store.update(scope, "t1", stored.version, done,
                           [status("t1", pb.TASK_STATE_COMPLETED)])
        row("terminal update (1 event)", "+ expiry marker; the older items' expiry step")
        await store.expire_finished(100)
        row("expire_finished, nothing left", "the sweeper's call: one query per shard (2 x 16)")

        burst = echo_task("b1", pb.TASK_STATE_WORKING, 10_003)
        chunks = []
        for i in range(1_000):
            chunk = pb.StreamResponse()
            chunk.artifact_update.task_id = "b1"
            chunk.artifact_update.artifact.artifact_id = "a"
            chunk.artifact_update.append = i > 0
            chunk.artifact_update.artifact.parts.add(text=f" word{i}")
            chunks.append(chunk)
        made = await store.create(scope, burst, [pb.StreamResponse(task=burst)])
        meter.reset()
        await store.update(scope, "b1", made.version, burst, chunks)
        row("update with 1,000 events (a burst)", "several transactions, one reservation")

        fresh = DynamoDBStore(TABLE, client)  # another process: nothing cached
        got = await fresh.get(scope, "t1")
        assert got is not None
        row("get", "strongly consistent")
        await fresh.update(scope, "t1", got.version, done, [])
        row("update after get (other process)", "the version's last_seq is cached")
        await DynamoDBStore(TABLE, client).update(scope, "t1", got.version + 1, done, [])
        row("update without a prior get", "reads the snapshot first")

        page = await store.list(scope, TaskQuery(page_size=50))
        assert len(page.tasks) == 50 and page.total_size == 62
        row("list page (50 of 62)", "shard queries + the page's tasks + the 8 count items")
        page = await store.list(scope, TaskQuery(page_size=50, context_id="none"))
        row("list, a context with no task", "one query of an empty context partition")
        await large(store, Scope("tenant-1", "large"), row)
        return rows
    finally:
        client.close()


async def large(store: DynamoDBStore, scope: Scope, row: Any) -> None:
    """Tasks over DynamoDB's 400 KB item: an echo of a 250 KB message, a 5 MB conversation."""
    text = "echo " * 50_000  # 250 KB
    echo = echo_task("e1", pb.TASK_STATE_COMPLETED, 20_000)
    echo.history[0].parts[0].text = text
    echo.artifacts.add(artifact_id="a1").parts.add(text=text)
    assert await store.find_message(scope, "m-e1") is None
    await store.create(scope, echo, [pb.StreamResponse(task=echo)], message_id="m-e1")
    row("echo SendMessage, 250 KB message", "500 KB task + event: 2 items + 2 parts")
    fresh = DynamoDBStore(TABLE, store._client)
    assert (await fresh.get(scope, "e1")) is not None
    row("get, 500 KB task", "GetItem + its part (BatchGetItem)")
    assert len(await fresh.events_after(scope, "e1", 0)) == 1
    row("events_after, one 500 KB event", "Query + its part (BatchGetItem)")

    conversation = echo_task("c1", pb.TASK_STATE_WORKING, 20_001)
    for turn in range(26):  # 26 turns of 200 KB: 5.2 MB
        conversation.history.add(message_id=f"u{turn}", role=pb.ROLE_USER).parts.add(
            text=f"turn {turn:02d} " * 25_000)
    made = await store.create(scope, conversation, [])
    row("create, 5 MB task", "14 items: 2 transactions (4 MB each at most)")
    stored = await store.update(scope, "c1", made.version, conversation,
                                [status("c1", pb.TASK_STATE_WORKING)])
    row("update, 5 MB task (1 event)", "2 transactions (reservation); old parts deleted")
    assert (await fresh.get(scope, "c1")) is not None
    row("get, 5 MB task", "GetItem + one BatchGetItem of its 13 parts")
    page = await fresh.list(scope, TaskQuery(page_size=10))
    assert len(page.tasks) == 2
    row("list page: the 500 KB and the 5 MB task", "+ one BatchGetItem of their parts")
    done = pb.Task.FromString(conversation.SerializeToString())
    done.status.state = pb.TASK_STATE_COMPLETED  # type: ignore[assignment]
    await store.update(scope, "c1", stored.version, done, [status("c1", pb.TASK_STATE_COMPLETED)])
    row("terminal update, 5 MB task", "+ its older items' expiry step")


# --- ListTasks at scale -------------------------------------------------------------------

LIST_TABLE = "a2akit-bench-list"
OWNER_TASKS = 10_000
TARGET_CONTEXT = "ctx-target"


class Capacity:
    """Read capacity of one ListTasks: calls, index items read, and capacity units."""

    def __init__(self, client: Any, index_item_bytes: int, task_item_bytes: int) -> None:
        self.index_item_bytes = index_item_bytes
        self.task_item_bytes = task_item_bytes
        self.calls: collections.Counter[str] = collections.Counter()
        self.scanned = 0
        self.local_units = 0.0
        self.aws_units = 0.0
        events = client.meta.events
        for name in ("Query", "BatchGetItem"):
            events.register(f"provide-client-params.dynamodb.{name}", self._ask)
        events.register("after-call.dynamodb", self._after)

    def _ask(self, params: dict[str, Any], **_: Any) -> None:
        params.setdefault("ReturnConsumedCapacity", "TOTAL")

    def _after(self, model: Any, parsed: dict[str, Any], **_: Any) -> None:
        self.calls[model.name] += 1
        consumed = parsed.get("ConsumedCapacity")
        for entry in consumed if isinstance(consumed, list) else [consumed] if consumed else []:
            self.local_units += float(entry.get("CapacityUnits", 0))
        if model.name == "Query":
            scanned = int(parsed.get("ScannedCount", 0))
            self.scanned += scanned
            # Eventually consistent: half a unit per 4 KB read, the whole query rounded up.
            self.aws_units += max(1, math.ceil(scanned * self.index_item_bytes / 4096)) * 0.5
        elif model.name == "BatchGetItem":
            got = sum(len(items) for items in parsed.get("Responses", {}).values())
            self.aws_units += got * math.ceil(self.task_item_bytes / 4096) * 0.5


def load(client: Any, table_name: str, scope: Scope, snapshots: list[Item]) -> None:
    """Write snapshots directly (batches of 25, far faster than one create each) and the
    scope's count items as the store's writes would have kept them."""
    counts: dict[int, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for snapshot in snapshots:
        task_id = pb.Task.FromString(snapshot["task"]["B"]).id
        shard = counts[table.list_shard(task_id)]
        shard[table.COUNT_ALL] += 1
        shard[table.count_of(int(snapshot["state"]["N"]))] += 1
    items = [*snapshots, *({**table.key(table.count_pk(scope, shard), table.COUNT_SK),
                            **{name: {"N": str(n)} for name, n in counted.items()}}
                           for shard, counted in counts.items())]
    for start in range(0, len(items), 25):
        requests: Any = {table_name: [{"PutRequest": {"Item": item}}
                                      for item in items[start:start + 25]]}
        while requests:
            requests = client.batch_write_item(RequestItems=requests).get(
                "UnprocessedItems") or {}


def _index_item_bytes(snapshot: Item, partition: str) -> int:
    """An index item's size by AWS's rule: its keys, the table's keys, the projected
    attributes, plus 100 bytes."""
    names = (table.PK, table.SK, partition, table.LIST_INDEX_SK, *table.LIST_PROJECTED)
    return table.item_size({name: snapshot[name] for name in names}) + 100


async def listing_capacity(endpoint: str) -> list[tuple[str, Capacity, int, int]]:
    """ListTasks on one owner with OWNER_TASKS tasks: what each kind of call reads."""
    client = make_client(endpoint, "us-east-1")
    try:
        client.create_table(**table.create_table_kwargs(LIST_TABLE))
        client.get_waiter("table_exists").wait(TableName=LIST_TABLE)
        store = DynamoDBStore(LIST_TABLE, client)
        scope = Scope("tenant-1", "busy-owner")
        snapshots = []
        states = (pb.TASK_STATE_COMPLETED, pb.TASK_STATE_COMPLETED, pb.TASK_STATE_WORKING)
        for i in range(OWNER_TASKS):
            context = TARGET_CONTEXT if i % (OWNER_TASKS // 20) == 0 else f"ctx-{i}"
            task = echo_task(f"task-{i:05d}", states[i % 3], 1_700_000_000_000 + i, context)
            task.artifacts.add(artifact_id=f"a-{i}", name="echo").parts.add(text="hello")
            snapshot, _ = store._items(scope, task, [], version=1, first_seq=1)
            snapshots.append(snapshot)
        load(client, LIST_TABLE, scope, snapshots)
        index_bytes = _index_item_bytes(snapshots[0], table.LIST_INDEX_PK)
        task_bytes = table.item_size(snapshots[0])
        newest_ms = 1_700_000_000_000 + OWNER_TASKS - 100
        cases = [
            ("first page, no filter", TaskQuery(page_size=50)),
            ("second page, no filter", None),
            ("contextId (20 of 10,000)", TaskQuery(context_id=TARGET_CONTEXT)),
            ("status WORKING (1 in 3)", TaskQuery(state=pb.TASK_STATE_WORKING)),
            ("statusTimestampAfter (newest 100)", TaskQuery(status_after_ms=newest_ms)),
        ]
        rows: list[tuple[str, Capacity, int, int]] = []
        token = ""
        for name, query in cases:
            query = query or TaskQuery(page_size=50, page_token=token)
            meter = Capacity(client, index_bytes, task_bytes)
            page = await store.list(scope, query)
            token = token or page.next_page_token
            rows.append((name, meter, len(page.tasks), page.total_size))
            client.meta.events.unregister("after-call.dynamodb", meter._after)
            for api in ("Query", "BatchGetItem"):
                client.meta.events.unregister(f"provide-client-params.dynamodb.{api}",
                                              meter._ask)
        return rows
    finally:
        client.close()


def print_capacity(rows: list[tuple[str, Capacity, int, int]]) -> None:
    if not rows:
        return
    meter = rows[0][1]
    print(f"ListTasks, one owner with {OWNER_TASKS:,} tasks ({LIST_SHARDS_NOTE}); index items "
          f"{meter.index_item_bytes} B, task items {meter.task_item_bytes} B")
    print("| ListTasks | tasks / totalSize | calls | index items read | RCU (AWS rules) "
          "| RCU (DynamoDB Local) |")
    print("|---|---:|---|---:|---:|---:|")
    for name, m, got, total in rows:
        calls = ", ".join(f"{api} {n}" for api, n in sorted(m.calls.items()))
        print(f"| {name} | {got} / {total} | {calls} | {m.scanned} | {m.aws_units:.1f} "
              f"| {m.local_units:.1f} |")


LIST_SHARDS_NOTE = f"{table.LIST_SHARDS} list shards"


def main() -> None:
    set_dummy_credentials()
    with dynamodb_local() as endpoint:
        rows = asyncio.run(run(endpoint))
        capacity = asyncio.run(listing_capacity(endpoint))
    print("Capacity units as DynamoDB Local reports them (total = table + list indexes).")
    print(f"{'operation':40} {'calls':>5} {'total':>6} {'table':>6} {'gsi':>5} {'ms':>5}  "
          "calls by API; note")
    for name, m, note in rows:
        calls = ", ".join(f"{api} {n}" for api, n in sorted(m.calls.items()))
        print(f"{name:40} {sum(m.calls.values()):>5} {m.units:>6.1f} {m.table_units:>6.1f} "
              f"{m.index_units:>5.1f} {m.seconds * 1000:>5.0f}  {calls}; {note}")
    print()
    print_capacity(capacity)


if __name__ == "__main__":
    main()
