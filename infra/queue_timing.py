"""The task queue's numbers, derived in this one place from the worker's timeout and the
receive count: the queue's visibility timeout and maxReceiveCount (infra/worker.py) and the
settings the processes read (A2A_QUEUE_MAX_RECEIVES, A2A_QUEUE_GRACE_SECONDS).

No CDK here: infra/config.py checks context values against the same rules.
"""

from __future__ import annotations

import dataclasses

from a2akit.settings import ENV

__all__ = ["LOST_MARGIN_SECONDS", "MIN_MAX_RECEIVES", "VISIBILITY_FACTOR", "QueueTiming"]

# AWS's guidance for a Lambda function fed by SQS: a visibility timeout of at least six
# times the function's timeout (the event source's poller retries throttled invocations
# while the message stays invisible), and a maxReceiveCount of at least 5 (a throttled
# receive counts as a receive: fewer sends a task to the dead-letter queue that never ran).
VISIBILITY_FACTOR = 6
MIN_MAX_RECEIVES = 5
# After the last receive's visibility ends, the worker's own FAILED write may still land.
LOST_MARGIN_SECONDS = 60


@dataclasses.dataclass(frozen=True)
class QueueTiming:
    """The queue's numbers, all derived here from the worker's timeout and the receive
    count: the queue's visibility timeout and maxReceiveCount, and what the processes read
    (A2A_QUEUE_MAX_RECEIVES, A2A_QUEUE_GRACE_SECONDS)."""

    worker_timeout_seconds: int
    max_receives: int

    @property
    def visibility_timeout_seconds(self) -> int:
        return VISIBILITY_FACTOR * self.worker_timeout_seconds

    @property
    def grace_seconds(self) -> int:
        """How long a queued task may wait before it counts as lost: until SQS has given up
        on its message (every receive held for a whole visibility timeout), plus a margin."""
        return self.max_receives * self.visibility_timeout_seconds + LOST_MARGIN_SECONDS

    @property
    def worker_environment(self) -> dict[str, str]:
        """The worker ends a task FAILED on its message's last receive."""
        return {ENV.QUEUE_MAX_RECEIVES: str(self.max_receives)}

    @property
    def enqueuer_environment(self) -> dict[str, str]:
        """Whoever enqueues leases the task to the queue for the grace."""
        return {ENV.QUEUE_GRACE_SECONDS: str(self.grace_seconds)}
