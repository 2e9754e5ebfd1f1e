"""JSON-RPC, HTTP+JSON and gRPC are three views of one core: the same errors (code from the
catalogue, ErrorInfo reason, domain and metadata), the same answers to every operation and the
same tasks, over ONE shared Operations."""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import AsyncIterator
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf.message_factory import GetMessageClass
from google.rpc import error_details_pb2

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
from a2akit.protojson import from_json, to_json
from grpc_service.generated import a2a_pb2_grpc
from http_service.app import create_app
from tests.support.errors import Failure, grpc_failure, jsonrpc_failure, rest_failure
from tests.support.harness import SlowOrEcho, grpc_server, memory_operations
from tests.support.messages import send_request
from tests.support.rest import rest_request

pytestmark = pytest.mark.anyio

BINDINGS = ["jsonrpc", "rest", "grpc"]
PAIRS = list(itertools.permutations(BINDINGS, 2))
_METHODS = {m.name: m for m in pb.DESCRIPTOR.services_by_name["A2AService"].methods}


def _comparable(failure: Failure) -> tuple[Any, ...]:
    """What both bindings must agree on; the codes differ by binding."""
    info = failure.info
    bad = failure.bad_request
    violations = tuple((v.field, v.description) for v in bad.field_violations) if bad else ()
    return info.reason, info.domain, tuple(sorted(info.metadata.items())), violations


def _hide_task_id(failure: Failure) -> Failure:
    """The same error about two different tasks, made comparable."""
    info = error_details_pb2.ErrorInfo()
    info.CopyFrom(failure.info)
    info.metadata["taskId"] = "<task>"
    return dataclasses.replace(failure, info=info)


class BindingError(Exception):
    def __init__(self, failure: Failure) -> None:
        super().__init__(failure)
        self.failure = failure


class JsonRpcClient:
    name = "jsonrpc"

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    def expected_code(self, error: type[A2AError]) -> int:
        return error.jsonrpc_code

    async def call(self, method: str, request: Any, version: str | None = "1.0") -> Any:
        headers = {"A2A-Version": version} if version is not None else {}
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": to_json(request)}
        reply = await self.client.post("/", json=body, headers=headers)
        output = GetMessageClass(_METHODS[method].output_type)
        if reply.headers["content-type"].startswith("text/event-stream"):
            events = _sse_data(reply.text)
            errors = [e["error"] for e in events if "error" in e]
            if errors:
                raise BindingError(jsonrpc_failure(errors[0]))
            return [from_json(e["result"], output) for e in events]
        answer = reply.json()
        if "error" in answer:
            raise BindingError(jsonrpc_failure(answer["error"]))
        return from_json(answer["result"], output)


def _sse_data(text: str) -> list[Any]:
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


class RestClient:
    name = "rest"

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    def expected_code(self, error: type[A2AError]) -> int:
        return error.rest_status

    async def call(self, method: str, request: Any, version: str | None = "1.0") -> Any:
        headers = {"A2A-Version": version} if version is not None else {}
        verb, path, body, query = rest_request(method, request)
        reply = await self.client.request(verb, path + ("?" + query if query else ""),
                                          json=body, headers=headers)
        output = GetMessageClass(_METHODS[method].output_type)
        if reply.status_code != 200:
            raise BindingError(rest_failure(reply.json(), reply.status_code))
        if reply.headers["content-type"].startswith("text/event-stream"):
            events = _sse_data(reply.text)
            errors = [e["error"] for e in events if "error" in e]
            if errors:
                raise BindingError(rest_failure({"error": errors[0]}, errors[0]["code"]))
            return [from_json(e, output) for e in events]
        assert reply.headers["content-type"] == "application/a2a+json", reply.headers
        return from_json(reply.json(), output)


class GrpcClient:
    name = "grpc"

    def __init__(self, stub: a2a_pb2_grpc.A2AServiceStub) -> None:
        self.stub = stub

    def expected_code(self, error: type[A2AError]) -> int:
        return error.grpc_code

    async def call(self, method: str, request: Any, version: str | None = "1.0") -> Any:
        metadata = (("a2a-version", version),) if version is not None else ()
        try:
            if _METHODS[method].server_streaming:
                return [event async for event in getattr(self.stub, method)(
                    request, metadata=metadata)]
            return await getattr(self.stub, method)(request, metadata=metadata)
        except grpc.aio.AioRpcError as exc:
            raise BindingError(grpc_failure(exc)) from None


Client = JsonRpcClient | RestClient | GrpcClient


@pytest.fixture
async def clients() -> AsyncIterator[dict[str, Client]]:
    """The three bindings over one Operations and one MemoryStore."""
    ops = memory_operations(SlowOrEcho())
    transport = httpx.ASGITransport(app=create_app(ops))
    async with grpc_server(ops) as grpc_binding, httpx.AsyncClient(
            transport=transport, base_url="http://a2a.test") as http:
        yield {"jsonrpc": JsonRpcClient(http), "rest": RestClient(http),
               "grpc": GrpcClient(grpc_binding.stub)}


async def _failure(client: Client, method: str, request: Any, **kw: Any) -> Failure:
    with pytest.raises(BindingError) as caught:
        await client.call(method, request, **kw)
    return caught.value.failure


async def _completed_task(client: Client) -> pb.Task:
    response = await client.call("SendMessage", send_request("done"))
    assert response.task.status.state == pb.TASK_STATE_COMPLETED
    task: pb.Task = response.task
    return task


async def _running_task(client: Client) -> pb.Task:
    request = send_request("slow")
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
    assert dict(failure.info.metadata) == {"taskId": task.id}
    return _hide_task_id(failure)


async def _unsupported_operation(client: Client) -> Failure:
    task = await _completed_task(client)
    failure = await _failure(client, "SendMessage", send_request("again", task_id=task.id))
    assert dict(failure.info.metadata) == {"taskId": task.id}
    return _hide_task_id(failure)


async def _extended_card_unsupported(client: Client) -> Failure:
    return await _failure(client, "GetExtendedAgentCard", pb.GetExtendedAgentCardRequest())


async def _version_not_supported(client: Client) -> Failure:
    return await _failure(client, "GetTask", pb.GetTaskRequest(id="x"), version=None)


async def _minor_version_not_supported(client: Client) -> Failure:
    return await _failure(client, "GetTask", pb.GetTaskRequest(id="x"), version="1.1")


async def _id_over_the_limit(client: Client) -> Failure:
    return await _failure(client, "GetTask", pb.GetTaskRequest(id="x" * (MAX_ID_BYTES + 1)))


async def _part_without_content(client: Client) -> Failure:
    request = send_request("x")
    request.message.parts.add(media_type="text/plain")
    return await _failure(client, "SendMessage", request)


async def _page_size_out_of_range(client: Client) -> Failure:
    return await _failure(client, "ListTasks", pb.ListTasksRequest(page_size=0))


async def _negative_history_length(client: Client) -> Failure:
    return await _failure(client, "GetTask", pb.GetTaskRequest(id="x", history_length=-1))


async def _unknown_status(client: Client) -> Failure:
    return await _failure(client, "ListTasks", pb.ListTasksRequest(status=99))  # type: ignore[arg-type]


async def _push_config_of_missing_task(client: Client) -> Failure:
    return await _failure(client, "GetTaskPushNotificationConfig",
                          pb.GetTaskPushNotificationConfigRequest(task_id="missing", id="c"))


CASES = {
    "task-not-found": (TaskNotFoundError, _task_not_found),
    "task-not-cancelable": (TaskNotCancelableError, _task_not_cancelable),
    "unsupported-operation": (UnsupportedOperationError, _unsupported_operation),
    "extended-card-unsupported": (UnsupportedOperationError, _extended_card_unsupported),
    "version-not-supported": (VersionNotSupportedError, _version_not_supported),
    "minor-version-not-supported": (VersionNotSupportedError, _minor_version_not_supported),
    "id-over-the-limit": (InvalidParamsError, _id_over_the_limit),
    "part-without-content": (InvalidParamsError, _part_without_content),
    "page-size-out-of-range": (InvalidParamsError, _page_size_out_of_range),
    "negative-history-length": (InvalidParamsError, _negative_history_length),
    "unknown-status": (InvalidParamsError, _unknown_status),
    "push-config-of-missing-task": (TaskNotFoundError, _push_config_of_missing_task),
}


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("case", list(CASES))
async def test_error_matches_catalogue(clients: dict[str, Client], binding: str,
                                       case: str) -> None:
    error, provoke = CASES[case]
    client = clients[binding]
    failure = await provoke(client)
    assert failure.info.reason == error.reason
    assert failure.info.domain == "a2a-protocol.org"
    assert failure.code == client.expected_code(error)


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.spec("5.1", "MUST", "Every binding answers the same error for the same failure")
async def test_error_is_the_same_on_every_binding(clients: dict[str, Client],
                                                  case: str) -> None:
    _, provoke = CASES[case]
    seen = {name: _comparable(await provoke(client)) for name, client in clients.items()}
    assert seen["jsonrpc"] == seen["rest"] == seen["grpc"]


@pytest.mark.parametrize(("origin", "other"), PAIRS)
@pytest.mark.spec("5.1", "MUST", "A task created on one binding is the same task on the others")
async def test_task_created_on_one_binding_is_seen_on_the_other(
        clients: dict[str, Client], origin: str, other: str) -> None:
    created = await _completed_task(clients[origin])
    fetched = await clients[other].call("GetTask", pb.GetTaskRequest(id=created.id))
    assert fetched == created
    listed = await clients[other].call("ListTasks", pb.ListTasksRequest(
        context_id=created.context_id))
    assert [t.id for t in listed.tasks] == [created.id]


@pytest.mark.parametrize(("origin", "other"), PAIRS)
async def test_task_started_on_one_binding_is_canceled_on_the_other(
        clients: dict[str, Client], origin: str, other: str) -> None:
    running = await _running_task(clients[origin])
    canceled = await clients[other].call("CancelTask", pb.CancelTaskRequest(id=running.id))
    assert canceled.status.state == pb.TASK_STATE_CANCELED
    again = await clients[origin].call("GetTask", pb.GetTaskRequest(id=running.id))
    assert again.status.state == pb.TASK_STATE_CANCELED
    failures = [await _failure(c, "CancelTask", pb.CancelTaskRequest(id=running.id))
                for c in (clients[origin], clients[other])]
    assert _comparable(failures[0]) == _comparable(failures[1])
    assert failures[0].info.reason == TaskNotCancelableError.reason


async def _every_operation(client: Client, task: pb.Task) -> dict[str, Any]:
    """What each of the eleven operations answers about one completed task, ids left out
    where each binding makes its own (the task a send creates, a config's id)."""
    out: dict[str, Any] = {}
    sent = (await client.call("SendMessage", send_request("same"))).task
    out["SendMessage"] = (sent.status.state, [p.text for a in sent.artifacts for p in a.parts])
    events = await client.call("SendStreamingMessage", send_request("same"))
    out["SendStreamingMessage"] = [e.WhichOneof("payload") for e in events]
    out["GetTask"] = await client.call("GetTask", pb.GetTaskRequest(id=task.id,
                                                                    history_length=1))
    listed = await client.call("ListTasks", pb.ListTasksRequest(context_id=task.context_id,
                                                                include_artifacts=True))
    out["ListTasks"] = listed
    for name, request in (("CancelTask", pb.CancelTaskRequest(id=task.id)),
                          ("SubscribeToTask", pb.SubscribeToTaskRequest(id=task.id)),
                          ("GetExtendedAgentCard", pb.GetExtendedAgentCardRequest())):
        out[name] = _comparable(_hide_task_id(await _failure(client, name, request)))
    config = pb.TaskPushNotificationConfig(task_id=task.id, id=client.name,
                                           url="https://93.184.216.34/hook")
    created = await client.call("CreateTaskPushNotificationConfig", config)
    got = await client.call("GetTaskPushNotificationConfig",
                            pb.GetTaskPushNotificationConfigRequest(task_id=task.id,
                                                                    id=client.name))
    assert created == got
    configs = await client.call("ListTaskPushNotificationConfigs",
                                pb.ListTaskPushNotificationConfigsRequest(task_id=task.id))
    assert got in configs.configs
    deleted = await client.call("DeleteTaskPushNotificationConfig",
                                pb.DeleteTaskPushNotificationConfigRequest(task_id=task.id,
                                                                           id=client.name))
    out["push"] = (created.url, created.task_id, type(deleted).__name__)
    return out


@pytest.mark.spec("5.1", "MUST", "Every binding offers the same operations with the same results")
async def test_every_operation_answers_alike(clients: dict[str, Client]) -> None:
    task = await _completed_task(clients["rest"])
    seen = {name: await _every_operation(client, task) for name, client in clients.items()}
    assert seen["jsonrpc"] == seen["rest"] == seen["grpc"]
    assert seen["rest"]["SendStreamingMessage"][0] == "task"
