"""Build the Lambda code folder with pip for the Lambda platform (no Docker), from the lock.

    python -m infra.bundle [DIR]      # default: build/lambda

The dependencies are exactly the lock's (`requirements.lock`, infra/lock.py): pinned
versions, every file checked against its SHA-256, nothing resolved at build time. A build
leaves a stamp next to the folder (`DIR.stamp`): the hash of the lock, the kit's code, this
recipe and the options. While it matches, the folder is reused as it is, so synth runs pip
only when the lock or the code changed, and works offline once the folder exists.

The folder ships bytecode when a Python of the runtime's version (3.13) is at hand: Lambda's
code folder is read-only, so without it every cold start (and every SnapStart snapshot)
compiles the kit and its dependencies again. The bytecode is checked by hash, not by the
sources' times, which a zip does not keep reliably; without such a Python the folder ships
sources only.

With an agent project (infra/agent_code.py), the folder also holds the project's packages
and the lock's `agent` group, from the project's own lock (infra/project_lock.py).

Lambda refuses a function whose code, unzipped, is over 250 MB (its layers included):
`check_size` says so at build and at synth, naming the largest packages.

Raises `BundleError` when pip fails, `BundleTooLargeError` past Lambda's limit.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .agent_code import AgentCode
from .lock import LOCK, PLATFORMS, PYTHON_VERSION, read_lock, requirements_text
from .project_lock import AGENT_GROUP

_RUNTIME_VERSION = (3, 13)  # infra/jsonrpc_api.py: RUNTIME; the lock's PYTHON_VERSION
__all__ = ["ADOT_WRAPPER", "DEFAULT_DIR", "LAMBDA_UNZIPPED_LIMIT", "OTEL_SCRIPT", "PACKAGES",
           "RUN_SCRIPT", "TASK_ROOT", "BundleError", "BundleTooLargeError", "build_bundle",
           "bundle_groups", "check_size", "compile_bytecode", "native_platform",
           "runtime_python", "write_scripts"]

_ROOT = Path(__file__).resolve().parent.parent
TASK_ROOT = "/var/task"  # where Lambda unpacks the folder
DEFAULT_DIR = _ROOT / "build" / "lambda"  # build/ is git-ignored
# Lambda's quota for a function's code and layers, unzipped (262,144,000 bytes). The door's
# Lambda Web Adapter layer takes about 5 MB of it; with a2a:otel=true the ADOT Python layer
# takes about 57 MB more (59,807,429 bytes for version 7 of its x86 build, as one public
# project measured it; not measured here).
LAMBDA_UNZIPPED_LIMIT = 250 * 1024 * 1024
_LAYER_ALLOWANCE = 5 * 1024 * 1024
_OTEL_LAYER_ALLOWANCE = 64 * 1024 * 1024

# The kit's own packages the handlers import.
PACKAGES = ("a2akit", "handlers", "http_service")
# The streaming door's handler: the Lambda Web Adapter (AWS_LAMBDA_EXEC_WRAPPER=/opt/bootstrap)
# runs it to start the HTTP server it forwards invocations to (infra/jsonrpc_api.py).
RUN_SCRIPT = "run.sh"
# With a2a:otel=true (infra/otel.py): the exec wrapper of the functions that run the kit, and
# what run.sh starts the door's app through, since the adapter holds the door's exec wrapper.
OTEL_SCRIPT = "otel.sh"
# The ADOT layer's exec wrapper; the scripts read ADOT_EXEC_WRAPPER first (tests point it at
# a stand-in).
ADOT_WRAPPER = "/opt/otel-instrument"
_RUN_SCRIPT_TEXT = f"""#!/bin/sh
# Started by the Lambda Web Adapter: the JSON-RPC app on 127.0.0.1:$PORT (docs/public-door.md).
export PYTHONPATH="$LAMBDA_TASK_ROOT${{PYTHONPATH:+:$PYTHONPATH}}"
# Spans on (A2A_OTEL) and the ADOT layer's wrapper at hand (a2a:otel=true): the adapter holds
# the exec wrapper, so the app starts through the layer's from here (docs/observability.md).
case "$A2A_OTEL" in
[Tt][Rr][Uu][Ee])
    if [ -x "${{ADOT_EXEC_WRAPPER:-{ADOT_WRAPPER}}}" ]; then
        exec "$LAMBDA_TASK_ROOT/{OTEL_SCRIPT}" python -m handlers.stream
    fi ;;
esac
exec python -m handlers.stream
"""
_OTEL_SCRIPT_TEXT = f"""#!/bin/sh
# a2a:otel=true (docs/observability.md, "In the stack"): run the command under the ADOT layer's
# exec wrapper, with the bundle's packages ahead of the layer's. Lambda runs this script as the
# exec wrapper of the functions that run the kit, run.sh runs it for the door's app.
#
# The layer's wrapper puts its own packages first on PYTHONPATH and starts the command under
# opentelemetry-instrument, whose SDK imports them at start (its OTLP exporter: protobuf)
# before the kit does; the kit's generated code needs the lock's protobuf, newer than theirs.
# So the wrapper runs this script again (--bundle-first), which puts the task root back in
# front, where Lambda has it without a wrapper, and runs the command.
if [ "$1" = --bundle-first ]; then
    shift
    export PYTHONPATH="$LAMBDA_TASK_ROOT${{PYTHONPATH:+:$PYTHONPATH}}"
    exec "$@"
fi
exec "${{ADOT_EXEC_WRAPPER:-{ADOT_WRAPPER}}}" "$LAMBDA_TASK_ROOT/{OTEL_SCRIPT}" --bundle-first "$@"
"""


class BundleError(RuntimeError):
    """pip could not install the Lambda dependencies; the message carries its output."""


class BundleTooLargeError(BundleError):
    """The folder is over Lambda's unzipped limit; one line naming the largest packages."""


def bundle_groups(*, jwt: bool, push: bool) -> tuple[str, ...]:
    """The lock's groups a bundle installs: the runtime dependencies minus boto3 (in the
    Lambda runtime) and grpcio; PyJWT and cryptography for a2a:auth=jwt (about 15 MB,
    imported only with that scheme); httpx for the push dispatcher (a2a:push=true)."""
    return ("lambda", *(("jwt",) if jwt else ()), *(("push",) if push else ()))


def native_platform() -> str:
    """The lock's platform for this machine (the deploy rehearsal builds for it)."""
    wanted = f"manylinux2014_{platform.machine()}"
    if wanted not in PLATFORMS:
        raise BundleError(f"the lock has no files for {wanted}; it has {', '.join(PLATFORMS)}")
    return wanted


def _stamp(groups: tuple[str, ...], pip_platform: str, lock: Path,
           agent: AgentCode | None) -> str:
    """What the folder is made from: the lock, the options, this recipe, the kit's code and
    the agent project's."""
    digest = hashlib.sha256()
    for part in (lock.read_bytes(), " ".join(groups).encode(), pip_platform.encode(),
                 Path(__file__).read_bytes(), _RUN_SCRIPT_TEXT.encode(),
                 _OTEL_SCRIPT_TEXT.encode(),
                 (agent.digest() if agent else "").encode()):
        digest.update(hashlib.sha256(part).digest())
    for package in PACKAGES:
        for path in sorted((_ROOT / package).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                digest.update(str(path.relative_to(_ROOT)).encode() + b"\0")
                digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _size(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def check_size(folder: Path, *, otel: bool = False) -> int:
    """The folder's unzipped size in bytes. Raises BundleTooLargeError, naming the largest
    top-level packages, when it and the door's layers (the adapter's, and the ADOT layer's
    with `otel`) would pass Lambda's limit."""
    size = _size(folder)
    layers = _LAYER_ALLOWANCE + (_OTEL_LAYER_ALLOWANCE if otel else 0)
    if size + layers <= LAMBDA_UNZIPPED_LIMIT:
        return size
    parts = sorted(((_size(path) if path.is_dir() else path.stat().st_size, path.name)
                    for path in folder.iterdir()), reverse=True)
    largest = ", ".join(f"{name} {part / 2**20:.0f} MB" for part, name in parts[:5])
    with_layers = "the adapter's and the ADOT layer" if otel else "the adapter's layer"
    raise BundleTooLargeError(
        f"the Lambda bundle is {size / 2**20:.0f} MB unzipped, over Lambda's 250 MB with "
        f"{with_layers}; largest: {largest}. Drop or slim the agent's dependencies "
        "(docs/your-agent.md#past-lambdas-250-mb)")


def build_bundle(target: Path = DEFAULT_DIR, *, jwt: bool = True, push: bool = False,
                 native: bool = False, lock: Path = LOCK, agent: AgentCode | None = None) -> int:
    """Build `target` from the lock (with the JWT libraries unless `jwt` is false, with the
    push dispatcher's HTTP client if `push` is true), or reuse it if its stamp matches;
    return its size in bytes.

    `agent`: an agent project's code and, from `lock` (its a2akit.lock), its dependencies.
    `native` builds the same folder for this machine's architecture (still CPython 3.13,
    the lock's): the deploy rehearsal (tests/rehearsal) runs it here.

    Raises BundleError when pip fails, BundleTooLargeError past Lambda's limit."""
    groups = bundle_groups(jwt=jwt, push=push) + ((AGENT_GROUP,) if agent else ())
    pip_platform = native_platform() if native else PLATFORMS[0]
    stamp = _stamp(groups, pip_platform, lock, agent)
    stamp_file = target.with_name(f"{target.name}.stamp")
    if target.is_dir() and stamp_file.is_file() and stamp_file.read_text() == stamp:
        return _size(target)
    stamp_file.unlink(missing_ok=True)
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    _, entries = read_lock(lock)
    with tempfile.TemporaryDirectory() as scratch:
        requirements = Path(scratch) / "requirements.txt"
        requirements.write_text(requirements_text(entries, groups))
        command = [
            sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
            "--require-hashes", "--no-deps", "--only-binary=:all:",
            "--platform", pip_platform, "--implementation", "cp",
            "--python-version", PYTHON_VERSION, "--no-compile", "--target", str(target),
            "--requirement", str(requirements),
        ]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise BundleError(f"pip failed ({result.returncode}):\n{result.stderr}")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for package in PACKAGES:
        shutil.copytree(_ROOT / package, target / package, ignore=ignore)
    if agent is not None:
        agent.copy(target)
    write_scripts(target)
    # pip's metadata and the dependencies' console scripts are dead weight at run time for
    # the kit. An agent's dependencies may read their metadata (importlib.metadata: versions,
    # entry points such as OpenTelemetry's), so with an agent project it stays.
    metadata = [] if agent is not None else [*target.glob("*.dist-info")]
    for leftover in [*metadata, target / "bin"]:
        if leftover.is_dir():
            shutil.rmtree(leftover)
    check_size(target)  # before compiling: a bundle that cannot ship fails at once
    python = runtime_python()
    if python is not None:
        compile_bytecode(target, python)
    stamp_file.write_text(stamp)
    return _size(target)


def write_scripts(folder: Path) -> None:
    """The streaming door's handler script (RUN_SCRIPT) and the OpenTelemetry wrapper
    (OTEL_SCRIPT) into `folder`, executable (the zip keeps the mode)."""
    for name, text in ((RUN_SCRIPT, _RUN_SCRIPT_TEXT), (OTEL_SCRIPT, _OTEL_SCRIPT_TEXT)):
        path = folder / name
        path.write_text(text)
        path.chmod(0o755)


def runtime_python() -> str | None:
    """A Python of the Lambda runtime's version: this one, `python3.13` on the PATH, or one
    that pyenv installed."""
    if sys.version_info[:2] == _RUNTIME_VERSION:
        return sys.executable
    name = "python{}.{}".format(*_RUNTIME_VERSION)
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    candidates = [shutil.which(name),
                  *sorted(glob.glob(os.path.join(root, "versions", "{}.{}.*".format(
                      *_RUNTIME_VERSION), "bin", name)), reverse=True)]
    for candidate in candidates:
        if candidate is None:
            continue
        # A version manager's shim can be on the PATH without that version being selectable
        # (pyenv: "command not found"): use only an interpreter that runs.
        probe = subprocess.run([candidate, "-c", "pass"], capture_output=True, check=False)
        if probe.returncode == 0:
            return candidate
    return None


def compile_bytecode(target: Path, python: str) -> None:
    """Compile every module under `target` with `python`, checked by hash at import.

    The same sources give the same bytes wherever the folder is built: file names as Lambda
    sees them (/var/task/...), not the build folder's, and a fixed hash seed (the order of
    set constants).

    Raises `BundleError` when compileall fails."""
    command = [python, "-m", "compileall", "-q", "-j", "0", "-d", TASK_ROOT,
               "--invalidation-mode", "unchecked-hash", str(target)]
    result = subprocess.run(command, capture_output=True, text=True, check=False,
                            env={**os.environ, "PYTHONHASHSEED": "0"})
    if result.returncode != 0:
        raise BundleError(f"compileall failed ({result.returncode}):\n{result.stdout}"
                          f"{result.stderr}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("target", nargs="?", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--without-jwt", action="store_true",
                        help="leave out PyJWT and cryptography (a2a:auth is not jwt)")
    parser.add_argument("--with-push", action="store_true",
                        help="add httpx, the push dispatcher's HTTP client (a2a:push=true)")
    parser.add_argument("--native", action="store_true",
                        help="for this machine's architecture (the deploy rehearsal)")
    args = parser.parse_args(argv)
    size = build_bundle(args.target, jwt=not args.without_jwt, push=args.with_push,
                        native=args.native)
    print(f"{args.target}: {size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
