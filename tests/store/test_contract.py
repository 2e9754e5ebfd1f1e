"""The store contract: the same behaviour from the embedded store and the DynamoDB store."""

from __future__ import annotations

import asyncio
import base64
import json
import uuid

import pytest

from a2akit.clock import now
from a2akit.errors import InvalidParamsError
from a2akit.generated import a2a_pb2 as pb
from a2akit.store.base import (
    DuplicateMessageError,
    Scope,
    TaskQuery,
    TaskStore,
    VersionConflictError,
)

pytestmark = pytest.mark.anyio


def make_task(
    task_id: str, state: int = pb.TASK_STATE_SUBMITTED, ms: int = 1_000, context: str = "ctx"
) -> pb.Task:
    task = pb.Task(id=task_id, context_id=context)
    task.status.state = state  # type: ignore[assignment]
    task.status.timestamp.seconds = ms // 1000
    task.status.timestamp.nanos = (ms % 1000) * 1_000_000
    task.history.add(message_id=f"m-{task_id}", role=pb.ROLE_USER).parts.add(text="hi")
    return task


def status_event(task_id: str, state: int, context: str = "ctx") -> pb.StreamResponse:
    event = pb.StreamResponse()
    event.status_update.task_id = task_id
    event.status_update.context_id = context
    event.status_update.status.state = state  # type: ignore[assignment]
    return event


def task_event(task: pb.Task) -> pb.StreamResponse:
    event = pb.StreamResponse()
    event.task.CopyFrom(task)
    return event


async def test_create_get_update(store: TaskStore, scope: Scope) -> None:
    assert await store.get(scope, "t1") is None
    task = make_task("t1")
    stored = await store.create(scope, task, [task_event(task)])
    assert (stored.version, stored.last_seq) == (1, 1)
    assert stored.task == task
    got = await store.get(scope, "t1")
    assert got is not None and (got.version, got.last_seq, got.task) == (1, 1, task)

    working = make_task("t1", pb.TASK_STATE_WORKING, ms=2_000)
    updated = await store.update(
        scope, "t1", 1, working,
        [status_event("t1", pb.TASK_STATE_WORKING), status_event("t1", pb.TASK_STATE_WORKING)],
    )
    assert (updated.version, updated.last_seq, updated.task) == (2, 3, working)
    got = await store.get(scope, "t1")
    assert got is not None and (got.version, got.last_seq, got.task) == (2, 3, working)
    # An update with no events bumps the version only.
    again = await store.update(scope, "t1", 2, working, [])
    assert (again.version, again.last_seq) == (3, 3)


async def test_version_conflict(store: TaskStore, scope: Scope) -> None:
    task = make_task("t1")
    await store.create(scope, task, [task_event(task)])
    with pytest.raises(VersionConflictError):
        await store.create(scope, task, [task_event(task)])  # exists already
    await store.update(scope, "t1", 1, task, [status_event("t1", pb.TASK_STATE_WORKING)])
    with pytest.raises(VersionConflictError):
        await store.update(scope, "t1", 1, task, [status_event("t1", pb.TASK_STATE_WORKING)])
    with pytest.raises(VersionConflictError):
        await store.update(scope, "missing", 1, make_task("missing"), [])
    got = await store.get(scope, "t1")
    assert got is not None and (got.version, got.last_seq) == (2, 2)
    assert [e.seq for e in await store.events_after(scope, "t1", 0)] == [1, 2]


async def test_duplicate_message_id(store: TaskStore, scope: Scope) -> None:
    assert await store.find_message(scope, "m1") is None
    a = make_task("a")
    await store.create(scope, a, [task_event(a)], message_id="m1")
    assert await store.find_message(scope, "m1") == "a"
    b = make_task("b")
    with pytest.raises(DuplicateMessageError) as caught:
        await store.create(scope, b, [task_event(b)], message_id="m1")
    assert caught.value.task_id == "a"
    assert await store.get(scope, "b") is None  # nothing written

    await store.update(scope, "a", 1, a, [status_event("a", pb.TASK_STATE_WORKING)],
                       message_id="m2")
    assert await store.find_message(scope, "m2") == "a"
    with pytest.raises(DuplicateMessageError) as caught:
        await store.update(scope, "a", 2, a, [status_event("a", pb.TASK_STATE_WORKING)],
                           message_id="m1")
    assert caught.value.task_id == "a"
    got = await store.get(scope, "a")
    assert got is not None and (got.version, got.last_seq) == (2, 2)  # unchanged
    # Message ids are per scope.
    other = Scope(scope.tenant, "bob")
    assert await store.find_message(other, "m1") is None
    await store.create(other, b, [task_event(b)], message_id="m1")
    assert await store.find_message(other, "m1") == "b"


async def test_events_after(store: TaskStore, scope: Scope) -> None:
    task = make_task("t1")
    await store.create(scope, task, [task_event(task)])
    states = [pb.TASK_STATE_WORKING, pb.TASK_STATE_INPUT_REQUIRED, pb.TASK_STATE_WORKING]
    version = 1
    for state in states:
        version = (await store.update(scope, "t1", version, task,
                                      [status_event("t1", state)])).version
    events = await store.events_after(scope, "t1", 0)
    assert [e.seq for e in events] == [1, 2, 3, 4]
    assert events[0].event == task_event(task)
    assert [e.event.status_update.status.state for e in events[1:]] == states
    assert [e.seq for e in await store.events_after(scope, "t1", 2)] == [3, 4]
    assert await store.events_after(scope, "t1", 4) == []
    assert await store.events_after(scope, "missing", 0) == []


async def test_wait_events(store: TaskStore, scope: Scope) -> None:
    store.poll_interval = 0.05
    task = make_task("t1")
    await store.create(scope, task, [task_event(task)])
    assert [e.seq for e in await store.wait_events(scope, "t1", 0, 1.0)] == [1]
    assert await store.wait_events(scope, "t1", 1, 0.1) == []

    async def later() -> None:
        await asyncio.sleep(0.1)
        await store.update(scope, "t1", 1, task, [status_event("t1", pb.TASK_STATE_WORKING)])

    writer = asyncio.create_task(later())
    events = await store.wait_events(scope, "t1", 1, 5.0)
    await writer
    assert [e.seq for e in events] == [2]


async def _fill(store: TaskStore, scope: Scope) -> None:
    # ms 1000..1009; even tasks in context "even", states alternate submitted/working.
    for i in range(10):
        state = pb.TASK_STATE_SUBMITTED if i % 3 else pb.TASK_STATE_WORKING
        task = make_task(f"t{i}", state, ms=1000 + i, context="even" if i % 2 == 0 else "odd")
        await store.create(scope, task, [task_event(task)])


async def _all_pages(store: TaskStore, scope: Scope, query: TaskQuery) -> list[list[str]]:
    pages = []
    token = ""
    while True:
        page = await store.list(scope, TaskQuery(
            context_id=query.context_id, state=query.state,
            status_after_ms=query.status_after_ms, page_size=query.page_size, page_token=token))
        pages.append([t.id for t in page.tasks])
        token = page.next_page_token
        if not token:
            return pages


async def test_list_paging_newest_first(store: TaskStore, scope: Scope) -> None:
    await _fill(store, scope)
    page = await store.list(scope, TaskQuery(page_size=50))
    assert [t.id for t in page.tasks] == [f"t{i}" for i in range(9, -1, -1)]
    assert page.next_page_token == "" and page.total_size == 10
    assert page.tasks[0] == make_task("t9", pb.TASK_STATE_WORKING, 1009, "odd")

    assert await _all_pages(store, scope, TaskQuery(page_size=4)) == [
        ["t9", "t8", "t7", "t6"], ["t5", "t4", "t3", "t2"], ["t1", "t0"]]
    # Exactly a page: no token for an empty next page.
    assert await _all_pages(store, scope, TaskQuery(page_size=5)) == [
        ["t9", "t8", "t7", "t6", "t5"], ["t4", "t3", "t2", "t1", "t0"]]
    page = await store.list(scope, TaskQuery(page_size=3))
    assert page.total_size == 10


async def test_list_filters(store: TaskStore, scope: Scope) -> None:
    await _fill(store, scope)
    page = await store.list(scope, TaskQuery(context_id="even"))
    assert [t.id for t in page.tasks] == ["t8", "t6", "t4", "t2", "t0"]
    assert page.total_size == 5
    page = await store.list(scope, TaskQuery(state=pb.TASK_STATE_WORKING))
    assert [t.id for t in page.tasks] == ["t9", "t6", "t3", "t0"]
    page = await store.list(scope, TaskQuery(status_after_ms=1006))
    assert [t.id for t in page.tasks] == ["t9", "t8", "t7", "t6"]
    assert page.total_size == 4
    page = await store.list(scope, TaskQuery(context_id="even", state=pb.TASK_STATE_WORKING,
                                             status_after_ms=1001))
    assert [t.id for t in page.tasks] == ["t6"] and page.total_size == 1
    # The page size holds with filters too, across pages.
    assert await _all_pages(store, scope, TaskQuery(context_id="odd", page_size=2)) == [
        ["t9", "t7"], ["t5", "t3"], ["t1"]]
    page = await store.list(scope, TaskQuery(context_id="odd", page_size=2))
    assert page.total_size == 5
    page = await store.list(scope, TaskQuery(context_id="none"))
    assert (page.tasks, page.next_page_token, page.total_size) == ([], "", 0)


async def test_list_follows_status_updates(store: TaskStore, scope: Scope) -> None:
    await _fill(store, scope)
    await store.update(scope, "t0", 1, make_task("t0", pb.TASK_STATE_COMPLETED, 2000, "even"), [])
    page = await store.list(scope, TaskQuery(page_size=2))
    assert [t.id for t in page.tasks] == ["t0", "t9"] and page.total_size == 10
    page = await store.list(scope, TaskQuery(state=pb.TASK_STATE_COMPLETED))
    assert [t.id for t in page.tasks] == ["t0"]


async def test_list_same_millisecond_in_write_order(store: TaskStore, scope: Scope) -> None:
    # One status time for all, ids in no order of their own: only the write order decides.
    ids = [f"t{(i * 7) % 12:02d}" for i in range(12)]
    for task_id in ids:
        await store.create(scope, make_task(task_id, ms=1000), [])
    newest = ids[::-1]
    assert await _all_pages(store, scope, TaskQuery(page_size=5)) == [
        newest[:5], newest[5:10], newest[10:]]
    assert await _all_pages(store, scope, TaskQuery(status_after_ms=1000, page_size=4)) == [
        newest[:4], newest[4:8], newest[8:]]
    assert await _all_pages(store, scope, TaskQuery(context_id="ctx", page_size=7)) == [
        newest[:7], newest[7:]]
    # A later write within the same millisecond is newer; a later status time still wins.
    await store.update(scope, ids[0], 1, make_task(ids[0], pb.TASK_STATE_WORKING, ms=1000), [])
    await store.create(scope, make_task("old", ms=999), [])
    await store.create(scope, make_task("new", ms=1001), [])
    assert await _all_pages(store, scope, TaskQuery(page_size=20)) == [
        ["new", ids[0], *newest[:-1], "old"]]


async def test_list_back_to_back_creates_newest_first(store: TaskStore, scope: Scope) -> None:
    # Real status times, as the runner sets them: many share a millisecond.
    ids = [uuid.uuid4().hex for _ in range(30)]
    for task_id in ids:
        task = make_task(task_id)
        task.status.timestamp.CopyFrom(now())
        await store.create(scope, task, [task_event(task)])
    pages = await _all_pages(store, scope, TaskQuery(page_size=7))
    assert [len(page) for page in pages] == [7, 7, 7, 7, 2]
    assert [task_id for page in pages for task_id in page] == ids[::-1]


async def test_a_cancel_request_stops_every_write_but_the_one_that_ends_the_task(
        store: TaskStore, scope: Scope) -> None:
    await store.create(scope, make_task("t1"), [])
    marked = await store.request_cancel(scope, "t1")
    assert marked is not None and marked.cancel_requested
    assert marked.version == 1  # no write of the task: its version and events stay
    current = await store.get(scope, "t1")
    assert current is not None and current.cancel_requested
    with pytest.raises(VersionConflictError):
        await store.update(scope, "t1", 1, make_task("t1", pb.TASK_STATE_WORKING),
                           [status_event("t1", pb.TASK_STATE_WORKING)])
    ended = await store.update(scope, "t1", 1, make_task("t1", pb.TASK_STATE_CANCELED),
                               [status_event("t1", pb.TASK_STATE_CANCELED)])
    assert ended.task.status.state == pb.TASK_STATE_CANCELED
    # An ended task is not marked again; an unknown one is None.
    again = await store.request_cancel(scope, "t1")
    assert again is not None and not again.cancel_requested
    assert again.version == ended.version
    assert await store.request_cancel(scope, "nope") is None
    assert await store.request_cancel(Scope(scope.tenant, "someone-else"), "t1") is None


async def test_list_token_below_the_status_bound(store: TaskStore, scope: Scope) -> None:
    await _fill(store, scope)
    token = (await store.list(scope, TaskQuery(page_size=8))).next_page_token
    assert token  # after t2: what is left (t1, t0) is older than the bound below
    page = await store.list(scope, TaskQuery(status_after_ms=1005, page_token=token))
    assert (page.tasks, page.next_page_token, page.total_size) == ([], "", 5)


@pytest.mark.parametrize("token", [
    "not base64 !!",
    base64.urlsafe_b64encode(b"{}").decode(),
    base64.urlsafe_b64encode(json.dumps(["x", "t1"]).encode()).decode(),
    base64.urlsafe_b64encode(json.dumps([1, 2, 3]).encode()).decode(),
    base64.urlsafe_b64encode(b"\xff\xfe").decode(),
])
async def test_invalid_page_token(store: TaskStore, scope: Scope, token: str) -> None:
    await _fill(store, scope)
    with pytest.raises(InvalidParamsError):
        await store.list(scope, TaskQuery(page_token=token))


async def test_scope_isolation(store: TaskStore, scope: Scope) -> None:
    await _fill(store, scope)
    await store.put_push_config(scope, pb.TaskPushNotificationConfig(
        task_id="t1", id="c1", url="https://example.com/hook"))
    others = [Scope(scope.tenant, "bob"), Scope(scope.tenant + "x", scope.owner),
              # Separator lookalikes must not collide with the real scope.
              Scope(scope.tenant + "#O#" + scope.owner, ""), Scope("", scope.owner)]
    token = (await store.list(scope, TaskQuery(page_size=3))).next_page_token
    assert token
    for other in others:
        assert await store.get(other, "t1") is None
        assert await store.events_after(other, "t1", 0) == []
        page = await store.list(other, TaskQuery())
        assert (page.tasks, page.total_size) == ([], 0)
        # The caller's token, replayed by another scope, positions nothing of the caller's.
        assert (await store.list(other, TaskQuery(page_token=token))).tasks == []
        with pytest.raises(VersionConflictError):
            await store.update(other, "t1", 1, make_task("t1"), [])
        assert await store.get_push_config(other, "t1", "c1") is None
        assert await store.list_push_configs(other, "t1") == []
        await store.delete_push_config(other, "t1", "c1")
        await store.put_push_config(other, pb.TaskPushNotificationConfig(
            task_id="t1", id="c2", url="https://evil.example.com"))
    assert [c.id for c in await store.list_push_configs(scope, "t1")] == ["c1"]
    got = await store.get(scope, "t1")
    assert got is not None and got.version == 1
    # The same task id in another scope is another task.
    other = others[0]
    await store.create(other, make_task("t1", ms=5000), [])
    assert (await store.get(scope, "t1")).task == make_task(  # type: ignore[union-attr]
        "t1", pb.TASK_STATE_SUBMITTED, 1001, "odd")
    assert [t.id for t in (await store.list(other, TaskQuery())).tasks] == ["t1"]


async def test_push_config_crud(store: TaskStore, scope: Scope) -> None:
    task = make_task("t1")
    await store.create(scope, task, [task_event(task)])
    c1 = pb.TaskPushNotificationConfig(task_id="t1", id="c1", url="https://a.example.com",
                                       token="tok")
    c2 = pb.TaskPushNotificationConfig(task_id="t1", id="c#2", url="https://b.example.com")
    await store.put_push_config(scope, c1)
    await store.put_push_config(scope, c2)
    assert await store.get_push_config(scope, "t1", "c1") == c1
    assert await store.get_push_config(scope, "t1", "c#2") == c2
    assert await store.get_push_config(scope, "t1", "c3") is None
    assert sorted(c.id for c in await store.list_push_configs(scope, "t1")) == ["c#2", "c1"]
    replaced = pb.TaskPushNotificationConfig(task_id="t1", id="c1", url="https://c.example.com")
    await store.put_push_config(scope, replaced)
    assert await store.get_push_config(scope, "t1", "c1") == replaced
    await store.delete_push_config(scope, "t1", "c1")
    await store.delete_push_config(scope, "t1", "c1")  # absent: no error
    assert [c.id for c in await store.list_push_configs(scope, "t1")] == ["c#2"]
    # No task, no config.
    await store.put_push_config(scope, pb.TaskPushNotificationConfig(task_id="nope", id="c1"))
    assert await store.list_push_configs(scope, "nope") == []
    # Configs do not show up as events or change the task.
    assert [e.seq for e in await store.events_after(scope, "t1", 0)] == [1]
    got = await store.get(scope, "t1")
    assert got is not None and got.version == 1


async def test_copies_in_and_out(store: TaskStore, scope: Scope) -> None:
    task = make_task("t1")
    event = task_event(task)
    original = pb.Task()
    original.CopyFrom(task)
    stored = await store.create(scope, task, [event])
    task.history[0].parts[0].text = "changed after save"
    event.task.history[0].parts[0].text = "changed after save"
    stored.task.history[0].parts[0].text = "changed the returned one"
    got = await store.get(scope, "t1")
    assert got is not None and got.task == original
    got.task.status.state = pb.TASK_STATE_FAILED
    again = await store.get(scope, "t1")
    assert again is not None and again.task == original
    events = await store.events_after(scope, "t1", 0)
    events[0].event.task.id = "changed"
    assert (await store.events_after(scope, "t1", 0))[0].event.task == original
    config = pb.TaskPushNotificationConfig(task_id="t1", id="c1", url="https://a.example.com")
    await store.put_push_config(scope, config)
    config.url = "https://changed.example.com"
    fetched = await store.get_push_config(scope, "t1", "c1")
    assert fetched is not None and fetched.url == "https://a.example.com"
    fetched.url = "https://changed.example.com"
    assert (await store.list_push_configs(scope, "t1"))[0].url == "https://a.example.com"
