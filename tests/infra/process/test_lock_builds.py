"""Two builds of the bundle are identical, and the second synth reuses the first (pip runs once)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from infra import bundle
from infra.bundle import build_bundle
from tests.infra.test_lock import _hashes


@pytest.mark.slow
def test_two_builds_are_identical_and_the_second_synth_reuses_the_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "one" / "lambda", tmp_path / "two" / "lambda"
    build_bundle(first, push=True)
    build_bundle(second, push=True)
    assert _hashes(first) == _hashes(second)
    assert any(name.endswith(".so") for name in _hashes(first))  # native extensions kept
    # Built again with nothing changed: no pip at all (it would fail here: offline).
    def offline(command: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        raise AssertionError(f"ran {command[:4]} although nothing changed")

    monkeypatch.setattr(bundle.subprocess, "run", offline)
    before = _hashes(first)
    build_bundle(first, push=True)
    assert _hashes(first) == before
    # Another option (or lock, or code) is another folder: built again.
    with pytest.raises(AssertionError, match="although nothing changed"):
        build_bundle(first, push=False)
    shutil.rmtree(tmp_path)
