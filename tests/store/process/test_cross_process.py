"""Both bindings as separate processes on one DynamoDB table: the JSON-RPC app through the
real Mangum handler in this process, `python -m grpc_service` in another."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import grpc
import pytest

from a2akit.examples.cancellable import CountingAgent
from a2akit.generated import a2a_pb2 as pb
from a2akit.runtime import build_operations
from a2akit.settings import Settings
from grpc_service.generated import a2a_pb2_grpc
from http_service.app import create_app
from tests.jsonrpc.client import LambdaClient, lambda_event_loop
from tests.store.conftest import TABLE
from tests.support.messages import V1, send_request, user_message
from tests.support.processes import free_port, python_env, running

# A gRPC server process and DynamoDB Local.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def grpc_stub(ddb_endpoint: str) -> Iterator[Any]:
    port = free_port()
    env = python_env(GRPC_PORT=str(port), A2A_TABLE=TABLE, AWS_ENDPOINT_URL_DYNAMODB=ddb_endpoint,
                     A2A_ALLOW_ANONYMOUS="true", A2A_AGENT="a2akit.examples.cancellable:agent")
    with running([sys.executable, "-m", "grpc_service"], ports=[port], env=env), \
            grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        yield a2a_pb2_grpc.A2AServiceStub(channel)


@pytest.fixture
def lambda_client(ddb_endpoint: str) -> Iterator[LambdaClient]:
    settings = Settings(table=TABLE, dynamodb_endpoint=ddb_endpoint, allow_anonymous=True)
    with lambda_event_loop():
        ops = build_operations(settings, agent=CountingAgent())
        yield LambdaClient(create_app(ops), "apigw_http_v2.json")
    # After the loop has cancelled what the invocations left running.
    asyncio.run(ops.close())


def _subscribe(stub: Any, tenant: str, task_id: str, into: list[pb.StreamResponse]) -> None:
    for event in stub.SubscribeToTask(pb.SubscribeToTaskRequest(tenant=tenant, id=task_id),
                                      metadata=V1, timeout=30):
        into.append(event)


def test_created_over_jsonrpc_seen_and_canceled_over_grpc(
    lambda_client: LambdaClient, grpc_stub: Any
) -> None:
    tenant = f"x-{uuid.uuid4().hex[:8]}"
    task = lambda_client.result("SendMessage", {
        "tenant": tenant, "message": user_message(),
        "configuration": {"returnImmediately": True}})["task"]
    got = grpc_stub.GetTask(pb.GetTaskRequest(tenant=tenant, id=task["id"]), metadata=V1)
    assert got.id == task["id"] and got.context_id == task["contextId"]
    listed = grpc_stub.ListTasks(pb.ListTasksRequest(tenant=tenant), metadata=V1)
    assert [t.id for t in listed.tasks] == [task["id"]] and listed.total_size == 1
    events: list[pb.StreamResponse] = []
    reader = threading.Thread(target=_subscribe, args=(grpc_stub, tenant, task["id"], events))
    reader.start()
    time.sleep(0.5)
    canceled = grpc_stub.CancelTask(pb.CancelTaskRequest(tenant=tenant, id=task["id"]),
                                    metadata=V1)
    assert canceled.status.state == pb.TASK_STATE_CANCELED
    reader.join(timeout=20)
    assert not reader.is_alive()
    assert events[0].task.id == task["id"]
    assert events[-1].status_update.status.state == pb.TASK_STATE_CANCELED
    final = lambda_client.result("GetTask", {"tenant": tenant, "id": task["id"]})
    assert final["status"]["state"] == "TASK_STATE_CANCELED"


def test_created_over_grpc_seen_and_canceled_over_jsonrpc(
    lambda_client: LambdaClient, grpc_stub: Any
) -> None:
    tenant = f"y-{uuid.uuid4().hex[:8]}"
    request = send_request("count")
    request.tenant = tenant
    request.configuration.return_immediately = True
    task = grpc_stub.SendMessage(request, metadata=V1).task
    time.sleep(0.5)  # the agent works in the gRPC process
    got = lambda_client.result("GetTask", {"tenant": tenant, "id": task.id})
    assert got["status"]["state"] == "TASK_STATE_WORKING"
    listed = lambda_client.result("ListTasks", {"tenant": tenant})
    assert [t["id"] for t in listed["tasks"]] == [task.id]
    canceled = lambda_client.result("CancelTask", {"tenant": tenant, "id": task.id})
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    # The runner in the other process notices within about a second and stops writing.
    time.sleep(2.0)
    settled = lambda_client.result("GetTask", {"tenant": tenant, "id": task.id})
    time.sleep(1.0)
    later = lambda_client.result("GetTask", {"tenant": tenant, "id": task.id})
    assert json.dumps(later, sort_keys=True) == json.dumps(settled, sort_keys=True)
    assert later["status"]["state"] == "TASK_STATE_CANCELED"
    with pytest.raises(grpc.RpcError) as info:
        list(grpc_stub.SubscribeToTask(pb.SubscribeToTaskRequest(tenant=tenant, id=task.id),
                                       metadata=V1, timeout=10))
    assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
