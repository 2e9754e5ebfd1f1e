"""Lambda entry point of the push dispatcher: `handlers.push.handler`, triggered by the table's
DynamoDB Stream, filtered to new event items (infra). See `a2akit.push.stream`.

Settings, store client and sender are made once per container, at import; the event loop
is kept across invocations, like the store client's connections.
"""

from __future__ import annotations

import asyncio
from typing import Any

from a2akit import logs
from a2akit.execution.budget import LambdaContext, worker_budget
from a2akit.push.dispatcher import make_dispatcher
from a2akit.push.stream import dispatch_records
from a2akit.runtime import explain_startup_errors, make_store, task_body03
from a2akit.settings import Settings

__all__ = ["handler"]

with explain_startup_errors(reraise=True):
    settings = Settings.from_env()
    logs.configure(settings.log_level, settings.service("push"))
    dispatcher = make_dispatcher(settings, make_store(settings), task_body03=task_body03)
_loop = asyncio.new_event_loop()


def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Deliver the events of one batch of stream records; returns the partial batch
    response (the records to retry, by sequence number)."""
    logs.begin(request_id=logs.request_id(context), operation="PushDispatch")
    # A request started at the budget's end may take its whole timeout.
    budget = max(0.0, worker_budget(settings, context) - settings.push_timeout_seconds)
    failed = _loop.run_until_complete(dispatch_records(dispatcher, event.get("Records", []),
                                                       budget))
    return {"batchItemFailures": [{"itemIdentifier": sequence} for sequence in failed]}
