"""The task store interface: a few primitives; the logic lives above it (runner, operations).

Every key holds the caller's `Scope` (tenant and owner): a task of another scope does not
exist for a caller. Implementations copy messages in and out, so a caller that mutates a
message after saving it cannot change what is stored (as with DynamoDB).
"""

from __future__ import annotations

import abc
import asyncio
import builtins
import dataclasses
from collections.abc import Callable, Collection, Mapping, Sequence

from a2akit import metrics
from a2akit.errors import InvalidParamsError, TooManyActiveTasksError
from a2akit.generated import a2a_pb2 as pb
from a2akit.service_params import SUPPORTED_VERSION
from a2akit.settings import DEFAULT_MAX_TASK_BYTES, ENV
from a2akit.store.cursor import DEFAULT_PAGE_SIZE

__all__ = [
    "DEFAULT_MAX_TASK_BYTES",
    "DuplicateMessageError",
    "Lease",
    "LeaseLostError",
    "PushTarget",
    "Scope",
    "StoredEvent",
    "StoredTask",
    "TaskPage",
    "TaskQuery",
    "TaskStore",
    "VersionConflictError",
    "WriteObserver",
    "quota_refused",
]


@dataclasses.dataclass(frozen=True)
class Scope:
    """Who may see a task: the request's tenant and the authenticated owner."""

    tenant: str
    owner: str


@dataclasses.dataclass(frozen=True)
class Lease:
    """Who runs a task's agent, and until when (epoch milliseconds) unless renewed.

    The rule for what an expired lease means lives in `a2akit.execution.leases`."""

    owner: str
    until_ms: int


@dataclasses.dataclass(frozen=True)
class StoredTask:
    task: pb.Task
    version: int  # bumped by every write; writes are conditional on it
    last_seq: int  # sequence number of the newest event
    lease: Lease | None = None  # renewing it leaves the version alone
    # A CancelTask asked for the task to end (`request_cancel`): until a write ends it, the
    # store refuses every write that would leave it unfinished.
    cancel_requested: bool = False


@dataclasses.dataclass(frozen=True)
class StoredEvent:
    seq: int
    event: pb.StreamResponse


@dataclasses.dataclass(frozen=True)
class PushTarget:
    """A push config with the protocol generation of the call that stored it
    (`Call.protocol_version`: "1.0", or "0.3" for the 0.3 family), which decides the payload
    its webhook gets (`a2akit.push.dispatcher`). The 1.0 API never shows it: its config
    message has no such field. A config stored without one (before it was kept) is 1.0."""

    config: pb.TaskPushNotificationConfig
    protocol_version: str = SUPPORTED_VERSION


@dataclasses.dataclass(frozen=True)
class TaskQuery:
    context_id: str = ""
    state: int = pb.TASK_STATE_UNSPECIFIED  # 0: any state
    status_after_ms: int | None = None  # keep tasks whose status time is >= this
    page_size: int = DEFAULT_PAGE_SIZE
    page_token: str = ""  # a2akit.store.cursor: where the previous page ended


@dataclasses.dataclass(frozen=True)
class TaskPage:
    tasks: list[pb.Task]
    next_page_token: str
    total_size: int
    # The leases of the listed tasks that hold one, by task id.
    leases: Mapping[str, Lease] = dataclasses.field(default_factory=dict)


class VersionConflictError(Exception):
    """Another writer changed the task since `expected_version` was read, or (with
    `cancel_requested`) a cancel was requested and the write would leave the task unfinished."""

    def __init__(self, task_id: str, *, cancel_requested: bool = False) -> None:
        super().__init__(task_id)
        self.cancel_requested = cancel_requested


class LeaseLostError(Exception):
    """The task's lease is not held by the expected owner; `current` is the task as stored
    (None when it is gone)."""

    def __init__(self, task_id: str, current: StoredTask | None) -> None:
        super().__init__(task_id)
        self.current = current


class DuplicateMessageError(Exception):
    """The caller already sent this messageId; `task_id` is the task it created or continued."""

    def __init__(self, task_id: str) -> None:
        super().__init__(task_id)
        self.task_id = task_id


def quota_refused(limit: int) -> TooManyActiveTasksError:
    """The refusal of a new task to a caller with `limit` unfinished ones (counted)."""
    metrics.count(metrics.QUOTA_REFUSED)
    return TooManyActiveTasksError(metadata={"limit": str(limit)})


# Told of every write a store commits: the scope, the task as stored, and the events that
# write stored (their sequence numbers end at `stored.last_seq`).
WriteObserver = Callable[[Scope, StoredTask, Sequence[pb.StreamResponse]], None]


class TaskStore(abc.ABC):
    _observers: tuple[WriteObserver, ...] = ()
    # The largest task (serialized) and event this store keeps (A2A_MAX_TASK_BYTES).
    max_task_bytes: int = DEFAULT_MAX_TASK_BYTES

    # wait_events polls a store that cannot notify (DynamoDB) adaptively: at first every
    # `min_poll_interval`, doubling while nothing arrives, up to `poll_interval`. A runner
    # re-reads its task every `poll_interval` to notice a cancel from another process.
    poll_interval: float = 0.5
    min_poll_interval: float = 0.05

    @abc.abstractmethod
    async def get(self, scope: Scope, task_id: str) -> StoredTask | None:
        """The task with its version, or None when it does not exist in this scope."""

    @abc.abstractmethod
    async def create(
        self,
        scope: Scope,
        task: pb.Task,
        events: Sequence[pb.StreamResponse],
        message_id: str | None = None,
        *,
        lease: Lease | None = None,
        push_configs: Sequence[PushTarget] = (),
        quota: int | None = None,
    ) -> StoredTask:
        """Store a new task (version 1) and its first events, claiming `message_id`, leased
        to `lease` (ignored for a terminal task), with `push_configs` (those a SendMessage
        carried, with its generation: stored with the task, so its first event is delivered
        too).

        With `quota`, an unfinished task counts against its owner's unfinished tasks, across
        every tenant (`active_tasks`), in the same atomic write: the task is stored only if
        the owner had fewer than `quota`, and the write that ends it takes it out of the
        count again (`update`). A task created terminal is never counted.

        Raises DuplicateMessageError when the message id is already claimed in this scope,
        TooManyActiveTasksError when the owner has `quota` counted tasks (nothing written)."""

    @abc.abstractmethod
    async def update(
        self,
        scope: Scope,
        task_id: str,
        expected_version: int,
        task: pb.Task,
        events: Sequence[pb.StreamResponse],
        message_id: str | None = None,
        *,
        lease: Lease | None = None,
        lease_expired_by: int | None = None,
    ) -> StoredTask:
        """Replace the snapshot and append events, all or nothing, if the version still matches.

        The snapshot then holds `lease` (None: no lease; a terminal task never holds one).
        With `lease_expired_by` (epoch ms) the write also requires the stored lease to end
        before that instant, so a renewal that lands first makes the write conflict.

        A cancel requested since (`request_cancel`) makes every write that leaves the task
        unfinished fail as a conflict; a write into a terminal state still goes through.

        A write that ends a task counted against its owner's quota (`create`) takes it out of
        the count, in the same atomic write.

        Raises VersionConflictError when a condition fails (or the task is gone), and
        DuplicateMessageError when `message_id` is already claimed."""

    @abc.abstractmethod
    async def request_cancel(self, scope: Scope, task_id: str) -> StoredTask | None:
        """Mark an unfinished task as to be canceled, leaving its version and events alone,
        so that no writer can keep it running (see `update`); return the task as it stands
        (unmarked when it had already ended), None when it does not exist."""

    @abc.abstractmethod
    async def swap_lease(
        self, scope: Scope, task_id: str, expected_owner: str, lease: Lease
    ) -> StoredTask:
        """Set the task's lease to `lease` if `expected_owner` holds it now (a renewal, or a
        worker taking a queued task), leaving version and events alone; return the task.

        Raises LeaseLostError, carrying the task as stored, when another owner or none holds
        the lease (or the task is gone)."""

    @abc.abstractmethod
    async def expired_leases(self, now_ms: int, limit: int) -> builtins.list[tuple[Scope, str]]:
        """Tasks of any scope whose lease ended before `now_ms` (scope, task id), at most
        `limit`, without reading every task (the sweeper's query)."""

    @abc.abstractmethod
    async def events_after(self, scope: Scope, task_id: str, seq: int) -> list[StoredEvent]:
        """The task's events with a sequence number greater than `seq`, oldest first."""

    @abc.abstractmethod
    async def find_message(self, scope: Scope, message_id: str) -> str | None:
        """The id of the task a message id created or continued, if it was seen."""

    @abc.abstractmethod
    async def list(self, scope: Scope, query: TaskQuery) -> TaskPage:
        """Tasks of the scope matching the query, newest status first, one page.

        Raises InvalidParamsError for a page token this store did not issue to this scope."""

    @abc.abstractmethod
    async def put_push_config(self, scope: Scope, config: pb.TaskPushNotificationConfig,
                              protocol_version: str = SUPPORTED_VERSION) -> None:
        """Store (or replace, same id) a push config under its task, created by a call of
        `protocol_version` (PushTarget)."""

    @abc.abstractmethod
    async def get_push_config(
        self, scope: Scope, task_id: str, config_id: str
    ) -> pb.TaskPushNotificationConfig | None: ...

    @abc.abstractmethod
    async def list_push_targets(self, scope: Scope, task_id: str) -> builtins.list[PushTarget]:
        """The task's push configs, each with the generation that stored it."""

    async def list_push_configs(
        self, scope: Scope, task_id: str
    ) -> builtins.list[pb.TaskPushNotificationConfig]:
        """The task's push configs (the 1.0 API's view of `list_push_targets`)."""
        return [target.config for target in await self.list_push_targets(scope, task_id)]

    @abc.abstractmethod
    async def delete_push_config(self, scope: Scope, task_id: str, config_id: str) -> None:
        """Remove a config; removing an absent one is not an error."""

    async def wait_events(
        self, scope: Scope, task_id: str, seq: int, timeout: float
    ) -> builtins.list[StoredEvent]:
        """Events after `seq`, waiting up to `timeout` seconds for the first one to appear.

        This default polls, fast at first and backing off while nothing arrives (a caller
        that got events calls again and starts fast again); a store that can notify (the
        embedded one) overrides it."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        interval = self.min_poll_interval
        while True:
            events = await self.events_after(scope, task_id, seq)
            remaining = deadline - loop.time()
            if events or remaining <= 0:
                return events
            await asyncio.sleep(min(interval, remaining))
            interval = min(interval * 2, self.poll_interval)

    def check_size(self, task: bytes, events: Sequence[bytes]) -> None:
        """Raises InvalidParamsError, before anything is written, when the task or one of
        the events (serialized) is over `max_task_bytes`: the same limit, and the same
        error, on every store."""
        largest = max([len(task), *(len(event) for event in events)])
        if largest > self.max_task_bytes:
            what = "the task" if largest == len(task) else "an event of the task"
            raise InvalidParamsError(
                f"{what} would be {largest} bytes, over this agent's limit of "
                f"{self.max_task_bytes} bytes per task ({ENV.MAX_TASK_BYTES})",
                violations=[("message", "the task would be over the size limit per task")])

    async def event(self, scope: Scope, task_id: str, seq: int) -> pb.StreamResponse | None:
        """The task's event `seq`, None when it has none (the push stream reads an event
        too large for its stream record here). This default reads from `events_after`."""
        events = await self.events_after(scope, task_id, seq - 1)
        return events[0].event if events and events[0].seq == seq else None

    def observe(self, observer: WriteObserver) -> None:
        """Tell `observer` of every write this store commits from now on (in-process push
        delivery listens here). It is called on the writer's path, after the commit and
        before the write returns: it must hand the events on, never wait."""
        self._observers = (*self._observers, observer)

    def _wrote(self, scope: Scope, stored: StoredTask,
               events: Sequence[pb.StreamResponse]) -> None:
        """Implementations call this once a create or update committed."""
        for observer in self._observers:
            observer(scope, stored, events)

    @abc.abstractmethod
    async def active_tasks(self, owner: str) -> int:
        """How many of `owner`'s tasks, in any tenant, were created with a quota and have
        not ended yet (`create`): what the per-caller quota counts. It may be a moment old
        (DynamoDB reads it eventually consistent); the create's own check is exact."""

    async def count(self, scope: Scope, states: Collection[int]) -> int:
        """How many of the scope's tasks are in one of `states`. This default asks `list`
        for each state's total; a store with cheaper counts overrides it."""
        total = 0
        for state in states:
            total += (await self.list(scope, TaskQuery(state=state, page_size=1))).total_size
        return total

    async def expire_finished(self, limit: int) -> int:
        """Finish setting the retention of up to `limit` finished tasks whose expiry step
        failed (a store whose items expire by TTL sets it with a later step); returns how
        many it finished. The lease sweeper calls it; the embedded store keeps nothing."""
        return 0

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections; the default store holds none."""

    def after_restore(self) -> None:  # noqa: B027 - optional hook
        """Drop what copies restored from one snapshot (Lambda SnapStart) must not share:
        open connections, fetched credentials. The store stays usable; the default store
        holds none."""
