"""What a user pays, the kit against the official a2a-sdk, measured side by side in one run.

    .venv/bin/python bench/perf.py [--runs 5] [--no-dynamodb]

Each side runs in its own processes and venv (the SDK in .cache/bench-sdk-venv, created here
if missing), so neither imports the other; bench/_kit.py and bench/_sdk_baseline.py answer
the same modes. Every figure is measured `--runs` times, kit and SDK interleaved (the order
alternates from run to run), and the table shows medians and the kit/SDK ratio.

- Server CPU is the server process's own CPU time (utime + stime from /proc) over N calls,
  divided by N: the load generator runs in this process, on the other core, so nothing of
  the client is counted and no "floor" has to be subtracted. Servers are pinned to core 0.
- Cold starts run a fresh interpreter per start, laid out like a Lambda bundle: `python -S`
  with the code and its dependencies on PYTHONPATH (no site processing, no editable-install
  hooks). The wall time runs from just before the process is spawned to the end of the first
  invocation through Mangum. Bytecode is compiled once, in a start that is not counted, as
  the Lambda bundle ships it compiled (infra/bundle.py, with a Python 3.13 at hand);
  compiling at every start would cost both sides time and memory a deployed function does
  not pay.
- With DynamoDB Local available (Java 17; installed from npm like the tests), the DynamoDB
  cold start uses a real table on loopback, and the ListTasks read-capacity table follows.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(BENCH))

from _bench_common import HEADERS, PRELOAD_CONTEXT, send_body  # noqa: E402

from tests.support.processes import free_port, stop_process, tool_venv, wait_for_port  # noqa: E402

SDK_VENV = ROOT / ".cache" / "bench-sdk-venv"
SDK_SPEC = ["a2a-sdk[http-server,grpc]==1.3.0", "mangum", "httpx", "uvicorn", "boto3"]
EVENT = str(ROOT / "tests" / "events" / "apigw_http_v2.json")
PRELOAD = 4_400
LIST_CALLS = 600
SEND_CALLS = 600
GRPC_CALLS = 2_000
GRPC_CONCURRENCY = 32
WARM_CALLS, WARM_WARMUP = 1_000, 200
# The kit's settings in every benchmark of it: anonymous callers, the embedded store.
KIT_ENV = {
    "A2A_ALLOW_ANONYMOUS": "true",
    "A2A_STREAM_BUDGET_SECONDS": "20",  # as the CDK stack sets it on Lambda
    "A2A_TABLE": "",
}
SERVER_CORE, CLIENT_CORE = 0, 1
TABLE = "a2akit-bench"


# --- the two sides ------------------------------------------------------------------------


class Side:
    def __init__(self, name: str, python: Path, script: Path, paths: list[str],
                 env: dict[str, str]) -> None:
        self.name = name
        self.python = python
        self.script = script
        self.env = {**os.environ, **env, "PYTHONPATH": os.pathsep.join(paths)}
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)

    def command(self, mode: str, *args: str) -> list[str]:
        return [str(self.python), "-S", str(self.script), mode, *args]

    def run(self, mode: str, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
        # Any core: this process (the load generator) is pinned, its children need not be.
        out = subprocess.run(self.command(mode, *args), env={**self.env, **(env or {})},
                             capture_output=True, text=True, timeout=300, check=False,
                             preexec_fn=_pin(*range(os.cpu_count() or 1)))
        if out.returncode != 0:
            raise RuntimeError(f"{self.name} {mode} failed:\n{out.stderr[-3000:]}")
        result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
        return result


def _site_packages(python: Path) -> str:
    return subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                           "['purelib'])"], capture_output=True, text=True,
                          check=True).stdout.strip()


def _sdk_python() -> Path:
    ready = ["python", "-c", "import a2a.server, grpc, mangum, uvicorn, httpx, boto3"]
    return tool_venv(SDK_VENV, SDK_SPEC, ready) / "python"


def sides() -> tuple[Side, Side]:
    kit_python = Path(sys.executable)
    kit = Side("kit", kit_python, BENCH / "_kit.py", [str(ROOT), _site_packages(kit_python)],
               KIT_ENV)
    sdk_python = _sdk_python()
    sdk = Side("a2a-sdk", sdk_python, BENCH / "_sdk_baseline.py", [_site_packages(sdk_python)],
               {})
    return kit, sdk


# --- processes and their CPU -------------------------------------------------------------


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _peak_rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _pin(*cores: int) -> Callable[[], None]:
    def pin() -> None:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, set(cores))
    return pin


@contextlib.contextmanager
def server(side: Side, mode: str, *args: str) -> Iterator[tuple[int, int]]:
    """A server of `side` on a free port, pinned to SERVER_CORE: yields (pid, port)."""
    port = free_port()
    process = subprocess.Popen(side.command(mode, str(port), *args), env=side.env,
                               stdout=subprocess.PIPE, text=True, preexec_fn=_pin(SERVER_CORE))
    try:
        assert process.stdout is not None
        # The kit writes its metrics to stdout (EMF lines, some before READY while it
        # preloads): skip them, and read on after READY, or a full pipe stops the server.
        for line in process.stdout:
            if line.strip() == "READY":
                break
        else:
            raise RuntimeError(f"{side.name} {mode} did not start")
        threading.Thread(target=process.stdout.read, daemon=True).start()
        wait_for_port(port, process)
        yield process.pid, port
    finally:
        stop_process(process)


# --- the figures --------------------------------------------------------------------------


def jsonrpc_cpu(pid: int, port: int, bodies: list[bytes]) -> float:
    """Server CPU in ms per call for `bodies`, sent one after another on one connection."""
    connection = http.client.HTTPConnection("127.0.0.1", port)
    try:
        def post(body: bytes) -> None:
            connection.request("POST", "/", body, HEADERS)
            reply = connection.getresponse().read()
            assert b'"result"' in reply, reply[:300]

        for body in bodies[:20]:
            post(body)
        start = _cpu_seconds(pid)
        for body in bodies[20:]:
            post(body)
        return (_cpu_seconds(pid) - start) * 1000 / (len(bodies) - 20)
    finally:
        connection.close()


def _list_bodies() -> list[bytes]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks",
            "params": {"contextId": PRELOAD_CONTEXT}}
    return [json.dumps(body).encode()] * (LIST_CALLS + 20)


def _send_bodies() -> list[bytes]:
    return [json.dumps(send_body(i)).encode() for i in range(SEND_CALLS + 20)]


def _grpc_requests(count: int) -> list[bytes]:
    from tests.support.messages import send_request

    stamp = time.time_ns()
    return [send_request(message_id=f"g-{stamp}-{i}").SerializeToString() for i in range(count)]


async def _grpc_load(pid: int, port: int, requests: list[bytes]) -> tuple[float, float]:
    import grpc

    metadata = (("a2a-version", "1.0"),)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        send = channel.unary_unary("/lf.a2a.v1.A2AService/SendMessage")
        for body in requests[:200]:
            await send(body, metadata=metadata)
        pending = iter(requests[200:])

        async def worker() -> None:
            for body in pending:
                await send(body, metadata=metadata)

        cpu, wall = _cpu_seconds(pid), time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(GRPC_CONCURRENCY)))
        cpu, wall = _cpu_seconds(pid) - cpu, time.perf_counter() - wall
    calls = len(requests) - 200
    return calls / wall, cpu * 1000 / calls


def cold_start(side: Side, env: dict[str, str] | None = None, *extra: str) -> dict[str, Any]:
    body = json.dumps(send_body(1))
    return side.run("lambda-cold", EVENT, body, repr(time.time()), *extra, env=env)


# --- the run ------------------------------------------------------------------------------

Sample = dict[str, dict[str, list[float]]]  # figure -> side -> one value per run


def _record(samples: Sample, figure: str, side: Side, value: float) -> None:
    samples.setdefault(figure, {}).setdefault(side.name, []).append(value)


def _in_service_rss(side: Side, samples: Sample) -> None:
    """Peak RSS of each server after start and 100 calls: the server, not the tasks it holds."""
    with server(side, "serve-jsonrpc", "0") as (pid, port):
        jsonrpc_cpu(pid, port, _send_bodies()[:120])
        _record(samples, "jsonrpc_rss", side, _peak_rss_mb(pid))
    with server(side, "serve-grpc") as (pid, port):
        asyncio.run(_grpc_load(pid, port, _grpc_requests(300)))
        _record(samples, "grpc_rss", side, _peak_rss_mb(pid))


def _cold_starts(kit: Side, sdk: Side, run: int, samples: Sample,
                 endpoint: str | None) -> None:
    """Two starts of each kind per run, kit and SDK alternating, the order rotating by run."""
    starts: list[tuple[Side, str]] = [(kit, "cold_ms"), (sdk, "cold_ms")]
    if endpoint is not None:
        starts += [(kit, "cold_ddb_ms"), (sdk, "cold_ddb_ms")]
    starts = (starts[run % len(starts):] + starts[:run % len(starts)]) * 2
    for side, figure in starts:
        if figure == "cold_ms":
            cold = cold_start(side)
            _record(samples, "cold_rss", side, cold["maxrss_kb"] / 1024)
        elif side is kit:
            cold = cold_start(side, _ddb_env(endpoint or ""))
        else:
            cold = cold_start(side, _aws_env(endpoint), "--boto3")
        _record(samples, figure, side, cold["wall_ms"])


def measure(runs: int, with_dynamodb: bool) -> tuple[Sample, list[Any]]:
    kit, sdk = sides()
    samples: Sample = {}
    capacity: list[Any] = []
    with contextlib.suppress(OSError):
        os.sched_setaffinity(0, {CLIENT_CORE})
    for side in (kit, sdk):
        _in_service_rss(side, samples)
    with contextlib.ExitStack() as stack:
        endpoint = stack.enter_context(_dynamodb()) if with_dynamodb else None
        jsonrpc = {side.name: stack.enter_context(server(side, "serve-jsonrpc", str(PRELOAD)))
                   for side in (kit, sdk)}
        grpc_servers = {side.name: stack.enter_context(server(side, "serve-grpc"))
                        for side in (kit, sdk)}
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, {CLIENT_CORE})
        _cold_starts(kit, sdk, 0, {}, endpoint)  # compiles and caches bytecode; not counted
        for run in range(runs):
            print(f"run {run + 1}/{runs}", file=sys.stderr, flush=True)
            for side in ((kit, sdk) if run % 2 == 0 else (sdk, kit)):
                pid, port = jsonrpc[side.name]
                _record(samples, "list_cpu", side, jsonrpc_cpu(pid, port, _list_bodies()))
                _record(samples, "send_cpu", side, jsonrpc_cpu(pid, port, _send_bodies()))
                pid, port = grpc_servers[side.name]
                rate, cpu = asyncio.run(_grpc_load(pid, port, _grpc_requests(GRPC_CALLS)))
                _record(samples, "grpc_rate", side, rate)
                _record(samples, "grpc_cpu", side, cpu)
                warm = side.run("mangum-warm", EVENT, str(WARM_CALLS), str(WARM_WARMUP))
                _record(samples, "warm_p50", side, warm["p50_ms"])
            _cold_starts(kit, sdk, run, samples, endpoint)
        for side in (kit, sdk):
            _record(samples, "jsonrpc_loaded_rss", side, _peak_rss_mb(jsonrpc[side.name][0]))
            _record(samples, "grpc_loaded_rss", side, _peak_rss_mb(grpc_servers[side.name][0]))
        if endpoint is not None:
            from bench.dynamodb_calls import listing_capacity

            capacity = asyncio.run(listing_capacity(endpoint))
    return samples, capacity


@contextlib.contextmanager
def _dynamodb() -> Iterator[str]:
    from a2akit.store import table
    from a2akit.store.dynamodb import make_client
    from scripts.dynamodb_local import dynamodb_local, set_dummy_credentials

    set_dummy_credentials()
    with dynamodb_local() as endpoint:
        client = make_client(endpoint, "us-east-1")
        client.create_table(**table.create_table_kwargs(TABLE))
        client.get_waiter("table_exists").wait(TableName=TABLE)
        for i in range(50):  # DynamoDB Local's own JIT warm-up, before anything is timed
            client.get_item(TableName=TABLE, Key=table.key(f"warm-{i}", "TASK"))
        client.close()
        yield endpoint


def _aws_env(endpoint: str | None) -> dict[str, str]:
    from scripts.dynamodb_local import CREDENTIALS

    # The endpoint as boto3's own variable, not the kit's AWS_ENDPOINT_URL_DYNAMODB: the kit
    # then takes the path it takes on Lambda (no table check at start).
    return {**CREDENTIALS, "AWS_ENDPOINT_URL": endpoint or ""}


def _ddb_env(endpoint: str) -> dict[str, str]:
    return {**_aws_env(endpoint), "A2A_TABLE": TABLE}


# --- the table ----------------------------------------------------------------------------

# figure, label, unit, goal (ratio kit/sdk), lower is better
FIGURES = [
    ("list_cpu", "ListTasks, 20 of 4,400 by contextId: server CPU per call", "ms", None, True),
    ("cold_ddb_ms", "Lambda cold start, DynamoDB store (SDK: + boto3 client)", "ms", 0.35, True),
    ("cold_ms", "Lambda cold start, embedded store", "ms", 0.25, True),
    ("warm_p50", "warm SendMessage through Mangum, p50", "ms", 0.10, True),
    ("grpc_rate", "gRPC SendMessage, one server core, c=32", "req/s", 8.0, False),
    ("grpc_cpu", "gRPC SendMessage: server CPU per call", "ms", None, True),
    ("cold_rss", "peak RSS, Lambda process after the first call", "MB", 0.60, True),
    ("jsonrpc_rss", "peak RSS, JSON-RPC server (uvicorn), start + 100 calls", "MB", 0.60, True),
    ("grpc_rss", "peak RSS, gRPC server, start + 100 calls", "MB", 0.60, True),
    ("jsonrpc_loaded_rss", "peak RSS, JSON-RPC server holding ~10,000 tasks", "MB", None,
     True),
    ("grpc_loaded_rss", "peak RSS, gRPC server holding ~10,000 tasks", "MB", None, True),
    ("send_cpu", "JSON-RPC SendMessage (uvicorn): server CPU per call", "ms", None, True),
]


def report(samples: Sample, capacity: list[Any], runs: int, version: str) -> None:
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        cpu = next((line.split(":", 1)[1].strip() for line in f
                    if line.startswith("model name")), cpu)
    print(f"\n{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {cpu}, {os.cpu_count()} cores; "
          f"Python {platform.python_version()}; a2a-sdk {version}; "
          f"medians of {runs} interleaved runs; kit/sdk is the median of the runs' ratios\n")
    print("| figure | a2a-sdk | kit | kit/sdk | goal | met |")
    print("|---|---:|---:|---:|---|---|")
    for key, label, unit, goal, lower in FIGURES:
        if key not in samples:
            continue
        kits, sdks = samples[key]["kit"], samples[key]["a2a-sdk"]
        kit, sdk = statistics.median(kits), statistics.median(sdks)
        # The ratio of each run's pair (kit and SDK measured back to back), then the median:
        # load from elsewhere on the machine drifts between runs, less within one.
        ratio = statistics.median(k / s for k, s in zip(kits, sdks, strict=True))
        if goal is None:
            wanted, met = "", ""
        elif lower:
            wanted, met = f"<= {goal:g}x", "yes" if ratio <= goal else "no"
        else:
            wanted, met = f">= {goal:g}x", "yes" if ratio >= goal else "no"
        digits = 0 if unit == "req/s" else 2
        print(f"| {label} ({unit}) | {sdk:.{digits}f} | {kit:.{digits}f} | {ratio:.2f}x "
              f"| {wanted} | {met} |")
    if capacity:
        from bench.dynamodb_calls import print_capacity

        print()
        print_capacity(capacity)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-dynamodb", action="store_true",
                        help="skip the DynamoDB cold start and the read-capacity table")
    args = parser.parse_args()
    samples, capacity = measure(args.runs, not args.no_dynamodb)
    version = sides()[1].run("version")["version"]
    report(samples, capacity, args.runs, version)


if __name__ == "__main__":
    main()
