"""The authentication settings: read from the environment, refused at start with the name
of the variable when they cannot work together."""

from __future__ import annotations

import pytest

from a2akit.settings import ENV, Settings, SettingsError

ISSUER = {ENV.JWT_ISSUER: "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_abc",
          ENV.JWT_AUDIENCE: "client-1"}


def test_every_auth_setting_is_read() -> None:
    settings = Settings.from_env({
        **ISSUER,
        ENV.JWT_AUDIENCE: "client-1, client-2",
        ENV.JWT_JWKS_URL: "https://issuer.example/keys",
        ENV.JWT_ALGORITHMS: "RS256,ES256",
        ENV.JWT_TENANT_CLAIM: "custom:tenant",
        ENV.JWT_REQUIRED_SCOPES: "a2a/invoke, CancelTask=a2a/admin, CancelTask=a2a/cancel",
        ENV.JWT_LEEWAY_SECONDS: "10",
        ENV.JWKS_MAX_AGE_SECONDS: "900",
        ENV.API_KEY_HEADER: "X-Agent-Key",
        ENV.API_KEYS_SECRET: "arn:aws:secretsmanager:us-east-1:111111111111:secret:keys",
        ENV.API_KEYS_MAX_AGE_SECONDS: "120",
        ENV.AUTH_REFRESH_SECONDS: "30",
        ENV.AUTH_TIMEOUT_SECONDS: "2",
    })
    assert settings.jwt_audiences == ("client-1", "client-2")
    assert settings.jwt_algorithms == ("RS256", "ES256")
    assert settings.jwt_required_scopes == {"*": ("a2a/invoke",),
                                            "CancelTask": ("a2a/admin", "a2a/cancel")}
    assert (settings.jwt_tenant_claim, settings.jwt_leeway_seconds) == ("custom:tenant", 10)
    assert settings.api_key_header == "x-agent-key"
    assert (settings.jwks_max_age_seconds, settings.api_keys_max_age_seconds) == (900, 120)
    assert (settings.auth_refresh_seconds, settings.auth_timeout_seconds) == (30, 2)
    assert settings.jwt_enabled and settings.api_keys_enabled


def test_defaults_turn_every_scheme_off() -> None:
    settings = Settings.from_env({})
    assert not settings.jwt_enabled and not settings.api_keys_enabled
    assert not settings.allow_anonymous and not settings.bearer_tokens
    assert settings.jwt_algorithms == ("RS256",) and settings.api_key_header == "x-api-key"


@pytest.mark.parametrize(("env", "named"), [
    ({ENV.JWT_ISSUER: "http://issuer.example", ENV.JWT_AUDIENCE: "a"}, ENV.JWT_ISSUER),
    ({ENV.JWT_ISSUER: "issuer.example", ENV.JWT_AUDIENCE: "a"}, ENV.JWT_ISSUER),
    ({**ISSUER, ENV.JWT_JWKS_URL: "http://issuer.example/keys"}, ENV.JWT_JWKS_URL),
    ({ENV.JWT_ISSUER: ISSUER[ENV.JWT_ISSUER]}, ENV.JWT_AUDIENCE),
    ({ENV.JWT_AUDIENCE: "a"}, ENV.JWT_ISSUER),
    ({**ISSUER, ENV.JWT_ALGORITHMS: "HS256"}, ENV.JWT_ALGORITHMS),
    ({**ISSUER, ENV.JWT_ALGORITHMS: "none"}, ENV.JWT_ALGORITHMS),
    ({**ISSUER, ENV.JWT_ALGORITHMS: "RS256,HS512"}, ENV.JWT_ALGORITHMS),
    ({**ISSUER, ENV.JWT_REQUIRED_SCOPES: "tasks/get=a2a/read"}, ENV.JWT_REQUIRED_SCOPES),
    ({**ISSUER, ENV.JWT_REQUIRED_SCOPES: "GetTask="}, ENV.JWT_REQUIRED_SCOPES),
    ({**ISSUER, ENV.BEARER_TOKENS: "me=token"}, ENV.BEARER_TOKENS),
    ({ENV.API_KEYS: "[]", ENV.API_KEYS_SECRET: "s"}, ENV.API_KEYS_SECRET),
    ({ENV.API_KEYS_SECRET: "s", ENV.API_KEYS_PARAMETER: "p"}, ENV.API_KEYS_PARAMETER),
    ({ENV.API_KEY_HEADER: "authorization"}, ENV.API_KEY_HEADER),
    ({ENV.API_KEY_HEADER: "x-key-bin"}, ENV.API_KEY_HEADER),
    ({ENV.API_KEY_HEADER: "x key"}, ENV.API_KEY_HEADER),
    ({ENV.JWKS_MAX_AGE_SECONDS: "30"}, ENV.JWKS_MAX_AGE_SECONDS),
    ({ENV.AUTH_TIMEOUT_SECONDS: "0"}, ENV.AUTH_TIMEOUT_SECONDS),
])
def test_unusable_settings_name_their_variable(env: dict[str, str], named: str) -> None:
    with pytest.raises(SettingsError, match=named):
        Settings.from_env(env)


def test_loopback_issuers_may_use_plain_http() -> None:
    for url in ("http://127.0.0.1:8080", "http://localhost:9000/realm", "http://[::1]:1"):
        assert Settings(jwt_issuer=url, jwt_audiences=("a",)).jwt_enabled
