"""The shape of the operation table: an rpc answered with one message (`Unary`) or with a
stream of StreamResponse messages (`Streaming`), and `check_table`, which refuses a table
that differs from the A2A service in the proto. The table itself is
`a2akit.operations.OPERATIONS`."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from google.protobuf.message import Message

from a2akit.generated import a2a_pb2 as pb

if TYPE_CHECKING:
    from a2akit.caller import Call

__all__ = ["Operation", "Streaming", "Unary", "check_table"]

Req = TypeVar("Req", bound=Message)
Res = TypeVar("Res", bound=Message)


@dataclasses.dataclass(frozen=True)
class Unary(Generic[Req, Res]):
    """An rpc answered with one message."""

    name: str  # the rpc name, which is also the JSON-RPC method name
    request: type[Req]
    response: type[Res]
    # (operations, request, call): the first is `a2akit.operations.Operations`, which imports
    # this module, so it is not named here.
    handler: Callable[[Any, Req, Call], Awaitable[Res]]
    streaming = False


@dataclasses.dataclass(frozen=True)
class Streaming(Generic[Req]):
    """An rpc answered with a stream of StreamResponse messages."""

    name: str
    request: type[Req]
    handler: Callable[[Any, Req, Call], Awaitable[AsyncIterator[pb.StreamResponse]]]
    response = pb.StreamResponse
    streaming = True


Operation = Unary[Any, Any] | Streaming[Any]


def check_table(*operations: Operation) -> dict[str, Operation]:
    """Index the entries by name, refusing any that differ from the service in the proto."""
    service = pb.DESCRIPTOR.services_by_name["A2AService"]
    table = {op.name: op for op in operations}
    declared = {m.name: m for m in service.methods}
    if table.keys() != declared.keys():
        raise RuntimeError(f"OPERATIONS differ from {service.full_name}: "
                           f"{sorted(table.keys() ^ declared.keys())}")
    for name, op in table.items():
        method = declared[name]
        if (op.request.DESCRIPTOR is not method.input_type
                or op.response.DESCRIPTOR is not method.output_type
                or op.streaming != method.server_streaming):
            raise RuntimeError(f"OPERATIONS[{name!r}] does not match {method.full_name}")
    return table
