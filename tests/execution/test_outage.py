"""The task store goes away mid-stream (a TCP proxy in front of DynamoDB Local is cut): the
client gets an error (a JSON-RPC error event, a gRPC status), never a silent end, and once
the store is back and the lease has expired the task is FAILED, not WORKING. An outage
shorter than the lease is ridden out: the agent runs on, and a cancel still reaches it."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import grpc
import pytest

from a2akit import aws
from a2akit.agent import RequestContext, TaskHandle
from a2akit.auth import ANONYMOUS, Identity
from a2akit.caller import Call
from a2akit.examples.cancellable import CountingAgent
from a2akit.generated import a2a_pb2 as pb
from a2akit.operations import Operations
from a2akit.runtime import build_operations
from a2akit.settings import Settings
from a2akit.store.dynamodb import DynamoDBStore
from http_service.app import create_app
from tests.jsonrpc.client import AsgiClient, Reply
from tests.store.conftest import TABLE
from tests.support.errors import jsonrpc_failure
from tests.support.harness import grpc_server
from tests.support.messages import V1, send_request, user_message
from tests.support.proxy import Proxy, proxy

pytestmark = pytest.mark.slow

LEASE_SECONDS = 1.0


@contextlib.contextmanager
def _behind_a_proxy(ddb_endpoint: str, agent: Any = None, lease_seconds: float = LEASE_SECONDS
                    ) -> Iterator[tuple[Proxy, Operations]]:
    """The core over DynamoDB Local reached through a proxy the test can cut."""
    port = urlsplit(ddb_endpoint).port
    assert port is not None
    with proxy(port) as link:
        # Two attempts, so an outage shows within a second rather than after five retries.
        client = aws.client("dynamodb", endpoint_url=f"http://127.0.0.1:{link.port}",
                            region_name="us-east-1", max_attempts=2)
        settings = Settings(allow_anonymous=True, lease_seconds=lease_seconds)
        try:
            yield link, build_operations(settings, store=DynamoDBStore(TABLE, client),
                                         agent=agent or CountingAgent())
        finally:
            client.close()


@pytest.fixture
def cut_able(ddb_endpoint: str) -> Iterator[tuple[Proxy, AsgiClient]]:
    with _behind_a_proxy(ddb_endpoint) as (link, ops):
        rpc = AsgiClient(create_app(ops))
        yield link, rpc
        rpc.close()


def test_an_outage_mid_stream_is_an_error_and_the_task_does_not_stay_working(
    cut_able: tuple[Proxy, AsgiClient]
) -> None:
    link, rpc = cut_able
    tenant = f"o-{uuid.uuid4().hex[:8]}"
    replies: list[Reply] = []
    stream = threading.Thread(target=lambda: replies.append(rpc.call(
        "SendStreamingMessage", {"tenant": tenant, "message": user_message("count")})))
    stream.start()
    deadline = time.monotonic() + 20
    task_id = None
    while task_id is None:
        assert time.monotonic() < deadline
        page = rpc.result("ListTasks", {"tenant": tenant, "includeArtifacts": True})
        if page["tasks"] and len(page["tasks"][0].get("artifacts", [{}])[0].get("parts", [])) > 2:
            task_id = page["tasks"][0]["id"]
        time.sleep(0.05)
    link.cut()
    stream.join(timeout=30)
    assert not stream.is_alive()
    events = replies[0].events()
    assert events[0]["result"]["task"]["id"] == task_id
    last: dict[str, Any] = events[-1]
    assert "error" in last, last  # not a silent end: the last frame is an error event
    assert jsonrpc_failure(last["error"]).info.reason == "UNAVAILABLE"
    assert b"event: error" in replies[0].body
    link.restore()
    time.sleep(LEASE_SECONDS + 0.2)
    task = rpc.result("GetTask", {"tenant": tenant, "id": task_id})
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    assert "runner stopped" in task["status"]["message"]["parts"][0]["text"]


@pytest.mark.anyio
async def test_an_outage_mid_stream_is_a_grpc_status(ddb_endpoint: str) -> None:
    with _behind_a_proxy(ddb_endpoint) as (link, ops):
        async with grpc_server(ops) as server:
            request = send_request("count")
            request.tenant = f"g-{uuid.uuid4().hex[:8]}"
            received = []
            with pytest.raises(grpc.aio.AioRpcError) as failed:
                async for event in server.stub.SendStreamingMessage(request, metadata=V1):
                    received.append(event)
                    if len(received) == 4:
                        link.cut()
            assert failed.value.code() == grpc.StatusCode.UNAVAILABLE
            assert received[0].HasField("task")


class _Thinking:
    """Works a minute without writing, so only the run's watch reads the task meanwhile."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.stopped = asyncio.Event()

    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        await task.working("Thinking")
        self.started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            self.stopped.set()
            raise


@pytest.mark.anyio
async def test_an_outage_shorter_than_the_lease_is_ridden_out_and_a_cancel_still_stops_the_agent(
        ddb_endpoint: str, ddb_client: Any, caplog: pytest.LogCaptureFixture) -> None:
    agent = _Thinking()
    # The watch reads every second (DynamoDB's poll interval); the lease outlasts the outage.
    with _behind_a_proxy(ddb_endpoint, agent, lease_seconds=10) as (link, ops):
        request = send_request("think", immediately=True)
        request.tenant = f"w-{uuid.uuid4().hex[:8]}"
        call = Call(Identity(ANONYMOUS, "test"))
        task_id = (await ops.send_message(request, call)).task.id
        await asyncio.wait_for(agent.started.wait(), 10)
        link.cut()
        await asyncio.sleep(2.5)  # two of the watch's reads fail
        link.restore()
        assert not agent.stopped.is_set()
        # Another process cancels, straight on the table: the watch, still going, sees it.
        other = build_operations(Settings(allow_anonymous=True),
                                 store=DynamoDBStore(TABLE, ddb_client), agent=agent)
        canceled = await other.cancel_task(
            pb.CancelTaskRequest(id=task_id, tenant=request.tenant), call)
        assert canceled.status.state == pb.TASK_STATE_CANCELED
        await asyncio.wait_for(agent.stopped.wait(), 5)
    assert "lease renewal or cancel watch failed" in caplog.text  # it was the watch that read
