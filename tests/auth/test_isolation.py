"""Two principals in two tenants try every operation on each other's tasks, in sequences
hypothesis draws: not one attempt may succeed, on any front door.

alice holds a JWT naming tenants t1 and t2; bob holds two API keys, one bound to t1, one to
t2. Each of the four homes (tenant, owner) has a task waiting for input (non-terminal), a
completed one, and a push config on each. An attempt names a tenant ("" for none, or t1, t2,
t3) and targets a task of a home that is not the one the caller's credentials and that tenant
resolve to. It must answer TaskNotFound (the task does not exist for the caller) or, for a
tenant the caller does not belong to, PermissionDenied; ListTasks and a resent message may
succeed but only within the caller's own home. After every sequence the homes are unchanged.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2akit.agent import RequestContext, TaskHandle
from a2akit.auth import Authenticator
from a2akit.auth.api_keys import hash_key, new_key
from a2akit.generated import a2a_pb2 as pb
from a2akit.runtime import build_operations
from a2akit.settings import STREAM, Settings
from a2akit.store.memory import MemoryStore
from tests.auth.conftest import Clock
from tests.auth.issuer import AUDIENCE, Issuer
from tests.auth.transports import TRANSPORTS, Transport, open_transport
from tests.support.messages import proto_message

BOB_T1, BOB_T2 = new_key(), new_key()
TENANTS = ("", "t1", "t2", "t3")
WEBHOOK = "https://93.184.216.34/hook"  # a public address literal: no DNS lookup


class AskOrFinish:
    """"ask" waits for input (a non-terminal task); anything else completes."""

    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        if context.text == "ask":
            await task.ask_input("more?")
        else:
            await task.complete("done")


@dataclasses.dataclass(frozen=True)
class Caller:
    name: str
    owner: str
    tenants: tuple[str, ...]  # the first is the default

    def home(self, tenant: str) -> tuple[str, str] | None:
        """The (tenant, owner) a request naming `tenant` works in; None: not allowed."""
        if not tenant:
            return self.tenants[0], self.owner
        return (tenant, self.owner) if tenant in self.tenants else None


CALLERS = [Caller("alice", "jwt:alice", ("t1", "t2")), Caller("bob-t1", "key:bob", ("t1",)),
           Caller("bob-t2", "key:bob", ("t2",))]
HOMES = [("t1", "jwt:alice"), ("t2", "jwt:alice"), ("t1", "key:bob"), ("t2", "key:bob")]


@dataclasses.dataclass
class Home:
    caller: Caller
    tenant: str
    asking: pb.Task
    done: pb.Task
    first_message: pb.Message  # what created `asking`, for the resend attempt

    def ids(self) -> set[str]:
        return {self.asking.id, self.done.id}


@dataclasses.dataclass
class World:
    door: Transport
    credentials: dict[str, dict[str, str]]
    homes: dict[tuple[str, str], Home]


def _build(name: str, issuer: Issuer) -> World:
    keys = json.dumps([{"principal": "bob", "sha256": hash_key(BOB_T1), "tenant": "t1"},
                       {"principal": "bob", "sha256": hash_key(BOB_T2), "tenant": "t2"}])
    config = Settings(jwt_issuer=issuer.url, jwt_audiences=(AUDIENCE,),
                      jwt_tenant_claim="tenants", api_keys=keys, push_notifications=True,
                      push_delivery=STREAM,  # configs only: nothing is delivered here
                      stream_budget_seconds=2)
    authenticator = Authenticator.from_settings(config, clock=Clock())
    door = open_transport(name, build_operations(config, MemoryStore(), AskOrFinish(),
                                                 authenticator=authenticator))
    credentials = {
        "alice": {"Authorization": "Bearer " + issuer.token(sub="alice", tenants=["t1", "t2"],
                                                            exp=2**31 - 1)},
        "bob-t1": {"x-api-key": BOB_T1}, "bob-t2": {"x-api-key": BOB_T2}}
    homes = {}
    for caller in CALLERS:
        for tenant in caller.tenants:
            if (tenant, caller.owner) in homes:
                continue
            headers = credentials[caller.name]
            first = proto_message("ask")
            asking = door.call("SendMessage", pb.SendMessageRequest(message=first, tenant=tenant),
                               headers).result.task
            done = door.call("SendMessage", pb.SendMessageRequest(
                message=proto_message("finish"), tenant=tenant), headers).result.task
            assert asking.status.state == pb.TASK_STATE_INPUT_REQUIRED
            assert done.status.state == pb.TASK_STATE_COMPLETED
            for task in (asking, done):
                created = door.call("CreateTaskPushNotificationConfig",
                                    pb.TaskPushNotificationConfig(
                                        task_id=task.id, id="cfg", url=WEBHOOK, tenant=tenant),
                                    headers)
                assert created.ok, created.text
            homes[(tenant, caller.owner)] = Home(caller, tenant, asking, done, first)
    assert sorted(homes) == sorted(HOMES)
    return World(door, credentials, homes)


@pytest.fixture(scope="module", params=TRANSPORTS)
def world(request: pytest.FixtureRequest, signing_keys: dict[str, object]) -> Iterator[World]:
    issuer = Issuer(signing_keys)  # type: ignore[arg-type]
    issuer.publish("k1")
    built = _build(str(request.param), issuer)
    yield built
    built.door.close()
    issuer.close()


ATTACKS = ["GetTask", "CancelTask", "SendMessage", "Resend", "SendStreamingMessage",
           "SubscribeToTask", "ListTasks", "CreateTaskPushNotificationConfig",
           "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs",
           "DeleteTaskPushNotificationConfig"]


def _request(attack: str, target: Home, task: pb.Task, tenant: str) -> tuple[str, object]:
    if attack == "GetTask":
        return attack, pb.GetTaskRequest(id=task.id, tenant=tenant)
    if attack == "CancelTask":
        return attack, pb.CancelTaskRequest(id=task.id, tenant=tenant)
    if attack in ("SendMessage", "SendStreamingMessage"):
        message = proto_message("answer", task_id=task.id)
        return attack, pb.SendMessageRequest(message=message, tenant=tenant)
    if attack == "Resend":  # the very message that created the target's task
        return "SendMessage", pb.SendMessageRequest(message=target.first_message, tenant=tenant)
    if attack == "SubscribeToTask":
        return attack, pb.SubscribeToTaskRequest(id=task.id, tenant=tenant)
    if attack == "ListTasks":
        return attack, pb.ListTasksRequest(tenant=tenant, page_size=100)
    if attack == "CreateTaskPushNotificationConfig":
        return attack, pb.TaskPushNotificationConfig(task_id=task.id, id="evil", url=WEBHOOK,
                                                     tenant=tenant)
    if attack == "GetTaskPushNotificationConfig":
        return attack, pb.GetTaskPushNotificationConfigRequest(task_id=task.id, id="cfg",
                                                               tenant=tenant)
    if attack == "ListTaskPushNotificationConfigs":
        return attack, pb.ListTaskPushNotificationConfigsRequest(task_id=task.id, tenant=tenant)
    return attack, pb.DeleteTaskPushNotificationConfigRequest(task_id=task.id, id="cfg",
                                                              tenant=tenant)


def _others(world: World, home: tuple[str, str] | None) -> set[str]:
    return {i for key, h in world.homes.items() if key != home for i in h.ids()}


attempts = st.lists(st.tuples(st.sampled_from(CALLERS), st.sampled_from(TENANTS),
                              st.sampled_from(HOMES), st.booleans(),
                              st.sampled_from(ATTACKS)), min_size=1, max_size=8)


@settings(max_examples=30, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(attempts)
def test_no_caller_reaches_another_home(world: World, steps: list[tuple[
        Caller, str, tuple[str, str], bool, str]]) -> None:
    for caller, tenant, target_key, waiting, attack in steps:
        home = caller.home(tenant)
        if home == target_key:
            continue  # the caller's own task: not an attack
        target = world.homes[target_key]
        method, request = _request(attack, target, target.asking if waiting else target.done,
                                   tenant)
        outcome = world.door.call(method, request, world.credentials[caller.name])  # type: ignore[arg-type]
        if home is None:
            assert outcome.reason == "PERMISSION_DENIED", (attack, outcome.text)
        elif attack == "ListTasks":
            assert outcome.ok, outcome.text
            assert not {t.id for t in outcome.result.tasks} & _others(world, home)
        elif attack == "Resend":
            assert outcome.ok, outcome.text
            assert outcome.result.task.id not in _others(world, home)
        else:
            assert outcome.reason == "TASK_NOT_FOUND", (attack, outcome.text)
    for home in world.homes.values():
        headers = world.credentials[home.caller.name]
        for task in (home.asking, home.done):
            now = world.door.call("GetTask", pb.GetTaskRequest(id=task.id, tenant=home.tenant),
                                  headers)
            assert now.result.status.state == task.status.state
            configs = world.door.call("ListTaskPushNotificationConfigs",
                                      pb.ListTaskPushNotificationConfigsRequest(
                                          task_id=task.id, tenant=home.tenant), headers)
            assert [c.id for c in configs.result.configs] == ["cfg"]
