"""Which identity a request gets when several are present, the tenant rule, scopes per
operation, and the warnings for settings meant for local development only."""

from __future__ import annotations

import json
import logging

import pytest

from a2akit.auth import Authenticator, Identity
from a2akit.auth.api_keys import hash_key, new_key
from a2akit.errors import AuthenticationRequiredError, PermissionDeniedError
from a2akit.settings import Settings
from tests.auth.conftest import Clock
from tests.auth.headers import Headers, bearer
from tests.auth.issuer import AUDIENCE, Issuer

pytestmark = pytest.mark.anyio

KEY = new_key()
KEYS = json.dumps([{"principal": "bot", "sha256": hash_key(KEY)}])


async def test_the_platform_identity_serves_only_without_credentials(issuer: Issuer) -> None:
    auth = Authenticator.from_settings(Settings(
        jwt_issuer=issuer.url, jwt_audiences=(AUDIENCE,), api_keys=KEYS), clock=Clock())
    platform = await auth.authenticate(Headers(), verified_principal="user-1")
    assert (platform.owner, platform.scheme) == ("principal:user-1", "platform")
    assert (await auth.authenticate(bearer(issuer.token()), "user-1")).owner == "jwt:alice"
    assert (await auth.authenticate(Headers({"x-api-key": KEY}), "user-1")).owner == "key:bot"
    for bad in (bearer("nonsense"), Headers({"x-api-key": "nonsense"})):
        with pytest.raises(AuthenticationRequiredError):
            await auth.authenticate(bad, "user-1")
    # IAM-signed Function URL requests carry a SigV4 Authorization header of their own.
    sigv4 = Headers({"authorization": "AWS4-HMAC-SHA256 Credential=AKIA/..., Signature=..."})
    assert (await auth.authenticate(sigv4, "arn:aws:iam::1:user/u")).scheme == "platform"


async def test_unusable_credentials_are_never_ignored() -> None:
    auth = Authenticator.from_settings(Settings(allow_anonymous=True, api_keys=KEYS))
    assert (await auth.authenticate(Headers())).anonymous
    for headers in (Headers({"authorization": "Basic YTpi"}), bearer("a-token"),
                    Headers({"x-api-key": "wrong"})):
        with pytest.raises(AuthenticationRequiredError):
            await auth.authenticate(headers)


async def test_an_api_key_does_not_excuse_an_authorization_header_nobody_reads() -> None:
    auth = Authenticator.from_settings(Settings(api_keys=KEYS))
    assert (await auth.authenticate(Headers({"x-api-key": KEY}))).owner == "key:bot"
    # Basic, Digest, and a bearer token with no bearer scheme configured.
    for authorization in ("Basic YWxpY2U6c2VjcmV0", "Digest username=a", "Bearer a-token"):
        with pytest.raises(AuthenticationRequiredError, match="not accepted"):
            await auth.authenticate(Headers({"x-api-key": KEY, "authorization": authorization}))
    # Behind a front door that verified the caller, Authorization was the platform's own
    # credential (SigV4 on an IAM Function URL): the key decides, as without it.
    sigv4 = {"authorization": "AWS4-HMAC-SHA256 Credential=AKIA/..., Signature=..."}
    identity = await auth.authenticate(Headers({"x-api-key": KEY, **sigv4}),
                                       "arn:aws:iam::1:user/u")
    assert identity.owner == "key:bot"


async def test_nothing_configured_refuses_everyone() -> None:
    auth = Authenticator.from_settings(Settings())
    assert auth.challenge == 'Bearer realm="a2a"'
    with pytest.raises(AuthenticationRequiredError, match="Authentication required"):
        await auth.authenticate(Headers())


async def test_development_tokens_warn_at_start(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="a2akit.auth"):
        auth = Authenticator.from_settings(Settings(bearer_tokens={"dev-token": "me"},
                                                    allow_anonymous=True))
    assert "A2A_BEARER_TOKENS is set" in caplog.text
    assert "A2A_ALLOW_ANONYMOUS=true" in caplog.text
    assert "dev-token" not in caplog.text
    assert (await auth.authenticate(bearer("dev-token"))).owner == "token:me"
    with pytest.raises(AuthenticationRequiredError):
        await auth.authenticate(bearer("dev-token-2"))


def test_scopes_per_operation() -> None:
    auth = Authenticator([], required_scopes={"*": ("a2a/invoke",),
                                              "CancelTask": ("a2a/admin",)})
    token = Identity(owner="jwt:a", scheme="oidc", scopes=frozenset({"a2a/invoke"}))
    auth.authorize(token, "GetTask")
    with pytest.raises(PermissionDeniedError) as denied:
        auth.authorize(token, "CancelTask")
    assert denied.value.metadata == {"requiredScopes": "a2a/admin a2a/invoke"}
    with pytest.raises(PermissionDeniedError):
        auth.authorize(Identity(owner="jwt:b", scheme="oidc", scopes=frozenset()), "GetTask")
    # Keys and platform identities carry no scopes: scope rules are the token's.
    auth.authorize(Identity(owner="key:bot", scheme="apiKey"), "CancelTask")


@pytest.mark.parametrize(("tenants", "requested", "works_in"), [
    ((), "", ""), ((), "t9", "t9"), (("t1",), "", "t1"), (("t1",), "t1", "t1"),
    (("t1", "t2"), "", "t1"), (("t1", "t2"), "t2", "t2"),
    (("t1",), "t2", None), (("t1", "t2"), "t3", None),
])
def test_the_tenant_rule(tenants: tuple[str, ...], requested: str, works_in: str | None) -> None:
    identity = Identity(owner="key:bot", scheme="apiKey", tenants=tenants)
    if works_in is None:
        with pytest.raises(PermissionDeniedError) as denied:
            identity.tenant(requested)
        assert requested not in denied.value.message
    else:
        assert identity.tenant(requested) == works_in
