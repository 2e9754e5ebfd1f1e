"""One lock for what the kit ships: the Lambda bundle (infra/bundle.py) and the gRPC image
(grpc_service/Dockerfile) install exact versions from `requirements.lock`, each file checked
by its SHA-256, and nothing else.

    ./dev lock            # = python -m infra.lock: resolve again and rewrite the lock
    ./dev lock --project PATH   # an agent project's lock (infra/project_lock.py)

Why `pip download` and not pip-tools' `pip-compile --generate-hashes`: pip-compile resolves
for the interpreter that runs it (here x86-64, any Python), while what ships runs on CPython
3.13 for manylinux2014_aarch64 (Lambda arm64, the Fargate arm64 image); `pip download
--platform ... --python-version 3.13 --only-binary=:all:` resolves for exactly that target,
with pip alone. The lock then lists each file's hash for that target, and for the same
versions on manylinux2014_x86_64 (the deploy rehearsal runs the bundle and the image's
install on x86-64 development machines: tests/rehearsal).

The inputs are pyproject.toml's requirements, recorded in the lock's header; a test
(tests/infra/test_lock.py) fails when they no longer agree.

Raises `LockError` when pip fails.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = [
    "GROUPS",
    "LOCK",
    "PLATFORMS",
    "PYTHON_VERSION",
    "RUNTIME_PROVIDED",
    "LockError",
    "Locked",
    "download",
    "inputs",
    "read_lock",
    "requirements_text",
    "write_lock",
]

_ROOT = Path(__file__).resolve().parent.parent
LOCK = _ROOT / "requirements.lock"
PYTHON_VERSION = "3.13"  # infra/jsonrpc_api.py: RUNTIME; the image's python:3.13-slim
# The target first (Lambda and Fargate, arm64); then the rehearsal's.
PLATFORMS = ("manylinux2014_aarch64", "manylinux2014_x86_64")
# What each group installs: the bundle takes `lambda` (+ `jwt`, + `push`), the image
# `container`.
GROUPS = ("lambda", "jwt", "push", "container")
# In the Lambda runtime already, so not in the bundle.
RUNTIME_PROVIDED = ("boto3",)


class LockError(RuntimeError):
    """pip could not resolve or download; the message carries its output."""


@dataclasses.dataclass(frozen=True)
class Locked:
    name: str
    version: str
    hashes: tuple[str, ...]
    groups: frozenset[str]


def _name(requirement: str) -> str:
    """The distribution name a requirement string starts with, normalized."""
    head = requirement
    for stop in "[<>=!~; ":
        head = head.split(stop, 1)[0]
    return head.strip().lower().replace("_", "-").replace(".", "-")


def inputs(pyproject: Path = _ROOT / "pyproject.toml") -> dict[str, list[str]]:
    """Each group's requirements as pyproject.toml writes them."""
    project = tomllib.loads(pyproject.read_text())["project"]
    base = list(project["dependencies"])
    extras = project["optional-dependencies"]
    return {
        "lambda": [r for r in base if _name(r) not in RUNTIME_PROVIDED],
        "jwt": list(extras["jwt"]),
        "push": list(extras["push"]),
        "container": [*base, *extras["jwt"], *extras["push"], *extras["grpc"]],
    }


def download(requirements: Iterable[str], platform: str, folder: Path,
             constraints: Path | None = None, *, quiet: bool = True
             ) -> dict[str, tuple[str, str]]:
    """name -> (version, sha256) of what pip resolves for `platform` and Python 3.13.

    Raises LockError with pip's output; `quiet=False` keeps its report of a conflict (which
    requirement wanted what), printed below --quiet's level."""
    folder.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", *(["--quiet"] if quiet else []),
               "--disable-pip-version-check", "--progress-bar", "off",
               "--dest", str(folder), "--platform", platform, "--implementation", "cp",
               "--python-version", PYTHON_VERSION, "--only-binary=:all:",
               *(["--constraint", str(constraints)] if constraints else []), *requirements]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise LockError(f"pip download failed ({result.returncode}):\n{result.stdout}"
                        f"{result.stderr}")
    report: dict[str, tuple[str, str]] = {}
    for wheel in folder.glob("*.whl"):
        name, version = wheel.name.split("-")[:2]
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        report[_name(name)] = (version, digest)
    return report


def resolve(groups: Mapping[str, list[str]]) -> list[Locked]:
    """Resolve `container` (everything) for the target, then each group within those pins,
    then the same pins for the other platforms' hashes."""
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        everything = download(groups["container"], PLATFORMS[0], root / "all")
        pins = root / "pins.txt"
        pins.write_text("".join(f"{name}=={version}\n"
                                for name, (version, _) in sorted(everything.items())))
        members: dict[str, set[str]] = {name: {"container"} for name in everything}
        for group in ("lambda", "jwt", "push"):
            for name in download(groups[group], PLATFORMS[0], root / group, pins):
                members[name].add(group)
        hashes = {name: {digest} for name, (_, digest) in everything.items()}
        for platform in PLATFORMS[1:]:
            for name, (version, digest) in download(
                    [f"{n}=={v}" for n, (v, _) in everything.items()], platform,
                    root / platform, pins).items():
                assert version == everything[name][0], (name, version)
                hashes[name].add(digest)
    return [Locked(name, everything[name][0], tuple(sorted(hashes[name])),
                   frozenset(members[name])) for name in sorted(everything)]


def write_lock(locked: list[Locked], groups: Mapping[str, list[str]], path: Path = LOCK, *,
               written_by: str = "`./dev lock` (python -m infra.lock)",
               extra: Iterable[str] = ()
               ) -> None:
    """Write `locked` with its header: what writes it, the targets, each group's
    inputs (in GROUPS' order, then the others), and `extra` header lines."""
    lines = [
        f"# Written by {written_by}; do not edit.",
        f"# CPython {PYTHON_VERSION}, {PLATFORMS[0]} (Lambda arm64, the Fargate arm64 image);",
        f"# hashes also for {', '.join(PLATFORMS[1:])} (the deploy rehearsal, tests/rehearsal).",
        "# Install: pip install --require-hashes --no-deps --only-binary=:all: "
        f"-r {path.name}",
        *(f"# input {group}: {json.dumps(groups[group])}"
          for group in [*GROUPS, *sorted(set(groups) - set(GROUPS))]),
        *extra,
        "",
    ]
    for entry in locked:
        lines.append(f"# for: {' '.join(sorted(entry.groups))}")
        lines.append(f"{entry.name}=={entry.version} \\")
        lines += [f"    --hash=sha256:{digest}" + (" \\" if i < len(entry.hashes) - 1 else "")
                  for i, digest in enumerate(entry.hashes)]
    path.write_text("\n".join(lines) + "\n")


def read_lock(path: Path = LOCK) -> tuple[dict[str, list[str]], list[Locked]]:
    """(the recorded inputs by group, the entries)."""
    recorded: dict[str, list[str]] = {}
    entries: list[Locked] = []
    groups: frozenset[str] = frozenset()
    current: tuple[str, str] | None = None
    hashes: list[str] = []

    def flush() -> None:
        if current is not None:
            entries.append(Locked(current[0], current[1], tuple(hashes), groups))

    for raw in path.read_text().splitlines():
        line = raw.strip().rstrip("\\").strip()
        if line.startswith("# input "):
            group, _, value = line.removeprefix("# input ").partition(": ")
            recorded[group] = json.loads(value)
        elif line.startswith("# for: "):
            flush()
            current, hashes = None, []
            groups = frozenset(line.removeprefix("# for: ").split())
        elif line.startswith("--hash=sha256:"):
            hashes.append(line.removeprefix("--hash=sha256:"))
        elif line and not line.startswith("#"):
            name, version = line.split("==")
            current = (name, version)
    flush()
    return recorded, entries


def requirements_text(entries: Iterable[Locked], groups: Iterable[str]) -> str:
    """A hashed requirements file of the entries in any of `groups`."""
    wanted = set(groups)
    return "".join(
        f"{entry.name}=={entry.version} "
        + " ".join(f"--hash=sha256:{digest}" for digest in entry.hashes) + "\n"
        for entry in entries if entry.groups & wanted)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Resolve and write requirements.lock, or with "
                                     "--project an agent project's a2akit.lock.")
    parser.add_argument("--project", metavar="PATH",
                        help="an agent project: write PATH/a2akit.lock (infra/project_lock.py)")
    args = parser.parse_args(argv)
    if args.project is not None:
        from .project_lock import main as lock_project

        return lock_project(args.project)
    groups = inputs()
    locked = resolve(groups)
    write_lock(locked, groups)
    print(f"{LOCK.name}: {len(locked)} distributions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
