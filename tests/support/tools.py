"""Tools a test installs into a venv of its own (tests.support.processes.tool_venv) or a Node
folder of its own (node_folder), skipping the test only when the registry cannot be reached."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from tests.support.processes import (
    ToolInstallError,
    node_folder,
    npm_reachable,
    pypi_reachable,
    tool_venv,
)

__all__ = ["node_tool_or_skip", "tool_or_skip"]


def tool_or_skip(folder: Path, requirements: Sequence[str], ready: Sequence[str],
                 project: str) -> Path:
    """`tool_venv`'s bin folder; the test is skipped (saying why) if pip failed because PyPI
    is unreachable, and fails with pip's output otherwise."""
    try:
        return tool_venv(folder, requirements, ready)
    except ToolInstallError as exc:
        if not pypi_reachable(project):
            pytest.skip(f"PyPI is unreachable, cannot install {' '.join(requirements)}")
        raise AssertionError(str(exc)) from None


def node_tool_or_skip(folder: Path, dependencies: Mapping[str, str]) -> Path:
    """`node_folder`'s node_modules; skipped (saying why) only if the npm registry is
    unreachable, failing with npm's output otherwise."""
    try:
        return node_folder(folder, dependencies)
    except ToolInstallError as exc:
        if not npm_reachable(next(iter(dependencies))):
            pytest.skip(f"the npm registry is unreachable, cannot install {dict(dependencies)}")
        raise AssertionError(str(exc)) from None
