"""The bundle's scripts with `a2a:otel=true` (infra/bundle.py, infra/otel.py), run as Lambda runs
them, with a stand-in for the ADOT layer's `/opt/otel-instrument` (`ADOT_EXEC_WRAPPER`):

- `otel.sh` hands the command to the layer's wrapper, which puts the layer's packages first on
  the path, and then puts the task root back in front: the bundle's protobuf wins over the
  layer's older one, which the kit's generated code cannot load;
- `run.sh` starts the door through it when A2A_OTEL=true and the wrapper is there, and under
  OpenTelemetry's own `opentelemetry-instrument` (what the layer's wrapper ends in) the door's
  spans reach the tracer provider it configured;
- without A2A_OTEL, or without the wrapper, `run.sh` starts the door as before.

The layer itself (its collector, its X-Ray export) is AWS's and is not here."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import google.protobuf
import httpx
import pytest

from infra.bundle import OTEL_SCRIPT, RUN_SCRIPT, write_scripts
from tests.stream.door import rpc
from tests.support.processes import ROOT, free_port, running, wait_for_output

pytestmark = pytest.mark.slow

_BIN = Path(sys.executable).parent  # python and opentelemetry-instrument
# The layer's packages: a protobuf the kit cannot use, as the layer's older one.
_LAYER_PROTOBUF = 'raise ImportError("the layer\'s protobuf")\n'
_WHICH_PROTOBUF = "import google.protobuf as p; print(p.__file__)"


def _task_root(tmp_path: Path) -> Path:
    """A Lambda task root: the bundle's scripts, the kit's packages and protobuf."""
    task = tmp_path / "task"
    task.mkdir()
    write_scripts(task)
    for package in ("a2akit", "handlers", "http_service"):
        (task / package).symlink_to(ROOT / package)
    (task / "google").symlink_to(Path(google.protobuf.__file__).parents[1])
    return task


def _wrapper(tmp_path: Path, then: str) -> tuple[Path, Path]:
    """A stand-in for the layer's /opt/otel-instrument: it records its arguments, puts the
    layer's packages first on PYTHONPATH as the layer's does, then `then` "$@". Returns the
    wrapper and the file it records to."""
    layer = tmp_path / "layer" / "python"
    (layer / "google" / "protobuf").mkdir(parents=True)
    (layer / "google" / "protobuf" / "__init__.py").write_text(_LAYER_PROTOBUF)
    record = tmp_path / "wrapper-args"
    wrapper = tmp_path / "otel-instrument"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > "{record}"\n'
                       f'export PYTHONPATH="{layer}${{PYTHONPATH:+:$PYTHONPATH}}"\n'
                       f'exec {then} "$@"\n')
    wrapper.chmod(0o755)
    return wrapper, record


def _env(task: Path, **values: str) -> dict[str, str]:
    """Lambda's environment for the bundle: no PYTHONPATH of the developer's, no A2A_
    setting but the test's."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("A2A_", "OTEL_")) and key != "PYTHONPATH"}
    return {**env, "LAMBDA_TASK_ROOT": str(task), "PATH": f"{_BIN}:{os.environ['PATH']}",
            **values}


def test_otel_sh_runs_the_command_under_the_wrapper_with_the_bundle_first(
        tmp_path: Path) -> None:
    task = _task_root(tmp_path)
    wrapper, record = _wrapper(tmp_path, then="")
    env = _env(task, ADOT_EXEC_WRAPPER=str(wrapper))
    # As Lambda runs an exec wrapper: the runtime's command as its arguments.
    command = [sys.executable, "-c", _WHICH_PROTOBUF]
    done = subprocess.run([str(task / OTEL_SCRIPT), *command], env=env, cwd=tmp_path,
                          capture_output=True, text=True, check=True)
    assert Path(done.stdout.strip()).is_relative_to(task / "google")
    assert record.read_text().splitlines() == [str(task / OTEL_SCRIPT), "--bundle-first",
                                               *command]
    # The layer's wrapper alone leaves its packages first, and the kit could not load.
    alone = subprocess.run([str(wrapper), *command], env=env, cwd=tmp_path,
                           capture_output=True, text=True, check=False)
    assert alone.returncode != 0 and "the layer's protobuf" in alone.stderr


def test_run_sh_starts_the_door_under_opentelemetry_instrument_and_its_spans_are_exported(
        tmp_path: Path) -> None:
    if shutil.which("opentelemetry-instrument", path=str(_BIN)) is None:
        pytest.fail("opentelemetry-instrument is missing: the dev extra has opentelemetry-distro")
    task = _task_root(tmp_path)
    # The layer's wrapper ends in OpenTelemetry's: `opentelemetry-instrument "$@"`, which
    # configures the SDK (here its console exporter instead of the layer's collector).
    wrapper, record = _wrapper(tmp_path, then="opentelemetry-instrument")
    port = free_port()
    env = _env(task, ADOT_EXEC_WRAPPER=str(wrapper), A2A_OTEL="true", PORT=str(port),
               A2A_ALLOW_ANONYMOUS="true", OTEL_SERVICE_NAME="door-under-test",
               OTEL_PROPAGATORS="tracecontext", OTEL_TRACES_EXPORTER="console",
               OTEL_METRICS_EXPORTER="none", OTEL_LOGS_EXPORTER="none",
               OTEL_BSP_SCHEDULE_DELAY="100")
    log = tmp_path / "door.log"
    with running(["sh", str(task / RUN_SCRIPT)], ports=[port], env=env, cwd=task,
                 log=log) as process:
        reply = httpx.post(f"http://127.0.0.1:{port}/", json=rpc("SendMessage", "hi"),
                           headers={"A2A-Version": "1.0"}, timeout=30)
        assert reply.status_code == 200 and "result" in reply.json(), reply.text
        wait_for_output(log, '"name": "SendMessage"', process)
    assert record.read_text().splitlines() == [
        str(task / OTEL_SCRIPT), "--bundle-first", "python", "-m", "handlers.stream"]
    spans = log.read_text()
    assert '"service.name": "door-under-test"' in spans
    assert '"a2a.binding": "JSON-RPC"' in spans
    assert '"name": "a2a.store.write"' in spans  # its child spans too


@pytest.mark.parametrize("otel", [{}, {"A2A_OTEL": "true", "ADOT_EXEC_WRAPPER": "/nowhere"}],
                         ids=["spans-off", "no-layer"])
def test_run_sh_starts_the_door_as_before_without_spans_or_without_the_layer(
        tmp_path: Path, otel: dict[str, str]) -> None:
    task = _task_root(tmp_path)
    wrapper, record = _wrapper(tmp_path, then="")
    port = free_port()
    env = _env(task, PORT=str(port), A2A_ALLOW_ANONYMOUS="true",
               **{"ADOT_EXEC_WRAPPER": str(wrapper), **otel})
    with running(["sh", str(task / RUN_SCRIPT)], ports=[port], env=env, cwd=task,
                 log=tmp_path / "door.log"):
        card = httpx.get(f"http://127.0.0.1:{port}/.well-known/agent-card.json", timeout=10)
    assert card.status_code == 200
    assert not record.exists()
