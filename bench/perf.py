"""Server CPU per request, Lambda cold start and memory: the kit against the official a2a-sdk.

Run: `.venv/bin/python bench/perf.py`. The baseline runs bench/_sdk_baseline.py in a separate
venv (.cache/bench-sdk-venv, created here if missing) so neither side imports the other.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import textwrap
import time
import venv
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SDK_VENV = ROOT / ".cache" / "bench-sdk-venv"
SDK_SPEC = "a2a-sdk[http-server]>=1,<2"
N = 300
WARMUP = 50
COLD_RUNS = 5
HEADERS = {"content-type": "application/json", "a2a-version": "1.0"}


def _send_body(i: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": i, "method": "SendMessage", "params": {"message": {
        "messageId": f"m-{i}", "role": "ROLE_USER", "parts": [{"text": "hello"}]}}}


async def _floor_ms() -> float:
    """CPU of the same client loop against a bare Starlette route: the harness's own share."""
    import httpx
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route

    async def echo(request: object) -> Response:
        return Response(b'{"jsonrpc":"2.0","id":1,"result":{}}', media_type="application/json")

    app = Starlette(routes=[Route("/", echo, methods=["POST"])])
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://floor") as client:
        for i in range(WARMUP):
            await client.post("/", json=_send_body(i), headers=HEADERS)
        start = time.process_time()
        for i in range(N):
            await client.post("/", json=_send_body(i), headers=HEADERS)
        return (time.process_time() - start) * 1000 / N


async def _kit_cpu() -> dict[str, float]:
    import httpx

    from a2akit.runtime import build_operations
    from a2akit.settings import Settings
    from handlers.jsonrpc_app import create_app

    app = create_app(build_operations(Settings(allow_anonymous=True)))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://kit") as client:
        async def send(i: int) -> dict[str, Any]:
            reply = (await client.post("/", json=_send_body(i), headers=HEADERS)).json()
            return reply["result"]["task"]

        task_id = ""
        for i in range(WARMUP):
            task_id = (await send(i))["id"]
        start = time.process_time()
        for i in range(N):
            await send(WARMUP + i)
        send_ms = (time.process_time() - start) * 1000 / N
        get = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task_id}}
        for _ in range(WARMUP):
            assert "result" in (await client.post("/", json=get, headers=HEADERS)).json()
        start = time.process_time()
        for _ in range(N):
            await client.post("/", json=get, headers=HEADERS)
        get_ms = (time.process_time() - start) * 1000 / N
    return {"send_ms": send_ms, "get_ms": get_ms}


_COLD = textwrap.dedent("""
    import json, resource, sys, time
    t0 = float(sys.argv[1])
    event = json.load(open(sys.argv[2]))
    event["headers"]["a2a-version"] = "1.0"
    event["body"] = sys.argv[3]
    from handlers.jsonrpc import handler
    class Ctx:
        function_name = "bench"; aws_request_id = "r-1"; memory_limit_in_mb = 512
        invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:bench"
        def get_remaining_time_in_millis(self): return 30000
    reply = handler(event, Ctx())
    wall = time.time() - t0
    assert reply["statusCode"] == 200 and "result" in json.loads(reply["body"]), reply
    rss = 0
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1])
    print(json.dumps({"wall_ms": wall * 1000, "rss_kb": rss,
                      "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
""")


def _kit_cold() -> dict[str, float]:
    env = {**os.environ, "A2A_ALLOW_ANONYMOUS": "true", "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("A2A_TABLE", None)
    event = str(ROOT / "tests" / "events" / "apigw_http_v2.json")
    runs = []
    for _ in range(COLD_RUNS):
        out = subprocess.run(
            [sys.executable, "-c", _COLD, repr(time.time()), event, json.dumps(_send_body(1))],
            cwd=ROOT, env=env, capture_output=True, text=True, check=True, timeout=60)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return {"cold_ms": statistics.median(r["wall_ms"] for r in runs),
            "rss_mb": statistics.median(r["maxrss_kb"] for r in runs) / 1024}


def _ensure_sdk_venv() -> Path | None:
    python = SDK_VENV / "bin" / "python"
    probe = [str(python), "-c", "import a2a, starlette, mangum"]
    if python.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    try:
        if not python.exists():
            venv.create(SDK_VENV, with_pip=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", SDK_SPEC, "mangum", "httpx"],
                       check=True, timeout=600)
    except (subprocess.SubprocessError, OSError) as exc:
        print(f"baseline: cannot install {SDK_SPEC}: {exc}", file=sys.stderr)
        return None
    return python


def _sdk() -> dict[str, Any] | None:
    python = _ensure_sdk_venv()
    if python is None:
        return None
    script = ROOT / "bench" / "_sdk_baseline.py"
    event = ROOT / "tests" / "events" / "apigw_http_v2.json"
    out = subprocess.run([str(python), str(script), str(N), str(WARMUP), str(COLD_RUNS),
                          str(event)], cwd=script.parent, capture_output=True, text=True,
                         timeout=600, check=False)
    if out.returncode != 0:
        print("baseline failed:\n" + out.stderr[-3000:], file=sys.stderr)
        return None
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    floor = asyncio.run(_floor_ms())
    kit = {**asyncio.run(_kit_cpu()), **_kit_cold()}
    sdk = _sdk()
    rows = [("CPU per SendMessage (ms)", "send_ms", "<= 0.75 ms"),
            ("CPU per GetTask (ms)", "get_ms", ""),
            ("Lambda cold start (ms, median of 5)", "cold_ms", "<= 0.25x SDK"),
            ("RSS after start (MB)", "rss_mb", "<= 0.6x SDK")]
    version = (sdk or {}).get("version", "not measured")
    print(f"\nN={N} calls after {WARMUP} warm-up; baseline a2a-sdk {version}\n")
    print(f"{'metric':38} {'kit':>10} {'a2a-sdk':>10} {'kit/sdk':>8}  target")
    for label, key, target in rows:
        mine = kit[key]
        theirs = (sdk or {}).get(key)
        ratio = f"{mine / theirs:8.2f}" if theirs else f"{'-':>8}"
        shown = f"{theirs:10.2f}" if theirs else f"{'n/a':>10}"
        print(f"{label:38} {mine:10.2f} {shown} {ratio}  {target}")
    print(f"\nCPU includes the in-process httpx client and ASGI transport: the same loop against"
          f" a bare Starlette route costs {floor:.2f} ms per call.")
    for label, key in (("SendMessage", "send_ms"), ("GetTask", "get_ms")):
        net = f"kit {kit[key] - floor:.2f} ms"
        if sdk:
            net += f", a2a-sdk {sdk[key] - floor:.2f} ms"
        print(f"  {label} net of that: {net}")
    if sdk is None:
        print("\nbaseline not measured (see stderr)")


if __name__ == "__main__":
    main()
