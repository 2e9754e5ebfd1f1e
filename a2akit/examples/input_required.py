"""Asks for input on the first turn, completes on the next message to the same task."""

from a2akit import RequestContext, TaskHandle


class GreeterAgent:
    name = "Greeter"
    description = "Asks for your name, then greets you."

    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        if context.task is None:
            await task.ask_input("What is your name?")
            return
        await task.add_artifact(f"Hello, {context.text}!", name="greeting")
        await task.complete()


agent = GreeterAgent()
