"""The core's request checks and limits over gRPC: the same rules and errors as on JSON-RPC
(tests/jsonrpc/test_hostile_input.py), since both bindings share them."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from google.protobuf import struct_pb2

from a2akit.examples.echo import EchoAgent
from a2akit.generated import a2a_pb2 as pb
from a2akit.limits import (
    MAX_HISTORY_LENGTH,
    MAX_ID_BYTES,
    MAX_METADATA_BYTES,
    MAX_METADATA_DEPTH,
    MAX_PARTS_PER_MESSAGE,
)
from a2akit.runtime import build_operations
from a2akit.store.dynamodb import DynamoDBStore
from tests.support.dynamodb import refusing_client
from tests.support.errors import grpc_failure
from tests.support.harness import ANON, GrpcHarness, grpc_server
from tests.support.messages import V1, proto_message, send_request

pytestmark = pytest.mark.anyio

LONG = "x" * (MAX_ID_BYTES + 1)


def _code(status: grpc.StatusCode) -> int:
    return int(status.value[0])


async def _invalid(call: Any) -> dict[str, str]:
    """The call fails INVALID_PARAMS; its BadRequest violations by field."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    found = grpc_failure(caught.value)
    assert found.code == _code(grpc.StatusCode.INVALID_ARGUMENT), found
    assert found.info.reason == "INVALID_PARAMS"
    assert found.bad_request is not None
    return {v.field: v.description for v in found.bad_request.field_violations}


async def _nothing_stored(env: GrpcHarness) -> None:
    listed = await env.stub.ListTasks(pb.ListTasksRequest(), metadata=V1)
    assert listed.total_size == 0


def _deep_struct(depth: int) -> struct_pb2.Struct:
    top = struct_pb2.Struct()
    node = top
    for _ in range(depth - 1):
        node = node.fields["a"].struct_value
    node.fields["a"].number_value = 1
    return top


@pytest.mark.parametrize(("rpc", "request_", "field"), [
    ("GetTask", pb.GetTaskRequest(id=LONG), "id"),
    ("GetTask", pb.GetTaskRequest(id="é" * (MAX_ID_BYTES // 2 + 1)), "id"),
    ("GetTask", pb.GetTaskRequest(id="x", tenant="t" * 3000), "tenant"),
    ("CancelTask", pb.CancelTaskRequest(id=LONG), "id"),
    ("ListTasks", pb.ListTasksRequest(context_id=LONG), "context_id"),
    ("GetTaskPushNotificationConfig",
     pb.GetTaskPushNotificationConfigRequest(task_id=LONG, id="c"), "task_id"),
    ("DeleteTaskPushNotificationConfig",
     pb.DeleteTaskPushNotificationConfigRequest(task_id="t", id=LONG), "id"),
    ("CreateTaskPushNotificationConfig",
     pb.TaskPushNotificationConfig(task_id="t", id=LONG, url="https://93.184.216.34/h"), "id"),
    ("SendMessage", send_request("x", message_id=LONG), "message.message_id"),
    ("SendMessage", send_request("x", context_id=LONG), "message.context_id"),
    ("SendMessage", send_request("x", reference_task_ids=["ok", LONG]),
     "message.reference_task_ids[1]"),
])
async def test_ids_over_the_limit(grpc_env: GrpcHarness, rpc: str, request_: Any,
                                  field: str) -> None:
    violations = await _invalid(getattr(grpc_env.stub, rpc)(request_, metadata=V1))
    assert str(MAX_ID_BYTES) in violations[field]
    await _nothing_stored(grpc_env)


async def test_streaming_ids_over_the_limit(grpc_env: GrpcHarness) -> None:
    call = grpc_env.stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=LONG), metadata=V1)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        async for _ in call:
            pass
    found = grpc_failure(caught.value)
    assert found.bad_request is not None
    assert [v.field for v in found.bad_request.field_violations] == ["id"]


async def test_id_at_the_limit_is_echoed_in_full(grpc_env: GrpcHarness) -> None:
    request = send_request("x", task_id="t" * MAX_ID_BYTES)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await grpc_env.stub.SendMessage(request, metadata=V1)
    found = grpc_failure(caught.value)
    assert found.info.reason == "TASK_NOT_FOUND"
    assert dict(found.info.metadata) == {"taskId": "t" * MAX_ID_BYTES}




@pytest.mark.parametrize(("request_", "field", "limit"), [
    (send_request("x", parts=[pb.Part(text="p")] * (MAX_PARTS_PER_MESSAGE + 1)), "message.parts",
     MAX_PARTS_PER_MESSAGE),
    (send_request("x", metadata=struct_pb2.Struct(fields={
        "k": struct_pb2.Value(string_value="v" * MAX_METADATA_BYTES)})),
     "message.metadata", MAX_METADATA_BYTES),
    (pb.SendMessageRequest(message=proto_message("x"), metadata=_deep_struct(
        MAX_METADATA_DEPTH + 1)), "metadata", MAX_METADATA_DEPTH),
])
async def test_request_limits(grpc_env: GrpcHarness, request_: Any, field: str,
                              limit: int) -> None:
    violations = await _invalid(grpc_env.stub.SendMessage(request_, metadata=V1))
    assert str(limit) in violations[field]
    await _nothing_stored(grpc_env)


async def test_limits_are_inclusive(grpc_env: GrpcHarness) -> None:
    request = send_request("x", parts=[pb.Part(text="p")] * MAX_PARTS_PER_MESSAGE)
    request.metadata.CopyFrom(_deep_struct(MAX_METADATA_DEPTH))
    request.configuration.history_length = MAX_HISTORY_LENGTH
    response = await grpc_env.stub.SendMessage(request, metadata=V1)
    assert response.task.status.state == pb.TASK_STATE_COMPLETED


async def test_negative_history_length_on_reads(grpc_env: GrpcHarness) -> None:
    for rpc, request in (("GetTask", pb.GetTaskRequest(id="x")),
                         ("ListTasks", pb.ListTasksRequest())):
        request.history_length = -1
        violations = await _invalid(getattr(grpc_env.stub, rpc)(request, metadata=V1))
        assert ">= 0" in violations["history_length"]


@pytest.mark.parametrize("parts", [[pb.Part()], [pb.Part(text="ok"), pb.Part(media_type="a/b")]])
async def test_part_without_content(grpc_env: GrpcHarness, parts: list[pb.Part]) -> None:
    violations = await _invalid(grpc_env.stub.SendMessage(send_request("x", parts=parts),
                                                          metadata=V1))
    assert f"message.parts[{len(parts) - 1}]" in violations
    await _nothing_stored(grpc_env)


@pytest.mark.parametrize("version", ["1.1", "1.2.0", "1", "2.0"])
async def test_other_minor_versions_are_refused(grpc_env: GrpcHarness, version: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await grpc_env.stub.GetTask(pb.GetTaskRequest(id="x"),
                                    metadata=(("a2a-version", version),))
    found = grpc_failure(caught.value)
    assert found.code == _code(grpc.StatusCode.FAILED_PRECONDITION)
    assert found.info.reason == "VERSION_NOT_SUPPORTED"


async def test_1_0_with_patch_is_accepted(grpc_env: GrpcHarness) -> None:
    for version in ("1.0", "1.0.0", "1.0.7"):
        response = await grpc_env.stub.SendMessage(send_request("x"),
                                                   metadata=(("a2a-version", version),))
        assert response.task.status.state == pb.TASK_STATE_COMPLETED


async def test_unavailable_store_is_retryable() -> None:
    with refusing_client() as client:
        ops = build_operations(ANON, store=DynamoDBStore("a2akit-unreachable", client),
                               agent=EchoAgent())
        async with grpc_server(ops) as env:
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await env.stub.GetTask(pb.GetTaskRequest(id="x"), metadata=V1)
    found = grpc_failure(caught.value)
    assert found.code == _code(grpc.StatusCode.UNAVAILABLE)
    assert found.info.reason == "UNAVAILABLE"
    assert dict(found.info.metadata) == {"retryable": "true"}
