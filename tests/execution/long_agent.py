"""The long lane's test agent: the message is a number of steps; each takes STEP seconds and
adds one artifact chunk, then the task completes. Declares `long_running`."""

from __future__ import annotations

import asyncio

from a2akit import RequestContext, TaskHandle

STEP = 0.5


class StepsAgent:
    name = "Steps"
    description = "Works for as many steps as the message says."
    long_running = True

    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        await task.working("Working")
        artifact_id = None
        for i in range(int(context.text.strip())):
            await asyncio.sleep(STEP)
            artifact_id = await task.add_artifact(f"{i} ", artifact_id=artifact_id,
                                                  name="steps", append=i > 0)
        await task.complete("done")


agent = StepsAgent()
