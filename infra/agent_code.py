"""An agent project's own code as it ships: its top-level packages and modules, copied into
the Lambda bundle (infra/bundle.py) and the container image (infra/grpc_service.py) next to
the kit's, where `A2A_AGENT` imports them.

What ships is what `load_agent` finds in the project's import roots (a2akit/agent_project.py:
`src/` in the src layout, else the folder itself): every package (a folder with an
`__init__.py`) and every module, but not tests (`tests/`, `test_*.py`, `conftest.py`) or
`setup.py`. The project is copied, not built: no build backend runs at synth.

Raises `AgentCodeError` (one line) when the agent's module is not among them or a name
collides with the kit's.
"""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
from pathlib import Path

from a2akit.agent_project import AgentProject

from .config import CONTEXT, ConfigError

__all__ = ["KIT_PACKAGES", "AgentCode", "AgentCodeError"]

# The kit's own top-level names in the bundle and the image.
KIT_PACKAGES = ("a2akit", "handlers", "grpc_service")
_NOT_SHIPPED = {"tests", "test", "setup", "conftest"}
_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc")


class AgentCodeError(ConfigError):
    """The project's code cannot ship as it is; the message names what to change."""


def _ships(path: Path) -> bool:
    name = path.stem if path.suffix == ".py" else path.name
    if not name.isidentifier() or name in _NOT_SHIPPED or name.startswith("test_"):
        return False
    if path.is_dir():
        return (path / "__init__.py").is_file()
    return path.suffix == ".py"


@dataclasses.dataclass(frozen=True)
class AgentCode:
    """The project's code for the agent `agent` (`module:attribute`, one of its modules)."""

    project: AgentProject
    agent: str

    def sources(self) -> list[Path]:
        """The project's top-level packages and modules. Raises AgentCodeError when the
        agent's top-level module is not one of them, or one has a name of the kit's."""
        project = self.project
        found = sorted((path for root in project.import_roots for path in root.iterdir()
                        if _ships(path)), key=lambda path: path.name)
        names = {path.stem if path.suffix == ".py" else path.name for path in found}
        clash = names.intersection(KIT_PACKAGES)
        if clash:
            raise AgentCodeError(f"{CONTEXT.AGENT_PROJECT}={project.root}: its package "
                                 f"{min(clash)!r} has the name of one of the kit's; rename it")
        top = self.agent.partition(":")[0].partition(".")[0]
        if top not in names:
            where = " or ".join(str(root) for root in project.import_roots)
            raise AgentCodeError(
                f"{CONTEXT.AGENT_PROJECT}={project.root}: the agent {self.agent!r} is in "
                f"module {top!r}, which is not a package (a folder with __init__.py) or "
                f"module in {where}")
        return found

    def copy(self, target: Path) -> None:
        """Copy the project's packages and modules into `target` (bytecode left out)."""
        for path in self.sources():
            if path.is_dir():
                shutil.copytree(path, target / path.name, ignore=_IGNORE, dirs_exist_ok=True)
            else:
                shutil.copy2(path, target / path.name)

    def digest(self) -> str:
        """A hash of what `copy` copies: names and contents."""
        digest = hashlib.sha256()
        for source in self.sources():
            files = sorted(source.rglob("*")) if source.is_dir() else [source]
            for path in files:
                if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                    digest.update(str(path.relative_to(source.parent)).encode() + b"\0")
                    digest.update(hashlib.sha256(path.read_bytes()).digest())
        return digest.hexdigest()
