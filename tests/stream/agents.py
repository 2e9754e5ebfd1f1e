"""An agent for the streaming-door tests: each artifact chunk carries the wall-clock time at
which the agent emitted it, so a client on the same machine can measure how late it arrives.

The message text is the number of chunks; STAMP_DELAY_SECONDS (environment, read at import
in the server process) is the pause before each chunk."""

from __future__ import annotations

import asyncio
import os
import time

from a2akit import RequestContext, TaskHandle

DELAY_ENV = "STAMP_DELAY_SECONDS"


class StampedAgent:
    name = "Stamped"
    description = "Emits numbered chunks stamped with their emit time."

    def __init__(self) -> None:
        self.delay = float(os.environ.get(DELAY_ENV, "0.3"))

    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        await task.working("Stamping")
        count = int(context.text or "3")
        artifact_id = None
        for i in range(count):
            await asyncio.sleep(self.delay)
            artifact_id = await task.add_artifact(
                f"{i}@{time.time():.6f};", artifact_id=artifact_id, name="stamps",
                append=i > 0, last_chunk=i == count - 1)
        await task.complete("Done")


agent = StampedAgent()
