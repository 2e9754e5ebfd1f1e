"""The A2A 0.3 gRPC service (a2a.v1.A2AService) over a real server, through the 0.3 stubs:
every rpc with the shared decisions of issue 28, its errors ("<0.3 type name>: <message>"
with the 1.0 details trailer), the version rule, limits, health and reflection. On both
stores where the store is involved (the `store` fixture of tests/grpc/conftest.py)."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from google.protobuf import empty_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from a2akit.examples.cancellable import CountingAgent
from a2akit.examples.input_required import GreeterAgent
from a2akit.examples.streaming import StreamingAgent
from a2akit.generated import a2a_pb2 as pb
from a2akit.generated import a2a_v0_3_pb2 as pb03
from grpc_service.compat03 import SERVICE_NAME as SERVICE_03
from grpc_service.server import SERVICE_NAME
from tests.support.errors import grpc_failure
from tests.support.grpc03 import Env03, Start03, error_of, send03, stream_error_of

# A call refused before any store is read or written takes the same path on both stores
# (measured with coverage contexts): its test runs on one.
REFUSED_BEFORE_THE_STORE = pytest.mark.parametrize("store", ["memory"], indirect=True)

pytestmark = pytest.mark.anyio

HOOK = "https://93.184.215.14/a2a-hook"


async def _task(env: Env03, text: str = "hello", **fields: Any) -> pb03.Task:
    response = await env.stub.SendMessage(send03(text, **fields))
    assert response.HasField("task"), response
    return response.task


# --- messages ----------------------------------------------------------------------------------


@pytest.mark.parametrize("blocking", [True, None])  # None: no configuration (blocks, 1.0 default)
@pytest.mark.spec(
    "0.3 7.1", "MUST", "SendMessage on the 0.3 gRPC service honours blocking", generation="0.3")
async def test_send_blocking(start03: Start03, blocking: bool | None) -> None:
    env = await start03()
    task = await _task(env, "hello 0.3", blocking=blocking)
    assert task.status.state == pb03.TASK_STATE_COMPLETED
    assert task.artifacts[0].parts[0].text == "hello 0.3"
    assert task.history[0].content[0].text == "hello 0.3"
    assert task.history[0].role == pb03.ROLE_USER


async def test_send_with_blocking_unset_returns_at_once(start03: Start03) -> None:
    # Facts 3.4: a configuration without `blocking` means "return immediately" on 0.3 gRPC.
    env = await start03(CountingAgent())
    task = await _task(env, "count", blocking=False)
    assert task.status.state in (pb03.TASK_STATE_SUBMITTED, pb03.TASK_STATE_WORKING)
    canceled = await env.stub.CancelTask(pb03.CancelTaskRequest(name=f"tasks/{task.id}"))
    assert canceled.id == task.id and canceled.status.state == pb03.TASK_STATE_CANCELLED
    error = await error_of(env.stub.CancelTask(pb03.CancelTaskRequest(name=f"tasks/{task.id}")))
    assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert error.details().startswith("TaskNotCancelableError: ")
    assert grpc_failure(error).info.reason == "TASK_NOT_CANCELABLE"


async def test_stream_marks_the_last_update_final(start03: Start03) -> None:
    agent = StreamingAgent()
    agent.delay = 0.0
    env = await start03(agent)
    events = [e async for e in env.stub.SendStreamingMessage(send03("one two three"))]
    kinds = [e.WhichOneof("payload") for e in events]
    assert kinds[0] == "task" and kinds[-1] == "status_update", kinds
    assert events[-1].status_update.status.state == pb03.TASK_STATE_COMPLETED
    assert [e.status_update.final for e in events if e.HasField("status_update")][-1] is True
    assert not any(e.status_update.final for e in events[:-1])
    chunks = [e.artifact_update for e in events if e.HasField("artifact_update")]
    assert "".join(c.artifact.parts[0].text for c in chunks) == "one two three"
    assert chunks[-1].last_chunk and chunks[1].append


async def test_stream_ending_in_input_required_is_final(start03: Start03) -> None:
    env = await start03(GreeterAgent())
    events = [e async for e in env.stub.SendStreamingMessage(send03("hi"))]
    last = events[-1].status_update
    assert last.status.state == pb03.TASK_STATE_INPUT_REQUIRED and last.final  # REF: false
    assert last.status.update.content[0].text == "What is your name?"
    # The same task goes on over 0.3.
    done = await _task(env, "Ada", task_id=events[0].task.id)
    assert done.status.state == pb03.TASK_STATE_COMPLETED
    assert done.artifacts[0].parts[0].text == "Hello, Ada!"


async def test_get_task_with_history_length(start03: Start03) -> None:
    env = await start03(GreeterAgent())
    first = await _task(env, "hi")
    await _task(env, "Ada", task_id=first.id)
    name = f"tasks/{first.id}"
    whole = await env.stub.GetTask(pb03.GetTaskRequest(name=name))
    assert len(whole.history) >= 3
    unlimited = await env.stub.GetTask(pb03.GetTaskRequest(name=name, history_length=0))
    assert unlimited.history == whole.history  # 0 means no limit in 0.3 (5.3 #13)
    one = await env.stub.GetTask(pb03.GetTaskRequest(name=name, history_length=1))
    assert list(one.history) == [whole.history[-1]]
    error = await error_of(env.stub.GetTask(pb03.GetTaskRequest(name=name, history_length=-1)))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error.details() == ("InvalidParamsError: Invalid parameters: history_length must "
                               "be >= 0")


@pytest.mark.spec("0.3 7.9", "MUST", "TaskSubscription follows a running task", generation="0.3")
async def test_subscription_follows_a_running_task(start03: Start03) -> None:
    env = await start03(CountingAgent())
    task = await _task(env, "count", blocking=False)
    stream = env.stub.TaskSubscription(pb03.TaskSubscriptionRequest(name=f"tasks/{task.id}"))
    first = await stream.read()
    assert first.HasField("task") and first.task.id == task.id
    await env.stub.CancelTask(pb03.CancelTaskRequest(name=f"tasks/{task.id}"))
    last = first
    while (event := await stream.read()) is not grpc.aio.EOF:
        last = event
    assert last.status_update.status.state == pb03.TASK_STATE_CANCELLED
    assert last.status_update.final
    assert await stream.code() == grpc.StatusCode.OK


async def test_subscription_to_a_finished_task_answers_the_task(start03: Start03) -> None:
    env = await start03()
    task = await _task(env)
    events = [e async for e in env.stub.TaskSubscription(
        pb03.TaskSubscriptionRequest(name=f"tasks/{task.id}"))]
    assert [e.WhichOneof("payload") for e in events] == ["task"]  # 0.3 proto comment
    assert events[0].task.status.state == pb03.TASK_STATE_COMPLETED


async def test_push_config_lifecycle(start03: Start03) -> None:
    env = await start03()
    stub, task = env.stub, await _task(env)
    parent = f"tasks/{task.id}"
    body = pb03.TaskPushNotificationConfig(push_notification_config=pb03.PushNotificationConfig(
        url=HOOK, token="tok", authentication=pb03.AuthenticationInfo(
            schemes=["Bearer", "Basic"], credentials="secret")))
    named = await stub.CreateTaskPushNotificationConfig(
        pb03.CreateTaskPushNotificationConfigRequest(parent=parent, config_id="cfg", config=body))
    assert named.name == f"{parent}/pushNotificationConfigs/cfg"
    inner = named.push_notification_config
    assert (inner.id, inner.url, inner.token) == ("cfg", HOOK, "tok")
    assert list(inner.authentication.schemes) == ["Bearer"]  # one scheme in 1.0 (5.3 #9)
    # Without a config id: the task-id config if any, else the first (5.3 #10).
    default = pb03.GetTaskPushNotificationConfigRequest(name=parent)
    assert await stub.GetTaskPushNotificationConfig(default) == named
    plain = await stub.CreateTaskPushNotificationConfig(
        pb03.CreateTaskPushNotificationConfigRequest(parent=parent, config=body))
    assert plain.name == f"{parent}/pushNotificationConfigs/{task.id}"
    assert await stub.GetTaskPushNotificationConfig(default) == plain
    got = await stub.GetTaskPushNotificationConfig(
        pb03.GetTaskPushNotificationConfigRequest(name=named.name))
    assert got == named
    listed = await stub.ListTaskPushNotificationConfig(
        pb03.ListTaskPushNotificationConfigRequest(parent=parent, page_size=1))
    assert sorted(c.name for c in listed.configs) == sorted([named.name, plain.name])
    assert listed.next_page_token == ""
    deleted = await stub.DeleteTaskPushNotificationConfig(
        pb03.DeleteTaskPushNotificationConfigRequest(name=named.name))
    assert deleted == empty_pb2.Empty()
    error = await error_of(stub.GetTaskPushNotificationConfig(
        pb03.GetTaskPushNotificationConfigRequest(name=named.name)))
    assert error.code() == grpc.StatusCode.NOT_FOUND
    assert error.details() == "TaskNotFoundError: Push notification config not found"
    listed = await stub.ListTaskPushNotificationConfig(
        pb03.ListTaskPushNotificationConfigRequest(parent=parent))
    assert [c.name for c in listed.configs] == [plain.name]


async def test_push_config_url_is_checked_as_on_10(start03: Start03) -> None:
    env = await start03()
    task = await _task(env)
    error = await error_of(env.stub.CreateTaskPushNotificationConfig(
        pb03.CreateTaskPushNotificationConfigRequest(
            parent=f"tasks/{task.id}", config=pb03.TaskPushNotificationConfig(
                push_notification_config=pb03.PushNotificationConfig(url="http://127.0.0.1/x")))))
    found = grpc_failure(error)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert found.bad_request is not None and found.bad_request.field_violations[0].field == "url"


# --- the agent card ------------------------------------------------------------------------------


async def test_get_agent_card_is_the_public_card_without_an_extended_one(
        start03: Start03) -> None:
    env = await start03(grpc_address="grpc.example.com:443")
    card = await env.stub.GetAgentCard(pb03.GetAgentCardRequest())
    ops = env.harness.ops
    assert card.name == ops.card.name and card.protocol_version == "0.3.0"
    assert (card.url, card.preferred_transport) == (ops.settings.public_url, "JSONRPC")
    assert [(i.transport, i.url) for i in card.additional_interfaces] == [
        ("JSONRPC", ops.settings.public_url), ("GRPC", "grpc.example.com:443")]
    assert card.capabilities.streaming and card.capabilities.push_notifications


class _Members(GreeterAgent):
    extended_card = pb.AgentCard(name="Members only", description="more skills")


async def test_get_agent_card_is_the_extended_card_for_a_caller_who_may_read_it(
        start03: Start03) -> None:
    env = await start03(_Members(), extended_agent_card=True, bearer_tokens={"s": "alice"})
    card = await env.stub.GetAgentCard(pb03.GetAgentCardRequest(),
                                       metadata=(("authorization", "Bearer s"),))
    assert (card.name, card.description) == ("Members only", "more skills")
    assert card.url == env.harness.ops.settings.public_url  # the public card's addresses
    anonymous = await env.stub.GetAgentCard(pb03.GetAgentCardRequest())
    assert anonymous.name == env.harness.ops.card.name


# --- errors --------------------------------------------------------------------------------------


@pytest.mark.spec("0.3 8.2", "MUST",
                  "An unknown task is TaskNotFoundError, named as 0.3 names it", generation="0.3")
async def test_unknown_task_is_not_found_with_the_03_name(start03: Start03) -> None:
    env = await start03()
    for call in (env.stub.GetTask(pb03.GetTaskRequest(name="tasks/nope")),
                 env.stub.CancelTask(pb03.CancelTaskRequest(name="tasks/nope")),
                 env.stub.ListTaskPushNotificationConfig(
                     pb03.ListTaskPushNotificationConfigRequest(parent="tasks/nope"))):
        error = await error_of(call)
        found = grpc_failure(error)  # the same details trailer as 1.0
        assert error.code() == grpc.StatusCode.NOT_FOUND
        assert error.details() == "TaskNotFoundError: Task not found"
        assert found.info.reason == "TASK_NOT_FOUND" and dict(found.info.metadata) == {
            "taskId": "nope"}
    error = await stream_error_of(env.stub.TaskSubscription(
        pb03.TaskSubscriptionRequest(name="tasks/nope")))
    assert error.code() == grpc.StatusCode.NOT_FOUND
    assert error.details() == "TaskNotFoundError: Task not found"


@REFUSED_BEFORE_THE_STORE
@pytest.mark.parametrize(("rpc", "request_", "field"), [
    ("GetTask", pb03.GetTaskRequest(name="nope"), "name"),
    ("CancelTask", pb03.CancelTaskRequest(name="tasks/a/b"), "name"),
    ("CreateTaskPushNotificationConfig",
     pb03.CreateTaskPushNotificationConfigRequest(parent="t1"), "parent"),
    ("GetTaskPushNotificationConfig",
     pb03.GetTaskPushNotificationConfigRequest(name="configs/c"), "name"),
    ("DeleteTaskPushNotificationConfig",
     pb03.DeleteTaskPushNotificationConfigRequest(name="tasks/t1"), "name"),
    ("ListTaskPushNotificationConfig", pb03.ListTaskPushNotificationConfigRequest(), "parent"),
])
async def test_a_malformed_resource_name_names_the_field(start03: Start03, rpc: str,
                                                         request_: Any, field: str) -> None:
    env = await start03()
    error = await error_of(getattr(env.stub, rpc)(request_))
    found = grpc_failure(error)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error.details().startswith(f"InvalidParamsError: {field} is not a resource name")
    assert found.info.reason == "INVALID_PARAMS"
    assert found.bad_request is not None
    assert [v.field for v in found.bad_request.field_violations] == [field]


async def test_a_malformed_name_on_a_stream(start03: Start03) -> None:
    env = await start03()
    error = await stream_error_of(env.stub.TaskSubscription(
        pb03.TaskSubscriptionRequest(name="bare-id")))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error.details().startswith("InvalidParamsError: name is not a resource name")


async def test_missing_fields_are_named(start03: Start03) -> None:
    env = await start03()
    request = send03()
    request.request.role = pb03.ROLE_UNSPECIFIED  # refused, not read as agent (5.3 #8)
    request.request.ClearField("message_id")
    error = await error_of(env.stub.SendMessage(request))
    found = grpc_failure(error)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert found.bad_request is not None
    assert {v.field for v in found.bad_request.field_violations} == {"message.message_id",
                                                                   "message.role"}
    request = send03()
    request.request.content.add()  # a part with nothing in it
    error = await error_of(env.stub.SendMessage(request))
    assert error.details() == "InvalidParamsError: Invalid parameters: message.content[1] " \
                              "needs text, file or data"


GARBAGE = [b"\xff", b"\x0a\xff\xff\xff\xff\x0f", b"\x12\x03abc\xff", b"\x08\x80\x80\x80\x80\x80"
           b"\x80\x80\x80\x80\x80\x01", b"\x0b"]


@REFUSED_BEFORE_THE_STORE
@pytest.mark.parametrize("method", [m.name for m in pb03.DESCRIPTOR.services_by_name[
    "A2AService"].methods])
async def test_garbage_bytes_are_invalid_argument(start03: Start03, method: str) -> None:
    env = await start03()
    streaming = method in ("SendStreamingMessage", "TaskSubscription")
    path = f"/{SERVICE_03}/{method}"
    for payload in GARBAGE:
        if method == "GetAgentCard" and payload == b"\x0b":
            continue
        rpc = (env.channel.unary_stream(path) if streaming else env.channel.unary_unary(path))
        call = rpc(payload)
        error = await (stream_error_of(call) if streaming else error_of(call))
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, (method, payload, error)
        assert error.details().startswith("JSONParseError: The request is not a valid ")
        assert grpc_failure(error).info.reason == "PARSE_ERROR"


async def test_an_undefined_enum_number_is_refused(start03: Start03) -> None:
    env = await start03()
    request = send03()
    request.request.role = 7  # type: ignore[assignment]
    error = await error_of(env.stub.SendMessage(request))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error.details() == "InvalidParamsError: Invalid parameters: request.role is not a " \
                              "Role value"


@pytest.mark.parametrize("version", [None, "", "0.3", "0.3.1"])
async def test_the_03_version_rule_passes(start03: Start03, version: str | None) -> None:
    env = await start03()
    metadata = () if version is None else (("a2a-version", version),)
    assert (await env.stub.SendMessage(send03(), metadata=metadata)).HasField("task")


@REFUSED_BEFORE_THE_STORE
@pytest.mark.parametrize("version", ["1.0", "2", "nonsense"])
async def test_other_versions_are_refused_on_the_03_service(start03: Start03,
                                                           version: str) -> None:
    env = await start03()
    error = await error_of(env.stub.GetTask(pb03.GetTaskRequest(name="tasks/x"),
                                            metadata=(("a2a-version", version),)))
    assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert error.details().startswith("VersionNotSupportedError: A2A version")
    assert grpc_failure(error).info.reason == "VERSION_NOT_SUPPORTED"


async def test_x_a2a_extensions_are_read(start03: Start03) -> None:
    extension = pb.AgentExtension(uri="urn:ext:required", required=True)

    class Strict(GreeterAgent):
        extensions = (extension,)

    env = await start03(Strict())
    error = await error_of(env.stub.SendMessage(send03()))
    assert error.details().startswith("ExtensionSupportRequiredError: ")
    call = env.stub.SendMessage(send03(), metadata=(("x-a2a-extensions", extension.uri),))
    assert (await call).HasField("task")
    assert ("a2a-extensions", extension.uri) in tuple(await call.initial_metadata())


# --- limits, health, reflection --------------------------------------------------------------


async def test_the_request_size_limit_holds(start03: Start03) -> None:
    env = await start03(max_request_bytes=4096)
    error = await error_of(env.stub.SendMessage(send03("x" * 10_000)))
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


async def test_health_and_reflection_list_both_services(start03: Start03) -> None:
    env = await start03()
    health = health_pb2_grpc.HealthStub(env.channel)
    for service in ("", SERVICE_NAME, SERVICE_03):
        response = await health.Check(health_pb2.HealthCheckRequest(service=service))
        assert response.status == health_pb2.HealthCheckResponse.SERVING
    stub = reflection_pb2_grpc.ServerReflectionStub(env.channel)

    async def requests() -> Any:
        yield reflection_pb2.ServerReflectionRequest(list_services="")
        yield reflection_pb2.ServerReflectionRequest(file_containing_symbol=SERVICE_03)

    responses = [r async for r in stub.ServerReflectionInfo(requests())]
    names = {s.name for s in responses[0].list_services_response.service}
    assert SERVICE_03 == "a2a.v1.A2AService"
    assert {SERVICE_NAME, SERVICE_03, "grpc.health.v1.Health"} <= names
    assert responses[1].file_descriptor_response.file_descriptor_proto
    await env.harness.health.enter_graceful_shutdown()
    response = await health.Check(health_pb2.HealthCheckRequest(service=SERVICE_03))
    assert response.status == health_pb2.HealthCheckResponse.NOT_SERVING
