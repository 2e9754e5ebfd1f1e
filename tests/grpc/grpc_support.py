"""Helpers and fixtures: a real grpc.aio server on a loopback port, one in-process core."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from a2akit.examples.echo import agent as echo_agent
from a2akit.generated import a2a_pb2 as pb
from a2akit.runtime import build_operations
from a2akit.settings import Settings
from a2akit.store.memory import MemoryStore
from grpc_service.generated import a2a_pb2_grpc
from grpc_service.server import serve, shutdown

V1 = (("a2a-version", "1.0"),)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclasses.dataclass
class Harness:
    server: Any
    port: int
    channel: grpc.aio.Channel
    stub: a2a_pb2_grpc.A2AServiceStub
    ops: Any


Start = Callable[..., Awaitable[Harness]]


@pytest.fixture
async def start() -> AsyncIterator[Start]:
    """start(agent=..., store=..., **settings) -> a running server with a connected stub."""
    running: list[Harness] = []

    async def _start(agent: Any = echo_agent, store: Any = None, **overrides: Any) -> Harness:
        values: dict[str, Any] = {"allow_anonymous": True, "push_notifications": True}
        values.update(overrides)
        settings = Settings(**values)
        ops = build_operations(settings, store=store or MemoryStore(), agent=agent)
        server, port = await serve(settings, ops, port=0, host="127.0.0.1")
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        harness = Harness(server, port, channel, a2a_pb2_grpc.A2AServiceStub(channel), ops)
        running.append(harness)
        return harness

    yield _start
    for harness in running:
        await harness.channel.close()
        await shutdown(harness.server, 0)


@pytest.fixture
async def grpc_env(start: Start) -> Harness:
    return await start()


def user_message(text: str, **fields: Any) -> pb.Message:
    return pb.Message(message_id=str(uuid.uuid4()), role=pb.ROLE_USER,
                      parts=[pb.Part(text=text)], **fields)


def send_request(text: str, **fields: Any) -> pb.SendMessageRequest:
    return pb.SendMessageRequest(message=user_message(text, **fields))


@dataclasses.dataclass
class Failure:
    code: grpc.StatusCode
    message: str
    status: status_pb2.Status
    info: error_details_pb2.ErrorInfo
    bad_request: error_details_pb2.BadRequest | None


def failure(error: grpc.aio.AioRpcError) -> Failure:
    """The rich status a failed call carried in grpc-status-details-bin."""
    status = rpc_status.from_call(error)
    assert status is not None, f"no status details in {error!r}"
    info = error_details_pb2.ErrorInfo()
    assert status.details and status.details[0].Unpack(info), "ErrorInfo must come first"
    bad = None
    for detail in status.details[1:]:
        candidate = error_details_pb2.BadRequest()
        if detail.Unpack(candidate):
            bad = candidate
    return Failure(error.code(), error.details() or "", status, info, bad)
