"""a2akit.agent_project: what a project folder declares, and the one-line errors; the
settings' agent from A2A_AGENT_PROJECT, and load_agent importing it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from a2akit.agent_project import load_project
from a2akit.runtime import load_agent
from a2akit.settings import DEFAULT_AGENT, ENV, Settings, SettingsError


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


# --- A2A_AGENT_PROJECT in the settings, and the agent imported from it ------------------------

def _project(root: Path, package: str, *, agent: bool = True, src: bool = False) -> Path:
    """A pyproject project (not installed) whose agent echoes with a prefix."""
    entry = f'[tool.a2akit]\nagent = "{package}.main:agent"\n' if agent else ""
    (root / "pyproject.toml").write_text(f'[project]\nname = "{package}"\n{entry}')
    code = root / "src" / package if src else root / package
    code.mkdir(parents=True)
    (code / "__init__.py").write_text("")
    (code / "main.py").write_text(
        "class Agent:\n"
        "    name = 'From the project'\n"
        "    async def execute(self, context, task):\n"
        "        await task.add_artifact('project: ' + context.text)\n"
        "        await task.complete()\n"
        "agent = Agent()\n")
    return root


@pytest.fixture
def sys_path(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """sys.path as it is, put back after the test (load_agent adds a project's folders)."""
    monkeypatch.setattr(sys, "path", [*sys.path])
    return sys.path


@pytest.mark.parametrize("src", [False, True], ids=["flat", "src"])
def test_the_projects_agent_is_loaded_without_installing(tmp_path: Path, sys_path: list[str],
                                                         src: bool) -> None:
    package = f"uninstalled_{'src' if src else 'flat'}_agent"
    _project(tmp_path, package, src=src)
    settings = Settings.from_env({ENV.AGENT_PROJECT: str(tmp_path)})
    assert settings.agent == f"{package}.main:agent"
    assert settings.agent_project == load_project(tmp_path)
    agent = load_agent(settings)
    assert type(agent).__module__ == f"{package}.main"
    # After the installed packages: a project can never shadow what the kit imports.
    assert sys_path[-1] == str(tmp_path / "src" if src else tmp_path)


def test_a2a_agent_overrides_the_projects_entry(tmp_path: Path, sys_path: list[str]) -> None:
    _project(tmp_path, "overridden_agent")
    settings = Settings.from_env({ENV.AGENT_PROJECT: str(tmp_path),
                                  ENV.AGENT: "a2akit.examples.echo:agent"})
    assert settings.agent == "a2akit.examples.echo:agent"
    assert type(load_agent(settings)).__name__ == "EchoAgent"
    # ... and may name another module of the project's own.
    settings = Settings.from_env({ENV.AGENT_PROJECT: str(tmp_path),
                                  ENV.AGENT: "overridden_agent.main:Agent"})
    assert type(load_agent(settings)).__module__ == "overridden_agent.main"


def test_a_requirements_project_takes_its_agent_from_a2a_agent(tmp_path: Path,
                                                                 sys_path: list[str]) -> None:
    (tmp_path / "requirements.txt").write_text("")
    (tmp_path / "req_project_agent.py").write_text(
        "from a2akit.examples.echo import EchoAgent\nagent = EchoAgent()\n")
    with pytest.raises(SettingsError, match=r"A2A_AGENT_PROJECT=.*A2A_AGENT=module:attribute"):
        Settings.from_env({ENV.AGENT_PROJECT: str(tmp_path)})
    settings = Settings.from_env({ENV.AGENT_PROJECT: str(tmp_path),
                                  ENV.AGENT: "req_project_agent:agent"})
    assert load_agent(settings).name == "Echo"


def test_a_project_without_an_agent_entry_says_what_to_add(tmp_path: Path) -> None:
    _project(tmp_path, "entryless_agent", agent=False)
    with pytest.raises(SettingsError, match=r"no \[tool.a2akit\] agent"):
        Settings.from_env({ENV.AGENT_PROJECT: str(tmp_path)})


def test_an_agent_that_does_not_import_names_the_project_and_the_fix(
        tmp_path: Path, sys_path: list[str]) -> None:
    _project(tmp_path, "needs_a_dependency")
    (tmp_path / "needs_a_dependency" / "main.py").write_text("import no_such_dependency_x\n")
    settings = Settings.from_env({ENV.AGENT_PROJECT: str(tmp_path)})
    with pytest.raises(SettingsError) as raised:
        load_agent(settings)
    message = str(raised.value)
    assert message.startswith(f"A2A_AGENT_PROJECT={tmp_path.resolve()}: [tool.a2akit] agent")
    assert "no_such_dependency_x" in message
    assert f"./dev install-agent {tmp_path.resolve()}" in message


def test_without_a_project_nothing_reads_a_file() -> None:
    settings = Settings.from_env({})
    assert settings.agent_project is None and settings.agent == DEFAULT_AGENT
