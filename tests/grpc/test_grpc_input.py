"""Bytes a hostile or broken gRPC client may send: clean INVALID_ARGUMENT answers."""

from __future__ import annotations

import grpc
import pytest

from a2akit.generated import a2a_pb2 as pb
from a2akit.runtime import StartupError
from a2akit.settings import Settings
from grpc_service.server import SERVICE_NAME, serve
from tests.support.errors import grpc_failure as failure
from tests.support.harness import GrpcHarness as Harness
from tests.support.harness import Start
from tests.support.messages import V1, send_request

pytestmark = pytest.mark.anyio


async def _raw(env: Harness, method: str, payload: bytes) -> grpc.aio.AioRpcError:
    call = env.channel.unary_unary(f"/{SERVICE_NAME}/{method}")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call(payload, metadata=V1)
    return caught.value


def _nested(depth: int) -> bytes:
    """A Struct-in-Value chain `depth` levels deep, as SendMessageRequest.metadata."""
    inner = b""
    for _ in range(depth):
        value = b"\x2a" + _varint(len(inner)) + inner  # Value.struct_value (field 5)
        entry = b"\x0a\x01k" + b"\x12" + _varint(len(value)) + value  # map entry k -> value
        inner = b"\x0a" + _varint(len(entry)) + entry  # Struct.fields (field 1)
    return b"\x22" + _varint(len(inner)) + inner  # SendMessageRequest.metadata (field 4)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


@pytest.mark.parametrize("payload", [
    pytest.param(b"\xff\xff\xff\xff", id="garbage"),
    pytest.param(send_request("hello").SerializeToString()[:-3], id="truncated"),
    pytest.param(b"\x0a\x03\xff\xfe\xfd", id="invalid-utf8-string"),
    pytest.param(_nested(200), id="deep-nesting"),
])
async def test_malformed_protobuf_is_a_parse_error(grpc_env: Harness, payload: bytes) -> None:
    method = "GetTask" if payload.startswith(b"\x0a\x03") else "SendMessage"
    error = await _raw(grpc_env, method, payload)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    found = failure(error)
    assert found.info.reason == "PARSE_ERROR"  # the reason JSON-RPC's -32700 carries
    assert "DecodeError" not in (error.details() or "")


async def test_undefined_enum_number_is_invalid_params(grpc_env: Harness) -> None:
    request = send_request("hello")
    request.message.role = 99  # type: ignore[assignment]
    error = await _raw(grpc_env, "SendMessage", request.SerializeToString())
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    found = failure(error)
    assert found.info.reason == "INVALID_PARAMS"
    assert found.bad_request is not None
    assert [v.field for v in found.bad_request.field_violations] == ["message.role"]
    # Nothing was stored: the caller has no tasks.
    listed = await grpc_env.stub.ListTasks(pb.ListTasksRequest(), metadata=V1)
    assert list(listed.tasks) == []


async def test_undefined_enum_in_a_list_filter_is_invalid_params(grpc_env: Harness) -> None:
    error = await _raw(grpc_env, "ListTasks", pb.ListTasksRequest(status=42).SerializeToString())
    assert failure(error).info.reason == "INVALID_PARAMS"


async def test_a_used_port_is_refused(start: Start) -> None:
    env = await start()
    with pytest.raises(StartupError, match="cannot bind"):
        await serve(Settings(allow_anonymous=True), env.ops, port=env.port, host="127.0.0.1")
