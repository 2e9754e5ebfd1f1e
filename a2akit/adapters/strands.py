"""Serve a Strands Agents agent as an A2A agent: `StrandsAgent(agent)`.

    from a2akit.adapters.strands import StrandsAgent
    agent = StrandsAgent(Agent(model=..., tools=[...], callback_handler=None))  # A2A_AGENT=...

What maps to what (docs/frameworks.md):

- A message's text is the prompt of `agent.stream_async(text)`; the conversation of its A2A
  contextId is the agent's `messages` (and `state`), so a context's second task continues the
  first's conversation.
- `data` events (the model's text deltas) become one artifact sent in chunks; the text of a
  later model message (after a tool call) continues it after a blank line.
- A tool the model calls (`current_tool_use`) and its result become WORKING status updates
  with a short message; the tool's input and output are never in them.
- A tool's `tool_context.interrupt(name, reason=...)` ends the turn INPUT_REQUIRED with the
  reason as the question; the next message of the context answers every pending interrupt
  (`interruptResponse`) and the run goes on.
- An exception from the agent ends the task FAILED naming the exception's type; cancelling the
  task cancels `stream_async`, which cancels the model stream or the async tool it awaits.

Conversations: a Strands Agent holds one conversation and runs one invocation at a time, so
- given an `Agent`, the adapter keeps each context's conversation as a snapshot
  (`take_snapshot(preset="session")`) in this process and loads it into the agent for a
  turn: turns run one at a time in this process (Lambda runs one request per instance anyway);
- given a factory `(context_id) -> Agent`, each context gets an agent of its own, built on
  first use and kept in this process: contexts run side by side, and the factory is where a
  `session_manager` keyed by the context id (S3SessionManager, FileSessionManager) makes the
  conversation outlive the process, as AWS needs (such an agent is built for every turn).
A turn that fails or is cancelled leaves the conversation as it was before it.

Requires the `strands` extra; importing this module without it raises ImportError saying what
to install.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any, Final

try:
    from strands import Agent, Snapshot
    from strands.agent import AgentResult
except ImportError as exc:  # pragma: no cover - the extra is installed wherever tests run
    raise ImportError("a2akit.adapters.strands needs the strands extra: "
                      "pip install 'a2a-aws-kit[strands]'") from exc

from a2akit.adapters._contexts import DEFAULT_CONTEXTS, ContextStates
from a2akit.adapters._stream import TurnStream, framework_errors, question_text
from a2akit.agent import RequestContext, TaskHandle
from a2akit.generated import a2a_pb2 as pb

__all__ = ["AgentFactory", "StrandsAgent", "tool_skills"]

FRAMEWORK = "Strands"
AgentFactory = Callable[[str], Agent]
# The snapshot preset: messages, state, conversation manager, interrupts.
_SESSION: Final = "session"
_GONE = ("This conversation's state is gone (the agent process restarted), so the agent "
         "cannot resume; send the request again")


class StrandsAgent:
    """A Strands `Agent`, or a factory of one per context, as an agent the kit serves.

    `skills`: the card's skills as declared; when none are given, one per tool in the agent's
    tool registry (for a factory, declare them: building an agent to look might reach its
    session store). `max_contexts` bounds the conversations kept in this process (the least
    recently used is dropped). A factory's agent with a `session_manager` is built anew for
    every turn, so it reads the conversation as the store has it, whichever process added
    the last turn.

    Raises ValueError for an `Agent` with a session manager: it would keep every context's
    conversation in one session."""

    def __init__(
        self,
        agent: Agent | AgentFactory,
        *,
        name: str | None = None,
        description: str | None = None,
        version: str = "0.1.0",
        skills: Sequence[pb.AgentSkill] | None = None,
        max_contexts: int = DEFAULT_CONTEXTS,
    ) -> None:
        self.version = version
        if isinstance(agent, Agent):
            if _persists(agent):
                raise ValueError("an Agent with a session_manager would keep every context's "
                                 "conversation in one session: pass a factory "
                                 "(context_id) -> Agent that gives each its own")
            self.agent: Agent | None = agent
            self.name = name or agent.name
            self.description = description or agent.description or ""
            self.skills = list(skills) if skills is not None else tool_skills(agent)
            blank = agent.take_snapshot(preset=_SESSION)
            self._snapshots: ContextStates[Snapshot] = ContextStates(
                lambda _: blank, limit=max_contexts)
            # Every context's turn loads its snapshot into this one agent: one at a time.
            self._turn = asyncio.Lock()
        else:
            self.agent = None
            self.name = name or "Strands agent"
            self.description = description or ""
            self.skills = list(skills or ())
            self._factory = agent
            # None: the next turn builds the context's agent (see _conversation).
            self._agents: ContextStates[Agent | None] = ContextStates(lambda _: None,
                                                                      limit=max_contexts)

    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        await task.working()
        async with framework_errors(task, FRAMEWORK, context.log), \
                self._conversation(context.context_id) as agent:
            pending = _pending_interrupts(agent)
            prompt: Any = context.text
            if pending:
                # The agent waits for an answer: this message is it, for every open question.
                prompt = [{"interruptResponse": {"interruptId": interrupt_id,
                                                 "response": context.text}}
                          for interrupt_id in pending]
            elif context.task is not None and (
                    context.task.status.state == pb.TASK_STATE_INPUT_REQUIRED):
                await task.fail(_GONE)
                return
            turn = TurnStream(task)
            result = await _stream(agent, prompt, turn)
            await turn.finish()
            if result is not None and result.stop_reason == "interrupt":
                await task.ask_input("\n".join(question_text(i.reason if i.reason is not None
                                                             else i.name)
                                               for i in result.interrupts or ()))
            else:
                await task.complete()

    @contextlib.asynccontextmanager
    async def _conversation(self, context_id: str) -> AsyncIterator[Agent]:
        """The agent holding the context's conversation, for one turn. Only a turn that ends
        (completed or asking) keeps what it added to the conversation."""
        if self.agent is None:
            async with self._agents.hold(context_id) as slot:
                agent = slot.value or self._factory(context_id)
                before = agent.take_snapshot(preset=_SESSION)
                try:
                    yield agent
                except BaseException:
                    agent.load_snapshot(before)
                    raise
                # An agent with a session manager reloads the conversation from its store when
                # built, where another process may have continued it since: built anew each
                # turn. Without one, this process's agent is the conversation: kept.
                slot.value = None if _persists(agent) else agent
            return
        agent = self.agent
        async with self._turn, self._snapshots.hold(context_id) as saved:
            blank = agent.take_snapshot(preset=_SESSION)
            agent.load_snapshot(saved.value)
            try:
                yield agent
                saved.value = agent.take_snapshot(preset=_SESSION)
            finally:
                agent.load_snapshot(blank)


async def _stream(agent: Agent, prompt: Any, turn: TurnStream) -> AgentResult | None:
    """Run one turn of `agent`, reporting to `turn`; returns the agent's result."""
    result: AgentResult | None = None
    tools: dict[str, str] = {}  # toolUseId -> tool name, for the result's status line
    replies = 0  # the model's messages so far: text of the next one starts after a blank line
    async for event in agent.stream_async(prompt):
        if "data" in event:
            await turn.text(str(event["data"]), message=str(replies))
        elif "current_tool_use" in event:
            use = event["current_tool_use"]
            if use.get("name"):
                tools[str(use.get("toolUseId", ""))] = str(use["name"])
                await turn.step(f"Calling {use['name']}")
        elif "message" in event:
            message = event["message"]
            if message.get("role") == "assistant":
                replies += 1
            for line in _tool_results(message, tools):
                await turn.step(line)
        elif "result" in event:
            result = event["result"]
    return result


def _tool_results(message: Mapping[str, Any], tools: Mapping[str, str]) -> list[str]:
    lines = []
    for block in message.get("content", ()):
        tool_result = block.get("toolResult") if isinstance(block, Mapping) else None
        if tool_result:
            name = tools.get(str(tool_result.get("toolUseId", "")), "a tool")
            verb = "failed" if tool_result.get("status") == "error" else "answered"
            lines.append(f"{name} {verb}")
    return lines


def _persists(agent: Agent) -> bool:
    """Whether the agent keeps its conversation in a session manager's store."""
    return getattr(agent, "_session_manager", None) is not None


def _pending_interrupts(agent: Agent) -> list[str]:
    """The ids of the interrupts the agent waits on (none unless it stopped at one)."""
    state = agent.take_snapshot(include=["interrupt_state"]).data["interrupt_state"]
    if not state.get("activated"):
        return []
    return [interrupt_id for interrupt_id, interrupt in state.get("interrupts", {}).items()
            if interrupt.get("response") is None]


def tool_skills(agent: Agent) -> list[pb.AgentSkill]:
    """One card skill per tool in the agent's registry, in registration order."""
    return [pb.AgentSkill(id=spec["name"], name=spec["name"],
                          description=spec.get("description") or spec["name"], tags=["tool"])
            for spec in agent.tool_registry.get_all_tool_specs()]
