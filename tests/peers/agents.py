"""The agents of the peers' tests: a delegate that answers by what it is told, and an agent
that calls it through a `Peers` of its own (the example's agents use the process's)."""

from __future__ import annotations

import asyncio

from a2akit import RequestContext, TaskHandle, logs
from a2akit.peers import Peers

__all__ = ["Calling", "Delegate"]


class Delegate:
    """Counts words, except: "fail" fails, "ask" asks for input, "reply" answers with a
    message, "slow" counts after a second. Remembers each call's trace id and caller."""

    name = "Delegate"

    def __init__(self) -> None:
        self.traces: list[str] = []

    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        self.traces.append(logs.fields().get("trace_id", ""))
        if context.text == "fail":
            await task.fail("no can do")
        elif context.text == "ask":
            await task.ask_input("Which one?")
        elif context.text == "reply":
            await task.reply("just a message")
        else:
            if context.text == "slow":
                await task.working("counting slowly")
                await asyncio.sleep(1.0)
            await task.add_artifact(f"{len(context.text.split())} words", name="count")
            await task.complete()


class Calling:
    """Reports what the peer `name` answers; lets every PeerError out."""

    name = "Calling"

    def __init__(self, peers: Peers, name: str) -> None:
        self._peers = peers
        self._name = name

    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        await task.working("asking")
        reply = await self._peers.peer(self._name).call(context.text)
        await task.add_artifact(f"peer says: {reply.text}")
        await task.complete()
