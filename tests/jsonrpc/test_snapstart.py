"""The Lambda handler under SnapStart: the restore hook is registered and refreshes the store."""

from __future__ import annotations

import asyncio
import importlib
import sys
import types
from collections.abc import Callable, Iterator

import pytest

from a2akit.store.memory import MemoryStore


class _RestoringStore(MemoryStore):
    def __init__(self) -> None:
        super().__init__()
        self.restored = 0

    def after_restore(self) -> None:
        self.restored += 1


@pytest.fixture
def hooks(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Callable[[], None]]]:
    """Lambda's `snapshot_restore_py`, as the Python 3.12+ runtime provides it."""
    registered: list[Callable[[], None]] = []
    runtime = types.ModuleType("snapshot_restore_py")
    runtime.register_after_restore = registered.append  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "snapshot_restore_py", runtime)
    monkeypatch.delitem(sys.modules, "handlers.jsonrpc", raising=False)
    # Mangum sets up an event loop when it has none: give it one that is closed after.
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    yield registered
    sys.modules.pop("handlers.jsonrpc", None)
    asyncio.set_event_loop(None)
    loop.close()


def test_the_handler_registers_a_restore_hook(hooks: list[Callable[[], None]]) -> None:
    module = importlib.import_module("handlers.jsonrpc")
    assert len(hooks) == 1
    store = _RestoringStore()
    module.operations.store = store
    hooks[0]()
    assert store.restored == 1
