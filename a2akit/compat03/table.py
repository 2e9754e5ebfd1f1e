"""The ten A2A 0.3 operations, written once: the gRPC rpc of `a2a.v1.A2AService`, the
JSON-RPC method that names the same operation (facts 2.2), the request message, whether the
answer is a stream, and the `Calls03` method that runs it. Both 0.3 bindings are built from
this table (grpc_service.compat03, http_service.jsonrpc03), and `check_table03` refuses a
table that differs from the 0.3 proto's service, as `a2akit.rpc.check_table` does for 1.0.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from google.protobuf.message import Message

from a2akit.compat03.calls import Calls03
from a2akit.generated import a2a_v0_3_pb2 as pb03

__all__ = ["BY_METHOD", "BY_RPC", "Operation03", "check_table03"]


@dataclasses.dataclass(frozen=True)
class Operation03:
    rpc: str  # the rpc name in the 0.3 proto's A2AService
    method: str  # the JSON-RPC 0.3 method name
    request: type[Message]
    streaming: bool
    # Calls03's method: (calls, request, call, **binding options) -> the 0.3 answer, or an
    # async iterator of 0.3 StreamResponse messages when `streaming`.
    run: Callable[..., Awaitable[Any]]


def check_table03(*operations: Operation03) -> Mapping[str, Operation03]:
    """Index the entries by rpc name, refusing any that differ from the 0.3 proto's service."""
    service = pb03.DESCRIPTOR.services_by_name["A2AService"]
    table = {op.rpc: op for op in operations}
    declared = {m.name: m for m in service.methods}
    if table.keys() != declared.keys() or len({op.method for op in operations}) != len(table):
        raise RuntimeError(f"the 0.3 operations differ from {service.full_name}: "
                           f"{sorted(table.keys() ^ declared.keys())}")
    for name, op in table.items():
        method = declared[name]
        if (op.request.DESCRIPTOR is not method.input_type
                or op.streaming != method.server_streaming):
            raise RuntimeError(f"the 0.3 operation {name!r} does not match {method.full_name}")
    return table


BY_RPC = check_table03(
    Operation03("SendMessage", "message/send", pb03.SendMessageRequest, False,
                Calls03.send_message),
    Operation03("SendStreamingMessage", "message/stream", pb03.SendMessageRequest, True,
                Calls03.send_streaming_message),
    Operation03("GetTask", "tasks/get", pb03.GetTaskRequest, False, Calls03.get_task),
    Operation03("CancelTask", "tasks/cancel", pb03.CancelTaskRequest, False,
                Calls03.cancel_task),
    Operation03("TaskSubscription", "tasks/resubscribe", pb03.TaskSubscriptionRequest, True,
                Calls03.task_subscription),
    Operation03("CreateTaskPushNotificationConfig", "tasks/pushNotificationConfig/set",
                pb03.CreateTaskPushNotificationConfigRequest, False,
                Calls03.create_push_config),
    Operation03("GetTaskPushNotificationConfig", "tasks/pushNotificationConfig/get",
                pb03.GetTaskPushNotificationConfigRequest, False, Calls03.get_push_config),
    Operation03("ListTaskPushNotificationConfig", "tasks/pushNotificationConfig/list",
                pb03.ListTaskPushNotificationConfigRequest, False, Calls03.list_push_configs),
    Operation03("DeleteTaskPushNotificationConfig", "tasks/pushNotificationConfig/delete",
                pb03.DeleteTaskPushNotificationConfigRequest, False,
                Calls03.delete_push_config),
    # JSON-RPC's name says "authenticated extended": a binding option makes it answer 1.0's
    # error rather than the public card (http_service.jsonrpc03).
    Operation03("GetAgentCard", "agent/getAuthenticatedExtendedCard", pb03.GetAgentCardRequest,
                False, Calls03.get_agent_card),
)
BY_METHOD: Mapping[str, Operation03] = {op.method: op for op in BY_RPC.values()}
