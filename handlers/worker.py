"""Lambda entry point for the queue worker: `handlers.worker.handler` (an SQS event source
with batch size 1 and ReportBatchItemFailures). See `a2akit.execution.worker`.

Everything here runs once per container, at import: settings, store client, agent. The
event loop is kept across invocations, like the store client's threads.
"""

from __future__ import annotations

import asyncio
from typing import Any

from a2akit import logs
from a2akit.execution.budget import LambdaContext, worker_budget
from a2akit.execution.worker import Worker
from a2akit.runtime import attach_push_delivery, explain_startup_errors, load_agent, make_store
from a2akit.settings import Settings

__all__ = ["handler"]

# As handlers.jsonrpc: a bad setting or an unreachable store is one line, an init error.
with explain_startup_errors(reraise=True):
    settings = Settings.from_env()
    logs.configure(settings.log_level, settings.service("worker"))
    store = make_store(settings)
    delivery = attach_push_delivery(settings, store)
    worker = Worker(settings, store, load_agent(settings))
_loop = asyncio.new_event_loop()


def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Run the records of one SQS event; returns the partial batch response."""
    records = event.get("Records", [])
    logs.begin(request_id=logs.request_id(context), operation="RunTask")
    result = _loop.run_until_complete(
        worker.handle_batch(records, lambda: worker_budget(settings, context)))
    if delivery is not None:
        # The loop runs only during invocations: what the run left in the background (push
        # deliveries made in process, as by `scripts.run_worker` locally) finishes now.
        _loop.run_until_complete(delivery.drain(worker_budget(settings, context)))
    return dict(result)
