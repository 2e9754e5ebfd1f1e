"""The agent the interop servers run: echoes and completes, except for "slow", which says it
is working ("waiting") and works until canceled (a task to subscribe to and cancel). Callers
with credentials may read its extended card: one more skill than the public card."""

from __future__ import annotations

import asyncio

from a2akit import RequestContext, TaskHandle
from a2akit.examples.echo import EchoAgent
from a2akit.generated import a2a_pb2 as pb


class SlowOrEcho(EchoAgent):
    extended_card = pb.AgentCard(
        name="Echo, extended", description="The echo agent, as members see it.", version="0.1.0",
        default_input_modes=["text/plain"], default_output_modes=["text/plain"],
        capabilities=pb.AgentCapabilities(streaming=True),
        skills=[*EchoAgent.skills, pb.AgentSkill(id="members", name="Members",
                                                 description="Only on the extended card.",
                                                 tags=["demo"])])

    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        if context.text == "slow":
            await task.working("waiting")
            await asyncio.Event().wait()  # until the cancel cancels the run
        await super().execute(context, task)


agent = SlowOrEcho()
