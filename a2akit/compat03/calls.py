"""The ten A2A 0.3 operations over the 1.0 `Operations`: pb03 in, pb03 out.

Each converts its request with `convert`, runs the 1.0 operation through `Operations.unary`
or `Operations.stream` (the same authorization, validation, quotas, idempotency, logs and
metrics as a 1.0 call) and converts the answer back. Both 0.3 bindings use it: gRPC
(`grpc_service.compat03`) and JSON-RPC, which turns its JSON into these messages first.

Streaming methods, like `Operations.stream`, raise the errors found before the first event;
the stream they return is read with `async for` and closed with `aclose()`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from typing import Any

from google.protobuf import empty_pb2

from a2akit.caller import Call
from a2akit.compat03 import convert
from a2akit.compat03.card03 import from_core_card
from a2akit.errors import (
    AuthenticationRequiredError,
    ExtendedAgentCardNotConfiguredError,
    PermissionDeniedError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2akit.generated import a2a_pb2 as pb
from a2akit.generated import a2a_v0_3_pb2 as pb03
from a2akit.operations import OPERATIONS, Operations, Streaming, Unary
from a2akit.states import is_terminal

__all__ = ["Calls03"]

Stream03 = AsyncGenerator[pb03.StreamResponse, None]

# Why an extended card is not answered; GetAgentCard then answers the public card.
_NO_EXTENDED_CARD = (UnsupportedOperationError, ExtendedAgentCardNotConfiguredError,
                     AuthenticationRequiredError, PermissionDeniedError)


def _unary(name: str) -> Unary[Any, Any]:
    operation = OPERATIONS[name]
    assert isinstance(operation, Unary)
    return operation


def _streaming(name: str) -> Streaming[Any]:
    operation = OPERATIONS[name]
    assert isinstance(operation, Streaming)
    return operation


class Calls03:
    """The 0.3 service over `ops`. Every method raises the A2AError of the catalogue the 1.0
    operation raises, plus InvalidParamsError for 0.3 input with no 1.0 form (`convert`)."""

    def __init__(self, ops: Operations) -> None:
        self.ops = ops

    async def send_message(self, req: pb03.SendMessageRequest, call: Call, *,
                           reference_task_ids: Sequence[str] = ()) -> pb03.SendMessageResponse:
        """`reference_task_ids`: those 0.3 JSON-RPC carries (0.3 gRPC has no field, 5.3 #15).
        Blocking: see `convert.to_core_send_request`."""
        request = convert.to_core_send_request(req)
        request.message.reference_task_ids.extend(reference_task_ids)
        response = await self.ops.unary(_unary("SendMessage"), request, call)
        assert isinstance(response, pb.SendMessageResponse)
        return convert.from_core_send_response(response)

    async def send_streaming_message(self, req: pb03.SendMessageRequest, call: Call, *,
                                     reference_task_ids: Sequence[str] = ()
                                     ) -> AsyncIterator[pb03.StreamResponse]:
        """The message, or the task and then its events; `final` on the closing update."""
        request = convert.to_core_send_request(req)
        request.message.reference_task_ids.extend(reference_task_ids)
        events = await self.ops.stream(_streaming("SendStreamingMessage"), request, call)
        return _converted(events)

    async def get_task(self, req: pb03.GetTaskRequest, call: Call) -> pb03.Task:
        task = await self.ops.unary(_unary("GetTask"), convert.to_core_get_task(req), call)
        assert isinstance(task, pb.Task)
        return convert.from_core_task(task)

    async def cancel_task(self, req: pb03.CancelTaskRequest, call: Call) -> pb03.Task:
        task = await self.ops.unary(_unary("CancelTask"), convert.to_core_cancel_task(req),
                                    call)
        assert isinstance(task, pb.Task)
        return convert.from_core_task(task)

    async def task_subscription(self, req: pb03.TaskSubscriptionRequest, call: Call
                                ) -> AsyncIterator[pb03.StreamResponse]:
        """The task, then its events. On a finished task: that task, then the end, as the
        0.3 proto documents TaskSubscription (1.0 refuses it; REF's error is a gap,
        facts 2.7)."""
        request = convert.to_core_subscribe(req)
        try:
            events = await self.ops.stream(_streaming("SubscribeToTask"), request, call)
        except UnsupportedOperationError:
            # Raised for a finished task, and when streaming is off: only the first is
            # answered with the task.
            if not self.ops.card.capabilities.streaming:
                raise
            task = await self.ops.unary(_unary("GetTask"), pb.GetTaskRequest(id=request.id),
                                        call)
            assert isinstance(task, pb.Task)
            if not is_terminal(task.status.state):
                raise
            return _one(pb03.StreamResponse(task=convert.from_core_task(task)))
        return _converted(events)

    async def create_push_config(self, req: pb03.CreateTaskPushNotificationConfigRequest,
                                 call: Call) -> pb03.TaskPushNotificationConfig:
        config = await self.ops.unary(_unary("CreateTaskPushNotificationConfig"),
                                      convert.to_core_create_push_config(req), call)
        assert isinstance(config, pb.TaskPushNotificationConfig)
        return convert.from_core_push_config(config)

    async def get_push_config(self, req: pb03.GetTaskPushNotificationConfigRequest,
                              call: Call) -> pb03.TaskPushNotificationConfig:
        """A name without a config id asks for the task's default config: the one whose id
        is the task id (the default id), else the first (5.3 #10; REF refuses it)."""
        request = convert.to_core_get_push_config(req)
        operation = _unary("GetTaskPushNotificationConfig")
        if request.id:
            config = await self.ops.unary(operation, request, call)
        else:
            request.id = request.task_id
            try:
                config = await self.ops.unary(operation, request, call)
            except TaskNotFoundError:
                configs = await self._all_push_configs(request.task_id, call)
                if not configs:
                    raise
                config = configs[0]
        assert isinstance(config, pb.TaskPushNotificationConfig)
        return convert.from_core_push_config(config)

    async def list_push_configs(self, req: pb03.ListTaskPushNotificationConfigRequest,
                                call: Call) -> pb03.ListTaskPushNotificationConfigResponse:
        """Every config of the task, one answer (5.3 #11): 0.3 paging is not passed on."""
        request = convert.to_core_list_push_configs(req)
        configs = await self._all_push_configs(request.task_id, call)
        return pb03.ListTaskPushNotificationConfigResponse(
            configs=[convert.from_core_push_config(c) for c in configs])

    async def _all_push_configs(self, task_id: str, call: Call
                                ) -> list[pb.TaskPushNotificationConfig]:
        operation = _unary("ListTaskPushNotificationConfigs")
        request = pb.ListTaskPushNotificationConfigsRequest(task_id=task_id)
        configs: list[pb.TaskPushNotificationConfig] = []
        while True:
            page = await self.ops.unary(operation, request, call)
            assert isinstance(page, pb.ListTaskPushNotificationConfigsResponse)
            configs.extend(page.configs)
            if not page.next_page_token or page.next_page_token == request.page_token:
                return configs
            request.page_token = page.next_page_token

    async def delete_push_config(self, req: pb03.DeleteTaskPushNotificationConfigRequest,
                                 call: Call) -> empty_pb2.Empty:
        await self.ops.unary(_unary("DeleteTaskPushNotificationConfig"),
                             convert.to_core_delete_push_config(req), call)
        return empty_pb2.Empty()

    async def get_agent_card(self, req: pb03.GetAgentCardRequest, call: Call, *,
                             public_fallback: bool = True) -> pb03.AgentCard:
        """The extended card when the agent has one and this caller may read it; else the
        public card (`public_fallback`, gRPC GetAgentCard: 0.3 SDK servers answered the
        public card there, facts 3.4) or the 1.0 error (JSON-RPC, -32007 and the like)."""
        try:
            card = await self.ops.unary(_unary("GetExtendedAgentCard"),
                                        pb.GetExtendedAgentCardRequest(), call)
        except _NO_EXTENDED_CARD:
            if not public_fallback:
                raise
            card = self.ops.card
        assert isinstance(card, pb.AgentCard)
        if not card.supported_interfaces:
            # An extended card the agent wrote without addresses: the public card's.
            with_interfaces = pb.AgentCard()
            with_interfaces.CopyFrom(card)
            with_interfaces.supported_interfaces.extend(self.ops.card.supported_interfaces)
            card = with_interfaces
        return from_core_card(card)


async def _converted(events: AsyncIterator[pb.StreamResponse]) -> Stream03:
    try:
        async for event in events:
            yield convert.from_core_stream_response(event)
    finally:
        # The reader went away or the stream ended: close the core's stream now, not when
        # the garbage collector gets to it (its agent's task is not ours to cancel).
        await events.aclose()  # type: ignore[attr-defined]


async def _one(event: pb03.StreamResponse) -> Stream03:
    yield event
