"""Drive a running server with the A2A 0.3 Python SDK (a2a-sdk 0.3.x); print one JSON line.

Run by tests/compat03/process/test_sdk03_client.py with the python of .cache/sdk03-venv. It imports
only that SDK, so it checks the wire, not shared code:

    sdk03_client.py BASE_URL TOKEN                 every operation on JSONRPC and GRPC
    sdk03_client.py BASE_URL TOKEN create          per binding: a completed task, a working one
                                                   (in the same context)
    sdk03_client.py BASE_URL TOKEN read IDS_JSON   per binding: read the completed task, cancel
                                                   the working one (tasks of another client)

The card (discovered at /.well-known/agent-card.json, as 0.3 clients do) names the endpoints:
JSONRPC at its `url`, GRPC in `additionalInterfaces`. TOKEN is a bearer token the server
accepts; it is sent (through the SDK's AuthInterceptor and the card's security schemes on
JSON-RPC, as call metadata on gRPC) only to fetch the authenticated extended card.
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable
from typing import Any

import grpc
import httpx
from a2a.client import (
    A2ACardResolver,
    A2AClientHTTPError,
    AuthInterceptor,
    ClientCallContext,
    ClientConfig,
    ClientFactory,
    CredentialService,
)
from a2a.client.errors import A2AClientJSONRPCError
from a2a.grpc import a2a_pb2, a2a_pb2_grpc
from a2a.types import (
    AgentCard,
    DeleteTaskPushNotificationConfigParams,
    DeleteTaskPushNotificationConfigRequest,
    DeleteTaskPushNotificationConfigResponse,
    GetTaskPushNotificationConfigParams,
    JSONRPCErrorResponse,
    ListTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigResponse,
    Message,
    MessageSendConfiguration,
    Part,
    PushNotificationConfig,
    Role,
    Task,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TextPart,
)
from a2a.utils.constants import PREV_AGENT_CARD_WELL_KNOWN_PATH
from a2a.utils.proto_utils import FromProto

BINDINGS = ("JSONRPC", "GRPC")
HOOK = "https://93.184.216.34/hook"  # configs only: nothing is delivered
WAIT = 30.0  # seconds any one stream may take; a hang is a failure, not a stuck test


def _message(text: str, context_id: str | None = None) -> Message:
    return Message(message_id=str(uuid.uuid4()), role=Role.user, context_id=context_id,
                   parts=[Part(root=TextPart(text=text))])


def _text(task: Task) -> str:
    return "".join(part.root.text for artifact in task.artifacts or ()
                   for part in artifact.parts if part.root.kind == "text")


async def _working(client: Any, task_id: str) -> None:
    """Wait until the "slow" task has said it is working (a non-blocking send returns before)."""
    async def poll() -> None:
        while True:
            task = await client.get_task(TaskQueryParams(id=task_id))
            if task.status.state.value == "working":
                return
            await asyncio.sleep(0.05)

    await asyncio.wait_for(poll(), WAIT)


def _parts(message: Message) -> str:
    return "".join(part.root.text for part in message.parts if part.root.kind == "text")


def _task(task: Task) -> dict[str, Any]:
    return {"kind": task.kind, "id": task.id, "context": bool(task.context_id),
            "state": task.status.state.value, "text": _text(task),
            "history": len(task.history or ())}


def _describe(exc: Exception) -> dict[str, Any]:
    """An exception, normalised: the server's error as the SDK reports it, or what broke."""
    if isinstance(exc, A2AClientJSONRPCError):
        return {"type": "jsonrpc", "code": exc.error.code, "message": exc.error.message}
    if isinstance(exc, A2AClientHTTPError):
        return {"type": "http", "code": exc.status_code, "message": exc.message}
    if isinstance(exc, grpc.aio.AioRpcError):
        return {"type": "grpc", "code": exc.code().name, "message": exc.details()}
    return {"type": type(exc).__name__, "message": str(exc)[:2000]}


async def _error(call: Awaitable[Any]) -> dict[str, Any]:
    """What a call that should fail raised."""
    try:
        await call
    except Exception as exc:
        return _describe(exc)
    return {"type": None}


class _Token(CredentialService):
    def __init__(self, token: str) -> None:
        self.token = token

    async def get_credentials(self, security_scheme_name: str,
                              context: ClientCallContext | None) -> str | None:
        return self.token


class _Bearer(grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[misc]
    def __init__(self, token: str) -> None:
        self.token = token

    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        metadata = [*(details.metadata or ()), ("authorization", f"Bearer {self.token}")]
        return await continuation(details._replace(metadata=metadata), request)


class Driver:
    def __init__(self, card: AgentCard, http: httpx.AsyncClient, binding: str) -> None:
        self.card, self.http, self.binding = card, http, binding

    def client(self, *, streaming: bool, token: str | None = None) -> Any:
        def channel(url: str) -> grpc.aio.Channel:
            interceptors = [_Bearer(token)] if token else None
            return grpc.aio.insecure_channel(url, interceptors=interceptors)

        # Each client its own HTTP client: closing a JSON-RPC client closes that too.
        config = ClientConfig(streaming=streaming, supported_transports=[self.binding],
                              use_client_preference=True,
                              httpx_client=httpx.AsyncClient(timeout=WAIT),
                              grpc_channel_factory=channel)
        interceptors = [AuthInterceptor(_Token(token))] if token else None
        return ClientFactory(config).create(self.card, interceptors=interceptors)

    async def send(self, client: Any, text: str, *, blocking: bool = True,
                   context_id: str | None = None) -> Task:
        events = []
        async for event in client.send_message(
                _message(text, context_id),
                configuration=MessageSendConfiguration(blocking=blocking)):
            events.append(event)
        assert len(events) == 1 and isinstance(events[0], tuple), events
        task: Task = events[0][0]
        return task

    # --- the operations ------------------------------------------------------------------------

    async def run(self, token: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        client = self.client(streaming=False)
        task = await self.send(client, f"hello {self.binding}")
        out["send"] = _task(task)
        out["get"] = await _step(self.get(client, task.id))
        out["get_missing"] = await _error(client.get_task(TaskQueryParams(id="no-such-task")))
        out["cancel_done"] = await _error(client.cancel_task(TaskIdParams(id=task.id)))
        out["cancel"] = await _step(self.cancel(client))
        out["push"] = await _step(self.push(client, task.id))
        out["extended_card"] = {"anonymous": await _step(_card_seen(client.get_card())),
                                "token": await _step(self.extended_card(token))}
        out["stream"] = await _step(self.stream())
        out["resubscribe"] = await _step(self.resubscribe(client))
        await client.close()
        return out

    async def get(self, client: Any, task_id: str) -> dict[str, Any]:
        full = await client.get_task(TaskQueryParams(id=task_id))
        one = await client.get_task(TaskQueryParams(id=task_id, history_length=1))
        return {"full": _task(full), "one": _task(one),
                "roles": [m.role.value for m in one.history or ()]}

    async def cancel(self, client: Any) -> dict[str, Any]:
        """A task still working, canceled; then read back."""
        task = await self.send(client, "slow", blocking=False)
        await _working(client, task.id)
        canceled = await client.cancel_task(TaskIdParams(id=task.id))
        got = await client.get_task(TaskQueryParams(id=task.id))
        # Its history: the user's message, then the agent's "waiting" (the status it left).
        last = await client.get_task(TaskQueryParams(id=task.id, history_length=1))
        return {"started": task.status.state.value, "same": canceled.id == task.id,
                "canceled": canceled.status.state.value, "got": got.status.state.value,
                "history": [[m.role.value, _parts(m)] for m in got.history or ()],
                "last": [[m.role.value, _parts(m)] for m in last.history or ()]}

    async def stream(self) -> dict[str, Any]:
        streamer = self.client(streaming=True)
        events, ids, text = [], set(), None

        async def read() -> None:
            nonlocal text
            async for task, update in streamer.send_message(_message(f"stream {self.binding}")):
                events.append(_event(task, update))
                ids.add(task.id)
                text = _text(task)  # the SDK's task as it folds the events in

        await asyncio.wait_for(read(), WAIT)
        await streamer.close()
        return {"events": events, "text": text, "ids": len(ids)}

    async def resubscribe(self, client: Any) -> dict[str, Any]:
        """Subscribe to a working task, cancel it from another call, read the stream to its
        end: the first event is the Task, the last the canceled status with final true."""
        task = await self.send(client, "slow", blocking=False)
        await _working(client, task.id)
        streamer = self.client(streaming=True)
        stream: AsyncIterator[Any] = streamer.resubscribe(TaskIdParams(id=task.id))
        first_task, first_update = await asyncio.wait_for(anext(stream), WAIT)
        first = _event(first_task, first_update)  # now: the SDK updates this task in place
        canceled = await client.cancel_task(TaskIdParams(id=task.id))

        async def rest() -> list[dict[str, Any]]:
            return [_event(*event) async for event in stream]

        after = await asyncio.wait_for(rest(), WAIT)
        await streamer.close()
        return {"first": first, "id": first_task.id == task.id,
                "canceled": canceled.status.state.value, "after": after}

    async def push(self, client: Any, task_id: str) -> dict[str, Any]:
        config_id = f"cfg-{self.binding}"
        created = await client.set_task_callback(TaskPushNotificationConfig(
            task_id=task_id,
            push_notification_config=PushNotificationConfig(id=config_id, url=HOOK, token="t")))
        got = await client.get_task_callback(GetTaskPushNotificationConfigParams(
            id=task_id, push_notification_config_id=config_id))
        listed = await self.list_configs(client, task_id)
        await self.delete_config(client, task_id, config_id)
        after = await self.list_configs(client, task_id)
        pushed = created.push_notification_config
        return {"created": [pushed.id, created.task_id, pushed.url, pushed.token],
                "same": got == created, "listed": [c.push_notification_config.id for c in listed],
                "after": [c.push_notification_config.id for c in after]}

    # The 0.3 SDK's Client has no list or delete for push configs: the JSON-RPC ones go out
    # with the SDK's own request and response models, the gRPC ones through its stub.

    async def list_configs(self, client: Any, task_id: str) -> list[TaskPushNotificationConfig]:
        if self.binding == "GRPC":
            stub = a2a_pb2_grpc.A2AServiceStub(client._transport.channel)
            reply = await stub.ListTaskPushNotificationConfig(
                a2a_pb2.ListTaskPushNotificationConfigRequest(parent=f"tasks/{task_id}"))
            return [FromProto.task_push_notification_config(c) for c in reply.configs]
        request = ListTaskPushNotificationConfigRequest(
            id=str(uuid.uuid4()), params=ListTaskPushNotificationConfigParams(id=task_id))
        reply = ListTaskPushNotificationConfigResponse.model_validate(await self._post(request))
        if isinstance(reply.root, JSONRPCErrorResponse):
            raise A2AClientJSONRPCError(reply.root)
        return list(reply.root.result)

    async def delete_config(self, client: Any, task_id: str, config_id: str) -> None:
        if self.binding == "GRPC":
            stub = a2a_pb2_grpc.A2AServiceStub(client._transport.channel)
            await stub.DeleteTaskPushNotificationConfig(
                a2a_pb2.DeleteTaskPushNotificationConfigRequest(
                    name=f"tasks/{task_id}/pushNotificationConfigs/{config_id}"))
            return
        request = DeleteTaskPushNotificationConfigRequest(
            id=str(uuid.uuid4()), params=DeleteTaskPushNotificationConfigParams(
                id=task_id, push_notification_config_id=config_id))
        reply = DeleteTaskPushNotificationConfigResponse.model_validate(await self._post(request))
        if isinstance(reply.root, JSONRPCErrorResponse):
            raise A2AClientJSONRPCError(reply.root)

    async def _post(self, request: Any) -> Any:
        response = await self.http.post(self.card.url,
                                        json=request.model_dump(mode="json", exclude_none=True))
        response.raise_for_status()
        return response.json()

    async def extended_card(self, token: str) -> dict[str, Any]:
        client = self.client(streaming=False, token=token)
        try:
            return await _card_seen(client.get_card())
        finally:
            await client.close()

    # --- across generations --------------------------------------------------------------------

    async def create(self) -> dict[str, Any]:
        client = self.client(streaming=False)
        done = await self.send(client, f"from 0.3 {self.binding}")
        # One context for both, so a reader can list exactly these two.
        working = await self.send(client, "slow", blocking=False, context_id=done.context_id)
        await client.close()
        return {"done": done.id, "working": working.id}

    async def read(self, ids: dict[str, str]) -> dict[str, Any]:
        client = self.client(streaming=False)
        done = await client.get_task(TaskQueryParams(id=ids["done"]))
        canceled = await client.cancel_task(TaskIdParams(id=ids["working"]))
        got = await client.get_task(TaskQueryParams(id=ids["working"]))
        await client.close()
        return {"done": _task(done), "canceled": canceled.status.state.value,
                "got": got.status.state.value}


async def _step(call: Awaitable[dict[str, Any]]) -> dict[str, Any]:
    """A step's result; if it raised, what it raised (the run goes on with the next step, so
    one failure does not hide the others)."""
    try:
        return await call
    except Exception as exc:
        return {"failed": _describe(exc)}


async def _card_seen(call: Awaitable[AgentCard]) -> dict[str, Any]:
    card = await call
    return {"name": card.name, "skills": [s.id for s in card.skills],
            "protocolVersion": card.protocol_version}


def _event(task: Task, update: Any) -> dict[str, Any]:
    """One stream event as the 0.3 wire named it: the Task, or an update with its fields."""
    if update is None:
        return {"kind": "task", "state": task.status.state.value}
    if update.kind == "status-update":
        return {"kind": update.kind, "state": update.status.state.value, "final": update.final}
    return {"kind": update.kind, "text": "".join(p.root.text for p in update.artifact.parts
                                                 if p.root.kind == "text")}


def _card(card: AgentCard) -> dict[str, Any]:
    return {"protocolVersion": card.protocol_version, "url": card.url,
            "preferredTransport": card.preferred_transport,
            "additional": [[i.transport, i.url] for i in card.additional_interfaces or ()],
            "streaming": card.capabilities.streaming,
            "pushNotifications": card.capabilities.push_notifications,
            "extended": card.supports_authenticated_extended_card,
            "schemes": sorted(card.security_schemes or {}),
            "security": card.security}


async def main(base_url: str, token: str, mode: str = "all", ids: str = "{}") -> None:
    async with httpx.AsyncClient(timeout=WAIT) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
        result: dict[str, Any] = {}
        if mode == "all":
            legacy = await A2ACardResolver(http, base_url).get_agent_card(
                relative_card_path=PREV_AGENT_CARD_WELL_KNOWN_PATH)
            result["card"], result["legacy_card"] = _card(card), _card(legacy)
            for binding in BINDINGS:  # one binding that fails does not hide the other
                result[binding] = await _step(Driver(card, http, binding).run(token))
        elif mode == "create":
            for binding in BINDINGS:
                result[binding] = await _step(Driver(card, http, binding).create())
        else:
            for binding, task_ids in json.loads(ids).items():
                result[binding] = await _step(Driver(card, http, binding).read(task_ids))
    print(json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
