"""LangGraphAgent in the kit, beyond what every adapter does (test_adapters.py): an interrupt
asks for input and the next message resumes the run, a resume whose checkpoint is gone fails
cleanly, skills come from the graph's tools, and a graph's own checkpointer is kept. Real
LangGraph graphs on a scripted chat model (tests/adapters/graphs.py), over gRPC in process on
both stores; a resume in a second process: test_langgraph_processes.py.
"""

from __future__ import annotations

import pytest

from a2akit.adapters.langgraph import LangGraphAgent
from a2akit.generated import a2a_pb2 as pb
from tests.adapters.conftest import Kit
from tests.adapters.graphs import interview_graph, make_agent, make_interviewer
from tests.adapters.script import QUESTION
from tests.adapters.support import chunks, statuses, stream, text

pytestmark = pytest.mark.anyio


async def test_an_interrupt_asks_for_input_and_the_answer_resumes_the_run(kit: Kit) -> None:
    env = await kit(make_interviewer())
    asked = await stream(env, "hi")
    state, question = statuses(asked)[-1]
    assert (state, question) == (pb.TASK_STATE_INPUT_REQUIRED, QUESTION)
    task = asked[0][1].task
    answered = await stream(env, "Ann", task_id=task.id, context_id=task.context_id)
    assert statuses(answered)[-1][0] == pb.TASK_STATE_COMPLETED
    # The same run: the thread holds the first message, then the answer the node made of it.
    assert text(answered) == ("You said: My name is Ann. I have seen 2 messages in this "
                               "thread so far.")
    assert len(chunks(answered)) >= 3


async def test_a_resume_without_the_checkpoint_fails_cleanly(kit: Kit) -> None:
    """An in-memory checkpoint stays with the process that wrote it: here it is dropped, as a
    restart would, and the answer fails the task with a reason instead of starting over."""
    agent = make_interviewer()
    env = await kit(agent)
    task = (await stream(env, "hi"))[0][1].task
    await agent.graph.checkpointer.adelete_thread(task.context_id)  # type: ignore[union-attr]
    answered = await stream(env, "Ann", task_id=task.id, context_id=task.context_id)
    state, said = statuses(answered)[-1]
    assert state == pb.TASK_STATE_FAILED
    assert "checkpoint is gone" in said


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
