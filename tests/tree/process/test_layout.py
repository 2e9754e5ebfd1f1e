"""The package layout holds: module-level imports between the kit's own modules form no
circle (imports point one way: messages, core, bindings), and the Lambda front door's
import path loads none of the dependencies only other entry points need."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.processes import ROOT
from tests.tree.modules import kit_modules

PACKAGES = ("a2akit", "handlers", "grpc_service")


def _top_level_imports(path: Path, module: str, known: set[str]) -> set[str]:
    """The kit's modules `path` imports when it is imported: not those imported inside
    functions (on first use) or under `if TYPE_CHECKING:`."""
    found: set[str] = set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]

    def visit(statements: list[ast.stmt]) -> None:
        for node in statements:
            if isinstance(node, ast.If):
                test = node.test
                if isinstance(test, ast.Name) and test.id == "TYPE_CHECKING":
                    continue
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                for handler in node.handlers:
                    visit(handler.body)
                visit(node.orelse)
                visit(node.finalbody)
            elif isinstance(node, ast.With):
                visit(node.body)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names if alias.name in known)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                for alias in node.names:
                    if f"{base}.{alias.name}" in known:
                        found.add(f"{base}.{alias.name}")
                    elif base in known:
                        found.add(base)

    visit(ast.parse(path.read_text()).body)
    found.discard(module)
    return found


def test_no_import_circle() -> None:
    modules = kit_modules(PACKAGES)
    known = set(modules)
    graph = {name: _top_level_imports(path, name, known) for name, path in modules.items()}
    done: set[str] = set()

    def walk(name: str, trail: list[str]) -> None:
        if name in trail:
            raise AssertionError("import circle: " + " -> ".join([*trail[trail.index(name):],
                                                                  name]))
        if name in done:
            return
        for imported in sorted(graph[name]):
            walk(imported, [*trail, name])
        done.add(name)

    for name in sorted(graph):
        walk(name, [])


def test_the_front_door_loads_no_other_entry_points_dependencies() -> None:
    code = ("import sys, handlers.jsonrpc; "
            "print(sorted({m.split('.')[0] for m in sys.modules}))")
    loaded = subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True,
                            capture_output=True, text=True,
                            env={"A2A_ALLOW_ANONYMOUS": "true", "PATH": ""}).stdout
    # pip and tomllib: the agent project's install and pyproject reading, which only
    # A2A_AGENT_PROJECT brings in.
    for heavy in ("grpc", "boto3", "botocore", "httpx", "jwt", "cryptography", "uvicorn",
                  "pip", "tomllib"):
        assert f"'{heavy}'" not in loaded, heavy


# What the framework adapters (a2akit/adapters) import: the OpenAI Agents SDK's package is
# `agents`. Only an adapter module loads them, and only an agent that names it loads that.
FRAMEWORKS = ("langgraph", "langchain_core", "langsmith", "strands", "agents", "openai")


@pytest.mark.parametrize("door", ["handlers.jsonrpc", "handlers.stream"])
def test_the_doors_load_no_agent_framework(door: str) -> None:
    code = (f"import sys, {door}, a2akit.adapters; "
            "print(sorted({m.split('.')[0] for m in sys.modules}), "
            "sorted(m for m in sys.modules if m.startswith('a2akit.adapters.')))")
    loaded = subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True,
                            capture_output=True, text=True,
                            env={"A2A_ALLOW_ANONYMOUS": "true", "PATH": ""}).stdout
    top, adapters = loaded.strip().splitlines()[-1].split("] [")
    for framework in FRAMEWORKS:
        assert f"'{framework}'" not in top, framework
    assert adapters == "]", adapters


@pytest.mark.parametrize("door", ["handlers.jsonrpc", "handlers.stream"])
def test_the_doors_load_no_a2a_client_even_for_an_agent_that_calls_peers(door: str) -> None:
    """a2akit.peers imports the official A2A SDK (`a2a`, with pydantic, httpx, grpc) on an
    agent's first call to a peer: a door that imports such an agent for its card loads none
    of it (docs/peers.md)."""
    code = (f"import sys, {door}, a2akit.peers, a2akit.examples.delegating; "
            "print(sorted({m.split('.')[0] for m in sys.modules}))")
    loaded = subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True,
                            capture_output=True, text=True,
                            env={"A2A_ALLOW_ANONYMOUS": "true", "PATH": ""}).stdout
    for heavy in ("a2a", "pydantic", "httpx", "grpc"):
        assert f"'{heavy}'" not in loaded.strip().splitlines()[-1], heavy


def test_the_http_json_binding_loads_on_its_first_request() -> None:
    """Its module and route table stay out of the JSON-RPC front door's cold start
    (docs/performance.md), and come in with the first HTTP+JSON request."""
    code = ("import sys, handlers.jsonrpc as door; "
            "from starlette.testclient import TestClient; "
            "before = sorted(m for m in sys.modules if m.startswith('http_service.rest')); "
            "TestClient(door.app).get('/tasks', headers={'A2A-Version': '1.0'}); "
            "after = sorted(m for m in sys.modules if m.startswith('http_service.rest')); "
            "print(before, after)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True,
                         capture_output=True, text=True,
                         env={"A2A_ALLOW_ANONYMOUS": "true", "PATH": ""}).stdout
    assert out.split("\n")[0] == ("['http_service.rest_mount'] "
                                  "['http_service.rest', 'http_service.rest_mount', "
                                  "'http_service.rest_routes']")


def test_a_10_request_loads_nothing_of_03() -> None:
    """The 0.3 family (its codec, conversions, generated messages and route) stays out of a
    1.0 request's way, cold start included (issue 28: +3 % at most); the first 0.3 request
    brings it in."""
    code = ("import sys, handlers.jsonrpc as door; "
            "from starlette.testclient import TestClient; "
            "c = TestClient(door.app); "
            "body = '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendMessage\",\"params\":"
            "{\"message\":{\"messageId\":\"m\",\"role\":\"ROLE_USER\","
            "\"parts\":[{\"text\":\"x\"}]}}}'; "
            "assert 'TASK_STATE_COMPLETED' in c.post('/', content=body, headers={"
            "'A2A-Version': '1.0', 'content-type': 'application/json'}).text; "
            "loaded = lambda: sorted(m for m in sys.modules if 'compat03' in m "
            "or 'v0_3' in m or m == 'http_service.jsonrpc03'); "
            "print(loaded()); "
            "c.post('/', content='{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tasks/get\","
            "\"params\":{\"id\":\"x\"}}', headers={'content-type': 'application/json'}); "
            "print(loaded())")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True,
                         capture_output=True, text=True,
                         env={"A2A_ALLOW_ANONYMOUS": "true", "PATH": ""}).stdout.split("\n")
    out = [line for line in out if line.startswith("[")]  # not the metrics lines (EMF)
    assert out[0] == "[]"
    assert "'http_service.jsonrpc03'" in out[1] and "'a2akit.generated.a2a_v0_3_pb2'" in out[1]
