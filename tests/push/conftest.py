"""Receivers for the push tests: plain HTTP, and HTTPS for hook.test from a throwaway CA."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.webhooks import Authority, Receiver


@pytest.fixture(scope="session")
def authority() -> Authority:
    return Authority()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as hook:
        yield hook


@pytest.fixture
def tls_receiver(authority: Authority) -> Iterator[Receiver]:
    """HTTPS with a certificate valid for hook.test and 127.0.0.1 only."""
    with Receiver(tls=authority.server_context("hook.test")) as hook:
        yield hook
