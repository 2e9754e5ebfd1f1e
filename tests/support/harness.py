"""The core as binding tests use it: Operations over a fresh MemoryStore, and the gRPC binding
on a loopback port in front of it.

`grpc_server` is the only place a test starts the gRPC binding in process; a change to how
`serve()` is called or what it returns is made here.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc

from a2akit.agent import Agent, RequestContext, TaskHandle
from a2akit.examples.echo import EchoAgent
from a2akit.operations import Operations
from a2akit.runtime import build_operations
from a2akit.settings import STREAM, Settings
from a2akit.store.memory import MemoryStore
from grpc_service.generated import a2a_pb2_grpc
from grpc_service.server import RunningServer, serve

__all__ = [
    "ANON",
    "GrpcHarness",
    "SlowOrEcho",
    "Start",
    "background_loop",
    "end_tasks",
    "grpc_server",
    "memory_operations",
]

# What most binding tests run with: anyone may call, the push-config operations on, and
# nobody delivering in this process (tests/push turns delivery on where it is the subject).
ANON = Settings(allow_anonymous=True, push_notifications=True, push_delivery=STREAM)


def memory_operations(agent: Agent | None = None, settings: Settings = ANON) -> Operations:
    """The core over a new MemoryStore, running `agent` (an echo agent if none)."""
    return build_operations(settings, store=MemoryStore(),
                            agent=agent if agent is not None else EchoAgent())


class SlowOrEcho:
    """Echoes and completes, except for "slow": works until canceled."""

    name = "Slow or echo"

    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        if context.text == "slow":
            await task.working("waiting")
            for _ in range(600):
                await asyncio.sleep(0.05)
        await task.add_artifact(context.text, name="echo")
        await task.complete()


@dataclasses.dataclass(frozen=True)
class GrpcHarness:
    server: RunningServer
    port: int
    health: Any  # the health servicer: enter_graceful_shutdown() reports NOT_SERVING
    channel: grpc.aio.Channel
    stub: a2a_pb2_grpc.A2AServiceStub
    ops: Operations


# The `start` fixture of tests/grpc: start(agent=None, **settings) -> a running harness.
Start = Callable[..., Awaitable[GrpcHarness]]


@contextlib.asynccontextmanager
async def grpc_server(ops: Operations) -> AsyncIterator[GrpcHarness]:
    """The gRPC binding over `ops` on a free loopback port, with a connected stub; on exit the
    channel closes and the server stops without a grace period."""
    server = await serve(ops.settings, ops, port=0, host="127.0.0.1")
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{server.port}")
    stub = a2a_pb2_grpc.A2AServiceStub(channel)  # type: ignore[no-untyped-call]
    try:
        yield GrpcHarness(server, server.port, server.health, channel, stub, ops)
    finally:
        await channel.close()
        await server.shutdown(0)


# --- a loop for the servers that synchronous tests call --------------------------------------
#
# grpc.aio delivers each completion to the loop its call or server was made on, from one
# process-wide poller. A server stopped on a loop that is then closed can still get a last
# completion, which is then raised ("Event loop is closed") in whatever loop runs next: another
# test's. So every gRPC server of the suite lives on a loop that is never closed: the session's
# (tests/conftest.py) for async tests, this one for sync tests that call a server in a thread.

_BACKGROUND: list[asyncio.AbstractEventLoop] = []
_BACKGROUND_LOCK = threading.Lock()


def background_loop() -> asyncio.AbstractEventLoop:
    """The one event loop that runs, on a daemon thread, the servers synchronous tests call."""
    with _BACKGROUND_LOCK:
        if not _BACKGROUND:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, daemon=True,
                             name="test-background-loop").start()
            _BACKGROUND.append(loop)
        return _BACKGROUND[0]


async def end_tasks(keep: set[asyncio.Task[Any]] | frozenset[asyncio.Task[Any]] = frozenset()
                    ) -> None:
    """Cancel and await every task of the running loop but the caller's and `keep`: what a
    test left running (an agent still working), as closing a loop of its own would."""
    left = asyncio.all_tasks() - {asyncio.current_task(), *keep}
    for task in left:
        task.cancel()
    await asyncio.gather(*left, return_exceptions=True)
