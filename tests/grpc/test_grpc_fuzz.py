"""Property-based: random and mutated protobuf bytes to every rpc of a real gRPC server, on
both A2A services (1.0 and 0.3). Every answer is a result or a clean A2A error (ErrorInfo in
the status details): never INTERNAL, UNKNOWN or a hang, and nothing half-written is left in
the store."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2akit.generated import a2a_pb2 as pb
from a2akit.generated import a2a_v0_3_pb2 as pb03
from a2akit.operations import OPERATIONS
from a2akit.states import apply_event
from a2akit.store.base import Scope
from grpc_service.compat03 import SERVICE_NAME as SERVICE_03
from grpc_service.server import SERVICE_NAME
from tests.support.errors import grpc_failure
from tests.support.harness import (
    GrpcHarness,
    background_loop,
    end_tasks,
    grpc_server,
    memory_operations,
)
from tests.support.messages import V1, send_request

_NOT_CLEAN = {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN,
              grpc.StatusCode.DEADLINE_EXCEEDED}
_VALID = send_request("hello").SerializeToString()
_VALID_03 = pb03.SendMessageRequest(request=pb03.Message(
    message_id="m-03", role=pb03.ROLE_USER, content=[pb03.Part(text="hello")]),
    configuration=pb03.SendMessageConfiguration(blocking=True)).SerializeToString()
_METHODS_03 = {m.name: m.server_streaming
               for m in pb03.DESCRIPTOR.services_by_name["A2AService"].methods}


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[GrpcHarness, asyncio.AbstractEventLoop]]:
    """One server for every example, on the suite's background loop (a thread of its own)."""
    loop = background_loop()
    running = grpc_server(memory_operations())
    harness = asyncio.run_coroutine_threadsafe(running.__aenter__(), loop).result(30)
    try:
        yield harness, loop
    finally:
        asyncio.run_coroutine_threadsafe(running.__aexit__(None, None, None), loop).result(30)
        asyncio.run_coroutine_threadsafe(end_tasks(), loop).result(30)


@st.composite
def _mutated(draw: st.DrawFn, valid: bytes = _VALID) -> bytes:
    data = bytearray(valid)
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data) - 1))
        data[at] = draw(st.integers(0, 255))
    return bytes(data)


_PAYLOADS = st.one_of(st.binary(max_size=300), _mutated())


@given(method=st.sampled_from(sorted(OPERATIONS)), payload=_PAYLOADS)
def test_any_bytes_get_a_clean_answer(server: tuple[GrpcHarness, Any], method: str,
                                      payload: bytes) -> None:
    harness, _ = server
    with grpc.insecure_channel(f"127.0.0.1:{harness.port}") as channel:
        path = f"/{SERVICE_NAME}/{method}"
        try:
            if OPERATIONS[method].streaming:
                for _ in channel.unary_stream(path)(payload, metadata=V1, timeout=10):
                    pass
            else:
                channel.unary_unary(path)(payload, metadata=V1, timeout=10)
        except grpc.RpcError as error:
            assert error.code() not in _NOT_CLEAN, (method, payload, error)
            assert grpc_failure(error).info.reason  # ErrorInfo first, as every A2A error


@given(method=st.sampled_from(sorted(_METHODS_03)),
       payload=st.one_of(st.binary(max_size=300), _mutated(_VALID_03)))
def test_any_bytes_get_a_clean_answer_on_the_03_service(
        server: tuple[GrpcHarness, Any], method: str, payload: bytes) -> None:
    harness, _ = server
    with grpc.insecure_channel(f"127.0.0.1:{harness.port}") as channel:
        path = f"/{SERVICE_03}/{method}"
        try:
            if _METHODS_03[method]:
                for _ in channel.unary_stream(path)(payload, timeout=10):
                    pass
            else:
                channel.unary_unary(path)(payload, timeout=10)
        except grpc.RpcError as error:
            assert error.code() not in _NOT_CLEAN, (method, payload, error)
            assert grpc_failure(error).info.reason
            # "<0.3 type name>: <message>", the form 0.3 clients read (facts 3.5)
            assert error.details().split(": ", 1)[0].endswith("Error"), error.details()


def test_the_store_holds_only_whole_tasks(server: tuple[GrpcHarness, Any]) -> None:
    """After the property above (file order; one valid request of its own besides): every
    stored task is the fold of its events, so no answer left a half-written task."""
    harness, loop = server
    store = harness.ops.store
    with grpc.insecure_channel(f"127.0.0.1:{harness.port}") as channel:  # one task at least
        channel.unary_unary(f"/{SERVICE_NAME}/SendMessage")(_VALID, metadata=V1, timeout=10)

    async def check() -> None:
        # The embedded store's records, keyed (tenant, owner, task id): fuzzed requests may
        # name any tenant, so every scope is read.
        for tenant, owner, task_id in list(store._tasks):
            scope = Scope(tenant=tenant, owner=owner)
            stored = await store.get(scope, task_id)
            assert stored is not None
            folded = pb.Task()
            for item in await store.events_after(scope, task_id, 0):
                apply_event(folded, item.event)
            assert folded == stored.task

    asyncio.run_coroutine_threadsafe(check(), loop).result(30)
