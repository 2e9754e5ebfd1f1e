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
from collections.abc import Sequence

from a2akit.generated import a2a_pb2 as pb
from a2akit.store.cursor import DEFAULT_PAGE_SIZE

__all__ = [
    "DuplicateMessageError",
    "Scope",
    "StoredEvent",
    "StoredTask",
    "TaskPage",
    "TaskQuery",
    "TaskStore",
    "VersionConflictError",
]


@dataclasses.dataclass(frozen=True)
class Scope:
    """Who may see a task: the request's tenant and the authenticated owner."""

    tenant: str
    owner: str


@dataclasses.dataclass(frozen=True)
class StoredTask:
    task: pb.Task
    version: int  # bumped by every write; writes are conditional on it
    last_seq: int  # sequence number of the newest event


@dataclasses.dataclass(frozen=True)
class StoredEvent:
    seq: int
    event: pb.StreamResponse


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


class VersionConflictError(Exception):
    """Another writer changed the task since `expected_version` was read."""


class DuplicateMessageError(Exception):
    """The caller already sent this messageId; `task_id` is the task it created or continued."""

    def __init__(self, task_id: str) -> None:
        super().__init__(task_id)
        self.task_id = task_id


class TaskStore(abc.ABC):
    # How often wait_events looks again when the store cannot notify (DynamoDB).
    poll_interval: float = 0.5

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
    ) -> StoredTask:
        """Store a new task (version 1) and its first events, claiming `message_id`.

        Raises DuplicateMessageError when the message id is already claimed in this scope."""

    @abc.abstractmethod
    async def update(
        self,
        scope: Scope,
        task_id: str,
        expected_version: int,
        task: pb.Task,
        events: Sequence[pb.StreamResponse],
        message_id: str | None = None,
    ) -> StoredTask:
        """Replace the snapshot and append events, all or nothing, if the version still matches.

        Raises VersionConflictError when it does not (or the task is gone), and
        DuplicateMessageError when `message_id` is already claimed."""

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
    async def put_push_config(self, scope: Scope, config: pb.TaskPushNotificationConfig) -> None:
        """Store (or replace, same id) a push config under its task."""

    @abc.abstractmethod
    async def get_push_config(
        self, scope: Scope, task_id: str, config_id: str
    ) -> pb.TaskPushNotificationConfig | None: ...

    @abc.abstractmethod
    async def list_push_configs(
        self, scope: Scope, task_id: str
    ) -> builtins.list[pb.TaskPushNotificationConfig]: ...

    @abc.abstractmethod
    async def delete_push_config(self, scope: Scope, task_id: str, config_id: str) -> None:
        """Remove a config; removing an absent one is not an error."""

    async def wait_events(
        self, scope: Scope, task_id: str, seq: int, timeout: float
    ) -> builtins.list[StoredEvent]:
        """Events after `seq`, waiting up to `timeout` seconds for the first one to appear.

        This default polls; a store that can notify (the embedded one) overrides it."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            events = await self.events_after(scope, task_id, seq)
            remaining = deadline - loop.time()
            if events or remaining <= 0:
                return events
            await asyncio.sleep(min(self.poll_interval, remaining))

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections; the default store holds none."""

    def after_restore(self) -> None:  # noqa: B027 - optional hook
        """Drop what copies restored from one snapshot (Lambda SnapStart) must not share:
        open connections, fetched credentials. The store stays usable; the default store
        holds none."""
