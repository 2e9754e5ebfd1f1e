"""OpenAIAgent in the kit, beyond what every adapter does (test_adapters.py): a session store
of the caller's choice carries a context's conversation past the adapter (and so the process)
that began it; no trace leaves the process unless asked for; a tool that needs approval fails
the task saying it is not supported; skills come from the function tools. Real OpenAI Agents
SDK agents on a scripted model (tests/adapters/openai_agent.py), over gRPC in process on both
stores.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agents import SQLiteSession, function_tool, set_trace_processors
from agents.tracing import TracingProcessor
from agents.tracing.processors import default_processor

from a2akit.adapters.openai_agents import OpenAIAgent
from a2akit.generated import a2a_pb2 as pb
from tests.adapters.conftest import Kit
from tests.adapters.openai_agent import make_agent, openai_agent
from tests.adapters.support import statuses, stream, text

pytestmark = pytest.mark.anyio


async def test_a_session_store_carries_the_conversation_past_the_adapter(
        kit: Kit, tmp_path: Path) -> None:
    def sessions(context_id: str) -> SQLiteSession:
        return SQLiteSession(context_id, tmp_path / "conversations.db")

    first = await stream(await kit(OpenAIAgent(openai_agent(), session=sessions)),
                         "my cat is called Tom")
    # Another adapter, as another process would have: the file has the conversation.
    again = await stream(await kit(OpenAIAgent(openai_agent(), session=sessions)), "recall",
                         context_id=first[0][1].task.context_id)
    assert text(again) == "Earlier you said: my cat is called Tom"


class Recorder(TracingProcessor):
    def __init__(self) -> None:
        self.traces: list[Any] = []

    def on_trace_start(self, trace: Any) -> None:
        self.traces.append(trace)

    def on_trace_end(self, trace: Any) -> None: ...

    def on_span_start(self, span: Any) -> None: ...

    def on_span_end(self, span: Any) -> None: ...

    def shutdown(self) -> None: ...

    def force_flush(self) -> None: ...


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    """The SDK's trace processors replaced by one that records (and exports nothing)."""
    recording = Recorder()
    set_trace_processors([recording])
    yield recording
    set_trace_processors([default_processor()])


async def test_tracing_is_off_unless_asked_for(kit: Kit, recorder: Recorder) -> None:
    await stream(await kit(make_agent()), "hello")
    assert recorder.traces == []
    await stream(await kit(OpenAIAgent(openai_agent(), tracing=True)), "hello")
    assert len(recorder.traces) == 1


async def test_a_tool_that_needs_approval_fails_the_task(kit: Kit) -> None:
    @function_tool(needs_approval=True)
    async def lookup(query: str) -> str:
        """Look a word up, once someone approves."""
        return query

    agent = openai_agent()
    env = await kit(OpenAIAgent(agent.clone(tools=[lookup])))
    state, said = statuses(await stream(env, "tool aardvark"))[-1]
    assert state == pb.TASK_STATE_FAILED
    assert "approve a tool call" in said


def test_skills_come_from_the_tools_unless_declared() -> None:
    agent = make_agent()
    assert [(s.id, s.description) for s in agent.skills] == [
        ("lookup", "Look a word up in the scripted encyclopedia."),
        ("slow_lookup", "Look something up, slowly.")]
    assert agent.name == "Scripted OpenAI"
    declared = pb.AgentSkill(id="chat", name="Chat", description="Talks.", tags=["chat"])
    assert OpenAIAgent(openai_agent(), skills=[declared]).skills == [declared]
