"""StrandsAgent in the kit, beyond what every adapter does (test_adapters.py): a tool's
interrupt asks for input and the next message resumes the run; a context's conversation lives
in this process (a snapshot per context on one agent, or an agent per context from a factory,
where contexts run side by side); a turn that fails leaves it as it was; skills come from the
agent's tools. Real Strands agents on a scripted model (tests/adapters/strands_agent.py), over
gRPC in process on both stores.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from strands import Agent
from strands.session import FileSessionManager

from a2akit.adapters.strands import StrandsAgent
from a2akit.generated import a2a_pb2 as pb
from tests.adapters.conftest import Kit
from tests.adapters.script import QUESTION
from tests.adapters.strands_agent import make_agent, make_per_context_agent, strands_agent
from tests.adapters.support import chunks, statuses, stream, text

pytestmark = pytest.mark.anyio

FORMS: dict[str, Callable[[], StrandsAgent]] = {
    "one agent": make_agent, "an agent per context": make_per_context_agent}


@pytest.fixture(params=list(FORMS))
def form(request: pytest.FixtureRequest) -> Callable[[], StrandsAgent]:
    return FORMS[request.param]


async def test_an_interrupt_asks_for_input_and_the_answer_resumes_the_run(
        kit: Kit, form: Callable[[], StrandsAgent]) -> None:
    env = await kit(form())
    asked = await stream(env, "interview")
    assert statuses(asked)[-1] == (pb.TASK_STATE_INPUT_REQUIRED, QUESTION)
    assert "Calling ask_name" in str(statuses(asked))
    task = asked[0][1].task
    answered = await stream(env, "Ann", task_id=task.id, context_id=task.context_id)
    assert statuses(answered)[-1][0] == pb.TASK_STATE_COMPLETED
    # The same run: the tool got the answer and the model read the tool's result.
    assert text(answered) == "The tool said: My name is Ann. That is all I know."
    assert len(chunks(answered)) >= 3


async def test_a_resume_without_the_conversation_fails_cleanly(kit: Kit) -> None:
    """The conversation stays in the process that had it: a second kit over the same store
    (as after a restart) does not have it, and the answer fails the task with a reason."""
    task = (await stream(await kit(make_agent()), "interview"))[0][1].task
    answered = await stream(await kit(make_agent()), "Ann", task_id=task.id,
                            context_id=task.context_id)
    state, said = statuses(answered)[-1]
    assert state == pb.TASK_STATE_FAILED
    assert "state is gone" in said


async def test_a_failed_turn_leaves_the_conversation_as_it_was(
        kit: Kit, form: Callable[[], StrandsAgent]) -> None:
    env = await kit(form())
    context_id = (await stream(env, "my cat is called Tom"))[0][1].task.context_id
    failed = await stream(env, "boom", context_id=context_id)
    assert statuses(failed)[-1][0] == pb.TASK_STATE_FAILED
    recalled = await stream(env, "recall", context_id=context_id)
    assert text(recalled) == "Earlier you said: my cat is called Tom"


async def test_contexts_of_a_factory_run_side_by_side(kit: Kit) -> None:
    """Each context has an agent of its own: the second context's answer streams while the
    first's does (one shared agent would take them in turn)."""
    env = await kit(make_per_context_agent())
    first, second = await asyncio.gather(stream(env, "hello there"), stream(env, "hi"))
    assert chunks(second)[0][0] < first[-1][0] and chunks(first)[0][0] < second[-1][0]
    assert text(second).startswith("You said: hi.")


async def test_a_session_manager_carries_the_conversation_between_processes(
        kit: Kit, tmp_path: Path) -> None:
    """Two adapters over one store of sessions, as the door and the worker are: each turn
    reads the conversation as the store has it, whichever adapter added the last turn."""
    def per_context(context_id: str) -> Agent:
        return strands_agent(session_manager=FileSessionManager(
            context_id, storage_dir=str(tmp_path)))

    door, worker = await kit(StrandsAgent(per_context)), await kit(StrandsAgent(per_context))
    context_id = (await stream(door, "my cat is called Tom"))[0][1].task.context_id
    await stream(worker, "it is grey", context_id=context_id)
    recalled = await stream(door, "recall", context_id=context_id)
    assert text(recalled) == "Earlier you said: my cat is called Tom | it is grey"
    with pytest.raises(ValueError, match="factory"):
        StrandsAgent(per_context("one for all"))


def test_skills_come_from_the_tools_unless_declared() -> None:
    agent = make_agent()
    assert [(s.id, s.description) for s in agent.skills] == [
        ("lookup", "Look a word up in the scripted encyclopedia."),
        ("slow_lookup", "Look something up, slowly."),
        ("ask_name", "Ask the caller for their name.")]
    assert agent.name == "Scripted Strands"
    declared = pb.AgentSkill(id="chat", name="Chat", description="Talks.", tags=["chat"])
    assert StrandsAgent(strands_agent(), skills=[declared]).skills == [declared]
    # A factory's agents are not built to be looked at: declared skills, or the kit's default.
    assert make_per_context_agent().skills == []
