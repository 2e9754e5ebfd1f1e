"""The store contract, ListTasks against a model: every filter, across shards and pages, and the
totals and counts following each state change (both stores)."""

from __future__ import annotations

import dataclasses
import random

import pytest

from a2akit.generated import a2a_pb2 as pb
from a2akit.store.base import Scope, TaskQuery, TaskStore
from tests.store.test_contract import make_task, status_event, task_event

pytestmark = pytest.mark.anyio


_CONTEXTS = ("red", "green", "blue")
_STATES = (pb.TASK_STATE_SUBMITTED, pb.TASK_STATE_WORKING, pb.TASK_STATE_INPUT_REQUIRED)
_QUERIES = [
    TaskQuery(),
    TaskQuery(context_id="red"),
    TaskQuery(context_id="blue"),
    TaskQuery(state=pb.TASK_STATE_WORKING),
    TaskQuery(state=pb.TASK_STATE_COMPLETED),
    TaskQuery(status_after_ms=1_020),
    TaskQuery(context_id="green", state=pb.TASK_STATE_SUBMITTED),
    TaskQuery(context_id="red", status_after_ms=1_010),
    TaskQuery(state=pb.TASK_STATE_WORKING, status_after_ms=1_015),
    TaskQuery(context_id="blue", state=pb.TASK_STATE_WORKING, status_after_ms=1_005),
    TaskQuery(context_id="none"),
]


class _Model:
    """What ListTasks must answer: the tasks as last written, newest status first, ties in
    reverse write order (positions in one process follow the write order)."""

    def __init__(self) -> None:
        self.tasks: dict[str, tuple[int, int, str, int]] = {}  # id -> ms, write, context, state
        self.writes = 0

    def wrote(self, task: pb.Task) -> None:
        self.writes += 1
        ms = task.status.timestamp.seconds * 1000 + task.status.timestamp.nanos // 1_000_000
        self.tasks[task.id] = (ms, self.writes, task.context_id, task.status.state)

    def answer(self, query: TaskQuery) -> list[str]:
        rows = [(ms, write, task_id) for task_id, (ms, write, context, state)
                in self.tasks.items()
                if (not query.context_id or context == query.context_id)
                and (not query.state or state == query.state)
                and (query.status_after_ms is None or ms >= query.status_after_ms)]
        return [task_id for _, _, task_id in sorted(rows, reverse=True)]


async def _pages_with_totals(store: TaskStore, scope: Scope, query: TaskQuery,
                             page_size: int) -> tuple[list[str], set[int], int]:
    """All ids over all pages, the totalSize each page gave, and the number of pages."""
    ids: list[str] = []
    totals: set[int] = set()
    token, pages = "", 0
    while True:
        page = await store.list(scope, dataclasses.replace(query, page_size=page_size,
                                                           page_token=token))
        pages += 1
        assert len(page.tasks) <= page_size
        assert page.tasks or not page.next_page_token
        ids += [t.id for t in page.tasks]
        totals.add(page.total_size)
        token = page.next_page_token
        if not token:
            return ids, totals, pages


async def _check_model(store: TaskStore, scope: Scope, model: _Model) -> None:
    for query in _QUERIES:
        expected = model.answer(query)
        for page_size in (4, 50):
            ids, totals, pages = await _pages_with_totals(store, scope, query, page_size)
            assert ids == expected, (query, page_size)
            assert totals == {len(expected)}, (query, page_size)
            assert pages == max(1, -(-len(expected) // page_size))


async def test_list_matches_the_model_across_pages_and_state_changes(
        store: TaskStore, scope: Scope) -> None:
    rng = random.Random(7)
    model = _Model()
    versions: dict[str, int] = {}
    for i in range(40):
        # Status times in a narrow band: many share a millisecond, so write order matters.
        task = make_task(f"task-{i:02d}", rng.choice(_STATES), ms=1_000 + rng.randrange(30),
                         context=rng.choice(_CONTEXTS))
        versions[task.id] = (await store.create(scope, task, [task_event(task)])).version
        model.wrote(task)
    await _check_model(store, scope, model)

    # State changes, some to a terminal state, some without a new status time: totals and
    # order follow at once.
    for task_id in rng.sample(sorted(versions), 15):
        ms, _, context, _ = model.tasks[task_id]
        state = rng.choice([*_STATES, pb.TASK_STATE_COMPLETED])
        task = make_task(task_id, state, ms=rng.choice([ms, 1_000 + rng.randrange(40)]),
                         context=context)
        stored = await store.update(scope, task_id, versions[task_id], task,
                                    [status_event(task_id, state, context)])
        versions[task_id] = stored.version
        model.wrote(task)
    await _check_model(store, scope, model)


async def test_list_total_follows_each_state_change(store: TaskStore, scope: Scope) -> None:
    task = make_task("t1", context="c")
    await store.create(scope, task, [task_event(task)])
    await store.create(scope, make_task("t2", context="c"), [])
    version = 1
    for state in (pb.TASK_STATE_WORKING, pb.TASK_STATE_INPUT_REQUIRED, pb.TASK_STATE_CANCELED):
        version = (await store.update(scope, "t1", version, make_task("t1", state, 2_000, "c"),
                                      [status_event("t1", state, "c")])).version
        for context in ("", "c"):
            now_in = await store.list(scope, TaskQuery(context_id=context, state=state))
            assert ([t.id for t in now_in.tasks], now_in.total_size) == (["t1"], 1)
            left = await store.list(scope, TaskQuery(context_id=context,
                                                     state=pb.TASK_STATE_SUBMITTED))
            assert ([t.id for t in left.tasks], left.total_size) == (["t2"], 1)
            everything = await store.list(scope, TaskQuery(context_id=context, page_size=1))
            assert ([t.id for t in everything.tasks], everything.total_size) == (["t1"], 2)


async def test_count_follows_each_state_change(store: TaskStore, scope: Scope) -> None:
    active = (pb.TASK_STATE_SUBMITTED, pb.TASK_STATE_WORKING, pb.TASK_STATE_INPUT_REQUIRED,
              pb.TASK_STATE_AUTH_REQUIRED)
    assert await store.count(scope, active) == 0
    for task_id in ("t1", "t2", "t3"):
        await store.create(scope, make_task(task_id), [])
    assert await store.count(scope, active) == 3
    version = 1
    for state, expected in ((pb.TASK_STATE_WORKING, 3), (pb.TASK_STATE_INPUT_REQUIRED, 3),
                            (pb.TASK_STATE_COMPLETED, 2)):
        version = (await store.update(scope, "t1", version, make_task("t1", state, 2_000),
                                      [status_event("t1", state)])).version
        assert await store.count(scope, active) == expected
        assert await store.count(scope, [state]) == 1
    assert await store.count(scope, [pb.TASK_STATE_SUBMITTED]) == 2
    assert await store.count(scope, []) == 0
    assert await store.count(Scope(scope.tenant, "someone-else"), active) == 0
