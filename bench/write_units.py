"""What a message costs on DynamoDB, by AWS's published billing rules (issue 39).

    .venv/bin/python bench/write_units.py [--against CHECKOUT] [--json]

Runs five workloads through the kit's operations (the agent, the runner, the writer, the
store: what SendMessage does on Lambda) on DynamoDB Local, and prices every call the store
makes from its request, hooked at the client's edge (boto3's `provide-client-params` and
`after-call` events), by the rules bench/_units.py states: writes by the item's size before
and after, transactions twice, each index entry written; reads as DynamoDB Local reports them.

The workloads (one owner, the default settings, `EchoAgent`-like agents):

a. echo SendMessage, inline: the run's writes, the task's expiry step and its retirement
   from the counts once its retention is over (retention set to one second here);
b. the same in queue mode: the door's create, the worker's lease swap, its writes, the
   expiry (the queue is a list; the worker runs the job as `handlers.worker` would);
c. a streaming agent writing a 100 KB artifact in 200 chunks (one write each), then done;
d. ten status updates (nine WORKING with a short message, then COMPLETED) on a task that
   holds a 100 KB artifact (written before the meter starts);
e. a 20-turn conversation on one task (200-byte messages, a 200-byte reply each turn, the
   task waiting for input in between; the last turn completes it).

`--against CHECKOUT` runs the same workloads, in a subprocess, on another checkout of the
kit (its `a2akit` first on sys.path: e.g. `git worktree add /tmp/wcu-before <commit>`) on
the same DynamoDB Local, and prints both side by side.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _units import Meter, Pricer

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

LABELS = {
    "a": "(a) echo SendMessage, inline (+ expiry, retirement)",
    "b": "(b) echo SendMessage, queue mode (+ worker, expiry, retirement)",
    "c": "(c) streaming agent: 100 KB artifact in 200 chunks",
    "d": "(d) 10 status updates on a task holding 100 KB",
    "e": "(e) 20-turn conversation on one task (all 20 turns)",
}
TARGETS = {"a": 10, "b": 18, "c": 600, "d": 1200}


# --- the workloads ---------------------------------------------------------------------------


def _text(size: int, seed: int) -> str:
    """`size` bytes of words that do not repeat (no workload compresses)."""
    import random

    rng = random.Random(seed)
    words: list[str] = []
    length = 0
    while length < size:
        word = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
        words.append(word)
        length += len(word) + 1
    return " ".join(words)[:size]


async def workloads(endpoint: str, table_name: str) -> dict[str, dict[str, Any]]:
    from a2akit.auth import Identity
    from a2akit.caller import Call
    from a2akit.execution.executor import QueueExecutor
    from a2akit.execution.worker import Worker
    from a2akit.generated import a2a_pb2 as pb
    from a2akit.runtime import build_operations
    from a2akit.settings import Settings
    from a2akit.store import table
    from a2akit.store.dynamodb import DynamoDBStore, make_client
    from tests.support.messages import send_request

    client = make_client(endpoint, "us-east-1")
    peek = make_client(endpoint, "us-east-1")
    kwargs = table.create_table_kwargs(table_name)
    client.create_table(**kwargs)
    client.get_waiter("table_exists").wait(TableName=table_name)
    meter = Meter(client, Pricer(kwargs, peek, table_name))
    # Retention of one second: the retirement from the counts is due right after the run.
    store = DynamoDBStore(table_name, client, retention_days=1 / 86400)
    results: dict[str, dict[str, Any]] = {}

    def take(name: str, messages: int = 1) -> None:
        results[name] = {"wru": meter.wru + meter.index_wru, "table_wru": meter.wru,
                         "index_wru": meter.index_wru, "rru": meter.rru,
                         "calls": dict(sorted(meter.calls.items())), "messages": messages}
        meter.reset()

    async def sweep() -> None:
        """The retirement once the retention passed: the writes it makes for this task (the
        sweeper's shard queries are its own, per sweep, not per message)."""
        await asyncio.sleep(2.1)
        meter.writes_only = True
        await store.expire_finished(100)
        meter.writes_only = False

    class Echo:
        async def execute(self, context: Any, task: Any) -> None:
            await task.add_artifact(context.text, name="echo")
            await task.complete()

    class Stream:
        async def execute(self, context: Any, task: Any) -> None:
            await task.working()
            await asyncio.sleep(0.15)
            artifact = None
            for i in range(200):
                artifact = await task.add_artifact(_text(512, i), artifact_id=artifact,
                                                   append=i > 0, last_chunk=i == 199)
                # A 30-second agent: each chunk is one write (none in flight meanwhile).
                await asyncio.sleep(0.15)
            await task.complete()

    gate = asyncio.Event()
    holding = asyncio.Event()

    class Statuses:
        async def execute(self, context: Any, task: Any) -> None:
            await task.add_artifact(_text(100 * 1024, 7), name="report")
            await asyncio.sleep(0.05)
            holding.set()
            await gate.wait()
            for i in range(9):
                await task.working(f"step {i}")
                await asyncio.sleep(0.15)
            await task.complete("done")

    class Talk:
        async def execute(self, context: Any, task: Any) -> None:
            before = context.task.history if context.task is not None else []
            turns = sum(1 for m in before if m.role == pb.ROLE_USER) + 1
            reply = _text(200, turns)
            if turns >= 20:
                await task.complete(reply)
            else:
                await task.ask_input(reply)

    call = Call(Identity("bench-owner", "test"))
    settings = Settings(table=table_name)

    # (a) echo, inline
    ops = build_operations(settings, store=store, agent=Echo())
    meter.reset()
    await ops.send_message(send_request("hello"), call)
    await sweep()
    take("a")

    # (b) echo, queue mode
    jobs: list[Any] = []

    class ListQueue:
        async def send(self, job: Any) -> None:
            jobs.append(job)

    ops.executor = QueueExecutor(settings, store, ListQueue())
    meter.reset()
    await ops.send_message(send_request("hello", immediately=True), call)
    await Worker(settings, store, Echo()).run_job(jobs.pop(), 30.0)
    await asyncio.sleep(0.2)
    await sweep()
    take("b")

    # (c) the streaming agent
    ops = build_operations(settings, store=store, agent=Stream())
    meter.reset()
    await ops.send_message(send_request("write"), call)
    await sweep()
    take("c")

    # (d) ten status updates on a task holding 100 KB
    ops = build_operations(settings, store=store, agent=Statuses())
    sent = asyncio.ensure_future(ops.send_message(send_request("report"), call))
    await holding.wait()
    await asyncio.sleep(0.2)
    meter.reset()
    gate.set()
    await sent
    await sweep()
    take("d")

    # (e) a 20-turn conversation
    ops = build_operations(settings, store=store, agent=Talk())
    meter.reset()
    reply = await ops.send_message(send_request(_text(200, 100)), call)
    task_id = reply.task.id
    for turn in range(1, 20):
        request = send_request(_text(200, 100 + turn))
        request.message.task_id = task_id
        request.message.context_id = reply.task.context_id
        await ops.send_message(request, call)
    await sweep()
    take("e", 20)
    client.close()
    peek.close()
    return results


# --- printing --------------------------------------------------------------------------------


def _cell(result: dict[str, Any] | None) -> str:
    if result is None:
        return ""
    return f"{result['wru']:,.0f} ({result['table_wru']:,.0f} + {result['index_wru']:,.0f})"


def table_text(runs: list[tuple[str, dict[str, dict[str, Any]]]]) -> str:
    head = "| workload | " + " | ".join(
        f"{name}: WRU (table + index) | {name}: RCU" for name, _ in runs) + " | target |"
    rule = "|---|" + "---:|---:|" * len(runs) + "---:|"
    lines = [head, rule]
    for key, label in LABELS.items():
        cells = []
        for _, results in runs:
            result = results.get(key)
            cells += [_cell(result), f"{result['rru']:,.1f}" if result else ""]
        target = TARGETS.get(key)
        lines.append(f"| {label} | " + " | ".join(cells)
                     + f" | {'' if target is None else f'<= {target:,}'} |")
    last = runs[-1][1]
    if "c" in last:
        lines.append("")
        lines.append("(c) per KB of content: " + ", ".join(
            f"{name} {results['c']['wru'] / 100:,.1f} WRU" for name, results in runs
            if "c" in results))
    if "e" in last:
        lines.append("(e) per turn: " + ", ".join(
            f"{name} {results['e']['wru'] / 20:,.1f} WRU" for name, results in runs
            if "e" in results))
    lines.append("")
    for name, results in runs:
        lines.append(f"calls, {name}: " + "; ".join(
            f"{key} {results[key]['calls']}" for key in LABELS if key in results))
    return "\n".join(lines)


def measure(endpoint: str, table_name: str) -> dict[str, dict[str, Any]]:
    import contextlib
    import logging

    logging.disable(logging.WARNING)
    with contextlib.redirect_stdout(sys.stderr):  # the kit's metrics lines
        return asyncio.run(workloads(endpoint, table_name))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", help="another checkout of the kit, measured first")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--endpoint", help="a running DynamoDB Local (else one is started)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from scripts.dynamodb_local import dynamodb_local, set_dummy_credentials

    set_dummy_credentials()
    stamp = f"{int(time.time())}-{os.getpid()}"
    with (dynamodb_local() if args.endpoint is None else _given(args.endpoint)) as url:
        runs: list[tuple[str, dict[str, dict[str, Any]]]] = []
        if args.against:
            checkout = Path(args.against).resolve()
            env = {**os.environ, "PYTHONPATH": str(checkout)}
            out = subprocess.run(
                [sys.executable, "-c", _CHILD, str(HERE), url, f"before-{stamp}"],
                env=env, cwd=checkout, check=True, capture_output=True, text=True).stdout
            runs.append((f"before ({_commit(checkout)})", json.loads(out.splitlines()[-1])))
        runs.append((f"after ({_commit(ROOT)})" if args.against else "this checkout",
                     measure(url, f"after-{stamp}")))
    if args.json:
        print(json.dumps(dict(runs)))
    else:
        print(time.strftime("%Y-%m-%d"))
        print(table_text(runs))


# The child: the other checkout's kit first on sys.path, this file's workloads.
_CHILD = """
import json, sys
sys.path.insert(0, '.')
sys.path.insert(1, sys.argv[1])
import write_units
print(json.dumps(write_units.measure(sys.argv[2], sys.argv[3])))
"""


def _commit(checkout: Path) -> str:
    named = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"],
                           capture_output=True, text=True).stdout.strip()
    return named or checkout.name


class _given:
    def __init__(self, url: str) -> None:
        self.url = url

    def __enter__(self) -> str:
        return self.url

    def __exit__(self, *_: Any) -> None:
        return None


if __name__ == "__main__":
    main()
