"""The JWT scheme against a local issuer over real HTTP: key rotation, the bounded key cache,
no refetch storm, an issuer that is down or slow, discovery, tenants and scopes."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import jwt
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2akit.auth import Authenticator, Identity
from a2akit.errors import (
    AuthenticationRequiredError,
    PermissionDeniedError,
    UnavailableError,
)
from a2akit.settings import Settings
from tests.auth.conftest import Clock
from tests.auth.headers import bearer
from tests.auth.issuer import AUDIENCE, JWKS_PATH, Issuer

pytestmark = pytest.mark.anyio

DISCOVERY = "/.well-known/openid-configuration"


def _authenticator(issuer: Issuer, clock: Clock, **overrides: Any) -> Authenticator:
    values: dict[str, Any] = {"jwt_issuer": issuer.url, "jwt_audiences": (AUDIENCE,)}
    values.update(overrides)
    return Authenticator.from_settings(Settings(**values), clock=clock)


async def _owner(auth: Authenticator, token: str) -> str:
    return (await auth.authenticate(bearer(token))).owner


async def test_rotation_picks_up_the_new_key_once(issuer: Issuer, clock: Clock) -> None:
    auth = _authenticator(issuer, clock)
    assert await _owner(auth, issuer.token("k1")) == "jwt:alice"
    assert issuer.jwks_fetches == 1
    # The issuer rotates: k2 in, k1 out. Tokens signed with k2 arrive together.
    issuer.publish("k2")
    clock.advance(60)
    owners = await asyncio.gather(*(_owner(auth, issuer.token("k2")) for _ in range(20)))
    assert set(owners) == {"jwt:alice"}
    assert issuer.jwks_fetches == 2
    # k1 is gone now, and within the interval unknown key ids fetch nothing.
    for _ in range(10):
        with pytest.raises(AuthenticationRequiredError, match="unknown key id"):
            await _owner(auth, issuer.token("k1"))
    assert issuer.jwks_fetches == 2
    assert issuer.hits[DISCOVERY] == 2  # discovered together with each key set


async def test_a_new_key_waits_for_the_interval(issuer: Issuer, clock: Clock) -> None:
    auth = _authenticator(issuer, clock, auth_refresh_seconds=30)
    await _owner(auth, issuer.token("k1"))
    issuer.publish("k1", "k2")
    clock.advance(10)  # the first load was 10 s ago: too soon to load again
    with pytest.raises(AuthenticationRequiredError):
        await _owner(auth, issuer.token("k2"))
    clock.advance(20)
    assert await _owner(auth, issuer.token("k2")) == "jwt:alice"
    assert issuer.jwks_fetches == 2


async def test_keys_expire_after_their_lifetime(issuer: Issuer, clock: Clock) -> None:
    auth = _authenticator(issuer, clock, jwks_max_age_seconds=120)
    for _ in range(5):
        await _owner(auth, issuer.token("k1"))
    assert issuer.jwks_fetches == 1
    clock.advance(120)
    await _owner(auth, issuer.token("k1"))
    assert issuer.jwks_fetches == 2


async def test_issuer_down(issuer: Issuer, clock: Clock) -> None:
    auth = _authenticator(issuer, clock, jwks_max_age_seconds=120)
    issuer.fail = True
    with pytest.raises(UnavailableError):
        await _owner(auth, issuer.token("k1"))
    # No retry until the interval has passed, however many requests come.
    hits = sum(issuer.hits.values())
    for _ in range(5):
        with pytest.raises(UnavailableError):
            await _owner(auth, issuer.token("k1"))
    assert sum(issuer.hits.values()) == hits
    issuer.fail = False
    clock.advance(60)
    assert await _owner(auth, issuer.token("k1")) == "jwt:alice"
    # Down again: known keys serve until their lifetime ends, an unknown one is refused.
    issuer.fail = True
    clock.advance(60)
    with pytest.raises(AuthenticationRequiredError):
        await _owner(auth, issuer.token("k2"))
    assert await _owner(auth, issuer.token("k1")) == "jwt:alice"
    clock.advance(60)
    with pytest.raises(UnavailableError):
        await _owner(auth, issuer.token("k1"))


async def test_a_slow_issuer_times_out_without_blocking_the_loop(issuer: Issuer,
                                                                  clock: Clock) -> None:
    auth = _authenticator(issuer, clock, auth_timeout_seconds=0.3)
    issuer.delay = 1.0
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    ticker = asyncio.ensure_future(tick())
    started = time.monotonic()
    try:
        with pytest.raises(UnavailableError):
            await _owner(auth, issuer.token("k1"))
    finally:
        ticker.cancel()
    assert time.monotonic() - started < 0.9
    assert ticks >= 10  # the loop kept running while the fetch waited


async def test_discovery_must_name_the_issuer(issuer: Issuer, clock: Clock) -> None:
    issuer.discovered_issuer = "https://impostor.example"
    with pytest.raises(UnavailableError):
        await _owner(_authenticator(issuer, clock), issuer.token("k1"))
    assert issuer.jwks_fetches == 0


async def test_a_configured_jwks_url_skips_discovery(issuer: Issuer, clock: Clock) -> None:
    auth = _authenticator(issuer, clock, jwt_jwks_url=issuer.url + JWKS_PATH)
    assert await _owner(auth, issuer.token("k1")) == "jwt:alice"
    assert issuer.hits[DISCOVERY] == 0


async def _identity(issuer: Issuer, clock: Clock, token: str, **settings: Any) -> Identity:
    return await _authenticator(issuer, clock, **settings).authenticate(bearer(token))


async def test_machine_clients_and_scopes(issuer: Issuer, clock: Clock) -> None:
    cognito = issuer.token(aud=None, sub=None, client_id=AUDIENCE, scope="a2a/invoke a2a/read")
    identity = await _identity(issuer, clock, cognito)
    assert identity.owner == f"jwt:{AUDIENCE}"
    assert identity.scopes == {"a2a/invoke", "a2a/read"}
    listed = issuer.token(scope=None, scp=["a", "b"], aud=["other", AUDIENCE])
    assert (await _identity(issuer, clock, listed)).scopes == {"a", "b"}


async def test_tenants_come_from_the_configured_claim(issuer: Issuer, clock: Clock) -> None:
    claim = {"jwt_tenant_claim": "custom:tenant"}
    one = await _identity(issuer, clock, issuer.token(**{"custom:tenant": "acme"}), **claim)
    assert one.tenants == ("acme",)
    many = issuer.token(**{"custom:tenant": ["acme", "globex"]})
    assert (await _identity(issuer, clock, many, **claim)).tenants == ("acme", "globex")
    with pytest.raises(PermissionDeniedError):
        await _identity(issuer, clock, issuer.token(), **claim)
    assert (await _identity(issuer, clock, issuer.token())).tenants == ()


@pytest.mark.parametrize("token", ["x" * 9000, "a.b", "a.b.c", "..", "\u00e9.\u00e9.\u00e9"])
async def test_garbage_is_refused_not_crashed(issuer: Issuer, clock: Clock, token: str) -> None:
    with pytest.raises(AuthenticationRequiredError):
        await _owner(_authenticator(issuer, clock), token)


async def test_a_key_is_used_only_for_its_own_algorithm(issuer: Issuer, clock: Clock) -> None:
    # k1 is published with alg RS256; a PS256 token under k1 is refused even though PS256
    # is allowed and the key would fit it.
    token = jwt.encode(issuer.claims(), issuer.keys["k1"], algorithm="PS256",
                       headers={"kid": "k1"})
    auth = _authenticator(issuer, clock, jwt_algorithms=("RS256", "PS256"))
    with pytest.raises(AuthenticationRequiredError, match="another algorithm"):
        await _owner(auth, token)


# --- tokens of any shape -------------------------------------------------------------------

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=3),
    max_leaves=6)
_CLAIMS = st.dictionaries(
    st.sampled_from(["iss", "aud", "sub", "exp", "nbf", "iat", "client_id", "scope", "scp",
                     "tenants"]), _JSON, max_size=10)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@pytest.fixture
def checker(issuer: Issuer) -> Iterator[Callable[[str], None]]:
    """Authenticates a token on one event loop; only the two auth errors may come out."""
    auth = _authenticator(issuer, Clock(), jwt_tenant_claim="tenants",
                          jwt_algorithms=("RS256", "ES256"))
    loop = asyncio.new_event_loop()

    def check(token: str) -> None:
        with contextlib.suppress(AuthenticationRequiredError, PermissionDeniedError):
            loop.run_until_complete(auth.authenticate(bearer(token)))

    yield check
    loop.close()


@settings(max_examples=100, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(claims=_CLAIMS, header=st.dictionaries(st.sampled_from(["alg", "kid", "typ", "crit"]),
                                              _JSON, max_size=4),
       signed=st.booleans(), signature=st.binary(max_size=64))
def test_tokens_of_any_shape_get_an_answer_not_a_crash(
        checker: Callable[[str], None], issuer: Issuer, claims: dict[str, Any],
        header: dict[str, Any], signed: bool, signature: bytes) -> None:
    if signed:  # a real signature by the issuer's key over arbitrary claims
        token = jwt.PyJWS().encode(json.dumps(claims).encode(), issuer.keys["k1"],
                                   algorithm="RS256", headers={"kid": "k1"})
    else:
        parts = [json.dumps(header).encode(), json.dumps(claims).encode(), signature]
        token = ".".join(_b64(part) for part in parts)
    checker(token)
