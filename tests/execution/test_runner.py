"""The runner's own task: the agent runs inline in it, and the writer, the watcher and the
deadline timer start only once the agent outlives its first burst (the embedded store; the
lease, deadline and drain behaviours on both stores are in tests/execution/test_leases.py)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from a2akit.agent import RequestContext, TaskHandle
from a2akit.auth import Identity
from a2akit.caller import Call
from a2akit.examples.echo import EchoAgent
from a2akit.execution import run as runner
from a2akit.generated import a2a_pb2 as pb
from a2akit.runtime import build_operations
from a2akit.settings import Settings
from a2akit.store.base import Scope
from a2akit.store.memory import MemoryStore
from tests.support.messages import send_request

pytestmark = pytest.mark.anyio

SETTINGS = Settings(allow_anonymous=True, lease_seconds=30)
SCOPE = Scope(tenant="", owner="alice")
CALL = Call(Identity(SCOPE.owner, "test"))


class Waiting:
    """Works, then waits for `release`; records the CancelledError it gets. With `swallow`
    it returns quietly instead of raising it (a badly behaved agent)."""

    def __init__(self, *, swallow: bool = False) -> None:
        self.release = asyncio.Event()
        self.swallow = swallow
        self.cancelled = False
        self.steps_after_cancel = 0

    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        await task.working("on it")
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled = True
            if self.swallow:
                return
            raise
        await task.complete()


class _Counting(MemoryStore):
    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    async def create(self, *args: Any, **kwargs: Any) -> Any:
        self.writes += 1
        return await super().create(*args, **kwargs)

    async def update(self, *args: Any, **kwargs: Any) -> Any:
        self.writes += 1
        return await super().update(*args, **kwargs)


def _request(*, immediately: bool) -> pb.SendMessageRequest:
    request = send_request("go")
    request.configuration.return_immediately = immediately
    return request


async def test_a_one_burst_agent_costs_the_run_one_task_and_one_write() -> None:
    store = _Counting()
    ops = build_operations(SETTINGS, store=store, agent=EchoAgent())
    loop = asyncio.get_running_loop()
    created: list[Any] = []
    create_task = loop.create_task

    def counted(coro: Any, **kwargs: Any) -> Any:
        created.append(getattr(coro, "__qualname__", coro))
        return create_task(coro, **kwargs)

    loop.create_task = counted  # type: ignore[method-assign]
    try:
        answer = await ops.send_message(_request(immediately=False), CALL)
    finally:
        del loop.create_task  # the instance attribute; the method shows again
    assert answer.task.status.state == pb.TASK_STATE_COMPLETED
    assert created == ["Run._main"], "no writer, watcher or agent task for a one-burst agent"
    assert store.writes == 1


async def test_an_agent_that_awaits_is_written_and_holds_its_lease_while_it_waits() -> None:
    store = MemoryStore()
    agent = Waiting()
    ops = build_operations(SETTINGS, store=store, agent=agent)
    answer = await ops.send_message(_request(immediately=True), CALL)
    # The writer started when the agent awaited: the WORKING state is stored, with a lease.
    stored = await store.get(SCOPE, answer.task.id)
    assert stored is not None and stored.lease is not None
    assert stored.task.status.state == pb.TASK_STATE_WORKING
    assert runner.live_runs() == 1
    agent.release.set()
    assert await runner.drain(10, "not reached") == 0  # waits for the run to end
    done = await store.get(SCOPE, answer.task.id)
    assert done is not None and done.task.status.state == pb.TASK_STATE_COMPLETED
    assert done.lease is None and not agent.cancelled


async def test_an_agent_that_swallows_its_stop_still_leaves_the_task_failed() -> None:
    store = MemoryStore()
    agent = Waiting(swallow=True)
    ops = build_operations(SETTINGS, store=store, agent=agent)
    answer = await ops.send_message(_request(immediately=True), CALL)
    assert await runner.drain(0, "The server shut down") == 1
    stored = await store.get(SCOPE, answer.task.id)
    assert agent.cancelled
    assert stored is not None and stored.task.status.state == pb.TASK_STATE_FAILED
    assert stored.lease is None


def test_a_closing_loop_cancels_the_run_and_writes_nothing_more() -> None:
    """asyncio.run cancels every task left when it returns: the run's own cancellation,
    not a stop of the run's making, so the agent sees it and no FAILED state is written
    (the lease, no longer renewed, expires and a reader or the sweeper settles the task)."""
    store = MemoryStore()
    agent = Waiting()

    async def start() -> str:
        ops = build_operations(SETTINGS, store=store, agent=agent)
        return (await ops.send_message(_request(immediately=True), CALL)).task.id

    task_id = asyncio.run(start())
    assert agent.cancelled
    stored = asyncio.run(store.get(SCOPE, task_id))
    assert stored is not None and stored.task.status.state == pb.TASK_STATE_WORKING
    assert stored.lease is not None
