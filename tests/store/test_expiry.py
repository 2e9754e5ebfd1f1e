"""Retention on DynamoDB: a finished task's items get their expiry without re-creating what
was deleted meanwhile, and an expiry that failed is redone by the sweeper until it holds."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from typing import Any

import botocore.awsrequest
import botocore.config
import pytest

from a2akit.execution import leases
from a2akit.generated import a2a_pb2 as pb
from a2akit.store import table
from a2akit.store.base import Scope, TaskStore
from a2akit.store.dynamodb import DynamoDBStore
from tests.store.conftest import assert_expire_together, partition
from tests.store.test_contract import make_task, status_event, task_event

pytestmark = [pytest.mark.anyio]
TABLE = "a2akit-test"
CONFIG = pb.TaskPushNotificationConfig(task_id="t1", id="c1", url="https://a.example.com",
                                       token="secret")


async def _working_with_config(store: TaskStore, scope: Scope) -> None:
    """A task with a push config and events written before it finishes."""
    task = make_task("t1")
    await store.create(scope, task, [task_event(task)], message_id="m1")
    await store.update(scope, "t1", 1, task, [status_event("t1", pb.TASK_STATE_WORKING)])
    await store.put_push_config(scope, CONFIG)


async def _finish(store: TaskStore, scope: Scope) -> None:
    done = make_task("t1", pb.TASK_STATE_COMPLETED, ms=3_000)
    await store.update(scope, "t1", 2, done, [status_event("t1", pb.TASK_STATE_COMPLETED)])


async def test_a_config_deleted_after_the_task_finished_stays_deleted(store: TaskStore,
                                                                     scope: Scope) -> None:
    # The contract, on both stores; the race with the expiry step is below (DynamoDB).
    await _working_with_config(store, scope)
    await _finish(store, scope)
    await store.delete_push_config(scope, "t1", "c1")
    await store.expire_finished(100)
    assert await store.get_push_config(scope, "t1", "c1") is None
    assert await store.list_push_configs(scope, "t1") == []


@pytest.mark.slow
async def test_the_expiry_never_recreates_a_config_deleted_meanwhile(
        own_client: Any, ddb_client: Any, scope: Scope) -> None:
    store = DynamoDBStore(TABLE, own_client)
    await _working_with_config(store, scope)
    pk = table.task_pk(scope, "t1")
    deleted: list[bool] = []

    def delete_after_the_read(model: Any, **_: Any) -> None:
        # The config is deleted right after the expiry step read the task's items.
        if model.name == "Query" and not deleted:
            ddb_client.delete_item(TableName=TABLE, Key=table.key(pk, table.push_sk("c1")))
            deleted.append(True)

    own_client.meta.events.register("after-call.dynamodb.Query", delete_after_the_read)
    await _finish(store, scope)
    assert deleted
    assert await store.get_push_config(scope, "t1", "c1") is None
    assert all(item["sk"]["S"] != "PUSH#c1" for item in partition(ddb_client, pk))


class _Throttled:
    def stream(self, **_: Any) -> Iterator[bytes]:
        yield b'{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException"}'


def _outage_after_the_next_write(client: Any) -> Callable[[], None]:
    """DynamoDB goes away for `client` right after its next transaction (the terminal
    write): every later call fails, throttled. Returns what ends the outage."""
    down: list[bool] = []

    def outage(request: Any, event_name: str, **_: Any
               ) -> botocore.awsrequest.AWSResponse | None:
        if not down or event_name.endswith(".TransactWriteItems"):
            return None
        return botocore.awsrequest.AWSResponse(
            request.url, 400, {"Content-Type": "application/x-amz-json-1.0"}, _Throttled())

    def began(**_: Any) -> None:
        down.append(True)

    def end() -> None:
        client.meta.events.unregister("before-send.dynamodb", outage)
        client.meta.events.unregister("before-call.dynamodb.TransactWriteItems", began)

    client.meta.events.register("before-send.dynamodb", outage)
    client.meta.events.register("before-call.dynamodb.TransactWriteItems", began)
    return end


@pytest.mark.slow
async def test_an_expiry_that_failed_is_redone_by_the_sweeper(
        own_client: Any, ddb_client: Any, scope: Scope) -> None:
    store = DynamoDBStore(TABLE, own_client)
    await _working_with_config(store, scope)
    end_outage = _outage_after_the_next_write(own_client)
    await _finish(store, scope)
    pk = table.task_pk(scope, "t1")
    assert any(table.TTL_ATTRIBUTE not in item for item in partition(ddb_client, pk))
    assert _marker(ddb_client, pk) is not None  # what the sweeper finds

    end_outage()
    await leases.sweep(store)  # what handlers/sweeper.py and the container run
    items = partition(ddb_client, pk)
    assert_expire_together(items, [
        "EV#00000000000000000001", "EV#00000000000000000002", "EV#00000000000000000003",
        "PUSH#c1", "TASK"])
    assert _marker(ddb_client, pk) is None


def _marker(client: Any, pk: str) -> dict[str, Any] | None:
    item: dict[str, Any] | None = client.get_item(
        TableName=TABLE, Key=table.key(table.expiry_pk(pk), pk), ConsistentRead=True
    ).get("Item")
    return item


@pytest.mark.slow
async def test_a_config_put_while_the_task_finishes_expires_with_it(
        own_client: Any, ddb_client: Any, scope: Scope) -> None:
    await _working_with_config(DynamoDBStore(TABLE, ddb_client), scope)
    finished: list[bool] = []

    def finish_after_the_read(model: Any, **_: Any) -> None:
        # The task finishes between the config's read of the snapshot and its write.
        if model.name == "GetItem" and not finished:
            finished.append(True)
            asyncio.run(_finish(DynamoDBStore(TABLE, ddb_client), scope))

    own_client.meta.events.register("after-call.dynamodb.GetItem", finish_after_the_read)
    late = pb.TaskPushNotificationConfig(task_id="t1", id="late", url="https://b.example.com")
    await DynamoDBStore(TABLE, own_client).put_push_config(scope, late)
    assert finished
    pk = table.task_pk(scope, "t1")
    items = {item["sk"]["S"]: item for item in partition(ddb_client, pk)}
    assert table.TTL_ATTRIBUTE in items["PUSH#late"]
    assert items["PUSH#late"][table.TTL_ATTRIBUTE] == items["TASK"][table.TTL_ATTRIBUTE]


@pytest.mark.slow
async def test_the_parts_of_a_large_task_expire_with_it_after_an_outage(
        own_client: Any, ddb_client: Any, scope: Scope) -> None:
    """A large running task finishes and DynamoDB goes away right after the terminal write:
    neither the replaced snapshot's parts are deleted nor the older items expired. The
    sweeper's expiry step gives every item of the task, parts included, the expiry."""
    store = DynamoDBStore(TABLE, own_client)
    task = make_task("t1", pb.TASK_STATE_WORKING)
    task.history.add(message_id="long", role=pb.ROLE_AGENT).parts.add(text="x" * 900_000)
    await store.create(scope, task, [task_event(task)])
    end_outage = _outage_after_the_next_write(own_client)
    done = pb.Task.FromString(task.SerializeToString())
    done.status.state = pb.TASK_STATE_COMPLETED  # type: ignore[assignment]
    await store.update(scope, "t1", 1, done, [status_event("t1", pb.TASK_STATE_COMPLETED)])
    pk = table.task_pk(scope, "t1")
    parts = [item for item in partition(ddb_client, pk)
             if item["sk"]["S"].startswith(table.PART_PREFIX)]
    assert len(parts) == 6  # 2 of each snapshot (the replaced ones not deleted), 2 of the event
    assert any(table.TTL_ATTRIBUTE not in item for item in parts)

    end_outage()
    await leases.sweep(store)
    expected = time.time() + 30 * 86400
    for item in partition(ddb_client, pk):
        assert abs(int(item[table.TTL_ATTRIBUTE]["N"]) - expected) < 60, item["sk"]
    assert _marker(ddb_client, pk) is None
    got = await store.get(scope, "t1")
    assert got is not None and got.task == done
