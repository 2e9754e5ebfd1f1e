"""The eleven A2A operations, binding-independent.

Bindings decode a request into its protobuf message, call `unary()` or `stream()` with the
rpc name, and encode what comes back. `OPERATIONS` is derived from the service descriptor,
so the list of operations exists once, in the proto.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

from google.protobuf import empty_pb2
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass

from a2akit.agent import Agent, RequestContext
from a2akit.auth import ANONYMOUS
from a2akit.card import input_modes, streaming_enabled
from a2akit.clock import now, timestamp_ms
from a2akit.errors import (
    AuthenticationRequiredError,
    ContentTypeNotSupportedError,
    ExtendedAgentCardNotConfiguredError,
    ExtensionSupportRequiredError,
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2akit.generated import a2a_pb2 as pb
from a2akit.runner import Run
from a2akit.settings import Settings
from a2akit.states import ends_stream, is_terminal
from a2akit.store.base import Scope, StoredTask, TaskQuery, TaskStore, VersionConflictError
from a2akit.validation import check_history_length, check_request
from a2akit.webhooks import check_webhook_url

__all__ = ["OPERATIONS", "Call", "Operation", "Operations"]


@dataclasses.dataclass(frozen=True)
class Operation:
    name: str  # the rpc name, which is also the JSON-RPC method name
    request: type[Message]
    streaming: bool
    attribute: str  # the Operations method implementing it


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


OPERATIONS: dict[str, Operation] = {
    method.name: Operation(method.name, GetMessageClass(method.input_type),
                           method.server_streaming, _snake(method.name))
    for method in pb.DESCRIPTOR.services_by_name["A2AService"].methods
}


@dataclasses.dataclass(frozen=True)
class Call:
    """The caller of one request, as the binding resolved it."""

    owner: str
    extensions: tuple[str, ...] = ()

    def scope(self, tenant: str) -> Scope:
        return Scope(tenant=tenant, owner=self.owner)


def _not_found(task_id: str) -> TaskNotFoundError:
    return TaskNotFoundError(metadata={"taskId": task_id})


def _trim(task: pb.Task, history_length: int | None, *, artifacts: bool = True) -> pb.Task:
    """A copy for the caller: newest `history_length` messages, artifacts if asked."""
    out = pb.Task()
    out.CopyFrom(task)
    if history_length is not None and len(out.history) > history_length:
        kept = list(out.history)[len(out.history) - history_length:] if history_length else []
        del out.history[:]
        out.history.extend(kept)
    if not artifacts:
        del out.artifacts[:]
    return out


class Operations:
    def __init__(self, settings: Settings, store: TaskStore, agent: Agent,
                 card: pb.AgentCard) -> None:
        self.settings = settings
        self.store = store
        self.agent = agent
        self.card = card
        self._required_extensions = [e.uri for e in card.capabilities.extensions if e.required]

    # --- entry points for bindings ------------------------------------------------------------

    async def unary(self, name: str, request: Message, call: Call) -> Message:
        """Run a unary operation. Raises A2AError subclasses only for expected failures."""
        method: Callable[[Any, Call], Any] = getattr(self, OPERATIONS[name].attribute)
        self._check_call(request, call)
        result: Message = await method(request, call)
        return result

    async def stream(self, name: str, request: Message,
                     call: Call) -> AsyncIterator[pb.StreamResponse]:
        """Validate and start a streaming operation. Errors found before the first event are
        raised here, so a binding can answer them as a plain error response."""
        method: Callable[[Any, Call], Any] = getattr(self, OPERATIONS[name].attribute)
        self._check_call(request, call)
        events: AsyncIterator[pb.StreamResponse] = await method(request, call)
        return events

    def _check_call(self, request: Message, call: Call) -> None:
        for uri in self._required_extensions:
            if uri not in call.extensions:
                raise ExtensionSupportRequiredError(
                    f"This agent requires the extension {uri}", metadata={"extension": uri})
        check_request(request)

    # --- messages -------------------------------------------------------------------------------

    async def send_message(self, request: pb.SendMessageRequest,
                           call: Call) -> pb.SendMessageResponse:
        history = self._history(request)
        begun = await self._begin(request, call)
        if isinstance(begun, StoredTask):
            return pb.SendMessageResponse(task=_trim(begun.task, history))
        run = begun
        if request.configuration.return_immediately:
            await run.wait_started()
        else:
            await run.wait_settled(self.settings.stream_budget_seconds)
        return pb.SendMessageResponse(
            **await self._outcome(run, request, call, history))

    async def send_streaming_message(self, request: pb.SendMessageRequest,
                                     call: Call) -> AsyncIterator[pb.StreamResponse]:
        self._require_streaming()
        history = self._history(request)
        begun = await self._begin(request, call)
        if isinstance(begun, StoredTask):
            return self._tail(call.scope(request.tenant), begun, history)
        run = begun
        await run.wait_started()
        outcome = await self._outcome(run, request, call, history)
        if "message" in outcome:
            return _one(pb.StreamResponse(message=outcome["message"]))
        return self._run_events(run, history)

    def _history(self, request: pb.SendMessageRequest) -> int | None:
        if not request.HasField("configuration"):
            return None
        return check_history_length(request.configuration)

    async def _begin(self, request: pb.SendMessageRequest, call: Call) -> Run | StoredTask:
        """Check the message against its task, then start the agent. A repeated messageId
        returns the task the first one created or continued (idempotent SendMessage)."""
        scope = call.scope(request.tenant)
        message = pb.Message()
        message.CopyFrom(request.message)
        self._check_content_types(message)
        push = request.configuration.task_push_notification_config
        if request.configuration.HasField("task_push_notification_config"):
            self._require_push()
            await check_webhook_url(push.url)
        earlier = await self.store.find_message(scope, message.message_id)
        if earlier is not None:
            stored = await self.store.get(scope, earlier)
            if stored is not None:
                return stored
        stored = None
        if message.task_id:
            stored = await self.store.get(scope, message.task_id)
            if stored is None:
                raise _not_found(message.task_id)
            if is_terminal(stored.task.status.state):
                raise UnsupportedOperationError(
                    "The task is in a terminal state and accepts no more messages",
                    metadata={"taskId": message.task_id})
            if message.context_id and message.context_id != stored.task.context_id:
                raise InvalidParamsError(
                    "message.contextId does not match the task's contextId",
                    violations=[("message.context_id", "differs from the task's context id")])
            message.context_id = stored.task.context_id
        else:
            message.task_id = str(uuid.uuid4())
            message.context_id = message.context_id or str(uuid.uuid4())
        context = RequestContext(
            message=message, task=None if stored is None else stored.task,
            task_id=message.task_id, context_id=message.context_id, caller=scope,
            extensions=call.extensions,
            accepted_output_modes=tuple(request.configuration.accepted_output_modes),
            metadata=request.metadata)
        run = Run(self.store, self.agent, context, stored=stored)
        run.start()
        return run

    async def _outcome(self, run: Run, request: pb.SendMessageRequest, call: Call,
                       history: int | None) -> dict[str, Any]:
        scope = call.scope(request.tenant)
        if run.duplicate_of is not None:
            earlier = await self.store.get(scope, run.duplicate_of)
            if earlier is not None:
                return {"task": _trim(earlier.task, history)}
        if run.stored is None:
            if run.error is not None:
                raise run.error
            if run.reply_message is not None:
                return {"message": run.reply_message}
        assert run.stored is not None, "a run that ended without error or reply created a task"
        if request.configuration.HasField("task_push_notification_config"):
            config = pb.TaskPushNotificationConfig()
            config.CopyFrom(request.configuration.task_push_notification_config)
            config.task_id, config.tenant = run.stored.task.id, request.tenant
            config.id = config.id or str(uuid.uuid4())
            await self.store.put_push_config(scope, config)
        return {"task": _trim(run.stored.task, history)}

    async def _run_events(self, run: Run,
                          history: int | None) -> AsyncIterator[pb.StreamResponse]:
        yield pb.StreamResponse(task=_trim(run.first_snapshot, history))
        async for event in run.events(self.settings.stream_budget_seconds):
            yield event
            if event.HasField("status_update") and ends_stream(event.status_update.status.state):
                return

    async def _tail(self, scope: Scope, stored: StoredTask,
                    history: int | None) -> AsyncIterator[pb.StreamResponse]:
        """The task snapshot, then its events from the store as they are written by any
        process, until a new terminal or interrupted state (or the stream budget) ends it."""
        yield pb.StreamResponse(task=_trim(stored.task, history))
        if is_terminal(stored.task.status.state):
            return
        loop = asyncio.get_running_loop()
        budget = self.settings.stream_budget_seconds
        deadline = None if budget is None else loop.time() + budget
        seq = stored.last_seq
        while deadline is None or loop.time() < deadline:
            wait = 30.0 if deadline is None else max(deadline - loop.time(), 0.0)
            for item in await self.store.wait_events(scope, stored.task.id, seq, wait):
                seq = item.seq
                event = item.event
                if event.HasField("artifact_update"):
                    yield event
                elif event.HasField("status_update"):
                    yield event
                    if ends_stream(event.status_update.status.state):
                        return

    def _check_content_types(self, message: pb.Message) -> None:
        accepted = input_modes(self.agent)
        for part in message.parts:
            media = part.media_type
            if media and not any(_media_matches(media, mode) for mode in accepted):
                raise ContentTypeNotSupportedError(
                    f"This agent does not accept {media}", metadata={"mediaType": media})

    # --- tasks ----------------------------------------------------------------------------------

    async def get_task(self, request: pb.GetTaskRequest, call: Call) -> pb.Task:
        history = check_history_length(request)
        stored = await self._task(call.scope(request.tenant), request.id)
        return _trim(stored.task, history)

    async def list_tasks(self, request: pb.ListTasksRequest, call: Call) -> pb.ListTasksResponse:
        history = check_history_length(request)
        page_size = request.page_size if request.HasField("page_size") else 50
        if not 1 <= page_size <= 100:
            raise InvalidParamsError("pageSize must be between 1 and 100",
                                     violations=[("page_size", "must be between 1 and 100")])
        if request.status not in pb.TaskState.values():
            raise InvalidParamsError("status is not a TaskState",
                                     violations=[("status", "unknown task state")])
        after = None
        if request.HasField("status_timestamp_after"):
            after = timestamp_ms(request.status_timestamp_after)
        page = await self.store.list(call.scope(request.tenant), TaskQuery(
            context_id=request.context_id, state=request.status, status_after_ms=after,
            page_size=page_size, page_token=request.page_token))
        return pb.ListTasksResponse(
            tasks=[_trim(t, history, artifacts=request.include_artifacts) for t in page.tasks],
            next_page_token=page.next_page_token, page_size=page_size,
            total_size=page.total_size)

    async def cancel_task(self, request: pb.CancelTaskRequest, call: Call) -> pb.Task:
        scope = call.scope(request.tenant)
        for _ in range(20):
            stored = await self._task(scope, request.id)
            if is_terminal(stored.task.status.state):
                raise TaskNotCancelableError(
                    f"The task is already {pb.TaskState.Name(stored.task.status.state)}",
                    metadata={"taskId": request.id})
            task = pb.Task()
            task.CopyFrom(stored.task)
            if task.status.HasField("message"):
                task.history.append(task.status.message)
            task.status.CopyFrom(pb.TaskStatus(state=pb.TASK_STATE_CANCELED, timestamp=now()))
            event = pb.StreamResponse(status_update=pb.TaskStatusUpdateEvent(
                task_id=task.id, context_id=task.context_id, status=task.status))
            try:
                updated = await self.store.update(scope, task.id, stored.version, task, [event])
            except VersionConflictError:
                continue  # re-read: the runner wrote meanwhile; re-check the state machine
            return updated.task
        raise TaskNotCancelableError("The task kept changing; try again",
                                     metadata={"taskId": request.id})

    async def subscribe_to_task(self, request: pb.SubscribeToTaskRequest,
                                call: Call) -> AsyncIterator[pb.StreamResponse]:
        self._require_streaming()
        scope = call.scope(request.tenant)
        stored = await self._task(scope, request.id)
        if is_terminal(stored.task.status.state):
            raise UnsupportedOperationError(
                "The task is in a terminal state; there is nothing to subscribe to",
                metadata={"taskId": request.id})
        return self._tail(scope, stored, None)

    async def _task(self, scope: Scope, task_id: str) -> StoredTask:
        stored = await self.store.get(scope, task_id)
        if stored is None:
            raise _not_found(task_id)
        return stored

    # --- push notification configs --------------------------------------------------------------

    async def create_task_push_notification_config(
        self, request: pb.TaskPushNotificationConfig, call: Call
    ) -> pb.TaskPushNotificationConfig:
        self._require_push()
        if not request.task_id:
            raise InvalidParamsError("taskId is required",
                                     violations=[("task_id", "required field is missing")])
        scope = await self._push_scope(request.tenant, request.task_id, call)
        await check_webhook_url(request.url)
        config = pb.TaskPushNotificationConfig()
        config.CopyFrom(request)
        config.id = config.id or str(uuid.uuid4())
        await self.store.put_push_config(scope, config)
        return config

    async def _push_scope(self, tenant: str, task_id: str, call: Call) -> Scope:
        """Gate on the capability, then resolve the caller's task (TaskNotFoundError)."""
        self._require_push()
        scope = call.scope(tenant)
        await self._task(scope, task_id)
        return scope

    async def get_task_push_notification_config(
        self, request: pb.GetTaskPushNotificationConfigRequest, call: Call
    ) -> pb.TaskPushNotificationConfig:
        scope = await self._push_scope(request.tenant, request.task_id, call)
        config = await self.store.get_push_config(scope, request.task_id, request.id)
        if config is None:
            raise TaskNotFoundError("Push notification config not found",
                                    metadata={"taskId": request.task_id, "configId": request.id})
        return config

    async def list_task_push_notification_configs(
        self, request: pb.ListTaskPushNotificationConfigsRequest, call: Call
    ) -> pb.ListTaskPushNotificationConfigsResponse:
        scope = await self._push_scope(request.tenant, request.task_id, call)
        configs = await self.store.list_push_configs(scope, request.task_id)
        return pb.ListTaskPushNotificationConfigsResponse(configs=configs)

    async def delete_task_push_notification_config(
        self, request: pb.DeleteTaskPushNotificationConfigRequest, call: Call
    ) -> empty_pb2.Empty:
        scope = await self._push_scope(request.tenant, request.task_id, call)
        await self.store.delete_push_config(scope, request.task_id, request.id)
        return empty_pb2.Empty()

    # --- cards ----------------------------------------------------------------------------------

    async def get_extended_agent_card(self, request: pb.GetExtendedAgentCardRequest,
                                      call: Call) -> pb.AgentCard:
        if not self.card.capabilities.extended_agent_card:
            raise UnsupportedOperationError("This agent declares no extended agent card")
        if call.owner == ANONYMOUS:
            raise AuthenticationRequiredError("The extended agent card requires authentication")
        extended = getattr(self.agent, "extended_card", None)
        if not isinstance(extended, pb.AgentCard):
            raise ExtendedAgentCardNotConfiguredError()
        return extended

    # --- capability gates -----------------------------------------------------------------------

    def _require_streaming(self) -> None:
        if not streaming_enabled(self.agent):
            raise UnsupportedOperationError("This agent does not support streaming")

    def _require_push(self) -> None:
        if not self.card.capabilities.push_notifications:
            raise PushNotificationNotSupportedError()


def _media_matches(media: str, mode: str) -> bool:
    media = media.split(";", 1)[0].strip().lower()
    mode = mode.lower()
    if mode in ("*/*", media):
        return True
    return mode.endswith("/*") and media.startswith(mode[:-1])


async def _one(event: pb.StreamResponse) -> AsyncIterator[pb.StreamResponse]:
    yield event
