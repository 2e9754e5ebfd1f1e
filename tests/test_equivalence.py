"""JSON-RPC and gRPC are two views of one core: the same errors (code from the catalogue,
ErrorInfo reason, domain and metadata) and the same tasks, over ONE shared Operations."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import AsyncIterator
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf import any_pb2, json_format
from google.protobuf.message_factory import GetMessageClass
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from a2akit.agent import RequestContext, TaskHandle
from a2akit.errors import (
    A2AError,
    InvalidParamsError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
    VersionNotSupportedError,
)
from a2akit.generated import a2a_pb2 as pb
from a2akit.limits import MAX_ID_BYTES
from a2akit.operations import Operations
from a2akit.protojson import from_json, to_json
from a2akit.runtime import build_operations
from a2akit.settings import Settings
from a2akit.store.memory import MemoryStore
from grpc_service.generated import a2a_pb2_grpc
from grpc_service.server import serve, shutdown
from handlers.jsonrpc_app import create_app

pytestmark = pytest.mark.anyio

BINDINGS = ["jsonrpc", "grpc"]
_METHODS = {m.name: m for m in pb.DESCRIPTOR.services_by_name["A2AService"].methods}


class SlowOrEcho:
    """Echoes and completes, except for "slow": works until canceled."""

    name = "Equivalence"

    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        if context.text == "slow":
            await task.working("waiting")
            for _ in range(600):
                await asyncio.sleep(0.05)
        await task.add_artifact(context.text, name="echo")
        await task.complete()


@dataclasses.dataclass(frozen=True)
class Failure:
    """An error as a binding reported it, normalised for comparison."""

    reason: str
    domain: str
    metadata: dict[str, str]
    code: int  # JSON-RPC error code or gRPC status code number, per binding

    def comparable(self) -> tuple[str, str, tuple[tuple[str, str], ...]]:
        return self.reason, self.domain, tuple(sorted(self.metadata.items()))


class BindingError(Exception):
    def __init__(self, failure: Failure) -> None:
        super().__init__(failure)
        self.failure = failure


def _info(packed: any_pb2.Any) -> error_details_pb2.ErrorInfo:
    info = error_details_pb2.ErrorInfo()
    assert packed.Unpack(info), "ErrorInfo must come first"
    return info


class JsonRpcClient:
    name = "jsonrpc"

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    def expected_code(self, error: type[A2AError]) -> int:
        return error.jsonrpc_code

    async def call(self, method: str, request: Any, version: str | None = "1.0") -> Any:
        headers = {"A2A-Version": version} if version is not None else {}
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": to_json(request)}
        reply = (await self.client.post("/", json=body, headers=headers)).json()
        if "error" in reply:
            error = reply["error"]
            packed = json_format.ParseDict(error["data"][0], any_pb2.Any())
            info = _info(packed)
            raise BindingError(Failure(info.reason, info.domain, dict(info.metadata),
                                       error["code"]))
        return from_json(reply["result"], GetMessageClass(_METHODS[method].output_type))


class GrpcClient:
    name = "grpc"

    def __init__(self, stub: a2a_pb2_grpc.A2AServiceStub) -> None:
        self.stub = stub

    def expected_code(self, error: type[A2AError]) -> int:
        return error.grpc_code

    async def call(self, method: str, request: Any, version: str | None = "1.0") -> Any:
        metadata = (("a2a-version", version),) if version is not None else ()
        try:
            return await getattr(self.stub, method)(request, metadata=metadata)
        except grpc.aio.AioRpcError as exc:
            status = rpc_status.from_call(exc)
            assert status is not None
            info = _info(status.details[0])
            raise BindingError(Failure(info.reason, info.domain, dict(info.metadata),
                                       exc.code().value[0])) from None


Client = JsonRpcClient | GrpcClient


@pytest.fixture
async def clients() -> AsyncIterator[dict[str, Client]]:
    """Both bindings over one Operations and one MemoryStore."""
    settings = Settings(allow_anonymous=True, push_notifications=True)
    ops: Operations = build_operations(settings, store=MemoryStore(), agent=SlowOrEcho())
    server, port = await serve(settings, ops, port=0, host="127.0.0.1")
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    transport = httpx.ASGITransport(app=create_app(ops))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://a2a.test") as http:
            yield {"jsonrpc": JsonRpcClient(http),
                   "grpc": GrpcClient(a2a_pb2_grpc.A2AServiceStub(channel))}
    finally:
        await channel.close()
        await shutdown(server, 0)


def _send(text: str, **fields: Any) -> pb.SendMessageRequest:
    return pb.SendMessageRequest(message=pb.Message(
        message_id=str(uuid.uuid4()), role=pb.ROLE_USER, parts=[pb.Part(text=text)], **fields))


async def _failure(client: Client, method: str, request: Any, **kw: Any) -> Failure:
    with pytest.raises(BindingError) as caught:
        await client.call(method, request, **kw)
    return caught.value.failure


async def _completed_task(client: Client) -> pb.Task:
    response = await client.call("SendMessage", _send("done"))
    assert response.task.status.state == pb.TASK_STATE_COMPLETED
    task: pb.Task = response.task
    return task


async def _running_task(client: Client) -> pb.Task:
    request = _send("slow")
    request.configuration.return_immediately = True
    task: pb.Task = (await client.call("SendMessage", request)).task
    assert task.status.state in (pb.TASK_STATE_SUBMITTED, pb.TASK_STATE_WORKING)
    return task


# Each case: (error class, how to provoke it given a client) -> the same Failure everywhere.


async def _task_not_found(client: Client) -> Failure:
    return await _failure(client, "GetTask", pb.GetTaskRequest(id="missing-task"))


async def _task_not_cancelable(client: Client) -> Failure:
    task = await _completed_task(client)
    failure = await _failure(client, "CancelTask", pb.CancelTaskRequest(id=task.id))
    assert failure.metadata == {"taskId": task.id}
    return dataclasses.replace(failure, metadata={"taskId": "<task>"})


async def _unsupported_operation(client: Client) -> Failure:
    task = await _completed_task(client)
    failure = await _failure(client, "SendMessage", _send("again", task_id=task.id))
    assert failure.metadata == {"taskId": task.id}
    return dataclasses.replace(failure, metadata={"taskId": "<task>"})


async def _extended_card_unsupported(client: Client) -> Failure:
    return await _failure(client, "GetExtendedAgentCard", pb.GetExtendedAgentCardRequest())


async def _version_not_supported(client: Client) -> Failure:
    return await _failure(client, "GetTask", pb.GetTaskRequest(id="x"), version=None)


async def _minor_version_not_supported(client: Client) -> Failure:
    return await _failure(client, "GetTask", pb.GetTaskRequest(id="x"), version="1.1")


async def _id_over_the_limit(client: Client) -> Failure:
    return await _failure(client, "GetTask", pb.GetTaskRequest(id="x" * (MAX_ID_BYTES + 1)))


async def _part_without_content(client: Client) -> Failure:
    request = _send("x")
    request.message.parts.add(media_type="text/plain")
    return await _failure(client, "SendMessage", request)


CASES = {
    "task-not-found": (TaskNotFoundError, _task_not_found),
    "task-not-cancelable": (TaskNotCancelableError, _task_not_cancelable),
    "unsupported-operation": (UnsupportedOperationError, _unsupported_operation),
    "extended-card-unsupported": (UnsupportedOperationError, _extended_card_unsupported),
    "version-not-supported": (VersionNotSupportedError, _version_not_supported),
    "minor-version-not-supported": (VersionNotSupportedError, _minor_version_not_supported),
    "id-over-the-limit": (InvalidParamsError, _id_over_the_limit),
    "part-without-content": (InvalidParamsError, _part_without_content),
}


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("case", list(CASES))
async def test_error_matches_catalogue(clients: dict[str, Client], binding: str,
                                       case: str) -> None:
    error, provoke = CASES[case]
    client = clients[binding]
    failure = await provoke(client)
    assert failure.reason == error.reason
    assert failure.domain == "a2a-protocol.org"
    assert failure.code == client.expected_code(error)


@pytest.mark.parametrize("case", list(CASES))
async def test_error_is_the_same_on_both_bindings(clients: dict[str, Client],
                                                  case: str) -> None:
    _, provoke = CASES[case]
    seen = {name: (await provoke(client)).comparable() for name, client in clients.items()}
    assert seen["jsonrpc"] == seen["grpc"]


@pytest.mark.parametrize(("origin", "other"), [("jsonrpc", "grpc"), ("grpc", "jsonrpc")])
async def test_task_created_on_one_binding_is_seen_on_the_other(
        clients: dict[str, Client], origin: str, other: str) -> None:
    created = await _completed_task(clients[origin])
    fetched = await clients[other].call("GetTask", pb.GetTaskRequest(id=created.id))
    assert fetched == created
    listed = await clients[other].call("ListTasks", pb.ListTasksRequest(
        context_id=created.context_id))
    assert [t.id for t in listed.tasks] == [created.id]


@pytest.mark.parametrize(("origin", "other"), [("jsonrpc", "grpc"), ("grpc", "jsonrpc")])
async def test_task_started_on_one_binding_is_canceled_on_the_other(
        clients: dict[str, Client], origin: str, other: str) -> None:
    running = await _running_task(clients[origin])
    canceled = await clients[other].call("CancelTask", pb.CancelTaskRequest(id=running.id))
    assert canceled.status.state == pb.TASK_STATE_CANCELED
    again = await clients[origin].call("GetTask", pb.GetTaskRequest(id=running.id))
    assert again.status.state == pb.TASK_STATE_CANCELED
    failures = [await _failure(c, "CancelTask", pb.CancelTaskRequest(id=running.id))
                for c in (clients[origin], clients[other])]
    assert failures[0].comparable() == failures[1].comparable()
    assert failures[0].reason == TaskNotCancelableError.reason
