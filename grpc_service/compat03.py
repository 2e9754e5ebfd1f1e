"""The A2A 0.3 gRPC service, `a2a.v1.A2AService` (late 0.3 revision), beside lf.a2a.v1 in the
same server (grpc_service.server): the ten 0.3 rpcs over `Calls03`, so over the same
operations, auth, limits, health and reflection as 1.0.

What differs from the 1.0 service is the family's version rule (an `a2a-version` metadata
value must be absent, empty or 0.3: `check_legacy_version`) and how errors read: the
catalogue's status code and details trailer, with the message `"<0.3 type name>: <message>"`
(a2akit.compat03.errors). Undecodable bytes are INVALID_ARGUMENT, as on 1.0.
"""

from __future__ import annotations

import functools

import grpc

from a2akit.compat03.calls import Calls03
from a2akit.compat03.errors import grpc_status
from a2akit.compat03.table import BY_RPC
from a2akit.generated import a2a_v0_3_pb2 as pb03
from a2akit.operations import Operations
from a2akit.service_params import LEGACY_VERSION
from grpc_service.binding import Binding, Message

__all__ = ["SERVICE_NAME", "method_handlers"]

SERVICE_NAME: str = pb03.DESCRIPTOR.services_by_name["A2AService"].full_name


def _serialize(message: Message) -> bytes:
    data: bytes = message.SerializeToString()
    return data


def method_handlers(operations: Operations) -> dict[str, grpc.RpcMethodHandler]:
    """A handler for each rpc of the 0.3 service, from the one 0.3 table
    (a2akit.compat03.table, checked against the proto there)."""
    calls = Calls03(operations)
    binding = Binding(operations, protocol_version=LEGACY_VERSION, render=grpc_status)
    handlers: dict[str, grpc.RpcMethodHandler] = {}
    for name, operation in BY_RPC.items():
        if operation.streaming:
            handlers[name] = grpc.unary_stream_rpc_method_handler(
                binding.streaming(name, operation.request, functools.partial(operation.run, calls)),
                response_serializer=_serialize)
        else:
            handlers[name] = grpc.unary_unary_rpc_method_handler(
                binding.unary(name, operation.request, functools.partial(operation.run, calls)),
                response_serializer=_serialize)
    return handlers

