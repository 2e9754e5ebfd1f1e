"""Write a new agent project: `./dev new-agent PATH` (docs/your-agent.md).

    PATH/
      pyproject.toml              its dependencies; [tool.a2akit] agent = "<package>.agent:agent"
      README.md                   serve, test, deploy
      src/<package>/__init__.py
      src/<package>/agent.py      the agent: a working status, one artifact, completed
      tests/test_agent.py         the agent through the kit's JSON-RPC app, in process

The package is the folder's name as an identifier (`my-agent` -> `my_agent`). A PATH that
exists and is not an empty folder is refused, so nothing of the user's is overwritten.
Standard library only: it runs before the kit's environment exists.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

__all__ = ["NewAgentError", "main", "write_project"]

# The kit's checkout: the README's commands run from there.
KIT = Path(__file__).resolve().parents[1]

_PYPROJECT = '''\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "{name}"
version = "0.1.0"
description = "An A2A agent, served by the A2A AWS kit."
requires-python = ">=3.11"
# The agent's own dependencies (a model provider's SDK, a framework, its tools), pinned.
# The kit is not one of them: the kit's environment runs the agent (`./dev serve`,
# `./dev test-agent`), and where a dependency meets a package the kit pins, the kit's pin wins.
dependencies = []

[tool.a2akit]
# What the kit serves: module:attribute (an agent, or a class or factory that makes one).
agent = "{package}.agent:agent"

[tool.setuptools.packages.find]
where = ["src"]

[tool.pytest.ini_options]
testpaths = ["tests"]
'''

_AGENT = '''\
"""The agent: the kit calls `execute` once per message, with the request and a handle on the
task. Report progress through the handle (working, add_artifact, complete; or fail, reject,
ask for input) or answer with one message (`task.reply`)."""

from a2akit import RequestContext, TaskHandle


class Agent:
    name = "{title}"
    description = "Answers every message with a greeting."

    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        await task.working("Thinking")
        await task.add_artifact(f"Hello! You said: {{context.text}}", name="answer")
        await task.complete()


agent = Agent()
'''

_TEST = '''\
"""The agent through the kit, in process: the kit's JSON-RPC app over its in-memory store,
called over HTTP as a client would (no server, no network)."""

import asyncio
from typing import Any

import httpx
from a2akit.runtime import build_operations
from a2akit.settings import Settings
from http_service.app import create_app

from {package}.agent import agent


def send_message(text: str) -> dict[str, Any]:
    """SendMessage over JSON-RPC; the JSON-RPC response."""

    async def call() -> dict[str, Any]:
        operations = build_operations(Settings(allow_anonymous=True), agent=agent)
        transport = httpx.ASGITransport(app=create_app(operations))
        try:
            async with httpx.AsyncClient(transport=transport, base_url="http://agent") as client:
                response = await client.post("/", headers={{"A2A-Version": "1.0"}}, json={{
                    "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                    "params": {{"message": {{"messageId": "m-1", "role": "ROLE_USER",
                                           "parts": [{{"text": text}}]}}}}}})
            return dict(response.json())
        finally:
            await operations.close()

    return asyncio.run(call())


def test_the_agent_answers() -> None:
    task = send_message("hello")["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{{"text": "Hello! You said: hello"}}]
'''

_README = '''\
# {name}

An [A2A](https://a2a-protocol.org) agent, served by the A2A AWS kit over JSON-RPC,
HTTP+JSON and gRPC. The agent is `src/{package}/agent.py`; its dependencies are in
`pyproject.toml`. Run the commands below from the kit's checkout ({kit}).

Serve it on loopback (installs this project and its dependencies into the kit's
environment first; a second start skips that):

    A2A_AGENT_PROJECT={path} ./dev serve

Test it (its tests, run with the kit's environment):

    ./dev test-agent {path}

Deploy it to AWS:

    ./dev cdk deploy -c a2a:agentProject={path}

Secrets and settings the agent reads at run time (`a2akit.secret`, `a2akit.parameter`), and
the rest of the path: the kit's docs/your-agent.md.
'''


class NewAgentError(Exception):
    """The project cannot be written there; the message says why, in one line."""


def package_name(folder: str) -> str:
    """`My-Agent` -> `my_agent`. Raises NewAgentError when no identifier comes of it."""
    package = re.sub(r"[-. ]+", "_", folder).lower()
    if not package.isidentifier() or not package.isascii():
        raise NewAgentError(f"cannot make a Python package name of {folder!r}: name the folder "
                            "with letters, digits, - or _, starting with a letter")
    return package


def write_project(path: Path) -> list[Path]:
    """Write the project at `path` (a new or empty folder); the files written. Raises
    NewAgentError for a path that exists and is not an empty folder."""
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise NewAgentError(f"{path} exists and is not an empty folder; pick a new one")
    name = path.name
    package = package_name(name)
    values = {"name": name, "package": package, "path": path, "kit": KIT,
              "title": name.replace("-", " ").replace("_", " ").capitalize()}
    files = {
        path / "pyproject.toml": _PYPROJECT,
        path / "README.md": _README,
        path / "src" / package / "__init__.py": "",
        path / "src" / package / "agent.py": _AGENT,
        path / "tests" / "test_agent.py": _TEST,
    }
    for file, template in files.items():
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(template.format(**values), encoding="utf-8")
    return list(files)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", type=Path, help="a new (or empty) folder")
    args = parser.parse_args(argv)
    path = args.path.expanduser().absolute()
    try:
        write_project(path)
    except (NewAgentError, OSError) as exc:
        print(f"a2akit: new-agent: {exc}", file=sys.stderr, flush=True)
        return 2
    print(f"Wrote the agent project {path}. Next, from {KIT}:\n"
          f"  A2A_AGENT_PROJECT={path} ./dev serve\n"
          f"  ./dev test-agent {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
