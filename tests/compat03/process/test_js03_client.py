"""Interop: the A2A 0.3 JavaScript SDK (@a2a-js/sdk 0.3.x, the latest 0.3 release) against our
local server over JSON-RPC, every 0.3 operation, on both stores.

The SDK is installed with npm into a folder of its own (.cache/js03, on first use); the driver
(js03_client.mjs) imports nothing but the SDK. Node.js 18+ must be on PATH (CI has 20).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.compat03.process.kit03 import TOKEN, Kit, check_card, check_operations, run_driver
from tests.support.processes import ROOT
from tests.support.tools import node_tool_or_skip

pytestmark = pytest.mark.slow

JS_SDK = {"@a2a-js/sdk": "0.3.14"}  # the latest 0.3 release on npm
JS03 = ROOT / ".cache" / "js03"


@pytest.fixture(scope="session")
def js03_modules() -> Path:
    assert shutil.which("node"), "the @a2a-js/sdk interop test needs Node.js 18+ on PATH"
    return node_tool_or_skip(JS03, JS_SDK)


@pytest.fixture(scope="module")
def results(js03_modules: Path, server: Kit) -> dict[str, Any]:
    env = {**os.environ, "JS03_MODULES": str(js03_modules)}
    parsed: dict[str, Any] = run_driver(["node", "js03_client.mjs", server.url, TOKEN], env)
    return parsed


def test_card_resolves_at_both_addresses(results: dict[str, Any], server: Kit) -> None:
    check_card(results["card"], server)
    assert results["legacy_card"] == results["card"]


def test_operations(results: dict[str, Any]) -> None:
    check_operations(results, "JS", grpc=False)
    assert results["push"]["deleted"] is None
