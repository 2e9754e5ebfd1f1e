"""Every way of presenting credentials, good and bad, through every front door: the JSON-RPC
app, the Lambda handler with both event shapes, and gRPC. The cases are one table; each door
must give the same answer (ErrorInfo reason and message), with its own status: 401 with
WWW-Authenticate naming both schemes / UNAUTHENTICATED, 403 / PERMISSION_DENIED.

The JWT scheme checks tokens against a local issuer's JWKS over real HTTP; the API keys are
hashes in a Secrets Manager secret on a moto server, read by the kit's own boto3 code. No
credential may show in any reply or log line."""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest

from a2akit.auth import Authenticator
from a2akit.auth.api_keys import hash_key, new_key
from a2akit.examples.echo import EchoAgent
from a2akit.generated import a2a_pb2 as pb
from a2akit.operations import Operations
from a2akit.runtime import build_operations
from a2akit.settings import Settings
from a2akit.store.memory import MemoryStore
from tests.auth.conftest import Clock
from tests.auth.headers import Headers
from tests.auth.issuer import AUDIENCE, SCOPE, Issuer
from tests.auth.transports import (
    TRANSPORTS,
    JsonRpcTransport,
    Outcome,
    Transport,
    open_transport,
)
from tests.support import moto as aws
from tests.support.messages import send_request

pytestmark = pytest.mark.slow  # a moto server holds the API keys

RIGHT, REVOKED, WRONG = new_key(), new_key(), new_key()
OK, UNAUTHENTICATED, DENIED = None, "UNAUTHENTICATED", "PERMISSION_DENIED"
STATUS = {  # (HTTP status on JSON-RPC, gRPC code)
    UNAUTHENTICATED: (401, grpc.StatusCode.UNAUTHENTICATED.value[0]),
    DENIED: (403, grpc.StatusCode.PERMISSION_DENIED.value[0]),
}


def records(*keys: str) -> str:
    return json.dumps([{"principal": f"bot-{i}", "sha256": hash_key(k)}
                       for i, k in enumerate(keys)])


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _ago(seconds: int) -> int:
    return int(time.time()) - seconds


Case = Callable[[Issuer], dict[str, str]]
CASES: dict[str, tuple[Case, str | None]] = {
    "jwt": (lambda i: bearer(i.token()), OK),
    "jwt-ec-key-without-alg": (lambda i: bearer(i.token("ec1")), OK),
    "cognito-access-token": (  # no aud: the app client is in client_id
        lambda i: bearer(i.token(aud=None, client_id=AUDIENCE, sub="machine-1")), OK),
    "missing": (lambda i: {}, UNAUTHENTICATED),
    "malformed": (lambda i: bearer("not-a-jwt"), UNAUTHENTICATED),
    "empty-bearer": (lambda i: {"Authorization": "Bearer"}, UNAUTHENTICATED),
    "expired": (lambda i: bearer(i.token(exp=_ago(3600), iat=_ago(7200))), UNAUTHENTICATED),
    "not-yet-valid": (lambda i: bearer(i.token(nbf=_ago(-3600))), UNAUTHENTICATED),
    "no-expiry": (lambda i: bearer(i.token(exp=None)), UNAUTHENTICATED),
    # NumericDate is a JSON number (RFC 7519 2): a number in a string is no time.
    "exp-as-text": (lambda i: bearer(i.token(exp=str(_ago(-600)))), UNAUTHENTICATED),
    "nbf-as-text": (lambda i: bearer(i.token(nbf=str(_ago(60)))), UNAUTHENTICATED),
    "iat-as-text": (lambda i: bearer(i.token(iat=str(_ago(60)))), UNAUTHENTICATED),
    "nbf-as-boolean": (lambda i: bearer(i.token(nbf=True)), UNAUTHENTICATED),
    "wrong-issuer": (lambda i: bearer(i.token(iss="https://issuer.example")), UNAUTHENTICATED),
    "wrong-audience": (lambda i: bearer(i.token(aud="another-agent")), UNAUTHENTICATED),
    "wrong-key": (lambda i: bearer(i.token("k1", key="evil")), UNAUTHENTICATED),
    "alg-none": (lambda i: bearer(i.unsigned_token()), UNAUTHENTICATED),
    "hmac-with-public-key": (lambda i: bearer(i.hmac_token()), UNAUTHENTICATED),
    "unknown-kid": (lambda i: bearer(i.token("k9", key="evil")), UNAUTHENTICATED),
    "missing-scope": (lambda i: bearer(i.token(scope="a2a/read")), DENIED),
    "api-key": (lambda i: {"x-api-key": RIGHT}, OK),
    "api-key-wrong": (lambda i: {"x-api-key": WRONG}, UNAUTHENTICATED),
    "api-key-revoked": (lambda i: {"x-api-key": REVOKED}, UNAUTHENTICATED),
    "api-key-empty": (lambda i: {"x-api-key": ""}, UNAUTHENTICATED),
    "basic": (lambda i: {"Authorization": "Basic YWxpY2U6c2VjcmV0"}, UNAUTHENTICATED),
    # A valid key does not make an Authorization header of another scheme go unread.
    "api-key-with-basic": (lambda i: {"x-api-key": RIGHT,
                                      "Authorization": "Basic YWxpY2U6c2VjcmV0"},
                           UNAUTHENTICATED),
    "two-schemes": (lambda i: {**bearer(i.token()), "x-api-key": RIGHT}, UNAUTHENTICATED),
}


def core(issuer: Issuer, endpoint: str, clock: Clock) -> Operations:
    """A core with both schemes on. REVOKED was accepted, then removed from the secret, and
    the key list's lifetime has passed since."""
    issuer.publish("k1", "ec1")
    secrets = aws.client("secretsmanager", endpoint)
    secret = f"a2a/api-keys/{uuid.uuid4()}"
    secrets.create_secret(Name=secret, SecretString=records(RIGHT, REVOKED))
    settings = Settings(jwt_issuer=issuer.url, jwt_audiences=(AUDIENCE,),
                        jwt_algorithms=("RS256", "ES256"),
                        jwt_required_scopes={"*": (SCOPE,)}, api_keys_secret=secret,
                        stream_budget_seconds=3)
    authenticator = Authenticator.from_settings(settings, clock=clock, aws_client=secrets)
    asyncio.run(authenticator.authenticate(Headers({"x-api-key": REVOKED})))
    secrets.put_secret_value(SecretId=secret, SecretString=records(RIGHT))
    clock.advance(settings.api_keys_max_age_seconds)
    return build_operations(settings, MemoryStore(), EchoAgent(), authenticator=authenticator)


def open_door(name: str, issuer: Issuer, endpoint: str, clock: Clock) -> Transport:
    return open_transport(name, core(issuer, endpoint, clock))


@pytest.fixture(params=TRANSPORTS)
def door(request: pytest.FixtureRequest, issuer: Issuer, moto_endpoint: str,
         clock: Clock) -> Iterator[Transport]:
    opened = open_door(str(request.param), issuer, moto_endpoint, clock)
    yield opened
    opened.close()


def _check(door: Transport, outcome: Outcome, expected: str | None) -> None:
    assert outcome.reason == expected, outcome.text
    if expected is None:
        return
    http, grpc_code = STATUS[expected]
    assert outcome.status == (grpc_code if door.name == "grpc" else http)
    assert "Traceback" not in outcome.text
    if door.name != "grpc" and expected == UNAUTHENTICATED:
        assert outcome.challenge is not None
        assert 'Bearer realm="a2a"' in outcome.challenge
        assert 'ApiKey realm="a2a", header="x-api-key"' in outcome.challenge


def _secrets(headers: dict[str, str]) -> list[str]:
    """The credential parts of the headers (not the word Bearer)."""
    values = [v.split(" ", 1)[-1] for v in headers.values()]
    return [v for v in values if len(v) > 8]


@pytest.mark.parametrize("case", list(CASES))
def test_credentials(door: Transport, issuer: Issuer, case: str,
                     caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    make_headers, expected = CASES[case]
    headers = make_headers(issuer)
    for method in ("SendMessage", "SendStreamingMessage"):
        outcome = door.call(method, send_request(), headers)
        _check(door, outcome, expected)
        for secret in _secrets(headers):
            assert secret not in outcome.text
            assert secret not in caplog.text


def test_every_door_gives_the_same_answer(issuer: Issuer, moto_endpoint: str) -> None:
    doors = [open_door(name, issuer, moto_endpoint, Clock()) for name in TRANSPORTS]
    try:
        for case, (make_headers, _) in CASES.items():
            headers = make_headers(issuer)
            seen = {(o.reason, o.message) for o in
                    (d.call("GetTask", pb.GetTaskRequest(id="no-such-task"), headers)
                     for d in doors)}
            assert len(seen) == 1, (case, seen)
    finally:
        for opened in doors:
            opened.close()


def test_unknown_kid_refetches_the_keys_at_most_once_per_interval(
        door: Transport, issuer: Issuer, clock: Clock) -> None:
    before = issuer.jwks_fetches
    for _ in range(20):
        outcome = door.call("GetTask", pb.GetTaskRequest(id="x"),
                            bearer(issuer.token(f"k-{uuid.uuid4()}", key="evil")))
        assert outcome.reason == UNAUTHENTICATED
    assert issuer.jwks_fetches - before <= 1


def _owner_sees(door: Transport, headers: dict[str, str], task_id: str) -> bool:
    return door.call("GetTask", pb.GetTaskRequest(id=task_id), headers).ok


@pytest.mark.parametrize("kind", ["apigw_http_v2", "function_url"])
def test_credentials_win_over_the_platform_identity(kind: str, issuer: Issuer,
                                                    moto_endpoint: str, clock: Clock) -> None:
    """One token is one owner through API Gateway (with an authorizer identity in the event)
    and through gRPC (with none); the platform identity is the owner only when no
    credentials come with the request, and never rescues bad ones."""
    ops = core(issuer, moto_endpoint, clock)
    lambda_door, grpc_door = open_transport(kind, ops), open_transport("grpc", ops)
    assert isinstance(lambda_door, JsonRpcTransport)
    client: Any = lambda_door.client
    client.authorizer = ({"jwt": {"claims": {"sub": "user-1"}, "scopes": []}}
                         if kind == "apigw_http_v2" else
                         {"iam": {"userArn": "arn:aws:iam::111111111111:user/someone"}})
    token = bearer(issuer.token(sub="alice"))
    try:
        created = lambda_door.call("SendMessage", send_request(), token).result.task
        by_platform = lambda_door.call("SendMessage", send_request(), {}).result.task
        assert _owner_sees(grpc_door, token, created.id)
        assert _owner_sees(lambda_door, token, created.id)
        assert not _owner_sees(lambda_door, token, by_platform.id)
        assert _owner_sees(lambda_door, {}, by_platform.id)
        assert not _owner_sees(lambda_door, {}, created.id)
        expired = bearer(issuer.token(exp=_ago(3600), iat=_ago(7200)))
        bad = lambda_door.call("GetTask", pb.GetTaskRequest(id=by_platform.id), expired)
        assert bad.reason == UNAUTHENTICATED
    finally:
        lambda_door.close()
        grpc_door.close()
