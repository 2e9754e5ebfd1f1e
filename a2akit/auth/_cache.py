"""A value loaded by a blocking fetch (a key set, a list of key hashes), kept for a bounded
time and shared by every thread and event loop of the process.

Schemes read `current()` on the event loop: it never blocks. Only when that gives nothing do
they call `get()` or `refresh()` through `asyncio.to_thread`, so a slow fetch holds a worker
thread, never the loop. One lock serialises the loads: callers that queued behind a load find
its result and do not fetch again. A load is attempted at most once per `min_interval`
(refreshes for unknown key ids, retries after a failure), so no caller can make the kit hammer
an issuer or a secret store.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["Reloading", "SourceError"]

log = logging.getLogger("a2akit.auth")

T = TypeVar("T")


class SourceError(Exception):
    """A load failed (unreachable, timed out, refused, malformed). The message names the
    source and the failure; it never carries a credential or a stored secret."""


class Reloading(Generic[T]):
    def __init__(self, load: Callable[[], T], *, name: str, max_age: float,
                 min_interval: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._load = load
        self._name = name
        self._max_age = max_age
        self._min_interval = min_interval
        self._clock = clock
        self._lock = threading.Lock()
        # (value, loaded at): replaced as a whole, so current() reads it without the lock.
        self._state: tuple[T, float] | None = None
        self._attempted: float | None = None

    def current(self) -> T | None:
        """The value while it is younger than `max_age`; never blocks."""
        state = self._state
        if state is None or self._clock() - state[1] >= self._max_age:
            return None
        return state[0]

    def get(self) -> T:
        """The current value, loading it when there is none or it is too old. Blocking.

        Raises SourceError when the load fails, or when a load failed less than
        `min_interval` ago (the next caller after that tries again)."""
        with self._lock:
            value = self.current()
            if value is not None:
                return value
            if not self._may_attempt():
                raise SourceError(f"{self._name}: the last load failed; retrying later")
            return self._attempt()

    def refresh(self, seen: T) -> T:
        """Load again because `seen` lacks something (an unknown key id): at most once per
        `min_interval`, and not at all when another caller already replaced `seen`. A failed
        load keeps `seen`. Blocking."""
        with self._lock:
            state = self._state
            if state is not None and state[0] is not seen:
                return state[0]
            if not self._may_attempt():
                return seen
            try:
                return self._attempt()
            except SourceError:
                return seen

    def _may_attempt(self) -> bool:
        return self._attempted is None or self._clock() - self._attempted >= self._min_interval

    def _attempt(self) -> T:
        self._attempted = self._clock()
        try:
            value = self._load()
        except SourceError as exc:
            log.warning("could not load %s: %s", self._name, exc)
            raise
        self._state = (value, self._clock())
        log.info("loaded %s", self._name)
        return value
