"""An agent project's lock, `PATH/a2akit.lock`: the kit's lock plus the project's dependencies,
every file hashed, for the same targets (infra/lock.py).

    ./dev lock --project PATH     # = python -m infra.lock --project PATH

The project's requirements are resolved for Lambda's platform with the kit's pins as
constraints, so a package both need is the kit's version, and a requirement that cannot have
it is one line naming both. What they bring joins the lock in the group `agent` (the bundle
installs it; the image installs the whole lock), kit entries included when the agent needs one
the bundle would otherwise leave out (httpx without push). boto3 is the Lambda runtime's, as
for the kit: a project's own boto3 requirement is left out of the bundle's resolve, and the
image has the kit's pin.

The header records a fingerprint of what the lock was made from (the project's requirements
and the kit's requirements.lock); synth (infra/app.py) stops with one line when it is missing
or no longer matches, so nothing is resolved at deploy time.

Raises `ProjectLockError` (one line) for each of these.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import tempfile
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from a2akit.agent_project import AgentProject, load_project
from a2akit.settings import SettingsError

from .config import CONTEXT, ConfigError
from .lock import (
    GROUPS,
    LOCK,
    PLATFORMS,
    PYTHON_VERSION,
    RUNTIME_PROVIDED,
    Locked,
    LockError,
    download,
    read_lock,
    write_lock,
)

__all__ = ["AGENT_GROUP", "LOCK_NAME", "ProjectLockError", "check_lock", "conflict",
           "fingerprint", "lock_project", "main"]

LOCK_NAME = "a2akit.lock"
AGENT_GROUP = "agent"
_FINGERPRINT = "# fingerprint: "
# pip's last words when no file fits the platform (only an sdist, or no such wheel).
_NO_MATCH = re.compile(r"No matching distribution found for (\S+)")


class ProjectLockError(ConfigError):
    """The project's lock is missing, stale or cannot be made; one line that names the fix."""


def _command(project: AgentProject) -> str:
    return f"./dev lock --project {project.root}"


def fingerprint(project: AgentProject, kit_lock: Path = LOCK) -> str:
    """What the lock is made from: the project's requirements as written, the kit's lock."""
    digest = hashlib.sha256()
    digest.update(json.dumps(list(project.dependencies)).encode() + b"\0")
    digest.update(hashlib.sha256(kit_lock.read_bytes()).digest())
    return digest.hexdigest()


def _requirement(text: str, project: AgentProject) -> Requirement:
    try:
        return Requirement(text)
    except InvalidRequirement as exc:
        raise ProjectLockError(f"{CONTEXT.AGENT_PROJECT}={project.root}: {text!r} is not a "
                               f"requirement pip can lock ({exc})") from exc


def conflict(project: AgentProject, kit_lock: Path = LOCK) -> str | None:
    """A requirement of the project that no version the kit pins satisfies, as one line
    naming both; None if there is none. Offline (the transitive ones pip finds when locking)."""
    _, entries = read_lock(kit_lock)
    pins = {canonicalize_name(entry.name): entry.version for entry in entries}
    for text in project.dependencies:
        requirement = _requirement(text, project)
        pin = pins.get(canonicalize_name(requirement.name))
        if pin is not None and not requirement.specifier.contains(pin, prereleases=True):
            return (f"the agent project's requirement {text} conflicts with the kit's pin "
                    f"{canonicalize_name(requirement.name)}=={pin} (requirements.lock); loosen "
                    "the project's requirement")
    return None


def check_lock(project: AgentProject, kit_lock: Path = LOCK) -> Path:
    """The project's lock, when it is there and made from what the project and the kit
    require now. Raises ProjectLockError naming the command that fixes it."""
    line = conflict(project, kit_lock)
    if line is not None:
        raise ProjectLockError(line)
    path = project.root / LOCK_NAME
    if not path.is_file():
        raise ProjectLockError(f"{CONTEXT.AGENT_PROJECT}={project.root} has no lock "
                               f"({LOCK_NAME}): run {_command(project)}")
    recorded = next((line.removeprefix(_FINGERPRINT) for line in path.read_text().splitlines()
                     if line.startswith(_FINGERPRINT)), None)
    if recorded != fingerprint(project, kit_lock):
        raise ProjectLockError(f"{path} is stale (the project's requirements or the kit's "
                               f"requirements.lock changed since): run {_command(project)}")
    return path


def _explain(error: LockError, platform: str) -> str:
    """pip's failure as one line: a conflict with a kit pin, a package without a wheel for
    `platform`, else pip's last error."""
    from scripts.install_agent import conflict_line

    output = str(error)
    line = conflict_line(output)
    if line is not None:
        return line
    missing = _NO_MATCH.findall(output)
    if missing:
        where = "Lambda arm64" if platform == PLATFORMS[0] else "the rehearsal's platform"
        return (f"{missing[-1]} has no wheel for CPython {PYTHON_VERSION} on {platform} "
                f"({where}), and the bundle installs wheels only: choose a version (or a "
                "package) that publishes one")
    errors = [text.removeprefix("ERROR: ") for text in output.splitlines()
              if text.startswith("ERROR: ")]
    return errors[-1] if errors else " ".join(output.split()[-30:])


def lock_project(project: AgentProject, kit_lock: Path = LOCK) -> list[Locked]:
    """Resolve the project's requirements within the kit's pins and write PATH/a2akit.lock;
    its entries. Raises ProjectLockError (network errors included) with one line."""
    line = conflict(project, kit_lock)
    if line is not None:
        raise ProjectLockError(line)
    recorded, entries = read_lock(kit_lock)
    wanted = [text for text in project.dependencies
              if canonicalize_name(_requirement(text, project).name) not in RUNTIME_PROVIDED]
    kit = {entry.name: entry for entry in entries}
    resolved: dict[str, tuple[str, set[str]]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        pins = root / "pins.txt"
        pins.write_text("".join(f"{e.name}=={e.version}\n" for e in entries))
        for platform in PLATFORMS:
            requirements = wanted if platform == PLATFORMS[0] else [
                f"{name}=={version}" for name, (version, _) in resolved.items()
                if name not in kit]
            if not requirements:
                continue
            try:
                found = download(requirements, platform, root / platform, pins, quiet=False)
            except LockError as exc:
                raise ProjectLockError(f"{project.root}: {_explain(exc, platform)}") from exc
            for name, (version, digest) in found.items():
                if platform != PLATFORMS[0] and name not in resolved:
                    continue  # only the target's set is locked; the others add hashes
                resolved.setdefault(name, (version, set()))[1].add(digest)
    locked = [Locked(e.name, e.version, e.hashes,
                     e.groups | ({AGENT_GROUP} if e.name in resolved else set()))
              for e in entries]
    locked += [Locked(name, version, tuple(sorted(hashes)), frozenset({AGENT_GROUP}))
               for name, (version, hashes) in resolved.items() if name not in kit]
    locked.sort(key=lambda entry: entry.name)
    groups = {**{group: recorded.get(group, []) for group in GROUPS},
              AGENT_GROUP: list(project.dependencies)}
    write_lock(locked, groups, project.root / LOCK_NAME,
               written_by=f"`{_command(project)}` (python -m infra.lock --project)",
               extra=[f"# The kit's requirements.lock plus the agent project's requirements "
                      f"(group {AGENT_GROUP}).",
                      _FINGERPRINT + fingerprint(project, kit_lock)])
    return locked


def main(path: str) -> int:
    """`./dev lock --project PATH`: 0 written, 2 with one line on stderr."""
    try:
        project = load_project(path)
        locked = lock_project(project)
    except (SettingsError, ProjectLockError) as exc:
        message = str(exc).replace("A2A_AGENT_PROJECT", "--project")
        print(f"a2akit: cannot lock the agent project: {message}", file=sys.stderr)
        return 2
    added = sum(1 for entry in locked if entry.groups == {AGENT_GROUP})
    print(f"{project.root / LOCK_NAME}: {len(locked)} distributions ({added} for the agent "
          "alone)")
    return 0
