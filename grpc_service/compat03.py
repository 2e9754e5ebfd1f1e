"""The A2A 0.3 gRPC service, `a2a.v1.A2AService` (late 0.3 revision), beside lf.a2a.v1 in the
same server (grpc_service.server): the ten 0.3 rpcs over `Calls03`, so over the same
operations, auth, limits, health and reflection as 1.0.

What differs from the 1.0 service is the family's version rule (an `a2a-version` metadata
value must be absent, empty or 0.3: `check_legacy_version`) and how errors read: the
catalogue's status code and details trailer, with the message `"<0.3 type name>: <message>"`
(a2akit.compat03.errors). Undecodable bytes are INVALID_ARGUMENT, as on 1.0.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from google.protobuf import empty_pb2
from google.protobuf.message_factory import GetMessageClass

from a2akit.caller import Call
from a2akit.compat03.calls import Calls03
from a2akit.compat03.errors import grpc_status
from a2akit.generated import a2a_v0_3_pb2 as pb03
from a2akit.operations import Operations
from a2akit.service_params import LEGACY_VERSION
from grpc_service.binding import Binding, Message

__all__ = ["SERVICE_NAME", "method_handlers"]

_SERVICE = pb03.DESCRIPTOR.services_by_name["A2AService"]
SERVICE_NAME: str = _SERVICE.full_name

_Run = Callable[[Any, Call], Awaitable[Message]]
_Start = Callable[[Any, Call], Awaitable[AsyncIterator[Message]]]


def _serialize(message: Message) -> bytes:
    data: bytes = message.SerializeToString()
    return data


def method_handlers(operations: Operations) -> dict[str, grpc.RpcMethodHandler]:
    """A handler for each rpc of the 0.3 service; refuses to build if the table and the
    service in the proto differ."""
    calls = Calls03(operations)
    binding = Binding(operations, protocol_version=LEGACY_VERSION, render=grpc_status)

    async def delete(request: pb03.DeleteTaskPushNotificationConfigRequest,
                     call: Call) -> empty_pb2.Empty:
        await calls.delete_push_config(request, call)
        return empty_pb2.Empty()

    async def agent_card(request: pb03.GetAgentCardRequest, call: Call) -> pb03.AgentCard:
        return await calls.get_agent_card(call)

    unary: dict[str, _Run] = {
        "SendMessage": calls.send_message,
        "GetTask": calls.get_task,
        "CancelTask": calls.cancel_task,
        "CreateTaskPushNotificationConfig": calls.create_push_config,
        "GetTaskPushNotificationConfig": calls.get_push_config,
        "ListTaskPushNotificationConfig": calls.list_push_configs,
        "DeleteTaskPushNotificationConfig": delete,
        "GetAgentCard": agent_card,
    }
    streaming: dict[str, _Start] = {
        "SendStreamingMessage": calls.send_streaming_message,
        "TaskSubscription": calls.task_subscription,
    }
    declared = {method.name: method for method in _SERVICE.methods}
    if declared.keys() != unary.keys() | streaming.keys() or any(
            declared[name].server_streaming != (name in streaming) for name in declared):
        raise RuntimeError(f"the 0.3 rpcs differ from {SERVICE_NAME}")
    handlers: dict[str, grpc.RpcMethodHandler] = {}
    for name, method in declared.items():
        request_type = GetMessageClass(method.input_type)
        if name in streaming:
            handlers[name] = grpc.unary_stream_rpc_method_handler(
                binding.streaming(name, request_type, streaming[name]),
                response_serializer=_serialize)
        else:
            handlers[name] = grpc.unary_unary_rpc_method_handler(
                binding.unary(name, request_type, unary[name]), response_serializer=_serialize)
    return handlers
