"""The operation table: one entry per rpc of the proto's service, each matching it."""

from __future__ import annotations

import dataclasses

import pytest

from a2akit.generated import a2a_pb2 as pb
from a2akit.operations import _ENTRIES, OPERATIONS, Operations
from a2akit.rpc import Unary, check_table


def test_every_rpc_has_an_entry_of_its_own_shape() -> None:
    service = pb.DESCRIPTOR.services_by_name["A2AService"]
    assert sorted(OPERATIONS) == sorted(m.name for m in service.methods)
    for method in service.methods:
        op = OPERATIONS[method.name]
        assert op.request.DESCRIPTOR is method.input_type
        assert op.response.DESCRIPTOR is method.output_type
        assert op.streaming == method.server_streaming


def test_a_missing_rpc_is_refused() -> None:
    with pytest.raises(RuntimeError, match="GetExtendedAgentCard"):
        check_table(*_ENTRIES[:-1])


def test_an_entry_with_the_wrong_types_is_refused() -> None:
    wrong = Unary("GetTask", pb.ListTasksRequest, pb.ListTasksResponse, Operations.list_tasks)
    entries = [wrong if op.name == "GetTask" else op for op in _ENTRIES]
    with pytest.raises(RuntimeError, match="GetTask"):
        check_table(*entries)


def test_a_unary_entry_for_a_streaming_rpc_is_refused() -> None:
    subscribe = OPERATIONS["SubscribeToTask"]
    wrong = Unary("SubscribeToTask", subscribe.request, pb.StreamResponse, Operations.get_task)
    entries = [wrong if op.name == "SubscribeToTask" else op for op in _ENTRIES]
    with pytest.raises(RuntimeError, match="SubscribeToTask"):
        check_table(*entries)


def test_entries_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        OPERATIONS["GetTask"].name = "Other"  # type: ignore[misc]
