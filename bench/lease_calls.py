"""What a lease costs in DynamoDB calls: one renewal, and one running task for a minute.

    .venv/bin/python bench/lease_calls.py [SECONDS]

Starts DynamoDB Local (as the tests do), runs an agent that works silently for SECONDS
(default 60) with the default settings (lease 30 s: a renewal every 10 s; the cancel watch
reads every second in between), and counts every DynamoDB call the runner makes after the
task exists, with the `Meter` of bench/dynamodb_calls.py.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from a2akit.auth import Identity  # noqa: E402
from a2akit.caller import Call  # noqa: E402
from a2akit.clock import epoch_ms  # noqa: E402
from a2akit.runtime import build_operations  # noqa: E402
from a2akit.settings import Settings  # noqa: E402
from a2akit.store import table  # noqa: E402
from a2akit.store.base import Lease, Scope  # noqa: E402
from a2akit.store.dynamodb import DynamoDBStore, make_client  # noqa: E402
from bench.dynamodb_calls import Meter  # noqa: E402
from scripts.dynamodb_local import dynamodb_local, set_dummy_credentials  # noqa: E402
from tests.support.messages import send_request  # noqa: E402

TABLE = "a2akit-lease-bench"


class Silent:
    """Reports WORKING, then works without writing until released."""

    def __init__(self) -> None:
        self.release = asyncio.Event()

    async def execute(self, context: Any, task: Any) -> None:
        await task.working()
        await self.release.wait()
        await task.complete()


async def main(seconds: float, endpoint: str) -> None:
    client = make_client(endpoint, "us-east-1")
    client.create_table(**table.create_table_kwargs(TABLE))
    client.get_waiter("table_exists").wait(TableName=TABLE)
    meter = Meter(client)
    client.meta.events.register("provide-client-params.dynamodb.UpdateItem",
                                meter._ask)  # capacity of renewals too
    store = DynamoDBStore(TABLE, client)
    scope = Scope("bench", "owner")

    # One renewal, alone.
    request = send_request("x")
    await store.create(scope, _task("one"), [], lease=Lease("run#bench", epoch_ms() + 30_000))
    meter.calls.clear()
    meter.units = 0.0
    await store.swap_lease(scope, "one", "run#bench", Lease("run#bench", epoch_ms() + 30_000))
    print(f"one renewal: {dict(meter.calls)}, {meter.units:g} capacity units")

    # One running task, with the default settings.
    agent = Silent()
    ops = build_operations(Settings(table=TABLE), store=store, agent=agent)
    request.tenant = scope.tenant
    request.configuration.return_immediately = True
    await ops.send_message(request, Call(Identity(scope.owner, "test")))
    await asyncio.sleep(0.5)  # the WORKING write
    meter.calls.clear()
    started = time.monotonic()
    await asyncio.sleep(seconds)
    elapsed = time.monotonic() - started
    per_minute = {name: round(count * 60 / elapsed, 1) for name, count in meter.calls.items()}
    print(f"one running task, per minute: {per_minute}")
    agent.release.set()
    await asyncio.sleep(1.5)
    client.close()


def _task(task_id: str) -> Any:
    from a2akit.generated import a2a_pb2 as pb

    return pb.Task(id=task_id, context_id="c",
                   status=pb.TaskStatus(state=pb.TASK_STATE_WORKING))


if __name__ == "__main__":
    set_dummy_credentials()
    with dynamodb_local() as url:
        asyncio.run(main(float(sys.argv[1]) if len(sys.argv) > 1 else 60.0, url))
