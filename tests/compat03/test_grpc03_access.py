"""Who may do what on the 0.3 gRPC service: credentials are checked exactly as on 1.0 (the
same answer for each way of presenting them), owners and tenants stay apart, and a task is
one task for both generations: made over 0.3 it is read, listed, followed and canceled over
1.0, and the other way round. Isolation and cross-generation run on both stores."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Callable, Iterator

import grpc
import pytest

from a2akit.auth.api_keys import hash_key, new_key
from a2akit.examples.cancellable import CountingAgent
from a2akit.generated import a2a_pb2 as pb
from a2akit.generated import a2a_v0_3_pb2 as pb03
from a2akit.runtime import build_operations
from a2akit.settings import Settings
from a2akit.store.memory import MemoryStore
from tests.auth.issuer import AUDIENCE, SCOPE, Issuer, make_keys
from tests.support.errors import grpc_failure
from tests.support.grpc03 import Env03, Start03, error_of, open_env03, send03, stream_error_of
from tests.support.messages import V1, send_request

pytestmark = pytest.mark.anyio

KEY, OTHER_KEY, TENANT_KEY = new_key(), new_key(), new_key()
HOOK = "https://93.184.215.14/a2a-hook"


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    server = Issuer(make_keys())
    server.publish("k1")
    yield server
    server.close()


@pytest.fixture
async def secured(issuer: Issuer) -> AsyncIterator[Env03]:
    """JWTs (with a required scope) and API keys, no anonymous callers; the embedded store
    (credentials are checked before the store is read)."""
    keys = json.dumps([{"principal": "bot", "sha256": hash_key(KEY)}])
    settings = Settings(jwt_issuer=issuer.url, jwt_audiences=(AUDIENCE,),
                        jwt_required_scopes={"*": (SCOPE,)}, api_keys=keys)
    async with open_env03(build_operations(settings, store=MemoryStore())) as env:
        yield env


def _bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


CREDENTIALS: dict[str, tuple[Callable[[Issuer], dict[str, str]], str | None]] = {
    "jwt": (lambda i: _bearer(i.token()), None),
    "api-key": (lambda i: {"x-api-key": KEY}, None),
    "missing": (lambda i: {}, "UNAUTHENTICATED"),
    "malformed-jwt": (lambda i: _bearer("not-a-jwt"), "UNAUTHENTICATED"),
    "expired-jwt": (lambda i: _bearer(i.token(exp=1, iat=0)), "UNAUTHENTICATED"),
    "wrong-audience": (lambda i: _bearer(i.token(aud="another-agent")), "UNAUTHENTICATED"),
    "wrong-key": (lambda i: _bearer(i.token("k1", key="evil")), "UNAUTHENTICATED"),
    "missing-scope": (lambda i: _bearer(i.token(scope="a2a/read")), "PERMISSION_DENIED"),
    "api-key-wrong": (lambda i: {"x-api-key": OTHER_KEY}, "UNAUTHENTICATED"),
    "two-schemes": (lambda i: {**_bearer(i.token()), "x-api-key": KEY}, "UNAUTHENTICATED"),
}


@pytest.mark.parametrize("case", sorted(CREDENTIALS))
async def test_credentials_get_the_same_answer_as_on_10(secured: Env03, issuer: Issuer,
                                                        case: str) -> None:
    make, refused = CREDENTIALS[case]
    metadata = tuple(make(issuer).items())
    old = await error_of(secured.stub.GetTask(pb03.GetTaskRequest(name="tasks/none"),
                                              metadata=metadata))
    new = await error_of(secured.stub10.GetTask(pb.GetTaskRequest(id="none"),
                                                metadata=(*metadata, *V1)))
    found_old, found_new = grpc_failure(old), grpc_failure(new)
    assert old.code() == new.code()
    assert found_old.info == found_new.info
    assert found_old.info.reason == (refused or "TASK_NOT_FOUND")
    assert old.details().endswith(": " + new.details())
    if refused is not None:
        assert old.code() in (grpc.StatusCode.UNAUTHENTICATED,
                              grpc.StatusCode.PERMISSION_DENIED)
    if refused is None:  # and the call itself goes through
        sent = await secured.stub.SendMessage(send03(), metadata=metadata)
        assert sent.task.status.state == pb03.TASK_STATE_COMPLETED


async def test_a_refused_stream_is_refused_before_anything_runs(secured: Env03) -> None:
    error = await stream_error_of(secured.stub.SendStreamingMessage(send03()))
    assert error.code() == grpc.StatusCode.UNAUTHENTICATED
    assert error.details().startswith("AuthenticationRequiredError: ")


# --- owners and tenants (both stores) ----------------------------------------------------------


def _people() -> Settings:
    run = uuid.uuid4().hex[:8]
    keys = json.dumps([{"principal": f"acme-{run}", "sha256": hash_key(TENANT_KEY),
                        "tenant": f"acme-{run}"}])
    return Settings(bearer_tokens={"ta": f"alice-{run}", "tb": f"bob-{run}"}, api_keys=keys,
                    push_notifications=True, push_delivery="stream")


ALICE, BOB = (("authorization", "Bearer ta"),), (("authorization", "Bearer tb"),)


async def test_a_03_caller_cannot_reach_another_owners_task(start03: Start03) -> None:
    env = await start03(CountingAgent(), _people())
    task = (await env.stub.SendMessage(send03("count", blocking=False), metadata=ALICE)).task
    name = f"tasks/{task.id}"
    for call in (
        env.stub.GetTask(pb03.GetTaskRequest(name=name), metadata=BOB),
        env.stub.CancelTask(pb03.CancelTaskRequest(name=name), metadata=BOB),
        env.stub.SendMessage(send03("x", task_id=task.id), metadata=BOB),
        env.stub.ListTaskPushNotificationConfig(
            pb03.ListTaskPushNotificationConfigRequest(parent=name), metadata=BOB),
        env.stub.CreateTaskPushNotificationConfig(pb03.CreateTaskPushNotificationConfigRequest(
            parent=name, config=pb03.TaskPushNotificationConfig(
                push_notification_config=pb03.PushNotificationConfig(url=HOOK))),
            metadata=BOB),
        env.stub10.GetTask(pb.GetTaskRequest(id=task.id), metadata=(*BOB, *V1)),
    ):
        error = await error_of(call)
        assert error.code() == grpc.StatusCode.NOT_FOUND, error
    error = await stream_error_of(env.stub.TaskSubscription(
        pb03.TaskSubscriptionRequest(name=name), metadata=BOB))
    assert error.code() == grpc.StatusCode.NOT_FOUND
    # Still Alice's, untouched.
    mine = await env.stub.CancelTask(pb03.CancelTaskRequest(name=name), metadata=ALICE)
    assert mine.status.state == pb03.TASK_STATE_CANCELLED


async def test_03_calls_work_in_the_callers_tenant(start03: Start03) -> None:
    """0.3 requests name no tenant: a caller bound to one works in it (its first), one bound
    to none in the empty tenant, as a 1.0 request that names none (5.3 #18)."""
    settings = _people()
    env = await start03(settings=settings)
    acme = (("x-api-key", TENANT_KEY),)
    task = (await env.stub.SendMessage(send03(), metadata=acme)).task
    tenant = json.loads(settings.api_keys or "[]")[0]["tenant"]
    got = await env.stub10.GetTask(pb.GetTaskRequest(id=task.id, tenant=tenant),
                                   metadata=(*acme, *V1))
    assert got.id == task.id
    # Alice's 1.0 task in a tenant she names is not in her 0.3 view (the empty tenant).
    hers = await env.stub10.SendMessage(pb.SendMessageRequest(
        tenant="elsewhere", message=send_request().message), metadata=(*ALICE, *V1))
    error = await error_of(env.stub.GetTask(pb03.GetTaskRequest(name=f"tasks/{hers.task.id}"),
                                            metadata=ALICE))
    assert error.code() == grpc.StatusCode.NOT_FOUND


# --- one task, two generations (both stores) --------------------------------------------------


async def test_a_task_made_over_03_is_read_listed_followed_and_canceled_over_10(
        start03: Start03) -> None:
    env = await start03(CountingAgent())
    old = await env.stub.SendMessage(send03("count", blocking=False,
                                            context_id=str(uuid.uuid4())))
    task_id, context_id = old.task.id, old.task.context_id
    got = await env.stub10.GetTask(pb.GetTaskRequest(id=task_id), metadata=V1)
    assert (got.id, got.context_id) == (task_id, context_id)
    assert got.history[0].parts[0].text == "count"
    listed = await env.stub10.ListTasks(pb.ListTasksRequest(context_id=context_id),
                                        metadata=V1)
    assert [t.id for t in listed.tasks] == [task_id]
    stream = env.stub10.SubscribeToTask(pb.SubscribeToTaskRequest(id=task_id), metadata=V1)
    first = await stream.read()
    assert first.task.id == task_id
    canceled = await env.stub10.CancelTask(pb.CancelTaskRequest(id=task_id), metadata=V1)
    assert canceled.status.state == pb.TASK_STATE_CANCELED
    last = first
    while (event := await stream.read()) is not grpc.aio.EOF:
        last = event
    assert last.status_update.status.state == pb.TASK_STATE_CANCELED
    seen = await env.stub.GetTask(pb03.GetTaskRequest(name=f"tasks/{task_id}"))
    assert seen.status.state == pb03.TASK_STATE_CANCELLED


async def test_a_task_made_over_10_is_read_followed_and_canceled_over_03(
        start03: Start03) -> None:
    env = await start03(CountingAgent())
    new = await env.stub10.SendMessage(send_request("count", immediately=True), metadata=V1)
    task_id = new.task.id
    got = await env.stub.GetTask(pb03.GetTaskRequest(name=f"tasks/{task_id}"))
    assert (got.id, got.context_id) == (task_id, new.task.context_id)
    assert got.history[0].content[0].text == "count"
    stream = env.stub.TaskSubscription(pb03.TaskSubscriptionRequest(name=f"tasks/{task_id}"))
    first = await stream.read()
    assert first.task.id == task_id
    canceled = await env.stub.CancelTask(pb03.CancelTaskRequest(name=f"tasks/{task_id}"))
    assert canceled.status.state == pb03.TASK_STATE_CANCELLED
    last = first
    while (event := await stream.read()) is not grpc.aio.EOF:
        last = event
    assert last.status_update.status.state == pb03.TASK_STATE_CANCELLED
    assert last.status_update.final
    seen = await env.stub10.GetTask(pb.GetTaskRequest(id=task_id), metadata=V1)
    assert seen.status.state == pb.TASK_STATE_CANCELED


async def test_push_configs_are_shared_by_both_generations(start03: Start03) -> None:
    env = await start03()
    task = (await env.stub.SendMessage(send03())).task
    made10 = await env.stub10.CreateTaskPushNotificationConfig(
        pb.TaskPushNotificationConfig(task_id=task.id, id="new", url=HOOK,
                                      authentication=pb.AuthenticationInfo(scheme="Bearer")),
        metadata=V1)
    made03 = await env.stub.CreateTaskPushNotificationConfig(
        pb03.CreateTaskPushNotificationConfigRequest(
            parent=f"tasks/{task.id}", config_id="old", config=pb03.TaskPushNotificationConfig(
                push_notification_config=pb03.PushNotificationConfig(url=HOOK, token="t"))))
    listed03 = await env.stub.ListTaskPushNotificationConfig(
        pb03.ListTaskPushNotificationConfigRequest(parent=f"tasks/{task.id}"))
    assert sorted(c.push_notification_config.id for c in listed03.configs) == ["new", "old"]
    seen = next(c for c in listed03.configs if c.push_notification_config.id == "new")
    assert list(seen.push_notification_config.authentication.schemes) == [
        made10.authentication.scheme]
    got10 = await env.stub10.GetTaskPushNotificationConfig(
        pb.GetTaskPushNotificationConfigRequest(task_id=task.id, id="old"), metadata=V1)
    assert (got10.url, got10.token) == (HOOK, made03.push_notification_config.token)
