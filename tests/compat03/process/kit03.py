"""What the A2A 0.3 interop tests share: the kit as they run it, running a driver, and what
every 0.3 client must see for each operation.

The drivers (sdk03_client.py, js03_client.mjs) print one JSON line; the checks here read it.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from tests.store.conftest import TABLE
from tests.support.processes import free_port, python_env, running

HERE = Path(__file__).parent
TOKEN = "interop-member-token"
HOOK = "https://93.184.216.34/hook"
SERVER_ENV = {"A2A_AGENT": "tests.interop.agent:agent", "A2A_PUSH_NOTIFICATIONS": "true",
              # Configs only: nothing is delivered to the webhook, which is not on loopback.
              "A2A_PUSH_DELIVERY": "stream", "A2A_EXTENDED_AGENT_CARD": "true",
              "A2A_STREAM_BUDGET_SECONDS": "20",
              # Anonymous callers are served (serve_local's default); this token reads the
              # extended card.
              "A2A_BEARER_TOKENS": f"member={TOKEN}"}


class Kit(NamedTuple):
    url: str  # the JSON-RPC URL, as the card names it
    grpc: str  # host:port


@contextlib.contextmanager
def kit_server(log: Path, ddb_endpoint: str | None) -> Iterator[Kit]:
    """scripts.serve_local with JSON-RPC and gRPC (so the card lists the gRPC interfaces),
    on the embedded store or, given its endpoint, DynamoDB Local."""
    port, grpc_port = free_port(), free_port()
    command = [sys.executable, "-m", "scripts.serve_local", "--port", str(port),
               "--grpc-port", str(grpc_port)]
    env = dict(SERVER_ENV)
    if ddb_endpoint is not None:
        env.update(A2A_TABLE=TABLE, AWS_REGION="us-east-1",
                   AWS_ENDPOINT_URL_DYNAMODB=ddb_endpoint)
    with running(command, ports=[port, grpc_port], env=python_env(**env), log=log):
        yield Kit(f"http://127.0.0.1:{port}/", f"127.0.0.1:{grpc_port}")


def run_driver(command: Sequence[str], env: Mapping[str, str] | None = None) -> Any:
    """Run a driver; its last line of output, parsed. A driver that fails fails the test with
    its stderr."""
    run = subprocess.run(list(command), capture_output=True, text=True, timeout=240, cwd=HERE,
                         env=env)
    assert run.returncode == 0, run.stderr[-4000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def check_card(card: dict[str, Any], kit: Kit) -> None:
    """The 0.3 view of the card: JSON-RPC at `url`, gRPC listed beside it."""
    assert card["protocolVersion"].startswith("0.3"), card
    assert card["url"] == kit.url and card["preferredTransport"] == "JSONRPC", card
    assert ["GRPC", kit.grpc] in card["additional"], card
    assert card["streaming"] is True and card["pushNotifications"] is True, card
    assert card["extended"] is True, card


def check_operations(got: dict[str, Any], binding: str, *, grpc: bool) -> None:
    """Every step of one driver run on one binding (names as the drivers print them)."""
    assert "failed" not in got, got  # the binding failed before its first step ended
    send = got["send"]
    assert send == {"kind": "task", "id": send["id"], "context": True, "state": "completed",
                    "text": f"hello {binding}", "history": send["history"]}, send
    get = got["get"]
    assert get.get("full") == send, get
    assert get["one"] == {**send, "history": min(1, send["history"])}, get

    if grpc:
        assert got["get_missing"]["type"] == "grpc", got["get_missing"]
        assert got["get_missing"]["code"] == "NOT_FOUND", got["get_missing"]
        assert got["get_missing"]["message"].startswith("TaskNotFoundError"), got["get_missing"]
        assert got["cancel_done"]["code"] == "FAILED_PRECONDITION", got["cancel_done"]
        assert got["cancel_done"]["message"].startswith("TaskNotCancelableError"), got
    else:
        assert got["get_missing"]["type"] == "jsonrpc", got["get_missing"]
        assert got["get_missing"]["code"] == -32001, got["get_missing"]
        assert got["cancel_done"]["code"] == -32002, got["cancel_done"]

    cancel = got["cancel"]
    assert cancel.get("started") in ("submitted", "working"), cancel
    assert cancel["same"] is True and cancel["canceled"] == cancel["got"] == "canceled", cancel
    # historyLength 1: the last message of the history the unlimited read returned.
    assert cancel["history"][:1] == [["user", "slow"]], cancel
    assert cancel["last"] == cancel["history"][-1:], cancel

    push = got["push"]
    assert push.get("created") == [f"cfg-{binding}", send["id"], HOOK, "t"], push
    assert push["same"] is True, push
    assert push["listed"] == [f"cfg-{binding}"] and push["after"] == [], push

    extended = got["extended_card"]
    refused = extended["anonymous"]
    if grpc:  # GetAgentCard: the public card to a caller who may not read the extended one
        assert refused == {"name": "Echo", "skills": ["echo"],
                           "protocolVersion": refused.get("protocolVersion")}, refused
    else:  # HTTP 401, as on 1.0 (the JS SDK reports the JSON-RPC error of its body instead)
        refused = refused.get("failed", refused)
        assert refused.get("status", refused.get("code")) == 401, refused
    card = extended["token"]
    assert card.get("name") == "Echo, extended", card
    assert card["skills"] == ["echo", "members"], card
    assert card["protocolVersion"].startswith("0.3"), card

    stream = got["stream"]
    assert stream.get("ids") == 1 and stream["text"] == f"stream {binding}", stream
    check_events(stream["events"], "completed")
    assert "artifact-update" in [event["kind"] for event in stream["events"]], stream

    resubscribe = got["resubscribe"]
    assert resubscribe.get("first", {}).get("kind") == "task", resubscribe
    assert resubscribe["id"] is True and resubscribe["canceled"] == "canceled", resubscribe
    check_events([resubscribe["first"], *resubscribe["after"]], "canceled")


def check_events(events: list[dict[str, Any]], last_state: str) -> None:
    """A 0.3 stream: the Task first; `final` true on the last status-update only, which
    carries `last_state`."""
    assert events and events[0]["kind"] == "task", events
    assert events[-1] == {"kind": "status-update", "state": last_state, "final": True}, events
    finals = [event["final"] for event in events[:-1] if event["kind"] == "status-update"]
    assert not any(finals), events
