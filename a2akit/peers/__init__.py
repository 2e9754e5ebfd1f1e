"""Agents that call agents: another A2A agent by name, through the official A2A client.

    from a2akit.peers import call_peer

    async def execute(self, context, task):
        await task.working("Asking the counter")
        reply = await call_peer("counter", context.text)   # A2A_PEERS=counter=grpc://...
        await task.add_artifact(reply.text)
        await task.complete()

What the kit supplies (docs/peers.md):

- the peer's address, from A2A_PEERS (`name=URL,...`): an `http(s)://` URL of its agent card
  or its base URL (the card is read, kept for 5 minutes, and the call goes over JSON-RPC or
  HTTP+JSON, as the card lists them), or `grpc://host:port` (`grpcs://` with TLS): gRPC to that
  address, the private side of a deployment;
- credentials (a2akit/peers/_credentials.py): the peer's API key (A2A_PEER_API_KEYS), or an
  OAuth 2.0 client-credentials token (A2A_PEER_TOKEN_URL, Cognito), kept until it expires;
- the caller's trace: each call sends `traceparent` with the trace of the task making it, so
  both agents' log lines carry one trace id.

`call_peer(name, content)` sends one message and waits until the peer's task is done or waits
for input; `peer(name).client()` gives the SDK's own `Client` (streaming, GetTask, cancel...)
with the same credentials and trace on every call.

    PeerError         no answer: the peer refused the credentials, cannot be reached, ...
    UnknownPeerError  the name is not in A2A_PEERS
    PeerTaskError     the peer's task ended FAILED, REJECTED or CANCELED

They are `AgentFailure`s: uncaught, the task ends FAILED with their message, which names the
peer. Needs the `peers` extra (`pip install 'a2a-aws-kit[peers]'`). Importing this package
costs nothing: the SDK is imported on the first call, and only then (so an agent that names a
peer does not slow the front door that imports it for its card).
"""

from a2akit.peers._client import Peer, PeerReply, Peers, call_peer, load_sdk, peer
from a2akit.peers._errors import PeerError, PeerTaskError, UnknownPeerError

__all__ = ["Peer", "PeerError", "PeerReply", "PeerTaskError", "Peers", "UnknownPeerError",
           "call_peer", "load_sdk", "peer"]
