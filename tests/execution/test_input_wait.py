"""A task that waits for the client (input-required, auth-required) does not wait forever:
with no new message for A2A_INPUT_WAIT_SECONDS the sweeper ends it CANCELED, its status
message saying why and naming the setting (issue 33, item 12), on both stores. The sweeper
finds it through the lease index, as it finds the tasks whose runner is gone."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest

from a2akit.agent import RequestContext, TaskHandle
from a2akit.auth import Identity
from a2akit.caller import Call
from a2akit.examples.input_required import GreeterAgent
from a2akit.execution import leases
from a2akit.generated import a2a_pb2 as pb
from a2akit.runtime import build_operations
from a2akit.settings import ENV, STREAM, Settings
from a2akit.store.base import Scope, TaskStore
from tests.support.messages import send_request

pytestmark = pytest.mark.anyio

WAIT = 1.0  # seconds a waiting task keeps, in the short settings


class Gatekeeper:
    """Asks the client to authenticate on the first turn, completes on the next."""

    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        if context.task is None:
            await task.require_auth("Sign in first")
            return
        await task.complete("welcome")


def _settings(wait: float) -> Settings:
    # With a quota: the write that cancels a task frees its place.
    return Settings(allow_anonymous=True, push_delivery=STREAM, input_wait_seconds=wait,
                    max_active_tasks_per_caller=10)


async def _waiting(store: TaskStore, scope: Scope, agent: object, wait: float) -> str:
    ops = build_operations(_settings(wait), store=store, agent=agent)  # type: ignore[arg-type]
    request = send_request("hi")
    request.tenant = scope.tenant
    task = (await ops.send_message(request, Call(Identity(scope.owner, "test")))).task
    assert task.status.state in (pb.TASK_STATE_INPUT_REQUIRED, pb.TASK_STATE_AUTH_REQUIRED)
    return task.id


async def _sweep_until_ended(store: TaskStore, scope: Scope, task_ids: list[str]) -> None:
    # Other tests' expired leases may share the DynamoDB table: sweep until ours are done.
    deadline = time.monotonic() + 20
    while True:
        await leases.sweep(store, limit=1000)
        states = [(await store.get(scope, task_id)) for task_id in task_ids]
        if all(s is not None and s.task.status.state == pb.TASK_STATE_CANCELED for s in states):
            return
        assert time.monotonic() < deadline, "the sweeper did not end the waiting tasks"
        await asyncio.sleep(0.1)


async def test_the_sweeper_cancels_a_task_that_waited_too_long(store: TaskStore) -> None:
    scope = Scope(f"t#{uuid.uuid4().hex[:8]}", f"waiter-{uuid.uuid4().hex[:8]}")
    old_input = await _waiting(store, scope, GreeterAgent(), WAIT)
    old_auth = await _waiting(store, scope, Gatekeeper(), WAIT)
    fresh = await _waiting(store, scope, GreeterAgent(), 3600)
    # Not yet: a sweep before the wait is over ends nothing of ours.
    await leases.sweep(store, limit=1000)
    for task_id in (old_input, old_auth, fresh):
        stored = await store.get(scope, task_id)
        assert stored is not None and stored.task.status.state != pb.TASK_STATE_CANCELED
    await asyncio.sleep(WAIT + 0.2)
    await _sweep_until_ended(store, scope, [old_input, old_auth])
    for task_id in (old_input, old_auth):
        stored = await store.get(scope, task_id)
        assert stored is not None and stored.lease is None
        message = stored.task.status.message
        assert message.role == pb.ROLE_AGENT
        assert ENV.INPUT_WAIT_SECONDS in message.parts[0].text
        assert "no new message" in message.parts[0].text
        # The CANCELED status is an event too: streams and webhooks see why it ended.
        events = await store.events_after(scope, task_id, 0)
        assert events[-1].event.status_update.status.state == pb.TASK_STATE_CANCELED
    kept = await store.get(scope, fresh)
    assert kept is not None and kept.task.status.state == pb.TASK_STATE_INPUT_REQUIRED
    assert await store.active_tasks(scope.owner) == 1  # the fresh one only


async def test_a_new_message_restarts_the_wait(store: TaskStore) -> None:
    """The wait counts from the last message: a task answered in time and asking again
    waits anew; answered in time and completed, it is never canceled."""
    scope = Scope(f"t#{uuid.uuid4().hex[:8]}", "alice")
    ops = build_operations(_settings(WAIT), store=store, agent=GreeterAgent())
    call = Call(Identity(scope.owner, "test"))
    request = send_request("hi")
    request.tenant = scope.tenant
    task = (await ops.send_message(request, call)).task
    await asyncio.sleep(WAIT / 2)
    again = send_request("Ada", task_id=task.id)
    again.tenant = scope.tenant
    done = (await ops.send_message(again, call)).task
    assert done.status.state == pb.TASK_STATE_COMPLETED
    await asyncio.sleep(WAIT)
    await leases.sweep(store, limit=1000)
    stored = await store.get(scope, task.id)
    assert stored is not None and stored.task.status.state == pb.TASK_STATE_COMPLETED
