"""Run the repository's commands as a user does: separate processes, read what they print."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support.messages import send_params
from tests.support.processes import stop_process

ROOT = Path(__file__).resolve().parents[2]


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without the kit's or AWS's variables, plus `extra`."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("A2A_", "AWS_", "GRPC_"))}
    env.update(PYTHONPATH=str(ROOT), **extra)
    return env


def send_hello(url: str, message_id: str, **options: Any) -> dict[str, Any]:
    """POST a SendMessage of "hello" to a started server as the README's curl line does
    (`options` as for send_params); the JSON-RPC reply."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
            "params": send_params(message_id=message_id, **options)}
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={
        "Content-Type": "application/json", "A2A-Version": "1.0"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return dict(json.load(response))


class Running:
    """A started process whose stdout is read line by line in a thread."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def wait_for(self, predicate: str, timeout: float = 60) -> str:
        """The first line (from now on) that contains `predicate`; fails on exit or timeout."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no line with {predicate!r} in {timeout} s: "
                                     f"{self.lines}") from None
            if line is None:
                self.process.wait()
                stderr = self.process.stderr.read() if self.process.stderr else ""
                raise AssertionError(f"exited {self.process.returncode} before {predicate!r}: "
                                     f"{self.lines}\n{stderr}")
            self.lines.append(line)
            if predicate in line:
                return line

    def stop(self) -> None:
        stop_process(self.process, timeout=15)
        self._reader.join(timeout=5)
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()


Start = Callable[[list[str], dict[str, str]], Running]
