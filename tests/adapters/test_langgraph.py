"""LangGraphAgent in the kit: real LangGraph graphs on a scripted chat model
(tests/adapters/graphs.py), served over gRPC in process on both stores.

The answer streams as chunks of one artifact that arrive while the model writes, tool calls
are status updates, a context's second task sees the first's conversation (the checkpointer,
keyed by the contextId), an interrupt asks for input and the next message resumes the run,
cancelling during a tool call stops the tool within a second, and a model's exception ends the
task FAILED naming its type only. The streaming door (JSON-RPC, HTTP+JSON) and a resume in a
second process: test_langgraph_processes.py.
"""

from __future__ import annotations

import asyncio

import grpc
import pytest

from a2akit.adapters._stream import ARTIFACT_NAME
from a2akit.adapters.langgraph import LangGraphAgent
from a2akit.generated import a2a_pb2 as pb
from tests.adapters.conftest import Kit
from tests.adapters.graphs import (
    LONG_ANSWER,
    SECRET,
    SLOW_TOOL,
    ScriptedChatModel,
    interview_graph,
    make_agent,
    make_interviewer,
)
from tests.support.harness import GrpcHarness
from tests.support.messages import V1, send_request

pytestmark = pytest.mark.anyio

Timed = list[tuple[float, pb.StreamResponse]]


async def _stream(env: GrpcHarness, text: str, **fields: str) -> Timed:
    """SendStreamingMessage; each event with its arrival (loop time)."""
    loop = asyncio.get_running_loop()
    return [(loop.time(), event) async for event in env.stub.SendStreamingMessage(
        send_request(text, **fields), metadata=V1)]


def _chunks(events: Timed) -> list[tuple[float, pb.TaskArtifactUpdateEvent]]:
    return [(at, e.artifact_update) for at, e in events if e.HasField("artifact_update")]


def _text(events: Timed) -> str:
    return "".join(part.text for _, chunk in _chunks(events) for part in chunk.artifact.parts)


def _statuses(events: Timed) -> list[tuple[int, str]]:
    return [(e.status_update.status.state,
             "".join(p.text for p in e.status_update.status.message.parts))
            for _, e in events if e.HasField("status_update")]


async def test_the_answer_streams_as_chunks_before_the_task_completes(kit: Kit) -> None:
    env = await kit(make_agent())
    events = await _stream(env, "hello there")
    assert events[0][1].HasField("task")
    chunks = _chunks(events)
    assert len(chunks) >= 3
    completed_at, last = events[-1]
    assert last.status_update.status.state == pb.TASK_STATE_COMPLETED
    # Word by word, 50 ms apart: the first chunk is out long before the task completes.
    assert completed_at - chunks[0][0] >= (len(chunks) - 1) * ScriptedChatModel().delay * 0.5
    # One artifact: the first chunk starts it, the others append, the last says so.
    assert len({chunk.artifact.artifact_id for _, chunk in chunks}) == 1
    assert [chunk.append for _, chunk in chunks] == [False] + [True] * (len(chunks) - 1)
    assert [chunk.last_chunk for _, chunk in chunks] == [False] * (len(chunks) - 1) + [True]
    assert chunks[0][1].artifact.name == ARTIFACT_NAME
    assert _text(events) == ("You said: hello there. I have seen 1 messages in this thread "
                             "so far.")
    task = await env.stub.GetTask(pb.GetTaskRequest(id=last.status_update.task_id), metadata=V1)
    assert [a.artifact_id for a in task.artifacts] == [chunks[0][1].artifact.artifact_id]
    assert "".join(p.text for p in task.artifacts[0].parts) == _text(events)


async def test_tool_calls_are_status_updates_never_artifacts(kit: Kit) -> None:
    env = await kit(make_agent())
    events = await _stream(env, "tool aardvark")
    working = [text for state, text in _statuses(events) if state == pb.TASK_STATE_WORKING]
    assert "Calling lookup" in working and "lookup answered" in working
    assert _text(events) == "The tool said: aardvark is a word. That is all I know."
    assert "aardvark is a word" not in " ".join(working)  # the tool's output is not a status
    assert _statuses(events)[-1][0] == pb.TASK_STATE_COMPLETED


async def test_a_second_task_in_the_context_sees_the_first_turn(kit: Kit) -> None:
    env = await kit(make_agent())
    first = await _stream(env, "my cat is called Tom")
    context_id = first[0][1].task.context_id
    second = await _stream(env, "recall", context_id=context_id)
    assert second[0][1].task.id != first[0][1].task.id
    assert _text(second) == "Earlier you said: my cat is called Tom"
    # Another context starts a conversation of its own.
    other = await _stream(env, "recall")
    assert _text(other) == "Earlier you said: "


async def test_cancel_during_a_tool_call_stops_the_tool_within_a_second(kit: Kit) -> None:
    env = await kit(make_agent())
    SLOW_TOOL.reset()
    stream = env.stub.SendStreamingMessage(send_request("slowtool"), metadata=V1)
    first = await stream.read()
    assert isinstance(first, pb.StreamResponse)
    async with asyncio.timeout(10):
        await SLOW_TOOL.started.wait()
    canceled = await env.stub.CancelTask(pb.CancelTaskRequest(id=first.task.id), metadata=V1)
    assert canceled.status.state == pb.TASK_STATE_CANCELED
    async with asyncio.timeout(1):  # the tool's own await was cancelled
        await SLOW_TOOL.ended.wait()
    rest = []
    while (event := await stream.read()) is not grpc.aio.EOF:
        rest.append(event)
    assert "Calling slow_lookup" in str(rest)
    assert rest[-1].status_update.status.state == pb.TASK_STATE_CANCELED
    assert not any(event.HasField("artifact_update") for event in rest)


async def test_cancel_while_the_model_writes_stops_the_model_within_a_second(kit: Kit) -> None:
    env = await kit(make_agent())
    LONG_ANSWER.reset()
    stream = env.stub.SendStreamingMessage(send_request("long"), metadata=V1)
    task_id, chunks = "", 0
    while chunks < 3:
        event = await stream.read()
        assert isinstance(event, pb.StreamResponse)
        task_id = task_id or event.task.id
        chunks += event.HasField("artifact_update")
    await env.stub.CancelTask(pb.CancelTaskRequest(id=task_id), metadata=V1)
    async with asyncio.timeout(1):  # the model's stream was closed mid-answer
        await LONG_ANSWER.ended.wait()
    while (event := await stream.read()) is not grpc.aio.EOF:
        last = event
    assert last.status_update.status.state == pb.TASK_STATE_CANCELED
    task = await env.stub.GetTask(pb.GetTaskRequest(id=task_id), metadata=V1)
    assert len("".join(p.text for p in task.artifacts[0].parts).split()) < 100


async def test_a_model_exception_fails_the_task_naming_only_its_type(kit: Kit) -> None:
    env = await kit(make_agent())
    events = await _stream(env, "boom")
    state, text = _statuses(events)[-1]
    assert state == pb.TASK_STATE_FAILED
    assert text == "LangGraph failed: ModelOverloaded"
    assert SECRET not in str([e for _, e in events])


async def test_an_interrupt_asks_for_input_and_the_answer_resumes_the_run(kit: Kit) -> None:
    env = await kit(make_interviewer())
    asked = await _stream(env, "hi")
    state, question = _statuses(asked)[-1]
    assert (state, question) == (pb.TASK_STATE_INPUT_REQUIRED, "What is your name?")
    task = asked[0][1].task
    answered = await _stream(env, "Ann", task_id=task.id, context_id=task.context_id)
    assert _statuses(answered)[-1][0] == pb.TASK_STATE_COMPLETED
    # The same run: the thread holds the first message, then the answer the node made of it.
    assert _text(answered) == ("You said: My name is Ann. I have seen 2 messages in this "
                               "thread so far.")
    assert len(_chunks(answered)) >= 3


async def test_a_resume_without_the_checkpoint_fails_cleanly(kit: Kit) -> None:
    """An in-memory checkpoint stays with the process that wrote it: here it is dropped, as a
    restart would, and the answer fails the task with a reason instead of starting over."""
    agent = make_interviewer()
    env = await kit(agent)
    task = (await _stream(env, "hi"))[0][1].task
    await agent.graph.checkpointer.adelete_thread(task.context_id)  # type: ignore[union-attr]
    answered = await _stream(env, "Ann", task_id=task.id, context_id=task.context_id)
    state, text = _statuses(answered)[-1]
    assert state == pb.TASK_STATE_FAILED
    assert "checkpoint is gone" in text


def test_skills_come_from_the_tools_unless_declared() -> None:
    agent = make_agent()
    assert [(s.id, s.description) for s in agent.skills] == [
        ("lookup", "Look a word up in the scripted encyclopedia."),
        ("slow_lookup", "Look something up, slowly.")]
    declared = pb.AgentSkill(id="chat", name="Chat", description="Talks.", tags=["chat"])
    assert LangGraphAgent(interview_graph(), skills=[declared]).skills == [declared]
    assert LangGraphAgent(interview_graph()).skills == []  # the kit's default skill then
    assert agent.name == "Scripted chat"


def test_a_graph_compiled_with_a_checkpointer_keeps_it() -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    saver = InMemorySaver()
    graph = interview_graph().copy(update={"checkpointer": saver})
    assert LangGraphAgent(graph).graph.checkpointer is saver
    assert isinstance(make_agent().graph.checkpointer, InMemorySaver)
