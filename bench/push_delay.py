"""What a push notification costs and how soon it arrives.

    .venv/bin/python bench/push_delay.py [TASKS]

1. In process (`./dev serve`, the container): TASKS tasks of a streaming agent (eight events
   each) with a webhook on a loopback receiver; for every event, the delay from the moment
   its write committed to the moment the receiver had the whole request.
2. The AWS design: the same tasks on DynamoDB Local with delivery left to the stream (as the
   stack runs them); then the dispatcher entry point (`handlers.push.handler`) is called with
   the stream's records after the stack's filter, in batches of up to 100 (the event source
   mapping's batch size): Lambda invocations and DynamoDB reads per delivered event. The
   reads are the store calls the dispatcher makes (a config Query per event, a config
   GetItem before each retry), each one DynamoDB request.

Starts DynamoDB Local and a receiver itself, like the tests.
"""

from __future__ import annotations

import asyncio
import collections
import importlib
import json
import os
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from a2akit.examples.streaming import StreamingAgent  # noqa: E402
from a2akit.generated import a2a_pb2 as pb  # noqa: E402
from a2akit.runtime import build_operations  # noqa: E402
from a2akit.settings import ENV, INLINE, STREAM, Settings  # noqa: E402
from a2akit.store import table  # noqa: E402
from a2akit.store.base import Lease, PushTarget, Scope, StoredTask  # noqa: E402
from a2akit.store.dynamodb import make_client  # noqa: E402
from a2akit.store.memory import MemoryStore  # noqa: E402
from infra.push_filter import PUSH_FILTER_PATTERN  # noqa: E402
from scripts.dynamodb_local import CREDENTIALS, dynamodb_local, set_dummy_credentials  # noqa: E402
from tests.push.test_delivery import _send  # noqa: E402
from tests.support.event_filter import matches  # noqa: E402
from tests.support.messages import send_params  # noqa: E402
from tests.support.streams import lambda_event, stream_records  # noqa: E402
from tests.support.webhooks import Receiver  # noqa: E402

WORDS = "one two three four"  # + the task number: the task, WORKING, 5 chunks, COMPLETED
BATCH = 100
DEV = {"push_notifications": True, "allow_anonymous": True, "push_allow_http": True,
       "push_allow_cidrs": ("127.0.0.1/32",)}


class _Quick(StreamingAgent):
    delay = 0.005


class _Stamped(MemoryStore):
    """The embedded store, noting when each event's write committed."""

    def __init__(self) -> None:
        super().__init__()
        self.committed: dict[tuple[str, int], float] = {}

    def _stamp(self, stored: StoredTask, count: int) -> None:
        now = time.monotonic()
        for seq in range(stored.last_seq - count + 1, stored.last_seq + 1):
            self.committed[(stored.task.id, seq)] = now

    async def create(self, scope: Scope, task: pb.Task, events: Sequence[pb.StreamResponse],
                     message_id: str | None = None, *, lease: Lease | None = None,
                     push_configs: Sequence[PushTarget] = ()
                     ) -> StoredTask:
        stored = await super().create(scope, task, events, message_id, lease=lease,
                                      push_configs=push_configs)
        self._stamp(stored, len(events))
        return stored

    async def update(self, scope: Scope, task_id: str, expected_version: int, task: pb.Task,
                     events: Sequence[pb.StreamResponse], message_id: str | None = None, *,
                     lease: Lease | None = None, lease_expired_by: int | None = None
                     ) -> StoredTask:
        stored = await super().update(scope, task_id, expected_version, task, events,
                                      message_id, lease=lease, lease_expired_by=lease_expired_by)
        self._stamp(stored, len(events))
        return stored


def _key(body: dict[str, Any], seqs: dict[str, int]) -> tuple[str, int]:
    """(task id, seq) of a received body: events arrive in order per task."""
    task_id = body["task"]["id"] if "task" in body else next(iter(body.values()))["taskId"]
    seqs[task_id] = seqs.get(task_id, 0) + 1
    return task_id, seqs[task_id]


async def in_process(tasks: int) -> None:
    store = _Stamped()
    ops = build_operations(Settings(**DEV, push_delivery=INLINE), store=store, agent=_Quick())
    with Receiver() as hook:
        config = {"url": hook.url(), "token": "t"}
        for i in range(tasks):
            await _send("jsonrpc", ops, send_params(f"{WORDS} {i}", push_config=config))
        assert ops.push_delivery is not None
        await ops.push_delivery.drain(30)
        received = hook.requests
    await ops.close()
    seqs: dict[str, int] = {}
    delays = sorted((r.at - store.committed[_key(json.loads(r.body), seqs)]) * 1000
                    for r in received)
    print(f"in process: {len(received)} events of {tasks} tasks delivered; delay from the "
          f"write's commit to the receiver (ms): p50 {statistics.median(delays):.2f}, "
          f"p90 {delays[int(len(delays) * 0.9)]:.2f}, max {delays[-1]:.2f}")


def stream_design(tasks: int, endpoint: str) -> None:
    name = f"push-bench-{os.getpid()}"
    client = make_client(endpoint, "us-east-1")
    client.create_table(**table.create_table_kwargs(name))
    client.get_waiter("table_exists").wait(TableName=name)
    settings = Settings(**DEV, push_delivery=STREAM, table=name, dynamodb_endpoint=endpoint)
    with Receiver() as hook:
        async def run() -> None:
            ops = build_operations(settings, agent=_Quick())
            config = {"url": hook.url()}
            for i in range(tasks):
                await _send("jsonrpc", ops, send_params(f"{WORDS} {i}", push_config=config))
            await ops.close()

        asyncio.run(run())
        records = lambda_event(stream_records(endpoint, name))["Records"]
        passed = [record for record in records if matches(PUSH_FILTER_PATTERN, record)]
        os.environ.update({**CREDENTIALS, ENV.TABLE: name, ENV.DYNAMODB_ENDPOINT: endpoint,
                           ENV.PUSH_NOTIFICATIONS: "true", ENV.PUSH_DELIVERY: STREAM,
                           ENV.PUSH_ALLOW_HTTP: "true", ENV.PUSH_ALLOW_CIDRS: "127.0.0.1/32"})
        module = importlib.import_module("handlers.push")
        calls: collections.Counter[str] = collections.Counter()
        store = module.dispatcher.store
        for method in ("list_push_targets", "get_push_config"):
            original = getattr(store, method)

            async def counted(*args: Any, _original: Any = original, _name: str = method) -> Any:
                calls[_name] += 1
                return await _original(*args)

            setattr(store, method, counted)

        class Context:
            def get_remaining_time_in_millis(self) -> int:
                return 300_000

        invocations = 0
        started = time.monotonic()
        for start in range(0, len(passed), BATCH):
            answer = module.handler({"Records": passed[start:start + BATCH]}, Context())
            assert answer == {"batchItemFailures": []}, answer
            invocations += 1
        took = time.monotonic() - started
        delivered = len(hook.requests)
    client.delete_table(TableName=name)
    print(f"stream design: {len(records)} stream records, {len(passed)} passed the filter "
          f"({len(records) - len(passed)} snapshot, config, claim and TTL records filtered "
          f"out); {delivered} delivered in {invocations} invocation(s) of up to {BATCH}: "
          f"{invocations / delivered:.3f} invocations per delivered event; DynamoDB reads "
          f"{dict(calls)} = {sum(calls.values()) / delivered:.2f} per delivered event; "
          f"{took * 1000 / delivered:.2f} ms of dispatcher time per event")


def main() -> None:
    tasks = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    asyncio.run(in_process(tasks))
    set_dummy_credentials()
    with dynamodb_local() as endpoint:
        stream_design(tasks, endpoint)


if __name__ == "__main__":
    main()
