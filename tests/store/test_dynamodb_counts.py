"""totalSize on DynamoDB from the scope's counts: kept by every write (concurrent ones
included), and lowered once for a task whose retention ended."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from a2akit.generated import a2a_pb2 as pb
from a2akit.store import table
from a2akit.store.base import Scope, TaskQuery
from a2akit.store.dynamodb import DynamoDBStore
from tests.store.conftest import TABLE
from tests.store.test_contract import make_task, status_event, task_event

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def _totals(store: DynamoDBStore, scope: Scope) -> tuple[int, int, int]:
    """totalSize of: any state, COMPLETED, WORKING."""
    any_, completed, working = [
        (await store.list(scope, TaskQuery(state=state))).total_size
        for state in (0, pb.TASK_STATE_COMPLETED, pb.TASK_STATE_WORKING)]
    return any_, completed, working


async def test_concurrent_writes_keep_the_counts(ddb_client: Any, scope: Scope) -> None:
    store = DynamoDBStore(TABLE, ddb_client)
    tasks = [make_task(f"t{i}", pb.TASK_STATE_WORKING, ms=1_000 + i) for i in range(40)]
    await asyncio.gather(*(store.create(scope, task, [task_event(task)]) for task in tasks))
    assert await _totals(store, scope) == (40, 0, 40)
    done = [make_task(f"t{i}", pb.TASK_STATE_COMPLETED, ms=5_000 + i) for i in range(0, 40, 2)]
    await asyncio.gather(*(store.update(scope, task.id, 1, task, [
        status_event(task.id, pb.TASK_STATE_COMPLETED)]) for task in done))
    assert await _totals(store, scope) == (40, 20, 20)
    # A write that keeps the state leaves the counts alone.
    await store.update(scope, "t1", 1, tasks[1], [status_event("t1", pb.TASK_STATE_WORKING)])
    assert await _totals(store, scope) == (40, 20, 20)


async def test_a_task_past_its_retention_leaves_the_counts_once(ddb_client: Any,
                                                                scope: Scope) -> None:
    store = DynamoDBStore(TABLE, ddb_client, retention_days=1 / 86400)  # one second
    for i in range(3):
        task = make_task(f"done{i}", pb.TASK_STATE_COMPLETED, ms=1_000 + i)
        await store.create(scope, task, [task_event(task)])
    running = make_task("running", pb.TASK_STATE_WORKING)
    await store.create(scope, running, [task_event(running)])
    late = make_task("running", pb.TASK_STATE_COMPLETED, ms=9_000)
    await store.update(scope, "running", 1, late, [status_event("running",
                                                                pb.TASK_STATE_COMPLETED)])
    assert await _totals(store, scope) == (4, 4, 0)
    snapshot = ddb_client.get_item(TableName=TABLE, Key=table.key(
        table.task_pk(scope, "running"), table.SNAPSHOT_SK))["Item"]
    # Until every expiry has passed (the marker's key has second resolution).
    await asyncio.sleep(max(0.0, int(snapshot[table.TTL_ATTRIBUTE]["N"]) + 1.1 - time.time()))
    assert await store.expire_finished(10_000) >= 4  # what the sweeper calls
    assert await _totals(store, scope) == (0, 0, 0)
    await store.expire_finished(10_000)  # each task is retired once
    assert await _totals(store, scope) == (0, 0, 0)
