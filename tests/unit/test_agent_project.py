"""a2akit.agent_project: what a project folder declares, and the one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from a2akit.agent_project import load_project
from a2akit.settings import SettingsError


def test_pyproject_project(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "my-agent"\ndependencies = ["cowsay==6.1"]\n'
        '[tool.a2akit]\nagent = "my_agent.main:agent"\n')
    project = load_project(tmp_path)
    assert (project.name, project.agent, project.dependencies) == (
        "my-agent", "my_agent.main:agent", ("cowsay==6.1",))
    assert project.installable and project.root == tmp_path.resolve()


def test_requirements_project(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("# tools\ncowsay==6.1  # talks\n\n")
    project = load_project(tmp_path)
    assert (project.name, project.agent, project.dependencies) == (None, None, ("cowsay==6.1",))
    assert not project.installable


@pytest.mark.parametrize(("files", "message"), [
    ({}, "neither pyproject.toml nor requirements.txt"),
    ({"pyproject.toml": "[project\n"}, "cannot be read"),
    ({"pyproject.toml": "[tool.a2akit]\nagent = 'a:b'\n"}, "no [project] name"),
    ({"pyproject.toml": "[project]\nname = 'x'\ndependencies = 'y'\n"}, "list of strings"),
    ({"pyproject.toml": "[project]\nname = 'x'\n[tool.a2akit]\nagent = 1\n"}, "must be a string"),
])
def test_not_a_project(tmp_path: Path, files: dict[str, str], message: str) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    with pytest.raises(SettingsError, match="A2A_AGENT_PROJECT") as raised:
        load_project(tmp_path)
    assert message in str(raised.value) and "\n" not in str(raised.value)


def test_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="no such folder"):
        load_project(tmp_path / "nowhere")
