"""Execution: where and how an agent runs, and what happens when nothing runs it any more.

    executor.py   the one choice of where agents run (inline or queue), behind `Executor`
    outcomes.py   a run's terms, what a caller learns of it, the first write of a message
    run.py        one agent's run for one task; the live runs a container drains
    writer.py     the run's writes: batched, conditional, re-folded on conflict
    watch.py      the run's lease renewal and its watch for cancels from elsewhere
    fold.py       read, fold, write conditionally, retry on conflict: every task write
    leases.py     who runs a task, and ending FAILED a task whose runner is gone
    follow.py     following a task another process runs, from its stored events
    budget.py     how long a call or a worker's run may take (Lambda's remaining time)
    queue.py      queue mode's job and its SQS queue
    worker.py     the queue worker
    lane.py       the long-task lane's worker loop (no time limit, ECS scale-in protection)
    protection.py the lane's ECS task scale-in protection
"""

from a2akit.execution.executor import Execution, Executor, make_executor
from a2akit.execution.run import drain, live_runs

__all__ = ["Execution", "Executor", "drain", "live_runs", "make_executor"]
