"""Soak: mixed A2A operations on both bindings for a bounded time, then a consistency check.

    .venv/bin/python bench/soak.py [--seconds 60] [--clients 4] [--workers 4] [--max-ops 20000]

Starts, on loopback only: DynamoDB Local (scripts/dynamodb_local.py, installed on first use),
the JSON-RPC app under uvicorn (`handlers.jsonrpc:app`) and the gRPC server
(`python -m grpc_service`), both on one table and hosting bench/_soak_agent.py. Then
--clients processes, each with --workers concurrent loops, make a weighted mix of
SendMessage, GetTask, ListTasks, SendStreamingMessage and hold-then-CancelTask calls, each on
a binding picked at random, so a task created on one binding is often read or canceled on the
other. Every loop stops at --seconds or once its process has made --max-ops calls, and every
call has a timeout: the run ends by itself.

Then the check (bench/_soak_check.py), straight from the table, of every task in it: it is
terminal, in the state its client saw last (COMPLETED, or CANCELED for the held ones), its
items expire, its snapshot is the fold of its events, and its versions in the table's stream
go 1, 2, ... one write at a time. Prints operations per second
and every error; exits 1 on any error or inconsistency (zero are expected).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import concurrent.futures
import contextlib
import itertools
import json
import multiprocessing
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _soak_check import check  # noqa: E402

from a2akit.generated import a2a_pb2 as pb  # noqa: E402
from a2akit.states import apply_event, is_terminal  # noqa: E402
from a2akit.store import table  # noqa: E402
from scripts.dynamodb_local import dynamodb_local, free_port, set_dummy_credentials  # noqa: E402
from tests.support.messages import send_request  # noqa: E402
from tests.support.processes import stop_process  # noqa: E402

TABLE = "a2akit-soak"
REGION = "us-east-1"
CALL_TIMEOUT = 30.0
V1 = (("a2a-version", "1.0"),)
HEADERS = {"content-type": "application/json", "a2a-version": "1.0"}
# Operation -> weight in the mix. "HoldCancel" is SendMessage(hold, returnImmediately) on one
# binding, then CancelTask on a binding picked again: counted as one operation.
MIX = {"SendMessage": 35, "GetTask": 25, "ListTasks": 10, "SendStreamingMessage": 15,
       "HoldCancel": 15}
BINDINGS = ("JSONRPC", "GRPC")


class CheckFailed(Exception):
    """A reply that is well-formed but not what the operation must return."""


def _expect(condition: bool, what: str) -> None:
    if not condition:
        raise CheckFailed(what)


# --- the two bindings, one interface --------------------------------------------------------


class _JsonRpc:
    def __init__(self, url: str) -> None:
        import httpx

        self._http = httpx.AsyncClient(base_url=url, timeout=CALL_TIMEOUT)
        self._ids = itertools.count(1)

    def _body(self, method: str, request: Any) -> dict[str, Any]:
        from google.protobuf import json_format

        return {"jsonrpc": "2.0", "id": next(self._ids), "method": method,
                "params": json_format.MessageToDict(request)}

    async def call(self, method: str, request: Any, reply: Any) -> Any:
        from google.protobuf import json_format

        answer = (await self._http.post("/", json=self._body(method, request),
                                        headers=HEADERS)).json()
        if "error" in answer:
            raise CheckFailed(f"{method}: error {answer['error']}")
        return json_format.ParseDict(answer["result"], reply)

    async def stream(self, method: str, request: Any) -> list[pb.StreamResponse]:
        from google.protobuf import json_format

        events = []
        async with self._http.stream("POST", "/", json=self._body(method, request),
                                     headers=HEADERS) as response:
            async for line in response.aiter_lines():
                if line.startswith("data: "):
                    answer = json.loads(line[6:])
                    if "error" in answer:
                        raise CheckFailed(f"{method}: error {answer['error']}")
                    events.append(json_format.ParseDict(answer["result"], pb.StreamResponse()))
        return events

    async def close(self) -> None:
        await self._http.aclose()


class _Grpc:
    def __init__(self, address: str) -> None:
        import grpc

        from grpc_service.generated import a2a_pb2_grpc

        self._channel = grpc.aio.insecure_channel(address)
        self._stub = a2a_pb2_grpc.A2AServiceStub(self._channel)

    async def call(self, method: str, request: Any, reply: Any) -> Any:
        del reply  # gRPC returns the message itself
        return await getattr(self._stub, method)(request, metadata=V1, timeout=CALL_TIMEOUT)

    async def stream(self, method: str, request: Any) -> list[pb.StreamResponse]:
        call = getattr(self._stub, method)(request, metadata=V1, timeout=CALL_TIMEOUT)
        return [event async for event in call]

    async def close(self) -> None:
        await self._channel.close()


# --- one client process ------------------------------------------------------------------------


class _Client:
    """A client process's loops: the operations, what they check, and what they saw."""

    def __init__(self, apis: dict[str, Any], seed: int, max_ops: int) -> None:
        self.apis = apis
        self.rng = random.Random(seed)
        self.remaining = max_ops
        self.latency: dict[tuple[str, str], list[float]] = collections.defaultdict(list)
        self.errors: dict[tuple[str, str], list[str]] = collections.defaultdict(list)
        self.final: dict[str, int] = {}  # task id -> the state its creator saw last
        # What GetTask may pick: tasks in their final state. A held task joins only once its
        # cancel returned, or a GetTask from another loop would race the cancel.
        self.task_ids: list[str] = []

    def _binding(self) -> str:
        return self.rng.choice(BINDINGS)

    def _created(self, task_id: str, state: int, *, settled: bool = True) -> None:
        self.final[task_id] = state
        if settled:
            self.task_ids.append(task_id)

    async def send(self, binding: str) -> None:
        text = uuid.uuid4().hex
        reply = await self.apis[binding].call("SendMessage", send_request(f"echo {text}"),
                                              pb.SendMessageResponse())
        _expect(reply.HasField("task"), "SendMessage answered without a task")
        task = reply.task
        self._created(task.id, task.status.state)
        _expect(task.status.state == pb.TASK_STATE_COMPLETED,
                f"SendMessage: {pb.TaskState.Name(task.status.state)}, not COMPLETED")
        _expect(task.artifacts[0].parts[0].text == text, "SendMessage: wrong artifact")

    async def get(self, binding: str) -> None:
        task_id = self.rng.choice(self.task_ids)
        task = await self.apis[binding].call("GetTask", pb.GetTaskRequest(id=task_id), pb.Task())
        _expect(task.id == task_id, "GetTask: another task")
        _expect(task.status.state == self.final[task_id],
                f"GetTask {task_id}: {pb.TaskState.Name(task.status.state)}, its creator saw "
                f"{pb.TaskState.Name(self.final[task_id])}")

    async def list(self, binding: str) -> None:
        page = await self.apis[binding].call("ListTasks", pb.ListTasksRequest(page_size=20),
                                             pb.ListTasksResponse())
        _expect(0 < len(page.tasks) <= 20, f"ListTasks: {len(page.tasks)} tasks on a page")
        _expect(all(task.id for task in page.tasks), "ListTasks: a task without an id")

    async def stream(self, binding: str) -> None:
        chunks = self.rng.randint(2, 8)
        events = await self.apis[binding].stream("SendStreamingMessage",
                                                 send_request(f"stream {chunks}"))
        _expect(bool(events) and events[0].HasField("task"),
                "SendStreamingMessage: the first event is not the task")
        task = pb.Task()
        for event in events:
            apply_event(task, event)
        self._created(task.id, task.status.state)
        _expect(task.status.state == pb.TASK_STATE_COMPLETED,
                f"stream ended {pb.TaskState.Name(task.status.state)}, not COMPLETED")
        text = "".join(part.text for part in task.artifacts[0].parts)
        _expect(text == "".join(f"{i} " for i in range(chunks)), f"stream: artifact {text!r}")

    async def hold_cancel(self, binding: str) -> None:
        reply = await self.apis[binding].call("SendMessage", send_request("hold", immediately=True),
                                              pb.SendMessageResponse())
        _expect(reply.HasField("task"), "SendMessage(hold) answered without a task")
        self._created(reply.task.id, reply.task.status.state, settled=False)
        _expect(not is_terminal(reply.task.status.state), "hold: already terminal")
        task = await self.apis[self._binding()].call(
            "CancelTask", pb.CancelTaskRequest(id=reply.task.id), pb.Task())
        self._created(task.id, task.status.state)
        _expect(task.status.state == pb.TASK_STATE_CANCELED,
                f"CancelTask: {pb.TaskState.Name(task.status.state)}, not CANCELED")

    async def worker(self, deadline: float) -> None:
        operations = {"SendMessage": self.send, "GetTask": self.get, "ListTasks": self.list,
                      "SendStreamingMessage": self.stream, "HoldCancel": self.hold_cancel}
        names, weights = list(MIX), list(MIX.values())
        while self.remaining > 0 and time.monotonic() < deadline:
            self.remaining -= 1
            name = self.rng.choices(names, weights)[0]
            if not self.task_ids and name in ("GetTask", "ListTasks"):
                name = "SendMessage"  # nothing to read yet
            binding = self._binding()
            start = time.perf_counter()
            try:
                await asyncio.wait_for(operations[name](binding), CALL_TIMEOUT * 2)
            except Exception as exc:  # every failure is counted and reported
                self.errors[(name, binding)].append(f"{type(exc).__name__}: {exc}"[:300])
            else:
                self.latency[(name, binding)].append((time.perf_counter() - start) * 1000)


async def _client(http_url: str, grpc_address: str, seconds: float, workers: int,
                  max_ops: int, seed: int) -> dict[str, Any]:
    apis = {"JSONRPC": _JsonRpc(http_url), "GRPC": _Grpc(grpc_address)}
    client = _Client(apis, seed, max_ops)
    deadline = time.monotonic() + seconds
    try:
        await asyncio.gather(*(client.worker(deadline) for _ in range(workers)))
    finally:
        for api in apis.values():
            await api.close()
    return {"latency": dict(client.latency), "errors": dict(client.errors),
            "final": client.final}


def run_client(*args: Any) -> dict[str, Any]:
    """One client process (the pool's target)."""
    return asyncio.run(_client(*args))


# --- servers -------------------------------------------------------------------------------------


@contextlib.contextmanager
def _server(name: str, args: list[str], env: dict[str, str], logs: Path) -> Iterator[None]:
    with (logs / f"{name}.log").open("wb") as log:
        process = subprocess.Popen(args, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        yield
    finally:
        stop_process(process, timeout=15)


def _wait_ready(http_url: str, grpc_address: str, logs: Path) -> None:
    import grpc

    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"{http_url}.well-known/agent-card.json", timeout=1):
                break
        except OSError:
            if time.monotonic() > deadline:
                raise SystemExit("JSON-RPC server did not start:\n"
                                 + (logs / "jsonrpc.log").read_text()) from None
            time.sleep(0.2)
    with grpc.insecure_channel(grpc_address) as channel:
        try:
            grpc.channel_ready_future(channel).result(timeout=60)
        except grpc.FutureTimeoutError:
            raise SystemExit("gRPC server did not start:\n"
                             + (logs / "grpc.log").read_text()) from None


# --- report --------------------------------------------------------------------------------------


def _report(results: list[dict[str, Any]], elapsed: float, args: argparse.Namespace) -> int:
    latency: dict[tuple[str, str], list[float]] = collections.defaultdict(list)
    errors: dict[tuple[str, str], list[str]] = collections.defaultdict(list)
    for result in results:
        for key, values in result["latency"].items():
            latency[key] += values
        for key, values in result["errors"].items():
            errors[key] += values
    print(f"soak: {elapsed:.1f} s, {args.clients} client processes x {args.workers} loops, "
          "JSON-RPC (uvicorn) + gRPC on one DynamoDB Local table")
    print(f"{'operation':<22}{'binding':<9}{'ok':>7}{'errors':>8}{'ops/s':>9}"
          f"{'p50 ms':>9}{'p99 ms':>9}")
    total_ok = total_errors = 0
    for name, binding in itertools.product(MIX, BINDINGS):
        values = sorted(latency.get((name, binding), []))
        failed = len(errors.get((name, binding), []))
        total_ok += len(values)
        total_errors += failed
        p50 = statistics.median(values) if values else 0.0
        p99 = values[min(len(values) - 1, int(len(values) * 0.99))] if values else 0.0
        print(f"{name:<22}{binding:<9}{len(values):>7}{failed:>8}{len(values) / elapsed:>9.1f}"
              f"{p50:>9.1f}{p99:>9.1f}")
    print(f"{'all':<31}{total_ok:>7}{total_errors:>8}{total_ok / elapsed:>9.1f}")
    for (name, binding), messages in sorted(errors.items()):
        for message, count in collections.Counter(messages).most_common(5):
            print(f"  error {name} {binding} x{count}: {message}")
    return total_errors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--clients", type=int, default=4, help="client processes")
    parser.add_argument("--workers", type=int, default=4, help="concurrent loops per client")
    parser.add_argument("--max-ops", type=int, default=20_000, help="calls per client, at most")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    set_dummy_credentials()
    with tempfile.TemporaryDirectory(prefix="soak-") as folder, dynamodb_local() as endpoint:
        logs = Path(folder)
        from a2akit.store.dynamodb import make_client

        client = make_client(endpoint, REGION)
        client.create_table(**table.create_table_kwargs(TABLE))
        client.get_waiter("table_exists").wait(TableName=TABLE)
        client.close()
        http_port, grpc_port = free_port(), free_port()
        http_url, grpc_address = f"http://127.0.0.1:{http_port}/", f"127.0.0.1:{grpc_port}"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "bench")]),
               "A2A_AGENT": "_soak_agent:agent", "A2A_TABLE": TABLE,
               "AWS_ENDPOINT_URL_DYNAMODB": endpoint, "A2A_ALLOW_ANONYMOUS": "true",
               "A2A_PUBLIC_URL": http_url, "A2A_GRPC_ADDRESS": grpc_address,
               "GRPC_PORT": str(grpc_port), "LOG_LEVEL": "WARNING"}
        web = [sys.executable, "-m", "uvicorn", "handlers.jsonrpc:app", "--host", "127.0.0.1",
               "--port", str(http_port), "--log-level", "warning", "--no-access-log"]
        with (_server("jsonrpc", web, env, logs),
              _server("grpc", [sys.executable, "-m", "grpc_service"], env, logs)):
            _wait_ready(http_url, grpc_address, logs)
            print(f"servers up: {http_url} and {grpc_address}, DynamoDB Local {endpoint}; "
                  f"running {args.seconds:.0f} s", flush=True)
            context = multiprocessing.get_context("spawn")
            start = time.monotonic()
            with concurrent.futures.ProcessPoolExecutor(args.clients, mp_context=context) as pool:
                futures = [pool.submit(run_client, http_url, grpc_address, args.seconds,
                                       args.workers, args.max_ops, args.seed * 1000 + i)
                           for i in range(args.clients)]
                results = [future.result() for future in futures]
            elapsed = time.monotonic() - start
            errors = _report(results, elapsed, args)
            server_logs = "".join((logs / f"{name}.log").read_text()
                                  for name in ("jsonrpc", "grpc"))
        final = {task_id: state for result in results for task_id, state in result["final"].items()}
        checked, problems = asyncio.run(check(endpoint, TABLE, final))
    print(f"check: {checked} tasks in the table ({len(final)} seen by clients): "
          f"{'all terminal and consistent' if not problems else f'{len(problems)} problems'}")
    for problem in problems[:20]:
        print(f"  {problem}")
    if server_logs.strip():
        print("server logs (warnings and errors):\n" + server_logs[-4000:])
    return 1 if errors or problems else 0


if __name__ == "__main__":
    sys.exit(main())
