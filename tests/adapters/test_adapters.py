"""What every framework adapter does, each on a real framework agent with a scripted model
(tests/adapters/script.py), served over gRPC in process on both stores: LangGraph
(graphs.py), Strands Agents (strands_agent.py), the OpenAI Agents SDK (openai_agent.py).

The answer streams as chunks of one artifact that arrive while the model writes, tool calls
are status updates, a context's second task sees the first's conversation (the framework's
memory keyed by the contextId), a cancel stops a tool call at the runner's next look at the
task (within `poll_interval`: 1 s on DynamoDB) and a model that writes at the runner's next
write (tests/support/cancels.py), and a model's exception ends the task FAILED naming its
type only. The streaming door
(JSON-RPC, HTTP+JSON): test_door.py. What only one framework has: test_<framework>.py.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from typing import Any

import grpc
import pytest

from a2akit.adapters._stream import ARTIFACT_NAME
from a2akit.generated import a2a_pb2 as pb
from a2akit.store.base import TaskStore
from tests.adapters import graphs, openai_agent, strands_agent
from tests.adapters.conftest import Kit
from tests.adapters.script import DELAY, LONG_ANSWER, SECRET, SLOW_TOOL
from tests.adapters.support import chunks, statuses, stream, text
from tests.support.cancels import LoopLag, StoreCalls
from tests.support.messages import V1, send_request

pytestmark = pytest.mark.anyio


@dataclasses.dataclass(frozen=True)
class Framework:
    make: Callable[[], Any]
    name: str  # as a FAILED message names it


FRAMEWORKS = {
    "langgraph": Framework(graphs.make_agent, "LangGraph"),
    "strands": Framework(strands_agent.make_agent, "Strands"),
    "openai-agents": Framework(openai_agent.make_agent, "OpenAI Agents"),
}


@pytest.fixture(params=list(FRAMEWORKS))
def framework(request: pytest.FixtureRequest) -> Framework:
    return FRAMEWORKS[request.param]


async def test_the_answer_streams_as_chunks_before_the_task_completes(
        kit: Kit, framework: Framework) -> None:
    env = await kit(framework.make())
    events = await stream(env, "hello there")
    assert events[0][1].HasField("task")
    parts = chunks(events)
    assert len(parts) >= 3
    completed_at, last = events[-1]
    assert last.status_update.status.state == pb.TASK_STATE_COMPLETED
    # Word by word, 50 ms apart: the first chunk is out long before the task completes.
    assert completed_at - parts[0][0] >= (len(parts) - 1) * DELAY * 0.5
    # One artifact: the first chunk starts it, the others append, the last says so.
    assert len({chunk.artifact.artifact_id for _, chunk in parts}) == 1
    assert [chunk.append for _, chunk in parts] == [False] + [True] * (len(parts) - 1)
    assert [chunk.last_chunk for _, chunk in parts] == [False] * (len(parts) - 1) + [True]
    assert parts[0][1].artifact.name == ARTIFACT_NAME
    assert text(events) == ("You said: hello there. I have seen 1 messages in this thread "
                            "so far.")
    task = await env.stub.GetTask(pb.GetTaskRequest(id=last.status_update.task_id), metadata=V1)
    assert [a.artifact_id for a in task.artifacts] == [parts[0][1].artifact.artifact_id]
    assert "".join(p.text for p in task.artifacts[0].parts) == text(events)


async def test_tool_calls_are_status_updates_never_artifacts(
        kit: Kit, framework: Framework) -> None:
    env = await kit(framework.make())
    events = await stream(env, "tool aardvark")
    working = [said for state, said in statuses(events) if state == pb.TASK_STATE_WORKING]
    assert "Calling lookup" in working and "lookup answered" in working
    assert text(events) == "The tool said: aardvark is a word. That is all I know."
    assert "aardvark is a word" not in " ".join(working)  # the tool's output is not a status
    assert statuses(events)[-1][0] == pb.TASK_STATE_COMPLETED


async def test_a_second_task_in_the_context_sees_the_first_turn(
        kit: Kit, framework: Framework) -> None:
    env = await kit(framework.make())
    first = await stream(env, "my cat is called Tom")
    context_id = first[0][1].task.context_id
    second = await stream(env, "recall", context_id=context_id)
    assert second[0][1].task.id != first[0][1].task.id
    assert text(second) == "Earlier you said: my cat is called Tom"
    # Another context starts a conversation of its own.
    other = await stream(env, "recall")
    assert text(other) == "Earlier you said: "


async def test_cancel_during_a_tool_call_stops_the_tool_at_the_runners_next_look(
        kit: Kit, framework: Framework, store: TaskStore) -> None:
    env = await kit(framework.make())
    calls, lag = StoreCalls(), LoopLag()
    calls.watch(store)
    SLOW_TOOL.reset()
    events = env.stub.SendStreamingMessage(send_request("slowtool"), metadata=V1)
    seen: list[pb.StreamResponse] = []
    # The call's status is stored (streamed) before the cancel: one still unwritten when
    # the cancel's own write lands first ends with the task, as everything after it would.
    async with asyncio.timeout(10):
        while "Calling slow_lookup" not in str(seen):
            event = await events.read()
            assert isinstance(event, pb.StreamResponse)
            seen.append(event)
        await SLOW_TOOL.started.wait()
    task_id = seen[0].task.id
    loop = asyncio.get_running_loop()
    lag.start()
    canceled = await env.stub.CancelTask(pb.CancelTaskRequest(id=task_id), metadata=V1)
    answered = loop.time()
    assert canceled.status.state == pb.TASK_STATE_CANCELED
    async with asyncio.timeout(10):  # the tool's own await was cancelled (it sleeps 60 s)
        await SLOW_TOOL.ended.wait()
    calls.assert_stopped_at_next_look(task_id, answered, loop.time(), store.poll_interval,
                                      lag.stop())
    rest = []
    while (event := await events.read()) is not grpc.aio.EOF:
        rest.append(event)
    assert rest[-1].status_update.status.state == pb.TASK_STATE_CANCELED
    assert not any(event.HasField("artifact_update") for event in seen + rest)


async def test_cancel_while_the_model_writes_stops_the_model_at_the_runners_next_write(
        kit: Kit, framework: Framework, store: TaskStore) -> None:
    env = await kit(framework.make())
    calls = StoreCalls()
    calls.watch(store)
    LONG_ANSWER.reset()
    events = env.stub.SendStreamingMessage(send_request("long"), metadata=V1)
    task_id, written = "", 0
    while written < 3:
        event = await events.read()
        assert isinstance(event, pb.StreamResponse)
        task_id = task_id or event.task.id
        written += event.HasField("artifact_update")
    await env.stub.CancelTask(pb.CancelTaskRequest(id=task_id), metadata=V1)
    async with asyncio.timeout(10):  # the model's stream was closed mid-answer
        await LONG_ANSWER.ended.wait()
    calls.assert_stopped_at_next_write(task_id)
    while (event := await events.read()) is not grpc.aio.EOF:
        last = event
    assert last.status_update.status.state == pb.TASK_STATE_CANCELED
    task = await env.stub.GetTask(pb.GetTaskRequest(id=task_id), metadata=V1)
    assert len("".join(p.text for p in task.artifacts[0].parts).split()) < 100


async def test_a_model_exception_fails_the_task_naming_only_its_type(
        kit: Kit, framework: Framework) -> None:
    env = await kit(framework.make())
    events = await stream(env, "boom")
    state, said = statuses(events)[-1]
    assert state == pb.TASK_STATE_FAILED
    assert said == f"{framework.name} failed: ModelOverloaded"
    assert SECRET not in str([e for _, e in events])
