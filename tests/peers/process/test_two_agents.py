"""Two agents, two kit processes: the example's editor (a2akit/examples/delegating.py) served
by the streaming door (`python -m handlers.stream`, JSON-RPC), and its counter served by the
gRPC container (`python -m grpc_service`) with credentials required: an API key, or a JWT from
a client-credentials grant (the test issuer's token endpoint standing in for Cognito's).

A SendMessage to the editor gets the counter's output, and both processes' log lines carry
the caller's trace id; a wrong or missing credential ends the editor's task FAILED with a
message naming the peer, and no traceback in its log."""

from __future__ import annotations

import contextlib
import json
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from a2akit.auth.api_keys import hash_key, new_key
from tests.auth.issuer import AUDIENCE, TOKEN_PATH, Issuer, make_keys
from tests.observability.lines import json_lines
from tests.support.messages import send_params
from tests.support.processes import free_port, python_env, running

pytestmark = pytest.mark.slow

EXAMPLE = "a2akit.examples.delegating"
KEY = new_key()
CLIENT_ID, CLIENT_SECRET = "editor-client", "client-" + uuid.uuid4().hex


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    server = Issuer(make_keys())
    server.publish("k1")
    server.clients[CLIENT_ID] = CLIENT_SECRET
    try:
        yield server
    finally:
        server.close()


def _credentials(scheme: str, issuer: Issuer) -> tuple[dict[str, str], dict[str, str]]:
    """(what the counter requires, what the editor presents) for `scheme`."""
    if scheme == "api-key":
        return ({"A2A_API_KEYS": json.dumps([{"principal": "editor", "sha256": hash_key(KEY)}])},
                {"A2A_PEER_API_KEYS": "counter=COUNTER_KEY", "A2A_SECRET_COUNTER_KEY": KEY})
    return ({"A2A_JWT_ISSUER": issuer.url, "A2A_JWT_AUDIENCE": AUDIENCE},
            {"A2A_PEER_TOKEN_URL": issuer.url + TOKEN_PATH, "A2A_PEER_CLIENT_ID": CLIENT_ID,
             "A2A_SECRET_PEER_CLIENT_SECRET": CLIENT_SECRET})


@contextlib.contextmanager
def _counter(required: dict[str, str], log: Path) -> Iterator[int]:
    port = free_port()
    env = python_env(A2A_AGENT=f"{EXAMPLE}:counter", GRPC_PORT=str(port), **required)
    with running([sys.executable, "-m", "grpc_service"], ports=[port], env=env, log=log):
        yield port


@contextlib.contextmanager
def _editor(counter_port: int, presented: dict[str, str], log: Path) -> Iterator[str]:
    port = free_port()
    env = python_env(A2A_AGENT=f"{EXAMPLE}:agent", PORT=str(port), A2A_ALLOW_ANONYMOUS="true",
                     A2A_PUBLIC_URL=f"http://127.0.0.1:{port}/",
                     A2A_PEERS=f"counter=grpc://127.0.0.1:{counter_port}", **presented)
    with running([sys.executable, "-m", "handlers.stream"], ports=[port], env=env, log=log):
        yield f"http://127.0.0.1:{port}/"


def _send(url: str, text: str, trace_id: str) -> dict[str, Any]:
    response = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                                     "params": send_params(text)},
                          headers={"A2A-Version": "1.0",
                                   "traceparent": f"00-{trace_id}-{'a' * 16}-01"}, timeout=30)
    result: dict[str, Any] = response.json()["result"]["task"]
    return result


@pytest.mark.parametrize("scheme", ["api-key", "oauth2"])
def test_the_editor_delegates_to_the_counter_over_grpc_in_one_trace(
        scheme: str, issuer: Issuer, tmp_path: Path) -> None:
    required, presented = _credentials(scheme, issuer)
    trace_id = uuid.uuid4().hex
    counter_log, editor_log = tmp_path / "counter.log", tmp_path / "editor.log"
    with _counter(required, counter_log) as port, _editor(port, presented, editor_log) as url:
        first = _send(url, "one two three", trace_id)
        second = _send(url, "four five", uuid.uuid4().hex)
    assert first["status"]["state"] == "TASK_STATE_COMPLETED", first
    assert first["artifacts"][0]["parts"][0]["text"] == "Report: 3 words"
    assert second["artifacts"][0]["parts"][0]["text"] == "Report: 2 words"
    if scheme == "oauth2":
        assert issuer.hits[TOKEN_PATH] == 1  # one token for both calls

    traced = {}
    for name, log in (("editor", editor_log), ("counter", counter_log)):
        lines, other = json_lines(log)
        assert other == [], other
        traced[name] = [line.get("message") for line in lines if line.get("trace_id") == trace_id]
        text = log.read_text()
        assert KEY not in text and CLIENT_SECRET not in text
    assert "delegating the count to peer counter" in traced["editor"]
    assert f"calling A2A peer counter (GRPC, {scheme})" in traced["editor"]
    assert "counting words" in traced["counter"]


@pytest.mark.parametrize("presented", [
    {"A2A_PEER_API_KEYS": "counter=COUNTER_KEY", "A2A_SECRET_COUNTER_KEY": "a2a_wrong"},
    {},
], ids=["wrong", "missing"])
def test_a_refused_credential_fails_the_editors_task_naming_the_peer(
        presented: dict[str, str], issuer: Issuer, tmp_path: Path) -> None:
    required, _ = _credentials("api-key", issuer)
    editor_log = tmp_path / "editor.log"
    with _counter(required, tmp_path / "counter.log") as port, \
            _editor(port, presented, editor_log) as url:
        task = _send(url, "one two three", uuid.uuid4().hex)
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    assert task["status"]["message"]["parts"][0]["text"] == (
        "A2A peer 'counter' refused this agent's credentials")
    lines, other = json_lines(editor_log)
    assert other == [] and not any("exception" in line for line in lines)
    assert any(line["level"] == "WARNING" and "refused this agent's credentials"
               in line["message"] for line in lines)
