"""What an adapter keeps per A2A context in this process: the framework's conversation object
(a Strands agent or its snapshot, an OpenAI Agents SDK session), one run at a time.

Two tasks of one context are two turns of one conversation: the second waits for the first,
as it would in a chat, so neither reads the conversation half written. Tasks of different
contexts run side by side. The least recently used context is dropped past `limit`, so a
long-lived container does not grow without bound; a later message on it starts afresh, as it
would after a restart (the adapters document where the conversation outlives the process).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
from collections.abc import AsyncIterator, Callable
from typing import Generic, TypeVar

__all__ = ["DEFAULT_CONTEXTS", "ContextSlot", "ContextStates"]

DEFAULT_CONTEXTS = 1000
T = TypeVar("T")


@dataclasses.dataclass
class ContextSlot(Generic[T]):
    value: T  # replaceable: an adapter may keep a new value (a snapshot) after a turn
    lock: asyncio.Lock = dataclasses.field(default_factory=asyncio.Lock)


class ContextStates(Generic[T]):
    """A value per context id, made by `make(context_id)` on first use."""

    def __init__(self, make: Callable[[str], T], *, limit: int = DEFAULT_CONTEXTS) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, not {limit}")
        self._make = make
        self._limit = limit
        self._slots: collections.OrderedDict[str, ContextSlot[T]] = collections.OrderedDict()

    def __len__(self) -> int:
        return len(self._slots)

    @contextlib.asynccontextmanager
    async def hold(self, context_id: str) -> AsyncIterator[ContextSlot[T]]:
        """The context's slot, once no other run holds it."""
        slot = self._slots.get(context_id)
        if slot is None:
            slot = self._slots[context_id] = ContextSlot(self._make(context_id))
            while len(self._slots) > self._limit:
                self._slots.popitem(last=False)
        else:
            self._slots.move_to_end(context_id)
        async with slot.lock:
            yield slot
