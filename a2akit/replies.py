"""What a caller gets back, shaped the same on every binding: a task trimmed to the
requested history, a stream (the task, then its events until one closes it), and the
idempotency key that tells a repeated SendMessage from a new one."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import AsyncIterator, Sequence

from a2akit.errors import ContentTypeNotSupportedError
from a2akit.generated import a2a_pb2 as pb
from a2akit.states import closes_stream, is_terminal

__all__ = ["Events", "check_content_types", "media_matches", "request_claim", "single",
           "task_stream", "trim"]

Events = AsyncIterator[pb.StreamResponse]


def request_claim(request: pb.SendMessageRequest) -> str:
    """The idempotency key of a SendMessage as the client sent it: the message id plus a
    digest of the whole request (the message with its content, task and context ids, the
    configuration with its push config, the metadata). Only a true repeat has the same key
    and is a duplicate; another request under a used message id is the new request it is."""
    digest = hashlib.blake2b(request.SerializeToString(deterministic=True), digest_size=16)
    return (f"{request.message.message_id}#"
            f"{base64.urlsafe_b64encode(digest.digest()).decode()[:22]}")


def trim(task: pb.Task, history_length: int | None, *, artifacts: bool = True) -> pb.Task:
    """A copy for the caller: newest `history_length` messages, artifacts if asked."""
    out = pb.Task()
    out.CopyFrom(task)
    if history_length is not None and len(out.history) > history_length:
        kept = list(out.history)[len(out.history) - history_length:] if history_length else []
        del out.history[:]
        out.history.extend(kept)
    if not artifacts:
        del out.artifacts[:]
    return out


def media_matches(media: str, mode: str) -> bool:
    """Whether a part's media type is one an accepted mode (`type/*`, `*/*`) covers."""
    media = media.split(";", 1)[0].strip().lower()
    mode = mode.lower()
    if mode in ("*/*", media):
        return True
    return mode.endswith("/*") and media.startswith(mode[:-1])


def check_content_types(message: pb.Message, accepted: Sequence[str]) -> None:
    """Refuse a message with a part of a media type none of the agent's input modes covers."""
    for part in message.parts:
        media = part.media_type
        if media and not any(media_matches(media, mode) for mode in accepted):
            raise ContentTypeNotSupportedError(
                f"This agent does not accept {media}", metadata={"mediaType": media})


async def single(event: pb.StreamResponse) -> Events:
    """A stream of one event (an agent that answered with a message)."""
    yield event


async def task_stream(first: pb.Task, events: Events, history: int | None) -> Events:
    """A stream: the task, then its events until one closes the stream (or they end)."""
    yield pb.StreamResponse(task=trim(first, history))
    if is_terminal(first.status.state):
        return
    async for event in events:
        yield event
        if closes_stream(event):
            return
