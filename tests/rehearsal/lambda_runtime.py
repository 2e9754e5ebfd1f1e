"""The Lambda bundle run as Lambda runs it, on this machine: a process per function whose
`sys.path` holds only the standard library, the bundle (as /var/task) and the AWS SDK the
runtime provides (boto3 is in Lambda's Python runtime, not in the bundle); it imports the
handler once and answers invocations one after another (events in, results out, one JSON
line each), as one execution environment does.

`python -I -S`: no environment variables of Python's, no user or site packages, so nothing of
the test's own environment can stand in for a file the bundle lacks.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
from pathlib import Path
from typing import IO, Any

__all__ = ["RUNTIME_MODULES", "Function", "runtime_sdk"]

# What Lambda's Python runtime brings: the AWS SDK and what it imports.
RUNTIME_MODULES = ("boto3", "botocore", "s3transfer", "jmespath", "dateutil", "six", "urllib3")

_DRIVER = r"""
import importlib, json, sys, time
task_root, sdk, target = sys.argv[1:4]
sys.path[:0] = [task_root, sdk]
module, attribute = target.rsplit(".", 1)


class Context:
    function_name = "rehearsal"
    aws_request_id = "rehearsal"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:111111111111:function:rehearsal"

    def __init__(self, seconds):
        self._end = time.monotonic() + seconds

    def get_remaining_time_in_millis(self):
        return max(0, int((self._end - time.monotonic()) * 1000))


out, sys.stdout = sys.stdout, sys.stderr  # what the handler prints goes to the log
handler = getattr(importlib.import_module(module), attribute)
out.write(json.dumps({"ready": True}) + "\n")
out.flush()
for line in sys.stdin:
    request = json.loads(line)
    if "probe" in request:
        from google.protobuf.internal import api_implementation
        answer = {"path": sys.path, "protobuf": api_implementation.Type(),
                  "files": {name: getattr(sys.modules.get(name), "__file__", None)
                            for name in request["probe"]}}
    else:
        answer = handler(request["event"], Context(request["seconds"]))
    out.write(json.dumps({"result": answer}) + "\n")
    out.flush()
"""


def runtime_sdk(folder: Path) -> Path:
    """A folder with the runtime's SDK (links to this environment's copies)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in RUNTIME_MODULES:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None, name
        origin = Path(spec.origin)
        source = origin.parent if origin.name == "__init__.py" else origin
        link = folder / source.name
        if not link.exists():
            link.symlink_to(source, target_is_directory=source.is_dir())
    return folder


class Function:
    """One execution environment of `handler` (module.attribute) from `task_root`."""

    def __init__(self, python: str, task_root: Path, sdk: Path, handler: str,
                 env: dict[str, str], log: Path) -> None:
        self.task_root = task_root
        self._log = log.open("wb")
        self.log_path = log
        self._process = subprocess.Popen(
            [python, "-I", "-S", "-c", _DRIVER, str(task_root), str(sdk), handler],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, env=env,
            cwd=task_root)
        self._read()  # the init phase: the import, settings, store client

    def invoke(self, event: dict[str, Any], seconds: float = 60.0) -> Any:
        return self._request({"event": event, "seconds": seconds})

    def probe(self, *modules: str) -> dict[str, Any]:
        """This environment's sys.path, protobuf's implementation, where `modules` came from."""
        answer: dict[str, Any] = self._request({"probe": list(modules)})
        return answer

    def _request(self, request: dict[str, Any]) -> Any:
        stdin: IO[bytes] | None = self._process.stdin
        assert stdin is not None
        stdin.write(json.dumps(request).encode() + b"\n")
        stdin.flush()
        return self._read()["result"]

    def _read(self) -> dict[str, Any]:
        stdout = self._process.stdout
        assert stdout is not None
        line = stdout.readline()
        if not line:
            self._process.wait(10)
            raise AssertionError(f"the function exited ({self._process.returncode}):\n"
                                 f"{self.log_path.read_text(errors='replace')[-3000:]}")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if self._process.stdout is not None:
            self._process.stdout.close()
        self._log.close()
