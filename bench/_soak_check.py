"""The soak's consistency check (bench/soak.py), straight from the table, of every task in it:
it is terminal, in the state the client that created it saw last; every one of its items has
its expiry (retention); its snapshot equals the fold of its stored events
(`a2akit.states.apply_event`) and their sequence numbers are 1..n; and the table's stream
shows its versions going 1, 2, ... with every write moving from version v to v + 1 (nothing
lost, nothing written twice)."""

from __future__ import annotations

import asyncio
import collections
from typing import Any

from a2akit.auth import ANONYMOUS
from a2akit.generated import a2a_pb2 as pb
from a2akit.states import apply_event, is_terminal
from a2akit.store import table
from a2akit.store.base import Scope, TaskQuery

__all__ = ["check"]

REGION = "us-east-1"


def _stream_versions(client: Any, endpoint: str,
                     table_name: str) -> dict[str, list[tuple[int, int]]]:
    """task id -> (old version, new version) of every snapshot write, from the table's stream
    (0 as the old version of the first write)."""
    import boto3

    streams = boto3.client("dynamodbstreams", endpoint_url=endpoint, region_name=REGION)
    arn = client.describe_table(TableName=table_name)["Table"]["LatestStreamArn"]
    shards: list[dict[str, Any]] = []
    start: dict[str, Any] = {}
    while True:
        description = streams.describe_stream(StreamArn=arn, **start)["StreamDescription"]
        shards += description["Shards"]
        if "LastEvaluatedShardId" not in description:
            break
        start = {"ExclusiveStartShardId": description["LastEvaluatedShardId"]}
    writes: dict[str, list[tuple[int, int]]] = collections.defaultdict(list)
    for shard in shards:
        iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"],
                                              ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        while iterator:
            page = streams.get_records(ShardIterator=iterator, Limit=1000)
            for record in page["Records"]:
                change = record["dynamodb"]
                if change["Keys"][table.SK]["S"] != "TASK" or "NewImage" not in change:
                    continue
                task_id = change["Keys"][table.PK]["S"].rsplit("#TASK#", 1)[1]
                old = int(change.get("OldImage", {}).get("version", {}).get("N", "0"))
                new = int(change["NewImage"]["version"]["N"])
                if new == old:
                    continue  # outside the versioned writes: a lease renewal, a cancel request
                writes[task_id].append((old, new))
            if not page["Records"]:
                break  # caught up: nothing writes any more
            iterator = page.get("NextShardIterator")
    streams.close()
    return writes


async def _partition(client: Any, table_name: str, scope: Scope,
                     task_id: str) -> list[dict[str, Any]]:
    """Every item under the task's partition key, read in a worker thread."""
    from a2akit.store import table

    kwargs: dict[str, Any] = {
        "TableName": table_name, "KeyConditionExpression": "pk = :pk",
        "ExpressionAttributeValues": {":pk": {"S": table.task_pk(scope, task_id)}}}
    items: list[dict[str, Any]] = []
    while True:
        page = await asyncio.to_thread(client.query, **kwargs)
        items += page.get("Items", [])
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


async def check(endpoint: str, table_name: str, final: dict[str, int]) -> tuple[int, list[str]]:
    """(tasks checked, problems) over every task of the clients' scope in the table; `final`
    is each task's last state as its client saw it."""
    from a2akit.store.dynamodb import DynamoDBStore, make_client

    client = make_client(endpoint, REGION)
    store = DynamoDBStore(table_name, client)
    scope = Scope(tenant="", owner=ANONYMOUS)
    problems: list[str] = []
    task_ids: list[str] = []
    token = ""
    while True:
        page = await store.list(scope, TaskQuery(page_size=100, page_token=token))
        task_ids += [task.id for task in page.tasks]
        token = page.next_page_token
        if not token:
            break
    missing = set(final) - set(task_ids)
    if missing:
        problems.append(f"{len(missing)} tasks a client saw are not listed, e.g. {min(missing)}")
    versions = _stream_versions(client, endpoint, table_name)
    limit = asyncio.Semaphore(8)

    async def check_one(task_id: str) -> None:
        async with limit:
            stored = await store.get(scope, task_id)
            events = await store.events_after(scope, task_id, 0)
        if stored is None:
            problems.append(f"{task_id}: listed but not found")
            return
        state = stored.task.status.state
        if not is_terminal(state):
            problems.append(f"{task_id}: not finished ({pb.TaskState.Name(state)})")
        if task_id in final and state != final[task_id]:
            problems.append(f"{task_id}: {pb.TaskState.Name(state)} stored, the client saw "
                            f"{pb.TaskState.Name(final[task_id])}")
        seqs = [event.seq for event in events]
        if seqs != list(range(1, stored.last_seq + 1)):
            problems.append(f"{task_id}: event sequence {seqs}, last_seq {stored.last_seq}")
        folded = pb.Task()
        try:
            for event in events:
                apply_event(folded, event.event)
        except Exception as exc:
            problems.append(f"{task_id}: its events do not fold: {exc}")
        if folded != stored.task:
            problems.append(f"{task_id}: the snapshot differs from the fold of its events")
        # Retention: every item of a finished task (snapshot, events, configs) expires.
        items = await _partition(client, table_name, scope, task_id)
        unexpiring = [item["sk"]["S"] for item in items if "expires_at" not in item]
        if is_terminal(state) and unexpiring:
            problems.append(f"{task_id}: finished, but items without an expiry: {unexpiring}")
        writes = versions.get(task_id, [])
        chain = sorted(writes, key=lambda write: write[1])
        if ([new for _, new in chain] != list(range(1, stored.version + 1))
                or any(new != old + 1 for old, new in chain)):
            problems.append(f"{task_id}: versions in the stream {chain}, "
                            f"snapshot version {stored.version}")

    await asyncio.gather(*(check_one(task_id) for task_id in task_ids))
    await store.close()
    client.close()
    return len(task_ids), problems
