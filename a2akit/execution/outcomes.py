"""What a run needs and what it comes to: its `Terms`, the `Outcome` a caller learns, and
`recording`, the first write of a user's message (the runner's, or the queue's alone)."""

from __future__ import annotations

import asyncio
import dataclasses

from a2akit.agent import RequestContext
from a2akit.clock import now
from a2akit.execution.budget import run_budget_text
from a2akit.execution.leases import runner_owner
from a2akit.generated import a2a_pb2 as pb
from a2akit.settings import Settings
from a2akit.states import apply_event
from a2akit.store.base import StoredTask

__all__ = ["Duplicate", "Outcome", "Replied", "Started", "Terms", "recording"]


@dataclasses.dataclass(frozen=True)
class Terms:
    """What a run holds and how long it may take."""

    lease_owner: str
    lease_seconds: float
    # Loop time (`loop.time()`) at which the agent is stopped and the task ends FAILED with
    # `deadline_text`; None: no limit (the container runs agents as long as they take).
    deadline: float | None = None
    deadline_text: str = ""
    # How long the task may wait for the client once the run leaves it input- or
    # auth-required (its wait lease, a2akit.execution.leases).
    input_wait_seconds: float = Settings.input_wait_seconds
    # A task the run creates unfinished counts against its owner's limit of unfinished tasks
    # (`TaskStore.create`); None: no limit.
    quota: int | None = None

    @classmethod
    def within(cls, settings: Settings, budget: float | None, where: str,
               owner: str | None = None) -> Terms:
        """The terms of a run under `settings` that may take `budget` seconds from now
        (None: no limit), `where` naming the limit in the task's status message when it
        runs out."""
        deadline, text = None, ""
        if budget is not None:
            deadline = asyncio.get_running_loop().time() + budget
            text = run_budget_text(where, budget)
        # One constructor call (not dataclasses.replace): this runs on every SendMessage.
        return cls(owner or runner_owner(), settings.lease_seconds, deadline, text,
                   settings.input_wait_seconds, settings.max_active_tasks_per_caller)


@dataclasses.dataclass(frozen=True)
class Started:
    """The task exists; `stored` is its latest snapshot as written."""

    stored: StoredTask


@dataclasses.dataclass(frozen=True)
class Replied:
    """The agent answered with one message and no task."""

    message: pb.Message


@dataclasses.dataclass(frozen=True)
class Duplicate:
    """The caller already sent this message id; `task_id` is the task it created or continued."""

    task_id: str


Outcome = Started | Replied | Duplicate


def recording(context: RequestContext, stored: StoredTask | None
              ) -> tuple[pb.Task, list[pb.StreamResponse]]:
    """The snapshot and events that record the user's message: a new task (SUBMITTED, the
    message in its history) or the message appended to `stored`. The runner writes them with
    the agent's first events; in queue mode the front door writes them alone."""
    snapshot = pb.Task()
    if stored is None:
        # Built inside its event: constructor arguments would each be copied in.
        event = pb.StreamResponse()
        first = event.task
        first.id, first.context_id = context.task_id, context.context_id
        first.status.state = pb.TASK_STATE_SUBMITTED
        first.status.timestamp.CopyFrom(now())
        first.history.append(context.message)
        events = [event]
    else:
        snapshot.CopyFrom(stored.task)
        events = [pb.StreamResponse(message=context.message)]
    for event in events:
        apply_event(snapshot, event)
    return snapshot, events
