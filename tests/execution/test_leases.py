"""Leases in one process, on both stores: the runner holds and renews one, readers and the
sweeper end a task whose runner is gone, a deadline or a shutdown ends a run FAILED."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from typing import Any

import pytest

from a2akit.agent import RequestContext, TaskHandle
from a2akit.auth import Identity
from a2akit.caller import Call
from a2akit.clock import epoch_ms
from a2akit.examples.cancellable import CountingAgent
from a2akit.execution import leases, run
from a2akit.generated import a2a_pb2 as pb
from a2akit.runtime import build_operations
from a2akit.settings import Settings
from a2akit.store.base import Lease, Scope, TaskStore
from tests.store.test_contract import make_task, task_event
from tests.support.messages import send_request

pytestmark = pytest.mark.anyio

SETTINGS = Settings(allow_anonymous=True, lease_seconds=0.6)


class Slow:
    """Works, then waits for `release` (or forever), then completes."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.runs = 0

    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        self.runs += 1
        await task.working("on it")
        await self.release.wait()
        await task.complete()


def _call(scope: Scope, deadline: float | None = None) -> Call:
    return Call(Identity(scope.owner, "test"), deadline=deadline)


async def _until(predicate: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not await predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


async def _start(store: TaskStore, scope: Scope, agent: Any,
                 settings: Settings = SETTINGS) -> str:
    ops = build_operations(settings, store=store, agent=agent)
    request = send_request("go")
    request.tenant = scope.tenant
    request.configuration.return_immediately = True
    return (await ops.send_message(request, _call(scope))).task.id


async def test_the_runner_renews_its_lease_and_lets_go_when_done(store: TaskStore,
                                                                scope: Scope) -> None:
    agent = Slow()
    task_id = await _start(store, scope, agent)
    first = await store.get(scope, task_id)
    assert first is not None and first.lease is not None
    assert first.lease.owner.startswith(leases.RUNNER_PREFIX)

    async def renewed() -> bool:
        now = await store.get(scope, task_id)
        assert now is not None and first.lease is not None
        return now.lease is not None and now.lease.until_ms > first.lease.until_ms

    await _until(renewed)
    current = await store.get(scope, task_id)
    assert current is not None and current.version == first.version  # renewals: no version
    agent.release.set()

    async def done() -> bool:
        now = await store.get(scope, task_id)
        return now is not None and now.task.status.state == pb.TASK_STATE_COMPLETED

    await _until(done)
    final = await store.get(scope, task_id)
    assert final is not None and final.lease is None


async def _abandoned(store: TaskStore, scope: Scope, task_id: str, owner: str) -> None:
    """A WORKING task whose runner died: its lease ended a while ago."""
    task = make_task(task_id, pb.TASK_STATE_WORKING)
    await store.create(scope, task, [task_event(task)],
                       lease=Lease(owner, epoch_ms() - 1_000))


async def test_get_task_ends_a_task_whose_runner_is_gone(store: TaskStore, scope: Scope) -> None:
    await _abandoned(store, scope, "dead", leases.runner_owner())
    ops = build_operations(SETTINGS, store=store, agent=CountingAgent())
    got = await ops.get_task(pb.GetTaskRequest(tenant=scope.tenant, id="dead"), _call(scope))
    assert got.status.state == pb.TASK_STATE_FAILED
    assert "runner stopped" in got.status.message.parts[0].text
    events = await store.events_after(scope, "dead", 1)
    assert [e.event.status_update.status.state for e in events] == [pb.TASK_STATE_FAILED]
    # Once: a second reader finds it terminal and writes nothing.
    again = await ops.get_task(pb.GetTaskRequest(tenant=scope.tenant, id="dead"), _call(scope))
    assert again == got
    assert len(await store.events_after(scope, "dead", 1)) == 1


async def test_list_tasks_and_subscribe_settle_too(store: TaskStore, scope: Scope) -> None:
    await _abandoned(store, scope, "listed", leases.runner_owner())
    await _abandoned(store, scope, "queued", leases.queue_owner())
    ops = build_operations(SETTINGS, store=store, agent=CountingAgent())
    page = await ops.list_tasks(pb.ListTasksRequest(tenant=scope.tenant), _call(scope))
    states = {t.id: t for t in page.tasks}
    assert states["listed"].status.state == pb.TASK_STATE_FAILED
    assert "never ran" in states["queued"].status.message.parts[0].text
    await _abandoned(store, scope, "followed", leases.runner_owner())
    with pytest.raises(Exception, match="terminal"):
        await ops.subscribe_to_task(pb.SubscribeToTaskRequest(tenant=scope.tenant,
                                                              id="followed"), _call(scope))


async def test_a_subscriber_sees_the_task_fail_when_its_runner_goes(store: TaskStore,
                                                                   scope: Scope) -> None:
    task = make_task("t", pb.TASK_STATE_WORKING)
    await store.create(scope, task, [task_event(task)],
                       lease=Lease("run#elsewhere", epoch_ms() + 300))
    ops = build_operations(SETTINGS, store=store, agent=CountingAgent())
    stream = await ops.subscribe_to_task(pb.SubscribeToTaskRequest(tenant=scope.tenant, id="t"),
                                         _call(scope))
    events = [event async for event in stream]
    assert events[0].task.status.state == pb.TASK_STATE_WORKING
    assert events[-1].status_update.status.state == pb.TASK_STATE_FAILED
    assert len(events) == 2


async def test_the_sweeper_ends_expired_leases_only(store: TaskStore, scope: Scope) -> None:
    await _abandoned(store, scope, "dead", leases.runner_owner())
    live = make_task("live", pb.TASK_STATE_WORKING)
    await store.create(scope, live, [task_event(live)],
                       lease=Lease("run#alive", epoch_ms() + 60_000))
    waiting = make_task("waiting", pb.TASK_STATE_INPUT_REQUIRED)
    await store.create(scope, waiting, [task_event(waiting)])
    # Other tests' expired tasks may share the DynamoDB table: sweep until ours is done.
    for _ in range(20):
        await leases.sweep(store, limit=1000)
        dead = await store.get(scope, "dead")
        assert dead is not None
        if dead.task.status.state == pb.TASK_STATE_FAILED:
            break
    assert dead.task.status.state == pb.TASK_STATE_FAILED and dead.lease is None
    for task_id, state in (("live", pb.TASK_STATE_WORKING),
                           ("waiting", pb.TASK_STATE_INPUT_REQUIRED)):
        kept = await store.get(scope, task_id)
        assert kept is not None and kept.task.status.state == state and kept.version == 1


async def test_a_live_runner_is_never_overridden(store: TaskStore, scope: Scope) -> None:
    """The reader read an expired lease; the runner renewed before the reader's write."""
    task = make_task("t", pb.TASK_STATE_WORKING)
    await store.create(scope, task, [task_event(task)], lease=Lease("run#a", 1))
    stale = await store.get(scope, "t")
    assert stale is not None and leases.lost(stale.task.status.state, stale.lease)
    await store.swap_lease(scope, "t", "run#a", Lease("run#a", epoch_ms() + 60_000))
    after = await leases.settle(store, scope, stale)
    assert after.task.status.state == pb.TASK_STATE_WORKING and after.version == 1


async def test_a_run_past_its_deadline_ends_failed_naming_the_limit(store: TaskStore,
                                                                    scope: Scope) -> None:
    agent = Slow()
    ops = build_operations(dataclasses.replace(SETTINGS, budget_margin_seconds=0.2),
                           store=store, agent=agent)
    request = send_request("go")
    request.tenant = scope.tenant
    # As on Lambda: the invocation ends in 1 s, so the budget is 0.8 s.
    answer = await ops.send_message(request, _call(scope, time.monotonic() + 1.0))
    assert answer.task.status.state == pb.TASK_STATE_FAILED
    text = answer.task.status.message.parts[0].text
    assert "time limit of this request on AWS Lambda: 1 s" in text
    stored = await store.get(scope, answer.task.id)
    assert stored is not None and stored.task == answer.task and stored.lease is None


async def test_drain_ends_what_still_runs_failed(store: TaskStore, scope: Scope) -> None:
    quick, slow = Slow(), Slow()
    quick_id = await _start(store, scope, quick)
    slow_id = await _start(store, scope, slow)
    asyncio.get_running_loop().call_later(0.1, quick.release.set)
    stopped = await run.drain(0.5, "The server shut down")
    assert stopped == 1
    done = await store.get(scope, quick_id)
    cut = await store.get(scope, slow_id)
    assert done is not None and done.task.status.state == pb.TASK_STATE_COMPLETED
    assert cut is not None and cut.task.status.state == pb.TASK_STATE_FAILED
    assert cut.task.status.message.parts[0].text == "The server shut down"
    assert cut.lease is None
