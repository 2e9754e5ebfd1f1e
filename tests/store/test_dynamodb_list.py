"""What a ListTasks reads on DynamoDB: every shard of the scope, only the context's items when a
context is asked for, tasks gone meanwhile left out, unprocessed keys read again."""

from __future__ import annotations

from typing import Any

import pytest

from a2akit.store import table
from a2akit.store.base import Scope, TaskQuery
from a2akit.store.dynamodb import DynamoDBStore
from tests.store.conftest import TABLE
from tests.store.test_contract import make_task

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


class _Reads:
    """The calls a store makes, and how many index items its queries read (ScannedCount)."""

    def __init__(self, client: Any) -> None:
        self.calls: list[str] = []
        self.scanned = 0
        self._client = client

    def __enter__(self) -> _Reads:
        events = self._client.meta.events
        events.register("before-call.dynamodb", self._call)
        events.register("after-call.dynamodb.Query", self._query)
        return self

    def __exit__(self, *_: object) -> None:
        events = self._client.meta.events
        events.unregister("before-call.dynamodb", self._call)
        events.unregister("after-call.dynamodb.Query", self._query)

    def _call(self, model: Any, **_: Any) -> None:
        self.calls.append(model.name)

    def _query(self, parsed: dict[str, Any], **_: Any) -> None:
        self.scanned += int(parsed.get("ScannedCount", 0))


async def test_the_scope_is_spread_over_every_shard(ddb: DynamoDBStore, ddb_client: Any,
                                                    scope: Scope) -> None:
    ids = [f"task-{i:02d}" for i in range(40)]
    assert {table.list_shard(task_id) for task_id in ids} == set(range(table.LIST_SHARDS))
    for i, task_id in enumerate(ids):
        await ddb.create(scope, make_task(task_id, ms=1000 + i, context="c"), [])
    with _Reads(ddb_client) as reads:
        page = await ddb.list(scope, TaskQuery(page_size=4))
    assert [t.id for t in page.tasks] == ids[::-1][:4] and page.total_size == 40
    # Every shard was read for the page; totalSize comes from the scope's counts, not the
    # index: one BatchGetItem of the page's tasks, one of the 8 count items.
    assert reads.calls.count("Query") >= table.LIST_SHARDS
    assert reads.scanned < 40
    assert reads.calls.count("BatchGetItem") == 2
    with _Reads(ddb_client) as reads:
        page = await ddb.list(scope, TaskQuery(page_size=4, page_token=page.next_page_token))
    assert [t.id for t in page.tasks] == ids[::-1][4:8] and page.total_size == 40
    assert reads.scanned < 40
    # A status-time bound is counted on the index, every index item read once (above the
    # token, the page, and below it), the token's own row twice (BETWEEN is inclusive).
    bounded = TaskQuery(page_size=4, status_after_ms=1000, page_token=page.next_page_token)
    with _Reads(ddb_client) as reads:
        page = await ddb.list(scope, bounded)
    assert [t.id for t in page.tasks] == ids[::-1][8:12] and page.total_size == 40
    assert reads.scanned == 41 and reads.calls.count("BatchGetItem") == 1


async def test_a_context_page_reads_only_that_context(ddb: DynamoDBStore, ddb_client: Any,
                                                      scope: Scope) -> None:
    for i in range(30):
        await ddb.create(scope, make_task(f"other-{i}", ms=1000 + i, context="busy"), [])
    for i in range(3):
        await ddb.create(scope, make_task(f"mine-{i}", ms=2000 + i, context="quiet"), [])
    with _Reads(ddb_client) as reads:
        page = await ddb.list(scope, TaskQuery(context_id="quiet"))
    assert [t.id for t in page.tasks] == ["mine-2", "mine-1", "mine-0"]
    assert page.total_size == 3
    # One query read the whole context, so it also gave the count; one read of the tasks.
    assert reads.calls == ["Query", "BatchGetItem"] and reads.scanned == 3


async def test_a_task_gone_from_the_table_is_left_out(ddb: DynamoDBStore, ddb_client: Any,
                                                      scope: Scope) -> None:
    # The index is updated after the table: a task deleted (TTL) may still be listed for a
    # moment. Simulated by an index entry whose table item is gone.
    await ddb.create(scope, make_task("kept", ms=1000), [])
    await ddb.create(scope, make_task("gone", ms=2000), [])
    ddb_client.meta.events.register("after-call.dynamodb.BatchGetItem", _drop_gone)
    try:
        page = await ddb.list(scope, TaskQuery())
    finally:
        ddb_client.meta.events.unregister("after-call.dynamodb.BatchGetItem", _drop_gone)
    assert [t.id for t in page.tasks] == ["kept"] and page.total_size == 2


def _drop_gone(parsed: dict[str, Any], **_: Any) -> None:
    for items in parsed.get("Responses", {}).values():
        items[:] = [item for item in items  # (count items carry no pk)
                    if not item.get("pk", {}).get("S", "").endswith("#TASK#gone")]


async def test_unprocessed_keys_of_a_page_are_read_again(ddb: DynamoDBStore, ddb_client: Any,
                                                         scope: Scope) -> None:
    for i in range(3):
        await ddb.create(scope, make_task(f"t{i}", ms=1000 + i), [])
    held_back: list[Any] = []

    def hold_back_one(parsed: dict[str, Any], **_: Any) -> None:
        # DynamoDB may return part of a batch and the rest as UnprocessedKeys.
        items = parsed["Responses"][TABLE]
        if held_back or not items or "task" not in items[-1]:
            return  # (the other batch of a page reads the scope's count items)
        held_back.append(items.pop())
        parsed["UnprocessedKeys"] = {TABLE: {
            "Keys": [{"pk": held_back[0]["pk"], "sk": {"S": "TASK"}}],
            "ProjectionExpression": "pk, #t", "ExpressionAttributeNames": {"#t": "task"}}}

    ddb_client.meta.events.register("after-call.dynamodb.BatchGetItem", hold_back_one)
    try:
        page = await ddb.list(scope, TaskQuery())
    finally:
        ddb_client.meta.events.unregister("after-call.dynamodb.BatchGetItem", hold_back_one)
    assert held_back and [t.id for t in page.tasks] == ["t2", "t1", "t0"]
