"""The store contract for large tasks, on both stores: a task of any size up to the documented
per-task limit (`base.DEFAULT_MAX_TASK_BYTES`) is stored, read, listed, its events read back
and streamed, and on DynamoDB every item of it expires with the task, although DynamoDB
refuses any item over 400 KB; a task over the limit is refused the same way by both stores,
with nothing written."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest

from a2akit.agent import RequestContext, TaskHandle
from a2akit.errors import InvalidParamsError
from a2akit.examples.echo import EchoAgent
from a2akit.generated import a2a_pb2 as pb
from a2akit.runtime import build_operations
from a2akit.settings import Settings
from a2akit.store import table
from a2akit.store.base import DEFAULT_MAX_TASK_BYTES, Scope, TaskQuery, TaskStore
from a2akit.store.dynamodb import DynamoDBStore
from http_service.app import create_app
from tests.jsonrpc.client import AsgiClient
from tests.store.conftest import TABLE
from tests.store.test_contract import make_task, status_event, task_event
from tests.support.messages import user_message

KB = 1000


def _text(size: int, seed: str) -> str:
    """`size` characters that differ per seed (no two parts alike)."""
    return (seed * (size // len(seed) + 1))[:size]


def echo_task(task_id: str, size: int) -> pb.Task:
    """An echo: the user's message of `size` bytes and an artifact repeating it, completed."""
    task = make_task(task_id, pb.TASK_STATE_COMPLETED, ms=2_000)
    text = _text(size, f"{task_id}-echo ")
    task.history[0].parts[0].text = text
    artifact = task.artifacts.add(artifact_id="a1", name="echo")
    artifact.parts.add(text=text)
    return task


def grown(task: pb.Task, turn: int, size: int) -> pb.Task:
    """`task` after one more turn: a message and its answer of `size` bytes each."""
    task = pb.Task.FromString(task.SerializeToString())
    task.history.add(message_id=f"u{turn}", role=pb.ROLE_USER).parts.add(
        text=_text(size, f"question {turn} "))
    task.history.add(message_id=f"a{turn}", role=pb.ROLE_AGENT).parts.add(
        text=_text(size, f"answer {turn} "))
    task.artifacts.add(artifact_id=f"art{turn}").parts.add(text=_text(size, f"artifact {turn} "))
    return task


def _partition(store: DynamoDBStore, pk: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"TableName": store.table_name,
                              "KeyConditionExpression": "pk = :pk",
                              "ExpressionAttributeValues": {":pk": {"S": pk}},
                              "ConsistentRead": True}
    while True:
        page = store._client.query(**kwargs)
        items += page["Items"]
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


async def _check_whole(store: TaskStore, scope: Scope, task: pb.Task,
                       events: list[pb.StreamResponse]) -> None:
    got = await store.get(scope, task.id)
    assert got is not None and got.task == task
    assert [e.event for e in await store.events_after(scope, task.id, 0)] == events
    assert [e.event for e in await store.events_after(scope, task.id, len(events) - 1)] == \
        events[-1:]
    page = await store.list(scope, TaskQuery())
    assert [t.id for t in page.tasks] == [task.id] and page.tasks[0] == task
    by_context = await store.list(scope, TaskQuery(context_id=task.context_id, page_size=1))
    assert by_context.tasks == [task]


async def _check_expiry(store: TaskStore, scope: Scope, task_id: str) -> None:
    """On DynamoDB: every item of the task carries the task's expiry."""
    if not isinstance(store, DynamoDBStore):
        return
    items = await asyncio.to_thread(_partition, store, table.task_pk(scope, task_id))
    assert len(items) > 2
    expected = time.time() + 30 * 86400
    for item in items:
        assert table.TTL_ATTRIBUTE in item, item["sk"]
        assert abs(int(item[table.TTL_ATTRIBUTE]["N"]) - expected) < 60, item["sk"]


@pytest.mark.anyio
async def test_a_500_kb_echo_task(store: TaskStore, scope: Scope) -> None:
    # A 250 KB message echoed: a 500 KB task, created finished (as an echo SendMessage is),
    # and its first event (the task) as large.
    task = echo_task("echo", 250 * KB)
    events = [task_event(task), status_event("echo", pb.TASK_STATE_COMPLETED)]
    stored = await store.create(scope, task, events, message_id="m1")
    assert (stored.version, stored.last_seq, stored.task) == (1, 2, task)
    await _check_whole(store, scope, task, events)
    await _check_expiry(store, scope, "echo")


@pytest.mark.anyio
async def test_a_5_mb_task_grows_turn_by_turn(store: TaskStore, scope: Scope) -> None:
    # A conversation of ten turns, 180 KB of each kind each turn: history plus artifacts grow
    # to about 5.4 MB; each turn's task event carries the whole task.
    task = make_task("conv", pb.TASK_STATE_WORKING)
    events = [task_event(task)]
    stored = await store.create(scope, task, events)
    for turn in range(10):
        task = grown(task, turn, 180 * KB)
        new = [task_event(task), status_event("conv", pb.TASK_STATE_WORKING)]
        stored = await store.update(scope, "conv", stored.version, task, new)
        events += new
        assert stored.task == task
    assert task.ByteSize() > 5_000_000
    await _check_whole(store, scope, task, events)
    done = pb.Task.FromString(task.SerializeToString())
    done.status.state = pb.TASK_STATE_COMPLETED
    events.append(status_event("conv", pb.TASK_STATE_COMPLETED))
    await store.update(scope, "conv", stored.version, done, events[-1:])
    await _check_whole(store, scope, done, events)
    await _check_expiry(store, scope, "conv")
    if isinstance(store, DynamoDBStore):
        # The parts of earlier snapshots are gone: the partition holds the last snapshot
        # once, not ten times.
        items = await asyncio.to_thread(_partition, store, table.task_pk(scope, "conv"))
        stored_bytes = sum(table.item_size(item) for item in items)
        event_bytes = sum(e.ByteSize() for e in events)
        assert stored_bytes < event_bytes + done.ByteSize() + 200 * KB


@pytest.mark.anyio
async def test_a_task_over_the_limit_is_refused_with_nothing_written(
        store: TaskStore, scope: Scope) -> None:
    over = echo_task("over", DEFAULT_MAX_TASK_BYTES // 2 + KB)
    with pytest.raises(InvalidParamsError) as refused:
        await store.create(scope, over, [task_event(over)], message_id="m-over")
    message = refused.value.message
    assert "A2A_MAX_TASK_BYTES" in message and "DynamoDB" not in message
    assert await store.get(scope, "over") is None
    assert await store.find_message(scope, "m-over") is None
    assert await store.events_after(scope, "over", 0) == []

    task = echo_task("t1", 100 * KB)
    task.status.state = pb.TASK_STATE_WORKING
    stored = await store.create(scope, task, [task_event(task)])
    too_big = pb.Task.FromString(over.SerializeToString())
    too_big.id = "t1"
    with pytest.raises(InvalidParamsError):
        await store.update(scope, "t1", 1, too_big, [status_event("t1", pb.TASK_STATE_WORKING)],
                           message_id="m-late")
    got = await store.get(scope, "t1")
    assert got is not None and (got.version, got.last_seq, got.task) == (1, 1, stored.task)
    assert await store.find_message(scope, "m-late") is None
    if isinstance(store, DynamoDBStore):
        items = await asyncio.to_thread(_partition, store, table.task_pk(scope, "over"))
        assert items == []


# --- through Operations and the JSON-RPC app ------------------------------------------------


CHUNKS = 20
CHUNK = 250 * KB


class Big:
    """Echoes the message, then reports CHUNKS more artifact chunks of CHUNK bytes each (a
    5 MB artifact in all), pausing between them so a subscriber can join; then completes."""

    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        await task.working("writing")
        artifact_id = await task.add_artifact(context.text, name="answer")
        for i in range(CHUNKS):
            await asyncio.sleep(0.05)
            artifact_id = await task.add_artifact(
                _text(CHUNK, f"chunk {i} "), artifact_id=artifact_id, append=True,
                last_chunk=i == CHUNKS - 1)
        await task.complete("Done")


def _expected_artifact(text: str) -> str:
    return text + "".join(_text(CHUNK, f"chunk {i} ") for i in range(CHUNKS))


@pytest.fixture
def rpc(store: TaskStore, scope: Scope) -> Iterator[AsgiClient]:
    ops = build_operations(Settings(allow_anonymous=True), store=store, agent=Big())
    client = AsgiClient(create_app(ops))
    yield client
    client.close()


def _artifact_text(events: list[dict[str, Any]]) -> str:
    """The answer as a stream tells it: the artifact of the first task event, then chunks."""
    text = ""
    for event in events:
        if "task" in event:
            text = "".join(part["text"] for artifact in event["task"].get("artifacts", [])
                           for part in artifact["parts"])
        elif "artifactUpdate" in event:
            update = event["artifactUpdate"]
            chunk = "".join(part["text"] for part in update["artifact"]["parts"])
            text = text + chunk if update.get("append") else chunk
    return text


def test_a_5_mb_task_streamed_subscribed_and_read_through_jsonrpc(
        rpc: AsgiClient, scope: Scope) -> None:
    message = _text(250 * KB, "question ")
    params = {"tenant": scope.tenant, "message": user_message(message)}
    reply = rpc.call("SendStreamingMessage", params).events()
    results = [event["result"] for event in reply]
    assert "error" not in reply[-1], reply[-1]
    assert results[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert _artifact_text(results) == _expected_artifact(message)
    task_id = results[0]["task"]["id"]
    got = rpc.result("GetTask", {"tenant": scope.tenant, "id": task_id})
    assert "".join(p["text"] for p in got["artifacts"][0]["parts"]) == _expected_artifact(message)
    listed = rpc.result("ListTasks", {"tenant": scope.tenant, "includeArtifacts": True})
    assert [t["id"] for t in listed["tasks"]] == [task_id]
    assert listed["tasks"][0]["artifacts"] == got["artifacts"]

    # SubscribeToTask while the agent writes: the task as it stands, then every chunk.
    second = {"tenant": scope.tenant, "message": user_message(_text(250 * KB, "again ")),
              "configuration": {"returnImmediately": True}}
    started = rpc.result("SendMessage", second)["task"]
    events = [event["result"] for event in rpc.call(
        "SubscribeToTask", {"tenant": scope.tenant, "id": started["id"]}).events()]
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert _artifact_text(events) == _expected_artifact(_text(250 * KB, "again "))


def test_an_echo_over_the_limit_is_refused_through_jsonrpc_with_nothing_stored(
        store: TaskStore, scope: Scope) -> None:
    store.max_task_bytes = 300 * KB  # what A2A_MAX_TASK_BYTES sets (the stores' argument)
    client = AsgiClient(create_app(build_operations(Settings(allow_anonymous=True), store=store,
                                                    agent=EchoAgent())))
    try:
        error = client.error("SendMessage", {"tenant": scope.tenant,
                                             "message": user_message("x" * 250 * KB)})
        assert error["code"] == -32602
        assert "A2A_MAX_TASK_BYTES" in error["message"], error
        assert "DynamoDB" not in error["message"]
        listed = client.result("ListTasks", {"tenant": scope.tenant})
        assert listed["tasks"] == [] and listed["totalSize"] == 0
        # Within the limit, the same store takes it.
        done = client.result("SendMessage", {"tenant": scope.tenant,
                                            "message": user_message("y" * 100 * KB)})
        assert done["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    finally:
        client.close()


@pytest.mark.anyio
async def test_reading_one_large_task_takes_only_what_every_role_may(
        own_client: Any, scope: Scope) -> None:
    """The worker, the sweeper and the push dispatcher read a large task and its events with
    the actions of their roles (infra: RUN, SWEEP, the dispatcher's reads): GetItem and Query,
    no BatchGetItem, which only the door has (a page of listed tasks). A store of its own, so
    no part is cached from the write."""
    from infra.push import READ_ACTIONS
    from infra.table import RUN_ACTIONS, SWEEP_ACTIONS

    task = echo_task("big-read", 600 * KB)
    events = [task_event(task), status_event("big-read", pb.TASK_STATE_COMPLETED)]
    await DynamoDBStore(TABLE, own_client).create(scope, task, events, message_id="m1")
    made: list[str] = []
    own_client.meta.events.register(
        "before-call.dynamodb.*", lambda model, **_: made.append(f"dynamodb:{model.name}"))
    reader = DynamoDBStore(TABLE, own_client)
    got = await reader.get(scope, task.id)
    assert got is not None and got.task == task
    assert [e.event for e in await reader.events_after(scope, task.id, 0)] == events
    assert made and set(made) <= set(RUN_ACTIONS) & set(SWEEP_ACTIONS) & set(READ_ACTIONS), made
