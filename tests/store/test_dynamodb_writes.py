"""Writes in several transactions on DynamoDB: what a writer that dies or stalls between them
leaves, and how the next writer goes on (docs/store.md, "Writes of any size")."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import botocore.awsrequest
import botocore.config
import pytest

from a2akit.errors import UnavailableError
from a2akit.execution.fold import retry_on_conflict
from a2akit.generated import a2a_pb2 as pb
from a2akit.store import table
from a2akit.store.base import Scope, StoredTask, VersionConflictError
from a2akit.store.dynamodb import DynamoDBStore
from tests.store.conftest import TABLE
from tests.store.test_contract import make_task, status_event, task_event
from tests.store.test_contract_bursts import chunk

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


class _Throttled:
    def stream(self, **_: Any) -> Iterator[bytes]:
        yield b'{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException"}'


def _short(store: DynamoDBStore) -> DynamoDBStore:
    store.reservation_ms, store.reservation_ms_per_batch = 300, 0
    return store


async def _cancel(store: DynamoDBStore, scope: Scope, task_id: str) -> StoredTask:
    """CancelTask's write: re-read and write again on a conflict."""

    async def attempt(_: int) -> StoredTask:
        current = await store.get(scope, task_id)
        assert current is not None
        task = make_task(task_id, pb.TASK_STATE_CANCELED, ms=9_000)
        return await store.update(scope, task_id, current.version, task,
                                  [status_event(task_id, pb.TASK_STATE_CANCELED)])

    return await retry_on_conflict(attempt, lambda: AssertionError("kept conflicting"))


def _raw_snapshot(client: Any, scope: Scope, task_id: str) -> dict[str, Any]:
    item: dict[str, Any] = client.get_item(
        TableName=TABLE, Key=table.key(table.task_pk(scope, task_id), table.SNAPSHOT_SK),
        ConsistentRead=True)["Item"]
    return item


async def test_a_writer_that_dies_midway_is_taken_over(ddb_client: Any, own_client: Any,
                                                       scope: Scope) -> None:
    store = _short(DynamoDBStore(TABLE, ddb_client))
    task = make_task("t1")
    await store.create(scope, task, [task_event(task)])
    calls: list[str] = []

    def dead_after_one(request: Any, **_: Any) -> botocore.awsrequest.AWSResponse | None:
        calls.append(request.url)
        if len(calls) == 1:
            return None  # the first transaction reaches DynamoDB
        return botocore.awsrequest.AWSResponse(
            request.url, 400, {"Content-Type": "application/x-amz-json-1.0"}, _Throttled())

    own_client.meta.events.register("before-send.dynamodb.TransactWriteItems", dead_after_one)
    dying = _short(DynamoDBStore(TABLE, own_client))
    burst = [chunk("t1", i) for i in range(250)]
    with pytest.raises(UnavailableError):
        await dying.update(scope, "t1", 1, task, burst)

    # Readers: the snapshot as it was, and the events of the first transaction after it.
    got = await store.get(scope, "t1")
    assert got is not None and (got.version, got.last_seq) == (1, 1)
    written = await store.events_after(scope, "t1", 0)
    left = len(written) - 1
    assert 0 < left < len(burst)
    assert [e.event for e in written[1:]] == burst[:left]
    assert table.WRITER in _raw_snapshot(ddb_client, scope, "t1")

    # The next writer waits the reservation out, then keeps those events and writes after.
    canceled = await _cancel(store, scope, "t1")
    assert (canceled.version, canceled.last_seq) == (2, left + 2)
    events = await store.events_after(scope, "t1", 0)
    assert [e.seq for e in events] == list(range(1, left + 3))
    assert events[-1].event == status_event("t1", pb.TASK_STATE_CANCELED)
    assert table.WRITER not in _raw_snapshot(ddb_client, scope, "t1")


async def test_a_stalled_writer_never_overwrites_who_took_over(ddb_client: Any,
                                                              own_client: Any,
                                                              scope: Scope) -> None:
    store = _short(DynamoDBStore(TABLE, ddb_client))
    task = make_task("t1")
    await store.create(scope, task, [task_event(task)])
    second = threading.Event()
    resume = threading.Event()
    calls: list[str] = []

    def stall_second(request: Any, **_: Any) -> None:
        calls.append(request.url)
        if len(calls) == 2:
            second.set()
            resume.wait(30)  # the writer freezes before its second transaction is sent

    own_client.meta.events.register("before-send.dynamodb.TransactWriteItems", stall_second)
    stalled = _short(DynamoDBStore(TABLE, own_client))
    burst = [chunk("t1", i) for i in range(250)]
    writer = asyncio.create_task(stalled.update(scope, "t1", 1, task, burst))
    assert await asyncio.to_thread(second.wait, 30)
    first = len(await store.events_after(scope, "t1", 0)) - 1

    canceled = await _cancel(store, scope, "t1")  # once the reservation is over
    assert canceled.last_seq == first + 2
    resume.set()
    with pytest.raises(VersionConflictError):
        await writer  # its next events would land on the canceller's: refused, none written
    events = await store.events_after(scope, "t1", 0)
    assert [e.seq for e in events] == list(range(1, first + 3))
    assert [e.event for e in events[1:-1]] == burst[:first]
    assert events[-1].event == status_event("t1", pb.TASK_STATE_CANCELED)
    got = await store.get(scope, "t1")
    assert got is not None and got.task.status.state == pb.TASK_STATE_CANCELED


async def test_a_writer_waits_for_a_live_reservation(ddb_client: Any, own_client: Any,
                                                     scope: Scope) -> None:
    store = DynamoDBStore(TABLE, ddb_client)  # the reservation outlives the test's wait
    task = make_task("t1")
    await store.create(scope, task, [task_event(task)])
    second = threading.Event()
    resume = threading.Event()
    calls: list[str] = []

    def pause_second(request: Any, **_: Any) -> None:
        calls.append(request.url)
        if len(calls) == 2:
            second.set()
            resume.wait(30)

    own_client.meta.events.register("before-send.dynamodb.TransactWriteItems", pause_second)
    burst = [chunk("t1", i) for i in range(250)]
    writer = asyncio.create_task(DynamoDBStore(TABLE, own_client).update(scope, "t1", 1, task,
                                                                          burst))
    assert await asyncio.to_thread(second.wait, 30)
    canceller = asyncio.create_task(_cancel(store, scope, "t1"))
    await asyncio.sleep(0.3)
    assert not canceller.done()  # it waits for the write in progress
    resume.set()
    written = await writer
    canceled = await canceller
    assert written.last_seq == 251 and canceled.last_seq == 252
    assert [e.seq for e in await store.events_after(scope, "t1", 0)] == list(range(1, 253))
