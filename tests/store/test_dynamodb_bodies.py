"""A task's history and artifact parts in append-only body items (`a2akit.store._bodies`):
a write that appends a chunk or changes the status rewrites a small snapshot, whoever reads
the task gets it whole, and a write that loses leaves nothing a reader could mistake for
the task (docs/store.md, "Bodies")."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from a2akit.generated import a2a_pb2 as pb
from a2akit.store import _bodies, table
from a2akit.store.base import Scope, TaskQuery, VersionConflictError
from a2akit.store.dynamodb import DynamoDBStore
from tests.store.conftest import TABLE, assert_expire_together, partition
from tests.store.test_contract import make_task, status_event, task_event

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def _chunk(task: pb.Task, i: int, size: int = 600) -> pb.StreamResponse:
    """`task` with one more part of its artifact, and the event that says so."""
    text = f"chunk {i} " + "".join(chr(97 + (i * 7 + j) % 26) for j in range(size))
    if not task.artifacts:
        task.artifacts.add(artifact_id="a1", name="out")
    task.artifacts[0].parts.add(text=text)
    event = pb.StreamResponse()
    event.artifact_update.task_id = task.id
    event.artifact_update.artifact.artifact_id = "a1"
    event.artifact_update.artifact.parts.add(text=text)
    event.artifact_update.append = i > 0
    return event


def _items(client: Any, scope: Scope, task_id: str) -> dict[str, dict[str, Any]]:
    return {item["sk"]["S"]: item for item in partition(client, table.task_pk(scope, task_id))}


async def test_appended_chunks_stay_in_their_events_and_every_reader_gets_the_task(
        ddb_client: Any, scope: Scope) -> None:
    store = DynamoDBStore(TABLE, ddb_client)
    task = make_task("s1", pb.TASK_STATE_WORKING)
    stored = await store.create(scope, task, [task_event(task)])
    for i in range(12):
        stored = await store.update(scope, "s1", stored.version, task, [_chunk(task, i)])
        assert stored.task == task
    items = _items(ddb_client, scope, "s1")
    # The artifact's parts are its chunks' events: no body, nothing written twice.
    assert not [sk for sk in items if sk.startswith(table.BODY_PREFIX)]
    layout = _bodies.layout_of(items["TASK"])
    assert layout is not None and layout.tail is not None and layout.tail.parts == 12
    # The snapshot holds none of it: it stays small however long the task.
    assert table.item_size(items["TASK"]) < 1024
    # A reader with nothing cached (another process), the writer, and a list page agree.
    fresh = DynamoDBStore(TABLE, ddb_client)
    for reader in (fresh, store):
        got = await reader.get(scope, "s1")
        assert got is not None and got.task == task and got.version == stored.version
    page = await DynamoDBStore(TABLE, ddb_client).list(scope, TaskQuery())
    assert [t for t in page.tasks if t.id == "s1"] == [task]
    # A status change keeps the tail; the task reads back whole.
    task.status.state = pb.TASK_STATE_INPUT_REQUIRED
    stored = await fresh.update(scope, "s1", stored.version, task,
                                [status_event("s1", pb.TASK_STATE_INPUT_REQUIRED)])
    assert not [sk for sk in _items(ddb_client, scope, "s1") if sk.startswith("BODY#")]
    assert (await store.get(scope, "s1")).task == task  # type: ignore[union-attr]
    # Another artifact, as large: into a body, the tail goes on.
    task.artifacts.add(artifact_id="a2").parts.add(text="other " * 200)
    other = pb.StreamResponse()
    other.artifact_update.task_id = "s1"
    other.artifact_update.artifact.CopyFrom(task.artifacts[1])
    task.status.state = pb.TASK_STATE_WORKING
    stored = await store.update(scope, "s1", stored.version, task, [other])
    assert (await DynamoDBStore(TABLE, ddb_client).get(scope, "s1")).task == task  # type: ignore[union-attr]
    # The end gives every item, the bodies included, the expiry.
    task.status.state = pb.TASK_STATE_COMPLETED
    await store.update(scope, "s1", stored.version, task,
                       [status_event("s1", pb.TASK_STATE_COMPLETED)])
    assert (await DynamoDBStore(TABLE, ddb_client).get(scope, "s1")).task == task  # type: ignore[union-attr]
    items = _items(ddb_client, scope, "s1")
    assert [sk for sk in items if sk.startswith(table.BODY_PREFIX)]
    assert_expire_together(list(items.values()), sorted(items))


async def test_a_growing_history_goes_to_bodies_one_per_write(
        ddb_client: Any, scope: Scope) -> None:
    store = DynamoDBStore(TABLE, ddb_client)
    task = make_task("h1", pb.TASK_STATE_WORKING)
    stored = await store.create(scope, task, [])
    for i in range(5):
        task.history.add(message_id=f"q{i}", role=pb.ROLE_USER).parts.add(text="q" * 700)
        stored = await store.update(scope, "h1", stored.version, task, [])
    items = _items(ddb_client, scope, "h1")
    assert len([sk for sk in items if sk.startswith(table.BODY_PREFIX)]) == 5
    assert table.item_size(items["TASK"]) < 1024
    got = await DynamoDBStore(TABLE, ddb_client).get(scope, "h1")
    assert got is not None and got.task == task


async def test_a_task_rewritten_otherwise_drops_its_bodies_and_reads_back_exactly(
        ddb_client: Any, scope: Scope) -> None:
    store = DynamoDBStore(TABLE, ddb_client)
    task = make_task("r1", pb.TASK_STATE_WORKING)
    stored = await store.create(scope, task, [])
    for i in range(3):
        _chunk(task, i)
        stored = await store.update(scope, "r1", stored.version, task, [])  # to bodies
    # The artifact replaced (not appended), the history cut: the bodies no longer fit.
    replaced = pb.Task()
    replaced.CopyFrom(task)
    del replaced.artifacts[0].parts[:]
    replaced.artifacts[0].parts.add(text="x" * 2000)
    del replaced.history[:]
    stored = await store.update(scope, "r1", stored.version, replaced, [])
    fresh = DynamoDBStore(TABLE, ddb_client)
    assert (await fresh.get(scope, "r1")).task == replaced  # type: ignore[union-attr]
    # Numbers go on after the dropped bodies: a new body never takes an old one's key.
    more = pb.Task()
    more.CopyFrom(replaced)
    await fresh.update(scope, "r1", stored.version, more, [_chunk(more, 9)])
    assert (await DynamoDBStore(TABLE, ddb_client).get(scope, "r1")).task == more  # type: ignore[union-attr]
    layout = _bodies.layout_of(_items(ddb_client, scope, "r1")["TASK"])
    assert layout is not None and layout.first > 3


async def test_a_write_that_loses_leaves_nothing_a_reader_takes_for_the_task(
        ddb_client: Any, scope: Scope) -> None:
    # Two processes write the same version, each with a new body of the same number: the
    # loser's body is neither stored nor kept in its cache, so it reads the winner's.
    one, two = DynamoDBStore(TABLE, ddb_client), DynamoDBStore(TABLE, ddb_client)
    task = make_task("l1", pb.TASK_STATE_WORKING)
    created = await one.create(scope, task, [])
    assert (await two.get(scope, "l1")) is not None
    first, second = pb.Task(), pb.Task()
    first.CopyFrom(task)
    second.CopyFrom(task)
    await one.update(scope, "l1", created.version, first, [_chunk(first, 1)])
    with pytest.raises(VersionConflictError):
        await two.update(scope, "l1", created.version, second, [_chunk(second, 2)])
    got = await two.get(scope, "l1")
    assert got is not None and got.task == first


async def test_concurrent_appends_from_two_stores_lose_nothing(
        ddb_client: Any, scope: Scope) -> None:
    stores = [DynamoDBStore(TABLE, ddb_client) for _ in range(2)]
    task = make_task("c1", pb.TASK_STATE_WORKING)
    await stores[0].create(scope, task, [])

    async def append(store: DynamoDBStore, who: int) -> None:
        for i in range(6):
            while True:
                current = await store.get(scope, "c1")
                assert current is not None
                mine = pb.Task()
                mine.CopyFrom(current.task)
                mine.history.add(message_id=f"{who}-{i}", role=pb.ROLE_USER).parts.add(
                    text="y" * 700)
                try:
                    await store.update(scope, "c1", current.version, mine, [])
                    break
                except VersionConflictError:
                    await asyncio.sleep(0.01)

    await asyncio.gather(*(append(store, who) for who, store in enumerate(stores)))
    for reader in (*stores, DynamoDBStore(TABLE, ddb_client)):
        got = await reader.get(scope, "c1")
        assert got is not None
        assert sorted(m.message_id for m in got.task.history[1:]) == sorted(
            f"{who}-{i}" for who in range(2) for i in range(6))


async def test_a_tail_ends_when_its_artifact_is_replaced_or_renamed(
        ddb_client: Any, scope: Scope) -> None:
    store = DynamoDBStore(TABLE, ddb_client)
    task = make_task("t1", pb.TASK_STATE_WORKING)
    stored = await store.create(scope, task, [])
    for i in range(3):
        stored = await store.update(scope, "t1", stored.version, task, [_chunk(task, i)])
    # Renamed: the tail's events name the old id, so they no longer say the parts.
    task.artifacts[0].artifact_id = "renamed"
    stored = await store.update(scope, "t1", stored.version, task, [])
    assert (await DynamoDBStore(TABLE, ddb_client).get(scope, "t1")).task == task  # type: ignore[union-attr]
    # Replaced by an update that does not append: the old parts are gone from the task.
    event = _chunk(pb.Task(id="t1"), 5)
    event.artifact_update.artifact.artifact_id = "renamed"
    event.artifact_update.append = False
    del task.artifacts[0].parts[:]
    task.artifacts[0].parts.extend(event.artifact_update.artifact.parts)
    stored = await store.update(scope, "t1", stored.version, task, [event])
    for reader in (store, DynamoDBStore(TABLE, ddb_client)):
        assert (await reader.get(scope, "t1")).task == task  # type: ignore[union-attr]
    # Appends after it go on from there.
    for i in range(6, 9):
        chunk = _chunk(task, i)
        chunk.artifact_update.artifact.artifact_id = "renamed"
        stored = await store.update(scope, "t1", stored.version, task, [chunk])
    for reader in (store, DynamoDBStore(TABLE, ddb_client)):
        assert (await reader.get(scope, "t1")).task == task  # type: ignore[union-attr]
