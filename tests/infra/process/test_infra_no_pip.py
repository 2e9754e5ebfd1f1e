"""Inspecting the stack runs no pip: `cdk ls` (and the other commands the CLI asks to bundle
nothing for) never builds the Lambda folder, and `cdk synth` / `diff` / `deploy` reuse a
folder whose stamp is fresh. Every subprocess the app starts is recorded."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App

from infra import bundle
from infra.app import BUNDLING_STACKS, build_app
from infra.lock import LOCK, PLATFORMS
from tests.infra.conftest import CDK_CONTEXT

pytestmark = pytest.mark.slow


@pytest.fixture
def commands(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The commands the app runs (subprocess.run), each refused: none may be needed here."""
    ran: list[list[str]] = []

    def refuse(command: list[str], *args: Any, **kwargs: Any) -> None:
        ran.append([str(part) for part in command])
        raise AssertionError(f"the app ran {command}")

    monkeypatch.setattr(subprocess, "run", refuse)
    return ran


def _pip(commands: list[list[str]]) -> list[list[str]]:
    return [command for command in commands if "pip" in command]


def _app(tmp_path: Path, **context: Any) -> App:
    return App(context={**CDK_CONTEXT, "a2a:grpc": False, **context},
               outdir=str(tmp_path / "cdk.out"))


def test_cdk_ls_builds_nothing_even_when_the_folder_is_stale(
    tmp_path: Path, commands: list[list[str]]
) -> None:
    # `cdk ls` (and destroy, metadata, ...) pass an empty bundling list: the folder is neither
    # built nor checked, so listing is quick and offline.
    app = _app(tmp_path, **{BUNDLING_STACKS: []})
    build_app(app, build_root=tmp_path / "build")
    app.synth()
    assert commands == []
    assert not (tmp_path / "build" / "lambda").exists()


def test_a_fresh_stamp_runs_no_pip(tmp_path: Path, commands: list[list[str]]) -> None:
    # `cdk synth` / `diff` / `deploy` bundle every stack ("**"): a folder whose stamp matches
    # is reused as it is.
    folder = tmp_path / "build" / "lambda"
    folder.mkdir(parents=True)
    (folder / "placeholder.txt").write_text("built before\n")
    groups = bundle.bundle_groups(jwt=True, push=False)
    folder.with_name("lambda.stamp").write_text(bundle._stamp(groups, PLATFORMS[0], LOCK, None))
    app = _app(tmp_path, **{BUNDLING_STACKS: ["**"]})
    build_app(app, build_root=tmp_path / "build")
    assert commands == []


def test_a_stale_stamp_is_rebuilt_for_synth(tmp_path: Path, commands: list[list[str]]) -> None:
    # What the two tests above rely on: without a fresh stamp, synth does run pip.
    app = _app(tmp_path, **{BUNDLING_STACKS: ["A2AKit"]})
    with pytest.raises(AssertionError, match="pip"):
        build_app(app, build_root=tmp_path / "build")
    assert len(_pip(commands)) == 1
