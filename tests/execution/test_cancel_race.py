"""A cancel wins against a busy agent, on both stores: pairs of concurrent cancels from two
"processes" (two cores over one store) against agents that write every 50 ms. Every task
ends CANCELED, and every agent is stopped at its next write after the cancel: none of its
writes lands once a cancel request returned, and the first one refused stops it
(docs/execution.md, "Cancel"). Counted in writes, not seconds: on a loaded machine a second
measures DynamoDB Local's round trips (tests/support/cancels.py)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from a2akit.agent import RequestContext, TaskHandle
from a2akit.auth import Identity
from a2akit.caller import Call
from a2akit.errors import TaskNotCancelableError
from a2akit.generated import a2a_pb2 as pb
from a2akit.operations import Operations
from a2akit.runtime import build_operations
from a2akit.settings import Settings
from a2akit.store.base import Scope, TaskStore
from a2akit.store.dynamodb import DynamoDBStore
from tests.store.conftest import TABLE
from tests.support.cancels import StoreCalls
from tests.support.messages import send_request

pytestmark = pytest.mark.anyio

SETTINGS = Settings(allow_anonymous=True)
PAIRS = 100
AT_ONCE = 5  # tasks raced at the same time


class Chatty:
    """Reports an artifact chunk every 50 ms until stopped; notes when it was stopped."""

    def __init__(self) -> None:
        self.stopped: dict[str, float] = {}
        self.chunks: dict[str, int] = {}

    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        await task.working()
        try:
            for n in range(1200):
                await task.add_artifact(f"chunk {n} ", artifact_id="a", append=n > 0)
                self.chunks[context.task_id] = n + 1
                await asyncio.sleep(0.05)
        except asyncio.CancelledError:
            self.stopped[context.task_id] = asyncio.get_running_loop().time()
            raise
        await task.complete()


def _other_process(store: TaskStore, ddb_client: Any) -> TaskStore:
    """The same tasks as another process sees them: its own client on DynamoDB."""
    return store if not isinstance(store, DynamoDBStore) else DynamoDBStore(TABLE, ddb_client)


async def _race(runner: Operations, other: Operations, agent: Chatty, call: Call,
                scope: Scope) -> tuple[str, list[Any]]:
    request = send_request("go", immediately=True)
    request.tenant = scope.tenant
    task_id = (await runner.send_message(request, call)).task.id
    for _ in range(1000):
        if agent.chunks.get(task_id, 0) >= 3:  # the agent is busy writing
            break
        await asyncio.sleep(0.01)
    cancel = pb.CancelTaskRequest(id=task_id, tenant=scope.tenant)
    answers = await asyncio.gather(runner.cancel_task(cancel, call),
                                   other.cancel_task(cancel, call), return_exceptions=True)
    return task_id, answers


async def test_a_cancel_wins_against_an_agent_writing_every_50_ms(
        store: TaskStore, scope: Scope, request: pytest.FixtureRequest) -> None:
    agent = Chatty()
    runner = build_operations(SETTINGS, store=store, agent=agent)
    ddb_client = (request.getfixturevalue("ddb_client") if isinstance(store, DynamoDBStore)
                  else None)
    other_store = _other_process(store, ddb_client)
    other = build_operations(SETTINGS, store=other_store, agent=agent)
    calls = StoreCalls()
    for watched in {id(s): s for s in (store, other_store)}.values():
        calls.watch(watched)
    call = Call(Identity(scope.owner, "test"))
    results = []
    for _ in range(PAIRS // AT_ONCE):
        results += await asyncio.gather(*(_race(runner, other, agent, call, scope)
                                          for _ in range(AT_ONCE)))
    # Every agent stops (one that went on would write for another minute).
    for _ in range(3000):
        if all(task_id in agent.stopped for task_id, _ in results):
            break
        await asyncio.sleep(0.01)
    assert [task_id for task_id, _ in results if task_id not in agent.stopped] == []
    for task_id, answers in results:
        stored = await store.get(scope, task_id)
        assert stored is not None
        assert stored.task.status.state == pb.TASK_STATE_CANCELED, (task_id, answers)
        # Each cancel answers with the canceled task, or (the other was first) refuses it.
        assert all((isinstance(a, pb.Task) and a.status.state == pb.TASK_STATE_CANCELED)
                   or isinstance(a, TaskNotCancelableError) for a in answers), answers
        assert any(isinstance(a, pb.Task) for a in answers), answers
        calls.assert_stopped_at_next_write(task_id)
