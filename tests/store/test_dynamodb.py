"""What only the DynamoDB store has: item limits, keys, TTL, errors, writers in many processes."""

from __future__ import annotations

import asyncio
import collections
import multiprocessing
import time
from collections.abc import Iterator
from typing import Any

import botocore.awsrequest
import botocore.config
import botocore.exceptions
import pytest

from a2akit.errors import InternalError, UnavailableError
from a2akit.generated import a2a_pb2 as pb
from a2akit.store import cursor, table
from a2akit.store.base import Scope, TaskQuery, VersionConflictError
from a2akit.store.dynamodb import DynamoDBStore, make_client
from a2akit.store.table import MAX_ITEM_BYTES, item_size
from scripts.dynamodb_local import set_dummy_credentials
from tests.store.conftest import TABLE, assert_expire_together, partition
from tests.store.test_contract import make_task, status_event, task_event
from tests.support.processes import free_port

# DynamoDB Local, and worker processes writing to it.
pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def _raw(client: Any, pk: str, sk: str) -> dict[str, Any] | None:
    item: dict[str, Any] | None = client.get_item(
        TableName=TABLE, Key={"pk": {"S": pk}, "sk": {"S": sk}}, ConsistentRead=True
    ).get("Item")
    return item


def _big_task(task_id: str, text_bytes: int) -> pb.Task:
    task = make_task(task_id)
    task.history.add(message_id="big", role=pb.ROLE_AGENT).parts.add(text="x" * text_bytes)
    return task


def _calls(client: Any) -> collections.Counter[str]:
    """Counts the calls `client` makes from now on (until `_stop_counting`)."""
    calls: collections.Counter[str] = collections.Counter()

    def count(model: Any, **_: Any) -> None:
        calls[model.name] += 1

    client.meta.events.register("before-call.dynamodb", count, unique_id="count-calls")
    return calls


def _stop_counting(client: Any) -> None:
    client.meta.events.unregister("before-call.dynamodb", unique_id="count-calls")


async def test_an_item_over_400_kb_is_split_and_one_that_fits_is_not(
        ddb: DynamoDBStore, ddb_client: Any, scope: Scope) -> None:
    # The size check must not undercount: DynamoDB Local takes what the store lets through,
    # a snapshot at the edge whole, one just over it in parts each at the edge.
    probe = _big_task("near", 0)
    snapshot, _ = ddb._items(scope, probe, [], version=1, first_seq=1)
    room = MAX_ITEM_BYTES - item_size(snapshot) - 16
    near = _big_task("near", room)
    assert (await ddb.create(scope, near, [])).task == near
    [item] = partition(ddb_client, table.task_pk(scope, "near"))
    assert item["sk"]["S"] == "TASK" and table.PARTS not in item
    calls = _calls(ddb_client)
    try:
        got = await ddb.get(scope, "near")
        assert got is not None and got.task == near
        assert dict(calls) == {"GetItem": 1}  # a task that fits: one round trip, as before
        calls.clear()

        over = _big_task("over", room + 1024)
        await ddb.create(scope, over, [task_event(over)])
        items = partition(ddb_client, table.task_pk(scope, "over"))
        assert sorted(item["sk"]["S"][:3] for item in items) == ["EV#", "PAR", "PAR", "TAS"]
        assert all(item_size(item) <= MAX_ITEM_BYTES for item in items)
        calls.clear()
        got = await DynamoDBStore(TABLE, ddb_client).get(scope, "over")
        assert got is not None and got.task == over
        assert dict(calls) == {"GetItem": 1, "Query": 1}  # and its parts in one call
        calls.clear()
        # The store that wrote it knows the bytes of its parts (never overwritten): a
        # runner's own reads of its task (its cancel watch, its renewals) read no parts.
        got = await ddb.get(scope, "over")
        assert got is not None and got.task == over
        assert dict(calls) == {"GetItem": 1}
        assert [e.event for e in await ddb.events_after(scope, "over", 0)] == [task_event(over)]
    finally:
        _stop_counting(ddb_client)


async def test_a_reader_of_a_large_snapshot_replaced_meanwhile_reads_it_again(
        ddb_client: Any, ddb_endpoint: str, scope: Scope) -> None:
    writer = DynamoDBStore(TABLE, ddb_client)
    first = _big_task("t1", 600_000)
    await writer.create(scope, first, [])
    second = _big_task("t1", 700_000)
    second.history[-1].parts[0].text = "z" * 700_000
    reader_client = make_client(ddb_endpoint, "us-east-1")
    replaced: list[bool] = []

    def replace_after_the_read(model: Any, **_: Any) -> None:
        # The snapshot is replaced (and its parts deleted) right after the reader got it.
        if model.name == "GetItem" and not replaced:
            replaced.append(True)
            asyncio.run(writer.update(scope, "t1", 1, second, []))

    reader_client.meta.events.register("after-call.dynamodb.GetItem", replace_after_the_read)
    try:
        got = await DynamoDBStore(TABLE, reader_client).get(scope, "t1")
    finally:
        reader_client.close()
    assert replaced
    assert got is not None and (got.version, got.task) == (2, second)
    parts = [item for item in partition(ddb_client, table.task_pk(scope, "t1"))
             if item["sk"]["S"].startswith(table.PART_PREFIX)]
    assert len(parts) == 1  # the first snapshot's part is gone, the second's is there


async def test_keys_encode_tenant_and_owner(ddb: DynamoDBStore, ddb_client: Any) -> None:
    tricky = Scope(tenant="a#O#b", owner="c%23")
    await ddb.create(tricky, make_task("t#1"), [], message_id="m#1")
    pk = "T#a%23O%23b#O#c%2523#TASK#t%231"
    item = _raw(ddb_client, pk, "TASK")
    assert item is not None
    assert item["lpk"]["S"] == f"T#a%23O%23b#O#c%2523#L#{table.list_shard('t#1')}"
    assert item["cpk"]["S"] == "T#a%23O%23b#O#c%2523#C#ctx"
    status_ms, stamp, task_id = item["lsk"]["S"].split("#")
    assert (status_ms, len(stamp), task_id) == ("000000000001000", 20, "t%231")
    assert abs(int(stamp) - time.time_ns()) < 60 * 10**9  # the write clock
    assert _raw(ddb_client, "T#a%23O%23b#O#c%2523#MSG#m%231", "MSG") is not None
    assert await ddb.get(Scope("a", "b#O#c%23"), "t#1") is None


async def test_forged_token_stays_in_scope(ddb: DynamoDBStore, scope: Scope) -> None:
    bob = Scope(scope.tenant, "bob")
    await ddb.create(bob, make_task("secret", ms=5000), [])
    await ddb.create(scope, make_task("mine", ms=4000), [])
    stamp = time.time_ns()
    for position in (cursor.Position(6000, stamp, "secret"), cursor.Position(5000, stamp, "secret"),
                     cursor.Position(999_999_999_999, 0, "zzz")):
        token = cursor.encode(position)
        page = await ddb.list(scope, TaskQuery(page_token=token))
        assert [t.id for t in page.tasks] == ["mine"]


async def test_terminal_tasks_expire(ddb: DynamoDBStore, ddb_client: Any, scope: Scope) -> None:
    task = make_task("t1")
    await ddb.create(scope, task, [task_event(task)], message_id="m1")
    await ddb.update(scope, "t1", 1, task, [status_event("t1", pb.TASK_STATE_WORKING)])
    await ddb.put_push_config(scope, pb.TaskPushNotificationConfig(
        task_id="t1", id="c1", url="https://a.example.com"))
    pk = "T#" + scope.tenant.replace("#", "%23") + "#O#alice#TASK#t1"
    assert all(table.TTL_ATTRIBUTE not in item for item in partition(ddb_client, pk))

    done = make_task("t1", pb.TASK_STATE_COMPLETED, ms=3000)
    await ddb.update(scope, "t1", 2, done, [status_event("t1", pb.TASK_STATE_COMPLETED)])
    items = partition(ddb_client, pk)
    assert_expire_together(items, [
        "EV#00000000000000000001", "EV#00000000000000000002", "EV#00000000000000000003",
        "PUSH#c1", "TASK"])
    claim = _raw(ddb_client, pk.replace("#TASK#t1", "#MSG#m1"), "MSG")
    assert claim is not None and table.TTL_ATTRIBUTE in claim
    # The store still reads the task and its events until DynamoDB deletes them.
    got = await ddb.get(scope, "t1")
    assert got is not None and got.task == done and got.last_seq == 3
    # The sweep of older items runs once, on the transition into a terminal state.
    calls: list[str] = []

    def count(model: Any, **_: Any) -> None:
        calls.append(model.name)

    ddb_client.meta.events.register("before-call.dynamodb", count)
    try:
        await ddb.update(scope, "t1", got.version, done, [])
        await ddb.create(scope, make_task("t3", pb.TASK_STATE_FAILED), [])
    finally:
        ddb_client.meta.events.unregister("before-call.dynamodb", count)
    assert calls == ["TransactWriteItems", "TransactWriteItems"]
    short = DynamoDBStore(TABLE, ddb_client, retention_days=1)
    await short.create(scope, make_task("t2", pb.TASK_STATE_REJECTED), [])
    item = _raw(ddb_client, pk.replace("t1", "t2"), "TASK")
    assert item is not None
    assert abs(int(item[table.TTL_ATTRIBUTE]["N"]) - (time.time() + 86400)) < 60


async def test_stale_version_cache_is_corrected(ddb_client: Any, scope: Scope) -> None:
    # Two stores (two processes): each one's cached last_seq for a version may be stale.
    one, two = DynamoDBStore(TABLE, ddb_client), DynamoDBStore(TABLE, ddb_client)
    task = make_task("t1")
    await one.create(scope, task, [task_event(task)])
    assert (await two.get(scope, "t1")) is not None
    await one.update(scope, "t1", 1, task, [status_event("t1", pb.TASK_STATE_WORKING)])
    with pytest.raises(VersionConflictError):
        await two.update(scope, "t1", 1, task, [status_event("t1", pb.TASK_STATE_WORKING)])
    stored = await two.update(scope, "t1", 2, task, [status_event("t1", pb.TASK_STATE_WORKING)])
    assert (stored.version, stored.last_seq) == (3, 3)
    assert [e.seq for e in await one.events_after(scope, "t1", 0)] == [1, 2, 3]


def _client(endpoint: str, attempts: int) -> Any:
    import boto3

    return boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1",
                        config=botocore.config.Config(
                            retries={"mode": "standard", "total_max_attempts": attempts},
                            connect_timeout=0.5, read_timeout=1))


@pytest.fixture
def closing() -> Iterator[list[Any]]:
    clients: list[Any] = []
    yield clients
    for client in clients:
        client.close()


async def test_unreachable_is_unavailable(closing: list[Any], scope: Scope) -> None:
    set_dummy_credentials()
    closing.append(_client(f"http://127.0.0.1:{free_port()}", 1))
    with pytest.raises(UnavailableError) as caught:
        await DynamoDBStore(TABLE, closing[0]).get(scope, "t1")
    assert isinstance(caught.value.__cause__, botocore.exceptions.EndpointConnectionError)


async def test_no_credentials_is_unavailable(closing: list[Any], scope: Scope,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Credentials gone (none found, or expired and not renewed): the store is down for
    now, UNAVAILABLE (retryable), not an internal error (issue 33, item 14)."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                 "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    import boto3  # a session of its own: the default one keeps the credentials it found

    closing.append(boto3.session.Session().client(
        "dynamodb", endpoint_url=f"http://127.0.0.1:{free_port()}", region_name="us-east-1"))
    with pytest.raises(UnavailableError) as caught:
        await DynamoDBStore(TABLE, closing[0]).get(scope, "t1")
    assert isinstance(caught.value.__cause__, botocore.exceptions.NoCredentialsError)


async def test_throttling_after_retries_is_unavailable(ddb_endpoint: str, closing: list[Any],
                                                       scope: Scope) -> None:
    client = _client(ddb_endpoint, 2)
    closing.append(client)
    calls = []

    class Raw:
        def stream(self, **_: Any) -> Iterator[bytes]:
            yield b'{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException"}'

    def throttle(request: Any, **_: Any) -> botocore.awsrequest.AWSResponse:
        calls.append(request.url)
        return botocore.awsrequest.AWSResponse(
            request.url, 400, {"Content-Type": "application/x-amz-json-1.0"}, Raw())

    client.meta.events.register("before-send.dynamodb.GetItem", throttle)
    with pytest.raises(UnavailableError) as caught:
        await DynamoDBStore(TABLE, client).get(scope, "t1")
    assert isinstance(caught.value.__cause__, botocore.exceptions.ClientError)
    assert len(calls) == 2  # the retry mode retried once, then gave up


async def test_other_client_errors_are_internal(ddb_client: Any, scope: Scope) -> None:
    with pytest.raises(InternalError) as caught:
        await DynamoDBStore("no-such-table", ddb_client).get(scope, "t1")
    assert isinstance(caught.value.__cause__, botocore.exceptions.ClientError)


async def test_create_table_if_missing(ddb_client: Any) -> None:
    store = DynamoDBStore("a2akit-created", ddb_client)
    await store.create_table_if_missing()
    await store.create_table_if_missing()  # exists: nothing to do
    scope = Scope("t", "o")
    await store.create(scope, make_task("t1"), [])
    assert (await store.list(scope, TaskQuery())).total_size == 1
    ddb_client.delete_table(TableName="a2akit-created")


async def test_after_restore_drops_connections_and_keeps_working(ddb_client: Any,
                                                                 scope: Scope) -> None:
    store = DynamoDBStore(TABLE, ddb_client)
    await store.create(scope, make_task("t1"), [])
    pools = ddb_client._endpoint.http_session._manager.pools
    assert len(pools) == 1
    store.after_restore()  # what the Lambda handler runs in a SnapStart-restored copy
    assert len(ddb_client._endpoint.http_session._manager.pools) == 0
    got = await store.get(scope, "t1")
    assert got is not None and got.task.id == "t1"


# --- several processes writing one task ----------------------------------------------------

WORKERS = 4
INCREMENTS = 8


def increment_worker(args: tuple[str, str, int]) -> tuple[list[int], int]:
    """Add INCREMENTS messages to the task, each by get, fold, conditional update, retry."""
    endpoint, tenant, worker = args
    set_dummy_credentials()
    client = make_client(endpoint, "us-east-1")
    try:
        return asyncio.run(_increments(DynamoDBStore(TABLE, client), Scope(tenant, "alice"),
                                       worker))
    finally:
        client.close()


async def _increments(store: DynamoDBStore, scope: Scope, worker: int) -> tuple[list[int], int]:
    versions = []
    conflicts = 0
    for i in range(INCREMENTS):
        while True:
            current = await store.get(scope, "shared")
            assert current is not None
            task = current.task
            message = task.history.add(message_id=f"w{worker}-{i}", role=pb.ROLE_AGENT)
            message.parts.add(text=f"{worker}:{i}")
            task.metadata["count"] = task.metadata["count"] + 1 if "count" in task.metadata \
                else 1
            event = pb.StreamResponse()
            event.message.CopyFrom(message)
            try:
                stored = await store.update(scope, "shared", current.version, task, [event],
                                            message_id=f"w{worker}-{i}")
            except VersionConflictError:
                conflicts += 1
                continue
            versions.append(stored.version)
            break
    return versions, conflicts


@pytest.mark.slow
async def test_concurrent_writers_lose_nothing(ddb: DynamoDBStore, ddb_endpoint: str,
                                               scope: Scope) -> None:
    task = make_task("shared")
    await ddb.create(scope, task, [task_event(task)])
    context = multiprocessing.get_context("spawn")
    with context.Pool(WORKERS) as pool:
        outcomes = await asyncio.to_thread(
            pool.map, increment_worker, [(ddb_endpoint, scope.tenant, w) for w in range(WORKERS)])
    results = [versions for versions, _ in outcomes]
    print("version conflicts retried:", sum(conflicts for _, conflicts in outcomes))
    total = WORKERS * INCREMENTS
    for versions in results:
        assert versions == sorted(versions) and len(set(versions)) == INCREMENTS
    assert sorted(v for versions in results for v in versions) == list(range(2, total + 2))

    final = await ddb.get(scope, "shared")
    assert final is not None
    assert (final.version, final.last_seq) == (total + 1, total + 1)
    assert final.task.metadata["count"] == total
    ids = [m.message_id for m in final.task.history[1:]]
    assert sorted(ids) == sorted(f"w{w}-{i}" for w in range(WORKERS) for i in range(INCREMENTS))
    for w in range(WORKERS):  # each writer's messages in its own order
        mine = [i for i in ids if i.startswith(f"w{w}-")]
        assert mine == [f"w{w}-{i}" for i in range(INCREMENTS)]
    events = await ddb.events_after(scope, "shared", 0)
    assert [e.seq for e in events] == list(range(1, total + 2))
    assert [e.event.message.message_id for e in events[1:]] == ids  # events match the folds
    for w in range(WORKERS):
        assert await ddb.find_message(scope, f"w{w}-0") == "shared"
