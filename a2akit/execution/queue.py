"""The task queue: in queue mode the front door records the task and puts a `Job` on SQS; a
worker (`a2akit.execution.worker`) takes it from there.

The front door never runs the agent. `enqueue` writes the task as a runner's first write
would (SUBMITTED with the message in its history, or the message appended to the task, with
the idempotency claim) but leased to the queue for `queue_grace_seconds`, then sends the
job. If the send fails the task ends FAILED at once (nothing would ever run it) and the
caller gets UnavailableError. The worker swaps the queue's lease for its own, so of two
deliveries of one message only one runs the agent.

boto3 is imported only when a queue is made: the JSON-RPC Lambda in inline mode never loads
it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from google.protobuf import json_format, struct_pb2

from a2akit import aws, telemetry
from a2akit.agent import RequestContext
from a2akit.clock import epoch_ms
from a2akit.errors import InvalidParamsError, UnavailableError, UnsupportedOperationError
from a2akit.execution.fold import Change, fold_write
from a2akit.execution.leases import fail, lease_for, queue_owner
from a2akit.execution.outcomes import Duplicate, Started, recording
from a2akit.generated import a2a_pb2 as pb
from a2akit.settings import Settings
from a2akit.states import is_terminal
from a2akit.store.base import DuplicateMessageError, PushTarget, Scope, StoredTask, TaskStore
from a2akit.trace import current_traceparent

if TYPE_CHECKING:
    from mypy_boto3_sqs.client import SQSClient

__all__ = ["Job", "JobError", "SqsQueue", "TaskQueue", "enqueue", "make_queue"]

log = logging.getLogger("a2akit.queue")

# SQS takes message bodies up to 256 KiB; a job is a few hundred bytes plus the request's
# metadata.
MAX_JOB_BYTES = 256 * 1024
_VERSION = 1
ENQUEUE_FAILED = "The task could not be queued for a worker; it never ran. Send it again"


class JobError(ValueError):
    """A queue message body that is not a job this kit wrote."""


@dataclasses.dataclass(frozen=True)
class Job:
    """What a worker needs to run a queued task: where it is, which lease to take, and the
    request context the message's task history does not hold."""

    scope: Scope
    task_id: str
    message_id: str
    lease_owner: str  # the queue's lease, which the worker swaps for its own
    new_task: bool
    extensions: tuple[str, ...] = ()
    accepted_output_modes: tuple[str, ...] = ()
    metadata: dict[str, Any] = dataclasses.field(default_factory=dict)
    # The door's trace (W3C traceparent), continued by the worker, and when the job was
    # queued (epoch ms, for the TimeQueued metric). Jobs queued before these existed have
    # neither.
    traceparent: str | None = None
    enqueued_ms: int | None = None

    def encode(self) -> str:
        observed: dict[str, Any] = {}
        if self.traceparent:
            observed["traceparent"] = self.traceparent
        if self.enqueued_ms is not None:
            observed["enqueuedAt"] = self.enqueued_ms
        return json.dumps({
            "v": _VERSION, "tenant": self.scope.tenant, "owner": self.scope.owner,
            "taskId": self.task_id, "messageId": self.message_id,
            "leaseOwner": self.lease_owner, "newTask": self.new_task,
            "extensions": list(self.extensions),
            "acceptedOutputModes": list(self.accepted_output_modes),
            "metadata": self.metadata,
            **observed,
        }, separators=(",", ":"))

    @classmethod
    def decode(cls, body: str) -> Job:
        """Raises JobError for anything `encode` would not have written."""
        try:
            data = json.loads(body)
            if not isinstance(data, dict) or data.get("v") != _VERSION:
                raise JobError("not a job of this version")
            job = cls(
                scope=Scope(_text(data, "tenant", empty=True), _text(data, "owner")),
                task_id=_text(data, "taskId"), message_id=_text(data, "messageId"),
                lease_owner=_text(data, "leaseOwner"), new_task=bool(data["newTask"]),
                extensions=tuple(map(str, data.get("extensions", ()))),
                accepted_output_modes=tuple(map(str, data.get("acceptedOutputModes", ()))),
                metadata=dict(data.get("metadata") or {}),
                traceparent=_optional_text(data, "traceparent"),
                enqueued_ms=_optional_int(data, "enqueuedAt"))
        except (ValueError, KeyError, TypeError) as exc:
            raise JobError(f"not a job: {exc}") from exc
        return job

    def context(self, stored: StoredTask) -> RequestContext:
        """The agent's request context, rebuilt from the stored task: its message is the
        last in the history with the job's message id.

        Raises JobError when the task does not hold that message."""
        task = stored.task
        for message in reversed(task.history):
            if message.message_id == self.message_id:
                break
        else:
            raise JobError(f"task {self.task_id} holds no message {self.message_id}")
        metadata = struct_pb2.Struct()
        metadata.update(self.metadata)
        return RequestContext(
            message=message, task=None if self.new_task else task, task_id=task.id,
            context_id=task.context_id, caller=self.scope, extensions=self.extensions,
            accepted_output_modes=self.accepted_output_modes, metadata=metadata)


def _text(data: dict[str, Any], name: str, *, empty: bool = False) -> str:
    value = data[name]
    if not isinstance(value, str) or (not value and not empty):
        raise JobError(f"{name} must be a non-empty string")
    return value


def _optional_text(data: dict[str, Any], name: str) -> str | None:
    value = data.get(name)
    return value if isinstance(value, str) and value else None


def _optional_int(data: dict[str, Any], name: str) -> int | None:
    value = data.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class TaskQueue(Protocol):
    async def send(self, job: Job) -> None:
        """Put the job on the queue. Raises UnavailableError when that fails."""


class SqsQueue:
    """An SQS queue through boto3 (its calls run in a worker thread)."""

    def __init__(self, url: str, client: SQSClient) -> None:
        self.url = url
        self.client = client

    async def send(self, job: Job) -> None:
        try:
            with telemetry.NOTHING if telemetry.off else telemetry.span("a2a.queue.send"):
                await asyncio.to_thread(self.client.send_message, QueueUrl=self.url,
                                        MessageBody=job.encode())
        except Exception as exc:
            from a2akit.store._errors import ConnectionFailure, DynamoDBError

            if aws.failure(exc) is None and not isinstance(exc, DynamoDBError
                                                           | ConnectionFailure):
                raise
            log.error("could not queue task %s: %s", job.task_id, exc)
            raise UnavailableError() from exc


def make_queue(settings: Settings) -> SqsQueue:
    """The SQS queue of `settings.queue_url`: through the kit's own AWS client (the store's
    family, no botocore) when the environment names credentials and a region, as on Lambda;
    else boto3's."""
    assert settings.queue_url, "queue mode needs a queue URL (Settings checks it)"
    from a2akit.store._client import env_sqs_client

    client: Any = env_sqs_client(settings.sqs_endpoint)
    if client is None:
        client = aws.client("sqs", endpoint_url=settings.sqs_endpoint)
    return SqsQueue(settings.queue_url, client)


async def enqueue(store: TaskStore, queue: TaskQueue, settings: Settings,
                  context: RequestContext, stored: StoredTask | None,
                  claim: str, push_configs: Sequence[PushTarget] = (),
                  ) -> Started | Duplicate:
    """Record the message (and the task, when new) leased to the queue, then queue the job.

    Raises UnsupportedOperationError when the task ended meanwhile, UnavailableError when
    the job could not be queued (the task then ends FAILED), InvalidParamsError when the
    request is too large for a queue message."""
    scope = context.caller
    owner = queue_owner()
    job = Job(scope=scope, task_id=context.task_id, message_id=context.message.message_id,
              lease_owner=owner, new_task=stored is None, extensions=context.extensions,
              accepted_output_modes=context.accepted_output_modes,
              metadata=json_format.MessageToDict(context.metadata),
              traceparent=current_traceparent(), enqueued_ms=epoch_ms())
    body = job.encode()
    if len(body.encode()) > MAX_JOB_BYTES:
        raise InvalidParamsError("The request metadata is too large to queue (256 KiB)",
                                 violations=[("metadata", "too large for a queue message")])

    lease = lease_for(owner, settings.queue_grace_seconds)
    try:
        if stored is None:
            snapshot, events = recording(context, None)
            with telemetry.NOTHING if telemetry.off else telemetry.span("a2a.store.write"):
                written = await store.create(scope, snapshot, events, claim, lease=lease,
                                             push_configs=push_configs,
                                             quota=settings.max_active_tasks_per_caller)
        else:
            def decide(current: StoredTask) -> Change:
                if is_terminal(current.task.status.state) or current.cancel_requested:
                    raise UnsupportedOperationError(
                        "The task is ending and accepts no more messages",
                        metadata={"taskId": context.task_id})
                return Change([pb.StreamResponse(message=context.message)], lease=lease,
                              claim=claim)

            appended = await fold_write(store, scope, context.task_id, decide, lambda: (
                UnavailableError("The task kept changing; try again")), read=stored)
            if appended is None:
                raise UnsupportedOperationError(
                    "The task no longer exists", metadata={"taskId": context.task_id})
            written = appended
    except DuplicateMessageError as exc:
        return Duplicate(exc.task_id)
    try:
        await queue.send(job)
    except Exception as exc:
        # Nothing will ever take this task: end it now rather than let it wait out the grace.
        try:
            await fail(store, scope, context.task_id, ENQUEUE_FAILED, unless_held=False)
        except Exception:
            log.warning("task %s could not be failed either; its queue lease will expire",
                        context.task_id, exc_info=True)
        raise UnavailableError("The task could not be queued; try again") from exc
    log.debug("queued task %s for a worker", context.task_id)
    return Started(written)
