"""The agent the interop server runs: echoes and completes, except for "slow", which works
until canceled (a task to subscribe to and cancel)."""

from __future__ import annotations

import asyncio

from a2akit import RequestContext, TaskHandle
from a2akit.examples.echo import EchoAgent


class SlowOrEcho(EchoAgent):
    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        if context.text == "slow":
            await task.working("waiting")
            await asyncio.Event().wait()  # until the cancel cancels the run
        await super().execute(context, task)


agent = SlowOrEcho()
