"""An agent project outside the kit's tree, as a user keeps one: `./dev install-agent`,
`./dev serve` with A2A_AGENT_PROJECT, `./dev new-agent` and `./dev test-agent`, each run as the
user runs it (bash, separate processes, real ports).

The projects are installed into the kit's own .venv, as `./dev serve` does: each test
uninstalls what it installed (the project, and its dependency when it was not there before)
and removes the install marker, so the environment ends as it began.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from a2akit.agent_project import load_project
from a2akit.runtime import STARTUP_EXIT_CODE
from scripts.install_agent import conflict_line, kit_pins, marker
from tests.scripts.processes import ROOT, Start, clean_env, send_hello

pytestmark = pytest.mark.slow

DEV = ["bash", str(ROOT / "dev")]
# A small pure-Python package the kit does not depend on: its output is the agent's answer.
DEPENDENCY, VERSION = "cowsay", "6.1"

_AGENT = '''\
import cowsay

from a2akit import RequestContext, TaskHandle


class CowAgent:
    name = "Cow"

    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        await task.add_artifact(cowsay.get_output_string("cow", context.text), name="moo")
        await task.complete()


agent = CowAgent()
'''


def _installed(name: str) -> bool:
    try:
        importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


@pytest.fixture
def installs(tmp_path: Path) -> Iterator[list[str]]:
    """Append the distributions a test installs; they are uninstalled after it (those that
    were already there are left), and the install markers of tmp_path's projects removed."""
    before = {name for name in (DEPENDENCY,) if _installed(name)}
    names: list[str] = []
    yield names
    leave = [name for name in names if name not in before]
    if leave:
        subprocess.run([sys.executable, "-m", "pip", "uninstall", "--yes", "--quiet", *leave],
                       check=True, capture_output=True, timeout=120)
    for project in tmp_path.iterdir():
        if (project / "pyproject.toml").is_file():
            marker(load_project(project)).unlink(missing_ok=True)


def _cow_project(root: Path) -> Path:
    (root / "src" / "cow_agent").mkdir(parents=True)
    (root / "src" / "cow_agent" / "__init__.py").write_text("")
    (root / "src" / "cow_agent" / "agent.py").write_text(_AGENT)
    (root / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n'
        f'[project]\nname = "cow-agent"\nversion = "0.1.0"\n'
        f'dependencies = ["{DEPENDENCY}=={VERSION}"]\n'
        '[tool.setuptools.packages.find]\nwhere = ["src"]\n'
        '[tool.a2akit]\nagent = "cow_agent.agent:agent"\n')
    return root


def _dev(*args: str, env: dict[str, str] | None = None, cwd: Path = ROOT,
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*DEV, *args], cwd=cwd, env=env or clean_env(), capture_output=True,
                          text=True, timeout=300)


def _rest_send(url: str, text: str) -> dict[str, Any]:
    body = {"message": {"messageId": "rest-1", "role": "ROLE_USER", "parts": [{"text": text}]}}
    request = urllib.request.Request(url.rstrip("/") + "/message:send",
                                     data=json.dumps(body).encode(), headers={
                                         "Content-Type": "application/json",
                                         "A2A-Version": "1.0"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return dict(json.load(response)["task"])


def _answer(task: dict[str, Any]) -> str:
    """The text of a completed task's one artifact."""
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
    (artifact,) = task["artifacts"]
    (part,) = artifact["parts"]
    return str(part["text"])


def test_a_projects_dependency_answers_on_every_binding(tmp_path: Path, start: Start,
                                                        installs: list[str]) -> None:
    assert not any(pin.startswith(f"{DEPENDENCY}==") for pin in kit_pins()), (
        f"{DEPENDENCY} is a kit dependency now: pick another package for this test")
    project = _cow_project(tmp_path / "cow-agent")
    installs += ["cow-agent", DEPENDENCY]

    # ./dev serve with the project (a relative path, as typed in the kit's folder) installs
    # it first, saying what it installs.
    server = start([*DEV, "serve", "--port", "0", "--grpc-port", "0"],
                   clean_env(A2A_AGENT_PROJECT=os.path.relpath(project, ROOT)))
    assert server.wait_for("a2akit: installing", timeout=240) == (
        f"a2akit: installing the agent project cow-agent ({project}, editable) and its "
        f"dependencies into {ROOT / '.venv'}: {DEPENDENCY}=={VERSION}")
    grpc_address = server.wait_for("gRPC", timeout=240).split()[1]  # once pip is done
    url = server.wait_for("JSON-RPC").split()[-1]
    assert server.wait_for("Agent") == (
        f"Agent     cow_agent.agent:agent  (project {project})")

    answers = {"JSON-RPC": _answer(send_hello(url, "jsonrpc-1")["result"]["task"]),
               "HTTP+JSON": _answer(_rest_send(url, "hello"))}
    run = subprocess.run([sys.executable, "-m", "scripts.grpc_call", "hello", "--address",
                          grpc_address], cwd=ROOT, env=clean_env(), capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    answers["gRPC"] = _answer(json.loads(run.stdout)["task"])
    for binding, text in answers.items():
        # cowsay's drawing: the text in a speech bubble over the cow.
        assert "| hello |" in text and "^__^" in text and "(oo)" in text, (binding, text)
    assert len(set(answers.values())) == 1

    # Nothing changed since: the next install (./dev serve's too) is skipped at once.
    begun = time.monotonic()
    run = _dev("install-agent", str(project))
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
    assert time.monotonic() - begun < 10


def test_a_conflict_with_a_kit_pin_is_one_line_naming_both(tmp_path: Path) -> None:
    pins = dict(pin.split("==") for pin in kit_pins())
    project = tmp_path / "old-protobuf"
    project.mkdir()
    (project / "requirements.txt").write_text("protobuf<5\n")
    run = _dev("install-agent", str(project))
    assert run.returncode == 2
    assert run.stderr.splitlines() == [
        f"a2akit: cannot install the agent project: {project}: protobuf<5 conflicts with the "
        f"kit's pin protobuf=={pins['protobuf']} (requirements.lock); loosen the project's "
        "requirement"]


def test_a_pyproject_projects_conflict_names_who_wants_the_other_version() -> None:
    # pip's resolver report, as pip 26 prints it for a pyproject project.
    report = """ERROR: Cannot install my-agent==0.1 because these package versions have \
conflicting dependencies.

The conflict is caused by:
    my-agent 0.1 depends on protobuf<5
    The user requested (constraint) protobuf==7.36.2

To fix this you could try to:
"""
    assert conflict_line(report) == (
        "protobuf<5 (from my-agent 0.1) conflicts with the kit's pin protobuf==7.36.2 "
        "(requirements.lock); loosen the project's requirement")
    assert conflict_line("ERROR: No matching distribution found for nothing-here") is None


def test_a_new_agent_passes_its_own_test_and_serves(tmp_path: Path, start: Start,
                                                    installs: list[str]) -> None:
    installs.append("new-agent")
    # Run from another folder with a relative path, as a user in their own workspace would.
    run = _dev("new-agent", "new-agent", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    project = tmp_path / "new-agent"
    readme = (project / "README.md").read_text()
    for command in (f"A2A_AGENT_PROJECT={project} ./dev serve", f"./dev test-agent {project}",
                    f"./dev cdk deploy -c a2a:agentProject={project}"):
        assert command in readme

    run = _dev("test-agent", str(project))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed" in run.stdout

    server = start([*DEV, "serve", "--port", "0", "--grpc-port", "0"],
                   clean_env(A2A_AGENT_PROJECT=str(project)))
    url = server.wait_for("JSON-RPC").split()[-1]
    task = send_hello(url, "new-1")["result"]["task"]
    assert _answer(task) == "Hello! You said: hello"

    # A folder that is not empty is never written into.
    run = _dev("new-agent", str(project))
    assert run.returncode == STARTUP_EXIT_CODE
    assert run.stderr.splitlines() == [
        f"a2akit: new-agent: {project} exists and is not an empty folder; pick a new one"]
