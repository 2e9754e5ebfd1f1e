"""The one table of the 0.3 operations (a2akit.compat03.table): checked against the 0.3
proto's service like the 1.0 table, and the source of both 0.3 bindings' method lists."""

from __future__ import annotations

import dataclasses

import pytest

from a2akit.compat03 import json03
from a2akit.compat03.table import BY_METHOD, BY_RPC, check_table03
from a2akit.generated import a2a_v0_3_pb2 as pb03
from a2akit.operations import Operations
from grpc_service import compat03
from tests.support.harness import memory_operations


def test_the_table_is_the_proto_service() -> None:
    service = pb03.DESCRIPTOR.services_by_name["A2AService"]
    assert set(BY_RPC) == {method.name for method in service.methods}
    assert set(BY_METHOD) == json03.METHODS


def test_a_missing_rpc_is_refused() -> None:
    with pytest.raises(RuntimeError, match="GetTask"):
        check_table03(*(op for op in BY_RPC.values() if op.rpc != "GetTask"))


@pytest.mark.parametrize("change", [
    {"request": pb03.CancelTaskRequest},  # another rpc's request
    {"streaming": True},
])
def test_an_entry_that_differs_from_its_rpc_is_refused(change: dict[str, object]) -> None:
    entries = [dataclasses.replace(op, **change) if op.rpc == "GetTask" else op  # type: ignore[arg-type]
               for op in BY_RPC.values()]
    with pytest.raises(RuntimeError, match="GetTask"):
        check_table03(*entries)


def test_two_rpcs_under_one_json_rpc_name_are_refused() -> None:
    entries = [dataclasses.replace(op, method="tasks/get") if op.rpc == "CancelTask" else op
               for op in BY_RPC.values()]
    with pytest.raises(RuntimeError):
        check_table03(*entries)


def test_the_grpc_service_serves_every_rpc_of_the_table() -> None:
    ops: Operations = memory_operations()
    assert set(compat03.method_handlers(ops)) == set(BY_RPC)
