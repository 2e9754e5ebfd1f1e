from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

# Hypothesis profiles for the property-based tests (tests/jsonrpc/test_fuzz.py).
# ci, the default: few examples, derandomized (the same examples on every run, so CI never
# flakes on a newly found case) and no per-example deadline (CI machines are slow at times).
# long: `pytest --hypothesis-profile=long`, many random examples, for a hunt before a release.
_SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large]
settings.register_profile("ci", max_examples=40, derandomize=True, deadline=None,
                          database=None, suppress_health_check=_SLOW_OK)
settings.register_profile("long", max_examples=2_000, deadline=None,
                          suppress_health_check=_SLOW_OK)
settings.load_profile("ci")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
