"""Lambda entry point for the lease sweeper: `handlers.sweeper.handler`, on a schedule
(EventBridge, every minute). Ends FAILED every task whose runner's lease expired; see
`a2akit.execution.leases`. The container and the local server run the same sweep in process.
"""

from __future__ import annotations

import asyncio
from typing import Any

from a2akit import logs
from a2akit.execution.leases import sweep
from a2akit.runtime import explain_startup_errors, make_store
from a2akit.settings import Settings

__all__ = ["handler"]

with explain_startup_errors(reraise=True):
    settings = Settings.from_env()
    logs.configure(settings.log_level, settings.service("sweeper"))
    store = make_store(settings)
_loop = asyncio.new_event_loop()


def handler(event: dict[str, Any], context: object) -> dict[str, int]:
    """One sweep; returns how many tasks it ended."""
    logs.begin(request_id=logs.request_id(context), operation="Sweep")
    return {"ended": _loop.run_until_complete(sweep(store))}
