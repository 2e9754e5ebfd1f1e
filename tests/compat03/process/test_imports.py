"""The 0.3 modules load only where 0.3 is served: a 1.0 request through the Lambda front door
loads neither a2akit.compat03 nor the 0.3 generated code (nor grpc), and the gRPC server
module loads them when it builds its services, not when it is imported."""

from __future__ import annotations

import subprocess
import sys

from tests.support.processes import ROOT

ENV = {"A2A_ALLOW_ANONYMOUS": "true", "PATH": ""}


def _loaded(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True,
                         capture_output=True, text=True, env=ENV).stdout
    return out.strip().splitlines()[-1].split(",")


def _old(modules: list[str]) -> list[str]:
    return [m for m in modules
            if m.startswith("a2akit.compat03") or m.endswith("a2a_v0_3_pb2")
            or m == "grpc_service.compat03"]


def test_a_10_request_loads_no_03_module() -> None:
    code = (
        "import sys, handlers.jsonrpc as door; "
        "from starlette.testclient import TestClient; "
        "body = {'jsonrpc': '2.0', 'id': 1, 'method': 'SendMessage', 'params': {'message': "
        "{'messageId': 'm', 'role': 'ROLE_USER', 'parts': [{'text': 'hi'}]}}}; "
        "reply = TestClient(door.app).post('/', json=body, headers={'A2A-Version': '1.0'}); "
        "assert reply.json()['result']['task']['status']['state'] == 'TASK_STATE_COMPLETED'; "
        "print(','.join(sorted(sys.modules)))")
    loaded = _loaded(code)
    assert _old(loaded) == []
    assert "grpc" not in loaded


SERVE = """
import asyncio, sys
from a2akit.settings import Settings
from grpc_service import server

print(sorted(m for m in sys.modules if "compat03" in m or "v0_3" in m))


async def main():
    running = await server.serve(Settings(allow_anonymous=True), port=0, host="127.0.0.1")
    await running.shutdown(0)

asyncio.run(main())
print(",".join(sorted(sys.modules)))
"""


def test_the_grpc_server_loads_the_03_service_when_it_builds_its_services() -> None:
    out = subprocess.run([sys.executable, "-c", SERVE], cwd=ROOT, check=True,
                         capture_output=True, text=True, env=ENV).stdout
    before, after = out.strip().splitlines()[-2:]
    assert before == "[]"
    assert {"a2akit.compat03.calls", "a2akit.generated.a2a_v0_3_pb2",
            "grpc_service.compat03"} <= set(after.split(","))


def test_the_core_imports_no_03_module() -> None:
    """The 0.3 family is a layer over the core: only the composition (a2akit.runtime, which
    gives push delivery its 0.3 body) and the bindings import it, at any depth of a module."""
    import ast

    importers = []
    for path in sorted((ROOT / "a2akit").rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        if module.startswith("a2akit.compat03") or module == "a2akit.runtime":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom)
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            if any(name.startswith("a2akit.compat03") for name in names):
                importers.append(module)
    assert importers == []
