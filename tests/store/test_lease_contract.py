"""The store's lease primitives, the same from the embedded store and the DynamoDB store:
writes carry a lease, a swap renews or hands it over without a new version, an expiry write
loses to a renewal, and the sweeper's query finds expired leases of every scope."""

from __future__ import annotations

import pytest

from a2akit.generated import a2a_pb2 as pb
from a2akit.store.base import (
    Lease,
    LeaseLostError,
    Scope,
    TaskQuery,
    TaskStore,
    VersionConflictError,
)
from tests.store.test_contract import make_task, status_event, task_event

pytestmark = pytest.mark.anyio

# Lease ends near the epoch: only this file's tasks expire before these instants, however
# many leased tasks other tests left in the shared DynamoDB Local table.
EARLY = 1_000
LATE = 5_000


async def test_writes_carry_the_lease_and_terminal_clears_it(store: TaskStore,
                                                             scope: Scope) -> None:
    task = make_task("t1")
    lease = Lease("runner-a", 10_000)
    created = await store.create(scope, task, [task_event(task)], lease=lease)
    assert created.lease == lease
    got = await store.get(scope, "t1")
    assert got is not None and got.lease == lease
    working = make_task("t1", pb.TASK_STATE_WORKING)
    renewed = Lease("runner-a", 20_000)
    updated = await store.update(scope, "t1", 1, working,
                                 [status_event("t1", pb.TASK_STATE_WORKING)], lease=renewed)
    assert updated.lease == renewed
    # An update without a lease leaves the task unleased (the write says what it holds).
    bare = await store.update(scope, "t1", 2, working, [])
    assert bare.lease is None
    again = await store.update(scope, "t1", 3, working, [], lease=renewed)
    assert again.lease == renewed
    # A terminal task holds no lease, whatever the writer passed.
    done = make_task("t1", pb.TASK_STATE_COMPLETED)
    final = await store.update(scope, "t1", 4, done,
                               [status_event("t1", pb.TASK_STATE_COMPLETED)], lease=renewed)
    assert final.lease is None
    got = await store.get(scope, "t1")
    assert got is not None and got.lease is None


async def test_swap_renews_without_a_new_version(store: TaskStore, scope: Scope) -> None:
    task = make_task("t1")
    await store.create(scope, task, [task_event(task)], lease=Lease("a", 10_000))
    renewed = await store.swap_lease(scope, "t1", "a", Lease("a", 30_000))
    assert (renewed.version, renewed.last_seq, renewed.lease) == (1, 1, Lease("a", 30_000))
    assert renewed.task == task
    # Handing over: the queue's lease to a worker.
    taken = await store.swap_lease(scope, "t1", "a", Lease("b", 40_000))
    assert taken.lease == Lease("b", 40_000)
    with pytest.raises(LeaseLostError) as lost:
        await store.swap_lease(scope, "t1", "a", Lease("a", 50_000))
    current = lost.value.current
    assert current is not None and current.lease == Lease("b", 40_000) and current.version == 1
    # The version did not move, so a writer that read version 1 still writes.
    updated = await store.update(scope, "t1", 1, task, [], lease=Lease("b", 60_000))
    assert updated.version == 2


async def test_swap_on_an_unleased_or_missing_task_is_lost(store: TaskStore,
                                                           scope: Scope) -> None:
    task = make_task("t1", pb.TASK_STATE_COMPLETED)
    await store.create(scope, task, [task_event(task)], lease=Lease("a", 10_000))
    with pytest.raises(LeaseLostError) as lost:
        await store.swap_lease(scope, "t1", "a", Lease("a", 20_000))
    assert lost.value.current is not None
    assert lost.value.current.task.status.state == pb.TASK_STATE_COMPLETED
    with pytest.raises(LeaseLostError) as gone:
        await store.swap_lease(scope, "missing", "a", Lease("a", 20_000))
    assert gone.value.current is None


async def test_expiry_write_loses_to_a_renewal(store: TaskStore, scope: Scope) -> None:
    task = make_task("t1", pb.TASK_STATE_WORKING)
    await store.create(scope, task, [task_event(task)], lease=Lease("a", 1_000))
    failed = make_task("t1", pb.TASK_STATE_FAILED)
    # The runner renewed after the reader saw the lease end at 1 000.
    await store.swap_lease(scope, "t1", "a", Lease("a", 9_000))
    with pytest.raises(VersionConflictError):
        await store.update(scope, "t1", 1, failed, [status_event("t1", pb.TASK_STATE_FAILED)],
                           lease_expired_by=5_000)
    written = await store.update(scope, "t1", 1, failed,
                                 [status_event("t1", pb.TASK_STATE_FAILED)],
                                 lease_expired_by=10_000)
    assert written.task.status.state == pb.TASK_STATE_FAILED and written.lease is None


async def test_expiry_write_needs_a_lease(store: TaskStore, scope: Scope) -> None:
    task = make_task("t1", pb.TASK_STATE_INPUT_REQUIRED)
    await store.create(scope, task, [task_event(task)])
    with pytest.raises(VersionConflictError):
        await store.update(scope, "t1", 1, task, [], lease_expired_by=10_000)


async def test_expired_leases_span_scopes_and_skip_live_ones(store: TaskStore,
                                                            scope: Scope) -> None:
    other = Scope(scope.tenant, "bob")
    for where, task_id, until in ((scope, "old", EARLY), (other, "older", EARLY - 1),
                                  (scope, "live", 10**13)):
        task = make_task(task_id, pb.TASK_STATE_WORKING)
        await store.create(where, task, [task_event(task)], lease=Lease("a", until))
    done = make_task("done", pb.TASK_STATE_COMPLETED)
    await store.create(scope, done, [task_event(done)], lease=Lease("a", EARLY))
    found = await store.expired_leases(LATE, limit=1000)
    mine = [(where, task_id) for where, task_id in found if where.tenant == scope.tenant]
    assert mine == [(other, "older"), (scope, "old")]  # oldest lease first
    # A renewal takes a task out of the expired set; a terminal write takes it out for good.
    await store.swap_lease(scope, "old", "a", Lease("a", 10**13))
    found = await store.expired_leases(LATE, limit=1000)
    assert [(w, t) for w, t in found if w.tenant == scope.tenant] == [(other, "older")]


async def test_list_shows_leases(store: TaskStore, scope: Scope) -> None:
    leased = make_task("leased", pb.TASK_STATE_WORKING)
    await store.create(scope, leased, [task_event(leased)], lease=Lease("a", 7_000))
    waiting = make_task("waiting", pb.TASK_STATE_INPUT_REQUIRED)
    await store.create(scope, waiting, [task_event(waiting)])
    page = await store.list(scope, TaskQuery())
    assert {t.id for t in page.tasks} == {"leased", "waiting"}
    assert dict(page.leases) == {"leased": Lease("a", 7_000)}
