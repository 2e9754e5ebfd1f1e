"""The SDK's client for one peer: its transport and the interceptor that adds what only the
kit knows (credentials, the caller's trace). Imported only after `_sdk.load()`: this module
imports the SDK at its top."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from a2a.client import ClientCallContext, ClientConfig, ClientFactory, minimal_agent_card
from a2a.client.interceptors import AfterArgs, BeforeArgs, ClientCallInterceptor

if TYPE_CHECKING:
    from a2a.client import Client

    from a2akit.peers._client import Peer

__all__ = ["client_for"]

_GRPC = "GRPC"
_HTTP_BINDINGS = ["JSONRPC", "HTTP+JSON"]


class _PeerHeaders(ClientCallInterceptor):  # type: ignore[misc]  # the SDK is Any to mypy
    """Adds the peer's credentials and this hop's `traceparent` to every call, read when the
    call is made (a token renewed since, the trace of the task making the call)."""

    def __init__(self, peer: Peer) -> None:
        self._peer = peer

    async def before(self, args: BeforeArgs) -> None:
        headers = await self._peer.headers()
        if args.context is None:
            args.context = ClientCallContext()
        args.context.service_parameters = {**(args.context.service_parameters or {}),
                                           **headers}

    async def after(self, args: AfterArgs) -> None:
        return None


def client_for(peer: Peer, card: Any, *, streaming: bool) -> Client:
    """A client for `peer`: over gRPC for a grpc(s):// address (a channel of its own, TLS
    with grpcs), else over JSON-RPC or HTTP+JSON, whichever `card` lists first."""
    if card is None:
        import grpc

        target = peer.address.split("://", 1)[1].rstrip("/")
        tls = peer.address.startswith("grpcs://")

        def channel(url: str) -> Any:
            if tls:
                return grpc.aio.secure_channel(url, grpc.ssl_channel_credentials())
            return grpc.aio.insecure_channel(url)

        config = ClientConfig(streaming=streaming, supported_protocol_bindings=[_GRPC],
                              grpc_channel_factory=channel)
        card = minimal_agent_card(target, [_GRPC])
        # The kit serves SendStreamingMessage over gRPC; the minimal card cannot know it.
        card.capabilities.streaming = True
    else:
        config = ClientConfig(streaming=streaming,
                              supported_protocol_bindings=list(_HTTP_BINDINGS))
    return ClientFactory(config).create(card, interceptors=[_PeerHeaders(peer)])
