"""Calls03 in process over the core (the embedded store): the shared decisions of issue 28
that both 0.3 bindings inherit. Over the wire, on both stores: tests/compat03/test_grpc03.py."""

from __future__ import annotations

import dataclasses

import pytest

from a2akit.caller import Call
from a2akit.compat03.calls import Calls03
from a2akit.errors import (
    ExtendedAgentCardNotConfiguredError,
    InvalidParamsError,
    TaskNotFoundError,
)
from a2akit.examples.cancellable import CountingAgent
from a2akit.examples.input_required import GreeterAgent
from a2akit.generated import a2a_pb2 as pb
from a2akit.generated import a2a_v0_3_pb2 as pb03
from a2akit.operations import Operations
from tests.support.harness import ANON, memory_operations

_CARD = pb03.GetAgentCardRequest()

pytestmark = pytest.mark.anyio

HOOK = "https://93.184.215.14/hook"


class _Headers:
    def __init__(self, values: dict[str, str]) -> None:
        self.values = values

    def getlist(self, key: str) -> list[str]:
        return [self.values[key]] if key in self.values else []


async def _call(ops: Operations, **headers: str) -> Call:
    return await ops.resolve_call(_Headers(headers), protocol_version="0.3")


def _send(text: str, *, blocking: bool | None = None,
          task_id: str = "") -> pb03.SendMessageRequest:
    request = pb03.SendMessageRequest(request=pb03.Message(
        message_id=f"m-{text}-{task_id}", role=pb03.ROLE_USER, task_id=task_id,
        content=[pb03.Part(text=text)]))
    if blocking is not None:
        request.configuration.blocking = blocking
    return request


async def test_send_blocks_without_configuration_and_not_with_blocking_unset() -> None:
    ops = memory_operations(CountingAgent())
    calls, call = Calls03(ops), await _call(ops)
    quick = await calls.send_message(_send("a", blocking=False), call)
    assert quick.task.status.state in (pb03.TASK_STATE_SUBMITTED, pb03.TASK_STATE_WORKING)
    canceled = await calls.cancel_task(pb03.CancelTaskRequest(name=f"tasks/{quick.task.id}"),
                                       call)
    assert canceled.status.state == pb03.TASK_STATE_CANCELLED


async def test_stream_final_on_input_required_and_subscription_to_a_finished_task() -> None:
    ops = memory_operations(GreeterAgent())
    calls, call = Calls03(ops), await _call(ops)
    events = [e async for e in await calls.send_streaming_message(_send("hi"), call)]
    assert events[0].HasField("task")
    last = events[-1].status_update
    assert last.status.state == pb03.TASK_STATE_INPUT_REQUIRED and last.final
    assert all(not e.status_update.final for e in events[:-1])
    task_id = events[0].task.id
    done = await calls.send_message(_send("Ada", blocking=True, task_id=task_id), call)
    assert done.task.status.state == pb03.TASK_STATE_COMPLETED
    got = [e async for e in await calls.task_subscription(
        pb03.TaskSubscriptionRequest(name=f"tasks/{task_id}"), call)]
    assert [e.WhichOneof("payload") for e in got] == ["task"]
    assert got[0].task.status.state == pb03.TASK_STATE_COMPLETED
    with pytest.raises(TaskNotFoundError):
        await calls.task_subscription(pb03.TaskSubscriptionRequest(name="tasks/nope"), call)


async def test_push_configs() -> None:
    ops = memory_operations()
    calls, call = Calls03(ops), await _call(ops)
    task = (await calls.send_message(_send("x"), call)).task
    parent = f"tasks/{task.id}"
    with pytest.raises(TaskNotFoundError):  # no config yet
        await calls.get_push_config(pb03.GetTaskPushNotificationConfigRequest(name=parent),
                                    call)
    body = pb03.TaskPushNotificationConfig(
        push_notification_config=pb03.PushNotificationConfig(url=HOOK))
    first = await calls.create_push_config(pb03.CreateTaskPushNotificationConfigRequest(
        parent=parent, config_id="named", config=body), call)
    assert first.name == f"{parent}/pushNotificationConfigs/named"
    # Without a config id: no config has the task's id, so the first one.
    got = await calls.get_push_config(pb03.GetTaskPushNotificationConfigRequest(name=parent),
                                      call)
    assert got == first
    default = await calls.create_push_config(pb03.CreateTaskPushNotificationConfigRequest(
        parent=parent, config=body), call)
    assert default.push_notification_config.id == task.id
    got = await calls.get_push_config(pb03.GetTaskPushNotificationConfigRequest(name=parent),
                                      call)
    assert got == default
    listed = await calls.list_push_configs(
        pb03.ListTaskPushNotificationConfigRequest(parent=parent, page_size=1), call)
    assert sorted(c.name for c in listed.configs) == sorted([first.name, default.name])
    assert not listed.next_page_token
    await calls.delete_push_config(
        pb03.DeleteTaskPushNotificationConfigRequest(name=first.name), call)
    listed = await calls.list_push_configs(
        pb03.ListTaskPushNotificationConfigRequest(parent=parent), call)
    assert [c.name for c in listed.configs] == [default.name]
    with pytest.raises(InvalidParamsError):
        await calls.delete_push_config(
            pb03.DeleteTaskPushNotificationConfigRequest(name=task.id), call)


async def test_agent_card_falls_back_to_the_public_card() -> None:
    ops = memory_operations(settings=dataclasses.replace(ANON, extended_agent_card=True,
                                                         bearer_tokens={"s": "alice"}))
    calls, call = Calls03(ops), await _call(ops)
    card = await calls.get_agent_card(_CARD, call)
    assert card.name == ops.card.name and card.supports_authenticated_extended_card
    with pytest.raises(Exception) as caught:
        await calls.get_agent_card(_CARD, call, public_fallback=False)
    assert caught.type.__name__ == "AuthenticationRequiredError"
    alice = await _call(ops, authorization="Bearer s")
    with pytest.raises(ExtendedAgentCardNotConfiguredError):
        await calls.get_agent_card(_CARD, alice, public_fallback=False)
    assert (await calls.get_agent_card(_CARD, alice)).name == ops.card.name


class _WithExtendedCard(GreeterAgent):
    extended_card = pb.AgentCard(name="Extended", description="for members")


async def test_the_extended_card_for_a_caller_who_may_read_it() -> None:
    ops = memory_operations(_WithExtendedCard(), dataclasses.replace(
        ANON, extended_agent_card=True, bearer_tokens={"s": "alice"}))
    calls = Calls03(ops)
    card = await calls.get_agent_card(_CARD, await _call(ops, authorization="Bearer s"))
    # Its addresses come from the public card, which the agent's extended card lacks.
    assert (card.name, card.url) == ("Extended", ops.card.supported_interfaces[0].url)
    assert (await calls.get_agent_card(_CARD, await _call(ops))).name == ops.card.name
