"""A user's agent project: a folder outside the kit that holds an agent and its dependencies.

    my-agent/
      pyproject.toml        [project] dependencies, and [tool.a2akit] agent = "pkg.mod:attr"
      src/pkg/... or pkg/   the agent's code
      iam-policy.json       optional: what the agent may do in AWS (infra)

or a folder with a `requirements.txt` and its modules, whose agent is named by `A2A_AGENT`.
Every command reads a project through `load_project` (A2A_AGENT_PROJECT, -c a2a:agentProject),
so a project means the same thing locally, in the bundle and in the container image.

Read with the standard library (tomllib): nothing of the project is imported or installed here.
Raises SettingsError naming A2A_AGENT_PROJECT for a folder that is not a project.
"""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

from a2akit.env import SettingsError

__all__ = ["PYPROJECT", "REQUIREMENTS", "AgentProject", "load_project"]

PYPROJECT = "pyproject.toml"
REQUIREMENTS = "requirements.txt"
_VARIABLE = "A2A_AGENT_PROJECT"


@dataclasses.dataclass(frozen=True)
class AgentProject:
    root: Path
    # [project] name, when the project is a pyproject one (pip installs it by this name).
    name: str | None
    # [tool.a2akit] agent, `module:attribute`; None for a requirements.txt project (A2A_AGENT).
    agent: str | None
    # The project's own requirements, as written (PEP 508 strings), not resolved.
    dependencies: tuple[str, ...]

    @property
    def installable(self) -> bool:
        """pip can build it (a pyproject project); else its modules are the folder itself."""
        return self.name is not None

    @property
    def import_roots(self) -> tuple[Path, ...]:
        """Where its modules are when it is not installed: `src/` (the src layout) or the
        folder itself (a flat layout, a requirements.txt project)."""
        src = self.root / "src"
        return (src,) if self.installable and src.is_dir() else (self.root,)

    def entry(self) -> str:
        """Its agent's `module:attribute`. Raises SettingsError naming A2A_AGENT_PROJECT
        and A2A_AGENT when the project names none."""
        if self.agent is not None:
            return self.agent
        if not self.installable:
            raise SettingsError(f"{_VARIABLE}={self.root} is a {REQUIREMENTS} project: name "
                                "its agent with A2A_AGENT=module:attribute")
        raise SettingsError(f"{_VARIABLE}={self.root}: {PYPROJECT} has no [tool.a2akit] agent "
                            '= "package.module:attribute" (or set A2A_AGENT)')


def load_project(path: str | Path) -> AgentProject:
    """The project at `path`. Raises SettingsError naming A2A_AGENT_PROJECT and the file to
    fix when the folder is missing, holds neither file, or its file cannot be read."""
    root = Path(path).expanduser()
    if not root.is_dir():
        raise SettingsError(f"{_VARIABLE}={path}: no such folder")
    root = root.resolve()
    pyproject = root / PYPROJECT
    if pyproject.is_file():
        return _from_pyproject(root, pyproject)
    requirements = root / REQUIREMENTS
    if requirements.is_file():
        return AgentProject(root=root, name=None, agent=None,
                            dependencies=_requirements(requirements))
    raise SettingsError(f"{_VARIABLE}={path}: the folder has neither {PYPROJECT} "
                        f"nor {REQUIREMENTS}")


def _from_pyproject(root: Path, pyproject: Path) -> AgentProject:
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(f"{_VARIABLE}: {pyproject} cannot be read: {exc}") from exc
    project = data.get("project")
    if not isinstance(project, dict) or not isinstance(project.get("name"), str):
        raise SettingsError(f"{_VARIABLE}: {pyproject} has no [project] name")
    dependencies = project.get("dependencies", [])
    if not (isinstance(dependencies, list)
            and all(isinstance(item, str) for item in dependencies)):
        raise SettingsError(f"{_VARIABLE}: {pyproject}: [project] dependencies must be a list "
                            "of strings")
    tool = data.get("tool", {}).get("a2akit", {})
    agent = tool.get("agent") if isinstance(tool, dict) else None
    if agent is not None and not isinstance(agent, str):
        raise SettingsError(f"{_VARIABLE}: {pyproject}: [tool.a2akit] agent must be a string "
                            "like package.module:attribute")
    return AgentProject(root=root, name=project["name"], agent=agent,
                        dependencies=tuple(dependencies))


def _requirements(path: Path) -> tuple[str, ...]:
    """The requirement lines of a requirements.txt: comments and blank lines left out."""
    lines = (line.split("#", 1)[0].strip()
             for line in path.read_text(encoding="utf-8").splitlines())
    return tuple(line for line in lines if line)
