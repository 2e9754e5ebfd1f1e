"""Every benchmark in bench/ imports as `./dev bench NAME` runs it (bench/ first on the path,
from the checkout's root), so none is left behind by a moved or removed module. The
benchmarks themselves are run by hand: speed is measured there, not asserted here."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.processes import ROOT

BENCHMARKS = sorted(p.stem for p in (ROOT / "bench").glob("[a-z]*.py"))


@pytest.mark.parametrize("name", BENCHMARKS)
def test_the_benchmark_imports(name: str) -> None:
    run = subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path.insert(0, 'bench'); import {name}"],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
