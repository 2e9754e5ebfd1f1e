"""What the 0.3 gRPC tests share (tests/grpc/conftest.py starts the servers): both A2A
services on one port, with a stub of each generation on one channel, and 0.3 requests."""

from __future__ import annotations

import contextlib
import dataclasses
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
import pytest

from a2akit.generated import a2a_v0_3_pb2 as pb03
from a2akit.operations import Operations
from grpc_service.generated import a2a_pb2_grpc, a2a_v0_3_pb2_grpc
from tests.support.harness import GrpcHarness, grpc_server

__all__ = ["Env03", "Start03", "error_of", "open_env03", "send03", "stream_error_of"]


@dataclasses.dataclass(frozen=True)
class Env03:
    harness: GrpcHarness
    stub: a2a_v0_3_pb2_grpc.A2AServiceStub  # a2a.v1: the 0.3 service
    stub10: a2a_pb2_grpc.A2AServiceStub  # lf.a2a.v1, on the same channel

    @property
    def channel(self) -> grpc.aio.Channel:
        return self.harness.channel


Start03 = Callable[..., Awaitable[Env03]]


@contextlib.asynccontextmanager
async def open_env03(ops: Operations) -> AsyncIterator[Env03]:
    """The gRPC server over `ops` (tests.support.harness.grpc_server) with both stubs."""
    async with grpc_server(ops) as harness:
        stub = a2a_v0_3_pb2_grpc.A2AServiceStub(harness.channel)  # type: ignore[no-untyped-call]
        yield Env03(harness, stub, harness.stub)


def send03(text: str = "hello", *, blocking: bool | None = True, task_id: str = "",
           context_id: str = "") -> pb03.SendMessageRequest:
    """A 0.3 SendMessageRequest with one text part and a fresh message id. `blocking`: the
    configuration's flag (None: no configuration at all)."""
    request = pb03.SendMessageRequest(request=pb03.Message(
        message_id=str(uuid.uuid4()), role=pb03.ROLE_USER, task_id=task_id,
        context_id=context_id, content=[pb03.Part(text=text)]))
    if blocking is not None:
        request.configuration.blocking = blocking
    return request


async def error_of(awaitable: Any) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await awaitable
    return caught.value


async def stream_error_of(call: Any) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        async for _ in call:
            pass
    return caught.value
