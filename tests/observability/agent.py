"""The agent of the observability tests: logs through `context.log`, outlives its first burst
(so the runner's writer, watcher and lease run), and echoes nothing of the message."""

from __future__ import annotations

import asyncio

from a2akit import RequestContext, TaskHandle


class LoggingAgent:
    name = "Logging"
    description = "Logs a line, works a moment, completes."

    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        context.log.info("agent started")
        await task.working("on it")
        await asyncio.sleep(0.05)
        await task.add_artifact("done", name="result")
        await task.complete()


agent = LoggingAgent()
