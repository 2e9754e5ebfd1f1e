"""The official a2a-sdk, installed in a venv of its own (.cache/sdk-venv, on first use): the
independent peer the interop, 0.3 and card-signing tests run in a separate process, so what
they check is the wire, not code shared with the kit."""

from __future__ import annotations

from pathlib import Path

from tests.support.processes import ROOT
from tests.support.tools import tool_or_skip

__all__ = ["SDK_SPEC", "SDK_VENV", "sdk_python"]

SDK_VENV = ROOT / ".cache" / "sdk-venv"
SDK_SPEC = "a2a-sdk[grpc,signing]>=1,<2"  # signing: tests/auth/process/test_card_signing.py


def sdk_python(probe: str) -> Path:
    """The venv's interpreter once `probe` (Python code) runs in it (installing the SDK when it
    does not); the test is skipped only when PyPI cannot be reached."""
    return tool_or_skip(SDK_VENV, [SDK_SPEC], ["python", "-c", probe], "a2a-sdk") / "python"
