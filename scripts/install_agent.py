"""Install an agent project into the kit's environment: `./dev install-agent PATH`, and what
`./dev serve` (with A2A_AGENT_PROJECT) and `./dev test-agent PATH` run before they start.

    pyproject.toml project     pip install -c PINS -e PATH             its package (editable)
                                                                       and its dependencies
    requirements.txt project   pip install -c PINS -r requirements.txt its dependencies; its
                                                                       modules stay in PATH,
                                                                       which load_agent searches

PINS are the kit's pins, requirements.lock without its hashes (pip reads hashes in a
constraints file as --require-hashes for everything): a project can never move a package the
kit pinned, and a conflict is one line naming both pins. Skipped when the project's file, the
kit's lock and this Python are what they were at the last install (a marker under the
environment's folder holds their hash), so a second `./dev serve` starts at once.

Exit status: 0 installed or up to date; 2 not a project or the install failed (one line).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from a2akit.agent_project import PYPROJECT, REQUIREMENTS, AgentProject, load_project
from a2akit.settings import SettingsError

__all__ = ["InstallError", "install", "kit_pins", "main", "marker"]

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements.lock"
# One marker per project folder, in the environment it was installed into.
MARKERS = Path(sys.prefix) / ".a2akit-agent-projects"

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s\\;]+)")
# pip's resolver report: "The conflict is caused by:" then one line per requirement, e.g.
#     my-agent 0.1.0 depends on protobuf<5
#     The user requested protobuf<5                      (a requirements.txt line)
#     The user requested (constraint) protobuf==7.36.2   (the kit's pin)
_CONSTRAINT = re.compile(r"The user requested \(constraint\) (\S+)")
_WANTED = re.compile(r"^\s*(?:The user requested (?!\(constraint\))|(\S+ \S+) depends on )(.+)$")


class InstallError(Exception):
    """The project could not be installed; the message is one line that says why."""


def kit_pins(lock: Path = LOCK) -> list[str]:
    """`name==version` of every package requirements.lock pins (its hashes left out)."""
    return [f"{match[1]}=={match[2]}" for line in lock.read_text().splitlines()
            if (match := _PIN.match(line))]


def _source(project: AgentProject) -> Path:
    return project.root / (PYPROJECT if project.installable else REQUIREMENTS)


def _fingerprint(project: AgentProject, lock: Path) -> str:
    digest = hashlib.sha256()
    for part in (str(project.root), sys.executable, _source(project).read_text(),
                 lock.read_text()):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()


def marker(project: AgentProject) -> Path:
    """Where the fingerprint of the project's last install is kept."""
    return MARKERS / hashlib.sha256(str(project.root).encode()).hexdigest()[:16]


def _up_to_date(project: AgentProject, fingerprint: str) -> bool:
    stamp = marker(project)
    if not stamp.is_file() or stamp.read_text() != fingerprint:
        return False
    if project.name is None:
        return True
    try:  # uninstalled by hand since: install again
        importlib.metadata.version(project.name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def conflict_line(output: str) -> str | None:
    """pip's resolver report reduced to `<theirs> conflicts with the kit's pin <pin>`; None
    when `output` is not a conflict with a kit pin."""
    pins = _CONSTRAINT.findall(output)
    if not pins:
        return None
    wanted = []
    for line in output.splitlines():
        match = _WANTED.match(line)
        if match:
            who, what = match[1], match[2].strip()
            wanted.append(f"{what} (from {who})" if who else what)
    theirs = ", ".join(wanted) or "the project's requirements"
    return (f"{theirs} conflicts with the kit's pin {', '.join(pins)} (requirements.lock); "
            "loosen the project's requirement")


def _failure(output: str) -> str:
    """One line for a failed pip run: the conflict, else pip's last ERROR line."""
    line = conflict_line(output)
    if line is not None:
        return line
    errors = [text.removeprefix("ERROR: ").strip() for text in output.splitlines()
              if text.startswith("ERROR: ")]
    return errors[-1] if errors else "pip failed: " + " ".join(output.split()[-30:])


def install(project: AgentProject, *, lock: Path = LOCK, force: bool = False) -> bool:
    """Install `project` into this Python's environment unless it is up to date; True when
    it installed. Prints one line saying what it installs. Raises InstallError."""
    fingerprint = _fingerprint(project, lock)
    if not force and _up_to_date(project, fingerprint):
        return False
    what = (f"the agent project {project.name} ({project.root}, editable) and its dependencies"
            if project.installable else f"the requirements of the agent project {project.root}")
    needs = ", ".join(project.dependencies) or "none"
    print(f"a2akit: installing {what} into {sys.prefix}: {needs}", flush=True)
    with tempfile.TemporaryDirectory(prefix="a2akit-pins-") as folder:
        pins = Path(folder) / "constraints.txt"
        pins.write_text("\n".join(kit_pins(lock)) + "\n")
        target = (["-e", str(project.root)] if project.installable
                  else ["-r", str(project.root / REQUIREMENTS)])
        run = subprocess.run([sys.executable, "-m", "pip", "install",
                              "--disable-pip-version-check", "--progress-bar", "off",
                              "-c", str(pins), *target],
                             # A requirements file's relative paths are the project's.
                             cwd=project.root, capture_output=True, text=True, check=False)
    if run.returncode != 0:
        output = run.stdout + "\n" + run.stderr
        raise InstallError(f"{project.root}: {_failure(output)}")
    stamp = marker(project)
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(fingerprint)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", help="the agent project's folder")
    parser.add_argument("--force", action="store_true",
                        help="install even when nothing changed since the last install")
    args = parser.parse_args(argv)
    try:
        install(load_project(args.path), force=args.force)
    except (SettingsError, InstallError) as exc:
        print("a2akit: cannot install the agent project: " + " ".join(str(exc).split()),
              file=sys.stderr, flush=True)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
