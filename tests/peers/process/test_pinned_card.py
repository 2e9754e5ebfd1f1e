"""A peer with a pinned JWKS (A2A_PEER_JWKS): its agent card must carry a signature by one of
those keys before any call. The peer is the streaming door in its own process, its card signed
with A2A_CARD_SIGNING_KEY (issue 40, item 2)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from a2akit.card_signing import CardSigner, PemKey
from a2akit.generated import a2a_pb2 as pb
from a2akit.peers import PeerError, Peers
from a2akit.settings import Settings, SettingsError
from tests.support.processes import free_port, python_env, running

pytestmark = [pytest.mark.slow, pytest.mark.anyio]


def _key(folder: Path, name: str) -> Path:
    path = folder / f"{name}.pem"
    path.write_bytes(ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    return path


def _jwks(folder: Path, key: Path) -> str:
    path = folder / f"{key.stem}.jwks.json"
    path.write_text(json.dumps(CardSigner(PemKey(str(key))).jwks()))
    return str(path)


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("keys")
    return _key(folder, "peer"), _key(folder, "stranger")


def _door(tmp: Path, **env: str) -> Iterator[str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    environment = python_env(A2A_AGENT="a2akit.examples.delegating:counter", PORT=str(port),
                             A2A_PUBLIC_URL=url + "/", A2A_ALLOW_ANONYMOUS="true", **env)
    with running([sys.executable, "-m", "handlers.stream"], ports=[port], env=environment,
                 log=tmp / f"door-{port}.log"):
        yield url


@pytest.fixture(scope="module")
def signed(keys: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from _door(tmp_path_factory.mktemp("signed"), A2A_CARD_SIGNING_KEY=str(keys[0]))


@pytest.fixture(scope="module")
def unsigned(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from _door(tmp_path_factory.mktemp("unsigned"))


def _peer(address: str, jwks: str) -> Peers:
    return Peers(Settings(peers={"counter": address}, peer_jwks={"counter": jwks}))


async def test_a_card_signed_by_a_pinned_key_is_called(
        signed: str, keys: tuple[Path, Path], tmp_path: Path) -> None:
    reply = await _peer(signed, _jwks(tmp_path, keys[0])).peer("counter").call("one two")
    assert reply.state == pb.TASK_STATE_COMPLETED and reply.text == "2 words"


async def test_another_key_or_no_signature_is_refused_before_any_call(
        signed: str, unsigned: str, keys: tuple[Path, Path], tmp_path: Path) -> None:
    stranger = _jwks(tmp_path, keys[1])
    for address, jwks in ((signed, stranger), (unsigned, _jwks(tmp_path, keys[0]))):
        with pytest.raises(PeerError, match="not signed by its pinned keys"):
            await _peer(address, jwks).peer("counter").call("hello")


def test_a_pinned_jwks_needs_a_known_http_peer_and_a_file(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="A2A_PEER_JWKS names other"):
        Settings(peers={"a": "https://a.example"}, peer_jwks={"other": "k.json"})
    with pytest.raises(SettingsError, match="gRPC peer's card is not read"):
        Settings(peers={"a": "grpc://a.internal:50051"}, peer_jwks={"a": "k.json"})
    with pytest.raises(SettingsError, match="no such file"):
        Settings(peers={"a": "https://a.example"}, peer_jwks={"a": str(tmp_path / "no")})
