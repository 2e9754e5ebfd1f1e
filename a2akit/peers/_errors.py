"""What goes wrong calling a peer, said for the agent and, uncaught, for its caller::

    AgentFailure (a2akit.agent)
     +-- PeerError           no answer from the peer: the message names it and says why
          +-- UnknownPeerError   the name is not in A2A_PEERS
          +-- PeerTaskError      the peer's task ended FAILED, REJECTED or CANCELED

Each is an `AgentFailure`: raised out of `execute`, the task ends FAILED with the message as
its status text, and the log has one line without a traceback. The message is safe to show
the caller: the peer's name and what happened (refused the credentials, cannot be reached),
never a credential, an address or the transport's text; the SDK's exception is chained
(`__cause__`) for the agent that wants it.
"""

from __future__ import annotations

from collections.abc import Iterable

from a2akit.agent import AgentFailure
from a2akit.generated import a2a_pb2 as pb
from a2akit.settings import ENV

__all__ = ["PeerError", "PeerTaskError", "UnknownPeerError", "describe"]

# The longest status text of a peer's failed task quoted in a PeerTaskError.
_QUOTE_CHARS = 200


class PeerError(AgentFailure):
    """A call to the peer `peer` gave no answer; the message says why."""

    def __init__(self, peer: str, what: str) -> None:
        super().__init__(f"A2A peer {peer!r} {what}")
        self.peer = peer


class UnknownPeerError(PeerError, LookupError):
    """`peer(name)` for a name A2A_PEERS does not list."""

    def __init__(self, peer: str, known: Iterable[str]) -> None:
        names = ", ".join(sorted(known)) or "no peers"
        super().__init__(peer, f"is not configured: {ENV.PEERS} names {names}")


class PeerTaskError(PeerError):
    """The peer answered, and its task ended FAILED, REJECTED or CANCELED: `task` is it."""

    def __init__(self, peer: str, task: pb.Task) -> None:
        state = pb.TaskState.Name(task.status.state).removeprefix("TASK_STATE_")
        said = " ".join(part.text for part in task.status.message.parts
                        if part.HasField("text")).strip()
        if len(said) > _QUOTE_CHARS:
            said = said[:_QUOTE_CHARS - 3] + "..."
        super().__init__(peer, f"ended its task {state}" + (f": {said}" if said else ""))
        self.task = task


_GRPC_CODES = {
    "UNAUTHENTICATED": "refused this agent's credentials",
    "PERMISSION_DENIED": "refused this agent the call (permission denied)",
    "UNAVAILABLE": "cannot be reached",
    "DEADLINE_EXCEEDED": "did not answer in time",
}
_HTTP_STATUSES = {
    401: "refused this agent's credentials",
    403: "refused this agent the call (permission denied)",
    404: "has no A2A endpoint at its address (HTTP 404)",
}


def describe(exc: BaseException) -> str:
    """What a failed SDK call means, in the words of a PeerError (after the peer's name):
    from the first transport error in the chain (a gRPC status, an HTTP status, a
    connection error), else from the SDK's own error."""
    import httpx
    from a2a.client.errors import A2AClientTimeoutError, AgentCardResolutionError
    from a2a.utils.errors import A2AError

    if isinstance(exc, AgentCardResolutionError):
        status = f" (HTTP {exc.status_code})" if exc.status_code else ""
        return f"has no agent card this agent could read{status}"
    if isinstance(exc, A2AClientTimeoutError | TimeoutError):
        return "did not answer in time"
    seen: BaseException | None = exc
    while seen is not None:
        name = _grpc_code(seen)
        if name is not None:
            return _GRPC_CODES.get(name, f"answered gRPC status {name}")
        if isinstance(seen, httpx.HTTPStatusError):
            code = seen.response.status_code
            return _HTTP_STATUSES.get(code, f"answered HTTP {code}")
        if isinstance(seen, httpx.TimeoutException):
            return "did not answer in time"
        if isinstance(seen, httpx.TransportError):
            return "cannot be reached"
        seen = seen.__cause__ or seen.__context__
    if isinstance(exc, A2AError) and type(exc).__module__.startswith("a2a.utils"):
        return f"answered {type(exc).__name__}"  # an A2A error of the protocol's catalogue
    return f"failed ({type(exc).__name__})"


def _grpc_code(exc: BaseException) -> str | None:
    """The status code's name of a failed gRPC call; None for anything else."""
    try:
        from grpc.aio import AioRpcError
    except ImportError:  # pragma: no cover - the extra brings grpcio
        return None
    if not isinstance(exc, AioRpcError):
        return None
    name: str = exc.code().name
    return name
