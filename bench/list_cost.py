"""What the first ListTasks page costs as an owner's task count grows: 100, 1,000, 10,000.

    .venv/bin/python bench/list_cost.py

On DynamoDB Local, for one owner per size (one in three tasks WORKING), page size 50: the
calls, the index items read and the read capacity by AWS's rules (bench/dynamodb_calls.py,
`Capacity`), unfiltered and filtered by state. totalSize comes from the scope's count items
(docs/store.md, "totalSize"), so the page's cost should not grow with the owner's tasks.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from a2akit.generated import a2a_pb2 as pb  # noqa: E402
from a2akit.store import table  # noqa: E402
from a2akit.store.base import Scope, TaskQuery  # noqa: E402
from a2akit.store.dynamodb import DynamoDBStore, make_client  # noqa: E402
from bench.dynamodb_calls import Capacity, _index_item_bytes, echo_task, load  # noqa: E402
from scripts.dynamodb_local import dynamodb_local, set_dummy_credentials  # noqa: E402

TABLE = "a2akit-bench-list-cost"
SIZES = (100, 1_000, 10_000)
STATES = (pb.TASK_STATE_COMPLETED, pb.TASK_STATE_COMPLETED, pb.TASK_STATE_WORKING)


async def measure(endpoint: str) -> list[tuple[int, str, Capacity, int, int]]:
    client = make_client(endpoint, "us-east-1")
    try:
        client.create_table(**table.create_table_kwargs(TABLE))
        client.get_waiter("table_exists").wait(TableName=TABLE)
        store = DynamoDBStore(TABLE, client)
        rows: list[tuple[int, str, Capacity, int, int]] = []
        for size in SIZES:
            scope = Scope("tenant-1", f"owner-{size}")
            snapshots = []
            for i in range(size):
                task = echo_task(f"task-{i:05d}", STATES[i % 3], 1_700_000_000_000 + i,
                                 f"ctx-{i}")
                task.artifacts.add(artifact_id=f"a-{i}", name="echo").parts.add(text="hello")
                snapshots.append(store._items(scope, task, [], version=1, first_seq=1)[0])
            load(client, TABLE, scope, snapshots)
            for name, query in (("no filter", TaskQuery(page_size=50)),
                                ("status WORKING", TaskQuery(page_size=50,
                                                             state=pb.TASK_STATE_WORKING))):
                meter = Capacity(client, _index_item_bytes(snapshots[0], table.LIST_INDEX_PK),
                                 table.item_size(snapshots[0]))
                page = await store.list(scope, query)
                _stop(client, meter)
                rows.append((size, name, meter, len(page.tasks), page.total_size))
        return rows
    finally:
        client.close()


def _stop(client: Any, meter: Capacity) -> None:
    client.meta.events.unregister("after-call.dynamodb", meter._after)
    for api in ("Query", "BatchGetItem"):
        client.meta.events.unregister(f"provide-client-params.dynamodb.{api}", meter._ask)


def main() -> None:
    set_dummy_credentials()
    with dynamodb_local() as endpoint:
        rows = asyncio.run(measure(endpoint))
    print("First ListTasks page (50) of one owner, by the owner's task count")
    print("| tasks | filter | tasks / totalSize | calls | index items read "
          "| RCU (AWS rules) | RCU (DynamoDB Local) |")
    print("|---:|---|---:|---|---:|---:|---:|")
    for size, name, m, got, total in rows:
        calls = ", ".join(f"{api} {n}" for api, n in sorted(m.calls.items()))
        print(f"| {size:,} | {name} | {got} / {total} | {calls} | {m.scanned} "
              f"| {m.aws_units:.1f} | {m.local_units:.1f} |")


if __name__ == "__main__":
    main()
