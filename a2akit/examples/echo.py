"""Echo: one artifact with the user's text, then completed."""

from a2akit import RequestContext, TaskHandle
from a2akit.generated import a2a_pb2 as pb


class EchoAgent:
    name = "Echo"
    description = "Answers every message with an artifact holding the same text."
    skills = (pb.AgentSkill(id="echo", name="Echo", description="Repeats your message.",
                            tags=["demo"], examples=["hello"]),)

    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        await task.add_artifact(context.text, name="echo")
        await task.complete()


agent = EchoAgent()
