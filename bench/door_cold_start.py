"""Cold start of the two ways to serve the JSON-RPC app on Lambda: the buffered Mangum handler
and the streaming door (`python -m handlers.stream`, which the Lambda Web Adapter starts).

Run: `.venv/bin/python bench/door_cold_start.py [RUNS]` (default 7). Each run is a fresh
process, timed from the parent from spawn to the first answer to a GET of the agent card:

- mangum: a Python that imports `handlers.jsonrpc` (settings, store, agent, card, app,
  Mangum) and hands the handler one API Gateway HTTP API event for the card, then exits.
- stream: `python -m handlers.stream` (the same, plus uvicorn), polled until the port accepts
  (what the adapter's readiness check waits for), then one HTTP GET of the card.

Then warm calls, what Lambda bills per invocation beyond the first: `WARM` SendMessage calls
(echo agent) through the Mangum handler in process, and over HTTP to a running
`handlers.stream` (the adapter's hop on loopback included).

Also the import of uvicorn (with the h11 protocol and the asyncio loop) and of mangum alone.
Echo agent, embedded store, anonymous callers: what differs is the server, not the kit. The
adapter's own start (a Rust binary, outside Python) is not in these numbers. Reported:
medians and the spread over the runs.
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = {**{k: v for k, v in os.environ.items() if not k.startswith("A2A_")},
       "PYTHONPATH": str(ROOT), "A2A_ALLOW_ANONYMOUS": "true",
       "A2A_STREAM_BUDGET_SECONDS": "20"}
CARD = "/.well-known/agent-card.json"

_MANGUM_CHILD = textwrap.dedent("""
    import json, os
    from handlers.jsonrpc import handler
    event = json.loads(os.environ["BENCH_EVENT"])
    class Context:
        function_name = "bench"; aws_request_id = "r-1"; memory_limit_in_mb = 512
        def get_remaining_time_in_millis(self): return 30000
    reply = handler(event, Context())
    assert reply["statusCode"] == 200, reply
""")


def _card_event() -> str:
    event = json.loads((ROOT / "tests" / "events" / "apigw_http_v2.json").read_text())
    event.update(rawPath=CARD, rawQueryString="", body=None, isBase64Encoded=False)
    event["requestContext"]["http"].update(method="GET", path=CARD)
    return json.dumps(event)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def mangum_once(event: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", _MANGUM_CHILD], env={**ENV, "BENCH_EVENT": event},
                   cwd=ROOT, check=True, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def stream_once() -> float:
    port = _free_port()
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "handlers.stream"], cwd=ROOT,
                               env={**ENV, "PORT": str(port),
                                    "A2A_PUBLIC_URL": f"http://127.0.0.1:{port}/"},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:  # the adapter's readiness check: the port accepts
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.002)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{CARD}", timeout=10) as reply:
            assert reply.status == 200
        return time.perf_counter() - start
    finally:
        process.terminate()
        process.wait()


def spawn_once() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], env=ENV, cwd=ROOT, check=True)
    return time.perf_counter() - start


def import_once(modules: str) -> float:
    code = f"import time; s = time.perf_counter(); import {modules}; " \
           "print(time.perf_counter() - s)"
    out = subprocess.run([sys.executable, "-c", code], env=ENV, cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    return float(out)


WARM = 300
_MESSAGE = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
    "messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hello"}]}}}

_WARM_MANGUM_CHILD = textwrap.dedent("""
    import json, os, time, uuid
    from handlers.jsonrpc import handler
    base = json.loads(os.environ["BENCH_EVENT"])
    class Context:
        function_name = "bench"; aws_request_id = "r-1"; memory_limit_in_mb = 512
        def get_remaining_time_in_millis(self): return 30000
    out = []
    for _ in range(int(os.environ["BENCH_CALLS"])):
        message = json.loads(os.environ["BENCH_BODY"])
        message["params"]["message"]["messageId"] = str(uuid.uuid4())
        event = dict(base, body=json.dumps(message))
        start = time.perf_counter()
        reply = handler(event, Context())
        out.append(time.perf_counter() - start)
        assert reply["statusCode"] == 200, reply
    print(json.dumps(out))
""")


def warm_mangum() -> list[float]:
    event = json.loads((ROOT / "tests" / "events" / "apigw_http_v2.json").read_text())
    event.update(rawPath="/", rawQueryString="", isBase64Encoded=False)
    event["requestContext"]["http"].update(method="POST", path="/")
    event["headers"] = {"content-type": "application/json", "a2a-version": "1.0"}
    out = subprocess.run([sys.executable, "-c", _WARM_MANGUM_CHILD], cwd=ROOT, check=True,
                         env={**ENV, "BENCH_EVENT": json.dumps(event), "BENCH_CALLS": str(WARM),
                              "BENCH_BODY": json.dumps(_MESSAGE)},
                         capture_output=True, text=True).stdout
    return list(json.loads(out))[WARM // 10:]  # after a warm-up


def warm_stream() -> list[float]:
    import uuid

    import httpx

    port = _free_port()
    process = subprocess.Popen([sys.executable, "-m", "handlers.stream"], cwd=ROOT,
                               env={**ENV, "PORT": str(port),
                                    "A2A_PUBLIC_URL": f"http://127.0.0.1:{port}/"},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        out = []
        with httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
            while True:
                try:
                    client.get(CARD)
                    break
                except httpx.TransportError:
                    time.sleep(0.01)
            for _ in range(WARM):
                body = json.loads(json.dumps(_MESSAGE))
                body["params"]["message"]["messageId"] = str(uuid.uuid4())
                start = time.perf_counter()
                reply = client.post("/", json=body, headers={"A2A-Version": "1.0"})
                out.append(time.perf_counter() - start)
                assert reply.status_code == 200, reply.text
        return out[WARM // 10:]
    finally:
        process.terminate()
        process.wait()


def _row(name: str, samples: list[float]) -> str:
    return (f"{name:<34} median {statistics.median(samples) * 1000:7.1f} ms   "
            f"min {min(samples) * 1000:7.1f}   max {max(samples) * 1000:7.1f}")


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    event = _card_event()
    rows = {
        "spawn python -c pass": [spawn_once() for _ in range(runs)],
        "import mangum": [import_once("mangum") for _ in range(runs)],
        "import uvicorn (h11, asyncio)": [import_once(
            "uvicorn, uvicorn.protocols.http.h11_impl, uvicorn.loops.asyncio")
            for _ in range(runs)],
        "mangum: spawn -> card answered": [mangum_once(event) for _ in range(runs)],
        "stream: spawn -> card answered": [stream_once() for _ in range(runs)],
        f"mangum: warm SendMessage (x{WARM})": warm_mangum(),
        f"stream: warm SendMessage (x{WARM})": warm_stream(),
    }
    print(f"{runs} runs each, {sys.version.split()[0]}")
    for name, samples in rows.items():
        print(_row(name, samples))


if __name__ == "__main__":
    main()
