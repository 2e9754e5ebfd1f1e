"""The watcher of a running agent: renews the run's lease and notices when another process
took the task (a cancel; a reader that found the lease expired while this process was
frozen), so the agent is stopped."""

from __future__ import annotations

import asyncio
import logging

from a2akit.errors import A2AError
from a2akit.execution.leases import lease_for, renewal_interval
from a2akit.execution.writer import TaskWriter
from a2akit.generated import a2a_pb2 as pb
from a2akit.states import ends_stream, is_terminal
from a2akit.store.base import LeaseLostError, StoredTask

__all__ = ["watch"]

log = logging.getLogger("a2akit.runner")


async def watch(writer: TaskWriter, began: float) -> None:
    """Renew the lease every `renewal_interval` and re-read the task every `poll_interval`
    in between; return once the task was taken from the run (the agent is then stopped).
    The renewal is one conditional write that returns the task, so it stands in for one of
    those reads. `began` is the loop time the agent started: a first burst that held the
    loop for long (synchronous work) aged a lease the task already held (a worker's, a
    continued task's), and the renewal is due that much sooner."""
    loop = asyncio.get_running_loop()
    store, terms = writer.store, writer.terms
    renew_every = renewal_interval(terms.lease_seconds)
    renewed_at = began
    while True:
        await asyncio.sleep(min(store.poll_interval, renew_every))
        stored = writer.stored
        if stored is None:
            continue
        lost = False
        try:
            # Only the run's own lease is renewed: a wait lease (the agent asked the client
            # for something) is the client's to end.
            if (stored.lease is not None and stored.lease.owner == terms.lease_owner
                    and loop.time() - renewed_at >= renew_every * 0.9):
                try:
                    current: StoredTask | None = await store.swap_lease(
                        writer.scope, writer.task_id, terms.lease_owner,
                        lease_for(terms.lease_owner, terms.lease_seconds))
                    renewed_at = loop.time()
                except LeaseLostError as exc:
                    current, lost = exc.current, True
            else:
                current = await store.get(writer.scope, writer.task_id)
        except A2AError:
            # The store is away: keep trying. Past the lease a reader may end the task;
            # our next write then conflicts and stops the agent.
            log.warning("task %s: lease renewal or cancel watch failed", writer.task_id,
                        exc_info=True)
            continue
        if current is None:
            writer.vanished()
            return
        if _taken(writer, current, lost):
            await writer.catch_up(current)
            writer.ended_elsewhere(current)
            return
        if current.cancel_requested:
            writer.cancel_requested()  # the run's last write ends the task CANCELED
            return


def _taken(writer: TaskWriter, current: StoredTask, lease_lost: bool) -> bool:
    """Whether `current` shows the task taken from this run. A CANCELED state always
    counts: the agent's own writes never cancel. Another end, or a lease lost to nobody,
    counts only while no write of ours is in flight, which could be it."""
    if current.task.status.state == pb.TASK_STATE_CANCELED:
        return True
    if (writer.writing or writer.stored is None
            or current.version == writer.stored.version):
        return False
    return is_terminal(current.task.status.state) or (
        lease_lost and not ends_stream(current.task.status.state))
