"""Works in steps until canceled; a cancel from any process stops it at its next await."""

import asyncio

from a2akit import RequestContext, TaskHandle


class CountingAgent:
    name = "Counter"
    description = "Counts slowly, one artifact chunk per step, until canceled or done."
    steps = 600
    delay = 0.05

    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        await task.working("Counting")
        artifact_id = None
        try:
            for i in range(self.steps):
                await asyncio.sleep(self.delay)
                artifact_id = await task.add_artifact(f"{i} ", artifact_id=artifact_id,
                                                      name="count", append=i > 0)
        except asyncio.CancelledError:
            # Cleanup goes here; the task is already CANCELED in the store.
            raise
        await task.complete()


agent = CountingAgent()
