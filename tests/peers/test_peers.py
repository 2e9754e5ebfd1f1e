"""Calling a peer, in process: the delegate is the kit's gRPC binding on loopback with
credentials required (an API key, or a JWT from a client-credentials grant), the caller a
`Peers` of the test's settings. What a call sends (the credentials, the caller's trace), what
comes back (a task, a message, a question) and every way it fails, named for the peer."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

from a2akit import trace
from a2akit.agent import AgentFailure
from a2akit.agent_secrets import UnknownNameError
from a2akit.auth.api_keys import hash_key, new_key
from a2akit.generated import a2a_pb2 as pb
from a2akit.peers import PeerError, Peers, PeerTaskError, UnknownPeerError
from a2akit.runtime import build_operations
from a2akit.settings import Settings
from a2akit.store.memory import MemoryStore
from tests.auth.issuer import AUDIENCE, TOKEN_PATH, Issuer, make_keys
from tests.peers.agents import Calling, Delegate
from tests.support.harness import ANON, GrpcHarness, grpc_server
from tests.support.messages import V1, send_request

pytestmark = pytest.mark.anyio

KEY = new_key()
KEYS = json.dumps([{"principal": "editor", "sha256": hash_key(KEY)}])


def _secrets(**values: str) -> Callable[[str], str]:
    def read(name: str) -> str:
        if name not in values:
            raise UnknownNameError(f"no secret {name!r}: set A2A_SECRET_{name}")
        return values[name]
    return read


@contextlib.asynccontextmanager
async def _serving(agent: Any, settings: Settings) -> AsyncIterator[GrpcHarness]:
    ops = build_operations(settings, store=MemoryStore(), agent=agent)
    async with grpc_server(ops) as harness:
        yield harness


@pytest.fixture
async def delegate() -> AsyncIterator[tuple[Delegate, GrpcHarness]]:
    """The delegate, refusing callers without the API key KEY."""
    agent = Delegate()
    async with _serving(agent, Settings(api_keys=KEYS)) as harness:
        yield agent, harness


def _peers(port: int, **overrides: Any) -> Peers:
    secret = overrides.pop("secret", _secrets(D_KEY=KEY))
    settings = Settings(**{"peers": {"d": f"grpc://127.0.0.1:{port}"},
                           "peer_api_keys": {"d": "D_KEY"}, **overrides})
    return Peers(settings, secret=secret)


async def test_a_call_brings_the_answer_and_carries_the_callers_trace(
        delegate: tuple[Delegate, GrpcHarness]) -> None:
    agent, harness = delegate
    trace_id = uuid.uuid4().hex
    trace.begin_request("SendMessage", None, f"00-{trace_id}-{'1' * 16}-01")
    reply = await _peers(harness.port).peer("d").call("one two three")
    assert reply.state == pb.TASK_STATE_COMPLETED and reply.text == "3 words"
    assert reply.task is not None and reply.task.artifacts[0].name == "count"
    assert agent.traces == [trace_id]


async def test_messages_and_questions_are_answers_too(
        delegate: tuple[Delegate, GrpcHarness]) -> None:
    _, harness = delegate
    peer = _peers(harness.port).peer("d")
    message = await peer.call("reply")
    assert (message.task, message.text, message.state) == (
        None, "just a message", pb.TASK_STATE_UNSPECIFIED)
    question = await peer.call("ask")
    assert question.state == pb.TASK_STATE_INPUT_REQUIRED and question.text == "Which one?"
    # The answer continues that task.
    assert question.task is not None
    answer = await peer.call("four more words here", task_id=question.task.id,
                             context_id=question.task.context_id)
    assert answer.task is not None and answer.task.id == question.task.id
    assert answer.text == "4 words"


async def test_a_task_still_running_when_the_call_returns_is_waited_for() -> None:
    # The delegate's blocking SendMessage returns at its budget, the task still WORKING.
    async with _serving(Delegate(), Settings(api_keys=KEYS, stream_budget_seconds=0.2)) as d:
        reply = await _peers(d.port).peer("d").call("slow")
    assert reply.state == pb.TASK_STATE_COMPLETED and reply.text == "1 words"


async def test_a_failed_task_is_a_peer_task_error(
        delegate: tuple[Delegate, GrpcHarness]) -> None:
    _, harness = delegate
    with pytest.raises(PeerTaskError) as raised:
        await _peers(harness.port).peer("d").call("fail")
    assert str(raised.value) == "A2A peer 'd' ended its task FAILED: no can do"
    assert raised.value.task.status.state == pb.TASK_STATE_FAILED


@pytest.mark.parametrize(("overrides", "says"), [
    ({"secret": _secrets(D_KEY="a2a_wrong")}, "A2A peer 'd' refused this agent's credentials"),
    ({"peer_api_keys": {}}, "A2A peer 'd' refused this agent's credentials"),
    ({"secret": _secrets()}, "A2A peer 'd' has no credentials here: no secret 'D_KEY': set "
                             "A2A_SECRET_D_KEY"),
])
async def test_missing_or_wrong_credentials_are_named_for_the_peer(
        delegate: tuple[Delegate, GrpcHarness], overrides: dict[str, Any], says: str) -> None:
    _, harness = delegate
    with pytest.raises(PeerError) as raised:
        await _peers(harness.port, **overrides).peer("d").call("hello")
    assert str(raised.value) == says
    assert raised.value.peer == "d" and isinstance(raised.value, AgentFailure)


async def test_the_api_key_goes_in_the_header_the_kit_reads() -> None:
    settings = Settings(api_keys=KEYS, api_key_header="x-agent-key")
    async with _serving(Delegate(), settings) as harness:
        reply = await _peers(harness.port, api_key_header="x-agent-key").peer("d").call("a b")
    assert reply.text == "2 words"


async def test_an_unreachable_or_slow_peer() -> None:
    async with _serving(Delegate(), Settings(api_keys=KEYS)) as harness:
        port = harness.port
        with pytest.raises(PeerError, match=r"^A2A peer 'd' did not finish within 0.2 s$"):
            await _peers(port).peer("d").call("slow", timeout=0.2)
    with pytest.raises(PeerError, match=r"^A2A peer 'd' cannot be reached$"):
        await _peers(port).peer("d").call("hello")


def test_an_unknown_peer_is_named_with_the_setting() -> None:
    peers = Peers(Settings(peers={"d": "grpc://127.0.0.1:1", "e": "https://e.example"}))
    with pytest.raises(UnknownPeerError) as raised:
        peers.peer("counter")
    assert str(raised.value) == "A2A peer 'counter' is not configured: A2A_PEERS names d, e"
    assert isinstance(raised.value, LookupError)
    with pytest.raises(UnknownPeerError, match="A2A_PEERS names no peers"):
        Peers(Settings()).peer("counter")


async def test_an_uncaught_peer_error_fails_the_callers_task_with_its_message(
        delegate: tuple[Delegate, GrpcHarness], caplog: pytest.LogCaptureFixture) -> None:
    _, harness = delegate
    peers = _peers(harness.port, secret=_secrets(D_KEY="a2a_wrong"))
    async with _serving(Calling(peers, "d"), ANON) as editor:
        with caplog.at_level(logging.WARNING):
            response = await editor.stub.SendMessage(send_request("hello"), metadata=V1)
    status = response.task.status
    assert status.state == pb.TASK_STATE_FAILED
    assert status.message.parts[0].text == "A2A peer 'd' refused this agent's credentials"
    failed = [r for r in caplog.records if r.name == "a2akit.runner"]
    assert failed and all(r.exc_info is None for r in failed)


async def test_the_sdks_own_client_streams_with_the_same_credentials_and_trace(
        delegate: tuple[Delegate, GrpcHarness]) -> None:
    agent, harness = delegate
    trace_id = uuid.uuid4().hex
    trace.begin_request("SendMessage", None, f"00-{trace_id}-{'1' * 16}-01")
    async with await _peers(harness.port).peer("d").client() as client:
        events = [event.WhichOneof("payload") async for event in
                  client.send_message(send_request("one two"))]
    assert events[0] == "task" and "artifact_update" in events
    assert events[-1] == "status_update"
    assert agent.traces == [trace_id]


# --- the client-credentials grant (Cognito) --------------------------------------------------

@dataclasses.dataclass
class Clock:
    now: float = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def issuer() -> Iterator[Issuer]:
    server = Issuer(make_keys())
    server.publish("k1")
    server.clients["editor-client"] = "s3cret"
    try:
        yield server
    finally:
        server.close()


async def test_a_client_credentials_token_is_fetched_once_and_renewed_before_expiry(
        issuer: Issuer) -> None:
    delegate_settings = Settings(jwt_issuer=issuer.url, jwt_audiences=(AUDIENCE,))
    clock = Clock()
    settings = Settings(peers={"d": "grpc://127.0.0.1:1"}, peer_token_url=issuer.url + TOKEN_PATH,
                        peer_client_id="editor-client", peer_scopes=("a2a/invoke",))
    async with _serving(Delegate(), delegate_settings) as harness:
        settings = dataclasses.replace(settings, peers={"d": f"grpc://127.0.0.1:{harness.port}"})
        peers = Peers(settings, secret=_secrets(PEER_CLIENT_SECRET="s3cret"), clock=clock)
        assert (await peers.peer("d").call("a b c")).text == "3 words"
        clock.now += 500  # within the token's 600 s, less the renewal margin
        assert (await peers.peer("d").call("a b")).text == "2 words"
        assert issuer.hits[TOKEN_PATH] == 1
        clock.now += 41  # 60 s before it expires: renewed
        assert (await peers.peer("d").call("a")).text == "1 words"
    assert issuer.hits[TOKEN_PATH] == 2
    assert issuer.token_requests[0] == {"grant_type": "client_credentials",
                                        "scope": "a2a/invoke"}


async def test_a_refused_client_is_named_with_the_oauth_error(issuer: Issuer) -> None:
    settings = Settings(peers={"d": "grpc://127.0.0.1:1"}, peer_token_url=issuer.url + TOKEN_PATH,
                        peer_client_id="editor-client")
    peers = Peers(settings, secret=_secrets(PEER_CLIENT_SECRET="wrong"))
    with pytest.raises(PeerError) as raised:
        await peers.peer("d").call("hello")
    assert str(raised.value) == ("A2A peer 'd' cannot be called: A2A_PEER_TOKEN_URL answered "
                                 "HTTP 400 (invalid_client)")
    assert "wrong" not in str(raised.value)


async def test_an_api_key_wins_over_the_token_for_its_peer(issuer: Issuer) -> None:
    async with _serving(Delegate(), Settings(api_keys=KEYS)) as harness:
        peers = _peers(harness.port, peer_token_url=issuer.url + TOKEN_PATH,
                       peer_client_id="editor-client")
        assert (await peers.peer("d").call("a b")).text == "2 words"
    assert issuer.hits[TOKEN_PATH] == 0


class _Refusing:
    async def execute(self, context: Any, task: Any) -> None:
        raise AgentFailure("The ledger is closed on Sundays")


async def test_an_agent_failure_ends_the_task_failed_with_its_message() -> None:
    async with _serving(_Refusing(), ANON) as harness:
        response = await harness.stub.SendMessage(send_request("hello"), metadata=V1)
    assert response.task.status.state == pb.TASK_STATE_FAILED
    assert response.task.status.message.parts[0].text == "The ledger is closed on Sundays"
