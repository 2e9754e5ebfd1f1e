"""The per-caller quota in the store, on both stores: `create(..., quota=N)` counts an
unfinished task against its owner in every tenant, refuses one past the limit with nothing
written, and every write that ends a counted task (the agent's, a cancel, the sweeper's)
takes it out again (issue 33, items 3 and 4)."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from a2akit.clock import epoch_ms
from a2akit.errors import TooManyActiveTasksError
from a2akit.execution import leases
from a2akit.generated import a2a_pb2 as pb
from a2akit.store.base import DuplicateMessageError, Lease, Scope, TaskStore
from tests.store.test_contract import make_task, status_event, task_event

pytestmark = pytest.mark.anyio


def _owner() -> str:
    return f"q-{uuid.uuid4().hex[:8]}"


async def _create(store: TaskStore, scope: Scope, task_id: str, state: int = pb.TASK_STATE_WORKING,
                  quota: int | None = 2, message_id: str | None = None,
                  lease: Lease | None = None) -> None:
    task = make_task(task_id, state)
    await store.create(scope, task, [task_event(task)], message_id, quota=quota, lease=lease)


async def test_the_limit_holds_across_tenants_and_frees_on_end(store: TaskStore) -> None:
    owner = _owner()
    a, b = Scope(f"a-{owner}", owner), Scope(f"B-{owner}", owner)
    await _create(store, a, "t1")
    await _create(store, b, "t2")
    assert await store.active_tasks(owner) == 2
    with pytest.raises(TooManyActiveTasksError):
        await _create(store, b, "t3")
    assert await store.get(b, "t3") is None  # nothing written
    # A terminal create is not counted, nor refused; another owner is not affected.
    await _create(store, a, "echo", pb.TASK_STATE_COMPLETED)
    await _create(store, Scope(a.tenant, _owner()), "t1")
    # A state change that does not end the task keeps its place; ending it frees it.
    stored = await store.get(a, "t1")
    assert stored is not None
    waiting = make_task("t1", pb.TASK_STATE_INPUT_REQUIRED)
    stored = await store.update(a, "t1", stored.version, waiting,
                                [status_event("t1", pb.TASK_STATE_INPUT_REQUIRED)])
    assert await store.active_tasks(owner) == 2
    await store.update(a, "t1", stored.version, make_task("t1", pb.TASK_STATE_CANCELED),
                       [status_event("t1", pb.TASK_STATE_CANCELED)])
    assert await store.active_tasks(owner) == 1
    await _create(store, a, "t4")
    assert await store.active_tasks(owner) == 2


async def test_a_task_created_without_a_limit_is_never_counted(store: TaskStore) -> None:
    owner = _owner()
    scope = Scope("t", owner)
    await _create(store, scope, "free", quota=None)
    stored = await store.get(scope, "free")
    assert stored is not None
    await store.update(scope, "free", stored.version, make_task("free", pb.TASK_STATE_COMPLETED),
                       [status_event("free", pb.TASK_STATE_COMPLETED)])
    assert await store.active_tasks(owner) == 0  # never below zero


async def test_a_used_message_id_wins_over_a_full_quota(store: TaskStore) -> None:
    owner = _owner()
    scope = Scope("t", owner)
    await _create(store, scope, "t1", quota=1, message_id="m1")
    with pytest.raises(DuplicateMessageError) as raised:
        await _create(store, scope, "t2", quota=1, message_id="m1")
    assert raised.value.task_id == "t1"


async def test_the_sweeper_frees_the_place_of_a_task_it_ends(store: TaskStore) -> None:
    owner = _owner()
    scope = Scope(f"s-{owner}", owner)
    dead = Lease(leases.runner_owner(), epoch_ms() - 1_000)
    await _create(store, scope, "dead", quota=1, lease=dead)
    assert await store.active_tasks(owner) == 1
    for _ in range(50):  # other tests' expired leases may share the table
        await leases.sweep(store, limit=1000)
        stored = await store.get(scope, "dead")
        assert stored is not None
        if stored.task.status.state == pb.TASK_STATE_FAILED:
            break
        await asyncio.sleep(0.1)
    assert await store.active_tasks(owner) == 0


async def test_a_burst_of_creates_gets_exactly_the_limit(store: TaskStore) -> None:
    for _ in range(3):
        owner = _owner()
        scope = Scope(f"b-{owner}", owner)
        results = await asyncio.gather(*(_create(store, scope, f"t{i}", quota=3)
                                         for i in range(40)), return_exceptions=True)
        refused = [r for r in results if isinstance(r, TooManyActiveTasksError)]
        assert len(refused) == 37, [r for r in results if r is not None
                                    and not isinstance(r, TooManyActiveTasksError)]
        assert await store.active_tasks(owner) == 3
