"""Optimistic concurrency, one place: every conditional task write retries here.

A writer reads the task, folds its events onto what it read and writes conditionally on the
version it read. When another writer got there first the store raises VersionConflictError;
the attempt is run again and re-reads (or re-folds) what changed. Both the runner and
CancelTask write this way, so a cancel and a working agent never lose each other's events.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from a2akit.store.base import VersionConflictError

__all__ = ["MAX_CONFLICT_RETRIES", "retry_on_conflict"]

MAX_CONFLICT_RETRIES = 20
T = TypeVar("T")


async def retry_on_conflict(attempt: Callable[[int], Awaitable[T]],
                            exhausted: Callable[[], Exception]) -> T:
    """Await `attempt(n)` (n = 0, 1, ...) until it does not raise VersionConflictError.

    Each attempt after the first must start from a fresh read. After MAX_CONFLICT_RETRIES
    conflicts, raise `exhausted()`: the task keeps changing faster than we can write."""
    for number in range(MAX_CONFLICT_RETRIES):
        try:
            return await attempt(number)
        except VersionConflictError:
            continue
    raise exhausted()
