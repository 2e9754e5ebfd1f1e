"""Time budgets: how long a blocking or streaming call, or a worker's run, may take.

On AWS Lambda the platform says how long an invocation has left (a request's deadline is in
its `a2akit.invocation.Invocation`; the worker gets the Lambda context as its handler
argument).
A call's budget is that time less `budget_margin_seconds` (room for the answer to leave),
never more than `stream_budget_seconds`; elsewhere it is `stream_budget_seconds` alone
(None: no limit).
"""

from __future__ import annotations

import time
from typing import Protocol

from a2akit.settings import Settings

__all__ = ["LambdaContext", "call_budget", "run_budget_text", "worker_budget"]

# Lambda stops any function after 15 minutes at most, whatever its configured timeout.
LAMBDA_CEILING_SECONDS = 900


class LambdaContext(Protocol):
    def get_remaining_time_in_millis(self) -> int: ...


def call_budget(settings: Settings, deadline: float | None) -> float | None:
    """Seconds a blocking or streaming call may run from now (see the module docstring)."""
    budget = settings.stream_budget_seconds
    if deadline is not None:
        left = max(0.0, deadline - time.monotonic() - settings.budget_margin_seconds)
        budget = left if budget is None else min(budget, left)
    return budget


def worker_budget(settings: Settings, context: LambdaContext) -> float:
    """Seconds a worker may let the agent run: the invocation's remaining time less the
    margin, in which the runner ends the task FAILED if the agent is still going."""
    left = context.get_remaining_time_in_millis() / 1000 - settings.budget_margin_seconds
    return max(0.0, left)


def run_budget_text(where: str, seconds: float) -> str:
    """The status message of a task whose agent ran out of time: names the limit."""
    return (f"The agent did not finish within the time limit of {where}: {seconds:.0f} s "
            f"(AWS Lambda ends any invocation after {LAMBDA_CEILING_SECONDS // 60} minutes "
            "at most). The task was stopped")
