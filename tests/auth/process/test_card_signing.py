"""Signed agent cards (a2akit/card_signing.py): the public and the extended card carry a JWS
over the card's canonical form, verified by the official a2a-sdk in its own process with the
keys the kit publishes at /.well-known/jwks.json; a changed card fails it. Keys from a PEM
file (EC P-256, RSA) and from AWS KMS (a moto server), which is asked once, not per request."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from starlette.testclient import TestClient

from a2akit.card_signing import CardSigner, KmsKey
from a2akit.generated import a2a_pb2 as pb
from a2akit.runtime import build_operations
from a2akit.settings import Settings, SettingsError
from http_service.app import create_app
from tests.support import sdk
from tests.support.harness import ANON, memory_operations
from tests.support.moto import REGION, client, moto_server
from tests.support.processes import fresh_python

pytestmark = pytest.mark.slow
VERIFY = Path(__file__).with_name("sdk_verify.py")
CARD = "/.well-known/agent-card.json"


@pytest.fixture(scope="module")
def sdk_python() -> Path:
    return sdk.sdk_python("import a2a.client, a2a.utils.signing, grpc, httpx")


def _pem(tmp_path: Path, key: Any) -> str:
    path = tmp_path / "card-key.pem"
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                       serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    return str(path)


def _sdk_says(sdk_python: Path, card: dict[str, Any], jwks: dict[str, Any]) -> str:
    done = subprocess.run([str(sdk_python), str(VERIFY)], input=json.dumps(
        {"card": card, "jwks": jwks}), capture_output=True, text=True, timeout=60)
    assert done.returncode in (0, 1), done.stderr
    return done.stdout.strip()


class _Extended:
    """The echo agent with an extended card."""

    name = "Signed"
    extended_card = pb.AgentCard(name="Signed", description="for signed-in callers",
                                 version="2.0")

    async def execute(self, context: Any, task: Any) -> None:
        await task.complete()


@pytest.mark.parametrize("kind", ["ec", "rsa"])
@pytest.mark.spec("8.4", "MAY", (
    "The agent card carries a JWS signature over its canonical form (verified by "
    "a2a-sdk)"))
def test_the_sdk_verifies_the_served_card_and_refuses_a_changed_one(
        tmp_path: Path, sdk_python: Path, kind: str) -> None:
    key = (ec.generate_private_key(ec.SECP256R1()) if kind == "ec"
           else rsa.generate_private_key(public_exponent=65537, key_size=2048))
    settings = dataclasses.replace(ANON, card_signing_key=_pem(tmp_path, key),
                                   extended_agent_card=True, bearer_tokens={"t": "alice"})
    app = TestClient(create_app(build_operations(settings, agent=_Extended())))
    card = app.get(CARD).json()
    jwks = app.get("/.well-known/jwks.json").json()
    (signature,) = card["signatures"]
    header = json.loads(__import__("base64").urlsafe_b64decode(signature["protected"] + "=="))
    assert header == {"alg": "ES256" if kind == "ec" else "RS256",
                      "kid": jwks["keys"][0]["kid"], "typ": "JOSE"}
    assert "d" not in jwks["keys"][0] and "p" not in jwks["keys"][0]  # public half only
    assert _sdk_says(sdk_python, card, jwks) == "valid"
    assert app.get(CARD).json() == card  # signed once: the same document, the same ETag
    changed = {**card, "description": card["description"] + "!"}
    assert _sdk_says(sdk_python, changed, jwks).startswith("invalid")
    # The extended card is signed too (over its own content).
    extended = app.post("/", json={"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard",
                                   "params": {}},
                        headers={"A2A-Version": "1.0", "Authorization": "Bearer t"}).json()
    assert extended["result"]["description"] == "for signed-in callers"
    assert _sdk_says(sdk_python, extended["result"], jwks) == "valid"


def test_a_kms_key_signs_with_one_call_and_the_sdk_verifies_it(
        sdk_python: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with moto_server() as endpoint:
        kms = client("kms", endpoint)
        key_id = kms.create_key(KeySpec="ECC_NIST_P256", KeyUsage="SIGN_VERIFY")[
            "KeyMetadata"]["KeyId"]
        calls: list[str] = []

        def factory() -> Any:
            made = client("kms", endpoint)
            made.meta.events.register("before-call.kms.*",
                                      lambda model, **_: calls.append(model.name))
            return made

        ops = memory_operations()
        ops.card_signer = CardSigner(KmsKey(key_id, factory))
        app = TestClient(create_app(ops))
        card = app.get(CARD).json()
        jwks = app.get("/.well-known/jwks.json").json()
        for _ in range(3):
            assert app.get(CARD).json() == card
        assert sorted(calls) == ["GetPublicKey", "Sign"]  # one each, whatever the requests
        assert _sdk_says(sdk_python, card, jwks) == "valid"
        # Through the settings, as the stack configures the door.
        for name, value in {"AWS_ENDPOINT_URL_KMS": endpoint, "AWS_REGION": REGION,
                            "AWS_DEFAULT_REGION": REGION, "AWS_ACCESS_KEY_ID": "test",
                            "AWS_SECRET_ACCESS_KEY": "test"}.items():
            monkeypatch.setenv(name, value)
        settings = dataclasses.replace(ANON, card_signing_kms_key_id=key_id)
        door = TestClient(create_app(build_operations(settings)))
        assert _sdk_says(sdk_python, door.get(CARD).json(),
                         door.get("/.well-known/jwks.json").json()) == "valid"


def test_a_bad_signing_setting_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="both set"):
        Settings(card_signing_key="k.pem", card_signing_kms_key_id="alias/k")
    not_a_key = tmp_path / "k.pem"
    not_a_key.write_text("hello")
    with pytest.raises(SettingsError, match=r"A2A_CARD_SIGNING_KEY=.*not a readable PEM"):
        build_operations(dataclasses.replace(ANON, card_signing_key=str(not_a_key)))
    small = ec.generate_private_key(ec.SECP384R1())
    with pytest.raises(SettingsError, match="EC P-256 or an RSA key"):
        build_operations(dataclasses.replace(ANON, card_signing_key=_pem(tmp_path, small)))


def test_an_unsigned_door_loads_no_signing_code_and_serves_no_keys() -> None:
    code = ("import sys, handlers.jsonrpc as door; "
            "from starlette.testclient import TestClient; "
            "c = TestClient(door.app); "
            "assert 'signatures' not in c.get('/.well-known/agent-card.json').json(); "
            "assert c.get('/.well-known/jwks.json').status_code == 404; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('jwt', 'rfc8785', 'cryptography') or m == 'a2akit.card_signing'))")
    assert fresh_python(code, {"A2A_ALLOW_ANONYMOUS": "true", "PATH": ""}) == "[]"
