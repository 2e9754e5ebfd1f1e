"""The eleven A2A operations, binding-independent.

A binding resolves the caller once (`Operations.resolve_call`), decodes the request into the
protobuf type its `Operation` entry names, and calls `unary()` or `stream()` with the entry;
it encodes whatever comes back. `OPERATIONS` pairs each rpc of the service with its request
type, response type and handler, and is checked against the service descriptor at import,
so the list of operations cannot drift from the proto.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from google.protobuf import empty_pb2
from google.protobuf.message import Message

from a2akit import logs
from a2akit.agent import Agent, RequestContext
from a2akit.auth import Authenticator
from a2akit.caller import Call, Headers, resolve_call
from a2akit.card import input_modes, streaming_enabled
from a2akit.clock import now, timestamp_ms
from a2akit.errors import (
    AuthenticationRequiredError,
    ExtendedAgentCardNotConfiguredError,
    ExtensionSupportRequiredError,
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2akit.execution.budget import call_budget
from a2akit.execution.executor import Execution, Executor
from a2akit.execution.fold import Change, fold_write
from a2akit.execution.follow import follow
from a2akit.execution.leases import current, lost
from a2akit.execution.outcomes import Duplicate, Outcome, Replied, Started
from a2akit.generated import a2a_pb2 as pb
from a2akit.ids import new_id
from a2akit.push.guard import Policy, check_config
from a2akit.replies import Events, check_content_types, request_claim, single, task_stream, trim
from a2akit.rpc import Operation, Streaming, Unary, check_table
from a2akit.service_params import SUPPORTED_VERSION
from a2akit.settings import Settings
from a2akit.states import is_terminal, status_event
from a2akit.store.base import (
    Lease,
    PushTarget,
    Scope,
    StoredTask,
    TaskQuery,
    TaskStore,
    quota_refused,
)
from a2akit.validation import check_history_length, check_list_request, check_request

if TYPE_CHECKING:
    from a2akit.card_signing import CardSigner
    from a2akit.push.inline import InlineDelivery

__all__ = ["OPERATIONS", "Operation", "Operations", "Streaming", "Unary"]

Req = TypeVar("Req", bound=Message)
Res = TypeVar("Res", bound=Message)


def _not_found(task_id: str) -> TaskNotFoundError:
    return TaskNotFoundError(metadata={"taskId": task_id})


class Operations:
    """`executor`: where SendMessage runs the agent (`a2akit.execution`), chosen once when
    the operations are assembled (`a2akit.runtime.build_operations`). `push_delivery`: the
    in-process push delivery observing the store, when this process delivers."""

    def __init__(self, settings: Settings, store: TaskStore, agent: Agent,
                 card: pb.AgentCard, authenticator: Authenticator, executor: Executor,
                 push_delivery: InlineDelivery | None = None, *,
                 card_signer: CardSigner | None = None) -> None:
        self.settings = settings
        self.store = store
        self.agent = agent
        self.card = card
        self.authenticator = authenticator
        self.executor = executor
        self.push_delivery = push_delivery
        self.card_signer = card_signer
        self._push_policy = Policy.from_settings(settings)
        self._required_extensions = [e.uri for e in card.capabilities.extensions if e.required]
        self._input_modes = input_modes(agent)  # the agent's attributes, read once
        self._streaming = streaming_enabled(agent)
        self._supported_extensions = frozenset(e.uri for e in card.capabilities.extensions)

    async def close(self) -> None:
        """At shutdown: let in-process push deliveries finish briefly, then close the store."""
        if self.push_delivery is not None:
            await self.push_delivery.close()
        await self.store.close()

    # --- entry points for bindings ------------------------------------------------------------

    async def resolve_call(self, headers: Headers, *, verified_principal: str | None = None,
                           version: str | None = None, deadline: float | None = None,
                           protocol_version: str = SUPPORTED_VERSION) -> Call:
        """The caller of one request (see `a2akit.caller`). Raises VersionNotSupportedError,
        AuthenticationRequiredError, PermissionDeniedError or UnavailableError."""
        return await resolve_call(self.authenticator, self._supported_extensions, headers,
                                  verified_principal=verified_principal, version=version,
                                  deadline=deadline, protocol_version=protocol_version)

    async def unary(self, operation: Unary[Req, Res], request: Req, call: Call) -> Res:
        """Run a unary operation. Raises A2AError subclasses only for expected failures."""
        self._check_call(operation.name, request, call)
        return await operation.handler(self, request, call)

    async def stream(self, operation: Streaming[Req], request: Req, call: Call) -> Events:
        """Validate and start a streaming operation. Errors found before the first event are
        raised here, so a binding can answer them as a plain error response."""
        self._check_call(operation.name, request, call)
        return await operation.handler(self, request, call)

    def _check_call(self, operation: str, request: Message, call: Call) -> None:
        # Authorization first, before anything is looked up: the operation's scopes, then
        # the tenant the request names (every request message has one).
        self.authenticator.authorize(call.identity, operation)
        scope = call.scope(getattr(request, "tenant", ""))
        logs.bind_caller(scope.tenant, scope.owner)
        for uri in self._required_extensions:
            if uri not in call.extensions:
                raise ExtensionSupportRequiredError(
                    f"This agent requires the extension {uri}", metadata={"extension": uri})
        check_request(request)

    # --- messages -------------------------------------------------------------------------------

    async def send_message(self, request: pb.SendMessageRequest,
                           call: Call) -> pb.SendMessageResponse:
        history = self._history(request)
        scope = call.scope(request.tenant)
        begun = await self._begin(request, call, scope)
        outcome: Outcome
        if isinstance(begun, Duplicate):
            outcome = begun
        elif request.configuration.return_immediately:
            outcome = await begun.started()
        else:
            outcome = await begun.settled()
        if isinstance(outcome, Replied):
            return pb.SendMessageResponse(message=outcome.message)
        stored = await self._answer(scope, outcome)
        return pb.SendMessageResponse(task=trim(stored.task, history))

    async def send_streaming_message(self, request: pb.SendMessageRequest,
                                     call: Call) -> Events:
        self._require_streaming()
        history = self._history(request)
        scope = call.scope(request.tenant)
        begun = await self._begin(request, call, scope)
        outcome = begun if isinstance(begun, Duplicate) else await begun.started()
        if isinstance(outcome, Replied):
            return single(pb.StreamResponse(message=outcome.message))
        if isinstance(outcome, Started) and not isinstance(begun, Duplicate):
            first, events = begun.stream()
            return task_stream(first, events, history)
        stored = await self._answer(scope, outcome)
        return self._tail(scope, stored, history, call_budget(self.settings, call.deadline))

    def _history(self, request: pb.SendMessageRequest) -> int | None:
        if not request.HasField("configuration"):
            return None
        return check_history_length(request.configuration)

    async def _begin(self, request: pb.SendMessageRequest, call: Call,
                     scope: Scope) -> Execution | Duplicate:
        """Check the message against its task, then start its execution; a message this
        caller already sent is a `Duplicate` and starts nothing."""
        message = pb.Message()
        message.CopyFrom(request.message)
        check_content_types(message, self._input_modes)
        push = None
        if request.configuration.HasField("task_push_notification_config"):
            push = await self._push_config(request.configuration.task_push_notification_config)
        claim = request_claim(request)
        earlier = await self.store.find_message(scope, claim)
        if earlier is not None:
            return Duplicate(earlier)
        stored = None
        if message.task_id:
            stored = await self._task(scope, message.task_id)
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
            await self._check_quota(scope)
            message.task_id = new_id()
            message.context_id = message.context_id or new_id()
        logs.bind_task(message.task_id, message.context_id)
        push_configs: tuple[PushTarget, ...] = ()
        if push is not None:
            push.task_id, push.tenant = message.task_id, scope.tenant
            if stored is None:
                # Stored with the new task: its first event is sent too.
                push_configs = (PushTarget(push, call.protocol_version),)
            else:
                await self._store_push_config(scope, push, call)
        context = RequestContext(
            message=message, task=None if stored is None else stored.task,
            task_id=message.task_id, context_id=message.context_id, caller=scope,
            extensions=call.extensions,
            accepted_output_modes=tuple(request.configuration.accepted_output_modes),
            metadata=request.metadata)
        return await self.executor.begin(context, stored, claim, push_configs, call.deadline)

    async def _check_quota(self, scope: Scope) -> None:
        """A caller with `max_active_tasks_per_caller` unfinished tasks (in any tenant) is
        refused a new one before its agent runs. This read only spares the run: the store
        counts the task in the write that creates it, on the condition that the caller stays
        within the limit (`TaskStore.create`), so a burst of sends cannot get past it."""
        limit = self.settings.max_active_tasks_per_caller
        if limit is not None and await self.store.active_tasks(scope.owner) >= limit:
            raise quota_refused(limit)

    async def _answer(self, scope: Scope, outcome: Started | Duplicate) -> StoredTask:
        """The task a SendMessage answers with. Idempotency is decided here: a repeated
        message id (found before the run, or refused by the store's claim while writing)
        answers with the task the first message created or continued, as it stands now."""
        if isinstance(outcome, Duplicate):
            return await self._task(scope, outcome.task_id)
        return outcome.stored

    def _tail(self, scope: Scope, stored: StoredTask, history: int | None,
              budget: float | None) -> Events:
        """The task snapshot, then its events from the store as they are written by any
        process, until a new terminal or interrupted state (or the budget) ends it."""
        events = follow(self.store, scope, stored, budget,
                        lease_seconds=self.settings.lease_seconds)
        return task_stream(stored.task, events, history)

    # --- tasks ----------------------------------------------------------------------------------

    async def get_task(self, request: pb.GetTaskRequest, call: Call) -> pb.Task:
        history = check_history_length(request)
        stored = await self._task(call.scope(request.tenant), request.id)
        return trim(stored.task, history)

    async def list_tasks(self, request: pb.ListTasksRequest, call: Call) -> pb.ListTasksResponse:
        history = check_history_length(request)
        page_size = check_list_request(request)
        after = None
        if request.HasField("status_timestamp_after"):
            after = timestamp_ms(request.status_timestamp_after)
        scope = call.scope(request.tenant)
        page = await self.store.list(scope, TaskQuery(
            context_id=request.context_id, state=request.status, status_after_ms=after,
            page_size=page_size, page_token=request.page_token))
        tasks = [await self._settled_listed(scope, task, page.leases.get(task.id))
                 for task in page.tasks]
        return pb.ListTasksResponse(
            tasks=[trim(t, history, artifacts=request.include_artifacts) for t in tasks],
            next_page_token=page.next_page_token, page_size=page_size,
            total_size=page.total_size)

    async def cancel_task(self, request: pb.CancelTaskRequest, call: Call) -> pb.Task:
        scope = call.scope(request.tenant)

        def refuse(state: int) -> TaskNotCancelableError:
            return TaskNotCancelableError(f"The task is already {pb.TaskState.Name(state)}",
                                          metadata={"taskId": request.id})

        def decide(stored: StoredTask) -> Change | None:
            # Conditional on the version read. Once the cancel is requested no writer can
            # keep the task unfinished, so only a write that ends it can come in between.
            state = stored.task.status.state
            if state == pb.TASK_STATE_CANCELED:
                return None  # the runner (or a concurrent cancel) ended it for this request
            if is_terminal(state):
                raise refuse(state)
            return Change([status_event(request.id, stored.task.context_id, pb.TaskStatus(
                state=pb.TASK_STATE_CANCELED, timestamp=now()))])

        # First the request, which a running agent's writes cannot undo: it stops them. It
        # reads the task too: gone (None), or already ended (returned unmarked).
        marked = await self.store.request_cancel(scope, request.id)
        if marked is None:
            raise _not_found(request.id)
        if is_terminal(marked.task.status.state):
            raise refuse(marked.task.status.state)
        canceled = await fold_write(
            self.store, scope, request.id, decide, lambda: TaskNotCancelableError(
                "The task kept changing; try again", metadata={"taskId": request.id}),
            read=marked)
        if canceled is None:
            raise _not_found(request.id)
        return canceled.task

    async def subscribe_to_task(self, request: pb.SubscribeToTaskRequest,
                                call: Call) -> Events:
        self._require_streaming()
        scope = call.scope(request.tenant)
        stored = await self._task(scope, request.id)
        if is_terminal(stored.task.status.state):
            raise UnsupportedOperationError(
                "The task is in a terminal state; there is nothing to subscribe to",
                metadata={"taskId": request.id})
        return self._tail(scope, stored, None, call_budget(self.settings, call.deadline))

    async def _task(self, scope: Scope, task_id: str) -> StoredTask:
        """The caller's task as it stands; one whose runner is gone ends FAILED first."""
        logs.bind_task(task_id)
        stored = await current(self.store, scope, task_id)
        if stored is None:
            raise _not_found(task_id)
        logs.bind_task(task_id, stored.task.context_id)
        return stored

    async def _settled_listed(self, scope: Scope, task: pb.Task, lease: Lease | None) -> pb.Task:
        """A listed task; one whose runner is gone is settled (read again, ended FAILED)."""
        if lease is None or not lost(task.status.state, lease):
            return task
        stored = await current(self.store, scope, task.id)
        return task if stored is None else stored.task

    # --- push notification configs --------------------------------------------------------------

    async def create_task_push_notification_config(
        self, request: pb.TaskPushNotificationConfig, call: Call
    ) -> pb.TaskPushNotificationConfig:
        self._require_push()
        if not request.task_id:
            raise InvalidParamsError("taskId is required",
                                     violations=[("task_id", "required field is missing")])
        scope = await self._push_scope(request.tenant, request.task_id, call)
        config = await self._push_config(request)
        config.tenant = scope.tenant
        await self._store_push_config(scope, config, call)
        return config

    async def _push_config(self, request: pb.TaskPushNotificationConfig
                           ) -> pb.TaskPushNotificationConfig:
        """A copy of a config a caller sent, checked (URL, header values), with its id."""
        self._require_push()
        await check_config(request, self._push_policy)
        config = pb.TaskPushNotificationConfig()
        config.CopyFrom(request)
        config.id = config.id or new_id()
        return config

    async def _store_push_config(self, scope: Scope, config: pb.TaskPushNotificationConfig,
                                 call: Call) -> None:
        """Store (or replace) a config of an existing task, within the cap per task, with
        the generation of the call that made it (its webhook gets that generation's
        payload: a2akit.push.dispatcher)."""
        configs = await self.store.list_push_configs(scope, config.task_id)
        cap = self.settings.push_max_configs
        if len(configs) >= cap and all(known.id != config.id for known in configs):
            raise InvalidParamsError(
                f"The task already has {cap} push notification configs, the most allowed",
                violations=[("id", f"at most {cap} configs per task")])
        await self.store.put_push_config(scope, config, call.protocol_version)

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
        if call.identity.anonymous:
            raise AuthenticationRequiredError("The extended agent card requires authentication")
        extended = getattr(self.agent, "extended_card", None)
        if not isinstance(extended, pb.AgentCard):
            raise ExtendedAgentCardNotConfiguredError()
        return extended if self.card_signer is None else self.card_signer.signed(extended)

    def public_card(self) -> pb.AgentCard:
        """The public card as served: signed when a signing key is configured."""
        return self.card if self.card_signer is None else self.card_signer.signed(self.card)

    # --- capability gates -----------------------------------------------------------------------

    def _require_streaming(self) -> None:
        if not self._streaming:
            raise UnsupportedOperationError("This agent does not support streaming")

    def _require_push(self) -> None:
        if not self.card.capabilities.push_notifications:
            raise PushNotificationNotSupportedError()


# --- the operation table ----------------------------------------------------------------------
# A plain tuple first, so each entry's handler is type-checked against its own request and
# response types (inside `_table(...)` they would be inferred as Any).
_ENTRIES = (
    Unary("SendMessage", pb.SendMessageRequest, pb.SendMessageResponse,
          Operations.send_message),
    Streaming("SendStreamingMessage", pb.SendMessageRequest, Operations.send_streaming_message),
    Unary("GetTask", pb.GetTaskRequest, pb.Task, Operations.get_task),
    Unary("ListTasks", pb.ListTasksRequest, pb.ListTasksResponse, Operations.list_tasks),
    Unary("CancelTask", pb.CancelTaskRequest, pb.Task, Operations.cancel_task),
    Streaming("SubscribeToTask", pb.SubscribeToTaskRequest, Operations.subscribe_to_task),
    Unary("CreateTaskPushNotificationConfig", pb.TaskPushNotificationConfig,
          pb.TaskPushNotificationConfig, Operations.create_task_push_notification_config),
    Unary("GetTaskPushNotificationConfig", pb.GetTaskPushNotificationConfigRequest,
          pb.TaskPushNotificationConfig, Operations.get_task_push_notification_config),
    Unary("ListTaskPushNotificationConfigs", pb.ListTaskPushNotificationConfigsRequest,
          pb.ListTaskPushNotificationConfigsResponse,
          Operations.list_task_push_notification_configs),
    Unary("DeleteTaskPushNotificationConfig", pb.DeleteTaskPushNotificationConfigRequest,
          empty_pb2.Empty, Operations.delete_task_push_notification_config),
    Unary("GetExtendedAgentCard", pb.GetExtendedAgentCardRequest, pb.AgentCard,
          Operations.get_extended_agent_card),
)
OPERATIONS: dict[str, Operation] = check_table(*_ENTRIES)
