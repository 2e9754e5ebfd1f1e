"""A peer at an http(s) address: its card is read (at the card's own URL, or under the base
URL) and the call goes over the binding the card lists first (JSON-RPC), with the API key;
here the peer is the streaming door (`python -m handlers.stream`) in a process of its own."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import pytest

from a2akit.auth.api_keys import hash_key, new_key
from a2akit.generated import a2a_pb2 as pb
from a2akit.peers import PeerError, Peers
from a2akit.settings import Settings
from tests.support.processes import free_port, python_env, running

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

KEY = new_key()


@pytest.fixture(scope="module")
def door(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = python_env(A2A_AGENT="a2akit.examples.delegating:counter", PORT=str(port),
                     A2A_PUBLIC_URL=url + "/",
                     A2A_API_KEYS=json.dumps([{"principal": "editor", "sha256": hash_key(KEY)}]))
    log = tmp_path_factory.mktemp("door") / "door.log"
    with running([sys.executable, "-m", "handlers.stream"], ports=[port], env=env, log=log):
        yield url


def _peers(address: str, key: str = KEY) -> Peers:
    settings = Settings(peers={"counter": address}, peer_api_keys={"counter": "KEY"})
    return Peers(settings, secret=lambda name: key)


@pytest.mark.parametrize("path", ["", "/", "/.well-known/agent-card.json"])
async def test_a_card_or_base_url_peer_is_called_over_json_rpc(door: str, path: str) -> None:
    reply = await _peers(door + path).peer("counter").call("one two three")
    assert reply.state == pb.TASK_STATE_COMPLETED and reply.text == "3 words"


async def test_http_failures_are_named_for_the_peer(door: str) -> None:
    with pytest.raises(PeerError, match=r"^A2A peer 'counter' refused this agent's credentials$"):
        await _peers(door, key="a2a_wrong").peer("counter").call("hello")
    with pytest.raises(PeerError, match=r"has no agent card this agent could read \(HTTP 404\)$"):
        await _peers(door + "/nothing/here.json").peer("counter").call("hello")
