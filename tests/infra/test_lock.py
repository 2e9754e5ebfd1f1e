"""The lock (requirements.lock, infra/lock.py) against pyproject.toml, the bundle and the image
that install from it, and the bundle's build: reproducible, reused while nothing changed."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from infra.bundle import bundle_groups
from infra.lock import GROUPS, LOCK, PLATFORMS, inputs, read_lock, requirements_text
from infra.stack import PROJECT_ROOT

DOCKERFILE = PROJECT_ROOT / "grpc_service" / "Dockerfile"


def _disagreements(pyproject: Path, lock: Path = LOCK) -> list[str]:
    """What `./dev lock` would have to fix: inputs changed since, or pins that no longer
    satisfy a requirement of their group."""
    recorded, entries = read_lock(lock)
    wanted = inputs(pyproject)
    found = [f"{group}: pyproject says {wanted[group]}, the lock was made from "
             f"{recorded.get(group)}" for group in GROUPS if recorded.get(group) != wanted[group]]
    pinned = {(canonicalize_name(e.name), group): e.version for e in entries for group in e.groups}
    for group, requirements in wanted.items():
        for text in requirements:
            requirement = Requirement(text)
            version = pinned.get((canonicalize_name(requirement.name), group))
            if version is None or not requirement.specifier.contains(version, prereleases=True):
                found.append(f"{group}: {text} is locked at {version}")
    return found


def test_the_lock_agrees_with_pyproject() -> None:
    assert _disagreements(PROJECT_ROOT / "pyproject.toml") == [], "run ./dev lock"


def test_a_changed_requirement_without_a_new_lock_fails(tmp_path: Path) -> None:
    # What the test above catches: pyproject edited, the lock not made again.
    text = (PROJECT_ROOT / "pyproject.toml").read_text()
    changed = tmp_path / "pyproject.toml"
    changed.write_text(text.replace('"httpx>=0.27,<1"', '"httpx>=9"', 1))
    problems = _disagreements(changed)
    assert any("httpx>=9" in problem for problem in problems), problems


def test_every_file_is_pinned_and_hashed_for_each_platform() -> None:
    _, entries = read_lock()
    assert entries
    for entry in entries:
        assert re.fullmatch(r"[0-9][0-9A-Za-z.+-]*", entry.version), entry
        assert 1 <= len(entry.hashes) <= len(PLATFORMS), entry  # one for a pure wheel
        assert all(re.fullmatch(r"[0-9a-f]{64}", digest) for digest in entry.hashes), entry
        assert entry.groups <= set(GROUPS) and "container" in entry.groups, entry


def test_the_bundle_takes_its_groups_without_boto3_or_grpc() -> None:
    _, entries = read_lock()
    names = {line.split("==")[0] for line in
             requirements_text(entries, bundle_groups(jwt=True, push=True)).splitlines()}
    assert {"starlette", "mangum", "protobuf", "uvicorn", "pyjwt", "cryptography",
            "httpx"} <= names
    assert not names & {"boto3", "botocore", "grpcio"}
    without = {line.split("==")[0] for line in
               requirements_text(entries, bundle_groups(jwt=False, push=False)).splitlines()}
    assert not without & {"pyjwt", "cryptography", "httpx"}


def test_the_image_installs_the_lock_and_nothing_else() -> None:
    text = DOCKERFILE.read_text()
    installs = re.findall(r"pip install[^\n\\&]*", text)
    assert installs == ["pip install --require-hashes --no-deps --only-binary=:all: "
                        "-r requirements.lock "], installs
    (base,) = re.findall(r"^FROM (\S+)", text, re.MULTILINE)
    assert re.fullmatch(r"python:3\.13[.\d]*-slim@sha256:[0-9a-f]{64}", base), base


def _hashes(folder: Path) -> dict[str, str]:
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file()}
