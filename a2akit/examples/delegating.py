"""Agents that call agents: an editor that delegates the counting to a second agent.

Two agents, two kit processes (docs/peers.md):

    # the delegate, on the private side: gRPC, callers need an API key
    A2A_AGENT=a2akit.examples.delegating:counter A2A_API_KEYS='[...]' GRPC_PORT=50052 \\
        python -m grpc_service
    # the agent callers talk to; it calls the delegate by name
    A2A_AGENT=a2akit.examples.delegating:agent A2A_PEERS=counter=grpc://127.0.0.1:50052 \\
        A2A_PEER_API_KEYS=counter=COUNTER_KEY A2A_SECRET_COUNTER_KEY=... ./dev serve

Both log under the caller's trace id: the call to the peer carries `traceparent`. A peer that
refuses the key or cannot be reached ends the editor's task FAILED with a message naming it
(a PeerError, uncaught here on purpose).
"""

from a2akit import RequestContext, TaskHandle
from a2akit.peers import call_peer

# The delegate's name in A2A_PEERS.
COUNTER = "counter"


class EditorAgent:
    name = "Editor"
    description = "Reports on a text; a peer agent (A2A_PEERS: counter) counts its words."

    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        await task.working("Asking the counter")
        context.log.info("delegating the count to peer %s", COUNTER)
        reply = await call_peer(COUNTER, context.text, timeout=60)
        await task.add_artifact(f"Report: {reply.text}", name="report")
        await task.complete()


class CounterAgent:
    name = "Counter"
    description = "Counts the words of a text."

    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        context.log.info("counting words")
        await task.add_artifact(f"{len(context.text.split())} words", name="count")
        await task.complete()


agent = EditorAgent()
counter = CounterAgent()
