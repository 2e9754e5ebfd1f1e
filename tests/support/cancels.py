"""How fast a cancel stops a running agent, in the kit's own terms (docs/execution.md,
"Cancel"): the runner meets the cancel at its next write, or at its next look at the task
(every `poll_interval`) while the agent is silent.

Not in seconds of wall clock: on a loaded machine those measure DynamoDB Local's round
trips and the store's worker threads waiting for a core (a cancel request alone took 1.7 s
in a run with two CPU burners), not how many writes or looks the kit let pass. `StoreCalls`
records what a store was asked about each task, on the event loop's clock; `LoopLag`
measures how late the loop's timers fire, the one allowance a look's timing needs.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

from a2akit.states import is_terminal
from a2akit.store.base import TaskStore, VersionConflictError

__all__ = ["Call", "LoopLag", "StoreCalls"]


@dataclasses.dataclass(frozen=True)
class Call:
    sent: float  # loop time the store was asked
    returned: float
    landed: bool = True  # a write the store did not refuse


class Arguments(NamedTuple):
    """A call's arguments after the scope and the task id."""

    args: tuple[Any, ...]
    kwargs: dict[str, Any]


Record = Callable[[str, Arguments, Call], None]


class StoreCalls:
    """What stores were asked about each task: when a cancel request of it first returned
    (`marked`), each write that would leave it unfinished (`writes`: the agent's, never a
    canceller's, which ends it), and each look at it (`looks`: reads and lease renewals)."""

    def __init__(self) -> None:
        self.marked: dict[str, float] = {}
        self.writes: collections.defaultdict[str, list[Call]] = collections.defaultdict(list)
        self.looks: collections.defaultdict[str, list[Call]] = collections.defaultdict(list)

    def watch(self, store: TaskStore) -> None:
        """Record `store`'s calls (its methods wrapped on the instance, for this test)."""
        clock = asyncio.get_running_loop().time

        def wrap(name: str, record: Record) -> None:
            original: Callable[..., Awaitable[Any]] = getattr(store, name)

            async def recorded(scope: Any, task_id: str, *args: Any, **kwargs: Any) -> Any:
                sent = clock()
                try:
                    result = await original(scope, task_id, *args, **kwargs)
                except VersionConflictError:
                    record(task_id, Arguments(args, kwargs), Call(sent, clock(), landed=False))
                    raise
                record(task_id, Arguments(args, kwargs), Call(sent, clock()))
                return result

            setattr(store, name, recorded)

        def mark(task_id: str, arguments: Arguments, call: Call) -> None:
            self.marked.setdefault(task_id, call.returned)

        def write(task_id: str, arguments: Arguments, call: Call) -> None:
            # update(scope, task_id, expected_version, task, events, ...)
            args, kwargs = arguments
            task = args[1] if len(args) > 1 else kwargs["task"]
            if not is_terminal(task.status.state):
                self.writes[task_id].append(call)

        def look(task_id: str, arguments: Arguments, call: Call) -> None:
            self.looks[task_id].append(call)

        wrap("request_cancel", mark)
        wrap("update", write)
        wrap("get", look)
        wrap("swap_lease", look)

    def assert_stopped_at_next_write(self, task_id: str) -> None:
        """Once a cancel request returned, no write that keeps the task running lands, and
        the first one refused stops the agent: no other is asked for (an agent left running
        would have its next one asked as soon as that one returned)."""
        marked = self.marked[task_id]
        after = [call for call in self.writes[task_id] if call.sent >= marked]
        assert not any(call.landed for call in after), (task_id, marked, after)
        assert len(after) <= 1, (task_id, marked, after)

    def assert_stopped_at_next_look(self, task_id: str, answered: float, stopped: float,
                                    poll_interval: float, lag: float) -> None:
        """A silent agent, its task canceled by a call that `answered` (loop time), was
        `stopped` by the runner's first look at the task after the cancel, if not by an
        earlier one. That look came `poll_interval` after the one before it returned (the
        watch sleeps that long between looks), or after the answer if that one returned
        sooner, give or take how late the loop's timers fired (`lag`)."""
        looks = self.looks[task_id]
        after = [call for call in looks if answered <= call.sent < stopped]
        assert len(after) <= 1, (task_id, answered, stopped, after)
        if after:
            before = [call.returned for call in looks if call.sent < after[0].sent]
            since = max([answered, *before])
            assert after[0].sent - since <= poll_interval + lag, (
                task_id, answered, looks, poll_interval, lag)


class LoopLag:
    """How late the running loop fires a timer: the worst seen while it runs, plus one tick
    (a late timer can fall between two of the probe's)."""

    TICK = 0.01

    def __init__(self) -> None:
        self.worst = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _probe(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + self.TICK
            await asyncio.sleep(self.TICK)
            self.worst = max(self.worst, loop.time() - due)

    def start(self) -> None:
        self._task = asyncio.create_task(self._probe())

    def stop(self) -> float:
        """Stop probing; the allowance for one timer: the worst lag plus one tick."""
        if self._task is not None:
            self._task.cancel()
        return self.worst + self.TICK
