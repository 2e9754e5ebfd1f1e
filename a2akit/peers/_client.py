"""Peers by name (A2A_PEERS), a ready SDK client for each, and one call that waits for the
answer (the package docstring says how to use them)."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from a2akit import trace
from a2akit.agent_secrets import secret as read_secret
from a2akit.generated import a2a_pb2 as pb
from a2akit.ids import new_id
from a2akit.peers._credentials import Credentials, SecretReader
from a2akit.peers._errors import PeerError, PeerTaskError, UnknownPeerError, describe
from a2akit.settings import ENV, Settings
from a2akit.states import ends_stream

if TYPE_CHECKING:
    from a2a.client import Client

__all__ = ["Content", "Peer", "PeerReply", "Peers", "call_peer", "load_sdk", "peer"]

log = logging.getLogger("a2akit.peers")

Content = str | pb.Message | Sequence[pb.Part]
# How long a peer's agent card is kept before it is read again.
CARD_MAX_AGE_SECONDS = 300.0
# A task still running after the blocking SendMessage returned (the peer's budget ran out)
# is read again after these waits, doubling up to the last.
_POLL_FIRST_SECONDS = 0.25
_POLL_MAX_SECONDS = 2.0
_UNSUCCESSFUL = (pb.TASK_STATE_FAILED, pb.TASK_STATE_REJECTED, pb.TASK_STATE_CANCELED)
_GRPC = "GRPC"


def load_sdk() -> None:
    """Make the official A2A client (`import a2a`) safe to import in this process; a2akit.peers
    does it before its own first use. Raises ImportError when the peers extra is missing."""
    from a2akit.peers import _sdk

    _sdk.load()


@dataclasses.dataclass(frozen=True)
class PeerReply:
    """What a peer answered: its task (COMPLETED, or waiting in INPUT_REQUIRED or
    AUTH_REQUIRED) or its single message."""

    peer: str
    task: pb.Task | None = None
    message: pb.Message | None = None

    @property
    def state(self) -> pb.TaskState:
        """The task's state; TASK_STATE_UNSPECIFIED for a message."""
        return self.task.status.state if self.task is not None else pb.TASK_STATE_UNSPECIFIED

    @property
    def text(self) -> str:
        """The text parts of the message, or of the task's artifacts (of its status message
        when it has no artifact text, as when it asks for input), joined by newlines."""
        if self.task is None:
            return _text(self.message.parts if self.message is not None else ())
        found = "\n".join(filter(None, (_text(a.parts) for a in self.task.artifacts)))
        return found or _text(self.task.status.message.parts)


def _text(parts: Sequence[pb.Part]) -> str:
    return "\n".join(part.text for part in parts if part.HasField("text"))


class Peer:
    """One peer of A2A_PEERS: its address, credentials, and the caller's trace on each call."""

    def __init__(self, name: str, address: str, credentials: Credentials,
                 pinned_jwks: str | None = None) -> None:
        self.name = name
        self.address = address
        self._credentials = credentials
        self._pinned_jwks = pinned_jwks  # a JWKS file: the card must be signed by its keys
        self.binding = _GRPC if urlsplit(address).scheme.startswith("grpc") else "HTTP"
        self._card: tuple[float, Any] | None = None

    async def client(self, *, streaming: bool = True) -> Client:
        """A new client of the official SDK (`a2a.client.Client`) for this peer: every call
        carries the credentials and this hop's `traceparent`. Close it (`async with`).
        Raises PeerError when the peer's agent card cannot be read."""
        load_sdk()
        from a2akit.peers._transport import client_for

        card = None if self.binding == _GRPC else await self._http_card()
        return client_for(self, card, streaming=streaming)

    async def call(self, content: Content, *, context_id: str = "", task_id: str = "",
                   timeout: float | None = None) -> PeerReply:
        """Send `content` (text, parts or a whole message) and wait until the peer's task is
        done or waits for input. `context_id` and `task_id` continue a conversation or a
        task with the peer. Raises PeerError naming the peer when no answer comes (within
        `timeout` seconds, if given), PeerTaskError when its task ends unsuccessfully."""
        message = _message(content, context_id=context_id, task_id=task_id)
        log.info("calling A2A peer %s (%s, %s)", self.name, self.binding,
                 self._credentials.scheme(self.name))
        try:
            async with asyncio.timeout(timeout):
                reply = await self._call(message)
        except TimeoutError as exc:
            what = "did not answer in time" if timeout is None else (
                f"did not finish within {timeout:g} s")
            raise PeerError(self.name, what) from exc
        if reply.task is not None and reply.state in _UNSUCCESSFUL:
            raise PeerTaskError(self.name, reply.task)
        return reply

    async def headers(self) -> dict[str, str]:
        """The headers (gRPC metadata) of a call made now: credentials and `traceparent`."""
        headers = await self._credentials.headers(self.name)
        traceparent = trace.current_traceparent()
        if traceparent:
            headers[trace.HEADER] = traceparent
        return headers

    async def _call(self, message: pb.Message) -> PeerReply:
        async with await self.client(streaming=False) as client:
            try:
                return await _send(client, self.name, message)
            except (PeerError, asyncio.CancelledError, TimeoutError):
                raise
            except Exception as exc:
                what = describe(exc)
                log.warning("A2A peer %s %s: %s", self.name, what, type(exc).__name__)
                raise PeerError(self.name, what) from exc

    async def _http_card(self) -> Any:
        """The peer's agent card (an SDK AgentCard, which is the kit's pb.AgentCard), kept
        for CARD_MAX_AGE_SECONDS. Raises PeerError when it cannot be read."""
        if self._card is not None and time.monotonic() - self._card[0] < CARD_MAX_AGE_SECONDS:
            return self._card[1]
        import httpx
        from a2a.client import A2ACardResolver

        parts = urlsplit(self.address)
        # A path to a .json file is the card itself; anything else is the agent's base URL.
        is_card = parts.path.endswith(".json")
        base = f"{parts.scheme}://{parts.netloc}" if is_card else self.address.rstrip("/")
        try:
            async with httpx.AsyncClient(timeout=10.0) as http:
                card = await A2ACardResolver(http, base).get_agent_card(
                    relative_card_path=parts.path if is_card else None)
        except Exception as exc:
            what = describe(exc)
            log.warning("A2A peer %s %s: %s", self.name, what, type(exc).__name__)
            raise PeerError(self.name, what) from exc
        if self._pinned_jwks is not None:
            verify_card(self.name, card, self._pinned_jwks)
        self._card = (time.monotonic(), card)
        return card


def verify_card(name: str, card: Any, jwks_path: str) -> None:
    """The peer's card must carry a signature by a key of its pinned JWKS (keys from the file,
    never from the card's `jku`: spec PR #2099). Raises PeerError when none verifies."""
    import json

    from a2a.utils.signing import SignatureVerificationError, create_signature_verifier
    from jwt import PyJWK

    keys = {key.get("kid"): key for key in json.loads(Path(jwks_path).read_text())["keys"]}

    def pinned(kid: str | None, jku: str | None) -> PyJWK:
        if kid not in keys:
            raise SignatureVerificationError(f"no pinned key {kid!r}")
        return PyJWK(keys[kid])

    try:
        create_signature_verifier(pinned, ["ES256", "RS256", "PS256"])(card)
    except SignatureVerificationError as exc:
        log.warning("A2A peer %s: its agent card is not signed by a pinned key (%s)", name, exc)
        raise PeerError(name, "has an agent card not signed by its pinned keys "
                              f"({ENV.PEER_JWKS})") from exc


async def _send(client: Client, name: str, message: pb.Message) -> PeerReply:
    from a2a.client import ClientCallContext

    context = ClientCallContext()
    answer: pb.StreamResponse | None = None
    async for event in client.send_message(pb.SendMessageRequest(message=message),
                                           context=context):
        answer = event
    if answer is None or not (answer.HasField("task") or answer.HasField("message")):
        raise PeerError(name, "answered with neither a task nor a message")
    if answer.HasField("message"):
        return PeerReply(name, message=answer.message)
    task = answer.task
    wait = _POLL_FIRST_SECONDS
    # The blocking call returns at the peer's budget even when its agent goes on.
    while not ends_stream(task.status.state):
        await asyncio.sleep(wait)
        wait = min(wait * 2, _POLL_MAX_SECONDS)
        task = await client.get_task(pb.GetTaskRequest(id=task.id), context=context)
    log.info("A2A peer %s answered: task %s %s", name, task.id,
             pb.TaskState.Name(task.status.state))
    return PeerReply(name, task=task)


def _message(content: Content, *, context_id: str, task_id: str) -> pb.Message:
    if isinstance(content, pb.Message):
        message = pb.Message()
        message.CopyFrom(content)
    else:
        parts = [pb.Part(text=content)] if isinstance(content, str) else list(content)
        message = pb.Message(parts=parts)
    message.message_id = message.message_id or new_id()
    message.role = pb.ROLE_USER
    message.context_id = context_id or message.context_id
    message.task_id = task_id or message.task_id
    return message


class Peers:
    """The peers of `settings`, by name. `secret` reads a secret by name (default: the
    agent's secrets, a2akit.agent_secrets)."""

    def __init__(self, settings: Settings, *, secret: SecretReader = read_secret,
                 clock: Callable[[], float] = time.monotonic) -> None:
        credentials = Credentials(settings, secret, clock=clock)
        self._peers = {name: Peer(name, address, credentials, settings.peer_jwks.get(name))
                       for name, address in settings.peers.items()}

    def peer(self, name: str) -> Peer:
        """The peer `name`. Raises UnknownPeerError naming A2A_PEERS when it is not there."""
        try:
            return self._peers[name]
        except KeyError:
            raise UnknownPeerError(name, self._peers) from None


_shared: Peers | None = None
_shared_lock = threading.Lock()


def _process_peers() -> Peers:
    """The process's peers, from the environment on first use (the entry point already
    refused bad settings at start)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = Peers(Settings.from_env())
        return _shared


def peer(name: str) -> Peer:
    """The peer `name` of A2A_PEERS. Raises UnknownPeerError (naming A2A_PEERS) when it is
    not configured."""
    return _process_peers().peer(name)


async def call_peer(name: str, content: Content, *, context_id: str = "", task_id: str = "",
                    timeout: float | None = None) -> PeerReply:
    """`peer(name).call(content, ...)`: send `content` to the peer `name` and wait for its
    answer. Raises UnknownPeerError, PeerError, PeerTaskError (all AgentFailures: uncaught,
    the task ends FAILED with their message)."""
    return await peer(name).call(content, context_id=context_id, task_id=task_id,
                                 timeout=timeout)
