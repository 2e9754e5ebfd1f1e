"""The agent API: what a user of the kit writes.

An agent is any object with ``async def execute(self, context, task)``. It reads the
request from `RequestContext` and reports progress through `TaskHandle`::

    class Echo:
        name = "Echo"
        async def execute(self, context: RequestContext, task: TaskHandle) -> None:
            await task.add_artifact(context.text)
            await task.complete()

Optional attributes feed the agent card: ``name``, ``description``, ``version``, ``skills``
(a list of ``AgentSkill``), ``input_modes``, ``output_modes``, ``streaming`` (default True),
``extensions`` (a list of ``AgentExtension``) and ``extended_card`` (an ``AgentCard``).

An agent may raise an `A2AError` (say `ContentTypeNotSupportedError`) before it reports
anything: the caller then gets that error and no task is created. Any other exception, or
one raised after the task exists, fails the task: an `AgentFailure` with its message as the
status text, anything else with a generic text (its traceback goes to the log only). When
the task is canceled, the agent's coroutine is cancelled (`asyncio.CancelledError`), so
`await` points are where it stops.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from google.protobuf import struct_pb2

from a2akit.generated import a2a_pb2 as pb
from a2akit.ids import new_id
from a2akit.logs import AGENT_LOGGER
from a2akit.states import status_event
from a2akit.store.base import Scope

__all__ = ["Agent", "AgentFailure", "RequestContext", "TaskHandle", "TaskSink", "text_message"]


class AgentFailure(Exception):
    """A failure whose message is written for the caller. Raised out of `execute`, it ends
    the task FAILED with the message as the status text, and logs one WARNING line without a
    traceback. `a2akit.peers.PeerError` is one; raise it yourself where `task.fail(text)`
    cannot be reached (deep in a tool)."""


@dataclasses.dataclass(frozen=True)
class RequestContext:
    message: pb.Message  # the user's message, with task_id and context_id filled in
    task: pb.Task | None  # the task before this message; None when the message starts one
    task_id: str
    context_id: str
    caller: Scope
    extensions: tuple[str, ...] = ()  # extensions the client activated (A2A-Extensions)
    accepted_output_modes: tuple[str, ...] = ()
    metadata: struct_pb2.Struct = dataclasses.field(default_factory=struct_pb2.Struct)

    @property
    def text(self) -> str:
        """The text parts of the message, joined by newlines."""
        return "\n".join(part.text for part in self.message.parts if part.HasField("text"))

    @property
    def log(self) -> logging.Logger:
        """The agent's logger (`a2akit.agent`): its lines carry the request's and the task's
        ids and trace (a2akit.logs), at the level LOG_LEVEL sets. Any other logger gets them
        too."""
        return logging.getLogger(AGENT_LOGGER)


@runtime_checkable
class Agent(Protocol):
    async def execute(self, context: RequestContext, task: TaskHandle) -> None: ...


class TaskSink(Protocol):
    """What a TaskHandle reports to: the runner."""

    def emit(self, event: pb.StreamResponse) -> None: ...

    def reply(self, message: pb.Message) -> None: ...

    @property
    def canceled(self) -> bool: ...


def text_message(text: str, *, context_id: str = "", task_id: str = "") -> pb.Message:
    return pb.Message(message_id=new_id(), role=pb.ROLE_AGENT, context_id=context_id,
                      task_id=task_id, parts=[pb.Part(text=text)])


_Content = str | Sequence[pb.Part]


def _parts(content: _Content) -> list[pb.Part]:
    return [pb.Part(text=content)] if isinstance(content, str) else list(content)


class TaskHandle:
    """Reports what the agent does to its task. Each call raises InvalidAgentResponseError
    when it breaks the state machine (for instance any change after `complete`)."""

    def __init__(self, sink: TaskSink, task_id: str, context_id: str) -> None:
        self._sink = sink
        self.task_id = task_id
        self.context_id = context_id

    @property
    def canceled(self) -> bool:
        """True once someone canceled the task; an agent in a long loop may check it."""
        return self._sink.canceled

    async def working(self, text: str | None = None) -> None:
        await self._status(pb.TASK_STATE_WORKING, text)

    async def add_artifact(
        self,
        content: _Content,
        *,
        artifact_id: str | None = None,
        name: str = "",
        append: bool = False,
        last_chunk: bool = False,
    ) -> str:
        """Add an artifact, or with `append=True` add parts to the one with `artifact_id`.
        Returns the artifact id, so later chunks can name it."""
        artifact = pb.Artifact(artifact_id=artifact_id or new_id(), name=name,
                               parts=_parts(content))
        self._sink.emit(pb.StreamResponse(artifact_update=pb.TaskArtifactUpdateEvent(
            task_id=self.task_id, context_id=self.context_id, artifact=artifact,
            append=append, last_chunk=last_chunk)))
        return artifact.artifact_id

    async def ask_input(self, text: str) -> None:
        """Pause in INPUT_REQUIRED; the client's next message on this task resumes it."""
        await self._status(pb.TASK_STATE_INPUT_REQUIRED, text)

    async def require_auth(self, text: str) -> None:
        await self._status(pb.TASK_STATE_AUTH_REQUIRED, text)

    async def complete(self, text: str | None = None) -> None:
        await self._status(pb.TASK_STATE_COMPLETED, text)

    async def fail(self, text: str) -> None:
        await self._status(pb.TASK_STATE_FAILED, text)

    async def reject(self, text: str) -> None:
        await self._status(pb.TASK_STATE_REJECTED, text)

    async def reply(self, content: _Content) -> None:
        """Answer with a single message and no task (only as the agent's first and only act;
        on an existing task the message is added to its history instead)."""
        self._sink.reply(pb.Message(message_id=new_id(), role=pb.ROLE_AGENT,
                                    context_id=self.context_id, parts=_parts(content)))

    async def _status(self, state: pb.TaskState, text: str | None) -> None:
        status = pb.TaskStatus(state=state)
        if text:
            status.message.CopyFrom(text_message(text, context_id=self.context_id,
                                                 task_id=self.task_id))
        self._sink.emit(status_event(self.task_id, self.context_id, status))
