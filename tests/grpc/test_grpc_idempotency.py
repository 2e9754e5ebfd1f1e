"""Idempotent SendMessage over gRPC: only a true repeat of a message is a duplicate."""

from __future__ import annotations

import pytest

from a2akit.generated import a2a_pb2 as pb
from tests.support.harness import GrpcHarness as Harness
from tests.support.messages import V1, send_request

pytestmark = pytest.mark.anyio


async def test_repeat_and_reuse_of_a_message_id(grpc_env: Harness) -> None:
    first, other = send_request("one"), send_request("two")
    first.message.message_id = other.message.message_id = "m"
    task_one = (await grpc_env.stub.SendMessage(first, metadata=V1)).task
    task_two = (await grpc_env.stub.SendMessage(other, metadata=V1)).task
    assert task_two.id != task_one.id
    assert task_two.artifacts[0].parts[0].text == "two"
    repeat = (await grpc_env.stub.SendMessage(first, metadata=V1)).task
    assert repeat.id == task_one.id
    listed = await grpc_env.stub.ListTasks(pb.ListTasksRequest(), metadata=V1)
    assert listed.total_size == 2
