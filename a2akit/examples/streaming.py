"""Multi-step streaming: working, an artifact sent in chunks (append/lastChunk), completed."""

import asyncio

from a2akit import RequestContext, TaskHandle


class StreamingAgent:
    name = "Streamer"
    description = "Streams its answer word by word as chunks of one artifact."
    delay = 0.02

    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        await task.working("Thinking")
        words = (context.text or "nothing to say").split()
        artifact_id = None
        for i, word in enumerate(words):
            await asyncio.sleep(self.delay)
            artifact_id = await task.add_artifact(
                word if i == 0 else " " + word, artifact_id=artifact_id, name="answer",
                append=i > 0, last_chunk=i == len(words) - 1)
        await task.complete("Done")


agent = StreamingAgent()
