"""Every A2A operation over a real gRPC server, and the error mapping on the wire."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest
from google.protobuf import empty_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from a2akit.errors import DOMAIN
from a2akit.examples.cancellable import CountingAgent
from a2akit.examples.streaming import StreamingAgent
from a2akit.generated import a2a_pb2 as pb
from grpc_service.server import SERVICE_NAME
from tests.support.errors import grpc_failure, grpc_status
from tests.support.harness import GrpcHarness, Start
from tests.support.messages import V1, send_request

pytestmark = pytest.mark.anyio

PUBLIC_HOOK = "https://93.184.215.14/a2a-hook"


async def _task(env: GrpcHarness, text: str = "hello") -> pb.Task:
    response = await env.stub.SendMessage(send_request(text), metadata=V1)
    assert response.HasField("task")
    return response.task


async def _error(awaitable: Any) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await awaitable
    return caught.value


async def _stream_error(call: Any) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        async for _ in call:
            pass
    return caught.value


# --- operations ---------------------------------------------------------------------------------


async def test_send_message_echo(grpc_env: GrpcHarness) -> None:
    task = await _task(grpc_env, "hello grpc")
    assert task.status.state == pb.TASK_STATE_COMPLETED
    assert task.artifacts[0].parts[0].text == "hello grpc"
    assert task.id and task.context_id


async def test_streaming_event_sequence(start: Start) -> None:
    agent = StreamingAgent()
    agent.delay = 0.0
    env = await start(agent)
    events = [e async for e in env.stub.SendStreamingMessage(send_request("one two three"),
                                                             metadata=V1)]
    kinds = [e.WhichOneof("payload") for e in events]
    assert kinds[0] == "task"
    assert kinds[-1] == "status_update"
    assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    chunks = [e.artifact_update for e in events if e.HasField("artifact_update")]
    assert "".join(c.artifact.parts[0].text for c in chunks) == "one two three"
    assert chunks[-1].last_chunk and not chunks[0].append and chunks[1].append
    working = [e for e in events if e.HasField("status_update")
               and e.status_update.status.state == pb.TASK_STATE_WORKING]
    assert working, kinds
    task_id = events[0].task.id
    assert all(e.status_update.task_id == task_id for e in events if e.HasField("status_update"))


async def test_get_task(grpc_env: GrpcHarness) -> None:
    task = await _task(grpc_env)
    got = await grpc_env.stub.GetTask(pb.GetTaskRequest(id=task.id, history_length=0),
                                      metadata=V1)
    assert got.id == task.id and got.status.state == pb.TASK_STATE_COMPLETED
    assert len(got.history) == 0


async def test_list_tasks(grpc_env: GrpcHarness) -> None:
    first, second = await _task(grpc_env, "a"), await _task(grpc_env, "b")
    listed = await grpc_env.stub.ListTasks(pb.ListTasksRequest(page_size=10), metadata=V1)
    assert {t.id for t in listed.tasks} == {first.id, second.id}
    assert listed.total_size == 2 and listed.page_size == 10
    one = await grpc_env.stub.ListTasks(pb.ListTasksRequest(context_id=first.context_id),
                                        metadata=V1)
    assert [t.id for t in one.tasks] == [first.id]


async def test_cancel_task_and_not_cancelable(start: Start) -> None:
    env = await start(CountingAgent())
    request = send_request("count")
    request.configuration.return_immediately = True
    response = await env.stub.SendMessage(request, metadata=V1)
    task_id = response.task.id
    canceled = await env.stub.CancelTask(pb.CancelTaskRequest(id=task_id), metadata=V1)
    assert canceled.status.state == pb.TASK_STATE_CANCELED
    error = await _error(env.stub.CancelTask(pb.CancelTaskRequest(id=task_id), metadata=V1))
    found = grpc_failure(error)
    assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert found.info.reason == "TASK_NOT_CANCELABLE" and found.info.metadata["taskId"] == task_id


async def test_subscribe_to_task(start: Start) -> None:
    env = await start(CountingAgent())
    request = send_request("count")
    request.configuration.return_immediately = True
    task_id = (await env.stub.SendMessage(request, metadata=V1)).task.id
    stream = env.stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=task_id), metadata=V1)
    first = await stream.read()
    assert first.HasField("task") and first.task.id == task_id
    # An artifact chunk arrives while the agent works, then a cancel ends the stream.
    second = await stream.read()
    assert second.HasField("artifact_update") or second.HasField("status_update")
    await env.stub.CancelTask(pb.CancelTaskRequest(id=task_id), metadata=V1)
    last = second
    while (event := await stream.read()) is not grpc.aio.EOF:
        last = event
    assert last.status_update.status.state == pb.TASK_STATE_CANCELED
    assert await stream.code() == grpc.StatusCode.OK


@pytest.mark.spec(
    "3.1.6", "MUST", "Subscribing to a finished task fails with UnsupportedOperationError")
async def test_subscribe_to_terminal_task_is_unsupported(grpc_env: GrpcHarness) -> None:
    task = await _task(grpc_env)
    error = await _stream_error(grpc_env.stub.SubscribeToTask(
        pb.SubscribeToTaskRequest(id=task.id), metadata=V1))
    found = grpc_failure(error)
    assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert found.info.reason == "UNSUPPORTED_OPERATION"


async def test_push_config_lifecycle(grpc_env: GrpcHarness) -> None:
    stub, task = grpc_env.stub, await _task(grpc_env)
    created = await stub.CreateTaskPushNotificationConfig(
        pb.TaskPushNotificationConfig(task_id=task.id, url=PUBLIC_HOOK, token="t"), metadata=V1)
    assert created.id and created.url == PUBLIC_HOOK
    got = await stub.GetTaskPushNotificationConfig(
        pb.GetTaskPushNotificationConfigRequest(task_id=task.id, id=created.id), metadata=V1)
    assert got.id == created.id and got.token == "t"
    listed = await stub.ListTaskPushNotificationConfigs(
        pb.ListTaskPushNotificationConfigsRequest(task_id=task.id), metadata=V1)
    assert [c.id for c in listed.configs] == [created.id]
    deleted = await stub.DeleteTaskPushNotificationConfig(
        pb.DeleteTaskPushNotificationConfigRequest(task_id=task.id, id=created.id), metadata=V1)
    assert deleted == empty_pb2.Empty()
    listed = await stub.ListTaskPushNotificationConfigs(
        pb.ListTaskPushNotificationConfigsRequest(task_id=task.id), metadata=V1)
    assert not listed.configs
    error = await _error(stub.GetTaskPushNotificationConfig(
        pb.GetTaskPushNotificationConfigRequest(task_id=task.id, id=created.id), metadata=V1))
    assert grpc_failure(error).info.reason == "TASK_NOT_FOUND"


async def test_push_config_private_url_is_invalid(grpc_env: GrpcHarness) -> None:
    task = await _task(grpc_env)
    error = await _error(grpc_env.stub.CreateTaskPushNotificationConfig(
        pb.TaskPushNotificationConfig(task_id=task.id, url="http://127.0.0.1/x"), metadata=V1))
    found = grpc_failure(error)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert found.bad_request is not None and found.bad_request.field_violations[0].field == "url"


async def test_push_not_supported(start: Start) -> None:
    env = await start(push_notifications=False)
    error = await _error(env.stub.ListTaskPushNotificationConfigs(
        pb.ListTaskPushNotificationConfigsRequest(task_id="x"), metadata=V1))
    found = grpc_failure(error)
    assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert found.info.reason == "PUSH_NOTIFICATION_NOT_SUPPORTED"


async def test_extended_agent_card_not_declared(grpc_env: GrpcHarness) -> None:
    error = await _error(grpc_env.stub.GetExtendedAgentCard(pb.GetExtendedAgentCardRequest(),
                                                            metadata=V1))
    found = grpc_failure(error)
    assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert found.info.reason == "UNSUPPORTED_OPERATION" and found.info.domain == DOMAIN


async def test_extended_agent_card_not_configured(start: Start) -> None:
    env = await start(extended_agent_card=True, bearer_tokens={"secret": "alice"})
    metadata = (*V1, ("authorization", "Bearer secret"))
    error = await _error(env.stub.GetExtendedAgentCard(pb.GetExtendedAgentCardRequest(),
                                                       metadata=metadata))
    found = grpc_failure(error)
    assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert found.info.reason == "EXTENDED_AGENT_CARD_NOT_CONFIGURED"


# --- errors -------------------------------------------------------------------------------------


async def test_task_not_found(grpc_env: GrpcHarness) -> None:
    error = await _error(grpc_env.stub.GetTask(pb.GetTaskRequest(id="nope"), metadata=V1))
    found = grpc_failure(error)
    assert error.code() == grpc.StatusCode.NOT_FOUND
    assert grpc_status(error).code == grpc.StatusCode.NOT_FOUND.value[0]
    assert found.info.reason == "TASK_NOT_FOUND"
    assert found.info.domain == "a2a-protocol.org"
    assert dict(found.info.metadata) == {"taskId": "nope"}
    assert found.message == "Task not found"


async def test_stream_error_before_first_event(grpc_env: GrpcHarness) -> None:
    error = await _stream_error(grpc_env.stub.SubscribeToTask(
        pb.SubscribeToTaskRequest(id="nope"), metadata=V1))
    found = grpc_failure(error)
    assert error.code() == grpc.StatusCode.NOT_FOUND and found.info.reason == "TASK_NOT_FOUND"


@pytest.mark.parametrize("metadata", [(), (("a2a-version", "0.3"),), (("a2a-version", "2.0"),)])
async def test_version_not_supported(grpc_env: GrpcHarness, metadata: tuple[Any, ...]) -> None:
    error = await _error(grpc_env.stub.GetTask(pb.GetTaskRequest(id="x"), metadata=metadata))
    found = grpc_failure(error)
    assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert found.info.reason == "VERSION_NOT_SUPPORTED"
    assert found.info.metadata["supportedVersions"] == "1.0"


async def test_version_checked_before_auth_and_operation(start: Start) -> None:
    env = await start(allow_anonymous=False)
    error = await _error(env.stub.GetTask(pb.GetTaskRequest(), metadata=()))
    assert grpc_failure(error).info.reason == "VERSION_NOT_SUPPORTED"
    error = await _error(env.stub.GetTask(pb.GetTaskRequest(), metadata=V1))
    assert grpc_failure(error).info.reason == "UNAUTHENTICATED"


@pytest.mark.spec("3.6", "MUST", "A patch number in the version is ignored")
async def test_version_with_patch_accepted(grpc_env: GrpcHarness) -> None:
    response = await grpc_env.stub.SendMessage(send_request("x"),
                                               metadata=(("a2a-version", "1.0.3"),))
    assert response.task.status.state == pb.TASK_STATE_COMPLETED


async def test_missing_required_fields(grpc_env: GrpcHarness) -> None:
    error = await _error(grpc_env.stub.SendMessage(
        pb.SendMessageRequest(message=pb.Message(parts=[pb.Part(text="x")])), metadata=V1))
    found = grpc_failure(error)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert found.info.reason == "INVALID_PARAMS"
    assert found.bad_request is not None
    fields = {v.field for v in found.bad_request.field_violations}
    assert fields == {"message.message_id", "message.role"}
    error = await _error(grpc_env.stub.GetTask(pb.GetTaskRequest(), metadata=V1))
    assert grpc_failure(error).bad_request is not None


async def test_unauthenticated(start: Start) -> None:
    env = await start(allow_anonymous=False, bearer_tokens={"secret": "alice"})
    error = await _error(env.stub.SendMessage(send_request("x"), metadata=V1))
    found = grpc_failure(error)
    assert error.code() == grpc.StatusCode.UNAUTHENTICATED
    assert found.info.reason == "UNAUTHENTICATED"
    bad = (*V1, ("authorization", "Bearer wrong"))
    error = await _error(env.stub.SendMessage(send_request("x"), metadata=bad))
    assert error.code() == grpc.StatusCode.UNAUTHENTICATED
    good = (*V1, ("authorization", "Bearer secret"))
    task = (await env.stub.SendMessage(send_request("x"), metadata=good)).task
    assert task.status.state == pb.TASK_STATE_COMPLETED
    # Another caller (anonymous is off, so: nobody else) cannot see alice's task.
    error = await _error(env.stub.GetTask(pb.GetTaskRequest(id=task.id), metadata=V1))
    assert error.code() == grpc.StatusCode.UNAUTHENTICATED


@pytest.mark.spec(
    "3.3.2", "MUST", "An unexpected failure is an internal error that reveals nothing of it")
async def test_unexpected_exception_is_internal_without_details(start: Start) -> None:
    env = await start()

    async def boom(*args: Any) -> Any:
        raise RuntimeError("secret database password in message")

    env.ops.store.get = boom
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await env.stub.GetTask(pb.GetTaskRequest(id="x"), metadata=V1)
    error = caught.value
    assert error.code() == grpc.StatusCode.INTERNAL
    assert "secret" not in (error.details() or "")
    found = grpc_failure(error)
    assert found.info.reason == "INTERNAL_ERROR"


async def test_client_disconnect_does_not_cancel_task(start: Start) -> None:
    agent = CountingAgent()
    agent.steps, agent.delay = 8, 0.02
    env = await start(agent)
    stream = env.stub.SendStreamingMessage(send_request("count"), metadata=V1)
    first = await stream.read()
    task_id = first.task.id
    stream.cancel()
    await asyncio.sleep(0)
    for _ in range(200):
        task = await env.stub.GetTask(pb.GetTaskRequest(id=task_id), metadata=V1)
        if task.status.state == pb.TASK_STATE_COMPLETED:
            break
        await asyncio.sleep(0.02)
    assert task.status.state == pb.TASK_STATE_COMPLETED


@pytest.mark.spec("3.6", "SHOULD", "The extensions a call activated are echoed in the response")
async def test_extensions_are_echoed(start: Start) -> None:
    agent = StreamingAgent()
    agent.extensions = [pb.AgentExtension(uri="urn:ext:a")]  # type: ignore[attr-defined]
    env = await start(agent)
    call = env.stub.SendMessage(send_request("x"),
                                metadata=(*V1, ("a2a-extensions", "urn:ext:a, urn:ext:b")))
    await call
    initial = await call.initial_metadata()
    assert initial.get("a2a-extensions") == "urn:ext:a"


# --- health and reflection ----------------------------------------------------------------------


@pytest.mark.spec("10.1", "MAY", "The gRPC server serves the standard health service")
async def test_health_serving(grpc_env: GrpcHarness) -> None:
    health = health_pb2_grpc.HealthStub(grpc_env.channel)
    for service in ("", SERVICE_NAME):
        response = await health.Check(health_pb2.HealthCheckRequest(service=service))
        assert response.status == health_pb2.HealthCheckResponse.SERVING


async def test_reflection_lists_service(grpc_env: GrpcHarness) -> None:
    stub = reflection_pb2_grpc.ServerReflectionStub(grpc_env.channel)

    async def requests() -> Any:
        yield reflection_pb2.ServerReflectionRequest(list_services="")
        yield reflection_pb2.ServerReflectionRequest(file_containing_symbol=SERVICE_NAME)

    responses = [r async for r in stub.ServerReflectionInfo(requests())]
    names = {s.name for s in responses[0].list_services_response.service}
    assert SERVICE_NAME == "lf.a2a.v1.A2AService"
    assert {SERVICE_NAME, "grpc.health.v1.Health"} <= names
    assert responses[1].file_descriptor_response.file_descriptor_proto


async def test_message_size_limit(start: Start) -> None:
    env = await start(max_request_bytes=4096)
    error = await _error(env.stub.SendMessage(send_request("x" * 10_000), metadata=V1))
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


async def test_graceful_shutdown_reports_not_serving(grpc_env: GrpcHarness) -> None:
    await grpc_env.health.enter_graceful_shutdown()
    health = health_pb2_grpc.HealthStub(grpc_env.channel)
    response = await health.Check(health_pb2.HealthCheckRequest(service=SERVICE_NAME))
    assert response.status == health_pb2.HealthCheckResponse.NOT_SERVING


def test_server_options_limit_size_and_keep_alive() -> None:
    from a2akit.settings import Settings
    from grpc_service.server import server_options

    options = dict(server_options(Settings(max_request_bytes=2048)))
    assert options["grpc.max_receive_message_length"] == 2048
    assert "grpc.max_send_message_length" not in options
    assert options["grpc.keepalive_time_ms"] < 60_000  # below the ALB idle timeout
    assert options["grpc.keepalive_permit_without_calls"] == 1
    assert options["grpc.http2.max_pings_without_data"] == 0
