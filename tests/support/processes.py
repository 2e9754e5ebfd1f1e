"""Processes and ports for tests that start servers: a free port, waiting, stopping.

Only the standard library, so bench scripts can use it too.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import venv
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "ROOT",
    "ToolInstallError",
    "free_port",
    "fresh_python",
    "node_folder",
    "npm_reachable",
    "pypi_reachable",
    "python_env",
    "running",
    "stop_process",
    "tool_venv",
    "wait_for_output",
    "wait_for_port",
]

ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"


def free_port() -> int:
    """A loopback port nothing listens on at the moment of asking."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def python_env(**values: str) -> dict[str, str]:
    """The environment for a kit process: this one's, minus any A2A_ setting of the developer's
    shell (the test chooses them), with the repository importable."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("A2A_")}
    env["PYTHONPATH"] = str(ROOT)
    env.update(values)
    return env


def fresh_python(code: str, env: Mapping[str, str]) -> str:
    """The last line `code` prints in a new interpreter run from the repository with only
    `env` (an import-path check: what a door loads). Earlier lines are the kit's EMF output."""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True,
                          capture_output=True, text=True, env=dict(env))
    return done.stdout.strip().splitlines()[-1]


def _tail(log: Path | None) -> str:
    if log is None or not log.exists():
        return ""
    return "\n--- output ---\n" + log.read_text(errors="replace")[-4000:]


def wait_for_port(port: int, process: subprocess.Popen[bytes] | None = None, *,
                  timeout: float = 30.0, log: Path | None = None) -> None:
    """Return once something accepts connections on the loopback `port`. Raises RuntimeError
    if `process` exits first or `timeout` passes; the message ends with the `log` if given."""
    deadline = time.monotonic() + timeout
    while True:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"{process.args!r} exited with {process.returncode}" + _tail(log))
        try:
            with socket.create_connection((HOST, port), timeout=0.5):
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"nothing listened on port {port} within {timeout} s" + _tail(log))
        time.sleep(0.05)


def stop_process(process: subprocess.Popen[Any], timeout: float = 10.0) -> int:
    """Terminate the process (SIGTERM), kill it if it is still there after `timeout`; return
    its exit code. A process that already exited is only reaped."""
    if process.poll() is None:
        process.terminate()
    try:
        return process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait()


@contextlib.contextmanager
def running(args: Sequence[str], *, ports: Sequence[int], env: Mapping[str, str] | None = None,
            cwd: Path = ROOT, log: Path | None = None,
            timeout: float = 30.0) -> Iterator[subprocess.Popen[bytes]]:
    """Start `args`, wait until each of `ports` accepts connections, and stop the process on
    exit. Output goes to `log`, or nowhere."""
    with contextlib.ExitStack() as stack:
        output = stack.enter_context(log.open("wb")) if log is not None else subprocess.DEVNULL
        process = subprocess.Popen(args, cwd=cwd, env=env, stdout=output,
                                   stderr=subprocess.STDOUT)
        try:
            for port in ports:
                wait_for_port(port, process, timeout=timeout, log=log)
            yield process
        finally:
            stop_process(process)


def wait_for_output(log: Path, text: str, process: subprocess.Popen[bytes], *,
                    timeout: float = 30.0) -> None:
    """Return once `text` appears in the process's `log`. Raises RuntimeError if the process
    exits first or `timeout` passes."""
    deadline = time.monotonic() + timeout
    while text not in (log.read_text(errors="replace") if log.exists() else ""):
        if process.poll() is not None:
            raise RuntimeError(f"{process.args!r} exited with {process.returncode}" + _tail(log))
        if time.monotonic() > deadline:
            raise RuntimeError(f"{text!r} not printed within {timeout} s" + _tail(log))
        time.sleep(0.05)


def pypi_reachable(project: str) -> bool:
    """Whether PyPI answers for `project`: tests that install a tool into their own venv skip
    (with that reason) only when it does not."""
    try:
        with urllib.request.urlopen(f"https://pypi.org/simple/{project}/", timeout=10):
            return True
    except (OSError, urllib.error.URLError):
        return False


def npm_reachable(package: str) -> bool:
    """Whether the npm registry answers for `package` (as pypi_reachable, for Node tools)."""
    try:
        with urllib.request.urlopen(f"https://registry.npmjs.org/{package}", timeout=10):
            return True
    except (OSError, urllib.error.URLError):
        return False


class ToolInstallError(RuntimeError):
    """pip could not install a tool's venv; the message ends with pip's output."""


def tool_venv(folder: Path, requirements: Sequence[str], ready: Sequence[str]) -> Path:
    """The bin folder of a venv of its own at `folder` holding `requirements`: a tool the
    project does not depend on (the a2a-sdk, the SAM CLI), installed on first use. `ready` is
    a command, its program relative to bin, that succeeds once the venv is complete.

    Raises ToolInstallError when pip fails."""
    bin_dir = folder / "bin"
    probe = [str(bin_dir / ready[0]), *ready[1:]]
    if (bin_dir / ready[0]).exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return bin_dir
    if not (bin_dir / "python").exists():
        venv.create(folder, with_pip=True)
    install = subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "-q",
                              *requirements], capture_output=True, text=True, timeout=900)
    if install.returncode != 0:
        raise ToolInstallError(f"pip install {' '.join(requirements)} failed:\n"
                               f"{install.stderr[-3000:]}")
    return bin_dir


def node_folder(folder: Path, dependencies: Mapping[str, str]) -> Path:
    """The node_modules folder of a Node project of its own at `folder` holding `dependencies`
    (name -> exact version), installed with npm on first use and again whenever a pin changes.

    Raises ToolInstallError when npm is missing or fails."""
    modules = folder / "node_modules"
    manifest = json.dumps({"private": True, "dependencies": dict(dependencies)}, indent=2)
    installed = all(_node_version(modules / name) == version
                    for name, version in dependencies.items())
    if installed and (folder / "package.json").exists() and \
            (folder / "package.json").read_text() == manifest:
        return modules
    if shutil.which("npm") is None:
        raise ToolInstallError("npm is not on PATH: install Node.js 18+ (with npm) first")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "package.json").write_text(manifest)
    install = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--no-save",
                              "--prefix", str(folder)], cwd=folder, capture_output=True,
                             text=True, timeout=900)
    if install.returncode != 0:
        raise ToolInstallError(f"npm install {' '.join(dependencies)} failed:\n"
                               f"{install.stderr[-3000:]}")
    return modules


def _node_version(package: Path) -> str | None:
    try:
        version: str = json.loads((package / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None
    return version
