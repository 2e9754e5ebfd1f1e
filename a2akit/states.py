"""The task state machine: state classes, allowed transitions, and event folding.

The one place that decides what a task may become. Terminal states are final; interrupted
states wait for the client; a task's first state is whatever the agent reports first.
"""

from __future__ import annotations

from a2akit.clock import now
from a2akit.errors import InvalidAgentResponseError
from a2akit.generated import a2a_pb2 as pb

__all__ = [
    "ACTIVE",
    "INTERRUPTED",
    "TERMINAL",
    "apply_event",
    "check_transition",
    "closes_stream",
    "ended_event",
    "ends_stream",
    "failed_event",
    "is_terminal",
    "status_event",
]

TERMINAL = frozenset({
    pb.TASK_STATE_COMPLETED, pb.TASK_STATE_FAILED, pb.TASK_STATE_CANCELED, pb.TASK_STATE_REJECTED,
})
INTERRUPTED = frozenset({pb.TASK_STATE_INPUT_REQUIRED, pb.TASK_STATE_AUTH_REQUIRED})
# Every state a task can be in before it ends (what the per-caller quota counts).
ACTIVE = frozenset({pb.TASK_STATE_SUBMITTED, pb.TASK_STATE_WORKING, *INTERRUPTED})


def is_terminal(state: int) -> bool:
    return state in TERMINAL


def ends_stream(state: int) -> bool:
    """A stream of task events closes once the task is terminal or interrupted (spec 11.7)."""
    return state in TERMINAL or state in INTERRUPTED


def closes_stream(event: pb.StreamResponse) -> bool:
    """A status update into a terminal or interrupted state: the last event of a stream."""
    return event.HasField("status_update") and ends_stream(event.status_update.status.state)


def status_event(task_id: str, context_id: str, status: pb.TaskStatus) -> pb.StreamResponse:
    """The event that moves a task to `status` (fold it with `apply_event`)."""
    return pb.StreamResponse(status_update=pb.TaskStatusUpdateEvent(
        task_id=task_id, context_id=context_id, status=status))


def failed_event(task_id: str, context_id: str, text: str, *,
                 reason: str = "failure") -> pb.StreamResponse:
    """The event that ends a task FAILED, its status message (`{task_id}-{reason}`) saying
    why: the one form for every failure the kit writes (the runner's, a lost lease's)."""
    return ended_event(task_id, context_id, pb.TASK_STATE_FAILED, text, reason=reason)


def ended_event(task_id: str, context_id: str, state: pb.TaskState, text: str, *,
                reason: str) -> pb.StreamResponse:
    """The event with which the kit itself ends a task in `state` (FAILED, or CANCELED for
    a task that waited too long for the client), its status message (`{task_id}-{reason}`)
    saying why."""
    status = pb.TaskStatus(state=state, timestamp=now())
    message = status.message
    message.message_id = f"{task_id}-{reason}"
    message.role = pb.ROLE_AGENT
    message.task_id = task_id
    message.context_id = context_id
    message.parts.add(text=text)
    return status_event(task_id, context_id, status)


def check_transition(current: int, new: int) -> None:
    """Raise InvalidAgentResponseError unless a task in `current` may move to `new`."""
    if new == pb.TASK_STATE_UNSPECIFIED:
        raise InvalidAgentResponseError("a task status needs a state")
    if current in TERMINAL:
        raise InvalidAgentResponseError(
            f"task is already {pb.TaskState.Name(current)}; no further changes are allowed"
        )


def apply_event(task: pb.Task, event: pb.StreamResponse) -> None:
    """Fold one event into the snapshot in place, after checking the state machine.

    A `task` event replaces the snapshot; a status update moves the previous status message
    into history; an artifact update adds, replaces (append=false) or extends (append=true)
    the artifact with that id; a `message` event is appended to history."""
    kind = event.WhichOneof("payload")
    if kind == "task":
        task.CopyFrom(event.task)
        return
    if task.status.state in TERMINAL:
        check_transition(task.status.state, pb.TASK_STATE_COMPLETED)
    if kind == "status_update":
        status = event.status_update.status
        check_transition(task.status.state, status.state)
        if task.status.HasField("message"):
            task.history.append(task.status.message)
        task.status.CopyFrom(status)
    elif kind == "artifact_update":
        _apply_artifact(task, event.artifact_update)
    elif kind == "message":
        # Keep history in time order: the status message (say, the agent's question) came
        # before this reply to it.
        if task.status.HasField("message"):
            task.history.append(task.status.message)
            task.status.ClearField("message")
        task.history.append(event.message)
    else:
        raise InvalidAgentResponseError("an event needs a payload")


def _apply_artifact(task: pb.Task, update: pb.TaskArtifactUpdateEvent) -> None:
    for existing in task.artifacts:
        if existing.artifact_id == update.artifact.artifact_id:
            if update.append:
                existing.parts.extend(update.artifact.parts)
                if update.artifact.HasField("metadata"):
                    existing.metadata.MergeFrom(update.artifact.metadata)
            else:
                existing.CopyFrom(update.artifact)
            return
    # append=true for an unknown id starts the artifact, as a lost first chunk would have.
    task.artifacts.append(update.artifact)
