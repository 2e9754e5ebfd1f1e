"""Tools a test installs into a venv of its own (tests.support.processes.tool_venv), skipping
the test only when PyPI cannot be reached."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.support.processes import ToolInstallError, pypi_reachable, tool_venv

__all__ = ["tool_or_skip"]


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
