"""Fixtures for the commands' tests: every process a test starts is stopped after it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.scripts.processes import Running, Start


@pytest.fixture
def start() -> Iterator[Start]:
    """start(args, env) -> Running; every process started is stopped after the test."""
    started: list[Running] = []

    def _start(args: list[str], env: dict[str, str]) -> Running:
        started.append(Running(args, env))
        return started[-1]

    yield _start
    for running in started:
        running.stop()
