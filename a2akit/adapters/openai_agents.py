"""Serve an OpenAI Agents SDK agent as an A2A agent: `OpenAIAgent(agent)`.

    from a2akit.adapters.openai_agents import OpenAIAgent
    agent = OpenAIAgent(Agent(name="Helper", instructions="...", tools=[...]))

What maps to what (docs/frameworks.md):

- A message's text is the input of `Runner.run_streamed(agent, text, session=...)`; the
  session of its A2A contextId carries the conversation, so a context's second task continues
  the first's.
- Raw response events: the text deltas (`response.output_text.delta`) become one artifact sent
  in chunks; the text of another output message (after a tool call) continues it after a blank
  line.
- Run item events: a tool called, a tool's output and a handoff to another agent become
  WORKING status updates with a short message; the tool's arguments and output never do.
- An exception from the run (the model's, a tool's that the agent lets through, MaxTurnsExceeded,
  a guardrail's tripwire) ends the task FAILED naming the exception's type; cancelling the task
  cancels the run (`RunResultStreaming.cancel()`), which cancels the model call or the async
  tool it awaits.
- Not supported: tools that need approval (`needs_approval`): a run that stops for one ends
  FAILED saying so.

Sessions: `session(context_id)` makes the context's Session; default: an in-memory
`SQLiteSession` per context, kept in this process. Where the conversation must outlive the
process (AWS), pass a factory of a shared store's session (a file SQLiteSession on a shared
disk, the SDK's SQLAlchemySession or RedisSession).

Tracing: off unless `tracing=True` (the SDK's exporter sends traces to OpenAI's platform; the
kit has its own trace, a2akit.trace).

Requires the `openai-agents` extra; importing this module without it raises ImportError saying
what to install.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

try:
    from agents import Agent, RunConfig, Runner, SQLiteSession
    from agents.memory import Session
    from agents.stream_events import (
        AgentUpdatedStreamEvent,
        RawResponsesStreamEvent,
        RunItemStreamEvent,
    )
    from agents.tool import FunctionTool
    from openai.types.responses import ResponseTextDeltaEvent
except ImportError as exc:  # pragma: no cover - the extra is installed wherever tests run
    raise ImportError("a2akit.adapters.openai_agents needs the openai-agents extra: "
                      "pip install 'a2a-aws-kit[openai-agents]'") from exc

from a2akit.adapters._contexts import DEFAULT_CONTEXTS, ContextStates
from a2akit.adapters._stream import TurnStream, framework_errors
from a2akit.agent import RequestContext, TaskHandle
from a2akit.generated import a2a_pb2 as pb

__all__ = ["OpenAIAgent", "SessionFactory", "tool_skills"]

FRAMEWORK = "OpenAI Agents"
SessionFactory = Callable[[str], Session]
_APPROVAL = "The agent asked to approve a tool call, which this kit's adapter does not support"


class OpenAIAgent:
    """An OpenAI Agents SDK `Agent` as an agent the kit serves.

    `skills`: the card's skills as declared; when none are given, one per function tool of the
    agent. `session`: the context's Session (default: in memory, this process). `max_turns`:
    the SDK's bound on model calls in one run (its default when None). `run_config`: passed to
    every run (its `tracing_disabled` is set from `tracing`)."""

    def __init__(
        self,
        agent: Agent[Any],
        *,
        name: str | None = None,
        description: str | None = None,
        version: str = "0.1.0",
        skills: Sequence[pb.AgentSkill] | None = None,
        session: SessionFactory | None = None,
        max_turns: int | None = None,
        run_config: RunConfig | None = None,
        tracing: bool = False,
        max_contexts: int = DEFAULT_CONTEXTS,
    ) -> None:
        self.agent = agent
        self.name = name or agent.name
        self.description = description or agent.handoff_description or ""
        self.version = version
        self.skills = list(skills) if skills is not None else tool_skills(agent)
        self._sessions: ContextStates[Session] = ContextStates(
            session or (lambda context_id: SQLiteSession(context_id)), limit=max_contexts)
        self._run_config = dataclasses.replace(run_config or RunConfig(),
                                               tracing_disabled=not tracing)
        self._max_turns = max_turns

    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        await task.working()
        async with framework_errors(task, FRAMEWORK, context.log), \
                self._sessions.hold(context.context_id) as slot:
            options: dict[str, Any] = {}
            if self._max_turns is not None:
                options["max_turns"] = self._max_turns
            result = Runner.run_streamed(self.agent, context.text, session=slot.value,
                                         run_config=self._run_config, **options)
            turn = TurnStream(task)
            try:
                await _stream(result.stream_events(), turn)
            finally:
                # Cancelled anywhere but in the queue's own wait, the run (a task of its own)
                # would go on: stop it.
                if not result.is_complete:
                    result.cancel()
            await turn.finish()
            if result.interruptions:
                await task.fail(_APPROVAL)
            else:
                await task.complete()


async def _stream(events: Any, turn: TurnStream) -> None:
    """Report one run's stream events to `turn`."""
    tools: dict[str, str] = {}  # call id -> tool name, for the output's status line
    running: str | None = None  # the agent the run is in: the first update names the starting one
    async for event in events:
        if isinstance(event, RawResponsesStreamEvent):
            if isinstance(event.data, ResponseTextDeltaEvent):
                await turn.text(event.data.delta, message=event.data.item_id)
        elif isinstance(event, RunItemStreamEvent):
            item: Any = event.item
            if event.name == "tool_called":
                name = str(getattr(item, "tool_name", None) or "a tool")
                tools[str(getattr(item, "call_id", None))] = name
                await turn.step(f"Calling {name}")
            elif event.name == "tool_output":
                name = tools.get(str(getattr(item, "call_id", None)), "a tool")
                await turn.step(f"{name} answered")
        elif isinstance(event, AgentUpdatedStreamEvent):
            if running is not None and event.new_agent.name != running:
                await turn.step(f"Handed off to {event.new_agent.name}")
            running = event.new_agent.name


def tool_skills(agent: Agent[Any]) -> list[pb.AgentSkill]:
    """One card skill per function tool of the agent, in order."""
    return [pb.AgentSkill(id=tool.name, name=tool.name,
                          description=tool.description or tool.name, tags=["tool"])
            for tool in agent.tools if isinstance(tool, FunctionTool)]
