"""The store contract for writes of any size, on both stores: a create or update with any
number of events (DynamoDB's transaction holds 100 items and 4 MB) is stored whole, in order,
with its conflicts detected, and a reader never sees a snapshot whose events are missing;
end to end, an agent that reports 1,000 artifact chunks in one burst completes."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable

import pytest

from a2akit.agent import RequestContext, TaskHandle
from a2akit.auth import Identity
from a2akit.caller import Call
from a2akit.execution.fold import retry_on_conflict
from a2akit.generated import a2a_pb2 as pb
from a2akit.runtime import build_operations
from a2akit.settings import Settings
from a2akit.store.base import (
    DuplicateMessageError,
    Scope,
    StoredTask,
    TaskStore,
    VersionConflictError,
)
from tests.store.test_contract import make_task, status_event, task_event
from tests.support.messages import send_request

pytestmark = pytest.mark.anyio

BURST = 1_000


def chunk(task_id: str, i: int, text: str = "") -> pb.StreamResponse:
    event = pb.StreamResponse()
    update = event.artifact_update
    update.task_id, update.context_id = task_id, "ctx"
    update.append = i > 0
    update.artifact.artifact_id = "a"
    update.artifact.parts.add(text=text or f" w{i}")
    return event


async def _seqs(store: TaskStore, scope: Scope, task_id: str) -> list[int]:
    return [e.seq for e in await store.events_after(scope, task_id, 0)]


async def test_a_write_of_any_number_of_events(store: TaskStore, scope: Scope) -> None:
    task = make_task("t1")
    burst = [task_event(task)] + [chunk("t1", i) for i in range(BURST - 1)]
    stored = await store.create(scope, task, burst, message_id="m1")
    assert (stored.version, stored.last_seq) == (1, BURST)
    events = await store.events_after(scope, "t1", 0)
    assert [e.seq for e in events] == list(range(1, BURST + 1))
    assert [e.event for e in events] == burst

    working = make_task("t1", pb.TASK_STATE_WORKING, ms=2_000)
    more = [chunk("t1", i) for i in range(BURST, 2 * BURST - 1)]
    more.append(status_event("t1", pb.TASK_STATE_WORKING))
    updated = await store.update(scope, "t1", 1, working, more, message_id="m2")
    assert (updated.version, updated.last_seq) == (2, 2 * BURST)
    assert await store.find_message(scope, "m2") == "t1"
    tail = await store.events_after(scope, "t1", BURST)
    assert [e.event for e in tail] == more

    # Conflicts are still all or nothing: nothing of a refused write is stored.
    with pytest.raises(VersionConflictError):
        await store.update(scope, "t1", 1, working, more)
    with pytest.raises(DuplicateMessageError) as caught:
        await store.update(scope, "t1", 2, working, more, message_id="m1")
    assert caught.value.task_id == "t1"
    other = make_task("t2")
    with pytest.raises(DuplicateMessageError):
        await store.create(scope, other, [task_event(other), *more], message_id="m2")
    with pytest.raises(VersionConflictError):
        await store.create(scope, working, burst)  # exists already
    assert await store.get(scope, "t2") is None
    assert await store.events_after(scope, "t2", 0) == []
    got = await store.get(scope, "t1")
    assert got is not None and (got.version, got.last_seq, got.task) == (2, 2 * BURST, working)
    assert await _seqs(store, scope, "t1") == list(range(1, 2 * BURST + 1))

    # A small write after a large one continues the sequence.
    done = make_task("t1", pb.TASK_STATE_COMPLETED, ms=3_000)
    final = await store.update(scope, "t1", 2, done, [status_event("t1", pb.TASK_STATE_COMPLETED)])
    assert final.last_seq == 2 * BURST + 1


async def test_a_write_over_four_megabytes(store: TaskStore, scope: Scope) -> None:
    # 14 events of 300 KB: 4.2 MB, over one DynamoDB transaction's 4 MB, each under 400 KB.
    task = make_task("big")
    heavy = [chunk("big", i, "x" * 300_000) for i in range(14)]
    stored = await store.create(scope, task, [task_event(task), *heavy])
    assert stored.last_seq == 15
    updated = await store.update(scope, "big", 1, task, heavy)
    assert updated.last_seq == 29
    events = await store.events_after(scope, "big", 0)
    assert [e.event for e in events[1:]] == heavy + heavy
    # A snapshot near the item limit counts towards every transaction it is part of.
    task.history.add(message_id="long", role=pb.ROLE_AGENT).parts.add(text="y" * 380_000)
    grown = await store.update(scope, "big", 2, task, heavy)
    assert (grown.last_seq, grown.task) == (43, task)


async def test_a_reader_never_sees_a_snapshot_ahead_of_its_events(store: TaskStore,
                                                                   scope: Scope) -> None:
    task = make_task("t1")
    await store.create(scope, task, [task_event(task)])
    seen: list[int] = []
    writing = True

    async def read() -> None:
        while True:
            got = await store.get(scope, "t1")
            assert got is not None
            seqs = await _seqs(store, scope, "t1")
            # Every event the snapshot counts is there, in order, without gaps.
            assert seqs[:got.last_seq] == list(range(1, got.last_seq + 1))
            seen.append(got.last_seq)
            if not writing:
                return
            await asyncio.sleep(0)

    reader = asyncio.create_task(read())
    version = 1
    for start in range(1, 4):
        events = [chunk("t1", start * BURST + i) for i in range(BURST // 2)]
        version = (await store.update(scope, "t1", version, task, events)).version
    writing = False
    await reader
    assert seen and await _seqs(store, scope, "t1") == list(range(1, 3 * BURST // 2 + 2))


async def test_a_small_write_racing_a_large_one(store: TaskStore, scope: Scope) -> None:
    task = make_task("t1")
    await store.create(scope, task, [task_event(task)])
    burst = [chunk("t1", i) for i in range(BURST // 2)]
    small = [status_event("t1", pb.TASK_STATE_WORKING)]

    def writer(events: list[pb.StreamResponse]) -> Awaitable[StoredTask]:
        async def attempt(_: int) -> StoredTask:
            current = await store.get(scope, "t1")
            assert current is not None
            return await store.update(scope, "t1", current.version, task, events)

        return retry_on_conflict(attempt, lambda: AssertionError("kept conflicting"))

    await asyncio.gather(writer(burst), writer(small))
    events = [e.event for e in await store.events_after(scope, "t1", 0)]
    # Each write whole, once, in order: the small one before or after the burst.
    assert events[1:] in ([*burst, *small], [*small, *burst])


class Burst:
    """Reports BURST artifact chunks without awaiting anything, then completes; with
    `after_first_write`, it first reports working and lets that be written."""

    def __init__(self, *, after_first_write: bool) -> None:
        self.after_first_write = after_first_write

    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        if self.after_first_write:
            await task.working("warming up")
            await asyncio.sleep(0.2)
        artifact_id = None
        for i in range(BURST):
            artifact_id = await task.add_artifact(
                f" w{i}", artifact_id=artifact_id, name="answer", append=i > 0,
                last_chunk=i == BURST - 1)
        await task.complete("Done")


@pytest.mark.parametrize("after_first_write", [False, True], ids=["create", "update"])
async def test_an_agent_reporting_a_burst_of_chunks_completes(
        store: TaskStore, scope: Scope, after_first_write: bool) -> None:
    ops = build_operations(Settings(allow_anonymous=True), store=store,
                           agent=Burst(after_first_write=after_first_write))
    request = send_request("go")
    request.tenant = scope.tenant
    answer = await ops.send_message(request, Call(Identity(scope.owner, "test")))
    assert answer.task.status.state == pb.TASK_STATE_COMPLETED
    stored = await store.get(scope, answer.task.id)
    assert stored is not None and stored.task.status.state == pb.TASK_STATE_COMPLETED
    [artifact] = stored.task.artifacts
    assert "".join(part.text for part in artifact.parts) == "".join(
        f" w{i}" for i in range(BURST))
    events = await store.events_after(scope, answer.task.id, 0)
    assert [e.seq for e in events] == list(range(1, stored.last_seq + 1))
    assert sum(e.event.HasField("artifact_update") for e in events) == BURST
