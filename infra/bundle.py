"""Build the JSON-RPC Lambda's code folder with pip for the Lambda platform (no Docker).

    python -m infra.bundle [DIR]      # default: build/lambda

The folder ships bytecode when a Python of the runtime's version (3.13) is at hand: Lambda's
code folder is read-only, so without it every cold start (and every SnapStart snapshot)
compiles the kit and its dependencies again. The bytecode is checked by hash, not by the
sources' times, which a zip does not keep reliably; without such a Python the folder ships
sources only, as before.

Raises `BundleError` when pip fails.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

_RUNTIME_VERSION = (3, 13)  # infra/jsonrpc_api.py: RUNTIME
__all__ = ["DEFAULT_DIR", "JWT_REQUIREMENTS", "PACKAGES", "PUSH_REQUIREMENTS", "REQUIREMENTS",
           "RUN_SCRIPT", "BundleError", "build_bundle", "compile_bytecode", "runtime_python",
           "write_run_script"]

_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DIR = _ROOT / "build" / "lambda"  # build/ is git-ignored

# The kit's runtime dependencies minus boto3 (in the Lambda runtime) and grpcio (the
# JSON-RPC path never loads it). Keep in step with pyproject's [project] dependencies.
REQUIREMENTS = (
    "starlette>=0.47",
    "mangum>=0.22",
    "protobuf>=7.35.1,<8",
    "googleapis-common-protos>=1.70",
    "uvicorn==0.55.0",
)
# The `jwt` extra, for deployments whose callers present JWTs (a2a:auth=jwt, the default):
# about 15 MB unzipped, loaded only when A2A_JWT_ISSUER is set. Keep in step with pyproject.
JWT_REQUIREMENTS = ("PyJWT[crypto]>=2.10,<3",)
# The `push` extra, for deployments with push notifications (a2a:push=true): the HTTP client
# of the stream dispatcher (handlers.push), which alone imports it; about 1 MB unzipped.
# Keep in step with pyproject.
PUSH_REQUIREMENTS = ("httpx>=0.27,<1",)
# The kit's own packages the handler imports.
PACKAGES = ("a2akit", "handlers")
# The streaming door's handler: the Lambda Web Adapter (AWS_LAMBDA_EXEC_WRAPPER=/opt/bootstrap)
# runs it to start the HTTP server it forwards invocations to (infra/jsonrpc_api.py).
RUN_SCRIPT = "run.sh"
_RUN_SCRIPT_TEXT = """#!/bin/sh
# Started by the Lambda Web Adapter: the JSON-RPC app on 127.0.0.1:$PORT (docs/public-door.md).
PYTHONPATH="$LAMBDA_TASK_ROOT${PYTHONPATH:+:$PYTHONPATH}" exec python -m handlers.stream
"""

# Must match infra/jsonrpc_api.py: RUNTIME (Python 3.13) and Architecture.ARM_64.
_PIP_PLATFORM = (
    "--platform",
    "manylinux2014_aarch64",
    "--implementation",
    "cp",
    "--python-version",
    "3.13",
    "--only-binary=:all:",
)


class BundleError(RuntimeError):
    """pip could not install the Lambda dependencies; the message carries its output."""


def build_bundle(target: Path = DEFAULT_DIR, *, jwt: bool = True, push: bool = False,
                 native: bool = False) -> int:
    """Rebuild `target` from scratch (with the JWT libraries unless `jwt` is false, with the
    push dispatcher's HTTP client if `push` is true) and return its size in bytes.

    `native` builds the same folder for this interpreter and machine instead of Lambda's
    (the deploy rehearsal, tests/rehearsal, runs it here)."""
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    command = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        *(("--only-binary=:all:",) if native else _PIP_PLATFORM),
        "--no-compile",
        "--target",
        str(target),
        *REQUIREMENTS,
        *(JWT_REQUIREMENTS if jwt else ()),
        *(PUSH_REQUIREMENTS if push else ()),
    ]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise BundleError(f"pip failed ({result.returncode}):\n{result.stderr}")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for package in PACKAGES:
        shutil.copytree(_ROOT / package, target / package, ignore=ignore)
    write_run_script(target / RUN_SCRIPT)
    # pip's metadata and the dependencies' console scripts are dead weight at run time.
    for leftover in [*target.glob("*.dist-info"), target / "bin"]:
        if leftover.is_dir():
            shutil.rmtree(leftover)
    python = sys.executable if native else runtime_python()
    if python is not None:
        compile_bytecode(target, python)
    return sum(path.stat().st_size for path in target.rglob("*") if path.is_file())


def write_run_script(path: Path) -> None:
    """The streaming door's handler script, executable (the zip keeps the mode)."""
    path.write_text(_RUN_SCRIPT_TEXT)
    path.chmod(0o755)


def runtime_python() -> str | None:
    """A Python of the Lambda runtime's version: this one, or `python3.13` on the PATH."""
    if sys.version_info[:2] == _RUNTIME_VERSION:
        return sys.executable
    candidate = shutil.which("python{}.{}".format(*_RUNTIME_VERSION))
    if candidate is None:
        return None
    # A version manager's shim can be on the PATH without that version being selectable
    # (pyenv: "command not found"): use only an interpreter that runs.
    probe = subprocess.run([candidate, "-c", "pass"], capture_output=True, check=False)
    return candidate if probe.returncode == 0 else None


def compile_bytecode(target: Path, python: str) -> None:
    """Compile every module under `target` with `python`, checked by hash at import.

    Raises `BundleError` when compileall fails."""
    command = [python, "-m", "compileall", "-q", "-j", "0",
               "--invalidation-mode", "unchecked-hash", str(target)]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
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
    args = parser.parse_args(argv)
    size = build_bundle(args.target, jwt=not args.without_jwt, push=args.with_push)
    print(f"{args.target}: {size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
