"""Fixtures of the authentication tests: a local OIDC issuer, a clock (moto's server is
session-wide: tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.auth.issuer import Issuer, Key, make_keys


@pytest.fixture(scope="session")
def signing_keys() -> dict[str, Key]:
    return make_keys()


@pytest.fixture
def issuer(signing_keys: dict[str, Key]) -> Iterator[Issuer]:
    """An issuer publishing k1."""
    server = Issuer(signing_keys)
    server.publish("k1")
    yield server
    server.close()


class Clock:
    """The caches' monotonic clock, moved by hand: lifetimes pass without waiting."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> Clock:
    return Clock()
