"""Build the JSON-RPC Lambda's code folder with pip for the Lambda platform (no Docker).

    python -m infra.bundle [DIR]      # default: build/lambda

Raises `BundleError` when pip fails.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["DEFAULT_DIR", "JWT_REQUIREMENTS", "PACKAGES", "REQUIREMENTS", "BundleError",
           "build_bundle"]

_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DIR = _ROOT / "build" / "lambda"  # build/ is git-ignored

# The kit's runtime dependencies minus boto3 (in the Lambda runtime) and grpcio (the
# JSON-RPC path never loads it). Keep in step with pyproject's [project] dependencies.
REQUIREMENTS = (
    "starlette>=0.47",
    "mangum>=0.22",
    "protobuf>=7.35.1,<8",
    "googleapis-common-protos>=1.70",
)
# The `jwt` extra, for deployments whose callers present JWTs (a2a:auth=jwt, the default):
# about 15 MB unzipped, loaded only when A2A_JWT_ISSUER is set. Keep in step with pyproject.
JWT_REQUIREMENTS = ("PyJWT[crypto]>=2.10,<3",)
# The kit's own packages the handler imports.
PACKAGES = ("a2akit", "handlers")

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


def build_bundle(target: Path = DEFAULT_DIR, *, jwt: bool = True) -> int:
    """Rebuild `target` from scratch (with the JWT libraries unless `jwt` is false) and
    return its size in bytes."""
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
        *_PIP_PLATFORM,
        "--no-compile",
        "--target",
        str(target),
        *REQUIREMENTS,
        *(JWT_REQUIREMENTS if jwt else ()),
    ]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise BundleError(f"pip failed ({result.returncode}):\n{result.stderr}")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for package in PACKAGES:
        shutil.copytree(_ROOT / package, target / package, ignore=ignore)
    # pip's metadata and the dependencies' console scripts are dead weight at run time.
    for leftover in [*target.glob("*.dist-info"), target / "bin"]:
        if leftover.is_dir():
            shutil.rmtree(leftover)
    return sum(path.stat().st_size for path in target.rglob("*") if path.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("target", nargs="?", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--without-jwt", action="store_true",
                        help="leave out PyJWT and cryptography (a2a:auth is not jwt)")
    args = parser.parse_args(argv)
    size = build_bundle(args.target, jwt=not args.without_jwt)
    print(f"{args.target}: {size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
