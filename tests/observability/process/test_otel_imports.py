"""OpenTelemetry off loads nothing of it; on without the API stops with one line (fresh
interpreters)."""

from __future__ import annotations

import subprocess
import sys

from tests.support.processes import ROOT, fresh_python


def test_off_nothing_of_opentelemetry_is_imported() -> None:
    code = ("import sys, handlers.jsonrpc as door; "
            "from starlette.testclient import TestClient; "
            "body = {'jsonrpc': '2.0', 'id': 1, 'method': 'SendMessage', 'params': {'message': "
            "{'messageId': 'm', 'role': 'ROLE_USER', 'parts': [{'text': 'hi'}]}}}; "
            "TestClient(door.app).post('/', json=body, headers={'A2A-Version': '1.0'}); "
            "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))")
    assert fresh_python(code, {"A2A_ALLOW_ANONYMOUS": "true", "PATH": ""}) == "[]"


def test_on_without_the_api_is_one_line() -> None:
    code = ("import sys; sys.modules['opentelemetry'] = None; "
            "from a2akit import telemetry; from a2akit.settings import Settings; "
            "telemetry.configure(Settings(otel=True))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, env={"PATH": ""})
    assert "A2A_OTEL=true needs the OpenTelemetry API" in out.stderr
