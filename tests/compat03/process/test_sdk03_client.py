"""Interop: the A2A 0.3 Python SDK (a2a-sdk 0.3.x, the latest 0.3 release) against our local
server, over JSON-RPC and gRPC, every 0.3 operation, on both stores; and tasks crossing
generations: created by the 0.3 client, then read, listed, subscribed to and canceled by the
1.0 SDK, and the other way round, on each binding.

The SDKs live in venvs of their own (.cache/sdk03-venv, .cache/sdk-venv, installed on first
use); the drivers (sdk03_client.py, sdk_cross.py) import nothing from the kit.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.compat03.process.kit03 import TOKEN, Kit, check_card, check_operations, run_driver
from tests.support import sdk
from tests.support.processes import ROOT
from tests.support.tools import tool_or_skip

pytestmark = pytest.mark.slow

SDK03_VERSION = "0.3.26"  # the latest 0.3 release on PyPI
SDK03_VENV = ROOT / ".cache" / "sdk03-venv"
BINDINGS = ["JSONRPC", "GRPC"]


@pytest.fixture(scope="session")
def sdk03_python() -> Path:
    ready = ["python", "-c", "import a2a.client, grpc, httpx, importlib.metadata as m; "
             f"assert m.version('a2a-sdk') == {SDK03_VERSION!r}"]
    return tool_or_skip(SDK03_VENV, [f"a2a-sdk[grpc]=={SDK03_VERSION}"], ready,
                        "a2a-sdk") / "python"


@pytest.fixture(scope="session")
def sdk_python() -> Path:
    return sdk.sdk_python("import a2a.client, grpc, httpx")


@pytest.fixture(scope="module")
def results(sdk03_python: Path, server: Kit) -> dict[str, Any]:
    parsed: dict[str, Any] = run_driver([str(sdk03_python), "sdk03_client.py", server.url,
                                         TOKEN])
    return parsed


def test_card_resolves_at_both_addresses(results: dict[str, Any], server: Kit) -> None:
    check_card(results["card"], server)
    assert results["legacy_card"] == results["card"]
    assert results["card"]["schemes"] == ["bearer"]
    assert {"bearer": []} in results["card"]["security"]


@pytest.mark.parametrize("binding", BINDINGS)
def test_operations(results: dict[str, Any], binding: str) -> None:
    check_operations(results[binding], binding, grpc=binding == "GRPC")


@pytest.fixture(scope="module")
def read_by_10(sdk03_python: Path, sdk_python: Path, server: Kit) -> dict[str, Any]:
    """Tasks the 0.3 client created (one completed, one working per binding), as the 1.0
    client read, listed, subscribed to and canceled them on the same binding."""
    ids = run_driver([str(sdk03_python), "sdk03_client.py", server.url, TOKEN, "create"])
    created = {binding: got for binding, got in ids.items() if "failed" not in got}
    read: dict[str, Any] = run_driver([str(sdk_python), "sdk_cross.py", server.url, "read",
                                       json.dumps(created)])
    return {binding: read.get(binding, got) for binding, got in ids.items()}


@pytest.fixture(scope="module")
def read_by_03(sdk03_python: Path, sdk_python: Path, server: Kit) -> dict[str, Any]:
    """Tasks the 1.0 client created, as the 0.3 client read and canceled them."""
    ids = run_driver([str(sdk_python), "sdk_cross.py", server.url, "create"])
    read: dict[str, Any] = run_driver([str(sdk03_python), "sdk03_client.py", server.url, TOKEN,
                                       "read", json.dumps(ids)])
    return read


@pytest.mark.parametrize("binding", BINDINGS)
def test_tasks_of_the_03_client_are_read_listed_subscribed_and_canceled_by_10(
        read_by_10: dict[str, Any], binding: str) -> None:
    got = read_by_10[binding]
    assert "failed" not in got, got
    assert got["done"] == ["TASK_STATE_COMPLETED", f"from 0.3 {binding}"], got
    assert got["listed"] is True, got
    assert got["first"]["kind"] == "task", got
    assert got["canceled"] == "TASK_STATE_CANCELED", got
    assert got["after"][-1] == {"kind": "status_update", "state": "TASK_STATE_CANCELED"}, got


@pytest.mark.parametrize("binding", BINDINGS)
def test_tasks_of_the_10_client_are_read_and_canceled_by_03(
        read_by_03: dict[str, Any], binding: str) -> None:
    got = read_by_03[binding]
    assert "failed" not in got, got
    assert got["done"]["state"] == "completed", got
    assert got["done"]["text"] == f"from 1.0 {binding}", got
    assert got["canceled"] == got["got"] == "canceled", got
