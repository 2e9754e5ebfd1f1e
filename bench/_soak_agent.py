"""The agent the soak servers host (`A2A_AGENT=_soak_agent:agent`, bench/ on the path).

The first word of the message picks the behaviour:
  echo TEXT  working, one artifact with TEXT, completed
  stream N   working, one artifact in N appended chunks, completed
  hold       working, then waits (up to HOLD_SECONDS) to be canceled; completes if not
"""

from __future__ import annotations

import asyncio

from a2akit import RequestContext, TaskHandle

HOLD_SECONDS = 30.0


class SoakAgent:
    name = "Soak"
    description = "Echoes, streams chunks, or holds until canceled (bench/soak.py)."

    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        command, _, rest = (context.text or "").partition(" ")
        await task.working()
        if command == "stream":
            artifact_id = None
            count = int(rest or "1")
            for i in range(count):
                artifact_id = await task.add_artifact(
                    f"{i} ", artifact_id=artifact_id, name="chunks", append=i > 0,
                    last_chunk=i == count - 1)
        elif command == "hold":
            # Bounded: a cancel that never arrives still ends the task (as COMPLETED,
            # which the soak's check then reports).
            await asyncio.sleep(HOLD_SECONDS)
        else:
            await task.add_artifact(rest, name="echo")
        await task.complete()


agent = SoakAgent()
