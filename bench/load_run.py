"""A load run on this machine: the highest echo rate the kit's queue mode sustains (issue 39).

    .venv/bin/python bench/load_run.py [--seconds 60] [--ramp-seconds 15] [--workers 2]
                                       [--rates 5,10,15,...] [--units-seconds 15] [--json]

Starts, on loopback, every part as its own process: DynamoDB Local
(scripts/dynamodb_local.py), a moto server for SQS (a queue and its dead-letter queue, as the
stack makes them), the door (`python -m handlers.stream`, the app Lambda runs, in queue mode,
anonymous callers allowed, the echo agent; it creates the table on first use, as against any
emulator) and `--workers` queue workers (`python -m scripts.run_worker`: one message at a
time, as one Lambda worker).

An async client (httpx, at most `--connections` calls in flight) sends echo SendMessage with
`returnImmediately` at a target rate (messages/s, open loop) for a step. A step holds when
fewer than 1 % of the calls fail (not 200, or a JSON-RPC error), the client sent at least
95 % of the target, the queue held at most two seconds of messages when the step ended, and
every task the step created was COMPLETED within `--grace` seconds after (ListTasks' totalSize
of the COMPLETED tasks; one owner, anonymous). Each step starts on an empty queue (moto keeps a
queue as a list: a backlog slows its every call). Per step: calls, errors, p50/p99 of the door's
answer, tasks completed, queue backlog at the step's end, and the CPU each process used
(per cent of one core, from /proc/PID/stat; "other work" is the rest of the machine's busy
time, /proc/stat: the cores are shared).

Two stacks, one after the other (each warmed up first, unreported):

1. **units**: `--units-rate` for `--units-seconds` with the door and the workers reaching
   DynamoDB Local through a recording proxy (bench/_meter_proxy.py, its own process) that
   prices each call by bench/_units.py's rules (`Pricer`, `Meter`): a consistent GetItem
   of each key a write touches before and after it (straight to DynamoDB Local), item and index
   units from the sizes, transactions twice; reads are DynamoDB Local's ConsumedCapacity (the
   proxy asks for it). Units per message = the step's units, once its tasks are done (up to
   60 s after), / the tasks it completed. Two
   writes racing on a shared item (an owner's count item) may be priced from each other's
   sizes: those items are far below 1 KB, so the units do not change.
2. **ramp** then **final**, without the proxy (its pricing reads and forwarding would take
   the machine's CPU): `--rates` for `--ramp-seconds` each, stopping at the first step that
   does not hold; the highest that held then runs for `--seconds`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

TABLE = "a2a-load-run"
HEADERS = {"content-type": "application/json", "a2a-version": "1.0"}
CALL_TIMEOUT = 10.0
TICK = os.sysconf("SC_CLK_TCK")


# --- CPU per process ---------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far (its waited-for children not included)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


def machine_busy() -> tuple[float, float]:
    """(busy, all) CPU seconds of the whole machine so far, every core (/proc/stat)."""
    values = [int(each) for each in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    idle = values[3] + values[4]
    return (sum(values[:8]) - idle) / TICK, sum(values[:8]) / TICK


def children_named(text: str) -> list[int]:
    """This process's children whose command line holds `text` (DynamoDB Local's java)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
        except (OSError, IndexError, ValueError):
            continue
        if ppid == os.getpid() and text in cmdline:
            found.append(int(entry.name))
    return found


# --- the stack -----------------------------------------------------------------------------------


class Stack:
    """The processes of one run, and how to read them."""

    def __init__(self, pids: dict[str, list[int]], door: str, sqs: Any, queue: str,
                 meter: str | None) -> None:
        self.pids = pids
        self.door = door
        self.sqs = sqs
        self.queue = queue
        self.meter = meter

    def cpu(self) -> dict[str, float]:
        return {name: sum(cpu_seconds(pid) for pid in pids) for name, pids in self.pids.items()}

    def backlog(self) -> int:
        attributes = self.sqs.get_queue_attributes(QueueUrl=self.queue, AttributeNames=[
            "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"])
        return sum(int(value) for value in attributes["Attributes"].values())

    def units(self) -> dict[str, Any]:
        if self.meter is None:
            return {"calls": {}, "wru": 0.0, "index_wru": 0.0, "rru": 0.0}
        with urllib_open(self.meter + "/__meter") as answer:
            result: dict[str, Any] = json.loads(answer.read())
            return result


def urllib_open(url: str) -> Any:
    import urllib.request

    return urllib.request.urlopen(url, timeout=10)


@contextlib.contextmanager
def stack(workers: int, meter: bool, logs: Path) -> Iterator[Stack]:
    from scripts.dynamodb_local import CREDENTIALS, dynamodb_local
    from tests.execution.sqs import make_queues
    from tests.support.moto import client as aws_client
    from tests.support.processes import free_port, python_env, running, wait_for_output

    with contextlib.ExitStack() as stack:
        ddb = stack.enter_context(dynamodb_local())
        java = children_named("DynamoDBLocal.jar")
        moto_port = free_port()
        moto = stack.enter_context(running(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(moto_port)],
            ports=[moto_port], log=logs / "moto.log", timeout=60))
        moto_url = f"http://127.0.0.1:{moto_port}"
        sqs = aws_client("sqs", moto_url)
        stack.callback(sqs.close)
        queue, _ = make_queues(sqs, visibility_seconds=30)
        pids: dict[str, list[int]] = {"DynamoDB Local": java, "moto (SQS)": [moto.pid]}
        endpoint = ddb
        meter_url = None
        if meter:
            port = free_port()
            process = stack.enter_context(running(
                [sys.executable, str(HERE / "_meter_proxy.py"), ddb, str(port), TABLE],
                ports=[port], env={**os.environ, **CREDENTIALS}, log=logs / "proxy.log"))
            endpoint = meter_url = f"http://127.0.0.1:{port}"
            pids["meter proxy"] = [process.pid]
        door_port = free_port()
        env = python_env(**CREDENTIALS, A2A_EXECUTION="queue", A2A_TABLE=TABLE,
                         A2A_QUEUE_URL=queue, AWS_ENDPOINT_URL_DYNAMODB=endpoint,
                         AWS_ENDPOINT_URL_SQS=moto_url, A2A_ALLOW_ANONYMOUS="true",
                         PORT=str(door_port),
                         A2A_LOG_LEVEL=os.environ.get("A2A_LOG_LEVEL", "WARNING"))
        env.pop("AWS_PROFILE", None)
        door = stack.enter_context(running([sys.executable, "-m", "handlers.stream"],
                                           ports=[door_port], env=env, log=logs / "door.log",
                                           timeout=60))
        pids["door"] = [door.pid]
        pids["workers"] = []
        for n in range(workers):
            log = logs / f"worker-{n}.log"
            process = stack.enter_context(running(
                [sys.executable, "-m", "scripts.run_worker"], ports=[], env=env, log=log))
            wait_for_output(log, "worker polling", process, timeout=60)
            pids["workers"].append(process.pid)
        yield Stack(pids, f"http://127.0.0.1:{door_port}/", sqs, queue, meter_url)


# --- the client ----------------------------------------------------------------------------------


def send_body(n: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": n, "method": "SendMessage", "params": {
        "message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                    "parts": [{"text": f"load {n}"}]},
        "configuration": {"returnImmediately": True}}}


async def completed(http: Any, url: str) -> int:
    answer = (await http.post(url, headers=HEADERS, json={
        "jsonrpc": "2.0", "id": 0, "method": "ListTasks",
        "params": {"status": "TASK_STATE_COMPLETED", "pageSize": 1}})).json()
    return int(answer["result"].get("totalSize", 0))


async def step(run: Stack, rate: float, seconds: float, connections: int, grace: float
               ) -> dict[str, Any]:
    import httpx

    # Each step starts on an empty queue: moto's queue is a list, a backlog slows every call.
    waited = time.perf_counter()
    while run.backlog() and time.perf_counter() - waited < 180:  # noqa: ASYNC110
        await asyncio.sleep(1)

    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    async with httpx.AsyncClient(timeout=CALL_TIMEOUT, limits=limits) as http:
        done_before = await completed(http, run.door)
        units_before = run.units()
        cpu_before, busy_before, me_before = run.cpu(), machine_busy(), cpu_seconds(os.getpid())
        latencies: list[float] = []
        errors: list[str] = []
        slots = asyncio.Semaphore(connections)

        async def one(n: int) -> None:
            started = time.perf_counter()
            try:
                response = await http.post(run.door, headers=HEADERS, json=send_body(n))
                answer = response.json() if response.status_code == 200 else {}
                if response.status_code != 200 or "error" in answer:
                    errors.append(f"{response.status_code} {answer.get('error')}")
                else:
                    latencies.append(time.perf_counter() - started)
            except (httpx.HTTPError, ValueError) as exc:
                errors.append(type(exc).__name__)
            finally:
                slots.release()

        calls = int(rate * seconds)
        pending = []
        start = time.perf_counter()
        for n in range(calls):
            delay = start + n / rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            await slots.acquire()
            pending.append(asyncio.ensure_future(one(n)))
        sent_seconds = time.perf_counter() - start
        await asyncio.gather(*pending)
        elapsed = time.perf_counter() - start
        cpu_after, busy_after = run.cpu(), machine_busy()
        me_after = cpu_seconds(os.getpid())
        backlog = run.backlog()
        drained = time.perf_counter()
        while run.backlog() and time.perf_counter() - drained < grace:  # noqa: ASYNC110
            await asyncio.sleep(0.25)
        await asyncio.sleep(0.5)  # the last job's writes after its message is deleted
        units_after = run.units()
        done = await completed(http, run.door) - done_before
    ok = len(latencies)
    cpu = {name: 100 * (cpu_after[name] - cpu_before[name]) / elapsed for name in cpu_after}
    cpu["load client"] = 100 * (me_after - me_before) / elapsed
    busy = 100 * (busy_after[0] - busy_before[0]) / elapsed
    cores = (busy_after[1] - busy_before[1]) / elapsed
    ordered = sorted(latencies)
    result: dict[str, Any] = {
        "rate": rate, "seconds": seconds, "calls": calls, "errors": len(errors),
        "error_kinds": sorted(set(errors))[:5],
        "sent_per_s": calls / sent_seconds, "ok_per_s": ok / elapsed,
        "p50_ms": 1000 * statistics.median(ordered) if ordered else None,
        "p99_ms": 1000 * ordered[int(0.99 * (len(ordered) - 1))] if ordered else None,
        "completed": done, "backlog_at_end": backlog,
        "cpu_percent": cpu, "machine_busy_percent": busy, "cores": round(cores),
        "others_percent": busy - sum(cpu.values()),
    }
    if run.meter is not None:
        calls_delta = {name: units_after["calls"].get(name, 0) - units_before["calls"].get(name, 0)
                       for name in units_after["calls"]}
        per = max(done, 1)
        result.update(
            wru_per_message=(units_after["wru"] + units_after["index_wru"]
                             - units_before["wru"] - units_before["index_wru"]) / per,
            index_wru_per_message=(units_after["index_wru"] - units_before["index_wru"]) / per,
            rru_per_message=(units_after["rru"] - units_before["rru"]) / per,
            calls_per_message={name: round(count / per, 2)
                               for name, count in sorted(calls_delta.items()) if count})
    result["held"] = (len(errors) < 0.01 * calls and calls / sent_seconds >= 0.95 * rate
                      and backlog <= 2 * rate and done >= ok)
    return result


# --- printing --------------------------------------------------------------------------------


def _ms(value: float | None) -> str:
    return "" if value is None else f"{value:,.0f}"


def table_text(steps: list[dict[str, Any]]) -> str:
    names = list(dict.fromkeys(n for s in steps for n in s["cpu_percent"]))
    lines = ["| step | target msg/s | s | calls | errors | sent/s | p50 ms | p99 ms | completed "
             "| backlog at end | WRU/msg | RRU/msg | " + " | ".join(f"CPU % {n}" for n in names)
             + " | CPU % other work | held |",
             "|---|" + "---:|" * (11 + len(names) + 1) + "---|"]
    for s in steps:
        wru = f"{s['wru_per_message']:.1f}" if "wru_per_message" in s else ""
        rru = f"{s['rru_per_message']:.1f}" if "rru_per_message" in s else ""
        # The metered step is slowed by its proxy: whether it held says nothing of the rate.
        held = "(metered)" if s["phase"] == "units" else "yes" if s["held"] else "no"
        lines.append(
            f"| {s['phase']} | {s['rate']:g} | {s['seconds']:g} | {s['calls']:,} | "
            f"{s['errors']:,} | "
            f"{s['sent_per_s']:.1f} | {_ms(s['p50_ms'])} | {_ms(s['p99_ms'])} | "
            f"{s['completed']:,} | {s['backlog_at_end']:,} | {wru} | {rru} | "
            + " | ".join(f"{s['cpu_percent'][n]:.0f}" if n in s["cpu_percent"] else ""
                         for n in names)
            + f" | {max(0.0, s['others_percent']):.0f} | {held} |")
    return "\n".join(lines)


def summary(steps: list[dict[str, Any]], final: dict[str, Any] | None) -> str:
    lines = []
    if final is not None:
        verdict = "held" if final["held"] else "did NOT hold"
        lines.append(f"highest rate sustained for {final['seconds']:g} s: {final['rate']:g} msg/s"
                     f" ({verdict}: {final['errors']} errors of {final['calls']:,} calls, "
                     f"{final['completed']:,} completed, backlog {final['backlog_at_end']})")
        cpu = final["cpu_percent"]
        top = sorted(cpu.items(), key=lambda kv: -kv[1])
        lines.append("CPU at that rate (% of one core): " + ", ".join(
            f"{name} {value:.0f}" for name, value in top)
            + f"; the machine {final['machine_busy_percent']:.0f} of {final['cores'] * 100}, "
            f"other work {max(0.0, final['others_percent']):.0f}")
    for s in steps:
        if "calls_per_message" in s:
            lines.append(f"units per message ({s['phase']}, {s['completed']} messages): "
                         f"{s['wru_per_message']:.1f} WRU ({s['index_wru_per_message']:.1f} of "
                         f"them index), {s['rru_per_message']:.1f} RRU; DynamoDB calls: "
                         + ", ".join(f"{name} {count}"
                                     for name, count in s["calls_per_message"].items()))
    failed = [s for s in steps if not s["held"] and s["phase"] == "ramp"]
    if failed:
        s = failed[0]
        lines.append(f"first step that did not hold: {s['rate']:g} msg/s (errors {s['errors']}, "
                     f"sent {s['sent_per_s']:.1f}/s, backlog {s['backlog_at_end']}, "
                     f"completed {s['completed']:,} of {s['calls']:,}; "
                     f"{', '.join(s['error_kinds'])})")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rates", default="5,10,15,20,25,30,40,50,75,100",
                        help="target messages/s of the ramp, comma-separated")
    parser.add_argument("--ramp-seconds", type=float, default=15.0)
    parser.add_argument("--seconds", type=float, default=60.0,
                        help="the final step, at the highest rate that held")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--grace", type=float, default=10.0)
    parser.add_argument("--units-rate", type=float, default=5.0)
    parser.add_argument("--units-seconds", type=float, default=15.0,
                        help="the metered step (0: none)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--logs", help="keep the processes' logs in this folder")
    args = parser.parse_args()
    from scripts.dynamodb_local import set_dummy_credentials

    set_dummy_credentials()
    rates = [float(each) for each in args.rates.split(",")]
    steps: list[dict[str, Any]] = []
    final = None

    def run_step(run: Stack, phase: str, rate: float, seconds: float) -> dict[str, Any]:
        result = asyncio.run(step(run, rate, seconds, args.connections, args.grace))
        result["phase"] = phase
        steps.append(result)
        print(f"  {phase}: {rate:g} msg/s for {seconds:g} s: "
              f"{'held' if result['held'] else 'did not hold'}", file=sys.stderr, flush=True)
        return result

    with contextlib.ExitStack() as context:
        folder = Path(args.logs or context.enter_context(
            tempfile.TemporaryDirectory(prefix="load-")))
        if args.units_seconds > 0:
            (folder / "metered").mkdir(parents=True, exist_ok=True)
            with stack(args.workers, True, folder / "metered") as run:
                asyncio.run(step(run, 5, 5, args.connections, args.grace))  # warm up
                # Every task of the step done before its units are read: the proxy slows them.
                result = asyncio.run(step(run, args.units_rate, args.units_seconds,
                                          args.connections, 60.0))
                result["phase"] = "units"
                steps.append(result)
        (folder / "load").mkdir(parents=True, exist_ok=True)
        with stack(args.workers, False, folder / "load") as run:
            asyncio.run(step(run, 5, 10, args.connections, args.grace))  # warm up
            best = None
            for rate in rates:
                if not run_step(run, "ramp", rate, args.ramp_seconds)["held"]:
                    break
                best = rate
            if best is not None and args.seconds > 0:
                final = run_step(run, "final", best, args.seconds)
    if args.json:
        print(json.dumps({"date": time.strftime("%Y-%m-%d"), "workers": args.workers,
                          "connections": args.connections, "steps": steps}))
        return
    print(f"{time.strftime('%Y-%m-%d')}: {args.workers} workers, {args.connections} connections; "
          f"units: {args.units_rate:g} msg/s for {args.units_seconds:g} s through the metering "
          f"proxy; ramp: {args.ramp_seconds:g} s a step, no proxy; final: {args.seconds:g} s")
    print(table_text(steps))
    print(summary(steps, final))


if __name__ == "__main__":
    main()
