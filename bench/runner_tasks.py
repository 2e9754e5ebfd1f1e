"""The runner's asyncio machinery per SendMessage: echo agent, embedded store, through Operations.

    .venv/bin/python bench/runner_tasks.py count [--calls 200]
    .venv/bin/python bench/runner_tasks.py loop [--calls 300] [--warmup 100]

`count` wraps the running loop's `create_task`, `call_soon`, `call_at` and `call_later` and
prints, per call, how many tasks were created and how many callbacks scheduled (timers
included), for a blocking SendMessage, a streaming one (read to its end), a blocking one with
a platform deadline (as on Lambda: the run gets a deadline timer) and one with
returnImmediately. `loop` only makes the calls, for `valgrind --tool=callgrind`: instructions
per call = (total - total of a run with --calls 0) / calls.

Run with PYTHONPATH set to another checkout to measure that one (a baseline).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from a2akit.caller import Call
from a2akit.examples.echo import EchoAgent
from a2akit.operations import OPERATIONS, Operations
from a2akit.runtime import build_operations
from a2akit.settings import Settings
from a2akit.store.memory import MemoryStore
from tests.support.messages import send_request


def _ops() -> Operations:
    logging.getLogger("a2akit").setLevel(logging.ERROR)  # the anonymous-access warning
    return build_operations(Settings(allow_anonymous=True), store=MemoryStore(),
                            agent=EchoAgent())


async def _call(ops: Operations, call: Call, mode: str) -> None:
    if mode == "stream":
        events = await ops.stream(OPERATIONS["SendStreamingMessage"], send_request(), call)
        async for _ in events:
            pass
        return
    request = send_request(immediately=mode == "immediately")
    response = await ops.unary(OPERATIONS["SendMessage"], request, call)
    assert response.HasField("task"), response


class _Headers:
    def getlist(self, key: str) -> list[str]:
        return ["1.0"] if key == "a2a-version" else []


async def _caller(ops: Operations, mode: str) -> Call:
    call = await ops.resolve_call(_Headers())
    if mode == "deadline":  # as on Lambda: the invocation ends in a minute
        call = dataclasses.replace(call, deadline=time.monotonic() + 60)
    return call


async def count(calls: int) -> None:
    loop = asyncio.get_running_loop()
    counts: Counter[str] = Counter()
    originals: dict[str, Any] = {}

    def wrap(name: str) -> None:
        original = originals[name] = getattr(loop, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            counts[name] += 1
            return original(*args, **kwargs)

        setattr(loop, name, counted)

    ops = _ops()
    for mode in ("blocking", "stream", "deadline", "immediately"):
        call = await _caller(ops, mode)
        for _ in range(20):  # warm-up, uncounted
            await _call(ops, call, mode)
        await asyncio.sleep(0.01)  # let the warm-up's runs end
        for name in ("create_task", "call_soon", "call_at", "call_later"):
            wrap(name)
        for _ in range(calls):
            await _call(ops, call, mode)
        await asyncio.sleep(0.01)  # count what a run does after the call answered
        for name, original in originals.items():
            setattr(loop, name, original)
        # call_later goes through call_at: count a timer once.
        callbacks = counts["call_soon"] + counts["call_at"]
        print(f"{mode:12} tasks/call {counts['create_task'] / calls:5.2f}   "
              f"callbacks/call {callbacks / calls:5.2f}   "
              f"(call_soon {counts['call_soon'] / calls:.2f}, "
              f"timers {counts['call_at'] / calls:.2f})")
        counts.clear()


async def run_loop(calls: int, warmup: int) -> None:
    ops = _ops()
    call = await _caller(ops, "blocking")
    for _ in range(warmup):
        await _call(ops, call, "blocking")
    for _ in range(calls):
        await _call(ops, call, "blocking")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["count", "loop"])
    parser.add_argument("--calls", type=int, default=None)
    parser.add_argument("--warmup", type=int, default=100)
    args = parser.parse_args()
    if args.mode == "count":
        asyncio.run(count(args.calls or 200))
    else:
        asyncio.run(run_loop(300 if args.calls is None else args.calls, args.warmup))


if __name__ == "__main__":
    main()
